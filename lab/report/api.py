"""`load_report(store, run_ids)`: every report metric of some runs, as one object of DataFrames.

The CLI (`orchestra report`), notebooks and the app all start here, so they show the same numbers:

    report = load_report(store, ["run-a", "run-b"], pricing="deepinfra")
    report.accuracy          # run_id, n_tasks, accuracy, ci_low, ci_high, ...
    report.paired            # run_a vs run_b on shared tasks: diff, CI, p-value, McNemar
    report.figures()         # name -> plotly Figure

This module only reads the store (through `lab.store.queries`) and turns the runs' JSON columns into
small frames; the numbers come from `lab.report.metrics`, whose docstrings define each one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lab import repricing
from lab.preference import Preference
from lab.pricing import PriceTable
from lab.records import RunRecord
from lab.report import metrics
from lab.scoring import feature_tools
from lab.store import Store, queries
from lab.toolspec import logged_features

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

__all__ = ["Report", "load_report"]

#: Config fields that do not change what a run measures; runs differing only in these and max_turns
#: lie on one turn-budget curve.
_NOT_IDENTITY = ("max_turns", "concurrency", "rate_limit", "budget_usd", "preferences", "run_name")
#: P used when the compared runs logged different preferences (the paper's default training P).
DEFAULT_PREFERENCE = {"outcome": 1.0, "compute": 1.0}


@dataclass
class Report:
    """The report of some runs: one DataFrame per table, defined in `lab.report.metrics`.

    Frames (all keyed by run_id except `paired`, `pareto_auc` and `turn_budgets`):
    runs (run info), accuracy, costs, paired, tool_calls, bias, preference, pareto, pareto_auc, router,
    turn_budgets, and reprice (empty unless a pricing was given).
    """

    run_ids: list[str]
    runs: pd.DataFrame
    accuracy: pd.DataFrame
    costs: pd.DataFrame
    paired: pd.DataFrame
    tool_calls: pd.DataFrame
    bias: pd.DataFrame
    preference: pd.DataFrame
    pareto: pd.DataFrame
    pareto_auc: pd.DataFrame
    router: pd.DataFrame
    turn_budgets: pd.DataFrame
    reprice: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name, in report order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), pd.DataFrame)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings plus every frame as a list of records (NaN becomes null)."""
        out: dict[str, Any] = {"run_ids": self.run_ids, "settings": self.settings}
        for name, frame in self.frames().items():
            out[name] = json.loads(frame.to_json(orient="records", date_format="iso"))
        return out

    def names(self) -> dict[str, str]:
        """Run id -> the run's name (its id only where two runs share a name), as reports label runs."""
        from lab.report.html import display_names

        return display_names(self.runs)

    def per_run_table(self, frontier: pd.DataFrame | None = None) -> pd.DataFrame:
        """One row per run by name: accuracy with its 95% CI and task count, cents and seconds per task, the
        preference score, and whether the run is on the Pareto frontier of `frontier` (`pareto_points` of
        some of these runs; default this report's). A run `frontier` leaves out reads "privileged": the demo
        draws its frontier without the oracle."""
        names = self.names()
        frontier = self.pareto if frontier is None else frontier
        summary = (self.accuracy.merge(self.costs.drop(columns="n_tasks"), on="run_id")
                   .merge(self.preference[["run_id", "preference_score"]], on="run_id", how="left")
                   .merge(frontier[["run_id", "on_frontier"]], on="run_id", how="left"))
        return pd.DataFrame({
            "run": summary.run_id.map(names), "accuracy": summary.accuracy,
            "95% CI": [metrics.ci_text(lo, hi) for lo, hi in zip(summary.ci_low, summary.ci_high)],
            "tasks": summary.n_tasks, "¢/task": summary.cost_cents_per_task, "s/task": summary.latency_s_per_task,
            "preference score": summary.preference_score,
            "Pareto": summary.on_frontier.map({True: "on", False: "off"}).fillna("privileged")})

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables a reader looks at first, runs by name: `per_run_table`, and every paired difference with
        its verdict."""
        return {"Accuracy, cost and latency per run": self.per_run_table(),
                "Paired accuracy differences (A - B on shared tasks, 95% CI)":
                    metrics.with_verdicts(self.paired, self.names())}

    def sentences(self) -> list[str]:
        """The findings in words: the frontier, and each paired difference with what its CI says."""
        names = self.names()
        on = self.pareto[self.pareto.on_frontier].sort_values("cost_cents_per_task")
        lines = ["On the cost-accuracy Pareto frontier: " + (", ".join(
            f"{names[r.run_id]} ({r.accuracy:.0%} at {r.cost_cents_per_task:.2f}c per task)" for r in on.itertuples())
            or "no run") + "."]
        for row in self.paired.itertuples():
            if pd.isna(row.diff):
                continue
            a, b = names[row.run_a], names[row.run_b]
            lines.append(f"{a} - {b}: accuracy {row.diff:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}] on "
                         f"{int(row.n_shared)} shared tasks: {metrics.ci_verdict(row.ci_low, row.ci_high, a, b)}.")
        return lines

    def figures(self) -> dict[str, Figure]:
        """Plotly figures of this report by name (builders in `lab.report.figures`), runs labelled by their
        names (`names`); the turn-budget figure only when some runs form a curve."""
        from lab.report import figures  # plotly takes a while to import; only figures need it

        names = self.names()
        named = [names[r] for r in self.run_ids]
        colors = figures.run_colors(named)
        orchestrators = self.runs.set_index("run_id").orchestrator
        labels = {names[r]: f"{names[r]} ({metrics.PRIVILEGED[o]})" for r, o in orchestrators.items()
                  if o in metrics.PRIVILEGED}

        def by_name(frame: pd.DataFrame) -> pd.DataFrame:
            return frame.assign(run_id=frame.run_id.map(names)) if "run_id" in frame else frame

        with_ci = self.pareto.merge(self.accuracy[["run_id", "ci_low", "ci_high"]], on="run_id")

        out = {
            "accuracy": figures.accuracy_figure(by_name(self.accuracy), colors),
            "cost_accuracy": figures.cost_accuracy_figure(by_name(with_ci), colors, labels),
            "tool_shares": figures.tool_share_figure(by_name(self.tool_calls), named),
            "pgr": figures.pgr_figure(by_name(self.router), colors),
        }
        if not self.turn_budgets.empty:
            out["turn_budgets"] = figures.turn_budget_figure(self.turn_budgets)
        return out


def load_report(
    store: Store,
    run_ids: Sequence[str],
    *,
    pricing: str | None = None,
    preference: str | None = None,
    weak: str | None = None,
    strong: str | None = None,
    n_resamples: int = metrics.N_RESAMPLES,
    seed: int = 0,
) -> Report:
    """Load the runs and compute every report table.

    `pricing` adds the re-priced cost table; `preference` ("outcome=1,compute=1,...") overrides the P of
    the preference score (default: the P the runs logged, if they agree, else outcome=1, compute=1);
    `weak` / `strong` name the PGR reference runs (default: least / most accurate). Unknown run ids
    raise `LabInputError`.
    """
    run_ids = list(dict.fromkeys(run_ids))                     # a repeated id would pair a run with itself
    records = [queries.run(store, r) for r in run_ids]
    for ref in (weak, strong):
        if ref is not None and ref not in run_ids:
            queries.run(store, ref)                            # unknown -> LabInputError
            run_ids.append(ref)
            records.append(queries.run(store, ref))
    trajs = queries.trajectories_df(store, run_ids)
    tool_calls = queries.tool_calls_df(store, run_ids)
    run_info, tools = run_info_frame(records), tools_frame(records)

    accuracy = metrics.accuracy_table(trajs, run_ids, n_resamples, seed)
    costs = metrics.cost_latency_table(trajs, run_ids)
    bias = metrics.delegation_bias(tool_calls, tools, run_info, run_ids)
    tool_columns = feature_tools(tools.tool_name, trajs.tool_counts_json.dropna())
    models = dict(zip(tools.tool_name, tools.model))
    P, p_source = _preference(trajs, tool_columns, preference, models)
    pareto = metrics.pareto_points(accuracy, costs)
    reprice = _reprice(store, trajs, run_ids, pricing) if pricing else pd.DataFrame(
        columns=["run_id", "pricing", "logged_cents_per_task", "repriced_cents_per_task",
                 "logged_total_usd", "repriced_total_usd", "change_pct"])
    return Report(
        run_ids=run_ids, runs=run_info, accuracy=accuracy, costs=costs,
        paired=metrics.paired_comparisons(trajs, run_ids, n_resamples, seed),
        tool_calls=metrics.tool_call_table(tool_calls, trajs, run_ids, tools), bias=bias,
        preference=metrics.preference_scores(trajs, run_ids, tool_columns, P.vector),
        pareto=pareto, pareto_auc=metrics.frontier_auc(pareto),
        router=metrics.router_table(accuracy, bias, weak, strong),
        turn_budgets=metrics.turn_budget_curves(run_info, accuracy, costs), reprice=reprice,
        settings={"n_resamples": n_resamples, "seed": seed, "pricing": pricing,
                  "preference": {k: v for k, v in P.as_dict().items() if v}, "preference_source": p_source},
    )


# ---------------------------------------------------------------- frames from the runs' JSON columns


def run_info_frame(records: Sequence[RunRecord]) -> pd.DataFrame:
    """run_id, name, orchestrator, benchmark, pricing, status, max_turns, curve, judge per run.

    judge is the run's `--judge` tool, marked " (simulated)" when its logged spec is a simulated model;
    None without a judge.

    max_turns is the run's own budget: `variant.max_turns` written by the eval harness, else the
    config's `max_turns` when it lists a single value, else NaN. `curve` labels runs whose config is
    equal apart from the turn budget (and run-speed settings), for `metrics.turn_budget_curves`.
    """
    rows, labels = [], {}
    for record in records:
        config = json.loads(record.config_json or "{}")
        variant = dict(config.pop("variant", None) or {})
        budgets = config.get("max_turns") or []
        max_turns = variant.pop("max_turns", None) or (budgets[0] if len(budgets) == 1 else None)
        identity = {k: v for k, v in config.items() if k not in _NOT_IDENTITY}
        key = json.dumps([record.orchestrator, record.benchmark, identity, variant], sort_keys=True)
        if max_turns is not None and key not in labels:
            label = (f"{record.orchestrator} on {record.benchmark}"
                     + (f" P={variant['preference']}" if variant.get("preference") else ""))
            taken = sum(1 for v in labels.values() if v.split(" #")[0] == label)
            labels[key] = label if not taken else f"{label} #{taken + 1}"
        rows.append([record.run_id, record.name, record.orchestrator, record.benchmark, record.pricing, record.status,
                     float(max_turns) if max_turns is not None else np.nan, labels.get(key),
                     _judge_label(config.get("judge"), record.toolkit_json)])
    return pd.DataFrame(rows, columns=["run_id", "name", "orchestrator", "benchmark", "pricing", "status", "max_turns",
                                       "curve", "judge"])


def _judge_label(judge: str | None, toolkit_json: str) -> str | None:
    if not judge:
        return None
    spec = logged_features(toolkit_json).get(judge) or {}
    simulated = bool(spec.get("simulated")) or judge.startswith("sim:")
    return judge + (metrics.SIMULATED_SUFFIX if simulated else "")


def tools_frame(records: Sequence[RunRecord]) -> pd.DataFrame:
    """run_id, tool_name, category, model, input/output price per 1M tokens, simulated: each run's reward
    features (its tools, or each slot of a paper-toolkit slot tool, named by the slot)."""
    rows = []
    for record in records:
        for name, spec in logged_features(record.toolkit_json).items():
            rows.append([record.run_id, name, spec.get("category"), spec.get("model"),
                         float(spec.get("input_per_mtok", 0.0)), float(spec.get("output_per_mtok", 0.0)),
                         bool(spec.get("simulated", False) or str(spec.get("name", "")).startswith("sim:"))])
    return pd.DataFrame(rows, columns=["run_id", "tool_name", "category", "model", "input_per_mtok",
                                       "output_per_mtok", "simulated"])


def _preference(trajs: pd.DataFrame, tools: list[str], given: str | None,
                models: dict[str, str | None]) -> tuple[Preference, str]:
    """The P of the preference score and where it came from (given / logged / default)."""
    if given:
        return Preference.parse(given, tools, models), "given"
    logged = {json.dumps({k: v for k, v in json.loads(p or "{}").items() if v}, sort_keys=True)
              for p in trajs.preference_json.dropna().unique()}
    if len(logged) == 1:
        values = json.loads(logged.pop())
        if values:
            return Preference.from_dict(values, tools, source="logged preference_json", models=models), "logged"
    return Preference.from_dict(DEFAULT_PREFERENCE, tools, models=models), "default (runs logged none or different P)"


def _reprice(store: Store, trajs: pd.DataFrame, run_ids: Sequence[str], pricing: str) -> pd.DataFrame:
    """Per-run logged vs re-priced cost under `pricing` (see `repriced_step_costs`)."""
    step_costs = repriced_step_costs(store, trajs, run_ids, pricing)
    return metrics.repriced_table(trajs, step_costs, run_ids, pricing)


def repriced_step_costs(store: Store, trajs: pd.DataFrame, run_ids: Sequence[str], pricing: str) -> pd.DataFrame:
    """Every step's logged and re-priced cost under `pricing` (and the orchestrator's own tokens, for
    `openai:` orchestrators), priced from its logged tokens by `lab.repricing.step_costs_under`.
    Columns: run_id, task_id, sample_idx, train_step, cost_usd, new_cost_usd."""
    table = PriceTable.load(pricing)
    parts = []
    for run_id in run_ids:
        run = queries.run(store, run_id)
        steps = repricing.with_orchestrator_steps(queries.steps_df(store, run_id), trajs[trajs.run_id == run_id],
                                                  run.orchestrator, toolkit_json=run.toolkit_json)
        parts.append(steps[["run_id", "task_id", "sample_idx", "train_step", "cost_usd"]].assign(
            new_cost_usd=repricing.step_costs_under(steps, table)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["run_id", "task_id", "sample_idx", "train_step", "cost_usd", "new_cost_usd"])