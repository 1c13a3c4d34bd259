"""`orchestra report` as a user runs it: real processes, real exit codes, real files."""

from __future__ import annotations

import json

import pytest

from tests.conftest import orchestra


@pytest.fixture
def store(store_of, make_run):
    return store_of(make_run("A", {f"t{i}": [1.0] for i in range(6)}),
                    make_run("B", {f"t{i}": [float(i < 2)] for i in range(6)}, tool="qwen3-32b"))


def test_json_holds_every_table_as_records(store):
    result = orchestra("report", "A", "B", "--json", "--pricing", "deepinfra", "--resamples", "200", db=store.path)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    for key in ("accuracy", "costs", "paired", "tool_calls", "bias", "preference", "pareto", "pareto_auc", "router",
                "turn_budgets", "reprice", "settings"):
        assert key in payload, key
    (pair,) = payload["paired"]
    assert (pair["run_a"], pair["run_b"], pair["n_shared"], pair["a_only"], pair["b_only"]) == ("A", "B", 6, 4, 0)
    assert pair["diff"] == pytest.approx(4 / 6)
    assert [r["run_id"] for r in payload["reprice"]] == ["A", "B"]


def test_tables_and_html_for_a_single_run(store, tmp_path):
    page = tmp_path / "report.html"
    result = orchestra("report", "B", "--html", str(page), db=store.path)
    assert result.returncode == 0, result.stderr
    assert "paired comparisons" not in result.stdout                     # one run: nothing to pair
    assert "0.333" in result.stdout and "qwen3-32b" in result.stdout    # accuracy 2/6, its tool
    html = page.read_text()
    assert html.count("Plotly.newPlot(") == 4 and "plotly.js v" not in html   # the script sits beside the page
    assert (tmp_path / "plotly.min.js").read_text().count("plotly.js v") >= 1
    findings = html.index("<h2>Findings</h2>")
    assert findings < html.index("<h2>Accuracy, cost and latency per run</h2>") < html.index("<h2>Figures</h2>")
    assert "<td>0.333</td>" in html and "P of the preference score" in html


def test_unknown_run_is_one_line_and_exit_2(store):
    result = orchestra("report", "A", "missing-run", db=store.path)
    assert result.returncode == 2
    assert "missing-run" in result.stderr and len(result.stderr.strip().splitlines()) == 1
