"""mypy over the typed core (pyproject.toml `[tool.mypy]`: lab/reward.py, lab/store/, trainer/): a wrong
argument type, a possibly-None value used as a value, or an unannotated function there fails the suite
where it is written. The paths and rules live in the config, so a bare `mypy` at the root checks the same."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_mypy_finds_nothing():
    # the repo's (git-ignored) .mypy_cache: a few seconds cold, under one warm
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                             "--cache-dir", str(REPO / ".mypy_cache")],
                            capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
