"""Tests for lab.benchmarks.tau2: the real retail/airline domains, splits, the domain object, bad files.

Also `--benchmark tau2:retail` end to end: the source's own tools executed and graded by database as
tau2-bench does; the golden actions pass, the ways a policy could look right without doing the task fail,
and with a judge the NL assertions are judged over the conversation.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from lab.benchmarks.tau2 import load_tau2, load_tau2_domain, user_instruction
from lab.benchmarks.tau2_folders import available_domains
from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.eval.sources import load_source
from lab.store import Store, queries
from lab.tools.base import ToolContext

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
TAU2 = SHARED / "tau2"
needs_shared = pytest.mark.skipif(not TAU2.is_dir(), reason=f"shared benchmark data not found at {TAU2}")


def raw_tasks(domain: str) -> list[dict]:
    return json.loads((TAU2 / domain / "tasks.json").read_text(encoding="utf-8"))


def raw_splits(domain: str) -> dict[str, list[str]]:
    return json.loads((TAU2 / domain / "split_tasks.json").read_text(encoding="utf-8"))


@needs_shared
@pytest.mark.parametrize(("domain", "count", "n_train", "n_test"), [("retail", 114, 74, 40), ("airline", 50, 30, 20)])
def test_real_domain_counts_and_splits(domain: str, count: int, n_train: int, n_test: int) -> None:
    tasks = load_tau2(SHARED, domain=domain)
    assert len(tasks) == count
    assert len({t.task_id for t in tasks}) == count
    train = load_tau2(SHARED, domain=domain, split="train")
    test = load_tau2(SHARED, domain=domain, split="test")
    assert (len(train), len(test)) == (n_train, n_test)
    assert {t.task_id for t in train}.isdisjoint({t.task_id for t in test})
    assert {t.meta["tau2_id"] for t in train} == set(raw_splits(domain)["train"])
    assert all(t.split == "train" for t in train) and all(t.split == "test" for t in test)
    assert len(load_tau2(SHARED, domain=domain, split="base")) == count


@needs_shared
def test_golden_actions_instruction_and_policy_come_from_the_files() -> None:
    tasks = load_tau2(TAU2 / "retail", domain="retail")
    policy = (TAU2 / "retail" / "policy.md").read_text(encoding="utf-8")
    for task, raw in zip(tasks, raw_tasks("retail")):
        assert task.task_id == f"retail-{raw['id']}"
        assert task.answer_type == "actions"
        assert task.answer == raw["evaluation_criteria"]["actions"]
        assert raw["user_scenario"]["instructions"]["reason_for_call"].strip() in task.question
        assert task.meta["reward_basis"] == raw["evaluation_criteria"]["reward_basis"]
        assert task.meta["policy"] == policy
        assert task.meta["db_path"] == str(TAU2 / "retail" / "db.json")
    assert any(t.meta["communicate_info"] for t in tasks)
    assert sum(1 for t in tasks if t.meta["issues"]) == 3


@needs_shared
def test_airline_tasks_load_without_a_database() -> None:
    tasks = load_tau2(SHARED, domain="airline", limit=4)
    assert len(tasks) == 4
    assert all(t.meta["db_path"] is None and t.meta["policy"] for t in tasks)
    domain = load_tau2_domain("airline", SHARED)
    assert not domain.has_db and domain.db is None
    assert domain.policy.startswith("# Airline")


@needs_shared
def test_retail_domain_object_holds_the_database_and_splits() -> None:
    domain = load_tau2_domain("retail", SHARED)
    assert domain.has_db
    assert {k: len(v) for k, v in domain.db.items()} == {"products": 50, "users": 500, "orders": 1000}
    assert sorted(domain.splits) == ["base", "test", "train"]
    assert len(domain.splits["base"]) == 114
    assert domain.policy.startswith("# Retail agent policy")


@needs_shared
def test_all_domains_when_none_is_named() -> None:
    assert available_domains(SHARED) == ["airline", "retail"]
    tasks = load_tau2(SHARED, domain=None)
    assert len(tasks) == 164
    assert {t.domain for t in tasks} == {"airline", "retail"}
    assert len(load_tau2(SHARED, domain=None, split="test", limit=25)) == 25


def test_unknown_split_and_missing_domain(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match="unknown split 'dev'"):
        load_tau2(tmp_path, split="dev")
    with pytest.raises(LabInputError, match="no tasks.json for tau2 domain 'telecom'"):
        load_tau2(tmp_path, domain="telecom")


def make_domain(folder: Path, tasks: object, splits: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    text = tasks if isinstance(tasks, str) else json.dumps(tasks, indent=1)
    (folder / "tasks.json").write_text(text, encoding="utf-8")
    if splits is not None:
        (folder / "split_tasks.json").write_text(json.dumps(splits), encoding="utf-8")
    return folder


TASK = {
    "id": "7",
    "user_scenario": {"instructions": {"reason_for_call": "Return a lamp.", "known_info": "You are Ann."}},
    "evaluation_criteria": {"actions": [{"name": "return_item", "arguments": {"id": "L1"}}], "reward_basis": ["DB"]},
}


def test_folder_without_split_file_marks_every_task_test(tmp_path: Path) -> None:
    folder = make_domain(tmp_path / "shop", [TASK])
    (task,) = load_tau2(folder, domain="shop")
    assert (task.task_id, task.split, task.domain) == ("shop-7", "test", "shop")
    assert task.question == "Reason for call: Return a lamp.\nKnown info: You are Ann."
    assert task.meta["db_path"] is None and task.meta["policy"] == ""
    with pytest.raises(LabInputError, match="no split 'train'"):
        load_tau2(folder, domain="shop", split="train")


def test_invalid_tasks_json_names_file_and_line(tmp_path: Path) -> None:
    folder = make_domain(tmp_path / "shop", '[\n {"id": "1",\n  "user_scenario": }\n]')
    with pytest.raises(LabInputError, match=r"^tasks\.json line 3: invalid JSON \("):
        load_tau2(folder, domain="shop")


def test_task_without_user_scenario_is_named_by_id(tmp_path: Path) -> None:
    broken = {k: v for k, v in TASK.items() if k != "user_scenario"}
    folder = make_domain(tmp_path / "shop", [broken])
    with pytest.raises(LabInputError, match="tasks.json task id 7: missing field 'user_scenario'"):
        load_tau2(folder, domain="shop")


def test_bad_split_file_is_reported(tmp_path: Path) -> None:
    folder = make_domain(tmp_path / "shop", [TASK], splits={"train": "7"})
    with pytest.raises(LabInputError, match="split_tasks.json line 1: expected an object mapping"):
        load_tau2(folder, domain="shop")


def test_plain_string_instructions_are_kept_verbatim() -> None:
    assert user_instruction("  Cancel my order.  ") == "Cancel my order."
    with pytest.raises(LabInputError, match="expected text or an object"):
        user_instruction(["a"])


TASK_78 = "retail-78"  # address change, item swap and a cancel (TOOLS.md §4): three writes


@pytest.fixture(scope="module")
def retail():
    return load_source(EvalConfig.build(benchmark="tau2:retail", split="base"))


def play(source: Any, task_id: str, calls: list[dict[str, Any]], answer: str | None = "Done.") -> tuple[float, dict]:
    """Run `calls` through the task's tools in one rollout context, then grade it."""
    task = next(t for t in source.tasks if t.task_id == task_id)
    tools = source.tools_for(task)
    context = ToolContext(task_id=task.task_id, task=task)

    async def go() -> float:
        for c in calls:
            await tools[c["name"]].execute(c.get("arguments") or {}, context)
        return await source.grader(task, answer, context)

    return asyncio.run(go()), context.criteria


def golden(source: Any, task_id: str) -> list[dict[str, Any]]:
    task = next(t for t in source.tasks if t.task_id == task_id)
    return [{"name": a["name"], "arguments": dict(a.get("arguments") or {})} for a in task.answer]


def test_the_golden_actions_pass_and_the_criteria_say_what_was_judged(retail):
    outcome, criteria = play(retail, TASK_78, golden(retail, TASK_78))
    assert outcome == 1.0 and criteria["db"] is True and criteria["actions"] is True
    assert criteria["nl"] is True  # task 78 has no NL assertions: nothing to judge
    with_nl = next(t for t in retail.tasks if t.meta["nl_assertions"])
    outcome, criteria = play(retail, with_nl.task_id, golden(retail, with_nl.task_id))
    assert outcome == 1.0 and criteria["nl"] is None  # no judge model: not judged, never passed silently


def test_skipping_a_write_fails_the_database_check(retail):
    calls = [c for c in golden(retail, TASK_78) if c["name"] != "cancel_pending_order"]
    outcome, criteria = play(retail, TASK_78, calls)
    assert outcome == 0.0 and criteria["db"] is False


def test_writing_another_value_fails(retail):
    calls = golden(retail, TASK_78)
    for c in calls:
        if c["name"] == "cancel_pending_order":
            c["arguments"]["reason"] = "no longer needed"  # the user said "ordered by mistake"
    assert play(retail, TASK_78, calls)[1]["db"] is False
    calls = golden(retail, TASK_78)
    for c in calls:
        if c["name"] == "modify_pending_order_address":
            c["arguments"]["zip"] = "92102"
    assert play(retail, TASK_78, calls)[1]["db"] is False


def test_acting_on_another_order_fails(retail):
    calls = golden(retail, TASK_78)
    other = next(o for o, order in _db()["orders"].items() if order["status"] == "pending" and o != "#W5995614"
                 and o != "#W5056519")
    for c in calls:
        if c["name"] == "cancel_pending_order":
            c["arguments"]["order_id"] = other
    assert play(retail, TASK_78, calls)[1]["db"] is False


def test_reading_everything_and_writing_nothing_fails(retail):
    reads = [c for c in golden(retail, TASK_78) if not retail.tools_for(retail.tasks[0])[c["name"]].writes]
    reads.append({"name": "get_order_details", "arguments": {"order_id": "#W5056519"}})
    outcome, criteria = play(retail, TASK_78, reads)
    assert outcome == 0.0 and criteria["db"] is False


def test_a_rollout_without_an_answer_scores_0_even_with_the_right_writes(retail):
    assert play(retail, TASK_78, golden(retail, TASK_78), answer=None)[0] == 0.0


def test_rollouts_do_not_see_each_others_writes(retail):
    calls = golden(retail, TASK_78)
    first = play(retail, TASK_78, calls)
    second = play(retail, TASK_78, calls)  # would fail if the first rollout's cancel had stuck
    assert first[0] == second[0] == 1.0


def test_the_oracle_replays_golden_actions_end_to_end_and_the_store_keeps_the_criteria(tmp_path: Path):
    store = Store(tmp_path / "t.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", orchestrator="scripted:oracle",
                              tasks=["retail-5", "retail-9", "retail-36"])  # 36 has NL assertions
    (summary,) = run_eval(config, store, Console(quiet=True))
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert len(trajs) == 3 and list(trajs.outcome) == [1.0, 1.0, 1.0]
    for row in trajs.itertuples():
        assert json.loads(row.criteria_json)["db"] is True
    # the run summary says what the accuracy does not rest on
    assert queries.runs_summary_df(store).set_index("run_id").unjudged[summary.run_id] == 1


def test_airline_has_no_database_and_says_so(tmp_path: Path):
    source = load_source(EvalConfig.build(benchmark="tau2:airline", split="base"))
    task = source.tasks[0]
    outcome, criteria = play(source, task.task_id, golden(source, task.task_id))
    assert outcome == 1.0 and criteria == {"db": None, "communicate": None, "actions": True, "nl": None}


def _db() -> dict:
    from lab.benchmarks.tau2_retail_db import load_retail_db

    return load_retail_db()


class Judge:
    """An LLM tool standing in for the judge model: replies with `reply`, records the prompt."""

    spec = SimpleNamespace(name="judge")

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Any:
        from lab.tools.base import Observation

        self.prompts.append(arguments["prompt"])
        return Observation(text=self.reply)


def verdicts(*met: bool) -> str:
    return json.dumps({"results": [{"expectedOutcome": "x", "reasoning": "y", "metExpectation": m} for m in met]})


@pytest.mark.parametrize("reply, expected", [
    (verdicts(True, True), (True, None)),
    (verdicts(True, False), (False, None)),
    ("I think it went fine.", (None, "judge reply is not the asked JSON")),
    (verdicts(), (None, "judge judged 0 of 2 outcomes")),  # tau2 would score an empty list 1.0
])
def test_the_nl_judge_passes_only_a_full_positive_verdict(reply, expected):
    from lab.env.grading import judge_nl

    verdict, problem = asyncio.run(judge_nl(Judge(reply), ["a", "b"], [{"role": "user", "content": "hi"}]))
    assert verdict == expected[0] and (problem or "").startswith(expected[1] or "")


def test_with_a_judge_the_nl_criterion_is_judged_over_the_conversation_and_decides_the_outcome(retail):
    from lab.eval.judged import judged

    task = next(t for t in retail.tasks if t.meta["nl_assertions"] and "NL_ASSERTION" in t.meta["reward_basis"])
    for met, outcome in ((True, 1.0), (False, 0.0)):
        judge = Judge(verdicts(*[met] * len(task.meta["nl_assertions"])))
        graded = type(retail)(**{**retail.__dict__, "grader": judged(retail.grader, judge)})
        got, criteria = play(graded, task.task_id, golden(retail, task.task_id))
        assert (got, criteria["nl"], criteria["db"]) == (outcome, met, True)
        assert task.meta["nl_assertions"][0] in judge.prompts[0]
