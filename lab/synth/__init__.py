"""ToolScale (paper §3.3): domains, tasks, filters, export; offline and seeded, or written by an LLM.

A domain is a database schema, seeded data, typed tools and a policy (`lab.synth.domain`); tasks
come from templates whose golden chains are run on the data (`lab.synth.tasks`); only tasks that pass
the filters are kept (`lab.synth.verify`, and pass@N with real models in `lab.eval.passk`); a
domain folder in tau2's layout is written and read by `lab.synth.export`. The ten domains of the
paper are written by hand here (`lab.synth.domains`); `lab.synth.llm_generate` has an LLM write new
ones stage by stage, every stage's answer gated by running it in the sandbox (`lab.synth.sandboxed`).

    domain, db, tasks, stats = build_domain("bank", n_tasks=30, seed=0)
    export_domain(pack(domain, db, tasks, seed=0), "out/bank")  # lab.synth.export

Adding a domain: a module `lab/synth/domains/<name>.py` defining its `DOMAIN` and one
`<name>_tasks.py` defining its `RECIPE`; the registries below find them (helpers go in `<name>_data.py`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from lab.env.state import canonical_hash
from lab.errors import LabInputError
from lab.synth import domains as _domains_package
from lab.synth.domain import Domain
from lab.synth.tasks import TaskRecipe, make_task
from lab.synth.verify import tally, verify_task


def _registered() -> list[str]:
    """Domain names, sorted: the modules of `lab.synth.domains` that have a `<name>_tasks` companion."""
    modules = {info.name for info in pkgutil.iter_modules(_domains_package.__path__)}
    return sorted(name for name in modules if f"{name}_tasks" in modules)


def _load(name: str, suffix: str, attribute: str) -> Any:
    return getattr(importlib.import_module(f"lab.synth.domains.{name}{suffix}"), attribute)


DOMAINS: dict[str, Domain] = {name: _load(name, "", "DOMAIN") for name in _registered()}
RECIPES: dict[str, TaskRecipe] = {name: _load(name, "_tasks", "RECIPE") for name in _registered()}

#: Candidates tried per task asked for, before giving up with fewer (templates that rarely fit).
MAX_CANDIDATES_PER_TASK = 5


def build_domain(name: str, n_tasks: int, seed: int,
                 size: int | None = None) -> tuple[Domain, dict[str, Any], list[dict[str, Any]], dict[str, int]]:
    """(domain, db, kept tasks, counts) for `n_tasks` verified tasks of domain `name` from `seed`.

    Candidates 0, 1, 2, ... are generated and verified one by one until `n_tasks` are kept (fewer only
    if `MAX_CANDIDATES_PER_TASK * n_tasks` candidates do not suffice). Kept tasks keep their candidate
    number as id, so the gaps show what was dropped. Counts are `tasks/generated`, `tasks/kept`,
    `tasks/no_subject` (candidates no subject fitted), `filter/<name>` per filter (tasks it dropped),
    and the kept tasks per `difficulty/<level>/kept` and per `template/<name>/kept` (an evolved task's
    template is `<base>+<follow-up>`).
    """
    if name not in DOMAINS:
        raise LabInputError(f"unknown synthetic domain '{name}' (choose from {', '.join(DOMAINS)})")
    domain, recipe = DOMAINS[name], RECIPES[name]
    db = domain.make_db(seed, size)
    start_hash = canonical_hash(db)
    tasks, verdicts, no_subject = [], [], 0
    kept: dict[str, int] = {}
    for index in range(MAX_CANDIDATES_PER_TASK * n_tasks):
        if len(tasks) == n_tasks:
            break
        candidate = make_task(domain, recipe, db, seed, index)
        if candidate is None:
            no_subject += 1
            continue
        verdict = verify_task(domain, db, candidate.task, start_hash)
        verdicts.append(verdict)
        if verdict.kept:
            tasks.append(candidate.task)
            for key in (f"difficulty/{candidate.difficulty}/kept", f"template/{candidate.template}/kept"):
                kept[key] = kept.get(key, 0) + 1
    return domain, db, tasks, {**tally(verdicts), "tasks/no_subject": no_subject, **dict(sorted(kept.items()))}
