"""`orchestra runs`, `rescore` and `reprice` as a user runs them: real processes, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

from lab.store import queries


def orchestra(*args: str, db=None) -> subprocess.CompletedProcess:
    extra = ["--db", str(db)] if db is not None else []
    return subprocess.run([sys.executable, "-c", "from lab.cli import main; main()", *args, *extra],
                          capture_output=True, text=True, timeout=120)


def test_help_lists_the_commands():
    result = orchestra("--help")
    assert result.returncode == 0
    for command in ("runs", "rescore", "reprice"):
        assert command in result.stdout


def test_runs_json_reports_accuracy_and_cost(tiny_store):
    result = orchestra("runs", "--json", db=tiny_store.path)
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)
    trajs = queries.trajectories_df(tiny_store, ["run-a"])
    assert run["run_id"] == "run-a" and run["trajectories"] == 8
    assert abs(run["accuracy"] - trajs.outcome.mean()) < 1e-12
    assert abs(run["cost_usd"] - trajs.cost_usd.sum()) < 1e-12


def test_rescore_stores_a_new_scoring_and_keeps_the_log(tiny_store):
    before = queries.trajectories_df(tiny_store, ["run-a"])
    cheap = json.loads(orchestra("rescore", "run-a", "--preference", "outcome=1,compute=1", "--json", db=tiny_store.path).stdout)
    gpt5 = json.loads(orchestra("rescore", "run-a", "--preference", "outcome=1,gpt-5=1", "--json", db=tiny_store.path).stdout)
    assert cheap["scoring_id"] != gpt5["scoring_id"]
    assert len(queries.scorings_df(tiny_store, "run-a")) == 2
    after = queries.trajectories_df(tiny_store, ["run-a"])
    assert before.equals(after)  # nothing logged was overwritten
    cheap_scores = queries.scores_df(tiny_store, cheap["scoring_id"]).set_index(["task_id", "sample_idx"])
    gpt5_scores = queries.scores_df(tiny_store, gpt5["scoring_id"]).set_index(["task_id", "sample_idx"])
    # sample 1 (qwen3-32b, solved) is the cheapest solved rollout of t0; sample 0 used gpt-5
    assert cheap_scores.loc[("t0", 1), "reward"] > cheap_scores.loc[("t0", 0), "reward"]
    assert gpt5_scores.loc[("t0", 0), "reward"] > gpt5_scores.loc[("t0", 1), "reward"]
    assert cheap_scores.loc[("t0", 2), "reward"] == 0  # failed rollouts earn nothing


def test_reprice_recomputes_costs_from_tokens_without_touching_the_log(tiny_store):
    result = orchestra("reprice", "run-a", "--pricing", "deepinfra", "--json", db=tiny_store.path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    models = {m["model"]: m for m in report["models"]}
    steps = queries.steps_df(tiny_store, "run-a")
    qwen = steps[steps.model == "qwen3-32b"]
    expected_qwen = (qwen.input_tokens.sum() * 0.10 + qwen.output_tokens.sum() * 0.28) / 1e6  # DeepInfra Qwen3-32B
    assert abs(models["qwen3-32b"]["new_cost_usd"] - expected_qwen) < 1e-12
    assert abs(models["qwen3-32b"]["old_cost_usd"] - qwen.cost_usd.sum()) < 1e-12
    assert models["gpt-5"]["priced_by"] == "openai"  # closed models keep their vendor's price
    assert abs(report["old_total_usd"] - steps.cost_usd.sum()) < 1e-12
    assert queries.steps_df(tiny_store, "run-a").equals(steps)


def test_bad_input_is_one_line_and_exit_2(tiny_store):
    cases = [
        (("rescore", "nope", "--preference", "outcome=1"), "unknown run id 'nope'"),
        (("rescore", "run-a", "--preference", "outcome=2"), "'outcome' must be in [0, 1]"),
        (("rescore", "run-a", "--preference", "speed=1"), "unknown entry 'speed'"),
        (("reprice", "run-a", "--pricing", "acme"), "unknown pricing provider 'acme'"),
        (("reprice", "run-a", "--pricing", "mistral"), "no price for model(s) qwen3-32b"),
    ]
    for args, message in cases:
        result = orchestra(*args, db=tiny_store.path)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert len(queries.scorings_df(tiny_store, "run-a")) == 0  # nothing half-written
