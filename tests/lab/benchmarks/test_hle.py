"""Tests for lab.benchmarks.hle on small synthetic files in HLE's format (no HLE data ships here)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lab.benchmarks.hle import load_hle, parse_choices
from lab.errors import LabInputError

MC_QUESTION = "Which gas dominates Earth's atmosphere?\n\nAnswer Choices:\nA. Oxygen\nB. Nitrogen\nC. Argon\nD. CO2"

ROWS = [
    {"id": "h1", "question": "What is 6 * 7?", "answer": "42", "answer_type": "exactMatch", "image": "",
     "category": "Math", "raw_subject": "Arithmetic", "rationale": "6*7=42"},
    {"id": "h2", "question": MC_QUESTION, "answer": "B", "answer_type": "multipleChoice", "image": "",
     "category": "Chemistry", "raw_subject": "Atmospheric chemistry"},
    {"id": "h3", "question": "What does the figure show?", "answer": "a cat", "answer_type": "exactMatch",
     "image": "data:image/png;base64,iVBORw0KGgo=", "category": "Other", "raw_subject": "Vision"},
    {"id": "h4", "question": "Name the theorem.", "answer": "Noether's theorem", "answer_type": "exactMatch",
     "image": None, "category": "Physics", "raw_subject": "Symmetry"},
]


def write_jsonl(path: Path, rows: list[dict], raw_lines: list[str] | None = None) -> Path:
    lines = [json.dumps(r) for r in rows] + (raw_lines or [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_image_rows_are_dropped_and_types_mapped(tmp_path: Path) -> None:
    tasks = load_hle(write_jsonl(tmp_path / "hle.jsonl", ROWS))
    assert [t.task_id for t in tasks] == ["h1", "h2", "h4"]  # h3 has an image
    by_id = {t.task_id: t for t in tasks}
    assert (by_id["h1"].answer, by_id["h1"].answer_type) == (42, "numeric")
    assert (by_id["h2"].answer, by_id["h2"].answer_type) == ("B", "multiple_choice")
    assert by_id["h2"].choices == ["Oxygen", "Nitrogen", "Argon", "CO2"]
    assert (by_id["h4"].answer, by_id["h4"].answer_type) == ("Noether's theorem", "exact")
    assert by_id["h4"].domain == "Physics" and by_id["h4"].meta["raw_subject"] == "Symmetry"
    assert by_id["h1"].meta["hle_answer_type"] == "exactMatch"


def test_text_only_off_keeps_image_rows(tmp_path: Path) -> None:
    tasks = load_hle(write_jsonl(tmp_path / "hle.jsonl", ROWS), text_only=False)
    assert [t.task_id for t in tasks] == ["h1", "h2", "h3", "h4"]


def test_parquet_loads_like_jsonl(tmp_path: Path) -> None:
    file = tmp_path / "test.parquet"
    columns = {key: [row.get(key) for row in ROWS] for key in ROWS[0]}
    pq.write_table(pa.table(columns), file)
    from_parquet = load_hle(file)
    from_jsonl = load_hle(write_jsonl(tmp_path / "hle.jsonl", ROWS))
    assert [t.model_dump() for t in from_parquet] == [t.model_dump() for t in from_jsonl]


def test_folder_path_finds_the_file_and_limit_counts_text_rows(tmp_path: Path) -> None:
    (tmp_path / "hle").mkdir()
    write_jsonl(tmp_path / "hle" / "hle.jsonl", ROWS)
    assert [t.task_id for t in load_hle(tmp_path, limit=3)] == ["h1", "h2", "h4"]
    assert [t.task_id for t in load_hle(tmp_path / "hle", limit=1)] == ["h1"]


def test_no_file_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match="no HLE .jsonl or .parquet file"):
        load_hle(tmp_path)


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "hle.jsonl", ROWS[:1], raw_lines=['{"id": "h9", "question": '])
    with pytest.raises(LabInputError, match=r"^hle\.jsonl line 2: invalid JSON \("):
        load_hle(file)


def test_missing_field_and_unknown_answer_type_are_named(tmp_path: Path) -> None:
    no_answer = {k: v for k, v in ROWS[0].items() if k != "answer"}
    with pytest.raises(LabInputError, match=r"hle\.jsonl line 2: missing field 'answer'"):
        load_hle(write_jsonl(tmp_path / "hle.jsonl", [ROWS[1], no_answer]))
    odd = {**ROWS[0], "answer_type": "freeForm"}
    with pytest.raises(LabInputError, match="answer_type 'freeForm'"):
        load_hle(write_jsonl(tmp_path / "hle.jsonl", [odd]))


def test_split_source_and_hub_guard(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "hle.jsonl", ROWS)
    with pytest.raises(LabInputError, match="unknown split 'train'"):
        load_hle(file, split="train")
    with pytest.raises(LabInputError, match="unknown source"):
        load_hle(file, source="ftp")
    try:
        import datasets  # noqa: F401
    except ImportError:
        with pytest.raises(LabInputError, match="needs the `datasets` package"):
            load_hle(source="hub")


def test_parse_choices_reads_lettered_lines_only_after_the_marker() -> None:
    assert parse_choices(MC_QUESTION) == ["Oxygen", "Nitrogen", "Argon", "CO2"]
    assert parse_choices("A. not a choice list\nB. either") == []
    assert parse_choices("Q\nAnswer Choices:\nA) one\n(note)\nB) two") == ["one", "two"]
