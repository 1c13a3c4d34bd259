"""The HTML report (`lab.report.html`): findings and tables before figures, text escaped, plotly.js beside the
page (written once, before the page), runs named by their names."""

from __future__ import annotations

import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.report import figures
from lab.report.html import PLOTLY_JS, display_names, report_html, write_report


def test_the_page_opens_with_findings_and_tables_and_escapes_text(tmp_path):
    fig = figures.accuracy_figure(pd.DataFrame({"run_id": ["A"], "accuracy": [0.5], "ci_low": [0.4], "ci_high": [0.6]}))
    table = pd.DataFrame({"run": ["<b>x</b>"], "accuracy": [0.12345], "ci": [float("nan")]})
    page = report_html("t <x>", ["found <this>"], {"Table & more": table}, {"one": fig, "two": fig})
    assert page.index("<h2>Findings</h2>") < page.index("<h2>Table &amp; more</h2>") < page.index("<h2>Figures</h2>")
    assert "t &lt;x&gt;" in page and "found &lt;this&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<td>0.123</td>" in page and "<td>-</td>" in page
    assert page.count("Plotly.newPlot(") == 2 and "plotly.js v" not in page and f'src="{PLOTLY_JS}"' in page
    write_report(tmp_path / "r.html", page)
    assert (tmp_path / PLOTLY_JS).stat().st_size > 1_000_000 and (tmp_path / "r.html").read_text() == page
    assert not list(tmp_path.glob(".*partial"))


def test_an_unwritable_path_is_one_line_naming_the_flag(tmp_path):
    with pytest.raises(LabInputError, match="^--html .*cannot write"):
        write_report(tmp_path / "missing" / "r.html", "<html></html>")


def test_runs_are_named_by_their_names_and_ids_only_where_names_repeat():
    runs = pd.DataFrame({"run_id": ["a1", "b1", "b2", "c1"], "name": ["trained", "sweep", "sweep", None]})
    assert display_names(runs) == {"a1": "trained", "b1": "sweep (b1)", "b2": "sweep (b2)", "c1": "c1"}
