"""Selections read off a chart (`app/selection.py`): a click on a Pareto point names its run."""

from __future__ import annotations

from app.selection import clicked_runs


def test_a_click_on_a_pareto_point_names_its_run():
    event = {"selection": {"points": [{"customdata": ["eval-a"], "x": 1, "y": 0.5}, {"x": 2, "y": 0.7}]}}
    assert clicked_runs(event) == ["eval-a"] and clicked_runs({"selection": {"points": []}}) == []
