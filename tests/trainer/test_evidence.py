"""`orchestra train evidence` on tiny models: the start and the trained model answer the same tasks and
samples under every training instruction and the held-out pairs, each comparison is made pair by pair
from logged runs, and bad input is refused in one line before any model runs."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from rich.console import Console

from lab.errors import LabInputError
from lab.preference import logged_instruction, preference_pairs
from lab.report.figures import paired_deltas_figure
from lab.report.metrics.curve import CurveScale
from lab.store import Store, queries
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.curve import curve_instructions
from trainer.evidence import (
    HELD_OUT_WORDINGS,
    Evidence,
    evidence_plan,
    gather_evidence,
    print_evidence,
)
from trainer.models import resolve_model
from trainer.sft import warm_start_dir


def tiny_config(tmp_path, **overrides) -> OrchestraGRPOConfig:
    values = dict(output_dir=str(tmp_path / "out"), run_name="evidence-test", model="tiny-qwen3", tiny_model=TINY_MODEL,
                  toolkit="paper-small", families=["frames", "hle"], max_turns=2, turn_max_new_tokens=8,
                  observation_chars=100, report_to="none", seed=0)
    return OrchestraGRPOConfig(**{**values, **overrides})


@pytest.mark.slow
def test_a_trained_model_identical_to_its_start_differs_by_nothing_pair_by_pair(tmp_path, world):
    """No warm start: the start is the base model; the 'trained' model is a copy of it. Both draw the
    same random numbers for sample k of a task, so every rollout repeats its partner (its answer, turns,
    tokens and calls), while a task's samples differ: that holds only if runs are paired by task and
    sample. The deltas that do not weigh wall time are then 0 with a zero-width CI."""
    config = tiny_config(tmp_path)
    start = resolve_model(config.model, config.tiny_model, config.seed)
    shutil.copytree(start, config.output_dir)
    store = Store(tmp_path / "store.duckdb")
    console = Console(record=True, width=200)
    evidence = gather_evidence(config, store, console, tasks=2, samples=2)

    instructions = [c.label for c in curve_instructions(config)] + ["held-out"]
    assert list(dict.fromkeys(evidence.deltas.instruction)) == instructions
    assert len(evidence.run_ids) == 2 * len(instructions) + 4 and len(set(evidence.run_ids.values())) == len(
        evidence.run_ids)
    runs = queries.runs_df(store).set_index("run_id").loc[list(evidence.run_ids.values())]
    assert (runs.kind == "eval").all() and (runs.status == "finished").all()
    trajs = queries.trajectories_df(store, list(evidence.run_ids.values()))
    assert (trajs.groupby(["run_id", "task_id"]).size() == 2).all() and trajs.task_id.nunique() == 2
    configs = {run_id: json.loads(text) for run_id, text in runs.config_json.items()}
    assert {c["temperature"] for c in configs.values()} == {config.temperature}
    assert {c["orchestrator"] for name, c in ((n, configs[r]) for n, r in evidence.run_ids.items())
            if name.startswith("start")} == {f"hf:{start}"}
    held_out = {p.instruction for p in preference_pairs("eval")}
    for name, run_id in evidence.run_ids.items():   # each run showed the instruction it is named for
        shown = {logged_instruction(configs[run_id], t) for t in trajs[trajs.run_id == run_id].task_id}
        label = name.split(" | ")[1]
        assert shown <= held_out if "held-out" in label else shown == {label}

    # the rollouts themselves repeat their partners: what the sampled tokens decide is the same for sample k
    # of a task under both models, while two samples of one task differ (so this is pairing, not a policy
    # that always writes the same thing)
    decided = ["final_answer", "n_turns", "output_tokens", "tool_counts_json"]
    for instruction in instructions:
        start_run, trained_run = (evidence.run_ids[f"{role} | {instruction}"] for role in ("start", "trained"))
        pairs = trajs[trajs.run_id == start_run].merge(trajs[trajs.run_id == trained_run],
                                                       on=["task_id", "sample_idx"], suffixes=("_s", "_t"))
        assert len(pairs) == 4
        for column in decided:
            assert (pairs[f"{column}_s"] == pairs[f"{column}_t"]).all(), (instruction, column)
    for run_id in evidence.run_ids.values():   # samples of a task differ within a run
        differ = trajs[trajs.run_id == run_id].groupby("task_id")[["output_tokens", "final_answer"]].nunique()
        assert (differ > 1).any(axis=None), run_id

    deltas = evidence.deltas
    assert set(deltas.measure) == {"accuracy", "cost", "latency", "U"} and (deltas.n_tasks == 2).all()
    # latency adds the wall time of local tools (search, the code sandbox) to the modelled decode time, so
    # it differs between two identical rollouts by however busy the machine was: no latency figure is exact
    untimed = {c.label for c in curve_instructions(config) if "latency" not in c.preference}
    exact = deltas[(deltas.measure == "accuracy") | ((deltas.measure == "U") & deltas.instruction.isin(untimed))]
    assert len(exact) == len(instructions) + len(untimed)
    assert (exact[["delta", "ci_low", "ci_high", "half_width"]].abs() < 1e-9).all().all()
    # the headline: a model identical to its start follows each instruction exactly as its start does, so
    # trained - start of the contrast is 0 (cost and accuracy do not depend on wall time), in both wordings
    contrasts = evidence.contrasts
    assert {"training wording", "held-out wording"} <= set(contrasts.wording) and (contrasts.n_tasks == 2).all()
    spent = contrasts[contrasts.pair == "cost-saving vs accuracy-only"]
    assert set(spent.measure) == {"log cost_usd ratio", "accuracy"}
    assert (spent[["delta", "ci_low", "ci_high"]].abs() < 1e-9).all().all()
    raised = evidence.checks[evidence.checks.check.str.startswith("instruction following raised, cost-saving")]
    assert len(raised) == 2 and set(raised.verdict) == {"not shown"}
    assert (evidence.tool_shares[["delta", "ci_low", "ci_high"]].abs() < 1e-9).all().all()
    headline = evidence.headline()
    assert len(headline) == 2 and all("trained - start +0.000 [+0.000, +0.000] (not shown" in line for line in headline)
    assert set(evidence.checks.model) <= {"trained", "start", "trained - start"} and len(evidence.checks) >= 3
    assert evidence.checks.check.str.contains("accuracy not lower").any()

    print_evidence(evidence, console)
    text = console.export_text()
    assert "2 tasks x 2 samples" in text and "Behaviour checks" in text and "Get the answer right" in text
    assert text.index("Instruction following") < text.index("trained - start (2 tasks)")   # the headline first
    assert "{" not in text and evidence.run_ids["trained | held-out"] in text   # tables, no raw dicts
    lines = evidence.lines()
    assert any("accuracy +0.000 [+0.000, +0.000]" in line for line in lines)
    assert len(paired_deltas_figure(evidence.deltas).data) == 4


def test_a_subset_of_instructions_keeps_the_tasks_and_samples(tmp_path, world):
    config = tiny_config(tmp_path, warm_start={"orchestrators": ["scripted:random"]})
    for folder in (tmp_path / "out", warm_start_dir(config)):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("{}")
    plan = evidence_plan(config, tasks=5, samples=3, instructions=["held-out"])
    assert [c.label for c in plan.instructions] == ["held-out"] and not plan.held_out_wordings
    assert plan.start == warm_start_dir(config) and len(plan.task_ids) == 5 and plan.samples == 3
    whole = evidence_plan(config, samples=3)
    assert whole.held_out_wordings and plan.task_ids == whole.task_ids[:5] and whole.runs == 2 * 7 + 4
    assert evidence_plan(config, 5, 3, ["held-out", HELD_OUT_WORDINGS]).runs == 6
    with pytest.raises(LabInputError, match="at least one instruction both models"):
        evidence_plan(config, 5, 3, [HELD_OUT_WORDINGS])


@pytest.mark.parametrize("overrides, kwargs, folders, message", [
    ({}, {"samples": 0}, ("out", "out/warm-start"), "at least one rollout"),
    ({"temperature": 0.0}, {"samples": 2}, ("out", "out/warm-start"), "greedy samples"),
    ({}, {"samples": 2}, ("out/warm-start",), "no trained model"),
    ({}, {"samples": 2}, ("out",), "no start model"),
    ({}, {"samples": 2, "tasks": 10_000}, ("out", "out/warm-start"), "has 145 tasks"),
    ({}, {"samples": 2, "tasks": 0}, ("out", "out/warm-start"), "at least one task"),
    ({}, {"samples": 2, "instructions": ["be nice"]}, ("out", "out/warm-start"), "not one of"),
])
def test_bad_input_is_one_line_before_any_model_runs(tmp_path, world, overrides, kwargs, folders, message):
    config = tiny_config(tmp_path, warm_start={"orchestrators": ["scripted:random"]}, **overrides)
    for folder in folders:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "config.json").write_text("{}")
    with pytest.raises(LabInputError, match=message) as info:
        evidence_plan(config, **kwargs)
    assert "\n" not in str(info.value)


def test_greedy_decoding_is_one_sample(tmp_path, world):
    config = tiny_config(tmp_path, temperature=0.0)
    shutil.copytree(resolve_model(config.model, config.tiny_model, config.seed), config.output_dir)
    assert evidence_plan(config, tasks=1, samples=1).samples == 1


def test_the_command_refuses_a_missing_model_with_exit_2(tmp_path, monkeypatch, capsys):
    """In process (the CLI's own entry point, its error handling included), so no interpreter start-up."""
    from orchestra.cli import main

    config = tmp_path / "train.yaml"
    config.write_text(f"output_dir: {tmp_path / 'nothing'}\nwarm_start: {{orchestrators: [scripted:random]}}\n")
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr("sys.argv", ["orchestra", "train", "evidence", "--config", str(config),
                                     "--db", str(tmp_path / "store.duckdb")])
    with pytest.raises(SystemExit) as exited:
        main()
    error = capsys.readouterr().err
    assert exited.value.code == 2 and "no trained model" in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "store.duckdb").exists()   # refused before the store was opened


def test_a_missed_target_is_said_plainly_with_the_size_it_needs():
    deltas = pd.DataFrame({"instruction": ["a", "a", "b", "b"], "measure": ["accuracy", "cost"] * 2,
                           "half_width": [0.03, 0.06, 0.08, 0.12]})
    power = pd.DataFrame({"instruction": ["a", "a", "b", "b"], "measure": ["accuracy", "cost"] * 2,
                          "needed_tasks": [40, 90, 145, float("nan")], "needed_samples": [1, 2, 6, float("nan")]})
    evidence = Evidence(deltas=deltas, contrasts=pd.DataFrame(), tool_shares=pd.DataFrame(), checks=pd.DataFrame(),
                        power=power, scale=CurveScale(0.01, 60.0, "test"), run_ids={}, start="s", trained="t",
                        tasks=145, samples=4, temperature=1.0)
    accuracy, cost = evidence.target_lines()
    assert accuracy == ("accuracy: target +-0.050 NOT reached under 1 of 2 instructions (widest +-0.080, 'b'); from "
                        "this run's variance it needs about 145 tasks x 6 samples")
    assert cost.startswith("cost: target +-10% NOT reached under 1 of 2") and "no size within" in cost
    evidence.deltas = deltas.assign(half_width=0.01)
    assert evidence.target_lines()[1] == "cost: target +-10% reached under all 2 instructions (widest +-1%, 'a')"


@pytest.mark.parametrize("cost, accuracy, expected", [
    ((-0.35, -0.42, -0.28), (-0.01, -0.04, +0.02), "holds"),      # 35% cheaper, a point of accuracy
    ((-0.80, -0.85, -0.75), (-0.20, -0.26, -0.14), "fails"),      # cheap by failing: the saving does not buy it
    ((-0.35, -0.42, -0.28), (-0.04, -0.07, -0.01), "not shown"),  # 4 points given up, but the CI reaches 3
    ((-0.10, -0.16, -0.04), (+0.02, -0.01, +0.05), "fails"),      # cheaper, but the whole CI short of 20%
    ((-0.25, -0.40, -0.10), (+0.00, -0.03, +0.03), "not shown"),  # 25%, but the CI reaches down to 10%
    ((+0.30, +0.20, +0.40), (+0.05, +0.02, +0.08), "fails"),      # dearer
])
def test_cheaper_than_the_start_needs_the_saving_and_the_accuracy(cost, accuracy, expected):
    """Trained vs start under the cost-saving instruction: at least 20% cheaper (CI) for at most 3 points of
    accuracy; a model that got cheap by no longer solving does not pass."""
    from trainer.evidence import behaviour_checks

    label = "Be accurate but keep the bill as low as you can."
    columns = ["instruction", "measure", "start", "trained", "delta", "ci_low", "ci_high"]
    deltas = pd.DataFrame([[label, "cost", 2.0, 2.0 * (1 + cost[0]), *cost],
                           [label, "accuracy", 0.4, 0.4 + accuracy[0], *accuracy]], columns=columns)
    plan = type("Plan", (), {"instructions": [type("I", (), {"label": label, "preference": "outcome=1,compute=1"})()],
                             "held_out_wordings": False})()
    checks = behaviour_checks(pd.DataFrame(), {}, plan, deltas, {"accuracy": 0.05, "cost": 0.10})
    (row,) = checks[checks.check.str.startswith("saving against the start")].itertuples()
    assert row.verdict == expected and row.value == pytest.approx(-cost[0]), row.detail
