"""The app as a whole (`app/main.py`, the router over `app.navigation.PAGES`): every page rendered in a
fresh process leaves torch and the trainer unimported (the Playground, which runs models, is opened last
and alone may load them), and every page has its own test module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.navigation import PAGES
from tests.helpers.dashboard import MAIN


def test_the_app_imports_neither_torch_nor_the_trainer(app_store):
    """Every page but the Playground rendered in a fresh process: the dashboard must start fast and stay away
    from the GPU stack until a user asks to run a model."""
    light = [page for page in PAGES if page != "playground"]
    script = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({MAIN!r}, default_timeout=120).run()\n"
        f"for page in {light!r}:\n"
        "    at.switch_page(f'views/{page}.py').run()\n"
        "    assert not at.exception, at.exception\n"
        "print(sorted(m for m in ('torch', 'trainer', 'transformers', 'trl') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_every_page_has_its_test_module_on_a_seeded_and_an_empty_store():
    """A page added to `PAGES` is tested like the others: `tests/app/test_<url path>.py` renders it on the
    seeded store and on an empty one."""
    for page in PAGES:
        module = Path(__file__).with_name(f"test_{page}.py")
        assert module.exists(), f"{page}: no {module.name}"
        text = module.read_text()
        for test, check in (("test_the_page_renders_on_a_seeded_store", "assert_renders"),
                            ("test_an_empty_store_says_what_to_do", "assert_says_the_store_is_empty")):
            assert f"def {test}(" in text and f'{check}("{page}")' in text, f"{module.name}: no {test}"
