"""Plain functions behind the dashboard's click handling (AppTest cannot click a plotly point, so the
part that turns a click into a destination is tested on its own, and the real click in the browser)."""

from __future__ import annotations

from typing import Any


def clicked_runs(event: Any) -> list[str]:
    """Run ids of the points selected in a `st.plotly_chart(..., on_select="rerun")` event (each marker's
    customdata is its run id); [] for no selection or a point without one (the frontier line)."""
    selection = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    points = selection.get("points", []) if isinstance(selection, dict) else getattr(selection, "points", [])
    ids = []
    for point in points or []:
        data = point.get("customdata") if isinstance(point, dict) else None
        value = data[0] if isinstance(data, (list, tuple)) and data else data
        if isinstance(value, str) and value not in ids:
            ids.append(value)
    return ids
