"""`orchestra report RUN [RUN ...]`: accuracy with CIs, paired tests, cost, tool use, bias, frontier.

    orchestra report RUN_A RUN_B                       # tables
    orchestra report RUN_A RUN_B --pricing deepinfra   # plus costs re-priced under another provider
    orchestra report RUN_A RUN_B --json                # every table as records, for scripts
    orchestra report RUN_A RUN_B --html report.html    # every figure in one offline HTML page

The numbers come from `lab.report.api.load_report`; metric definitions live in `lab.report.metrics`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from lab.errors import LabInputError
from lab.report.api import load_report
from lab.report.html import report_html, write_report
from lab.report.metrics import N_RESAMPLES
from lab.report.tables import print_report
from lab.store import Store, queries, resolve_db_path
from orchestra.cli.options import DbOption, JsonOption, console, print_json
from orchestra.cli.root import app


@app.command("report")
def report(
    run_ids: list[str] = typer.Argument(...,
                                        help="Runs to report on and compare: ids or names (see `orchestra runs`)."),
    pricing: str | None = typer.Option(None, "--pricing",
                                       help="Also show costs re-priced under this provider (e.g. deepinfra)."),
    preference: str | None = typer.Option(
        None, "--preference", "-p",
        help="P of the preference score, e.g. outcome=1,compute=1 (default: the runs' logged P)."),
    weak: str | None = typer.Option(None, "--weak", help="Run whose accuracy is PGR 0 (default: the least accurate)."),
    strong: str | None = typer.Option(None, "--strong",
                                      help="Run whose accuracy is PGR 1 (default: the most accurate)."),
    resamples: int = typer.Option(N_RESAMPLES, "--resamples", help="Bootstrap and permutation draws."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and permutation draws."),
    html: Path | None = typer.Option(None, "--html", help="Write every figure into this standalone HTML file."),
    db: str | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Compare logged runs: accuracy with 95% CIs, paired tests, cost, latency, tool use, bias, Pareto frontier."""
    if resamples < 1:
        raise LabInputError(f"--resamples must be >= 1, got {resamples}")
    store = Store(resolve_db_path(db))
    run_ids = [queries.resolve_run_id(store, r) for r in run_ids]
    weak, strong = (None if r is None else queries.resolve_run_id(store, r) for r in (weak, strong))
    result = load_report(store, run_ids, pricing=pricing, preference=preference, weak=weak, strong=strong,
                         n_resamples=resamples, seed=seed)
    if html is not None:
        names = result.names()
        write_report(html, report_html(f"Orchestra Lab report: {', '.join(names[r] for r in result.run_ids)}",
                                       result.sentences(), result.tables(), result.figures(),
                                       notes=[f"P of the preference score: {result.settings['preference']} "
                                              f"({result.settings['preference_source']})"]))
    if as_json:
        print_json(result.to_dict())
        return
    print_report(result, console)
    if html is not None:
        console.print(f"figures written to {html}")
