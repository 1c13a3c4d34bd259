"""`orchestra world build|info`: build (or reuse) the offline world and describe it.

    orchestra world build                 # full world into the cache; instant when already built
    orchestra world build --seed 3 --force --out runs/world3 --json
    orchestra world info --recall         # counts, paths and local-search recall@5 on multi-hop tasks
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from lab.world.tasks import SPLITS
from orchestra.cli.options import JsonOption, console, print_json

world_app = typer.Typer(help="Build and inspect the offline world (corpus, tasks, bookshop DB, search index).",
                        no_args_is_help=True)

SeedOption = typer.Option(0, "--seed", help="World seed; each seed is a different, reproducible world.")
OutOption = typer.Option(None, "--out", help="World folder (else the cache: $ORCHESTRA_CACHE/world/v<V>-seed<N>).")
SmallOption = typer.Option(False, "--small", help="A small world (300 docs, ~100 tasks) for quick experiments.")


def _size(small: bool):
    from lab.world.tasks import WorldSize

    return WorldSize.small() if small else WorldSize()


@world_app.command("build")
def build(
    seed: int = SeedOption,
    force: bool = typer.Option(False, "--force", help="Rebuild even when a complete cached world exists."),
    out: Path | None = OutOption,
    small: bool = SmallOption,
    no_index: bool = typer.Option(False, "--no-index", help="Skip the search index (no embedding model needed)."),
    as_json: bool = JsonOption,
) -> None:
    """Build the world, or reuse the cached one with the same version, seed and size."""
    from lab.world.build import build_world

    started = time.perf_counter()
    world = build_world(out, seed=seed, force=force, progress=not as_json, size=_size(small), index=not no_index)
    summary = _summary(world, seconds=time.perf_counter() - started)
    if as_json:
        print_json(summary)
    else:
        _print(summary)


@world_app.command("info")
def info(
    seed: int = SeedOption,
    out: Path | None = OutOption,
    small: bool = SmallOption,
    recall: bool = typer.Option(False, "--recall", help="Also measure local-search recall@5 (embeds ~1000 queries)."),
    as_json: bool = JsonOption,
) -> None:
    """Describe a built world: counts per family, split and domain, files and build time."""
    from lab.world.build import load_world, retrieval_recall

    world = load_world(out, seed=seed, size=_size(small))
    summary = _summary(world, seconds=None)
    if recall:
        summary["retrieval_recall"] = retrieval_recall(world, k=5)
    if as_json:
        print_json(summary)
    else:
        _print(summary)


def _summary(world: Any, seconds: float | None) -> dict[str, Any]:
    m = world.manifest
    return {
        "path": str(world.root), "version": m["version"], "seed": m["seed"], "reused_cache": world.reused,
        "content_hash": m["content_hash"], "documents": m["counts"]["documents"], "tasks": m["counts"]["tasks"],
        "domains": m["counts"]["domains"], "index": str(world.index_dir) if world.index_dir else None,
        "build_seconds": m["build_seconds"], "seconds": round(seconds, 2) if seconds is not None else None,
    }


def _print(summary: dict[str, Any]) -> None:
    table = Table(title=f"offline world v{summary['version']} seed {summary['seed']}")
    for col in ("family", *SPLITS, "total"):
        table.add_column(col, justify="left" if col == "family" else "right")
    for family, splits in summary["tasks"].items():
        table.add_row(family, *(str(splits[split]) for split in SPLITS), str(sum(splits.values())))
    console.print(table)
    domains = Table(title="tasks per domain")
    domains.add_column("family/domain")
    domains.add_column("tasks", justify="right")
    for name, count in summary["domains"].items():
        domains.add_row(name, str(count))
    console.print(domains)
    console.print(f"documents: {summary['documents']}   content hash: {summary['content_hash'][:12]}")
    console.print(f"path: {summary['path']}   index: {summary['index'] or 'not built'}")
    if summary["reused_cache"]:
        console.print(f"reused cache (built in {summary['build_seconds']} s earlier)")
    elif summary["seconds"] is not None:
        console.print(f"built in {summary['seconds']} s")
    if "retrieval_recall" in summary:
        r = summary["retrieval_recall"]
        console.print(f"local search recall@{r['k']} on {r['tasks']} multi-hop tasks: question {r['question']:.3f}, "
                      f"first hop {r['first_hop']:.3f}, per hop {r['per_hop']:.3f}")
