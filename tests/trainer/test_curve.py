"""Tests for trainer.curve: what the learning curve evaluates, read from a train config. The evaluations
themselves run in `tests/trainer/test_grpo.py` (step 0 and the last step of a real training run)."""

from __future__ import annotations

import pytest

from lab.errors import LabInputError
from lab.preference import preference_pairs
from trainer.config import OrchestraGRPOConfig
from trainer.curve import CurveInstruction, curve_instructions, eval_set

WORDING = "Be accurate but keep the bill as low as you can."


def config(tmp_path, **values) -> OrchestraGRPOConfig:
    return OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), toolkit="paper-small", families=["frames", "hle"],
                               report_to="none", **values)


def test_by_default_the_curve_evaluates_every_training_pair_the_toolkit_can_follow(tmp_path):
    instructions = curve_instructions(config(tmp_path))
    assert [i.label for i in instructions] == [i.wording for i in instructions]   # shown as trained
    assert set(i.label for i in instructions) <= {p.instruction for p in preference_pairs("train")}
    assert "Use the local document search rather than asking large models." not in [i.label for i in instructions]
    assert CurveInstruction(WORDING, "outcome=1,compute=1", WORDING) in instructions


def test_an_entry_is_a_pair_wording_a_p_string_or_held_out(tmp_path):
    listed = [f"  {WORDING}", "outcome=1,latency=0.9", "held-out", "Only the answer matters to me."]
    instructions = curve_instructions(config(tmp_path, lab_eval_instructions=listed))
    assert instructions == [CurveInstruction(WORDING, "outcome=1,compute=1", WORDING),
                            CurveInstruction("outcome=1,latency=0.9", "outcome=1,latency=0.9", None),
                            CurveInstruction("held-out", "held-out", None),
                            CurveInstruction("Only the answer matters to me.", "outcome=1",
                                             "Only the answer matters to me.")]


@pytest.mark.parametrize("entries, problem", [
    (["be quick about it"], "is neither a P string"),
    (["outcome=lots"], "non-numeric value 'lots'"),
    (["outcome=1,gpt-7=1"], "unknown entry 'gpt-7'"),
    (["Use the local document search rather than asking large models."], "unknown entry 'local_search'"),
    (["outcome=1", "outcome=1 "], "listed twice"),
])
def test_an_unreadable_instruction_is_one_line_naming_it(tmp_path, entries, problem):
    with pytest.raises(LabInputError, match="lab_eval_instructions") as info:
        curve_instructions(config(tmp_path, lab_eval_instructions=entries))
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_the_tasks_are_the_first_of_the_eval_split_and_never_more_than_it_has(tmp_path, world):
    evals = eval_set(config(tmp_path, lab_eval_limit=5))
    assert len(evals.task_ids) == 5 and all(t.startswith(("frames-", "hle-")) for t in evals.task_ids)
    assert eval_set(config(tmp_path, lab_eval_limit=5)) == evals                   # the same every time
    assert eval_set(config(tmp_path, lab_eval_limit=0)).task_ids == ()             # 0: no curve
    with pytest.raises(LabInputError, match=r"lab_eval_limit 1000: the 'validation' split of world \(frames, hle\)"):
        eval_set(config(tmp_path, lab_eval_limit=1000))
    with pytest.raises(LabInputError, match="temperature 0"):
        eval_set(config(tmp_path, lab_eval_samples=2, temperature=0.0))
