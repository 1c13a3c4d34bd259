"""Every notebook runs top to bottom in a real Jupyter kernel (nbclient), headless, on the quick demo's
store, and shows what its reader came for: tables and plotly figures, never an error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"


def test_there_are_the_five_analyst_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path):
    cells = json.loads(path.read_text())["cells"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in cells if c["cell_type"] == "code")


@pytest.mark.timeout(600)   # the first to ask for `quick_demo` runs it: the world from an empty cache and every stage
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_on_the_demo_store(path: Path, quick_demo, tmp_path: Path, monkeypatch):
    db = tmp_path / "demo.duckdb"
    shutil.copy(quick_demo.db, db)  # notebooks may write (rescorings, an eval): each gets its own copy
    monkeypatch.setenv("ORCHESTRA_DB", str(db))  # the kernel inherits this process's environment
    notebook = nbformat.read(path, as_version=4)
    # run from notebooks/, as `jupyter lab notebooks/` would, so relative paths mean what they say
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = [o.get("data", {}) for o in outputs if o.output_type in ("execute_result", "display_data")]
    assert any(PLOTLY in data for data in shown), "no plotly figure shown"
    assert any("<table" in data.get("text/html", "") for data in shown), "no table shown"
