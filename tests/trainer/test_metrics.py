"""Training metrics (`trainer.metrics`): every logged key is documented in `docs/training.md` with the
meaning the code gives it."""

from __future__ import annotations

from pathlib import Path

from trainer.metrics import METRICS


def test_every_metric_is_documented_in_the_training_docs():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text()
    for name, meaning in METRICS.items():
        assert f"| `{name}` | {meaning} |" in docs
