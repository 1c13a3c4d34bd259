"""`orchestra runs`, `rescore` and `reprice` as a user runs them: real processes, real exit codes."""

from __future__ import annotations

import json

import pytest

from lab.store import queries
from tests.conftest import orchestra


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
    cheap = json.loads(orchestra("rescore", "run-a", "--preference", "outcome=1,compute=1", "--json",
                                 db=tiny_store.path).stdout)
    gpt5 = json.loads(orchestra("rescore", "run-a", "--preference", "outcome=1,gpt-5=1", "--json",
                                db=tiny_store.path).stdout)
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
        (("rescore", "nope", "--preference", "outcome=1"), "unknown run 'nope'"),
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


# ---------------------------------------------------------------- rescore: groups, filters, --across


def answered_run(make_run, run_id: str, outcomes: dict[str, list[float]], broken: dict | None = None, **kwargs):
    """`make_run` with a final answer on every trajectory, except where `broken[(task, sample)]` says
    "format" (a logged format_error step; format_ok left True so the step is the only evidence) or
    "no_answer" (no final answer, no answer step)."""
    from lab.records import StepRecord

    run, items = make_run(run_id, outcomes, **kwargs)
    fixed = []
    for traj, steps, tokens in items:
        why = (broken or {}).get((traj.task_id, traj.sample_idx))
        traj = traj.model_copy(update={"final_answer": "42"})
        if why == "format":
            steps = [*steps, StepRecord(run_id=run_id, task_id=traj.task_id, sample_idx=traj.sample_idx, turn=1,
                                        call_idx=1, kind="format_error", error="bad JSON")]
        elif why == "no_answer":
            traj = traj.model_copy(update={"final_answer": None, "valid_output": False})
            steps = [s for s in steps if s.kind != "answer"]
        fixed.append((traj, steps, tokens))
    return run, fixed


def test_one_sample_run_is_refused_with_the_way_out(store_of, make_run):
    store = store_of(answered_run(make_run, "single", {"t0": [1.0], "t1": [0.0], "t2": [1.0]}))
    result = orchestra("rescore", "single", "--preference", "outcome=1,latency=1", db=store.path)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for hint in ("one trajectory per GRPO group", "normalises", "--samples N", "--temperature > 0", "--across RUN_B"):
        assert hint in result.stderr, (hint, result.stderr)
    assert len(queries.scorings_df(store, "single")) == 0


def test_filters_and_group_counts_are_applied_and_reported(store_of, make_run):
    # t0: 4 samples, s0 has a format_error step, s1 no final answer -> s2 (failed) and s3 (solved) remain
    # t1: 3 solved samples, P = outcome only -> every reward 0 -> homogeneous
    # t2: one sample (a group of one); t3: its only sample is filtered
    run = answered_run(make_run, "mixed", {"t0": [1.0, 0.0, 0.0, 1.0], "t1": [1.0, 1.0, 1.0], "t2": [1.0], "t3": [1.0]},
                       broken={("t0", 0): "format", ("t0", 1): "no_answer", ("t3", 0): "format"})
    store = store_of(run)
    before = queries.trajectories_df(store, ["mixed"])
    result = orchestra("rescore", "mixed", "--preference", "outcome=1", "--json", db=store.path)
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    assert s["trajectories"] == 9
    assert s["solved"] == int((before.outcome == 1).sum()) == 7      # outcome == 1, whatever the reward
    assert (s["filtered_format"], s["filtered_invalid"]) == (2, 1)
    assert (s["groups"], s["groups_kept"], s["groups_homogeneous"], s["groups_one_member"],
            s["groups_filtered_out"]) == (4, 1, 1, 1, 1)
    scores = queries.scores_df(store, s["scoring_id"]).set_index(["task_id", "sample_idx"])
    for key in [("t0", 0), ("t0", 1), ("t3", 0)]:
        assert (scores.loc[key, "reward"], scores.loc[key, "advantage"],
                bool(scores.loc[key, "keep"])) == (0.0, 0.0, False)
    # the filtered rollouts are out of t0's statistics: two left, rewards 0 and 1, sample std 0.7071
    assert scores.loc[("t0", 3), "advantage"] == pytest.approx(2 ** -0.5)
    assert scores.loc[("t0", 2), "advantage"] == pytest.approx(-(2 ** -0.5))
    assert not scores.loc["t1"].keep.any() and not scores.loc[("t2", 0), "keep"]
    assert s["reward_mean"] == pytest.approx(1 / 6)                   # 6 scored rollouts; only t0 s3 earns 1
    assert queries.trajectories_df(store, ["mixed"]).equals(before)


def test_rescore_table_names_groups_of_one(store_of, make_run):
    store = store_of(answered_run(make_run, "mixed", {"t0": [1.0, 0.0], "t1": [1.0]}))
    result = orchestra("rescore", "mixed", "--preference", "outcome=1,compute=1", db=store.path)
    assert result.returncode == 0, result.stderr
    for text in ("solved", "filtered_format", "groups_homogeneous", "groups_one_member",
                 "1 of 2 groups had one member"):
        assert text in result.stdout, (text, result.stdout)


def test_across_gives_the_hand_computed_preference_score(store_of, make_run):
    # A calls gpt-5 (dear), B qwen3-32b (cheap); t2 is A's only, so it is not scored. Per task, both runs'
    # trajectories are normalised together under P = outcome 1, compute 0.5:
    #   t0: both solved -> outcome column constant (0); B cheaper -> B: 0.5, A: 0
    #   t1: A solved, B failed -> A: outcome 1 + cost 0 (dearer) = 1, B: gated 0
    # so A = (0 + 1) / 2 = 0.5 and B = (0.5 + 0) / 2 = 0.25.
    a = make_run("A", {"t0": [1.0], "t1": [1.0], "t2": [0.0]}, tool="gpt-5")
    b = make_run("B", {"t0": [1.0], "t1": [0.0]}, tool="qwen3-32b")
    store = store_of(a, b)
    before = queries.trajectories_df(store, ["A", "B"])
    result = orchestra("rescore", "A", "--preference", "outcome=1,compute=0.5", "--across", "B", "--json",
                       db=store.path)
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    runs = {r["run_id"]: r for r in s["runs"]}
    assert runs["A"]["preference_score"] == pytest.approx(0.5)
    assert runs["B"]["preference_score"] == pytest.approx(0.25)
    assert (runs["A"]["trajectories"], runs["A"]["tasks"], runs["A"]["solved"]) == (2, 2, 2)
    assert (runs["B"]["trajectories"], runs["B"]["tasks"], runs["B"]["solved"]) == (2, 2, 1)
    for run_id in ("A", "B"):
        (scoring,) = queries.scorings_df(store, run_id).itertuples()
        assert scoring.scoring_id == runs[run_id]["scoring_id"] and "across runs A, B" in scoring.note
    rewards = queries.scores_df(store, runs["B"]["scoring_id"]).set_index("task_id").reward
    assert rewards.to_dict() == pytest.approx({"t0": 0.5, "t1": 0.0})
    assert queries.trajectories_df(store, ["A", "B"]).equals(before)
    table = orchestra("rescore", "A", "--preference", "outcome=1,compute=0.5", "--across", "B", db=store.path)
    assert table.returncode == 0 and "0.2500" in table.stdout and "preference score across A, B" in table.stdout


def test_across_input_errors_are_one_line(store_of, make_run):
    store = store_of(make_run("A", {"t0": [1.0]}), make_run("B", {"t9": [1.0]}))
    for args, message in [
        (("--across", "B"), "share no task"),
        (("--across", "A"), "name at least one run other than"),
        (("--across", "nope"), "unknown run 'nope'"),
    ]:
        result = orchestra("rescore", "A", "--preference", "outcome=1", *args, db=store.path)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert len(queries.scorings_df(store, "A")) == 0


# ---------------------------------------------------------------- reprice: local models


SMOLLM2_TOOL = {"name": "smollm2", "category": "generalist", "description": "Tiny local model.",
                "parameters": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
                "backend": {"kind": "local_llm", "max_new_tokens": 64}}


def local_run(run_id: str, orchestrator: str = "scripted:test", tool: dict | None = None,
              model: str = "smollm2-135m-instruct"):
    """One trajectory: a smollm2 call (turn 0, 2.0 s, free) then an answer; the trajectory took 5.0 s,
    so the orchestrator's own time is 3.0 s, with 700 / 90 orchestrator tokens."""
    from lab.records import RunRecord, StepRecord, TrajectoryRecord

    spec = tool or SMOLLM2_TOOL
    run = RunRecord(run_id=run_id, kind="eval", toolkit_json=json.dumps({"name": "local", "tools": [spec]}),
                    orchestrator=orchestrator)
    steps = [StepRecord(run_id=run_id, task_id="t0", turn=0, tool_name=spec["name"], model=model,
                        input_tokens=120, output_tokens=40, latency_s=2.0),
             StepRecord(run_id=run_id, task_id="t0", turn=1, kind="answer", observation="42")]
    traj = TrajectoryRecord(run_id=run_id, task_id="t0", outcome=1.0, final_answer="42", latency_s=5.0,
                            input_tokens=700, output_tokens=90, tool_counts_json=json.dumps({spec["name"]: 1}))
    return run, [(traj, steps, None)]


def test_reprice_keeps_local_models_local_and_unpriced(store_of, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the table on one line per model, as in a wide terminal
    store = store_of(local_run("tool-run"), local_run("hf-run", orchestrator="hf:smollm2"))
    table = orchestra("reprice", "tool-run", "--pricing", "deepinfra", db=store.path)
    assert table.returncode == 0, table.stderr
    assert "smollm2-135m-instruct" in table.stdout and "local, unpriced" in table.stdout
    result = orchestra("reprice", "hf-run", "--pricing", "deepinfra", "--json", db=store.path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    local = {m["model"] for m in report["models"] if m["priced_by"] == "local, unpriced"}
    assert local == {"smollm2-135m-instruct", "hf:smollm2"}            # the tool and the orchestrator's own tokens
    assert report["new_total_usd"] == report["old_total_usd"] == 0.0
    rate = json.loads(orchestra("reprice", "hf-run", "--pricing", "deepinfra", "--gpu-hour-usd", "3.6", "--json",
                                db=store.path).stdout)
    by_model = {m["model"]: m for m in rate["models"]}
    assert by_model["smollm2-135m-instruct"]["new_cost_usd"] == pytest.approx(2.0 * 3.6 / 3600)   # its 2 s
    assert by_model["hf:smollm2"]["new_cost_usd"] == pytest.approx(3.0 * 3.6 / 3600)             # 5 s - 2 s of tools
    assert by_model["hf:smollm2"]["priced_by"] == "local at $3.6/GPU-hour"
    assert (by_model["hf:smollm2"]["input_tokens"], by_model["hf:smollm2"]["output_tokens"]) == (700, 90)


def test_reprice_recognises_a_local_tool_by_its_kind_and_still_rejects_unknown_models(store_of):
    # A local model under its own id: only the toolkit says it is local.
    custom = {**SMOLLM2_TOOL, "name": "mine", "backend": {"kind": "local_llm", "path": "/models/My-Model"}}
    store = store_of(local_run("custom", tool=custom, model="my-model"),
                     local_run("hosted", tool={**SMOLLM2_TOOL, "name": "x", "model": "acme-1",
                                               "backend": {"kind": "sim", "profile": "gpt-5"}}, model="acme-1"))
    result = orchestra("reprice", "custom", "--pricing", "deepinfra", "--json", db=store.path)
    assert result.returncode == 0, result.stderr
    priced_by = {m["model"]: m["priced_by"] for m in json.loads(result.stdout)["models"]}
    assert priced_by == {"my-model": "local, unpriced", "(tools without a model)": "(no model: unchanged)"}
    result = orchestra("reprice", "hosted", "--pricing", "deepinfra", db=store.path)
    assert result.returncode == 2 and "no price for model(s) acme-1" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    bad = orchestra("reprice", "custom", "--pricing", "deepinfra", "--gpu-hour-usd", "-1", db=store.path)
    assert bad.returncode == 2 and "--gpu-hour-usd must be" in bad.stderr
