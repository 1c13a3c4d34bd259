"""Tests for lab.eval.config: what makes a run's identity, and settings refused before any work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lab.eval.config import EvalConfig


def test_sampling_and_instruction_are_part_of_the_run_identity():
    base = EvalConfig(orchestrator="hf:smollm2", samples=4, temperature=0.7)
    ids = {base.run_id(None, 50)}
    for change in ({"temperature": 0.8}, {"top_p": 0.9}, {"max_new_tokens": 64},
                   {"preference_instruction": "Be quick."}):
        ids.add(base.model_copy(update=change).run_id(None, 50))
    assert len(ids) == 5
    assert EvalConfig(orchestrator="hf:smollm2", samples=4, temperature=0.7).run_id(None, 50) == base.run_id(None, 50)


def test_a_model_directory_retrained_in_place_starts_a_new_run(tmp_path: Path):
    """Resuming would otherwise hand the new model's evaluation the old model's rollouts."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"first weights")
    config = EvalConfig(orchestrator=f"hf:{folder}")
    first = config.run_id(None, 50)
    assert config.run_id(None, 50) == first  # untouched: the same run resumes
    (folder / "model.safetensors").write_bytes(b"second weights, longer")
    assert config.run_id(None, 50) != first


def test_samples_at_temperature_0_are_refused_for_models_only(tmp_path: Path):
    for orchestrator in ("hf:smollm2", "openai:m@http://127.0.0.1:9/v1"):
        db = tmp_path / "never.duckdb"
        result = subprocess.run(
            [sys.executable, "-c", "from orchestra.cli import main; main()", "eval", "--orchestrator", orchestrator,
             "--samples", "3", "--limit", "1", "--db", str(db)],
            capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "--samples 3 with --temperature 0" in lines[0] and "--temperature > 0" in lines[0]
        assert not db.exists()  # refused before anything ran
    assert EvalConfig.build(orchestrator="scripted:round-robin", samples=3).samples == 3  # seeded tools vary per sample
    assert EvalConfig.build(orchestrator="hf:smollm2", samples=3, temperature=0.7).temperature == 0.7


def test_the_judge_prompt_follows_the_expert_protocol_and_parts_judged_runs():
    """A released run is judged with the released prompt unless told otherwise; a run without a judge, or
    judged with the lab's prompt, keeps the id it had before the choice existed."""
    rounds = EvalConfig(benchmark="world:hle", protocol="rounds", judge="sim:gpt-5")
    assert (rounds.expert_protocol, rounds.judge_prompt) == ("released", "released")
    assert EvalConfig(benchmark="world:hle", protocol="rounds", expert_protocol="lab").judge_prompt == "lab"
    assert EvalConfig(benchmark="world:hle", judge="sim:gpt-5").judge_prompt == "lab"
    assert EvalConfig(benchmark="world:hle", protocol="rounds", judge_prompt="lab").judge_prompt == "lab"
    as_lab = rounds.model_copy(update={"judge_prompt": "lab"})
    assert rounds.run_id(None, 50) != as_lab.run_id(None, 50)  # judged otherwise: another run
    unjudged = EvalConfig(benchmark="world:hle", protocol="rounds")
    assert unjudged.run_id(None, 50) == unjudged.model_copy(update={"judge_prompt": "lab"}).run_id(None, 50)
