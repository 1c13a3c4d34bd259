"""Everything about an evaluation that can be refused before any work: one load of the toolkit, one check.

`checked_toolkit(config)` is the one place an evaluation's toolkit is loaded and its flags checked
against it: the LLM flags (`--user`, `--judge`), the round protocol's toolkit and catalog, the retrieval
depth and every `--preference`. It runs before tasks, models or indexes load and before a store is
opened (`orchestra eval` calls it before it opens the store), so a refused command has created
nothing, and the toolkit's notes on tools it left out are shown only for a command that goes on.
"""

from __future__ import annotations

from rich.console import Console

from lab.benchmarks import find_source
from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.preference import task_preferences
from lab.rollout.rounds import check_catalog
from lab.toolkit import load_toolkit, with_retrieval_top_k
from lab.toolspec import Toolkit, ToolSpec


def checked_toolkit(config: EvalConfig, console: Console | None = None) -> Toolkit:
    """The toolkit `config` names, with every check of `check_before_work` passed; the toolkit's notes
    (tools left out for a missing key or package) go to `console` only after the checks pass."""
    notes = console or Console(stderr=True)
    with notes.capture() as held:  # a refused command says one line and nothing else
        toolkit = load_toolkit(config.toolkit, pricing=config.pricing, console=notes)
    check_before_work(config, toolkit)
    if held.get():
        notes.file.write(held.get())
    return toolkit


def check_before_work(config: EvalConfig, toolkit: Toolkit) -> None:
    """Everything about `config` that can be refused without loading tasks, models or indexes, or opening
    a store: the LLM flags, the round protocol's toolkit and catalog, the retrieval depth, and every
    `--preference` against the toolkit's features. A refused command has then created nothing."""
    check_llm_flags(config, toolkit)
    if config.protocol == "rounds":
        check_round_toolkit(toolkit, config.catalog)
    with_search_depth(config, toolkit)
    for preference, _ in config.variants():
        task_preferences(preference, toolkit.feature_names, config.preference_instruction, toolkit.feature_models())


def check_llm_flags(config: EvalConfig, toolkit: Toolkit) -> None:
    """Refuse, before any work, a `--user` or `--judge` that is not an LLM tool of the toolkit, and a
    simulated judge of a benchmark whose answers it does not know (all but the offline world's)."""
    if config.user != "scripted":
        llm_tool_spec(toolkit, config.user, "--user")
    if (config.judge and llm_tool_spec(toolkit, config.judge, "--judge").simulated
            and not find_source(config.benchmark).simulated_judge):
        raise LabInputError(f"--judge {config.judge!r}: a simulated judge knows only the offline world's answers; "
                            f"judge {config.benchmark} with a real model tool (backend kind openai or local_llm)")


def llm_tool_spec(toolkit: Toolkit, name: str, flag: str) -> ToolSpec:
    """The spec of the LLM tool `name` of the toolkit, for a flag that names one (`--user`, `--judge`, `--llm`)."""
    spec = next((s for s in toolkit.tools if s.name == name), None)
    if spec is None or not spec.model:
        llms = ", ".join(s.name for s in toolkit.tools if s.model) or "none"
        raise LabInputError(f"{flag} {name!r}: not an LLM tool of toolkit '{toolkit.name}' (its LLM tools: {llms})")
    return spec


def check_round_toolkit(toolkit: Toolkit, catalog: str | None) -> None:
    """Refuse, before any rollout, a toolkit the round protocol cannot end a task with."""
    if not any(spec.name == "answer" for spec in toolkit.tools):
        raise LabInputError(f"--protocol rounds: toolkit '{toolkit.name}' has no `answer` tool, and only `answer` "
                            "ends a task under the round protocol (use a slot toolkit: paper, paper-small)")
    if catalog:
        check_catalog(catalog, list(toolkit.tools))


def retrieval_top_k_for(config: EvalConfig) -> int | None:
    """Documents each `search` retrieves: `--retrieval-top-k`, else under the round protocol the released
    depth of the benchmark (FRAMES 150, HLE 50), else None (the toolkit's own `top_k`)."""
    if config.retrieval_top_k is not None:
        return config.retrieval_top_k
    return find_source(config.benchmark).released_top_k if config.protocol == "rounds" else None


def with_search_depth(config: EvalConfig, toolkit: Toolkit) -> Toolkit:
    """The toolkit whose `search` tools retrieve `retrieval_top_k_for(config)` documents; an explicit
    `--retrieval-top-k` on a toolkit without such a tool is refused, a released default skips it."""
    top_k = retrieval_top_k_for(config)
    deeper = with_retrieval_top_k(toolkit, top_k) if top_k is not None else None
    if deeper is None and config.retrieval_top_k is not None:
        raise LabInputError(f"--retrieval-top-k {config.retrieval_top_k}: toolkit '{toolkit.name}' has no "
                            "`search` tool retrieving from a local index "
                            "(backend.retriever.kind: local_search; e.g. --toolkit paper)")
    return deeper or toolkit
