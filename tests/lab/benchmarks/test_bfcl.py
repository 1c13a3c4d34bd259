"""Tests for lab.benchmarks.bfcl: real v4 files joined with their answers, categories, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.benchmarks.bfcl import CATEGORIES, check_task, load_bfcl
from lab.errors import LabInputError

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
BFCL = SHARED / "bfcl"
needs_shared = pytest.mark.skipif(not BFCL.is_dir(), reason=f"shared benchmark data not found at {BFCL}")


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@needs_shared
@pytest.mark.parametrize("category", CATEGORIES)
def test_each_real_category_loads_every_question_with_its_answer(category: str) -> None:
    tasks = load_bfcl(SHARED, categories=category)
    questions = jsonl(BFCL / f"BFCL_v4_{category}.json")
    assert len(tasks) == len(questions) > 0
    assert [t.task_id for t in tasks] == [q["id"] for q in questions]
    assert all(t.domain == category and t.answer_type == "function_calls" for t in tasks)
    assert all(t.task_id.startswith(category) for t in tasks)
    answer_file = BFCL / "possible_answer" / f"BFCL_v4_{category}.json"
    if category == "irrelevance":
        assert not answer_file.exists()
        assert all(t.answer == [] for t in tasks)
        return
    answers = {a["id"]: a["ground_truth"] for a in jsonl(answer_file)}
    for task, question in zip(tasks, questions):
        assert task.answer == answers[task.task_id]  # joined by id, not by line position
        assert task.meta["functions"] == question["function"]
        assert question["question"][0][-1]["content"] in task.question


@needs_shared
def test_default_loads_all_five_categories_in_order() -> None:
    tasks = load_bfcl(BFCL)
    seen = list(dict.fromkeys(t.domain for t in tasks))
    assert seen == list(CATEGORIES)
    assert len(tasks) == sum(len(jsonl(BFCL / f"BFCL_v4_{c}.json")) for c in CATEGORIES)


@needs_shared
def test_limit_alias_and_category_list() -> None:
    assert len(load_bfcl(SHARED, limit=7)) == 7
    simple = load_bfcl(SHARED, categories=["simple"], limit=2)
    assert [t.task_id for t in simple] == ["simple_python_0", "simple_python_1"]
    mixed = load_bfcl(SHARED, categories=["parallel", "irrelevance"])
    assert {t.domain for t in mixed} == {"parallel", "irrelevance"}
    with pytest.raises(LabInputError, match="unknown split"):
        load_bfcl(SHARED, split="train")


@needs_shared
def test_unknown_category_lists_the_ones_present() -> None:
    with pytest.raises(LabInputError, match="categories here: .*simple_python"):
        load_bfcl(SHARED, categories="java")


@needs_shared
def test_check_task_uses_the_loaded_docs_and_category() -> None:
    (task,) = load_bfcl(SHARED, categories="irrelevance", limit=1)
    assert check_task(task, "").valid
    assert check_task(task, "I cannot help with that using these tools.").valid
    name = task.meta["functions"][0]["name"]
    assert not check_task(task, f"{name}(weight=70, height=1.8)").valid


# --- small broken files ------------------------------------------------------------------------------

QUESTION = {
    "id": "simple_python_0",
    "question": [[{"role": "user", "content": "Area of a triangle with base 10 and height 5?"}]],
    "function": [{"name": "area", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}},
                                                  "required": ["base"]}}],
}
ANSWER = {"id": "simple_python_0", "ground_truth": [{"area": {"base": [10]}}]}


def make_bfcl(folder: Path, questions: list[str], answers: list[str] | None) -> Path:
    (folder / "possible_answer").mkdir(parents=True)
    (folder / "BFCL_v4_simple_python.json").write_text("\n".join(questions), encoding="utf-8")
    if answers is not None:
        (folder / "possible_answer" / "BFCL_v4_simple_python.json").write_text("\n".join(answers), encoding="utf-8")
    return folder


def numbered(record: dict, i: int) -> str:
    return json.dumps({**record, "id": f"simple_python_{i}"})


def test_invalid_json_line_names_file_and_line(tmp_path: Path) -> None:
    lines = [numbered(QUESTION, 0), numbered(QUESTION, 1), '{"id": "simple_python_2", "question": [[']
    folder = make_bfcl(tmp_path, lines, [numbered(ANSWER, i) for i in range(3)])
    with pytest.raises(LabInputError, match=r"^BFCL_v4_simple_python\.json line 3: invalid JSON \("):
        load_bfcl(folder, categories="simple_python")


def test_question_without_answer_and_orphan_answer_are_errors(tmp_path: Path) -> None:
    folder = make_bfcl(tmp_path / "a", [numbered(QUESTION, 0), numbered(QUESTION, 1)], [numbered(ANSWER, 0)])
    with pytest.raises(LabInputError, match="no possible answer for id 'simple_python_1'"):
        load_bfcl(folder, categories="simple_python")
    folder = make_bfcl(tmp_path / "b", [numbered(QUESTION, 0)], [numbered(ANSWER, 0), numbered(ANSWER, 5)])
    with pytest.raises(LabInputError, match="answer id 'simple_python_5' has no question"):
        load_bfcl(folder, categories="simple_python")


def test_missing_answer_file_and_malformed_ground_truth(tmp_path: Path) -> None:
    folder = make_bfcl(tmp_path / "a", [numbered(QUESTION, 0)], None)
    with pytest.raises(LabInputError, match="missing possible-answer file for category 'simple_python'"):
        load_bfcl(folder, categories="simple_python")
    bad = json.dumps({"id": "simple_python_0", "ground_truth": [{"area": {"base": 10}}]})
    folder = make_bfcl(tmp_path / "b", [numbered(QUESTION, 0)], [bad])
    with pytest.raises(LabInputError, match=r"possible_answer/BFCL_v4_simple_python\.json line 1: 'ground_truth'"):
        load_bfcl(folder, categories="simple_python")


def test_missing_field_and_duplicate_id(tmp_path: Path) -> None:
    no_function = json.dumps({k: v for k, v in QUESTION.items() if k != "function"})
    folder = make_bfcl(tmp_path / "a", [numbered(QUESTION, 0), no_function], [numbered(ANSWER, 0)])
    with pytest.raises(LabInputError, match=r"BFCL_v4_simple_python\.json line 2: missing field 'function'"):
        load_bfcl(folder, categories="simple_python")
    folder = make_bfcl(tmp_path / "b", [numbered(QUESTION, 0), numbered(QUESTION, 0)], [numbered(ANSWER, 0)])
    with pytest.raises(LabInputError, match="line 2: duplicate id 'simple_python_0'"):
        load_bfcl(folder, categories="simple_python")


def test_folder_without_bfcl_files(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match=r"no BFCL_v4_\*\.json files"):
        load_bfcl(tmp_path)


def test_an_orchestrator_behind_a_function_calling_api_gets_and_is_graded_on_underscore_names(tmp_path: Path):
    """The leaderboard offers `math.factorial` to a function-calling API as `math_factorial` and maps it back
    when it checks; the lab does the same for `openai:` orchestrators, and keeps dotted names otherwise."""
    import asyncio

    from lab.benchmarks import find_source
    from lab.tools.base import ToolContext

    question = {**QUESTION, "function": [{**QUESTION["function"][0], "name": "math.area"}]}
    folder = make_bfcl(tmp_path, [numbered(question, 0)],
                       [numbered({**ANSWER, "ground_truth": [{"math.area": {"base": [10]}}]}, 0)])

    def grade(function_calling: bool) -> tuple[list[str], float]:
        source = find_source("bfcl").open("simple_python", str(folder), None)
        source.function_calling = function_calling
        (task,) = source.tasks
        tools = source.tools_for(task)
        context = ToolContext(task=task)
        (name,) = tools
        asyncio.run(tools[name].execute({"base": 10}, context))
        return list(tools), asyncio.run(source.grader(task, "", context))

    assert grade(function_calling=False) == (["math.area"], 1.0)
    assert grade(function_calling=True) == (["math_area"], 1.0)
