"""The learning check (`trainer.check`): GRPO from a format-only start raises the probability of the known best
call to the threshold, and the same run with the advantage's sign flipped does not; a check config that
cannot make such a problem is refused in one line, before any model is built."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from rich.console import Console

from lab.errors import LabInputError
from lab.store import open_store
from trainer.check import check_spec, run_check
from trainer.config import OrchestraGRPOConfig

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
    assert result.control is not None and result.control.curve[0][1] == start  # the same start
    assert result.passed and result.learning.final >= 0.9
    assert result.control.final < start and result.control_failed
    assert result.candidate_rewards[result.spec.best] == max(result.candidate_rewards.values())


@pytest.mark.slow
def test_every_step_logs_the_probe_and_a_sampler_gap_within_tolerance(checked):
    result, store = checked
    for run in (result.learning, result.control):
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
])
def test_a_check_that_cannot_make_its_problem_is_refused_in_one_line(tmp_path, changes, problem):
    path = write(tmp_path, **changes)
    with pytest.raises(LabInputError) as info:
        check_spec(OrchestraGRPOConfig.from_yaml(path))
    assert problem in str(info.value) and "\n" not in str(info.value)


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
