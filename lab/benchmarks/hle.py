"""Humanity's Last Exam (Phan et al. 2025, `cais/hle`): the paper's text-only subset.

The orchestrator paper reports HLE on questions without images, so rows whose `image` field is
non-empty are dropped (`text_only=True`). Rows come from a local JSONL or Parquet file in the hub's
format (fields `id`, `question`, `answer`, `answer_type`, `image`, `category`, `raw_subject`), or from
the gated hub dataset when the caller passes `source="hub"` explicitly.

Multiple-choice questions carry their options inside the question text after `Answer Choices:`; the
loader copies them into `choices` so graders and prompts need not re-parse them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lab.benchmarks.base import (
    BenchmarkTask,
    apply_limit,
    check_split,
    default_benchmarks_dir,
    infer_answer,
    iter_jsonl,
    require,
)
from lab.benchmarks.source import BenchmarkSource, EvalSource, graded_by_answer
from lab.errors import LabInputError

HUB_DATASET = "cais/hle"

#: HLE's answer types -> the lab's.
ANSWER_TYPES = {"exactMatch": "exact", "multipleChoice": "multiple_choice"}

#: Columns the loader reads; Parquet files are read column-selectively (image previews are large).
_COLUMNS = ("id", "question", "answer", "answer_type", "image", "category", "raw_subject", "rationale")

_CHOICE_LINE = re.compile(r"^\s*([A-Z])[.)]\s+(.*\S)\s*$")


def load_hle(
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    source: str = "local",
    text_only: bool = True,
) -> list[BenchmarkTask]:
    """Load HLE questions; with `text_only` (the paper's setting) rows that have an image are skipped.

    `path` is a `.jsonl` or `.parquet` file, or a folder holding one (default: `<benchmarks>/hle/`).
    """
    check_split("hle", split)
    if source == "hub":
        rows: Iterable[tuple[str, dict[str, Any]]] = _hub_rows()
    elif source == "local":
        file = _find_file(path)
        rows = _parquet_rows(file) if file.suffix.lower() == ".parquet" else _jsonl_rows(file)
    else:
        raise LabInputError(f"hle: unknown source '{source}' (choose local or hub)")
    tasks: list[BenchmarkTask] = []
    for where, row in rows:
        if limit is not None and len(tasks) >= limit:
            break
        if text_only and row.get("image"):
            continue
        tasks.append(_task(row, where))
    return apply_limit(tasks, limit)


def _find_file(path: str | Path | None) -> Path:
    """The HLE file: given directly, or the first `.jsonl`/`.parquet` in the folder (or its `hle/`)."""
    if path is not None and Path(path).is_file():
        return Path(path)
    base = Path(path) if path is not None else default_benchmarks_dir()
    for folder in (base, base / "hle"):
        if folder.is_dir():
            found = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jsonl", ".parquet"))
            if found:
                return found[0]
    raise LabInputError(f"{base}: no HLE .jsonl or .parquet file here or in hle/ (pass a path, or source='hub')")


def _jsonl_rows(file: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for lineno, obj in iter_jsonl(file):
        yield f"{file.name} line {lineno}", obj


def _parquet_rows(file: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    import pyarrow.parquet as pq  # a lab dependency; imported here to keep `import lab` light

    try:
        parquet = pq.ParquetFile(file)
    except Exception as exc:  # pyarrow raises several types for a corrupt or non-Parquet file
        raise LabInputError(f"{file.name}: not a readable Parquet file ({exc})") from exc
    columns = [name for name in _COLUMNS if name in parquet.schema_arrow.names]
    for index, row in enumerate(parquet.read(columns=columns).to_pylist()):
        yield f"{file.name} row {index}", row


def _hub_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    """Rows of the gated hub dataset; only reached with an explicit `source="hub"`."""
    try:
        import datasets  # type: ignore[import-not-found]  # optional: not a lab dependency
    except ImportError as exc:
        raise LabInputError("hle: source='hub' needs the `datasets` package (pip install datasets)") from exc
    for index, row in enumerate(datasets.load_dataset(HUB_DATASET, split="test")):
        yield f"{HUB_DATASET} row {index}", dict(row)


def _task(row: dict[str, Any], where: str) -> BenchmarkTask:
    """One HLE row -> one task, checking the fields a grader relies on."""
    task_id = str(require(row, "id", where))
    question = str(require(row, "question", where)).strip()
    answer_text = str(require(row, "answer", where)).strip()
    hle_type = require(row, "answer_type", where)
    if hle_type not in ANSWER_TYPES:
        raise LabInputError(f"{where}: answer_type '{hle_type}' is not one of {', '.join(ANSWER_TYPES)}")
    if not question:
        raise LabInputError(f"{where}: empty 'question'")
    choices: list[str] = []
    if hle_type == "multipleChoice":
        answer: Any = answer_text
        answer_type = "multiple_choice"
        choices = parse_choices(question)
    else:
        answer, answer_type = infer_answer(answer_text)
    return BenchmarkTask(
        benchmark="hle",
        task_id=task_id,
        split="test",
        domain=str(row.get("category") or ""),
        question=question,
        answer=answer,
        answer_type=answer_type,
        choices=choices,
        meta={
            "answer_text": answer_text,
            "hle_answer_type": hle_type,
            "category": row.get("category") or "",
            "raw_subject": row.get("raw_subject") or "",
            "rationale": row.get("rationale") or "",
        },
    )


def parse_choices(question: str) -> list[str]:
    """Options listed after `Answer Choices:` as `A. text` lines, in order (empty when none are found).

    >>> parse_choices("Pick one.\\n\\nAnswer Choices:\\nA. red\\nB. blue")
    ['red', 'blue']
    """
    _, marker, tail = question.partition("Answer Choices:")
    if not marker:
        return []
    choices = []
    for line in tail.splitlines():
        match = _CHOICE_LINE.match(line)
        if match:
            choices.append(match.group(2))
    return choices


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, **options: Any
) -> list[BenchmarkTask]:
    return load_hle(path, split, limit, **options)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    return graded_by_answer("hle", load_hle(path, split))


#: Under the round protocol, as the released evaluation/eval_hle.py and retrieval_hle.py: up to 50 documents per
#: `search` ("topk"), from the index's global top 1,000 the task's own documents (`example_ids`), each longer
#: than 100 characters and scoring over 0.1.
SOURCE = BenchmarkSource(
    name="hle", usage="hle", description="Humanity's Last Exam, text-only (local JSONL/Parquet or source='hub')",
    load=_load, open=_open, rounds=True, released_top_k=50,
    released_filters={"min_chars": 100, "min_score": 0.1, "whitelist_scope": "global"},
)
