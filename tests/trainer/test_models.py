"""Tests for trainer.models: what the tiny model's tokenizer is fitted on."""

from __future__ import annotations

from trainer.models import _training_text


def test_the_world_tokenizer_is_fitted_on_training_questions_only(world):
    """A tokenizer fitted on test questions would carry their words into the model as whole tokens, a leak
    the paired evidence cannot see: no validation or test question may be in its text, every training one is."""
    text = set(_training_text())
    held_out = [t.question for t in world.tasks if t.split != "train"]
    assert held_out and not any(question in text for question in held_out)
    assert all(t.question in text for t in world.select(split="train"))
