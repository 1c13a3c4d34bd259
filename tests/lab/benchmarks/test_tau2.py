"""Tests for lab.benchmarks.tau2: the real retail/airline domains, splits, the domain object, bad files.

How a run of `tau2:retail` is executed and graded is `lab.benchmarks.tau2_env`'s (`test_tau2_env.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.benchmarks.tau2 import load_tau2, load_tau2_domain, user_instruction
from lab.benchmarks.tau2_folders import available_domains
from lab.errors import LabInputError

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
