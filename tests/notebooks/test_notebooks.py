"""Every notebook runs top to bottom on the offline world (code cells executed in order, as Jupyter would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path, world):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    # each cell's last expression is what Jupyter would display: evaluate it so it must not raise
    program = "import ast\nns = {}\n" + "".join(
        f"cell = {''.join(c['source'])!r}\ntree = ast.parse(cell)\n"
        "last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None\n"
        "exec(compile(tree, 'cell', 'exec'), ns)\n"
        "shown = eval(compile(ast.Expression(last.value), 'cell', 'eval'), ns) if last else None\n"
        "print(type(shown).__name__)\n"
        for c in cells
    )
    env = {**os.environ, "ORCHESTRA_DB": str(tmp_path / "nb.duckdb"), "NOTEBOOK_LIMIT": "6"}
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    shown = result.stdout.split()
    assert "DataFrame" in shown and "Figure" in shown
