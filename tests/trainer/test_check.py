"""The learning check (`trainer.check`): GRPO from a format-only start raises the probability of the known best
call to the threshold, and the same run with the advantage's sign flipped does not; a check config that
cannot make such a problem is refused in one line, before any model is built."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lab.errors import LabInputError
from lab.store import open_store
from trainer.check import check_spec, control_rows, control_scores, run_check
from trainer.config import OrchestraGRPOConfig
from trainer.scoring import RowFeatures, score_rows

CHECK = "configs/train/check.yaml"
#: |log pi_train - log pi_sampler| allowed at temperature 1 (float32 on CPU: measured about 1e-5)
GAP_TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("check")
    config = OrchestraGRPOConfig.from_yaml(CHECK, db=str(folder / "check.duckdb"), output_dir=str(folder / "out"))
    store = open_store(folder / "check.duckdb")
    return run_check(config, store, Console(quiet=True), control=True), store


@pytest.mark.slow
@pytest.mark.timeout(600)  # builds the check (about 2.5 minutes on 2 cores) for both tests
def test_grpo_learns_the_best_call_and_the_sign_flipped_control_unlearns_it(checked):
    result, _ = checked
    start = result.learning.curve[0][1]
    assert 0.4 <= start <= 0.6, "the format-only start should not know which of the 2 calls is best"
    (control,) = result.controls
    assert control.label == "sign-flip" and control.curve[0][1] == start  # the same start
    assert result.passed and result.learning.final >= 0.9
    assert control.final < start and result.control_failed
    (rewards,) = result.candidate_rewards
    assert rewards[result.spec.conditions[0].best] == max(rewards.values())


@pytest.mark.slow
def test_every_step_logs_the_probe_and_a_sampler_gap_within_tolerance(checked):
    result, store = checked
    for run in (result.learning, *result.controls):
        rows = store._read("SELECT step, metrics_json FROM train_metrics WHERE run_id = ? ORDER BY step",
                           [run.run_id])
        metrics = [json.loads(m) for m in rows.metrics_json]
        assert list(rows.step) == list(range(len(run.curve)))
        assert [m["probe/best_call"] for m in metrics] == pytest.approx([p for _, p in run.curve])
        gaps = [m["sampling/logp_gap/max"] for m in metrics[1:] if "sampling/logp_gap/max" in m]
        assert len(gaps) == len(metrics) - 1 and max(gaps) < GAP_TOLERANCE, max(gaps)
        assert all(m["groups/informative"] > 0 for m in metrics[1:])


def write(tmp_path, **changes) -> str:
    raw = yaml.safe_load(open(CHECK))
    raw.update({"output_dir": str(tmp_path / "out")})
    for key, value in changes.items():
        if key.startswith("learning_check."):
            raw["learning_check"][key.split(".", 1)[1]] = value
        else:
            raw[key] = value
    path = tmp_path / "check.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


@pytest.mark.parametrize("changes, problem", [
    ({"learning_check.best": "answer:answer-2"}, "learning_check.best: 'answer:answer-2' is not one of"),
    ({"learning_check.calls": ["answer:answer-1", "answer:answer-9"]}, "names no slot of tool 'answer'"),
    ({"learning_check.calls": ["answer:answer-1", "ask:answer-3"], "learning_check.best": "ask:answer-3"},
     "names no tool of toolkit"),
    ({"learning_check.threshold": "high"}, "field 'learning_check.threshold': got 'high'"),
    ({"learning_check.treshold": 0.9}, "learning_check: unknown key 'treshold'"),
    ({"learning_check.preference": "outcome=1,speed=1"}, "unknown entry 'speed'"),
    ({"protocol": "conversation", "format_penalty": 0.0}, "needs protocol: rounds"),
    ({"learning_check.conditions": [{"instruction": "x", "preference": "outcome=1", "best": "answer:answer-3"}]},
     "give either preference/instruction/best or conditions, not both"),
    ({"learning_check.controls": ["sign-flip", "coin-flip"]}, "learning_check.controls: 'coin-flip' is not one of"),
    ({"learning_check.controls": ["shuffled-instructions"]}, "shuffled-instructions needs two or more conditions"),
])
def test_a_check_that_cannot_make_its_problem_is_refused_in_one_line(tmp_path, changes, problem):
    path = write(tmp_path, **changes)
    with pytest.raises(LabInputError) as info:
        check_spec(OrchestraGRPOConfig.from_yaml(path))
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_paired_instructions_refuse_a_step_that_cannot_hold_each_task_under_every_instruction(tmp_path):
    raw = yaml.safe_load(open("configs/train/check-conditional.yaml"))
    raw.update(output_dir=str(tmp_path / "out"), per_device_train_batch_size=24, examples_per_task=3)  # 3 groups
    path = tmp_path / "paired.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(LabInputError) as info:
        check_spec(OrchestraGRPOConfig.from_yaml(path))
    expected = "paired_instructions: a step's 3 groups must hold each check task under all 2 instructions"
    assert expected in str(info.value)


def test_the_cli_refuses_a_best_call_outside_the_toolkit_with_exit_2_and_creates_nothing(tmp_path):
    path = write(tmp_path, **{"learning_check.calls": ["answer:answer-1", "answer:answer-7"],
                              "learning_check.best": "answer:answer-7"})
    result = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", "train", "check",
                             "--config", path, "--db", str(tmp_path / "db.duckdb")],
                            capture_output=True, text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "answer:answer-7" in lines[0], result.stderr
    assert not (tmp_path / "db.duckdb").exists() and not (tmp_path / "out").exists()


def test_a_training_run_with_a_learning_check_logs_the_best_calls_probability_from_step_0(tmp_path):
    from trainer.train import run_training

    config = OrchestraGRPOConfig.from_yaml(CHECK, db=str(tmp_path / "db.duckdb"), output_dir=str(tmp_path / "out"),
                                           max_steps=1)
    store = open_store(tmp_path / "db.duckdb")
    summary = run_training(config, store, Console(quiet=True))
    rows = store._read("SELECT step, metrics_json FROM train_metrics WHERE run_id = ? ORDER BY step",
                       [summary.run_id])
    probes = [json.loads(m).get("probe/best_call") for m in rows.metrics_json]
    assert list(rows.step) == [0, 1] and all(p is not None and 0 <= p <= 1 for p in probes)


CHEAP = (0.0, 0.0, 1.0, 1.0, 0.0)      # P over [answer-1, answer-3, outcome, compute, latency]: keep the bill low
APPROVED = (1.0, 0.0, 1.0, 0.0, 0.0)   # GPT-5 (answer-1) approved


def check_rows(draw_calls: list[bool], instructions: list[bool]) -> list[RowFeatures]:
    """Rows of a conditional check batch: per row, which slot answered (True: answer-1, dear) and under
    which instruction (True: GPT-5 approved); every rollout solves."""
    return [RowFeatures(group_id=f"g{int(approved)}", tool_counts={"answer-1" if dear else "answer-3": 1},
                        outcome=1.0, cost_usd=0.03 if dear else 0.01, latency_s=1.0, format_ok=True,
                        valid_output=True, preference=APPROVED if approved else CHEAP)
            for dear, approved in zip(draw_calls, instructions)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=4, max_size=16).flatmap(
    lambda calls: st.tuples(st.just(calls), st.lists(st.booleans(), min_size=len(calls), max_size=len(calls)))))
def test_each_control_breaks_exactly_its_link_between_reward_and_update(batch):
    """sign-flip: every advantage negated; shuffled-advantages: the same advantages on other rows, none on a row
    that carried none; shuffled-instructions: every group scored under the other instruction's P, so under it
    the dear GPT-5 slot is never favoured where cost is what was asked (and the reverse)."""
    calls, instructions = batch
    rows = check_rows(calls, instructions)
    features = ["answer-1", "answer-3"]
    scores = score_rows(rows, features)
    flipped = control_scores(scores, "sign-flip", seed=0)
    assert (flipped.advantages == -scores.advantages).all() and (flipped.keep == scores.keep).all()
    shuffled = control_scores(scores, "shuffled-advantages", seed=3)
    assert sorted(shuffled.advantages[scores.keep]) == sorted(scores.advantages[scores.keep])
    assert (shuffled.advantages[~scores.keep] == scores.advantages[~scores.keep]).all()
    assert control_scores(scores, "learning", seed=0) is scores and control_rows(rows, "sign-flip") is rows
    swapped = control_rows(rows, "shuffled-instructions")
    if len({r.preference for r in rows}) == 2:
        assert all(a.preference != b.preference for a, b in zip(rows, swapped))
        wrong = score_rows(swapped, features)
        for row, advantage in zip(rows, wrong.advantages):
            if row.preference == CHEAP and advantage > 0:   # rewarded as if GPT-5 were approved
                assert "answer-1" in row.tool_counts
            if row.preference == APPROVED and advantage > 0:   # rewarded as if asked to save
                assert "answer-3" in row.tool_counts
    else:
        assert [r.preference for r in swapped] == [r.preference for r in rows]   # one P: nothing to swap with


def test_the_reading_of_the_instruction_is_0_for_one_choice_everywhere_and_1_for_each_instructions_best(tmp_path):
    """Two conditions with opposite best calls: a policy that writes the GPT-5 slot 70% of the time whatever
    it reads scores 0, one that writes each instruction's best call scores near 1; the command prints it."""
    from rich.console import Console

    from trainer.check import CheckResult, CheckRun, instruction_reading, print_check

    blind = CheckRun(label="learning", run_id="r", curves={0: [(0, 0.5), (9, 0.3)], 1: [(0, 0.5), (9, 0.7)]})
    reads = CheckRun(label="sign-flip", run_id="c", curves={0: [(0, 0.5), (9, 0.9)], 1: [(0, 0.5), (9, 0.95)]})
    assert instruction_reading(blind, -1) == pytest.approx(0.0)
    assert instruction_reading(reads, -1) == pytest.approx(0.85)
    # three instructions, three best calls: one choice everywhere (0.5, 0.3, 0.2 of the mass) still reads 0
    three = {i: [(0, 0.3), (9, p)] for i, p in enumerate((0.5, 0.3, 0.2))}
    assert instruction_reading(CheckRun(label="learning", run_id="t", curves=three), -1) == pytest.approx(0.0)
    each = {i: [(0, 0.3), (9, 1.0)] for i in range(3)}
    assert instruction_reading(CheckRun(label="learning", run_id="t", curves=each), -1) == pytest.approx(1.0)
    raw = yaml.safe_load(open("configs/train/check-conditional.yaml"))
    raw.update(output_dir=str(tmp_path / "out"))
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    spec = check_spec(OrchestraGRPOConfig.from_yaml(path))
    console = Console(record=True, width=200)
    print_check(CheckResult(spec=spec, task_ids=["t"], candidate_rewards=[], start=[], learning=blind,
                            controls=[reads]), console)
    text = console.export_text()
    assert "Does it read the instruction?" in text and "+0.000" in text and "+0.850" in text
