"""`orchestra train evidence` on tiny models: the start and the trained model answer the same tasks and
samples under every training instruction and the held-out pairs, each comparison is made pair by pair
from logged runs, and bad input is refused in one line before any model runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from lab.errors import LabInputError
from lab.preference import logged_instruction, preference_pairs
from lab.report.figures import paired_deltas_figure
from lab.report.metrics.curve import CurveScale
from lab.store import Store, queries
from lab.toolkit import load_toolkit
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.curve import CurveInstruction, curve_instructions
from trainer.evidence import (
    HELD_OUT_WORDINGS,
    Evidence,
    EvidencePlan,
    evidence_plan,
    family_table,
    gather_evidence,
    pooled_contrasts,
    print_evidence,
)
from trainer.models import resolve_model
from trainer.sft import warm_start_dir
from trainer.unseen import HELD_OUT_PRICES, unseen_settings


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
    evidence = gather_evidence(config, store, console, tasks=2, samples=2, baselines=False)

    instructions = [c.label for c in curve_instructions(config)] + ["held-out"]
    # the cost pair under prices and a tool subset training never drew (`trainer.unseen`)
    prices, tools = unseen_settings(config)
    pair = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]
    unseen = {setting.label(label): label for setting in (prices, tools) for label in pair}
    assert list(dict.fromkeys(evidence.deltas.instruction)) == instructions + list(unseen)
    assert len(evidence.run_ids) == 2 * len(instructions) + 4 + 8 and len(set(evidence.run_ids.values())) == len(
        evidence.run_ids)
    runs = queries.runs_df(store).set_index("run_id").loc[list(evidence.run_ids.values())]
    logged = store._read("SELECT run_id, pricing, toolkit_json FROM runs").set_index("run_id")
    by_name = {name: logged.loc[run_id] for name, run_id in evidence.run_ids.items()}
    assert {name.split(" | ")[1] for name, run in by_name.items() if run.pricing == config.held_out_pricing} == {
        prices.label(label) for label in pair}
    (removed,) = set(load_toolkit(config.toolkit).feature_names) - set(tools.features)
    offered = {name: f'"{removed}"' in run.toolkit_json for name, run in by_name.items()}
    assert {name.split(" | ")[1] for name, has in offered.items() if not has} == {tools.label(label) for label in pair}
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
        label = unseen.get(label, label)
        assert shown <= held_out if "held-out" in label else shown == {label}

    # the rollouts themselves repeat their partners: what the sampled tokens decide is the same for sample k
    # of a task under both models, while two samples of one task differ (so this is pairing, not a policy
    # that always writes the same thing)
    decided = ["final_answer", "n_turns", "output_tokens", "tool_counts_json"]
    for instruction in [*instructions, *unseen]:
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
    untimed |= set(unseen)
    exact = deltas[(deltas.measure == "accuracy") | ((deltas.measure == "U") & deltas.instruction.isin(untimed))]
    assert len(exact) == len(instructions) + len(unseen) + len(untimed)
    assert (exact[["delta", "ci_low", "ci_high", "half_width"]].abs() < 1e-9).all().all()
    # the headline: a model identical to its start follows each instruction exactly as its start does, so
    # trained - start of the contrast is 0 (cost and accuracy do not depend on wall time), in both wordings
    contrasts = evidence.contrasts
    assert {"training wording", "held-out wording", f"training wording, {prices.description}",
            f"training wording, {tools.description}"} <= set(contrasts.wording) and (contrasts.n_tasks == 2).all()
    spent = contrasts[contrasts.pair == "cost-saving vs accuracy-only"]
    assert set(spent.measure) == {"log cost_usd ratio", "accuracy"}
    assert (spent[["delta", "ci_low", "ci_high"]].abs() < 1e-9).all().all()
    raised = evidence.checks[evidence.checks.check.str.startswith("instruction following raised, cost-saving")]
    assert len(raised) == 4 and set(raised.verdict) == {"not shown"}
    assert (evidence.tool_shares[["delta", "ci_low", "ci_high"]].abs() < 1e-9).all().all()
    headline = evidence.headline()
    assert len(headline) == 4 and all("trained - start +0.000 [+0.000, +0.000] (not shown" in line for line in headline)
    assert set(evidence.checks.model) <= {"trained", "start", "trained - start"} and len(evidence.checks) >= 3
    assert evidence.checks.check.str.contains("accuracy not lower").any()
    families = evidence.families   # per family, identical models did identical things
    assert (families.groupby(["model", "instruction"]).rollouts.sum() == 4).all()
    assert set(families.family) <= {"multi-hop", "computational"}
    by_model = families.pivot_table(index=["family", "instruction"], columns="model", values=["accuracy", "rounds"])
    assert (by_model["accuracy"].start == by_model["accuracy"].trained).all()
    assert (by_model["rounds"].start == by_model["rounds"].trained).all()

    print_evidence(evidence, console)
    text = console.export_text()
    assert "2 tasks x 2 samples" in text and "Behaviour checks" in text and "Get the answer right" in text
    assert "Per task family" in text
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
    assert whole.held_out_wordings and plan.task_ids == whole.task_ids[:5] and whole.runs == 2 * 7 + 4 + 2 * 4
    assert evidence_plan(config, 5, 3, ["held-out", HELD_OUT_WORDINGS]).runs == 6
    pair = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]
    assert evidence_plan(config, 5, 3, [*pair, HELD_OUT_PRICES]).runs == 4 + 4
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
    ({}, {"samples": 2, "split": "train"}, ("out", "out/warm-start"), "GRPO trained on these tasks"),
    ({}, {"samples": 2, "split": "dev"}, ("out", "out/warm-start"), "no tasks in split 'dev'"),
    ({}, {"samples": 2, "baseline_models": {"rft": "/nowhere"}}, ("out", "out/warm-start"),
     "--baseline rft=/nowhere: no model there"),
    ({}, {"samples": 2, "instructions": ["held-out", "held-out-tools"]}, ("out", "out/warm-start"),
     "name both as well"),
])
def test_bad_input_is_one_line_before_any_model_runs(tmp_path, world, overrides, kwargs, folders, message):
    config = tiny_config(tmp_path, warm_start={"orchestrators": ["scripted:random"]}, **overrides)
    for folder in folders:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "config.json").write_text("{}")
    with pytest.raises(LabInputError, match=message) as info:
        evidence_plan(config, **kwargs)
    assert "\n" not in str(info.value)


def test_recipe_choices_compare_on_validation_tasks_and_reported_figures_on_test(tmp_path, world):
    config = tiny_config(tmp_path, warm_start={"orchestrators": ["scripted:random"]})
    for folder in ("out", "out/warm-start"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "config.json").write_text("{}")
    by_id = {t.task_id: t.split for t in world.tasks}
    validation, test = evidence_plan(config, samples=2, split="validation"), evidence_plan(config, samples=2)
    assert {by_id[t] for t in validation.task_ids} == {"validation"} and {by_id[t] for t in test.task_ids} == {"test"}
    assert validation.split_tasks == sum(t.split == "validation" and t.family in ("frames", "hle") for t in world.tasks)


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
    plan = EvidencePlan(start=Path("s"), trained=Path("t"), task_ids=("t0",), samples=1,
                        instructions=(CurveInstruction(label, "outcome=1,compute=1", label),), held_out_wordings=False,
                        split_tasks=1)
    checks = behaviour_checks(pd.DataFrame(), {}, plan, deltas, {"accuracy": 0.05, "cost": 0.10})
    (row,) = checks[checks.check.str.startswith("saving against the start")].itertuples()
    assert row.verdict == expected and row.value == pytest.approx(-cost[0]), row.detail


def seed_part(seed: int, trained_saving: float, tasks: int = 4,
              samples: int = 2) -> tuple[pd.DataFrame, dict[str, str]]:
    """One seed's evidence runs as logged: both models spend 1 cent per rollout under accuracy-only; under
    cost-saving the start spends the same and the trained model `trained_saving` of it."""
    spend = {"start | acc": 0.01, "start | cost": 0.01, "trained | acc": 0.01, "trained | cost": 0.01 * trained_saving}
    runs = {label: f"s{seed}-{label}" for label in spend}
    rows = [{"run_id": runs[label], "task_id": f"t{t}", "sample_idx": k, "cost_usd": cost * (1 + t), "latency_s": 1.0,
             "outcome": 1.0} for label, cost in spend.items() for t in range(tasks) for k in range(samples)]
    return pd.DataFrame(rows), runs


def test_seeds_pool_by_task_with_every_seeds_samples_inside():
    """Two seeds of the whole recipe: one whose trained model halves its spend when asked, one that learned
    nothing. Pooled, trained - start is the mean of their contrasts (ln 2 / 2), over the same 4 tasks, with
    both seeds' samples counted (4 a task); a seed alone keeps its own."""
    plan = EvidencePlan(start=Path("s"), trained=Path("t"), task_ids=tuple(f"t{t}" for t in range(4)), samples=2,
                        instructions=(CurveInstruction("acc", "outcome=1", None),
                                      CurveInstruction("cost", "outcome=1,compute=1", None)),
                        held_out_wordings=False, split_tasks=4, split="validation")
    learned, flat = seed_part(0, 0.5), seed_part(1, 1.0)
    pooled = pooled_contrasts([learned, flat], plan).set_index("measure").loc["log cost_usd ratio"]
    assert pooled.delta == pytest.approx(np.log(2) / 2) and pooled.n_tasks == 4 and pooled.samples == 4
    alone = pooled_contrasts([learned], plan).set_index("measure").loc["log cost_usd ratio"]
    assert alone.delta == pytest.approx(np.log(2)) and alone.samples == 2


def test_each_family_is_reported_on_its_own_so_a_gain_and_a_loss_do_not_cancel():
    """The trained model solves every multi-hop task and no computational one, in 1 and 3 rounds: pooled, it
    would read as 50% in 2 rounds; per family the table says what it did on each, with the tools it called."""
    trajs = pd.DataFrame([{"run_id": "r", "task_id": task, "sample_idx": k, "outcome": float(task.startswith("f")),
                           "n_turns": 1 if task.startswith("f") else 3, "cost_usd": 0.01}
                          for task in ("f1", "f2", "h1") for k in range(2)])
    calls = pd.DataFrame([{"run_id": "r", "task_id": "f1", "sample_idx": 0, "tool_name": "answer-1", "n_calls": 3},
                          {"run_id": "r", "task_id": "h1", "sample_idx": 0, "tool_name": "reasoner-2", "n_calls": 1}])
    table = family_table(trajs, calls, {"trained | acc": "r"}, {"f1": "frames", "f2": "frames", "h1": "hle"})
    by = table.set_index("family")
    assert set(by.index) == {"multi-hop", "computational"}
    assert by.loc["multi-hop", "accuracy"] == 1.0 and by.loc["computational", "accuracy"] == 0.0
    assert by.loc["multi-hop", "rounds"] == 1.0 and by.loc["computational", "rounds"] == 3.0
    assert by.loc["multi-hop", "tasks"] == 2 and by.loc["multi-hop", "rollouts"] == 4
    assert by.loc["multi-hop", "tool_shares"] == "answer-1 100%" and by.loc["computational", "model"] == "trained"


@pytest.mark.slow
def test_the_trained_model_is_compared_with_every_fair_baseline_and_the_claim_with_the_best(tmp_path, world):
    """Under the training pair, each fair baseline (the start greedy with one sample and at T 0.5 / 0.7, two
    fixed routes, and a model named on the command line) answers the same tasks; its contrast stands beside
    the trained model's, and RL's claim is checked against the baseline with the highest contrast."""
    config = tiny_config(tmp_path)
    start = resolve_model(config.model, config.tiny_model, config.seed)
    shutil.copytree(start, config.output_dir)
    shutil.copytree(start, tmp_path / "rft")
    store = Store(tmp_path / "store.duckdb")
    pair = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]
    evidence = gather_evidence(config, store, Console(quiet=True), tasks=2, samples=2, instructions=pair,
                               baseline_models={"rft": str(tmp_path / "rft")})
    names = ["start, greedy", "start, T=0.5", "start, T=0.7", "cascade", "strongest", "rft"]
    assert list(dict.fromkeys(evidence.baselines.name)) == names
    assert set(evidence.baselines.wording) == {"training wording"} and (evidence.baselines.n_tasks == 2).all()
    runs = queries.runs_df(store).set_index("run_id")
    trajs = queries.trajectories_df(store, list(evidence.run_ids.values()))
    greedy = [evidence.run_ids[f"baseline start, greedy | {label}"] for label in pair]
    assert all(json.loads(runs.loc[run_id, "config_json"])["temperature"] == 0 for run_id in greedy)
    assert (trajs[trajs.run_id.isin(greedy)].groupby(["run_id", "task_id"]).size() == 1).all()   # greedy: one sample
    cascade = json.loads(runs.loc[evidence.run_ids[f"baseline cascade | {pair[1]}"], "config_json"])
    assert cascade["orchestrator"] == "scripted:cheapest-first"
    ratios = evidence.baselines[evidence.baselines.measure == "log cost_usd ratio"].set_index("name")
    best = evidence.best_baseline("training wording")
    assert best.contrast == ratios.contrast.max()
    # the greedy baseline's contrast is its own two runs' log cost ratio, task by task (one sample each)
    spent = trajs[trajs.run_id.isin(greedy)].pivot(index="task_id", columns="run_id", values="cost_usd")
    by_hand = np.log(spent[greedy[0]].clip(lower=1e-5) / spent[greedy[1]].clip(lower=1e-5)).mean()
    assert ratios.loc["start, greedy", "contrast"] == pytest.approx(by_hand)
    claim = evidence.checks[evidence.checks.check.str.startswith("instruction following above the best fair")]
    assert len(claim) == 1 and claim.model.iloc[0] == f"trained - {best['name']}"
    assert f"Best fair baseline: {best['name']}" in evidence.headline()[0]
