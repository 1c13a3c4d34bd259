"""ruff over the whole tree with the project's rules (pyproject.toml `[tool.ruff]`: pyflakes, isort, bugbear,
pyupgrade): dead names, unsorted imports, likely bugs and old idioms fail the suite where they are written."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", str(REPO)],
                            capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
