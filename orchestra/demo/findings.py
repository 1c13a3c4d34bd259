"""What the demo's runs show, computed from the store with the report's own tables.

Three questions, each answered by a frame (so the notebooks can show the same) and one sentence:
who is on the cost-accuracy Pareto frontier; what the trained orchestrator learned about routing
(its tool-call shares against its warm start's); and how the instruction changed its spending
(cost-saving and speed instructions against accuracy-only, paired over the same tasks). Beside them,
the training run's learning curve (`lab.report.curve`): U per instruction from step 0 to the last step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from lab.report.api import Report, load_report
from lab.report.curve import contrast_curve_df, learning_curve_df
from lab.report.figures import contrast_curve_figure, learning_curve_figure
from lab.report.metrics import paired_cost_saving, pareto_points
from lab.store import Store, queries
from orchestra.demo.plan import HELD_OUT_PRICING, PRIVILEGED, SWEEP_PREFERENCES, TRAIN_WORDINGS, DemoPlan, trained_name

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

    from trainer.evidence import Evidence


@dataclass
class Findings:
    compared: Report          # baselines, SmolLM2, warm start, trained: held-out pairs, 20 turns, repriced
    sweep: Report             # the trained model under three instructions x three turn budgets
    names: dict[str, str]     # run id -> run name
    # name, accuracy, cost_cents_per_task of the non-privileged runs on the frontier, cheapest first
    frontier: pd.DataFrame
    # run_id, accuracy, cost_cents_per_task, on_frontier among the non-privileged runs on every task
    pareto: pd.DataFrame
    routing: pd.DataFrame     # tool_label, warm_start, trained, change: shares of tool calls
    spending: pd.DataFrame    # instruction, cost_cents_per_task, latency_s_per_task, accuracy, saving_vs_accuracy
    rounds: pd.DataFrame      # name, median_rounds, budget_share: how each model-run orchestrator ended its rollouts
    curve: pd.DataFrame       # the train run's learning curve (lab.report.curve.learning_curve_df), maybe empty
    following: pd.DataFrame   # instruction following along it (lab.report.curve.contrast_curve_df), maybe empty
    train_metrics: pd.DataFrame  # its train_metrics rows (the probe, when logged, joins the curve's figure)
    evidence: Evidence | None = None  # GRPO against its start, paired (trainer.evidence), when the demo ran it

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables the report opens with, runs by name: the compared systems, the trained model under each
        instruction, its routing against its warm start, GRPO against its start."""
        tables = {"Compared systems (test tasks, held-out instructions; Pareto among the non-privileged)":
                  self.compared.per_run_table(frontier=self.pareto)}
        if not self.spending.empty:
            tables["The trained model under each instruction"] = self.spending
        if not self.routing.empty:
            tables["Routing: share of tool calls, warm start -> trained"] = self.routing
        if not self.following.empty:
            tables["Instruction following along training: contrast per step, minus the first step's"] = \
                self.following
        if self.evidence is not None:
            tables["Instruction following: contrast between instructions, start and trained (paired)"] = \
                self.evidence.contrasts
            tables["Fair baselines: each one's contrast beside the trained model's"] = self.evidence.baselines
            tables["Share of calls per tool, asking - baseline instruction"] = self.evidence.tool_shares
            tables["GRPO against its start (trained - start, paired)"] = self.evidence.deltas
            tables["Per task family: what each model did under each instruction"] = self.evidence.families
            tables["Which way the training updates pushed, per kind of instruction"] = self.evidence.pulls
        return tables

    def instructions(self) -> pd.DataFrame:
        """Each instruction the demo asked the trained model for, with the P it stands for."""
        rows = [{"instruction": f"{label} (held-out wordings)", "P": p} for label, p in SWEEP_PREFERENCES.items()]
        rows += [{"instruction": wording, "P": p} for p, wording in TRAIN_WORDINGS.values()]
        return pd.DataFrame(rows)

    def figures(self) -> dict[str, Figure]:
        """Every figure the demo writes: the compared runs', the sweep's, instruction following along
        training and the learning curve."""
        figures = {**self.compared.figures(), **{f"sweep_{k}": v for k, v in self.sweep.figures().items()}}
        if not self.following.empty:
            figures["instruction_following_curve"] = contrast_curve_figure(self.following)
        if not self.curve.empty:
            figures["learning_curve"] = learning_curve_figure(self.curve, self.train_metrics)
        if self.evidence is not None:
            figures["grpo_against_start"] = self.evidence.figure()
        return figures

    def sentences(self) -> list[str]:
        """The summary the demo prints, one finding per line: instruction following first (the claim of
        preference-aware RL), when the demo measured it."""
        lines = [] if self.evidence is None else self.evidence.headline()
        useful = self.frontier[self.frontier.accuracy > 0]   # a run solving nothing is "on" it only by spending nothing
        on = ", ".join(f"{r.name} ({r.accuracy:.0%} at {r.cost_cents_per_task:.2f}c)" for r in useful.itertuples())
        lines.append("Pareto frontier of the non-privileged runs (accuracy against cost per task): "
                     f"{on or 'no run solved a task'}.")
        points = self.pareto.assign(name=lambda f: f.run_id.map(self.names)).set_index("name")
        if {"trained", "strongest"} <= set(points.index):
            trained, strongest = points.loc["trained"], points.loc["strongest"]
            share = (trained.cost_cents_per_task / strongest.cost_cents_per_task if strongest.cost_cents_per_task
                     else float("nan"))
            lines.append(f"Trained against strongest: accuracy {trained.accuracy:.0%} against "
                         f"{strongest.accuracy:.0%}, at {share:.0%} of its cost per task; the trained orchestrator is "
                         f"{'on' if trained.on_frontier else 'off'} the frontier.")
        for r in self.rounds.itertuples():
            lines.append(f"Rounds: {r.name} took a median of {r.median_rounds:g} rounds per task; {r.budget_share:.0%} "
                         "of its rollouts reached the turn budget without an answer.")
        if self.routing.empty:
            lines.append("Routing: the trained orchestrator and its warm start made no tool calls to compare.")
        else:
            up, down = self.routing.iloc[0], self.routing.iloc[-1]
            lines.append(f"Routing learned by GRPO (share of calls, warm start -> trained): {up.tool_label} "
                         f"{up.warm_start:.0%} -> {up.trained:.0%}; {down.tool_label} "
                         f"{down.warm_start:.0%} -> {down.trained:.0%}.")
        by = self.spending.set_index("instruction")
        if {"accuracy", "cost"} <= set(by.index):
            cost, accuracy = by.loc["cost"], by.loc["accuracy"]
            saving = ("no saving to measure: it spent nothing under either" if pd.isna(cost.saving_vs_accuracy) else
                      f"saving {cost.saving_vs_accuracy:+.0%}, "
                      f"95% CI [{cost.saving_ci_low:+.0%}, {cost.saving_ci_high:+.0%}]")
            lines.append("Preference: told to save money the trained orchestrator spends "
                         f"{cost.cost_cents_per_task:.2f}c per task against {accuracy.cost_cents_per_task:.2f}c when "
                         f"told only accuracy matters ({saving}); accuracy {cost.accuracy:.0%} "
                         f"against {accuracy.accuracy:.0%}.")
        if {"train-accuracy", "train-cost"} <= set(by.index):
            cost, accuracy = by.loc["train-cost"], by.loc["train-accuracy"]
            if not pd.isna(cost.saving_vs_accuracy):
                lines.append(f"In the training wordings: {cost.cost_cents_per_task:.2f}c against "
                             f"{accuracy.cost_cents_per_task:.2f}c (saving {cost.saving_vs_accuracy:+.0%}, 95% CI "
                             f"[{cost.saving_ci_low:+.0%}, {cost.saving_ci_high:+.0%}]); accuracy {cost.accuracy:.0%} "
                             f"against {accuracy.accuracy:.0%}.")
        if {"accuracy", "speed"} <= set(by.index):
            lines.append(f"Told to hurry it takes {by.loc['speed'].latency_s_per_task:.0f} s per task against "
                         f"{by.loc['accuracy'].latency_s_per_task:.0f} s under accuracy-only.")
        lines.extend(self._curve_sentences())
        if self.evidence is not None:
            lines.extend(self.evidence.lines())
        repriced = self.compared.reprice.dropna(subset=["change_pct"])
        if not repriced.empty:
            biggest = repriced.loc[repriced.change_pct.abs().idxmax()]
            lines.append(f"Under {HELD_OUT_PRICING}'s prices (held out of training) {self.names[biggest.run_id]} costs "
                         f"{biggest.repriced_cents_per_task:.2f}c per task instead of "
                         f"{biggest.logged_cents_per_task:.2f}c ({biggest.change_pct:+.0f}%), the largest "
                         "change among the compared runs.")
        return lines


    def _curve_sentences(self) -> list[str]:
        """Instruction following at the last evaluated step against the first (first: U rises for any
        cheaper policy), then U of each instruction at step 0 and at the last evaluated step, on the run's
        one scale."""
        lines = []
        following = self.following[self.following.measure.str.startswith("log ")] if not self.following.empty \
            else self.following
        for pair, points in following.groupby("pair", sort=False) if not following.empty else []:
            first, last = points.iloc[0], points.iloc[-1]
            lines.append(f"Instruction following along training ({pair}, {int(last.n_tasks)} fixed validation "
                         f"tasks): contrast {first.trained:+.3f} at step {first.step} -> {last.trained:+.3f} at step "
                         f"{last.step}, a change of {last.delta:+.3f} [{last.ci_low:+.3f}, {last.ci_high:+.3f}] (95% "
                         f"CI; 0: the policy acts on the pair no more than at step {first.step}).")
        if self.curve.empty:
            return lines
        scale = self.curve.attrs.get("scale", {})
        lines.append(f"Learning curve of the training run on {int(self.curve.n_tasks.max())} fixed validation tasks: "
                     "U = w_o*solved - w_c*cost/c_ref - w_l*latency/l_ref per rollout (w: the instruction's P), with "
                     f"c_ref = {100 * scale.get('c_ref', float('nan')):.2f}c and l_ref = "
                     f"{scale.get('l_ref', float('nan')):.0f} s fixed once ({scale.get('basis', '')}); 95% CIs over "
                     "tasks.")
        for instruction, points in self.curve.groupby("instruction", sort=False):
            first, last = points.iloc[0], points.iloc[-1]
            lines.append(f"Curve under {instruction!r}: U {first.U:+.2f} [{first.ci_low:+.2f}, {first.ci_high:+.2f}] "
                         f"at step {first.step} -> {last.U:+.2f} [{last.ci_low:+.2f}, {last.ci_high:+.2f}] at step "
                         f"{last.step}; accuracy {first.accuracy:.0%} -> {last.accuracy:.0%}.")
        return lines


def gather_findings(store: Store, runs: dict[str, str], plan: DemoPlan, evidence: Evidence | None = None) -> Findings:
    """`runs` maps run names to ids, as `DemoStages.runs` holds them; `evidence` is what `DemoStages.evidence`
    found."""
    from trainer.train import train_run_id

    train = train_run_id(plan.train_config(store.path))
    names = {run_id: name for name, run_id in runs.items()}
    sweep_names = [n for n in runs if n.startswith("trained-")]
    compared_ids = [runs[n] for n in runs if n not in sweep_names]
    compared = load_report(store, compared_ids, pricing=HELD_OUT_PRICING)
    sweep = load_report(store, [runs[n] for n in sweep_names])
    pareto = _non_privileged_pareto(compared, runs)
    frontier = (pareto[pareto.on_frontier].assign(name=lambda f: f.run_id.map(names))
                .sort_values("cost_cents_per_task"))
    return Findings(compared=compared, sweep=sweep, names=names, pareto=pareto,
                    frontier=frontier[["name", "accuracy", "cost_cents_per_task"]].reset_index(drop=True),
                    routing=_routing(compared, runs), spending=_spending(store, sweep, runs, plan.compared_turns),
                    rounds=_rounds(store, runs, plan.compared_turns), curve=learning_curve_df(store, train),
                    following=contrast_curve_df(store, train),
                    train_metrics=queries.train_metrics_df(store, train), evidence=evidence)


def _non_privileged_pareto(report: Report, runs: dict[str, str]) -> pd.DataFrame:
    """The frontier among the runs a deployed orchestrator could be: no privileged run (the oracle reads the
    grader), and only runs on every compared task (SmolLM2 answers a few of them)."""
    counts = report.accuracy.set_index("run_id").n_tasks
    keep = [r for r in report.run_ids if r not in {runs.get(n) for n in PRIVILEGED} and counts.get(r) == counts.max()]
    return pareto_points(report.accuracy[report.accuracy.run_id.isin(keep)],
                         report.costs[report.costs.run_id.isin(keep)])


def _rounds(store: Store, runs: dict[str, str], turns: int) -> pd.DataFrame:
    """Median rounds per task and the share of rollouts that reached the turn budget unanswered, of the
    warm start and the trained model (a policy that loops shows here first)."""
    rows = []
    for name in ("warm-start", "trained"):
        if name in runs:
            trajs = queries.trajectories_df(store, [runs[name]])
            if not trajs.empty:
                unanswered = (trajs.status == "no_answer") & (trajs.n_turns >= turns)
                rows.append([name, float(trajs.n_turns.median()), float(unanswered.mean())])
    return pd.DataFrame(rows, columns=["name", "median_rounds", "budget_share"])


def _routing(report: Report, runs: dict[str, str]) -> pd.DataFrame:
    """Share of tool calls per tool (slot) of the warm start and the trained model, biggest gain first."""
    if "warm-start" not in runs or "trained" not in runs:
        return pd.DataFrame(columns=["tool_label", "warm_start", "trained", "change"])
    calls = report.tool_calls
    shares = (calls[calls.run_id.isin([runs["warm-start"], runs["trained"]])]
              .pivot_table(index="tool_label", columns="run_id", values="share", aggfunc="sum", fill_value=0.0)
              .reindex(columns=[runs["warm-start"], runs["trained"]], fill_value=0.0))
    shares.columns = ["warm_start", "trained"]
    shares["change"] = shares.trained - shares.warm_start
    return shares.sort_values("change", ascending=False).reset_index()


def _spending(store: Store, sweep: Report, runs: dict[str, str], turns: int) -> pd.DataFrame:
    """Cost, latency and accuracy of the trained model per instruction at the compared budget `turns`, with
    the paired saving against the accuracy-only instruction on the same tasks; the training wordings of
    the accuracy and cost instructions as `train-accuracy` and `train-cost`, saving against the former."""
    columns = ["instruction", "run_id", "accuracy", "cost_cents_per_task", "latency_s_per_task",
               "saving_vs_accuracy", "saving_ci_low", "saving_ci_high"]
    points = {label: runs[trained_name(label, turns)] for label in ("accuracy", "cost", "speed")
              if trained_name(label, turns) in runs}
    points |= {f"train-{label}": runs[trained_name(label, turns, "train")] for label in TRAIN_WORDINGS
               if trained_name(label, turns, "train") in runs}
    if not points:
        return pd.DataFrame(columns=columns)
    trajs = queries.trajectories_df(store, list(points.values()))
    table = sweep.accuracy.merge(sweep.costs, on="run_id")
    rows = []
    for label, run_id in points.items():
        row = table[table.run_id == run_id].iloc[0]
        baseline = "train-accuracy" if label.startswith("train-") else "accuracy"
        saving = paired_cost_saving(trajs, run_id, points[baseline]) if label != baseline and baseline in points else {}
        rows.append([label, run_id, row.accuracy, row.cost_cents_per_task, row.latency_s_per_task,
                     saving.get("saving"), saving.get("ci_low"), saving.get("ci_high")])
    return pd.DataFrame(rows, columns=columns)
