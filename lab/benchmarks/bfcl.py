"""BFCL v4 single-turn AST categories: questions, function docs and possible answers.

Files (JSON Lines despite the `.json` name, one object per line):
`BFCL_v4_<category>.json` holds `{"id", "question": [[{role, content}, ...]], "function": [docs]}`;
`possible_answer/BFCL_v4_<category>.json` holds `{"id", "ground_truth": [{name: {param: [accepted]}}]}`.
Questions and answers are joined on `id`. `irrelevance` has no answer file: the right output is no call.

A task's answer is the ground-truth list (answer_type `function_calls`); its meta keeps the function
docs and the category, which is everything `check_task` (BFCL's AST check) needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.benchmarks.base import BenchmarkTask, apply_limit, check_split, default_benchmarks_dir, iter_jsonl, require
from lab.benchmarks.bfcl_checker import CheckResult, check_bfcl
from lab.benchmarks.recording import RecordingTool, recorded_calls
from lab.benchmarks.source import BenchmarkSource, EvalSource
from lab.errors import LabInputError
from lab.tools.base import Tool, ToolContext
from lab.toolspec import ToolSpec

#: The categories the shared folder holds, in the order `bfcl` loads them.
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")

#: Older name of a category -> v4 name.
ALIASES = {"simple": "simple_python"}

#: Categories whose right answer is "no call" and which ship no answer file.
NO_ANSWER = ("irrelevance",)

ANSWER_DIR = "possible_answer"


def load_bfcl(
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    categories: str | list[str] | tuple[str, ...] | None = None,
) -> list[BenchmarkTask]:
    """Load BFCL tasks of the given categories (default: all five), each joined with its possible answer.

    `path` is the folder with the `BFCL_v4_*.json` files, or the benchmarks root holding `bfcl/`.
    """
    check_split("bfcl", split)
    if isinstance(categories, str):
        categories = [categories]
    wanted = [ALIASES.get(c, c) for c in (categories or CATEGORIES)]
    folder = _find_folder(path)
    tasks: list[BenchmarkTask] = []
    for category in wanted:
        if limit is not None and len(tasks) >= limit:
            break
        tasks.extend(_load_category(folder, category))
    return apply_limit(tasks, limit)


def _find_folder(path: str | Path | None) -> Path:
    """The folder holding `BFCL_v4_*.json`: `path` itself or its `bfcl/` (default: the shared folder)."""
    base = Path(path) if path is not None else default_benchmarks_dir()
    for candidate in (base, base / "bfcl"):
        if candidate.is_dir() and any(candidate.glob("BFCL_v4_*.json")):
            return candidate
    raise LabInputError(f"{base}: no BFCL_v4_*.json files here or in bfcl/")


def question_file(category: str) -> str:
    return f"BFCL_v4_{category}.json"


def _load_category(folder: Path, category: str) -> list[BenchmarkTask]:
    """Questions of one category joined on id with their possible answers (both files fully read)."""
    file = folder / question_file(category)
    if not file.is_file():
        present = ", ".join(found_categories(folder))
        raise LabInputError(f"{file}: no such BFCL category file (categories here: {present})")
    answers = _read_answers(folder, category)
    tasks = []
    seen: set[str] = set()
    for lineno, row in iter_jsonl(file):
        where = f"{file.name} line {lineno}"
        task_id = str(require(row, "id", where))
        question = require(row, "question", where)
        functions = require(row, "function", where)
        if not isinstance(functions, list) or not all(isinstance(f, dict) and "name" in f for f in functions):
            raise LabInputError(f"{where}: 'function' must be a list of function docs with a 'name'")
        if task_id in seen:
            raise LabInputError(f"{where}: duplicate id '{task_id}'")
        seen.add(task_id)
        if answers is None:
            answer: list[Any] = []
        elif task_id in answers:
            answer = answers.pop(task_id)
        else:
            raise LabInputError(f"{ANSWER_DIR}/{file.name}: no possible answer for id '{task_id}' ({where})")
        tasks.append(_task(task_id, category, question, functions, answer, where))
    if answers:
        orphan = next(iter(answers))
        raise LabInputError(f"{ANSWER_DIR}/{file.name}: answer id '{orphan}' has no question in {file.name}")
    return tasks


def _read_answers(folder: Path, category: str) -> dict[str, list[Any]] | None:
    """`{id: ground_truth}` for a category, or None for categories without answers (irrelevance)."""
    file = folder / ANSWER_DIR / question_file(category)
    if category in NO_ANSWER and not file.exists():
        return None
    if not file.is_file():
        raise LabInputError(f"{file}: missing possible-answer file for category '{category}'")
    answers: dict[str, list[Any]] = {}
    for lineno, row in iter_jsonl(file):
        where = f"{ANSWER_DIR}/{file.name} line {lineno}"
        task_id = str(require(row, "id", where))
        truth = require(row, "ground_truth", where)
        if not _well_formed(truth):
            raise LabInputError(f"{where}: 'ground_truth' must be a list of {{function: {{param: [values]}}}}")
        if task_id in answers:
            raise LabInputError(f"{where}: duplicate id '{task_id}'")
        answers[task_id] = truth
    return answers


def _well_formed(truth: Any) -> bool:
    """A ground-truth list: single-key objects mapping a function name to `{param: [accepted values]}`."""
    if not isinstance(truth, list):
        return False
    for entry in truth:
        if not (isinstance(entry, dict) and len(entry) == 1):
            return False
        (params,) = entry.values()
        if not (isinstance(params, dict) and all(isinstance(v, list) for v in params.values())):
            return False
    return True


def _task(
    task_id: str, category: str, question: Any, functions: list[dict[str, Any]], answer: list[Any], where: str
) -> BenchmarkTask:
    """One joined row -> one task; the question text is the user turns' contents."""
    if not isinstance(question, list) or not all(isinstance(turn, list) for turn in question):
        raise LabInputError(f"{where}: 'question' must be a list of turns (lists of messages)")
    messages = [m for turn in question for m in turn if isinstance(m, dict)]
    text = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    return BenchmarkTask(
        benchmark="bfcl",
        task_id=task_id,
        split="test",
        domain=category,
        question=text,
        answer=answer,
        answer_type="function_calls",
        meta={"category": category, "functions": functions, "messages": question},
    )


def found_categories(folder: Path) -> list[str]:
    """Categories with a question file in `folder`."""
    return sorted(p.name[len("BFCL_v4_") : -len(".json")] for p in folder.glob("BFCL_v4_*.json"))


def check_task(task: BenchmarkTask, model_output: Any, underscore_names: bool = False) -> CheckResult:
    """BFCL's AST check of a model output against a loaded task.

    `underscore_names`: the output comes from a function-calling API that cannot put `.` in a tool name,
    so `math_factorial` stands for `math.factorial` (see `check_bfcl`). The lab's grader turns it on for
    an orchestrator behind such an API (`EvalSource.function_calling`), to which the names are offered so.
    """
    if task.answer_type != "function_calls":
        raise LabInputError(f"task {task.task_id}: not a BFCL task (answer_type {task.answer_type})")
    functions = task.meta.get("functions", [])
    category = task.meta.get("category", task.domain)
    return check_bfcl(model_output, task.answer, functions, category, underscore_names=underscore_names)


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, **options: Any
) -> list[BenchmarkTask]:
    categories = [c.strip() for c in qualifier.split(",") if c.strip()] or None
    return load_bfcl(path, split, limit, categories=categories, **options)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    """The task's functions are offered as tools that record their calls; the AST check grades the calls.
    To an orchestrator behind a function-calling API (`EvalSource.function_calling`) they are offered with
    `.` written `_` (`math_factorial`), and graded accepting those names, as the leaderboard treats such
    models (its `convert_func_name` and `underscore_to_dot`)."""
    tasks = _load(qualifier, path, split, None)

    async def grader(task: BenchmarkTask, answer: str | None, context: ToolContext) -> float:
        calls = [{"name": c["name"], "arguments": c["arguments"]} for c in recorded_calls(context)]
        return float(check_task(task, calls, underscore_names=source.function_calling).valid)

    def task_tools(task: BenchmarkTask) -> dict[str, Tool]:
        functions = task.meta.get("functions", [])
        if source.function_calling:
            functions = [{**f, "name": f["name"].replace(".", "_")} for f in functions]
        return {f["name"]: RecordingTool(tool_spec(f)) for f in functions}

    source = EvalSource("bfcl", list(tasks), grader, [t.to_record() for t in tasks], task_tools=task_tools)
    return source


def tool_spec(function: dict[str, Any]) -> ToolSpec:
    """A BFCL function doc as a tool spec (its parameter types written as JSON Schema's)."""
    params = dict(function.get("parameters") or {"type": "object", "properties": {}})
    params["type"] = "object"  # BFCL writes "dict"
    params["properties"] = {k: _json_schema(v) for k, v in params.get("properties", {}).items()}
    return ToolSpec(name=function["name"], description=function.get("description", ""), parameters=params,
                    category="basic")


def _json_schema(prop: dict[str, Any]) -> dict[str, Any]:
    mapping = {"dict": "object", "float": "number", "tuple": "array", "any": None}
    prop = dict(prop)
    if prop.get("type") in mapping:
        kind = mapping[prop["type"]]
        if kind is None:
            prop.pop("type")
        else:
            prop["type"] = kind
    if isinstance(prop.get("items"), dict):
        prop["items"] = _json_schema(prop["items"])
    if isinstance(prop.get("properties"), dict):
        prop["properties"] = {k: _json_schema(v) for k, v in prop["properties"].items()}
    return prop


SOURCE = BenchmarkSource(
    name="bfcl", usage="bfcl[:category]", description="BFCL v4 AST categories; bfcl:<category>[,<category>] for some",
    load=_load, open=_open, qualified=True,
)
