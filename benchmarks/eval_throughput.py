"""Evaluation throughput, measured in one run; prints ratios, never asserts.

    python benchmarks/eval_throughput.py            # both parts (about 2 minutes on 2 cores)
    python benchmarks/eval_throughput.py --part world
    python benchmarks/eval_throughput.py --part rig

(a) world: trajectories per second on the offline world with a scripted policy (the full engine, real
    tools, graders and store writes), and where one rollout's wall time goes: tool execution vs the
    engine's own work (prompting, parsing, validation, grading, store writes), at concurrency 1 so
    the attribution is exact.
(b) rig: `orchestra eval` with an `openai:` orchestrator against the fixed-latency OpenAI-compatible
    server of `../shared/perf` (L = 100 ms, K = 4 tool turns, N = 256), measured by its `measure.py`
    at concurrency 16 and 64: achieved / ideal call rate and harness CPU per call. Tasks are the
    offline world's frames- and hle-like ones, so grading is cheap and the figure is the harness's.
    Reference on a 2-core machine: Inspect AI 0.29 at C=64, a bare openai-SDK loop 0.77, raw aiohttp 0.94.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PERF = REPO.parent / "shared" / "perf"
INSPECT_C64 = 0.29


def world_part(n_tasks: int = 120) -> None:
    from lab.eval.config import EvalConfig
    from lab.eval.harness import run_eval
    from lab.store import Store
    from lab.tools import registry

    timings = {"tools": 0.0}
    build = registry._build

    def timed_build(spec):
        tool = build(spec)
        execute = tool.execute

        async def timed(arguments, context=None):
            started = time.perf_counter()
            try:
                return await execute(arguments, context)
            finally:
                timings["tools"] += time.perf_counter() - started

        tool.execute = timed
        return tool

    registry._build = timed_build
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 16):
            timings["tools"] = 0.0
            config = EvalConfig(benchmark="world", split=None, limit=n_tasks, orchestrator="scripted:cheapest-first",
                                toolkit=str(REPO / "configs" / "toolkits" / "world-offline.yaml"),
                                concurrency=concurrency, run_name=f"bench-c{concurrency}")
            store = Store(Path(tmp) / f"w{concurrency}.duckdb")
            started = time.perf_counter()
            (summary,) = run_eval(config, store)
            wall = time.perf_counter() - started
            line = (f"world, scripted:cheapest-first, concurrency {concurrency}: "
                    f"{summary.trajectories / wall:.1f} trajectories/s")
            if concurrency == 1:
                tool_share = timings["tools"] / wall
                line += (f"; wall time: tools {tool_share:.0%}, engine (prompt, parse, validate, grade, store) "
                         f"{1 - tool_share:.0%}")
            print(line, flush=True)


def rig_part(n: int = 256) -> None:
    from lab.world.build import build_world

    world = build_world(progress=False)
    task_ids = ",".join([t.task_id for t in world.tasks if t.family != "tau2"][:n])
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "port"
        server = subprocess.Popen([sys.executable, str(PERF / "fake_openai_server.py"), "--latency-ms", "100",
                                   "--tool-turns", "4", "--ready-file", str(ready)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not (ready.exists() and ready.read_text().strip()) and time.monotonic() < deadline:
                time.sleep(0.05)  # waiting for the server to report its port
            url = f"http://127.0.0.1:{ready.read_text().strip()}"
            results = Path(tmp) / "results.jsonl"
            for c in (16, 64):
                db = Path(tmp) / f"rig{c}.duckdb"
                command = [sys.executable, "-c", "from orchestra.cli import main; main()", "eval", "--benchmark",
                           "world",
                           "--split", "all", "--tasks", task_ids, "--orchestrator", f"openai:qwen3-8b@{url}/v1",
                           "--toolkit", str(REPO / "configs" / "toolkits" / "perf.yaml"), "--concurrency",
                           str(c), "--db", str(db)]
                subprocess.run([sys.executable, str(PERF / "measure.py"), "run", "--url", url, "--n", str(n), "--c",
                                str(c), "--label", "orchestra", "--results", str(results), "--", *command], check=True)
            records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        finally:
            server.terminate()
            server.wait(10)
    for r in records:
        extra = f" = {r['achieved_over_ideal'] / INSPECT_C64:.1f}x Inspect AI" if r["c"] == 64 else ""
        print(f"rig C={r['c']}: achieved/ideal {r['achieved_over_ideal']:.2f}{extra}; "
              f"harness CPU {r['eval_cpu_ms_per_call']:.2f} ms/call; mean in-flight {r['mean_inflight']:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["world", "rig", "both"], default="both")
    args = parser.parse_args()
    if args.part in ("world", "both"):
        world_part()
    if args.part in ("rig", "both"):
        rig_part()


if __name__ == "__main__":
    main()
