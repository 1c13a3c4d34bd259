"""Tests for lab.rescoring.

Rescoring logged runs whose trajectories also called benchmark tools (tau2 domain functions).

Also `rescore_run` with the paper's trajectory filters: a failure never rewarded, a filtered rollout never kept.
"""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.records import RunRecord, StepRecord, TrajectoryRecord
from lab.rescoring import rescore_run
from lab.store import Store, queries


def test_rescore_covers_benchmark_tools_and_keeps_the_threshold(tmp_path, world):
    store = Store(tmp_path / "r.duckdb")
    (summary,) = run_eval(EvalConfig(benchmark="world:bookshop", split="test", orchestrator="scripted:cheapest-first",
                                     limit=4, samples=2), store, Console(quiet=True))
    counted = set().union(*(json.loads(t) for t in queries.trajectories_df(store).tool_counts_json))
    assert any(not name.startswith(("sim:", "local_search", "code_interpreter")) for name in counted)
    strict = rescore_run(store, summary.run_id, "outcome=1,compute=1", std_threshold=10.0).summary()
    loose = rescore_run(store, summary.run_id, "outcome=1,compute=1", std_threshold=0.0).summary()
    assert strict["groups"] == loose["groups"] == 4 and strict["groups_kept"] == 0
    assert loose["groups_kept"] >= strict["groups_kept"]


def test_reprice_includes_the_orchestrators_own_tokens(tmp_path):
    from lab.pricing import PriceTable
    from lab.records import RunRecord, StepRecord, TrajectoryRecord
    from lab.repricing import reprice_steps, with_orchestrator_steps

    store = Store(tmp_path / "o.duckdb")
    run = RunRecord(run_id="o", kind="eval", orchestrator="openai:qwen3-32b@http://127.0.0.1:1/v1")
    own = PriceTable.load().price("qwen3-32b").cost(10_000, 2_000)
    step = StepRecord(run_id="o", task_id="t", turn=0, tool_name="sim:gpt-5", model="gpt-5",
                      input_tokens=100, output_tokens=50, cost_usd=PriceTable.load().price("gpt-5").cost(100, 50))
    traj = TrajectoryRecord(run_id="o", task_id="t", input_tokens=10_000, output_tokens=2_000,
                            cost_usd=own + step.cost_usd)
    store.write_run(run)
    store.write_trajectories([(traj, [step], None)])
    steps = with_orchestrator_steps(queries.steps_df(store, "o"), queries.trajectories_df(store, ["o"]),
                                    run.orchestrator)
    by_model = reprice_steps(steps, PriceTable.load("deepinfra")).set_index("model")
    assert by_model.loc["qwen3-32b", "old_cost_usd"] == pytest.approx(own)
    assert by_model.loc["qwen3-32b", "new_cost_usd"] == pytest.approx((10_000 * 0.10 + 2_000 * 0.28) / 1e6)
    assert by_model.old_cost_usd.sum() == pytest.approx(traj.cost_usd)


def test_a_judges_steps_are_never_the_orchestrators_cost(tmp_path):
    """The judge's step is logged with its tokens, but the trajectory's cost (and so the orchestrator's
    share of it, and the repriced run) leaves it out: it is on `judge_cost_usd` instead."""
    from lab.pricing import PriceTable
    from lab.records import RunRecord, StepRecord, TrajectoryRecord
    from lab.repricing import reprice_steps, with_orchestrator_steps

    store = Store(tmp_path / "j.duckdb")
    run = RunRecord(run_id="j", kind="eval", orchestrator="openai:qwen3-32b@http://127.0.0.1:1/v1")
    prices = PriceTable.load()
    own = prices.price("qwen3-32b").cost(10_000, 2_000)
    judge = StepRecord(run_id="j", task_id="t", turn=1, kind="judge", tool_name="sim:gpt-5", model="gpt-5",
                       input_tokens=300, output_tokens=2_000, cost_usd=prices.price("gpt-5").cost(300, 2_000))
    traj = TrajectoryRecord(run_id="j", task_id="t", input_tokens=10_000, output_tokens=2_000, cost_usd=own,
                            judge_cost_usd=judge.cost_usd, exact_correct=False, judge_correct=True, outcome=1.0)
    store.write_run(run)
    store.write_trajectories([(traj, [judge], None)])
    steps = with_orchestrator_steps(queries.steps_df(store, "j"), queries.trajectories_df(store, ["j"]),
                                    run.orchestrator)
    assert list(steps.tool_name) == ["(orchestrator)"] and steps.cost_usd.sum() == pytest.approx(own)
    assert reprice_steps(steps, PriceTable.load("deepinfra")).model.tolist() == ["qwen3-32b"]


# ---------------------------------------------------------------- local models in repricing


SMOLLM2 = {"name": "smollm2", "category": "generalist", "description": "Tiny local model.",
           "parameters": {"type": "object", "properties": {"prompt": {"type": "string"}}},
           "backend": {"kind": "local_llm", "max_new_tokens": 64}}


def _local_store(tmp_path, orchestrator: str, tools: list[dict], model: str = "smollm2-135m-instruct") -> Store:
    """Run "L": one trajectory (5 s, 700 / 90 orchestrator tokens) calling tools[0] once (2 s)."""
    from lab.records import RunRecord, StepRecord, TrajectoryRecord

    store = Store(tmp_path / "local.duckdb")
    store.write_run(RunRecord(run_id="L", kind="eval", orchestrator=orchestrator,
                              toolkit_json=json.dumps({"name": "local", "tools": tools})))
    steps = [StepRecord(run_id="L", task_id="t0", turn=0, tool_name=tools[0]["name"], model=model,
                        input_tokens=120, output_tokens=40, latency_s=2.0),
             StepRecord(run_id="L", task_id="t0", turn=1, kind="answer", observation="42")]
    traj = TrajectoryRecord(run_id="L", task_id="t0", outcome=1.0, final_answer="42", latency_s=5.0,
                            input_tokens=700, output_tokens=90, tool_counts_json=json.dumps({tools[0]["name"]: 1}))
    store.write_trajectories([(traj, steps, None)])
    store.finish_run("L")
    return store


def test_report_pricing_path_treats_local_models_as_local(tmp_path):
    """`lab.report.api._reprice` calls with_orchestrator_steps without a toolkit and step_costs_under:
    SmolLM2's id and an hf: orchestrator are recognised from the model ids alone."""
    from lab.report.api import load_report

    store = _local_store(tmp_path, "hf:smollm2", [SMOLLM2])
    (row,) = load_report(store, ["L"], pricing="deepinfra", n_resamples=10).reprice.itertuples()
    assert row.repriced_total_usd == row.logged_total_usd == 0.0


def test_local_steps_keep_their_cost_or_pay_gpu_time(tmp_path):
    from lab.pricing import PriceTable
    from lab.repricing import LOCAL_UNPRICED, reprice_steps, step_costs_under, with_orchestrator_steps

    store = _local_store(tmp_path, "hf:/models/qwen3-8b", [SMOLLM2])
    run = queries.run(store, "L")
    steps = with_orchestrator_steps(queries.steps_df(store, "L"), queries.trajectories_df(store, ["L"]),
                                    run.orchestrator,
                                    toolkit_json=run.toolkit_json)
    own = steps[steps.kind == "orchestrator"].iloc[0]
    # a local checkpoint named like a hosted model is still local: it ran here, nobody billed tokens
    assert own.model == "hf:/models/qwen3-8b" and own.local and own.latency_s == pytest.approx(3.0)
    assert step_costs_under(steps, PriceTable.load("deepinfra")).tolist() == [0.0, 0.0, 0.0]
    assert step_costs_under(steps, PriceTable.load("deepinfra"),
                            gpu_hour_usd=7.2).tolist() == pytest.approx([0.004, 0.0, 0.006])
    by = reprice_steps(steps, PriceTable.load("deepinfra")).set_index("model").priced_by
    assert by["smollm2-135m-instruct"] == by["hf:/models/qwen3-8b"] == LOCAL_UNPRICED


def test_locality_comes_from_the_toolkit_first():
    from lab.repricing import ToolkitLocality, local_mask

    hosted_smol = {**SMOLLM2, "name": "remote", "model": "smollm2-135m-instruct", "backend": {"kind": "openai"}}
    paper = {"name": "answer", "backend": {"kind": "paper"}, "slots": {
        "answer-1": {"name": "sim:gpt-5", "model": "gpt-5", "backend": {"kind": "sim"}},
        "answer-2": {"name": "tiny", "backend": {"kind": "local_llm", "path": "/m/Tiny-LM.gguf"}}}}
    kit = json.dumps({"tools": [SMOLLM2, hosted_smol, paper]})
    locality = ToolkitLocality.of(kit)
    assert locality.local_tools == {"smollm2"} and locality.model_tools == {"remote"}
    assert {"smollm2-135m-instruct", "tiny-lm"} <= locality.local_ids
    steps = pd.DataFrame({"tool_name": ["smollm2", "remote", "answer", "answer", "other", None],
                          "model": ["whatever", "smollm2-135m-instruct", "tiny-lm", "gpt-5", "hf:x", None]})
    assert local_mask(steps, kit).tolist() == [True, False, True, False, True, False]
    assert local_mask(steps).tolist() == [False, True, False, False, True, False]  # no toolkit: ids only


def test_smollm2_id_is_the_one_the_tool_records():
    from lab.repricing import is_local_model
    from lab.tools.local_llm import SMOLLM2_MODEL_ID

    assert is_local_model(SMOLLM2_MODEL_ID) and is_local_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    assert not is_local_model("qwen3-8b") and not is_local_model(None)


broken = st.sampled_from(["ok", "format_flag", "format_step", "no_answer", "blank_answer"])
_run_ids = itertools.count()


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example (a new run each): opening a DuckDB file per example is the slow part."""
    return Store(tmp_path_factory.mktemp("filters") / "p.duckdb")


@settings(max_examples=10, deadline=None)
@given(data=st.lists(st.tuples(st.sampled_from(["t0", "t1"]), st.sampled_from([0.0, 1.0]), st.floats(0, 1), broken),
                     min_size=2, max_size=8))
def test_rescore_run_never_rewards_failures_or_keeps_filtered_rollouts(shared_store, data):
    run_id = f"p{next(_run_ids)}"
    why: dict[tuple[str, int], str] = {}
    samples: dict[str, int] = {}
    items = []
    for task, outcome, cost, kind in data:
        sample = samples[task] = samples.get(task, -1) + 1
        answer = {"no_answer": None, "blank_answer": "  "}.get(kind, "42")
        traj = TrajectoryRecord(run_id=run_id, task_id=task, sample_idx=sample, group_id=task, outcome=outcome,
                                final_answer=answer, valid_output=answer is not None, format_ok=kind != "format_flag",
                                cost_usd=cost, latency_s=1.0, tool_counts_json=json.dumps({"search": 1}))
        steps = [StepRecord(run_id=run_id, task_id=task, sample_idx=sample, turn=0, tool_name="search")]
        if kind == "format_step":
            steps.append(StepRecord(run_id=run_id, task_id=task, sample_idx=sample, turn=1, kind="format_error"))
        items.append((traj, steps, None))
        why[(task, sample)] = kind
    if len(samples) == len(data):                # every group of one: refused (tested in the CLI tests)
        return
    store = shared_store
    store.write_run(RunRecord(run_id=run_id, kind="eval", toolkit_json=json.dumps({"tools": [{"name": "search"}]})))
    store.write_trajectories(items)
    result = rescore_run(store, run_id, "outcome=1,compute=1")
    scores = queries.scores_df(store, result.scoring.scoring_id)
    logged = queries.trajectories_df(store, [run_id]).set_index(["task_id", "sample_idx"])
    summary = result.summary()
    assert summary["filtered_format"] == sum(k in ("format_flag", "format_step") for k in why.values())
    assert summary["filtered_invalid"] == sum(k in ("no_answer", "blank_answer") for k in why.values())
    assert summary["solved"] == int((logged.outcome == 1).sum())
    for row in scores.itertuples():
        if logged.loc[(row.task_id, row.sample_idx), "outcome"] == 0:
            assert row.reward == 0
        if why[(row.task_id, row.sample_idx)] != "ok":
            assert row.advantage == 0 and not row.keep and row.reward == 0
