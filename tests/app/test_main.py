"""The app as a whole (`app/main.py`, the router over `app.navigation.PAGES`): every page rendered in a
fresh process leaves torch and the trainer unimported."""

from __future__ import annotations

import subprocess
import sys

from app.navigation import PAGES
from tests.helpers.dashboard import MAIN


def test_the_app_imports_neither_torch_nor_the_trainer(app_store):
    """Every page rendered in a fresh process: the dashboard must start fast and stay away from the GPU stack."""
    script = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({MAIN!r}, default_timeout=120).run()\n"
        f"for page in {list(PAGES)!r}:\n"
        "    at.switch_page(f'views/{page}.py').run()\n"
        "    assert not at.exception, at.exception\n"
        "print(sorted(m for m in ('torch', 'trainer', 'transformers', 'trl') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
