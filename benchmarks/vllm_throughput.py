"""An evaluation through a vLLM server against the same model in-process (`hf:`), in one run; prints figures, \
never asserts.

    python benchmarks/vllm_throughput.py                 # 200 world tasks, both protocols, 3 repeats, concurrency 8
    python benchmarks/vllm_throughput.py --tasks 100 --repeats 5 --concurrency 16

The model is the tiny Qwen3 fitted to always make one call (`trainer.fixed_caller`), so every rollout
is the same shape through both engines: its prompt prefilled, one ~20-token call decoded, the task
ended by `answer`. The same `orchestra eval` (paper-small toolkit, greedy, world frames and hle tasks)
runs once as `hf:<folder>` and once as `openai:caller@<server>`; the figures are the orchestrator's
prompt and generated tokens per second of wall time, from the tokens the store logged, and their
ratio, per repeat (the two engines alternate which goes first) and as the median with its range. Also
printed: how long the server took to start. The vLLM environment comes from
`scripts/install_vllm.sh`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def run(orchestrator: str, protocol: str, tasks: int, concurrency: int, folder: Path) -> tuple[float, int, int]:
    """(wall seconds, prompt tokens, generated tokens) of one evaluation."""
    from rich.console import Console

    from lab.eval.config import EvalConfig
    from lab.eval.harness import run_eval
    from lab.store import Store, queries

    config = EvalConfig(benchmark="world:frames", split=None, limit=tasks, orchestrator=orchestrator,
                        toolkit="paper-small",
                        protocol=protocol, max_new_tokens=48, concurrency=concurrency, run_name="bench")
    folder.mkdir(exist_ok=True)
    store = Store(folder / f"{orchestrator.split(':')[0]}-{protocol}.duckdb")
    started = time.perf_counter()
    run_eval(config, store, console=Console(quiet=True))
    wall = time.perf_counter() - started
    trajectories = queries.trajectories_df(store)
    return wall, int(trajectories.input_tokens.sum()), int(trajectories.output_tokens.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    from lab.testing.vllm_server import VLLMServer, vllm_unavailable
    from trainer.fixed_caller import build_fixed_caller

    reason = vllm_unavailable()
    if reason:
        raise SystemExit(reason)
    model = build_fixed_caller()
    with VLLMServer(model, name="caller", max_model_len=8192) as server, tempfile.TemporaryDirectory() as tmp:
        print(f"vLLM server healthy in {server.started_in_s:.1f} s")
        for warm_up in (f"hf:{model}", f"openai:caller@{server.base_url}"):  # load weights, first kernels: untimed
            run(warm_up, "rounds", 4, 2, Path(tmp) / "warm-up")
        engines = {"hf": f"hf:{model}", "vllm": f"openai:caller@{server.base_url}"}
        for protocol in ("rounds", "conversation"):
            ratios = []
            for repeat in range(args.repeats):
                order = list(engines) if repeat % 2 == 0 else list(reversed(engines))
                speed = {}
                for name in order:
                    wall, prompt, generated = run(engines[name], protocol, args.tasks, args.concurrency,
                                                  Path(tmp) / f"{protocol}-{repeat}")
                    speed[name] = (prompt + generated) / wall
                    print(f"{protocol:12s} #{repeat} {name:4s}: {args.tasks} tasks in {wall:5.1f} s; prompt "
                          f"{prompt / wall:7.0f} tok/s, generated {generated / wall:5.0f} tok/s", flush=True)
                ratios.append(speed["vllm"] / speed["hf"])
            print(f"{protocol:12s} vLLM / hf tokens/s (prompt + generated): median {statistics.median(ratios):.2f}x "
                  f"(range {min(ratios):.2f}x to {max(ratios):.2f}x over {args.repeats} repeats)", flush=True)

if __name__ == "__main__":
    main()
