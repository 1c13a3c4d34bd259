"""Where a tau2 domain's files are: a domain folder (holding `tasks.json`) under a benchmarks folder.

Why its own module: the tau2 loader (`lab.benchmarks.tau2`), whose source opens the executed retail
shop, and that shop's database (`lab.benchmarks.tau2_retail_db`) both find files here; kept apart, the
two import each other through nothing.
"""

from __future__ import annotations

from pathlib import Path

from lab.benchmarks.base import default_benchmarks_dir
from lab.env.layout import TASKS_FILE
from lab.errors import LabInputError


def domain_dir(domain: str, path: str | Path | None = None) -> Path:
    """The folder of `domain`: `path` itself if it holds tasks.json, else `path/domain` or `path/tau2/domain`."""
    base = Path(path) if path is not None else default_benchmarks_dir()
    for candidate in (base, base / domain, base / "tau2" / domain):
        if (candidate / TASKS_FILE).is_file():
            return candidate
    raise LabInputError(f"{base}: no {TASKS_FILE} for tau2 domain '{domain}' here, in {domain}/ or tau2/{domain}/")


def available_domains(path: str | Path | None = None) -> list[str]:
    """Domain folders (holding tasks.json) under `path/tau2`, `path`, or the default benchmarks folder."""
    base = Path(path) if path is not None else default_benchmarks_dir()
    if (base / TASKS_FILE).is_file():
        return [base.name]
    for root in (base / "tau2", base):
        if root.is_dir():
            found = sorted(d.name for d in root.iterdir() if (d / TASKS_FILE).is_file())
            if found:
                return found
    raise LabInputError(f"{base}: no tau2 domain folders (each holding {TASKS_FILE}) here or in tau2/")
