"""Tests for lab.eval.judged.

`orchestra eval --judge TOOL` as a user runs it: accuracy by exact match and by judge, the judge's cost
apart from the orchestrator's, a bad judge refused before any work, a failing judge never a wrong answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lab.store import Store, queries
from lab.testing.openai_server import OpenAICompatServer
from lab.toolkit import TOOLKITS_DIR

pytestmark = pytest.mark.usefixtures("world")


def orchestra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", *args], capture_output=True,
                          text=True, timeout=600, env={**__import__("os").environ, "COLUMNS": "250"})


def eval_args(family: str, db: Path, *extra: str) -> list[str]:
    return ["eval", "--benchmark", family, "--split", "test", "--orchestrator", "scripted:cheapest-first",
            "--toolkit", "world-offline", "--db", str(db), *extra]


@pytest.mark.parametrize("family", ["world:frames", "world:hle"])
def test_a_judged_run_reports_accuracy_both_ways_and_the_judges_cost_apart(tmp_path: Path, family: str):
    db = tmp_path / "judged.duckdb"
    result = orchestra(*eval_args(family, db, "--limit", "12", "--judge", "sim:gpt-5"))
    assert result.returncode == 0, result.stderr
    assert "acc. exact" in result.stdout and "acc. judge" in result.stdout and "judge $/rollout" in result.stdout
    assert "judged by sim:gpt-5 (simulated)" in result.stdout
    store = Store(db)
    trajs = queries.trajectories_df(store)
    steps = queries.steps_df(store, trajs.run_id.iloc[0])
    judge_steps, own_steps = steps[steps.kind == "judge"], steps[steps.kind != "judge"]
    by_task = trajs.set_index("task_id")
    # the judge is asked exactly when exact match failed, once, and its verdict is the outcome
    assert set(judge_steps.task_id) == set(trajs.task_id[~trajs.exact_correct.astype(bool)]) != set()
    assert (judge_steps.groupby("task_id").size() == 1).all() and judge_steps.simulated.all()
    assert (trajs.judge_correct.astype(bool) | ~trajs.exact_correct.astype(bool)).all()
    assert (trajs.outcome == trajs.judge_correct.astype(float)).all()
    # its cost is its own, and never in the rollouts' cost (the scripted orchestrator spends nothing itself)
    assert (by_task.judge_cost_usd.sum() == pytest.approx(judge_steps.cost_usd.sum())
            and judge_steps.cost_usd.gt(0).all())
    assert by_task.cost_usd.sum() == pytest.approx(own_steps.cost_usd.sum())
    run_id = trajs.run_id.iloc[0]
    repriced = json.loads(orchestra("reprice", run_id, "--pricing", "default", "--db", str(db), "--json").stdout)
    assert repriced["old_total_usd"] == pytest.approx(by_task.cost_usd.sum())

    plain = orchestra(*eval_args(family, db, "--limit", "12", "--json"))  # the same tasks without a judge
    unjudged = json.loads(plain.stdout)[0]
    assert unjudged["accuracy_judge"] is None and unjudged["judge_cost_usd"] == 0
    assert unjudged["accuracy_exact"] == pytest.approx(trajs.exact_correct.astype(float).mean())
    report = orchestra("report", run_id, unjudged["run_id"], "--db", str(db))
    assert report.returncode == 0, report.stderr
    assert "acc. exact" in report.stdout and "judge ¢/task" in report.stdout
    assert "judged by sim:gpt-5 (simulated)" in report.stdout


@pytest.mark.parametrize("judge, message", [
    ("gpt-9", "--judge 'gpt-9': not an LLM tool of toolkit 'world-offline'"),
    ("local_search", "--judge 'local_search': not an LLM tool"),
])
def test_a_judge_that_is_not_an_llm_tool_is_one_line_exit_2_and_creates_nothing(tmp_path: Path, judge: str,
                                                                                message: str):
    db = tmp_path / "never.duckdb"
    result = orchestra(*eval_args("world:frames", db, "--limit", "2", "--judge", judge))
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not db.exists()


def test_a_simulated_judge_of_a_real_benchmark_is_refused(tmp_path: Path):
    db = tmp_path / "never.duckdb"
    result = orchestra(*eval_args("hle", db, "--limit", "2", "--judge", "sim:gpt-5"))
    assert result.returncode == 2 and "a simulated judge knows only the offline world's answers" in result.stderr
    assert not db.exists()


def test_a_failing_judge_is_no_verdict_not_a_wrong_answer_and_the_same_command_retries_it(tmp_path: Path):
    db = tmp_path / "flaky.duckdb"
    with OpenAICompatServer(reply="<correct>False</correct>", usage=(300, 20)) as server:
        kit = yaml.safe_load((TOOLKITS_DIR / "world-offline.yaml").read_text())
        kit["tools"].append({"name": "judge", "category": "generalist", "model": "gpt-5",
                             "description": "GPT-5 as judge.",
                             "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5",
                                         "max_retries": 0, "timeout_s": 10}})
        (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
        args = [*eval_args("world:frames", db, "--limit", "8", "--judge", "judge", "--json"), "--toolkit",
                str(tmp_path / "kit.yaml")]
        server.behaviour.fail_first, server.behaviour.fail_status = 10_000, 500
        down = orchestra(*args)
        assert down.returncode == 1, down.stderr
        (row,) = json.loads(down.stdout)
        store = Store(db)
        written = queries.trajectories_df(store)
        # only answers exact match settled were graded; the others have no grade, so they are not stored
        assert row["no_verdict_rollouts"] == 8 - len(written) > 0 and written.exact_correct.all()
        assert all("no verdict: judge 'judge' failed" in e for e in row["errors_seen"])
        assert queries.run(store, row["run_id"]).status == "interrupted"
        assert (queries.steps_df(store, row["run_id"]).kind != "judge").all()

        server.behaviour.fail_first = 0
        up = orchestra(*args)
        assert up.returncode == 0, up.stderr
    trajs = queries.trajectories_df(store)
    retried = trajs[~trajs.task_id.isin(written.task_id)]
    assert len(trajs) == 8 and len(retried) == row["no_verdict_rollouts"]
    assert (~retried.judge_correct.astype(bool)).all() and (retried.judge_cost_usd > 0).all()
    judge_steps = queries.steps_df(store, row["run_id"]).query("kind == 'judge'")
    assert set(judge_steps.task_id) == set(retried.task_id) and not judge_steps.simulated.any()
    assert (judge_steps.input_tokens == 300).all() and (judge_steps.model == "gpt-5").all()


def test_a_released_run_asks_the_judge_with_the_released_prompt_and_lab_on_request(tmp_path: Path):
    """Under the round protocol (released experts) the judge reads the released evaluation's prompt; with
    `--judge-prompt lab` the lab's; the simulated judge grades either."""
    kit = yaml.safe_load((TOOLKITS_DIR / "paper-small.yaml").read_text())
    kit["tools"].append({"name": "sim:gpt-5", "backend": {"kind": "sim", "profile": "gpt-5"}})
    (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
    prompts = {}
    for choice in ("", "lab"):
        db = tmp_path / f"judged-{choice or 'default'}.duckdb"
        args = ["eval", "--benchmark", "world:hle", "--split", "test", "--orchestrator", "scripted:cheapest-first",
                "--toolkit", str(tmp_path / "kit.yaml"), "--protocol", "rounds", "--limit", "8", "--judge",
                "sim:gpt-5", "--db", str(db), *(["--judge-prompt", choice] if choice else [])]
        result = orchestra(*args)
        assert result.returncode == 0, result.stderr[-2000:]
        store = Store(db)
        run_id = queries.trajectories_df(store).run_id.iloc[0]
        steps = queries.steps_df(store, run_id).query("kind == 'judge'")
        assert len(steps), "no answer went to the judge"
        prompts[choice] = [json.loads(a)["prompt"] for a in steps.arguments_json]
    assert all(p.startswith("Question: ") and "\n\nAssume that the reference answer is correct. Output "
               "<correct>True</correct> if the student answer matches" in p for p in prompts[""])
    assert all("<student_answer>" in p and "Reply with exactly one verdict tag" in p for p in prompts["lab"])
