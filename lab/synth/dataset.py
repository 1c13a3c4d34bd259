"""A ToolScale dataset on disk: one tau2 domain folder per synthesized domain, and the default one.

Why a cached default: `--benchmark toolscale` (no folder) and a trainer config's `benchmark:
toolscale` should mean the synthesized dataset without asking the user to run `orchestra synth`
first, as `--benchmark world` builds the offline world on first use. The default is all registered
domains, 30 tasks each, seed 0, built into the cache under a key of the synthesis code's own bytes,
so editing a domain or a template gives a new dataset instead of silently reusing a stale one.

    stats = write_dataset("data/toolscale", ["bank", "railway"], n_tasks=30, seed=0)
    folder = default_dataset()          # built once, then reused
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lab.synth import DOMAINS, build_domain
from lab.synth.export import export_domain, folder_hash, pack

DEFAULT_TASKS_PER_DOMAIN = 30
STATS_FILE = "synth_stats.json"


def write_dataset(out: str | Path, names: list[str], n_tasks: int, seed: int,
                  on_domain: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Build each domain of `names` and write its folder under `out`; per-domain stats, by name.

    Stats are the tool count, `build_domain`'s counts (generated, dropped by each filter, kept) and
    the folder's content hash. `on_domain(name)` is called before each domain (a progress bar).
    """
    stats: dict[str, dict[str, Any]] = {}
    for name in names:
        if on_domain:
            on_domain(name)
        domain, data, tasks, counts = build_domain(name, n_tasks, seed)
        folder = export_domain(pack(domain, data, tasks, seed), Path(out) / name)
        stats[name] = {"tools": len(domain.tools), **counts, "folder_hash": folder_hash(folder)}
    return stats


def code_key() -> str:
    """A short hash of the synthesis code (every .py under lab/synth): the default dataset's version."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.py")):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def default_dataset(seed: int = 0, n_tasks: int = DEFAULT_TASKS_PER_DOMAIN) -> Path:
    """The cached dataset of every registered domain, built on first use (a few seconds).

    It is written to a temporary sibling folder and renamed into place, so an interrupted build
    never looks complete and two processes building at once both end with a whole folder.
    """
    from lab.world.build import cache_root  # the one cache root of the lab

    folder = cache_root() / "toolscale" / f"{code_key()}-seed{seed}-n{n_tasks}"
    if (folder / STATS_FILE).is_file():
        return folder
    staging = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    stats = write_dataset(staging, sorted(DOMAINS), n_tasks, seed)
    (staging / STATS_FILE).write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n")
    try:
        staging.rename(folder)
    except OSError:  # another process finished first: its folder is the same content
        shutil.rmtree(staging, ignore_errors=True)
    return folder
