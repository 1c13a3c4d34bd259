"""`orchestra store`: fold what many writers appended into one store file.

    orchestra store compact --db runs/orchestra.duckdb          # the spool's segments into the file
    orchestra store merge shard-1.duckdb shard-2.duckdb --db all.duckdb   # other store files into one
"""

from __future__ import annotations

from pathlib import Path

import typer

from lab.errors import LabInputError
from lab.store import Store, resolve_db_path
from lab.store.merge import merge_stores, shard_states
from orchestra.cli.options import DbOption, console

store_app = typer.Typer(help="Fold what several writers (training ranks, evaluation shards, machines) wrote into "
                             "one store file.", no_args_is_help=True)


@store_app.command("compact")
def compact_command(db: str | None = DbOption) -> None:
    """Fold the spool's segments (`<db>.spool/`, written by ranks and `--shard` runs) into the file.
    Readers see them before too; compacting makes reads fast again and frees the folder."""
    store = Store(resolve_db_path(db))
    folded = store.compact()
    console.print(f"{store.path}: folded {folded} segment{'s' * (folded != 1)} into the file")
    _print_shards(*shard_states(store))


@store_app.command("merge")
def merge_command(
    sources: list[Path] = typer.Argument(..., help="Store files to fold in (each machine's or shard's); only read."),
    db: str | None = DbOption,
) -> None:
    """Merge other store files into this one: every trajectory once, a sharded run's shards into one run."""
    missing = [s for s in sources if not s.is_file()]
    if missing:
        raise LabInputError(f"{missing[0]}: no store file here")
    store = Store(resolve_db_path(db))
    result = merge_stores(store, sources)
    console.print(f"{store.path}: merged {len(sources)} store{'s' * (len(sources) != 1)}, "
                  f"{result.rows['trajectories']} trajectories, {result.rows['steps']} steps")
    _print_shards(result.finished_runs, result.incomplete_runs)


def _print_shards(finished: list[str], incomplete: dict[str, list[int]]) -> None:
    """One line per sharded run: finished, or which shards are not (running, killed or never started)."""
    for run_id in finished:
        console.print(f"  {run_id}: every shard finished")
    for run_id, missing in incomplete.items():
        console.print(f"  {run_id}: shard{'s' * (len(missing) > 1)} {', '.join(map(str, missing))} not finished "
                      "(running, killed or not started); the same `orchestra eval` with --shard i/N resumes it")
