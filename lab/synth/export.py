"""A synthetic domain as a tau2 domain folder: tasks.json, split_tasks.json, db.json and policy.md
(and domain.py, the code of a domain an LLM wrote).

Why tau2's layout (`lab.env.layout`): the lab's tau2 loader and tau2-bench itself read exactly
these four files, so a built domain can be evaluated like retail. Why a fixed byte format: the
folder is an artefact to hash, diff and ship, so export -> import -> export must give the same bytes.
JSON is written with two-space indents, non-ASCII kept, and a final newline; `json` round-trips
every value the domains hold (floats by their shortest repr, ints as ints, key order as read), and
the policy is written as UTF-8 bytes so no newline translation can creep in. `folder_hash` hashes
the parsed content instead, so it says whether two folders hold the same domain whatever their
formatting.

    content = pack(domain, db, tasks, seed=0)
    export_domain(content, "out/bank")
    assert import_domain("out/bank") == content
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.env.layout import DB_FILE, POLICY_FILE, SPLITS_FILE, TASKS_FILE
from lab.errors import LabInputError
from lab.synth.domain import Domain, derive_seed

#: An LLM-built domain's code (models and tools), run only in the sandbox (`lab.synth.sandboxed`).
CODE_FILE = "domain.py"
#: Share of tasks in the test split; tau2 retail has 40 test tasks of 114.
TEST_SHARE = 0.35


@dataclass(frozen=True)
class DomainFolder:
    """The content of one tau2 domain folder; `name` is the folder's name."""

    name: str
    tasks: list[dict[str, Any]]
    splits: dict[str, list[str]]
    db: dict[str, Any]
    policy: str
    code: str | None = None  # an LLM-built domain's records and tools (domain.py); None for a built-in one


def make_splits(tasks: list[dict[str, Any]], seed: int, test_share: float = TEST_SHARE) -> dict[str, list[str]]:
    """`train` / `test` / `base` id lists: test is the `test_share` of tasks that sort first by a
    seeded sha256 of their id; each list keeps tasks.json order, and base holds every task."""
    ids = [task["id"] for task in tasks]
    ranked = sorted(ids, key=lambda task_id: derive_seed("split", seed, task_id))
    test = set(ranked[:round(len(ids) * test_share)])
    return {"train": [i for i in ids if i not in test], "test": [i for i in ids if i in test], "base": ids}


def pack(domain: Domain | Any, db: dict[str, Any], tasks: list[dict[str, Any]], seed: int) -> DomainFolder:
    """A built domain's folder content, with seeded splits; an LLM-built domain (a
    `lab.synth.sandboxed.SandboxDomain`) brings its code along, since no registry holds it."""
    return DomainFolder(name=domain.name, tasks=tasks, splits=make_splits(tasks, seed), db=db, policy=domain.policy,
                        code=getattr(domain, "code", None))


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def export_domain(content: DomainFolder, folder: str | Path) -> Path:
    """Write the four files (and `domain.py` for an LLM-built domain) into `folder` (created if
    needed); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TASKS_FILE).write_bytes(_json_bytes(content.tasks))
    (folder / SPLITS_FILE).write_bytes(_json_bytes(content.splits))
    (folder / DB_FILE).write_bytes(_json_bytes(content.db))
    (folder / POLICY_FILE).write_bytes(content.policy.encode("utf-8"))
    if content.code is not None:
        (folder / CODE_FILE).write_bytes(content.code.encode("utf-8"))
    else:
        (folder / CODE_FILE).unlink(missing_ok=True)  # a built-in domain written over an LLM one
    return folder


def _read_json(file: Path, kind: type) -> Any:
    try:
        value = json.loads(file.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise LabInputError(f"{file}: not found (a tau2 domain folder holds {TASKS_FILE}, {SPLITS_FILE}, "
                            f"{DB_FILE} and {POLICY_FILE})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabInputError(f"{file}: not UTF-8 JSON ({exc})") from None
    if not isinstance(value, kind):
        raise LabInputError(f"{file}: expected a JSON {kind.__name__}, got {type(value).__name__}")
    return value


def import_domain(folder: str | Path, domain: Domain | None = None) -> DomainFolder:
    """Read a folder written by `export_domain`; with `domain`, its db is validated against the tables."""
    folder = Path(folder)
    policy_file = folder / POLICY_FILE
    if not policy_file.is_file():
        raise LabInputError(f"{policy_file}: not found")
    code_file = folder / CODE_FILE
    content = DomainFolder(name=folder.name, tasks=_read_json(folder / TASKS_FILE, list),
                           splits=_read_json(folder / SPLITS_FILE, dict), db=_read_json(folder / DB_FILE, dict),
                           policy=policy_file.read_bytes().decode("utf-8"),
                           code=code_file.read_bytes().decode("utf-8") if code_file.is_file() else None)
    if domain is not None:
        domain.validate(content.db)
    return content


def folder_hash(folder: str | Path) -> str:
    """sha256 of the folder's parsed content (canonical JSON, sorted keys): equal for equal domains."""
    content = import_domain(folder)
    canonical = {"tasks": content.tasks, "splits": content.splits, "db": content.db, "policy": content.policy}
    if content.code is not None:
        canonical["code"] = content.code
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, default=str).encode()).hexdigest()
