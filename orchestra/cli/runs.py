"""`orchestra runs`, `rescore` and `reprice`: look at logged runs and re-derive their numbers.

rescore and reprice never touch what was logged: rescoring stores a new scoring beside the run (one per
run with --across), and repricing only prints. Both work from logged features because `lab.reward` is pure.
"""

from __future__ import annotations

import json

import typer
from rich.table import Table

from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.report.metrics import orchestrator_label
from lab.repricing import reprice_steps, with_orchestrator_steps
from lab.rescoring import rescore_across, rescore_run
from lab.reward import STD_THRESHOLD
from lab.store import Store, queries, resolve_db_path
from orchestra.cli.options import DbOption, JsonOption, console, print_json
from orchestra.cli.root import app


@app.command("runs")
def runs(db: str | None = DbOption, as_json: bool = JsonOption,
         playground: bool = typer.Option(False, "--playground",
                                         help="Also list the dashboard Playground's rollouts (runs of kind "
                                              "playground), left out by default: they are not evaluations.")) -> None:
    """List the runs in the store with their accuracy, cost and status."""
    store = Store(resolve_db_path(db))
    df = queries.runs_summary_df(store)
    if not playground:
        df = df[df.kind != "playground"]
    if as_json:
        print_json(json.loads(df.to_json(orient="records", date_format="iso")))
        return
    if df.empty:
        console.print(f"no runs in {store.path}")
        return
    table = Table(title=f"runs in {store.path}")
    numbers = ("trajectories", "errors", "cut", "accuracy", "acc. exact", "acc. judge", "cost_usd", "judge $")
    for column in ("run_id", "kind", "name", "orchestrator", "benchmark", "status", "trajectories", "errors", "cut",
                   "accuracy", "acc. exact", "acc. judge", "cost_usd", "judge $", "started_at"):
        table.add_column(column, justify="right" if column in numbers else "left")
    for row in df.itertuples():
        judged = _fmt(row.accuracy_judge, "{}") != "-"  # the judge's cost is its own column, never in cost_usd
        table.add_row(
            row.run_id, row.kind, row.name, orchestrator_label(row.orchestrator), row.benchmark, row.status,
            str(row.trajectories), str(row.errors), str(row.cut), _fmt(row.accuracy, "{:.3f}"),
            _fmt(row.accuracy_exact, "{:.3f}"), _fmt(row.accuracy_judge, "{:.3f}"), _fmt(row.cost_usd, "${:.4f}"),
            _fmt(row.judge_cost_usd, "${:.4f}") if judged else "-", str(row.started_at)[:19],
        )
    console.print(table)


_RESCORE_HELP = "\n\n".join([
    "Rewards of a logged run under another preference vector, stored as a new scoring (nothing overwritten).",
    "As the trainer would: the paper's trajectory filters drop trajectories with a malformed tool call "
    "(format: format_ok false or a format_error step) or without a valid final answer (invalid); Eq. 2 "
    "then min-max normalises each feature within every GRPO group (the rollouts of one task) over the "
    "trajectories left, and groups whose reward std is below --std-threshold are dropped as homogeneous. "
    "'solved' counts trajectories with outcome 1. Every group is counted once: kept, homogeneous, one_member "
    "(one trajectory left, nothing to compare) or filtered_out (all filtered).",
    "A run with one sample per task has nothing to normalise within a group and is refused: re-run with "
    "'orchestra eval --samples N' (N >= 2, with --temperature > 0 for hf: and openai: orchestrators), "
    "or add --across RUN_B [--across RUN_C ...] for the paper's "
    "preference score (Table 3) instead: each task the runs share is normalised across all their trajectories "
    "and a run scores the mean reward of its trajectories (no training filters; one scoring stored per run).",
])


@app.command("rescore", help=_RESCORE_HELP)
def rescore(
    run_id: str = typer.Argument(..., help="Run to rescore (id or name)."),
    preference: str = typer.Option(..., "--preference", "-p",
                                   help="P as NAME=VALUE pairs, e.g. outcome=1,compute=1,gpt-5=0."),
    across: list[str] = typer.Option([], "--across", metavar="RUN",
                                     help="Score the run together with RUN (repeat for more runs): each shared task "
                                          "normalised across all their trajectories (preference score, Table 3)."),
    std_threshold: float = typer.Option(STD_THRESHOLD,
                                        help="Groups whose reward std is below this are filtered (paper: 0.1)."),
    db: str | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    # The help text is _RESCORE_HELP (typer shows it instead of a docstring).
    store = Store(resolve_db_path(db))
    if std_threshold < 0:
        raise LabInputError(f"--std-threshold must be >= 0, got {std_threshold}")
    run_id, across = queries.resolve_run_id(store, run_id), [queries.resolve_run_id(store, r) for r in across]
    if across:
        _print_across(rescore_across(store, [run_id, *across], preference), as_json)
        return
    s = rescore_run(store, run_id, preference, std_threshold=std_threshold).summary()
    if as_json:
        print_json(s)
        return
    table = Table(title=f"scoring {s['scoring_id']} of {run_id}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("preference", "trajectories", "solved", "filtered_format", "filtered_invalid", "groups",
                "groups_kept", "groups_homogeneous", "groups_one_member", "groups_filtered_out", "reward_mean",
                "reward_mean_logged"):
        value = s[key]
        shown = (json.dumps(value) if isinstance(value, dict) else str(value) if isinstance(value, int)
                 else _fmt(value, "{:.4f}"))
        table.add_row(key, shown)
    console.print(table)
    if s["groups_one_member"]:
        console.print(f"{s['groups_one_member']} of {s['groups']} groups had one member after the filters: "
                      "nothing to normalise against, so they were dropped")


def _print_across(result, as_json: bool) -> None:
    s = result.summary()
    if as_json:
        print_json(s)
        return
    table = Table(title=f"preference score across {', '.join(s['across'])} on {s['tasks']} shared tasks, "
                        f"P={json.dumps(s['preference'])}")
    for column in ("run_id", "preference_score", "trajectories", "tasks", "solved", "scoring_id"):
        table.add_column(column, justify="left" if column in ("run_id", "scoring_id") else "right")
    for row in s["runs"]:
        table.add_row(row["run_id"], f"{row['preference_score']:.4f}", str(row["trajectories"]), str(row["tasks"]),
                      str(row["solved"]), row["scoring_id"])
    console.print(table)


@app.command("reprice")
def reprice(
    run_id: str = typer.Argument(..., help="Run to reprice (id or name)."),
    pricing: str = typer.Option(..., "--pricing", help="Provider whose price table to apply (e.g. deepinfra)."),
    gpu_hour_usd: float | None = typer.Option(
        None, "--gpu-hour-usd", help="Price local models (local_llm tools, hf: orchestrators) at this USD per GPU-hour "
        "times their logged latency (an upper bound under concurrency); default: local, unpriced (cost kept)."),
    db: str | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Every step's cost recomputed from its logged tokens under another provider's prices (prints only).

    Local models (a local_llm tool of the run's toolkit such as smollm2, an hf: orchestrator) have no \
per-token price: they keep their logged cost as "local, unpriced", or cost their logged latency at \
--gpu-hour-usd. Any other model missing from the table is an error naming it.
    """
    store = Store(resolve_db_path(db))
    run_id = queries.resolve_run_id(store, run_id)  # unknown runs fail before any work
    run = queries.run(store, run_id)
    steps = with_orchestrator_steps(queries.steps_df(store, run_id), queries.trajectories_df(store, [run_id]),
                                    run.orchestrator, toolkit_json=run.toolkit_json)
    by_model = reprice_steps(steps, PriceTable.load(pricing), gpu_hour_usd=gpu_hour_usd)
    if as_json:
        print_json({"run_id": run_id, "pricing": pricing, "gpu_hour_usd": gpu_hour_usd,
                    "models": by_model.to_dict(orient="records"),
                    "old_total_usd": float(by_model.old_cost_usd.sum()),
                    "new_total_usd": float(by_model.new_cost_usd.sum())})
        return
    table = Table(title=f"{run_id} repriced under '{pricing}'")
    for column in ("model", "calls", "input_tokens", "output_tokens", "old_cost_usd", "new_cost_usd", "priced_by"):
        table.add_column(column, justify="left" if column in ("model", "priced_by") else "right")
    for row in by_model.itertuples():
        table.add_row(row.model, str(row.calls), str(row.input_tokens), str(row.output_tokens),
                      f"${row.old_cost_usd:.4f}", f"${row.new_cost_usd:.4f}", row.priced_by)
    table.add_row("total", str(by_model.calls.sum()), str(by_model.input_tokens.sum()),
                  str(by_model.output_tokens.sum()),
                  f"${by_model.old_cost_usd.sum():.4f}", f"${by_model.new_cost_usd.sum():.4f}", "", style="bold")
    console.print(table)


def _fmt(value: object, pattern: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, (int, float)):
        return pattern.format(value)
    return str(value)

