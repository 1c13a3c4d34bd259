"""Training on several ranks, as a user launches it: `orchestra train --nproc 2` from a clean start (the warm
start included) on CPU, where two processes speak gloo as GPUs speak NCCL.

What a user would check: the 2-rank run rolls out and scores exactly what a 1-rank run of the same global
batch does, its losses and gradient norms agree, the warm start is built once, every periodic evaluation
covers each task once across the ranks, and the store holds one row per rollout and per step. A rank killed
mid-run is named in one line, and `--resume` finishes the run without writing any rollout twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from lab.store import Store, queries
from tests.conftest import TINY_MODEL

pytestmark = pytest.mark.slow

STEPS = 2


def _config(tmp: Path, name: str, batch: int, **overrides) -> Path:
    values = dict(
        run_name="ranks", output_dir=str(tmp / name), model="tiny-qwen3", tiny_model=TINY_MODEL, toolkit="paper-small",
        warm_start={"orchestrators": ["scripted:random"], "limit": 6, "samples": 1, "examples_per_task": 1,
                    "epochs": 6, "learning_rate": 0.003, "batch_size": 8},
        protocol="rounds", context_tokens=240, benchmark="world", families=["frames", "hle"], task_limit=8,
        examples_per_task=2, tool_subset_min=1.0, max_turns=3, turn_max_new_tokens=16, observation_chars=200,
        orchestrator_latency_per_token_s=0.02,  # a modelled latency: wall time would differ between the runs
        format_penalty=1.0, reward_scale="utility", reward_cost_ref_usd=0.05, filter_invalid=False,
        num_generations=4, per_device_train_batch_size=batch, gradient_accumulation_steps=1, learning_rate=0.01,
        max_steps=STEPS, save_steps=1, lab_eval_steps=0, lab_eval_limit=3,
        lab_eval_instructions=["outcome=1,compute=1"],
        report_to="none", gradient_checkpointing=False, seed=0,
    )
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**values, **overrides}))
    return path


def _train(config: Path, db: Path, *flags: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "orchestra", "train", "--config", str(config), "--db", str(db),
                           *flags], capture_output=True, text=True, timeout=timeout, env=env)


def _rollouts(store: Store):
    return store._read(
        "SELECT task_id, sample_idx, train_step, outcome, n_turns, tool_counts_json, cost_usd, latency_s, reward, "
        "advantage, filter_reason FROM trajectories t JOIN runs r USING (run_id) WHERE r.kind = 'train' "
        "ORDER BY train_step, task_id, sample_idx")


def _metrics(store: Store) -> list[dict]:
    frame = store._read("SELECT metrics_json FROM train_metrics ORDER BY step")
    return [json.loads(m) for m in frame.metrics_json]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ranks")
    two = _train(_config(tmp, "two", batch=8), tmp / "two.duckdb", "--nproc", "2")
    assert two.returncode == 0, two.stderr[-3000:]
    one = _train(_config(tmp, "one", batch=16), tmp / "one.duckdb")  # the same global batch on one rank
    assert one.returncode == 0, one.stderr[-3000:]
    return tmp, two, Store(tmp / "two.duckdb"), Store(tmp / "one.duckdb")


def test_two_ranks_from_a_clean_start_roll_out_and_score_what_one_rank_does(runs):
    tmp, two, store2, store1 = runs
    rollouts = _rollouts(store2)
    assert len(rollouts) == STEPS * 16 and not rollouts.duplicated(["task_id", "sample_idx", "train_step"]).any()
    assert rollouts.equals(_rollouts(store1))


def test_two_ranks_losses_and_gradient_norms_match_one_rank(runs):
    tmp, two, store2, store1 = runs
    metrics2, metrics1 = _metrics(store2), _metrics(store1)
    assert len(metrics2) == len(metrics1) == STEPS  # one row per optimizer step, not one per rank
    for step2, step1 in zip(metrics2, metrics1):
        assert step1["grad_norm"] > 0, "nothing trained: the comparison would test nothing"
        for name in ("loss", "grad_norm"):
            assert step2[name] == pytest.approx(step1[name], rel=1e-4, abs=1e-6), name


def test_the_warm_start_is_built_once_and_each_evaluation_covers_every_task_once(runs):
    tmp, two, store2, _ = runs
    assert two.stdout.count("warm start: SFT on") == 1
    assert (tmp / "two" / "warm-start" / "config.json").is_file()
    evals = queries.linked_evals_df(store2, queries.runs_df(store2).query("kind == 'train'").run_id.iloc[0])
    assert sorted(evals.train_step) == [0, STEPS]
    trajectories = queries.trajectories_df(store2, list(evals.run_id))
    assert trajectories.groupby("run_id").task_id.apply(sorted).map(len).tolist() == [3, 3]
    assert not trajectories.duplicated(["run_id", "task_id", "sample_idx"]).any()
    assert set(queries.runs_df(store2).status) == {"finished"}
    assert not list((tmp / "two.duckdb.spool").glob("*")), "the ranks' segments were folded into the file"


def _rank_pid(launcher: subprocess.Popen, rank: int) -> int | None:
    """The pid of the launcher's child process that runs `rank`."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            environ = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if parent == launcher.pid and f"RANK={rank}".encode() in environ:
            return int(proc.name)
    return None


def _wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)  # polls a condition the run produces; the test's outcome does not depend on when
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.timeout(900)
def test_a_killed_rank_is_named_and_resume_finishes_without_a_rollout_twice(tmp_path):
    config = _config(tmp_path, "run", batch=8, max_steps=60)  # far more steps than run before the kill
    db = tmp_path / "store.duckdb"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    launcher = subprocess.Popen([sys.executable, "-m", "orchestra", "train", "--config", str(config), "--db", str(db),
                                 "--nproc", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_for(lambda: (tmp_path / "run" / "checkpoint-2" / "trainer_state.json").is_file(), 600, "checkpoint 2")
    victim = _rank_pid(launcher, 1)
    assert victim is not None
    os.kill(victim, signal.SIGKILL)
    _, stderr = launcher.communicate(timeout=180)  # no hang: the launcher stops the other rank
    assert launcher.returncode == 2
    line = " ".join(stderr.split())
    assert f"rank 1 of 2 (pid {victim}) was killed by SIGKILL; the other ranks were stopped" in line
    assert "--nproc 2 --resume" in line
    store = Store(db)
    run_id = queries.runs_df(store).query("kind == 'train'").run_id.iloc[0]
    assert queries.run_status(store, run_id) != "finished"

    resumed = _train(config, db, "--nproc", "2", "--resume", "--max-steps", "4")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rollouts = _rollouts(store)
    assert sorted(set(rollouts.train_step)) == [1, 2, 3, 4]
    assert rollouts.groupby("train_step").size().tolist() == [16] * 4
    assert not rollouts.duplicated(["task_id", "sample_idx", "train_step"]).any()
    assert [m for m in store._read("SELECT step FROM train_metrics ORDER BY step").step] == [1, 2, 3, 4]
    assert queries.run_status(store, run_id) == "finished"
