"""Report metrics over logged runs: pure functions from DataFrames to DataFrames (paper §4, Tables 3-4, 15, Figs. 3-6).

One submodule per job, every public name re-exported here: `accuracy` (per task, accuracy, cost,
paired tests), `tools` (tool calls, delegation bias, display labels), `preference` (preference scores,
paired preference and cost comparisons, on `lab.scoring`'s feature frame), `frontier` (Pareto frontier
and its area, router metrics, turn budgets, re-priced costs), `curve` (a training run's learning curve:
the absolute utility U on a scale fixed per run), `paired` (a trained model against its start on the same
tasks and samples: paired deltas, behaviour checks, and the tasks x samples a target half-width needs),
`contrast` (instruction following: how differently a model acts under two instructions, start and trained),
`pull` (which way a training run's updates pushed cost and outcome, per kind of instruction).

Nothing here reads the store or draws: `lab.report.api` loads the frames, these functions compute, and
`lab.report.figures` / `lab.report.tables` present. Inputs are the store's own frames
(`queries.trajectories_df`, `queries.tool_calls_df`) plus two small frames that `api` derives from the
runs' JSON columns: *tools* (run_id, tool_name, model, input_per_mtok, output_per_mtok, simulated) and
*run info* (run_id, orchestrator, max_turns, curve).

Definitions used throughout:

- **Task, not trajectory, is the unit.** Samples of one task are averaged first (`per_task`), so a task
  run 8 times weighs as much as one run once; bootstrap resamples tasks.
- **Accuracy** = mean over tasks of the per-task mean outcome (with `--judge`, the judge rule's grade).
  Accuracy by exact match / by judge likewise over `exact_correct` / `judge_correct`. **Cost / latency
  per task** likewise; costs are reported in US cents, as the paper does. A judge's cost is its own
  column, never part of the orchestrator's cost.
- Paired statistics use only the tasks both runs ran.
- Every random procedure takes a `seed` and draws from a fresh generator per run or pair, so numbers do
  not depend on which other runs are in the report.
"""


from lab.report.metrics.accuracy import (
    N_RESAMPLES,
    accuracy_table,
    bootstrap_means,
    ci_text,
    ci_verdict,
    cost_latency_table,
    paired_comparisons,
    per_task,
    sign_flip_p,
    with_verdicts,
)
from lab.report.metrics.contrast import InstructionRuns, instruction_contrast, tool_share_contrast
from lab.report.metrics.curve import CurveScale, fixed_scale, learning_curve, utility
from lab.report.metrics.frontier import (
    call_performance_threshold,
    frontier_auc,
    pareto_points,
    repriced_table,
    router_table,
    turn_budget_curves,
)
from lab.report.metrics.paired import (
    instruction_kind,
    needed_size,
    paired_deltas,
    paired_differences,
    paired_rows,
    paired_saving,
    power_table,
    variance_components,
    verdict,
)
from lab.report.metrics.preference import paired_cost_saving, paired_preference_scores, preference_scores
from lab.report.metrics.pull import group_pulls, update_pull
from lab.report.metrics.tools import (
    FAMILIES,
    PRIVILEGED,
    SIMULATED_SUFFIX,
    delegation_bias,
    model_family,
    orchestrator_label,
    tool_call_table,
    tool_label,
)
from lab.scoring import shared_tasks

__all__ = [
    "FAMILIES",
    "CurveScale",
    "InstructionRuns",
    "N_RESAMPLES",
    "PRIVILEGED",
    "SIMULATED_SUFFIX",
    "accuracy_table",
    "bootstrap_means",
    "call_performance_threshold",
    "ci_text",
    "ci_verdict",
    "cost_latency_table",
    "delegation_bias",
    "fixed_scale",
    "frontier_auc",
    "group_pulls",
    "instruction_contrast",
    "instruction_kind",
    "learning_curve",
    "model_family",
    "needed_size",
    "orchestrator_label",
    "paired_comparisons",
    "paired_cost_saving",
    "paired_deltas",
    "paired_differences",
    "paired_preference_scores",
    "paired_rows",
    "paired_saving",
    "pareto_points",
    "per_task",
    "power_table",
    "preference_scores",
    "repriced_table",
    "router_table",
    "shared_tasks",
    "sign_flip_p",
    "tool_call_table",
    "tool_label",
    "tool_share_contrast",
    "turn_budget_curves",
    "update_pull",
    "utility",
    "variance_components",
    "verdict",
    "with_verdicts",
]
