"""What a training launched on several ranks (`torchrun`, `accelerate launch`, `orchestra train --nproc`)
needs beyond one process: the warm start built once, a store every rank writes without a lock, and a rank
that stops named in one line.

- **Warm start.** The SFT is a Trainer of its own; inside a multi-rank launch it would join the ranks'
  process group and wait on ranks that are not training it. So rank 0 builds it in a child process that
  sees no launcher (`warm_start_once`), exactly as `orchestra train sft` would in one process (the same
  folder and fingerprint, so a 1-rank run of the config reuses it), while the other ranks wait on a
  collective of their own with no timeout that matters (a day), then every rank loads it.
- **Store.** Every rank writes its rollouts, and its shard of each periodic evaluation, through a spooled
  store (`lab.store.spool`: segments, no lock, any host); rank 0 writes the run's row and the per-step
  metrics, and folds the segments into the file once every rank is done (`fold_spool`).
- **A rank that stops.** The launcher ends the others when one dies; `stopped_by_launcher` turns the
  SIGTERM it sends into an interrupt, so the run is recorded `interrupted` and its checkpoints resume.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from lab.errors import LabInputError
from lab.store import Store
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment

#: Variables a launcher sets for its ranks; a process started without them is a single process again.
_LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                  "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT")
_LAUNCHER_PREFIXES = ("TORCHELASTIC_", "ACCELERATE_DEEPSPEED_", "ACCELERATE_USE_DEEPSPEED", "ACCELERATE_USE_FSDP",
                      "FSDP_")
#: How long the other ranks wait for rank 0's warm start (an SFT of a large model takes hours, not days).
WARM_START_WAIT = timedelta(days=1)


def rank_store(store: Store, state: Any) -> Store:
    """The store this rank writes: `store` itself in one process, a spooled handle on it on several."""
    if state.num_processes == 1 or store.spooled:
        return store
    return Store(store.path, timeout_s=store.timeout_s, spool=True)


@contextlib.contextmanager
def _without_launcher() -> Iterator[None]:
    """os.environ without the launcher's variables, restored on exit (a spawned child copies it)."""
    removed = {k: v for k, v in os.environ.items() if k in _LAUNCHER_VARS or k.startswith(_LAUNCHER_PREFIXES)}
    for key in removed:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(removed)


def _build_warm_start(config: OrchestraGRPOConfig, db: str) -> None:
    """The child's work: what `orchestra train sft` does, in a process of its own."""
    from lab.output import quiet_libraries
    from trainer.sft import train_sft

    quiet_libraries()  # a spawned process starts with Python's default warning filters: the command's choice again
    console = Console()
    try:
        train_sft(config, Store(db), TrainingEnvironment(config), console)
    except LabInputError as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False, soft_wrap=True)
        sys.exit(error.exit_code)


def warm_start_once(config: OrchestraGRPOConfig, store: Store, environment: TrainingEnvironment, console: Console,
                    state: Any) -> Path:
    """The warm-start model's folder, built by one process whatever the number of ranks (see the module)."""
    from trainer.sft import train_sft, warm_start_dir

    if state.num_processes == 1:
        return train_sft(config, store, environment, console)
    import torch.distributed as dist

    waiting = dist.new_group(backend="gloo", timeout=WARM_START_WAIT)  # every rank creates it, then waits on it
    outcome: list[int | None] = [None]
    if state.is_main_process:
        context = multiprocessing.get_context("spawn")
        with _without_launcher():
            child = context.Process(target=_build_warm_start, args=(config, str(store.path)), name="warm-start")
            child.start()
        child.join()
        outcome = [child.exitcode]
    dist.broadcast_object_list(outcome, src=0, group=waiting)
    dist.destroy_process_group(waiting)
    if outcome[0] != 0:
        raise LabInputError(f"warm start: rank 0 failed to build {warm_start_dir(config)} (exit {outcome[0]}; its "
                            "error is above)")
    return warm_start_dir(config)


@contextlib.contextmanager
def stopped_by_launcher(state: Any) -> Iterator[None]:
    """On several ranks, SIGTERM (what a launcher sends the others when one rank dies) interrupts this rank
    as Ctrl-C would, so the run is marked interrupted and `--resume` continues it."""
    if state.num_processes == 1:
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"rank {state.process_index}: stopped by the launcher (another rank ended)")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def fold_spool(store: Store) -> None:
    """Rank 0, once every rank is done: the segments the ranks wrote, folded into the store's file."""
    if store.spooled:
        Store(store.path, timeout_s=store.timeout_s).compact()
