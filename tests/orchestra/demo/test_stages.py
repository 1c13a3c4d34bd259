"""The demo's training stage (`orchestra.demo.stages.DemoStages.train`) reuses a finished trained model only
when its fingerprint matches what would make it now; a stale one is retrained from the first step (its
checkpoints removed, not resumed), and the demo says which input differed. `run_training` is stubbed: the
decision is the subject here, not the training (the quick demo in tests/orchestra/cli/test_demo.py trains)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from lab.records import RunRecord
from lab.store import Store, queries
from orchestra.demo.plan import QUICK
from orchestra.demo.stages import DemoStages
from trainer.fingerprint import record_trained_model, trained_fingerprint, warm_start_fingerprint, write_fingerprint
from trainer.sft import warm_start_dir, warm_start_options
from trainer.train import train_run_id


def test_a_trained_model_is_reused_on_a_matching_fingerprint_and_retrained_otherwise(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the quick plan's output_dir is relative: runs/cpu-tiny-quick
    store = Store(tmp_path / "demo.duckdb")
    console = Console(record=True, width=400)
    stages = DemoStages(QUICK, store, console)
    config = stages.config
    run_id = train_run_id(config)
    store.write_run(RunRecord(run_id=run_id, kind="train", name="cpu-tiny-quick", benchmark="world"))
    store.finish_run(run_id)
    warm = warm_start_dir(config)  # what a finished `run_training` leaves: the warm start, the model, fingerprints
    warm.mkdir(parents=True)
    write_fingerprint(warm, warm_start_fingerprint(config, warm_start_options(config)))
    model = Path(config.output_dir)
    (model / "config.json").write_text("{}")
    record_trained_model(config, run_id, warm)
    calls = []

    def run_training(config, store, console, resume=False):
        calls.append((resume, queries.run_status(store, run_id), sorted(p.name for p in model.glob("checkpoint-*"))))
        return SimpleNamespace(steps=2, model_dir=model)

    monkeypatch.setattr("trainer.train.run_training", run_training)
    stages.train()
    assert calls == []
    assert console.export_text().startswith(f"training: reusing {model} (train run {run_id}, fingerprint ")

    (model / "checkpoint-2").mkdir()
    write_fingerprint(model, trained_fingerprint(config, "another-run", None))
    stages.train()
    assert console.export_text().splitlines()[0] == (f"training: {model} was made by another train run "
                                                     f"(another-run -> {run_id}); retraining")
    assert calls == [(False, "interrupted", [])], "retrained from the first step, the stale checkpoints gone"
