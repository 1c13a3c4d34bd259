"""Evaluation throughput, measured in one run; prints ratios, never asserts.

    python benchmarks/eval_throughput.py            # both parts (about 2 minutes on 2 cores)
    python benchmarks/eval_throughput.py --part world
    python benchmarks/eval_throughput.py --part rig
    python benchmarks/eval_throughput.py --part rig --c 1024 --latency-ms 1000 --mix world+tau2 --n 4096

(a) world: trajectories per second on the offline world with a scripted policy (the full engine, real
    tools, graders and store writes), and where one rollout's wall time goes: tool execution vs the
    engine's own work (prompting, parsing, validation, grading, store writes), at concurrency 1 so
    the attribution is exact.
(b) rig: the fixed-latency OpenAI-compatible server of `../shared/perf` (L = `--latency-ms`, K =
    `--tool-turns` tool turns written as `<tool_call>` text, then an answer: K + 1 calls a rollout) is
    driven, at each concurrency C of `--c`, first by a bare aiohttp loop (this file with `--bare-client`:
    the same opening messages, one connection pool, orjson, nothing else) and then by `orchestra eval`
    with an `openai:` orchestrator, each run under its `measure.py`, N = `--n` rollouts each. The limit
    is C / L calls per second (C calls in flight, each taking L); the table gives each client's eval-phase
    call rate, its fraction of that limit, harness CPU per call, and the ratio harness / bare.
    `--mix` picks the tasks: `world` is the offline world's frames- and hle-like ones (cheap grading, so
    the figure is the harness's); `world+tau2` interleaves them with tau2 retail and airline tasks
    (`lab.benchmarks.tau2`: scripted user, retail's shop executed on each rollout's own database and
    graded as tau2 grades it, airline's recorded calls). The model calls `--tool-name`, by default the
    retail read `get_user_details` with wrong arguments: on retail tasks it reaches the shop, on the
    others it is an unknown tool. The harness runs this file's `SOURCE` (`--benchmark
    benchmarks/eval_throughput.py:<mix>`), so the mix needs no lab change.
    Measured on 2 cores (docs/cli.md, "How fast"): at C=1024, L=1 s with tau2 in the mix, the bare loop
    0.96 of the limit and the harness 0.93 (0.97 of the bare loop). The rig's own references
    (`../shared/perf/README.md`, C=64, L=100 ms, native tool calls): Inspect AI 0.27-0.29, a bare
    openai-SDK loop 0.69-0.77, raw aiohttp 0.92-0.97.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PERF = REPO.parent / "shared" / "perf"
MIXES = ("world", "tau2")
#: What the bare loop sends back for a tool call (about as long as the harness's error observation).
BARE_TOOL_RESPONSE = ('<tool_response name="get_user_details">\nError: unknown tool (available: sim:qwen3-32b)\n'
                      '</tool_response>')


def world_part(n_tasks: int = 120) -> None:
    from lab import toolkit as toolkits
    from lab.eval.config import EvalConfig
    from lab.eval.harness import run_eval
    from lab.store import Store

    timings = {"tools": 0.0}
    build = toolkits._build  # every tool of a free-form toolkit is built here: time each one's calls

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

    toolkits._build = timed_build
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


# ---- the task mix, as a benchmark file the harness runs (`--benchmark benchmarks/eval_throughput.py:<mix>`) ----


def _interleave(groups: list[list[Any]]) -> list[Any]:
    """Round robin over `groups`, so the first T items of a mix hold every group in equal share."""
    out: list[Any] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def _open_mix(qualifier: str, path: str | None, split: str | None) -> Any:
    """The tasks of `<part>+<part>` (`world`: frames- and hle-like; `tau2`: retail and airline), interleaved,
    each graded, tooled and answered (tau2's scripted user) by the source it comes from."""
    from lab.benchmarks import tau2, world
    from lab.benchmarks.source import EvalSource
    from lab.errors import LabInputError

    parts = (qualifier or "world").split("+")
    if unknown := [p for p in parts if p not in MIXES]:
        raise LabInputError(f"mix: unknown part(s) {', '.join(unknown)} (choose from {', '.join(MIXES)})")
    opened, groups = [], []
    for part in parts:
        if part == "world":
            source = world.SOURCE.open("", path, split)
            source.tasks = [t for t in source.tasks if t.family != "tau2"]
            groups.append(source.tasks)
        else:
            source = tau2.SOURCE.open("", path, split)
            domains = sorted({t.domain for t in source.tasks})
            groups.append(_interleave([[t for t in source.tasks if t.domain == d] for d in domains]))
        opened.append(source)
    owner = {t.task_id: s for s in opened for t in s.tasks}

    async def grader(task: Any, answer: str | None, context: Any) -> float:
        return await owner[task.task_id].grader(task, answer, context)

    tasks = _interleave(groups)
    return EvalSource("throughput-mix", tasks, grader, [r for s in opened for r in s.records if r.task_id in owner],
                      task_tools=lambda task: owner[task.task_id].tools_for(task),
                      user=lambda task: owner[task.task_id].user_for(task))


def _load_mix(qualifier: str, path: str | None, split: str | None, limit: int | None, **options: Any) -> list[Any]:
    return _open_mix(qualifier, path, split).tasks[:limit]


def _source() -> Any:
    from lab.benchmarks.source import BenchmarkSource

    return BenchmarkSource(name="throughput-mix", usage="benchmarks/eval_throughput.py[:world+tau2]",
                           description="the rig's task mix: world (frames, hle) and/or tau2 (retail, airline)",
                           load=_load_mix, open=_open_mix, qualified=True)


def __getattr__(name: str) -> Any:
    """`SOURCE`, built when the harness asks for it, so the bare client never imports the lab."""
    if name == "SOURCE":
        globals()["SOURCE"] = source = _source()
        return source
    raise AttributeError(name)


def _openings(mix: str, n_tasks: int, toolkit: str) -> list[list[str]]:
    """(system prompt, first user message) of the first `n_tasks` tasks of the mix, as the harness sends
    them: the bare loop sends the same bytes, so both clients cost the server the same."""
    from lab.benchmarks.tau2_user import ScriptedUser
    from lab.rollout.prompt import system_prompt
    from lab.toolkit import build_tools, load_toolkit

    source = _open_mix(mix, None, None)
    tools = build_tools(load_toolkit(toolkit))
    out = []
    for task in source.tasks[:n_tasks]:
        specs = [t.spec for t in {**tools, **source.tools_for(task)}.values()]
        user = source.user_for(task)
        opening = user.session(task).opening() if isinstance(user, ScriptedUser) else task.question
        out.append([system_prompt(specs), opening])
    return out


# ---- the bare client: what a perfect harness costs -------------------------------------------------


async def bare_client(url: str, n: int, c: int, openings_file: str) -> None:
    """N rollouts by C workers: post the conversation, append the reply and (for a `<tool_call>`) a short
    tool result, until the server answers; one aiohttp pool, orjson, nothing stored or graded."""
    import aiohttp
    import orjson

    openings = json.loads(Path(openings_file).read_text())
    headers = {"Authorization": "Bearer EMPTY", "Content-Type": "application/json"}
    samples = iter(range(n))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                     timeout=aiohttp.ClientTimeout(total=600)) as http:

        async def worker() -> None:
            for i in samples:
                system, opening = openings[i % len(openings)]
                messages = [{"role": "system", "content": system}, {"role": "user", "content": opening}]
                while True:
                    payload = {"model": "qwen3-8b", "messages": messages, "temperature": 1.0, "seed": i}
                    async with http.post(f"{url}/chat/completions", data=orjson.dumps(payload),
                                         headers=headers) as response:
                        text = orjson.loads(await response.read())["choices"][0]["message"]["content"] or ""
                    messages.append({"role": "assistant", "content": text})
                    if "<tool_call>" not in text:
                        break
                    messages.append({"role": "user", "content": BARE_TOOL_RESPONSE})

        await asyncio.gather(*(worker() for _ in range(c)))


# ---- (b) the rig -----------------------------------------------------------------------------------


def _start_server(folder: Path, latency_ms: int, tool_turns: int, tool_name: str) -> tuple[subprocess.Popen, str]:
    ready = folder / "port"
    server = subprocess.Popen([sys.executable, str(PERF / "fake_openai_server.py"), "--latency-ms", str(latency_ms),
                               "--tool-turns", str(tool_turns), "--text-tool-calls", "--tool-name", tool_name,
                               "--ready-file", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (ready.exists() and ready.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)  # waiting for the server to report its port
    return server, f"http://127.0.0.1:{ready.read_text().strip()}"


def rig_part(concurrencies: list[int], latency_ms: int, tool_turns: int, n: int, mix: str, n_tasks: int,
             tool_name: str) -> list[dict[str, Any]]:
    """Bare loop, then harness, at each concurrency, against one server; returns measure.py's records."""
    toolkit = str(REPO / "configs" / "toolkits" / "perf.yaml")
    openings = _openings(mix, n_tasks, toolkit)
    n_tasks = len(openings)
    samples = math.ceil(n / n_tasks)
    n = n_tasks * samples
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "openings.json").write_text(json.dumps(openings))
        results = folder / "results.jsonl"
        server, url = _start_server(folder, latency_ms, tool_turns, tool_name)
        try:
            for c in concurrencies:
                bare = [sys.executable, __file__, "--bare-client", url, "--n", str(n), "--c", str(c),
                        "--openings", str(folder / "openings.json")]
                harness = [sys.executable, "-c", "from orchestra.cli import main; main()", "eval",
                           "--benchmark", f"{Path(__file__).resolve()}:{mix}", "--split", "all",
                           "--limit", str(n_tasks), "--samples", str(samples), "--temperature", "1",
                           "--orchestrator", f"openai:qwen3-8b@{url}/v1", "--toolkit", toolkit,
                           "--concurrency", str(c), "--db", str(folder / f"rig{c}.duckdb")]
                for label, command in (("bare aiohttp", bare), ("orchestra eval", harness)):
                    log = folder / f"{label.split()[0]}-{c}.log"
                    done = subprocess.run([sys.executable, str(PERF / "measure.py"), "run", "--url", url, "--n",
                                           str(n), "--c", str(c), "--label", label, "--results", str(results),
                                           "--output", str(log), "--extra", f"mix={mix}", "--", *command])
                    if done.returncode != 0:
                        sys.exit(f"{label} at C={c} failed (rc {done.returncode}):\n{log.read_text()[-3000:]}")
            records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        finally:
            server.terminate()
            server.wait(10)
    return records


def print_rig(records: list[dict[str, Any]]) -> None:
    """One rich table: each client's rate against the limit C / L, and the harness against the bare loop."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Eval-phase call rate against the limit C / L (fixed-latency rig, ../shared/perf)")
    for name in ("client", "C", "L", "mix", "rollouts x calls", "calls/s", "limit C/L", "of limit",
                 "harness / bare", "CPU ms/call", "cores busy", "mean in-flight"):
        table.add_column(name, justify="left" if name in ("client", "mix") else "right")
    bare_rate: dict[int, float] = {}
    for r in records:
        rate = r.get("calls_per_s") or 0.0
        if r["label"].startswith("bare"):
            bare_rate[r["c"]] = rate
        ratio = rate / bare_rate[r["c"]] if not r["label"].startswith("bare") and bare_rate.get(r["c"]) else None
        calls = f"{r['n']} x {r['k'] + 1}" + ("" if r["calls"] == r["expected_calls"] else f" ({r['calls']} calls!)")
        table.add_row(r["label"], str(r["c"]), f"{r['latency_ms'] / 1000:g} s", r.get("mix", ""), calls,
                      f"{rate:.0f}", f"{r['ideal_calls_per_s']:.0f}", f"{r.get('achieved_over_ideal', 0.0):.3f}",
                      "-" if ratio is None else f"{ratio:.3f}", f"{r.get('eval_cpu_ms_per_call', float('nan')):.2f}",
                      f"{r.get('eval_cpu_cores', float('nan')):.2f}", f"{r.get('mean_inflight') or 0:.0f}")
    console = Console()
    if not console.is_terminal:  # a log file or a pipe: wide enough that no column is cut
        console.width = 170
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["world", "rig", "both"], default="both")
    parser.add_argument("--c", type=int, nargs="+", default=[16, 64], help="rig: concurrencies C (default 16 64)")
    parser.add_argument("--latency-ms", type=int, default=100, help="rig: the server's latency L per call")
    parser.add_argument("--tool-turns", type=int, default=4, help="rig: tool turns K before the answer")
    parser.add_argument("--n", type=int, default=256, help="rig: rollouts per client (rounded up to whole samples)")
    parser.add_argument("--mix", default="world", help="rig: world, tau2 or world+tau2")
    parser.add_argument("--tasks", type=int, default=256, help="rig: distinct tasks (the first of the mix)")
    parser.add_argument("--tool-name", default="get_user_details", help="rig: the tool the server calls")
    parser.add_argument("--bare-client", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--openings", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_client:
        asyncio.run(bare_client(args.bare_client.rstrip("/") + "/v1", args.n, args.c[0], args.openings))
        return
    if args.part in ("world", "both"):
        world_part()
    if args.part in ("rig", "both"):
        print_rig(rig_part(args.c, args.latency_ms, args.tool_turns, args.n, args.mix, args.tasks, args.tool_name))


if __name__ == "__main__":
    main()
