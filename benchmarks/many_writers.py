"""Beyond one process, measured on this machine in one run: how fast the store takes rollouts from one and
from many writers, and what a second training rank does to the step time.

    python benchmarks/many_writers.py [--writers 8] [--trajectories 3200] [--steps 4]

1. Store ingest, in steps per second (trajectories of 10 steps with 300-character observations, committed
   64 at a time as the evaluation harness's writer commits them; `lab.store`):
   - one writer into the DuckDB file (a transaction per batch: the file's lock, one host);
   - one writer into the spool (`Store(..., spool=True)`: a Parquet segment per batch, no lock);
   - `--writers` processes into the spool at once (wall time from the go, given once every process has
     imported the lab and built its records, to the last commit);
   - the compaction that folds those segments into the file, and a check that every row is there once.
   The target the issue set: at least 50,000 steps/s.
2. Training step time (`orchestra train`, the round protocol, a warm start, the cpu-tiny model's shape): the
   same config and global batch on 1 rank (both cores) and on 2 gloo ranks (a core each), seconds per step
   from the runs' `train_metrics` (rollout + reward + update), median over the steps after the first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
STEPS_PER_TRAJECTORY = 10
BATCH = 64


def batches(writer: str, trajectories: int) -> list[list]:
    from lab.records import StepRecord, TrajectoryRecord

    items = []
    for i in range(trajectories):
        task_id = f"{writer}-{i:06d}"
        steps = [StepRecord(run_id="bench", task_id=task_id, turn=t, tool_name="search", observation="x" * 300)
                 for t in range(STEPS_PER_TRAJECTORY)]
        items.append((TrajectoryRecord(run_id="bench", task_id=task_id, n_turns=STEPS_PER_TRAJECTORY), steps, None))
    return [items[i:i + BATCH] for i in range(0, len(items), BATCH)]


def ingest(db: Path, writer: str, trajectories: int, spool: bool, ready: bool = False) -> float:
    """Seconds to commit `trajectories` in batches of 64 (records built beforehand, as the harness has them).
    `ready`: a writer process: say so and wait for the go (a line on stdin) before writing."""
    from lab.store import Store

    store = Store(db, spool=spool)
    work = batches(writer, trajectories)
    if ready:
        print("ready", flush=True)
        sys.stdin.readline()
    started = time.perf_counter()
    for batch in work:
        store.write_trajectories(batch)
    return time.perf_counter() - started


def store_rows(db: Path, writers: int, trajectories: int) -> list[tuple[str, float, str]]:
    """(what, steps per second, note) for each way of writing."""
    from lab.store import Store

    steps = trajectories * STEPS_PER_TRAJECTORY
    rows = [("1 writer, DuckDB file", steps / ingest(db / "direct.duckdb", "w", trajectories, spool=False), ""),
            ("1 writer, spool", steps / ingest(db / "spool1.duckdb", "w", trajectories, spool=True), "")]
    shared = db / "shared.duckdb"
    Store(shared)  # the schema, before the writers start
    procs = [subprocess.Popen([sys.executable, __file__, "--write", str(shared), f"w{k}", str(trajectories)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"}) for k in range(writers)]
    for p in procs:  # every writer has imported the lab and built its records
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("a writer process failed before writing")
    started = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    if any(p.wait() for p in procs):
        raise SystemExit("a writer process failed")
    wall = time.perf_counter() - started
    rows.append((f"{writers} processes, spool", writers * steps / wall, "all at once: from the go to the last commit"))
    store = Store(shared)
    started = time.perf_counter()
    store.compact()
    rows.append(("compaction of those", writers * steps / (time.perf_counter() - started), "into the file"))
    counts = store._read("SELECT count(*) AS n, count(DISTINCT task_id) AS tasks FROM trajectories").iloc[0]
    stored_steps = int(store._read("SELECT count(*) AS n FROM steps").n.iloc[0])
    whole = counts.n == counts.tasks == writers * trajectories and stored_steps == writers * steps
    rows.append(("rows after compaction", float(stored_steps),
                 "every trajectory once, every step" if whole else "MISSING OR DUPLICATED ROWS"))
    return rows


def train_config(tmp: Path, name: str, batch: int, steps: int) -> Path:
    shape = yaml.safe_load((REPO / "configs/train/cpu-tiny.yaml").read_text())["tiny_model"]
    values = dict(
        run_name="bench-ranks", output_dir=str(tmp / name), model="tiny-qwen3", tiny_model=shape,
        toolkit="paper-small",
        warm_start={"orchestrators": ["scripted:random", "scripted:cheapest-first"], "limit": 16, "samples": 1,
                    "examples_per_task": 2, "epochs": 4, "learning_rate": 0.003, "batch_size": 8},
        protocol="rounds", context_tokens=240, benchmark="world", families=["frames", "hle"], task_limit=32,
        examples_per_task=2, tool_subset_min=1.0, max_turns=6, turn_max_new_tokens=48, observation_chars=300,
        orchestrator_latency_per_token_s=0.02, format_penalty=1.0, reward_scale="utility",
        reward_cost_ref_usd=0.05, filter_invalid=False, num_generations=8, per_device_train_batch_size=batch,
        gradient_accumulation_steps=1, learning_rate=1e-4, max_steps=steps, save_steps=1000, lab_eval_steps=0,
        lab_eval_limit=0, report_to="none", gradient_checkpointing=False, seed=0,
    )
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def step_seconds(tmp: Path, ranks: int, steps: int, global_batch: int) -> list[dict[str, float]]:
    """Seconds of each optimizer step of a training on `ranks` ranks (2 cores shared among them): the
    rollout, the reward and the update, and their sum (`step`)."""
    from lab.store import Store

    name = f"ranks{ranks}"
    config = train_config(tmp, name, global_batch // ranks, steps)
    db = tmp / f"{name}.duckdb"
    threads = str(max(1, (os.cpu_count() or 2) // ranks))
    result = subprocess.run([sys.executable, "-m", "orchestra", "train", "--config", str(config), "--db", str(db),
                             "--nproc", str(ranks)], capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": threads})
    if result.returncode:
        raise SystemExit(f"training on {ranks} rank(s) failed:\n{result.stderr[-3000:]}")
    metrics = [json.loads(m) for m in Store(db)._read("SELECT metrics_json FROM train_metrics ORDER BY step")
               .metrics_json]
    parts = ("rollout", "reward", "update")
    return [{**{p: m[f"time/{p}_s"] for p in parts}, "step": sum(m[f"time/{p}_s"] for p in parts)} for m in metrics]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--trajectories", type=int, default=3200, help="per writer")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps per training")
    parser.add_argument("--batch", type=int, default=64, help="global generation batch (rows) of the trainings")
    parser.add_argument("--write", nargs=3, metavar=("DB", "NAME", "N"), help=argparse.SUPPRESS)  # a writer process
    args = parser.parse_args()
    if args.write:
        db, name, count = args.write
        ingest(Path(db), name, int(count), spool=True, ready=True)
        return
    console = Console()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        table = Table(title=f"Store ingest: {args.trajectories} trajectories x {STEPS_PER_TRAJECTORY} steps per "
                            f"writer, batches of {BATCH} ({os.cpu_count()} cores)")
        for column in ("writers", "steps/s", "note"):
            table.add_column(column, justify="right" if column == "steps/s" else "left")
        for what, rate, note in store_rows(tmp, args.writers, args.trajectories):
            table.add_row(what, f"{rate:,.0f}", note)
        console.print(table)
        one = step_seconds(tmp, 1, args.steps, args.batch)
        two = step_seconds(tmp, 2, args.steps, args.batch)
    def median(steps: list[dict[str, float]], part: str) -> float:
        return statistics.median(s[part] for s in (steps[1:] or steps))

    table = Table(title=f"GRPO step time, global batch {args.batch} rows, {args.steps} steps (median after the first)")
    for column in ("ranks", "s/step", "rollout s", "reward s", "update s", "each step"):
        table.add_column(column)
    for label, steps in (("1 (2 threads)", one), ("2 gloo ranks (1 thread each)", two)):
        table.add_row(label, *(f"{median(steps, p):.2f}" for p in ("step", "rollout", "reward", "update")),
                      " ".join(f"{s['step']:.2f}" for s in steps))
    console.print(table)
    console.print(f"2 ranks / 1 rank step time: {median(two, 'step') / median(one, 'step'):.2f}x")


if __name__ == "__main__":
    main()
