"""`orchestra synth`: build ToolScale domains offline, verify their tasks, write them as tau2 folders.

    orchestra synth --domains all --tasks-per-domain 30 --out data/toolscale
    orchestra synth --domains bank --out data/ts --solver openai:qwen3-32b@http://gpu:8000/v1  # + pass@8
    orchestra synth --domains library,bank --out data/ts-llm --llm writer --toolkit my-endpoints.yaml
    orchestra eval --benchmark toolscale:data/toolscale --orchestrator scripted:oracle

The run and its statistics (per domain: generated, dropped by each filter, kept) are recorded in the
store as a `kind='synth'` run, so a dataset can be traced to the seed and code that made it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from lab.errors import LabInputError
from orchestra.cli.options import DbOption, JsonOption, console, print_json
from orchestra.cli.root import app


@app.command("synth")
def synth(
    out: Path = typer.Option(
        ..., "--out", help="Folder for the domain folders (tasks.json, split_tasks.json, db.json, policy.md)."),
    domains: str = typer.Option("all", "--domains", help="Comma-separated domain names, or all."),
    tasks_per_domain: int = typer.Option(30, "--tasks-per-domain", min=1, help="Verified tasks to keep per domain."),
    seed: int = typer.Option(0, "--seed", help="Seed of the data and the tasks (each seed a different dataset)."),
    solvers: list[str] = typer.Option(
        [], "--solver", help="An orchestrator for the pass@N filter (repeatable); none: no pass@N."),
    pass_at: int = typer.Option(
        8, "--pass-at", min=1, help="Rollouts per task per --solver; tasks every rollout solves are dropped."),
    drop_unsolved: bool = typer.Option(False, "--drop-unsolved", help="pass@N also drops tasks no rollout solves."),
    llm: str | None = typer.Option(None, "--llm", help="An LLM tool of --toolkit that writes the domains (any names); "
                                      "without it the built-in domains are generated offline."),
    toolkit: str = typer.Option("default", "--toolkit", help="Toolkit holding the --llm tool (a name or YAML path)."),
    llm_attempts: int = typer.Option(3, "--llm-attempts", min=1, help="Answers per stage before a domain fails."),
    llm_concurrency: int = typer.Option(4, "--llm-concurrency", min=1, help="LLM calls in flight at once."),
    db: str | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Synthesize tool-use domains and verified multi-turn tasks (ToolScale, offline)."""
    from lab.records import RunRecord, git_sha
    from lab.store import Store, resolve_db_path
    from lab.synth import DOMAINS
    from lab.synth.dataset import write_dataset

    names = list(DOMAINS) if domains == "all" else [d.strip() for d in domains.split(",") if d.strip()]
    unknown = [n for n in names if n not in DOMAINS]
    if not names or (unknown and not llm):
        raise LabInputError(f"--domains: unknown domain '{(unknown or [domains])[0]}' "
                            f"(choose from {', '.join(DOMAINS)} or all; with --llm any name)")
    writer = _writer(llm, toolkit) if llm else None
    config = {"domains": names, "tasks_per_domain": tasks_per_domain, "seed": seed, "out": str(out),
              **({"pass_at": pass_at, "solvers": solvers, "drop_unsolved": drop_unsolved} if solvers else {}),
              **({"llm": llm, "toolkit": toolkit, "llm_attempts": llm_attempts} if llm else {})}
    run_id = "synth-" + hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]
    store = Store(resolve_db_path(db))
    store.write_run(RunRecord(run_id=run_id, kind="synth", name="synth", config_json=json.dumps(config),
                              git_sha=git_sha(), benchmark=f"toolscale:{out}"))
    try:
        with Progress(console=console, disable=as_json, transient=True) as progress:
            bar = progress.add_task("synth", total=len(names))

            def on_domain(name: str) -> None:
                progress.update(bar, description=f"synth {name}", completed=names.index(name))

            if writer is None:
                stats = write_dataset(out, names, tasks_per_domain, seed, on_domain)
            else:
                stats = _llm_dataset(writer, out, names, tasks_per_domain, seed, llm_attempts,
                                               llm_concurrency, lambda name, stage: progress.update(
                                                   bar, description=f"synth {name}: {stage}"))
            progress.update(bar, completed=len(names))
        if solvers:
            from lab.eval.passk import pass_at_n_filter

            for name, counts in pass_at_n_filter(out, names, solvers, pass_at, store, drop_unsolved,
                                                 None if as_json else console, seed).items():
                stats[name].update(counts)
    except BaseException:
        store.finish_run(run_id, "failed")
        raise
    store.write_run(RunRecord(run_id=run_id, kind="synth", name="synth",
                              config_json=json.dumps({**config, "stats": stats}),
                              git_sha=git_sha(), benchmark=f"toolscale:{out}"))
    failed = {name: s["error"] for name, s in stats.items() if "error" in s}
    store.finish_run(run_id, "failed" if failed else "finished")
    if failed:
        raise LabInputError("; ".join(f"synth {name}: {error}" for name, error in failed.items()))
    if as_json:
        print_json({"run_id": run_id, "out": str(out), "stats": stats})
        return
    table = Table(title=f"ToolScale synthesis ({run_id})")
    filters = sorted({k for s in stats.values() for k in s if k.startswith("filter/")})
    for column in ("domain", "tools", "generated", *[f.removeprefix("filter/") for f in filters], "kept"):
        table.add_column(column, justify="left" if column == "domain" else "right")
    for name, s in stats.items():
        table.add_row(name, str(s.get("tools", "-")), str(s.get("tasks/generated", 0)),
                      *[str(s.get(f, 0)) for f in filters], str(s.get("tasks/kept", 0)))
    console.print(table)
    console.print(f"next: orchestra eval --benchmark toolscale:{out} --split test --orchestrator scripted:oracle")


def _writer(name: str, toolkit: str):
    """The `--llm` tool, refused when it is a simulated model: only a real one can write code."""
    from lab.eval.checks import llm_tool_spec
    from lab.toolkit import build_tools, load_toolkit

    kit = load_toolkit(toolkit)
    if llm_tool_spec(kit, name, "--llm").simulated:
        raise LabInputError(f"--llm {name!r}: a simulated model of the offline world cannot write a domain; "
                            "give a toolkit whose tool is a real endpoint (backend kind openai)")
    return build_tools(kit)[name]


def _llm_dataset(tool, out: Path, names: list[str], n_tasks: int, seed: int, attempts: int, concurrency: int,
                 on_stage) -> dict[str, dict]:
    """Generate the domains with the LLM and write each one that came out; per-domain stats (with
    `error` for a domain that stopped at a stage) and the LLM call counts under `llm/`."""
    import asyncio

    from lab.synth.export import export_domain, folder_hash, pack
    from lab.synth.llm_generate import LLMSettings, generate_domains

    settings = LLMSettings(max_attempts=attempts, concurrency=concurrency)
    results, client = asyncio.run(generate_domains(names, n_tasks, seed, tool, settings, on_stage))
    stats: dict[str, dict] = {}
    for result in results:
        counts = dict(sorted(result.counts.items()))
        if result.error is not None:
            stats[result.name] = {**counts, "error": result.error}
            continue
        folder = export_domain(pack(result.domain, result.db, result.tasks, seed), out / result.name)
        stats[result.name] = {"tools": len(result.domain.tools), **counts, "folder_hash": folder_hash(folder)}
    calls = {"llm/requests": client.requests, "llm/cache_hits": client.cache_hits}
    for entry in stats.values():
        entry.update(calls)  # shared by the domains: the run's totals
    return stats
