"""FRAMES (Krishna et al. 2024, arXiv:2409.12941): 824 multi-hop questions over Wikipedia.

The paper evaluates the orchestrator on FRAMES as its retrieval-heavy benchmark. Two column layouts
exist and both load:

- OpenDeepSearch's CSV (the shared `frames/frames_test_set.csv`): `question`, `true_answer`,
  `wikipedia_link_1..10`, `wikipedia_link_11+`, `reasoning_types`, `wiki_links`.
- Google's `test.tsv` / the hub dataset `google/frames-benchmark`: `Prompt`, `Answer`, the same link
  and reasoning columns, and an unnamed index column.

Task ids are `frames-NNNN` from the 0-based row order, which is the same in both layouts.
"""

from __future__ import annotations

import ast
import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lab.benchmarks.base import BenchmarkTask, apply_limit, check_split, infer_answer, resolve_file
from lab.benchmarks.source import BenchmarkSource, DocumentRules, EvalSource, graded_by_answer
from lab.errors import LabInputError

HUB_DATASET = "google/frames-benchmark"
DEFAULT_FILE = "frames_test_set.csv"

#: (question column, answer column) per known layout; the first whose question column is present wins.
_LAYOUTS = (("question", "true_answer"), ("Prompt", "Answer"))


def load_frames(
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    source: str = "local",
) -> list[BenchmarkTask]:
    """Load FRAMES from a local CSV/TSV (default: the shared file) or, if asked, from the hub.

    `path` may be the file, its folder, or the benchmarks root holding `frames/`. `source="hub"` reads
    `google/frames-benchmark` with the `datasets` package; nothing else touches the network.
    """
    check_split("frames", split)
    if source == "hub":
        rows = _hub_rows(limit)
        return apply_limit(_tasks_from_rows(rows, HUB_DATASET), limit)
    if source != "local":
        raise LabInputError(f"frames: unknown source '{source}' (choose local or hub)")
    file = resolve_file(path, "frames", DEFAULT_FILE)
    return apply_limit(_read_table(file, limit), limit)


def _read_table(file: Path, limit: int | None) -> list[BenchmarkTask]:
    """Parse a CSV (or TSV, by extension) with line-numbered errors."""
    delimiter = "\t" if file.suffix.lower() == ".tsv" else ","
    try:
        handle = file.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise LabInputError(f"{file}: cannot read ({exc.strerror})") from exc
    with handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        header = reader.fieldnames or []
        question_col, answer_col = _layout(file.name, header)
        tasks: list[BenchmarkTask] = []
        for index, row in enumerate(reader):
            if limit is not None and len(tasks) >= limit:
                break
            where = f"{file.name} line {reader.line_num}"
            for column in (question_col, answer_col):
                if row.get(column) is None:  # a short row: DictReader fills missing cells with None
                    raise LabInputError(f"{where}: missing column '{column}'")
            if None in row:  # DictReader keeps surplus cells under the key None
                raise LabInputError(f"{where}: {len(header) + len(row[None])} cells, header has {len(header)}")
            tasks.append(_task(index, row, question_col, answer_col, where))
    return tasks


def _layout(file_name: str, header: list[str]) -> tuple[str, str]:
    """Pick the column layout from the header, or say which columns are missing."""
    for question_col, answer_col in _LAYOUTS:
        if question_col in header:
            if answer_col not in header:
                raise LabInputError(f"{file_name} line 1: missing column '{answer_col}'")
            return question_col, answer_col
    known = " or ".join(f"'{q}'" for q, _ in _LAYOUTS)
    raise LabInputError(f"{file_name} line 1: missing column {known} (header: {', '.join(header) or 'empty'})")


def _task(index: int, row: dict[str, Any], question_col: str, answer_col: str, where: str) -> BenchmarkTask:
    """One row -> one task; the answer becomes numeric when it is a bare number."""
    question = str(row[question_col]).strip()
    answer_text = str(row[answer_col]).strip()
    if not question:
        raise LabInputError(f"{where}: empty '{question_col}'")
    if not answer_text:
        raise LabInputError(f"{where}: empty '{answer_col}'")
    answer, answer_type = infer_answer(answer_text)
    reasoning = [part.strip() for part in str(row.get("reasoning_types") or "").split("|") if part.strip()]
    return BenchmarkTask(
        benchmark="frames",
        task_id=f"frames-{index:04d}",
        split="test",
        domain="multihop",
        question=question,
        answer=answer,
        answer_type=answer_type,
        meta={
            "answer_text": answer_text,
            "reasoning_types": reasoning,
            "wiki_links": _wiki_links(row),
            "row": index,
        },
    )


def _wiki_links(row: dict[str, Any]) -> list[str]:
    """The row's Wikipedia URLs: the `wiki_links` list literal, else the numbered link columns."""
    raw = row.get("wiki_links")
    if raw:
        try:
            parsed = ast.literal_eval(str(raw))  # a Python list literal, not JSON (single quotes)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list):
            return [str(url) for url in parsed]
    numbered = [key for key in row if isinstance(key, str) and key.startswith("wikipedia_link_")]
    return [str(row[key]).strip() for key in numbered if row[key] and str(row[key]).strip()]


def _hub_rows(limit: int | None) -> Iterable[dict[str, Any]]:
    """Rows of the hub dataset; only reached with an explicit `source="hub"`."""
    try:
        import datasets  # type: ignore[import-not-found]  # optional: not a lab dependency
    except ImportError as exc:
        raise LabInputError("frames: source='hub' needs the `datasets` package (pip install datasets)") from exc
    data = datasets.load_dataset(HUB_DATASET, split="test")
    return data if limit is None else data.select(range(min(limit, len(data))))


def _tasks_from_rows(rows: Iterable[dict[str, Any]], name: str) -> list[BenchmarkTask]:
    """Tasks from already-parsed rows (hub records), with the layout picked from the first row."""
    tasks: list[BenchmarkTask] = []
    layout: tuple[str, str] | None = None
    for index, row in enumerate(rows):
        layout = layout or _layout(name, list(row.keys()))
        tasks.append(_task(index, dict(row), layout[0], layout[1], f"{name} row {index}"))
    return tasks


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, **options: Any
) -> list[BenchmarkTask]:
    return load_frames(path, split, limit, **options)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    return graded_by_answer("frames", load_frames(path, split))


#: The released evaluation's FRAMES rules under the round protocol (evaluation/eval_frames.py): 150
#: documents per `search`, 4,000 characters each and no ` ...` after one, `search` withdrawn once a
#: document exists, a 24,000-token context, the FRAMES expert prompts and budgets (`lab.tools.experts`),
#: and two quirks of that script: the first valid call of a round runs (its loop ends in an unconditional
#: `break`, though `processed_tools` is there to run each distinct tool) and no program ever runs (its
#: reader fails on a chat completion). `--calls-per-round distinct` and `--run-programs yes` undo them.
SOURCE = BenchmarkSource(
    name="frames", usage="frames", description="FRAMES multi-hop QA (824 questions)", load=_load, open=_open,
    rounds=True, released_top_k=150,
    documents=DocumentRules(context_tokens=24000, document_chars=4000, document_suffix="",
                            withdraw_search_after_documents=True, expert_variant="frames",
                            calls_per_round="first", run_programs=False),
)
