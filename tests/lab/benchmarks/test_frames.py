"""Tests for lab.benchmarks.frames: the real shared CSV, the Google layout, limits and broken files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lab.benchmarks.frames import load_frames
from lab.errors import LabInputError

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
FRAMES_CSV = SHARED / "frames" / "frames_test_set.csv"
needs_shared = pytest.mark.skipif(
    not FRAMES_CSV.is_file(), reason=f"shared benchmark data not found at {FRAMES_CSV}"
)

HEADER = ["question", "true_answer", "reasoning_types", "wiki_links"]


def write_csv(path: Path, rows: list[list[str]], header: list[str] = HEADER, delimiter: str = ",") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@needs_shared
def test_real_file_has_824_questions_with_answers_and_sources() -> None:
    tasks = load_frames(SHARED)
    assert len(tasks) == 824
    assert len({t.task_id for t in tasks}) == 824
    with FRAMES_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    # rows stay in file order: task i is row i, question and answer text unchanged
    for task, row in zip(tasks, rows):
        assert task.question == row["question"].strip()
        assert task.meta["answer_text"] == row["true_answer"].strip()
    assert all(t.benchmark == "frames" and t.split == "test" for t in tasks)
    assert all(t.meta["wiki_links"] and all("wiki" in u for u in t.meta["wiki_links"]) for t in tasks)
    assert all(t.meta["reasoning_types"] for t in tasks)


@needs_shared
def test_bare_number_answers_become_numeric_and_others_stay_text() -> None:
    tasks = load_frames(FRAMES_CSV)
    numeric = [t for t in tasks if t.answer_type == "numeric"]
    assert numeric and len(numeric) < len(tasks)
    for task in numeric:
        assert isinstance(task.answer, (int, float))
        assert float(task.meta["answer_text"].replace(",", "")) == task.answer
    text = next(t for t in tasks if t.answer_type == "exact")
    assert text.answer == text.meta["answer_text"]


@needs_shared
def test_limit_and_the_three_path_shapes_agree() -> None:
    by_root = load_frames(SHARED, limit=5)
    by_folder = load_frames(SHARED / "frames", limit=5)
    by_file = load_frames(FRAMES_CSV, limit=5)
    assert [t.task_id for t in by_root] == [t.task_id for t in by_folder] == [t.task_id for t in by_file]
    assert len(by_root) == 5
    assert load_frames(FRAMES_CSV, split="test", limit=0) == []


def test_only_the_test_split_exists(tmp_path: Path) -> None:
    file = write_csv(tmp_path / "f.csv", [["Q?", "A", "", "[]"]])
    with pytest.raises(LabInputError, match="unknown split 'train'"):
        load_frames(file, split="train")


def test_short_row_names_file_line_and_column(tmp_path: Path) -> None:
    rows = [["Q1?", "A1", "Temporal reasoning", "[]"], ["Q2?", "A2", "", "[]"], ["Q3 with no answer cell"]]
    file = write_csv(tmp_path / "frames_test_set.csv", rows)
    with pytest.raises(LabInputError, match=r"^frames_test_set\.csv line 4: missing column 'true_answer'$"):
        load_frames(file)


def test_header_without_answer_column_is_reported_on_line_1(tmp_path: Path) -> None:
    file = write_csv(tmp_path / "frames.csv", [["Q?", "x"]], header=["Prompt", "Notes"])
    with pytest.raises(LabInputError, match=r"frames\.csv line 1: missing column 'Answer'"):
        load_frames(file)


def test_unknown_header_lists_what_it_found(tmp_path: Path) -> None:
    file = write_csv(tmp_path / "frames.csv", [["Q?", "A"]], header=["query", "gold"])
    with pytest.raises(LabInputError, match="header: query, gold"):
        load_frames(file)


def test_empty_answer_is_an_error(tmp_path: Path) -> None:
    file = write_csv(tmp_path / "frames.csv", [["Q?", "  ", "", "[]"]])
    with pytest.raises(LabInputError, match=r"frames\.csv line 2: empty 'true_answer'"):
        load_frames(file)


def test_google_tsv_layout_loads_with_links_from_numbered_columns(tmp_path: Path) -> None:
    header = ["", "Prompt", "Answer", "wikipedia_link_1", "wikipedia_link_2", "reasoning_types"]
    rows = [
        ["0", "Who came first?", "Ada Lovelace", "https://en.wikipedia.org/wiki/A", "", "Temporal reasoning"],
        ["1", "How many?", "1,240", "https://en.wikipedia.org/wiki/B", "https://en.wikipedia.org/wiki/C",
         "Numerical reasoning | Tabular reasoning"],
    ]
    file = write_csv(tmp_path / "test.tsv", rows, header=header, delimiter="\t")
    first, second = load_frames(file)
    assert (first.question, first.answer, first.answer_type) == ("Who came first?", "Ada Lovelace", "exact")
    assert first.meta["wiki_links"] == ["https://en.wikipedia.org/wiki/A"]
    assert (second.answer, second.answer_type) == (1240, "numeric")
    assert second.meta["reasoning_types"] == ["Numerical reasoning", "Tabular reasoning"]
    assert len(second.meta["wiki_links"]) == 2


def test_hub_source_needs_datasets_and_is_never_the_default() -> None:
    try:
        import datasets  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("datasets is installed; tests never reach the network")
    with pytest.raises(LabInputError, match="needs the `datasets` package"):
        load_frames(source="hub")


def test_unknown_source_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match="unknown source 'web'"):
        load_frames(tmp_path, source="web")


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match="no frames_test_set.csv"):
        load_frames(tmp_path)
    with pytest.raises(LabInputError, match="no such file or folder"):
        load_frames(tmp_path / "nope.csv")


def test_to_record_keeps_answer_and_type(tmp_path: Path) -> None:
    file = write_csv(tmp_path / "f.csv", [["How many moons?", "2", "Numerical reasoning", "['https://x']"]])
    (task,) = load_frames(file)
    record = task.to_record()
    assert (record.benchmark, record.task_id, record.question) == ("frames", "frames-0000", "How many moons?")
    assert json.loads(record.answer_json) == 2
    meta = json.loads(record.meta_json)
    assert meta["answer_type"] == "numeric" and meta["wiki_links"] == ["https://x"]
