"""The task type every benchmark loader returns, and the file helpers the loaders share.

Why one `BenchmarkTask` for FRAMES, HLE, tau2-bench and BFCL: the harness, the store and the app
handle tasks without knowing where they came from; only `answer_type` tells a grader how to compare.
Loaders read local files only. A loader touches the network only when the caller passes
`source="hub"` explicitly (the lab's machines have no hub access, and runs must be reproducible).

Where local files are looked for when no path is given: `$LAB_BENCHMARKS_DIR`, else the shared folder
`../shared/benchmarks` beside the repository (see `default_benchmarks_dir`).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from lab.errors import LabInputError
from lab.records import TaskRecord

AnswerType = Literal["exact", "numeric", "multiple_choice", "actions", "function_calls"]

#: Environment variable that points the loaders at a benchmark folder other than the shared one.
BENCHMARKS_ENV = "LAB_BENCHMARKS_DIR"


class BenchmarkTask(BaseModel):
    """One benchmark question with its reference answer, as every loader returns it."""

    benchmark: str = Field(description="Benchmark name: frames, hle, tau2, bfcl (or world).")
    task_id: str = Field(description="Id unique within the benchmark, e.g. `frames-0042`, `retail-17`.")
    split: str = Field("test", description="train or test (tau2 has both; the others are test only).")
    domain: str = Field("", description="Domain or category: `retail`, `Physics`, `simple_python`...")
    question: str = Field(description="What the solver is asked (for tau2: the simulated user's instruction).")
    answer: Any = Field(
        None,
        description="Reference: a string, a number (numeric), a letter (multiple_choice), golden actions "
        "(actions) or BFCL possible answers (function_calls).",
    )
    answer_type: AnswerType = Field("exact", description="How a grader compares a prediction with `answer`.")
    choices: list[str] = Field(default_factory=list, description="Options of a multiple-choice question.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Everything else the loader read.")

    def to_record(self) -> TaskRecord:
        """The store row for this task; answer_type and choices travel in `meta_json`."""
        meta = {**self.meta, "answer_type": self.answer_type}
        if self.choices:
            meta["choices"] = self.choices
        return TaskRecord(
            benchmark=self.benchmark,
            task_id=self.task_id,
            split=self.split,
            domain=self.domain,
            question=self.question,
            answer_json=json.dumps(self.answer, ensure_ascii=False, default=str),
            meta_json=json.dumps(meta, ensure_ascii=False, default=str),
        )


# ---------------------------------------------------------------------------------------------------
# Locating files
# ---------------------------------------------------------------------------------------------------


def default_benchmarks_dir() -> Path:
    """`$LAB_BENCHMARKS_DIR`, else `<repo>/../shared/benchmarks` (the read-only shared data)."""
    env = os.environ.get(BENCHMARKS_ENV)
    if env:
        return Path(env)
    repo_root = Path(__file__).resolve().parents[2]
    return repo_root.parent / "shared" / "benchmarks"


def resolve_dir(path: str | Path | None, subdir: str, marker: str) -> Path:
    """Find the folder holding `marker`: `path` itself, `path/subdir`, or the default folder's `subdir`.

    Why accept several shapes: users pass either the benchmark's own folder or the root that holds all
    benchmarks, and both should work without a flag.
    """
    base = Path(path) if path is not None else default_benchmarks_dir()
    for candidate in (base, base / subdir):
        if (candidate / marker).exists():
            return candidate
    hint = "" if path is not None else f" (set {BENCHMARKS_ENV} or pass a path)"
    raise LabInputError(f"{base}: no {marker} here or in {subdir}/{hint}")


def resolve_file(path: str | Path | None, subdir: str, default_name: str) -> Path:
    """A file given directly, or `default_name` inside a folder found like `resolve_dir`."""
    if path is not None and Path(path).is_file():
        return Path(path)
    if path is not None and not Path(path).exists():
        raise LabInputError(f"{path}: no such file or folder")
    return resolve_dir(path, subdir, default_name) / default_name


# ---------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    """Parse a whole-file JSON document; a syntax error names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LabInputError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabInputError(f"{path.name} line {exc.lineno}: invalid JSON ({exc.msg})") from exc


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for each non-blank line; bad lines raise naming file and line.

    Why JSON Lines even for `.json` files: BFCL v4 ships one object per line under a `.json` name.
    """
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise LabInputError(f"{path}: cannot read ({exc.strerror})") from exc
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LabInputError(f"{path.name} line {lineno}: invalid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise LabInputError(f"{path.name} line {lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def require(obj: dict[str, Any], field: str, where: str) -> Any:
    """`obj[field]`, or a one-line error naming where the field is missing."""
    if field not in obj:
        raise LabInputError(f"{where}: missing field '{field}'")
    return obj[field]


# ---------------------------------------------------------------------------------------------------
# Shared options
# ---------------------------------------------------------------------------------------------------


def check_split(benchmark: str, split: str | None, allowed: tuple[str, ...] = ("test",)) -> None:
    """Reject a split the benchmark does not have, listing the ones it has."""
    if split is not None and split not in allowed:
        raise LabInputError(f"{benchmark}: unknown split '{split}' (choose from {', '.join(allowed)})")


def apply_limit(tasks: list[BenchmarkTask], limit: int | None) -> list[BenchmarkTask]:
    """The first `limit` tasks (all when None); a negative limit is an input error."""
    if limit is None:
        return tasks
    if limit < 0:
        raise LabInputError(f"limit: must be >= 0, got {limit}")
    return tasks[:limit]


_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")


def parse_bare_number(text: str) -> int | float | None:
    """The number a reference answer is, when it is nothing but one (`8,350` -> 8350, `1.92` -> 1.92), or None.

    Why so strict: only answers that are a bare number become `numeric`; `37 years` or `1/2` stay
    exact-match, and numbers with a leading zero (`007`, codes) keep their digits as text. (Reading the
    number a *prediction* states, in a sentence, is `lab.graders.parse_number`'s job.)
    """
    s = text.strip()
    if _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    if not _NUMBER.fullmatch(s) or re.match(r"[+-]?0\d", s):
        return None
    value = float(s)
    if not math.isfinite(value):
        return None
    return int(value) if re.fullmatch(r"[+-]?\d+", s) else value


def infer_answer(text: str) -> tuple[Any, AnswerType]:
    """`(answer, answer_type)` for a free-text reference: a number when it is one, else the text."""
    number = parse_bare_number(text)
    if number is not None:
        return number, "numeric"
    return text.strip(), "exact"
