"""`orchestra train evidence` on tiny models: every comparison it reports is made from logged runs that
showed the instructions it says (held-out pairs, the held-out and the training wordings), on the same
tasks, for the trained policy and its warm start."""

from __future__ import annotations

import json
import shutil

import pytest
from rich.console import Console

from lab.errors import LabInputError
from lab.preference import logged_instruction, preference_pairs
from lab.store import Store, queries
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.evidence import TRAIN_ACCURACY_ONLY, TRAIN_COST_SAVING, gather_evidence, print_evidence
from trainer.models import resolve_model
from trainer.sft import warm_start_dir

pytestmark = pytest.mark.slow


def test_evidence_compares_logged_runs_of_both_models_on_the_same_tasks(tmp_path, world):
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), run_name="evidence-test", model="tiny-qwen3",
                                 tiny_model=TINY_MODEL, toolkit="paper-small", families=["frames", "hle"], max_turns=2,
                                 turn_max_new_tokens=8, observation_chars=100, report_to="none", seed=0)
    built = resolve_model(config.model, config.tiny_model, config.seed)
    shutil.copytree(built, config.output_dir)           # stands in for the trained model
    shutil.copytree(built, warm_start_dir(config))       # and for its warm start
    store = Store(tmp_path / "store.duckdb")
    console = Console(record=True, width=140)
    evidence = gather_evidence(config, store, console, limit=3, samples=2)

    assert len(set(evidence.run_ids.values())) == 12
    runs = queries.runs_df(store).set_index("run_id").loc[list(evidence.run_ids.values())]
    assert (runs.kind == "eval").all() and (runs.status == "finished").all()
    trajs = queries.trajectories_df(store, list(evidence.run_ids.values()))
    assert trajs.groupby("run_id").task_id.apply(frozenset).nunique() == 1 and trajs.task_id.nunique() == 3
    greedy = {run_id for name, run_id in evidence.run_ids.items() if name.endswith("greedy")}
    assert len(greedy) == 4
    sampled = trajs[~trajs.run_id.isin(greedy)]
    assert (sampled.groupby(["run_id", "task_id"]).size() == 2).all()       # the policy as trained: sampled
    assert (trajs[trajs.run_id.isin(greedy)].groupby(["run_id", "task_id"]).size() == 1).all()  # and greedy, once
    temperatures = {run_id: json.loads(c)["temperature"] for run_id, c in runs.config_json.items()}
    assert {t for r, t in temperatures.items() if r not in greedy} == {config.temperature}
    assert {t for r, t in temperatures.items() if r in greedy} == {0.0}
    for part in (evidence.preference, evidence.cost, evidence.cost_train_wording, evidence.cost_train_wording_warm,
                 evidence.greedy_preference, evidence.greedy_cost_train_wording):
        assert part["n_tasks"] == 3
    held_out = {p.instruction for p in preference_pairs("eval")}
    for name, run_id in evidence.run_ids.items():
        shown = {logged_instruction(runs.loc[run_id, "config_json"], t) for t in trajs[trajs.run_id == run_id].task_id}
        if "train wording" in name:
            assert shown <= {TRAIN_COST_SAVING, TRAIN_ACCURACY_ONLY} and len(shown) == 1
        else:
            assert shown <= held_out
    warm_config = json.loads(runs.loc[evidence.run_ids["warm start held-out"], "config_json"])
    assert warm_config["orchestrator"].endswith("warm-start")
    print_evidence(evidence, console)
    text = console.export_text()
    assert "saving (training wordings), warm start" in text
    assert f"temperature {config.temperature:g}, 2 rollouts per task" in text
    assert "greedy: trained - warm start" in text


def test_evidence_refuses_a_greedy_config(tmp_path):
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), model="tiny-qwen3", tiny_model=TINY_MODEL,
                                 temperature=0.0, report_to="none")
    for folder in (tmp_path / "out", warm_start_dir(config)):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("{}")
    with pytest.raises(LabInputError, match="temperature"):
        gather_evidence(config, Store(tmp_path / "store.duckdb"), Console(), limit=1)
