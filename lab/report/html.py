"""The HTML report a person reads: findings first (sentences, the P each instruction stands for, tables),
then the figures; runs named by their names. Shared by `orchestra report --html`, `orchestra demo` and
`orchestra train evidence --html`.

Why plotly.js sits beside the page (`plotly.min.js`, written by `write_report`) and not inside it: inlined
it is 3.6 MB of every report, most of what made the demo's report 4.9 MB; beside it, the page is the
report (well under 1 MB for the demo) and still opens offline, as long as the two files travel together.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from lab.errors import LabInputError

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

#: The script beside every report page.
PLOTLY_JS = "plotly.min.js"
_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;font-size:14px;margin:.5em 0 1.5em}"
          "th,td{border-bottom:1px solid #ddd;padding:4px 10px;text-align:right}"
          "th:first-child,td:first-child{text-align:left}li{margin:.3em 0}.note{color:#666;font-size:13px}")


def report_html(title: str, findings: Sequence[str] = (), tables: Mapping[str, pd.DataFrame] | None = None,
                figures: Mapping[str, Figure] | None = None, notes: Sequence[str] = ()) -> str:
    """One page: the title, `notes` (what the runs were: simulated models, which P), the findings as a list,
    each table under its name, then each figure (plotly, loaded from `plotly.min.js` beside the page)."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    parts += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    if findings:
        parts.append("<h2>Findings</h2><ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in findings) + "</ul>")
    for name, table in (tables or {}).items():
        parts.append(f"<h2>{html.escape(name)}</h2>" + _table(table))
    if figures:
        parts.append("<h2>Figures</h2>")
        parts += [f'<section id="{html.escape(key)}">' + figure.to_html(full_html=False, include_plotlyjs=False)
                  + "</section>" for key, figure in figures.items()]
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<script src="{PLOTLY_JS}"></script><style>{_STYLE}</style></head>\n<body>\n'
            + "\n".join(parts) + "\n</body></html>\n")


def _table(frame: pd.DataFrame) -> str:
    """A frame as an HTML table: floats to three significant places, missing values as "-"."""
    shown = frame.copy()
    for column in shown.columns:
        if pd.api.types.is_float_dtype(shown[column]):
            shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.3g}")
    return shown.fillna("-").to_html(index=False, border=0, escape=True)


def write_report(path: Path, page: str, flag: str = "--html") -> None:
    """Write the page, and plotly.js beside it when it is not there yet; an unwritable path is one line
    naming the flag. The page is written last, so a page on disk always has its script."""
    from plotly.offline import get_plotlyjs

    script = path.parent / PLOTLY_JS
    try:
        if not script.exists() or script.stat().st_size == 0:
            _atomic(script, get_plotlyjs())
        _atomic(path, page)
    except OSError as exc:
        raise LabInputError(f"{flag} {path}: cannot write ({exc.strerror})") from None


def _atomic(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)


def display_names(runs: pd.DataFrame) -> dict[str, str]:
    """Run id -> the name people call it (`trained`), its id added only where two runs share a name; a run
    without a name keeps its id. `runs` has run_id and name."""
    names = runs.name.where(runs.name.notna() & (runs.name != ""), runs.run_id)
    repeated = names.duplicated(keep=False)
    return {r: (f"{n} ({r})" if twice and n != r else n) for r, n, twice in zip(runs.run_id, names, repeated)}
