"""Tool calls per task (paper Table 15, Fig. 4), delegation bias (Fig. 3) and the display labels of
orchestrators and tools.

Definitions: `lab.report.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab.scoring import TRAJECTORY_KEY

#: Suffix that marks simulated tools (`sim:*`) in tables and legends.
SIMULATED_SUFFIX = " (simulated)"
#: Model families for delegation bias (paper Fig. 3): id prefix -> family.
FAMILIES = (("gpt-5", "gpt-5"), ("qwen", "qwen"), ("llama", "llama"), ("claude", "claude"))
#: Orchestrators that read the grader: reports must never show them as baselines.
PRIVILEGED = {"scripted:oracle": "privileged upper bound"}


def orchestrator_label(orchestrator: str) -> str:
    """Display name of an orchestrator: the oracle says it is a privileged upper bound.

    >>> orchestrator_label("scripted:oracle"), orchestrator_label("scripted:cheapest-first")
    ('scripted:oracle (privileged upper bound)', 'scripted:cheapest-first')
    """
    note = PRIVILEGED.get(orchestrator)
    return f"{orchestrator} ({note})" if note else orchestrator


def tool_label(name: str) -> str:
    """Display name of a tool: `sim:*` tools carry " (simulated)" so no one mistakes them for real calls.

    >>> tool_label("sim:gpt-5"), tool_label("local_search")
    ('sim:gpt-5 (simulated)', 'local_search')
    """
    return f"{name}{SIMULATED_SUFFIX}" if name.startswith("sim:") else name


def tool_call_table(tool_calls: pd.DataFrame, trajs: pd.DataFrame, run_ids: Sequence[str],
                    tools: pd.DataFrame | None = None) -> pd.DataFrame:
    """Calls per tool per task (paper Table 15) and each tool's share of the run's calls (Fig. 4).

    calls_per_task averages over tasks of the per-task mean over samples, counting 0 for trajectories
    that did not call the tool. share = the tool's calls / all tool calls of the run (sums to 1).
    `tools` (the report's tools frame) names the model behind a paper-toolkit slot in its label.
    Columns: run_id, tool_name, tool_label, simulated, calls, calls_per_task, share.
    """
    behind = {} if tools is None else {  # a tool without a model (search, code) has None, read back as NaN
        (r.run_id, r.tool_name): (r.model, bool(r.simulated)) for r in tools.itertuples()
        if isinstance(r.model, str) and r.model}
    columns = ["run_id", "tool_name", "tool_label", "simulated", "calls", "calls_per_task", "share"]
    rows = []
    for run_id in run_ids:
        calls = tool_calls[tool_calls.run_id == run_id]
        keys = trajs.loc[trajs.run_id == run_id, TRAJECTORY_KEY]
        if calls.empty or keys.empty:
            continue
        wide = calls.pivot_table(index=TRAJECTORY_KEY, columns="tool_name", values="n_calls",
                                 aggfunc="sum", fill_value=0)
        wide = keys.set_index(TRAJECTORY_KEY).join(wide).fillna(0)                         # (trajectories, tools)
        per_task_calls = wide.groupby(level="task_id", sort=False).mean().mean()
        totals = wide.sum()
        for tool in totals.index:
            model, simulated = behind.get((run_id, tool), (None, tool.startswith("sim:")))
            label = tool_label(tool) if tool.startswith("sim:") or model is None or model == tool else (
                f"{tool} ({model}{', simulated' if simulated else ''})")
            rows.append([run_id, tool, label, simulated, int(totals[tool]),
                         float(per_task_calls[tool]), float(totals[tool] / totals.sum())])
    return pd.DataFrame(rows, columns=columns)


def model_family(identifier: str | None) -> str | None:
    """Family of a model or orchestrator id: `gpt-5`, `qwen`, `llama`, `claude`, or None when unknown.

    The id is reduced to its model part first: the policy kind before ':' (`openai:`, `scripted:`, `hf:`,
    `sim:`), an endpoint after '@' and any path or organisation before the last '/' are dropped, so
    `openai:gpt-5@http://...`, `scripted:gpt-5-prompted`, `sim:gpt-5-mini` and `openai/gpt-5` are all
    the gpt-5 family, and `hf:/ckpt/Qwen3-8B` is qwen. The family is the first matching id prefix.

    >>> (model_family("openai:gpt-5@http://localhost:8000/v1"), model_family("sim:qwen3-32b"),
    ...  model_family("scripted:cheapest-first"))
    ('gpt-5', 'qwen', None)
    """
    if not identifier:
        return None
    name = identifier.strip().lower().split("@")[0]
    name = name.split(":", 1)[1] if ":" in name else name
    name = name.rstrip("/").split("/")[-1]
    return next((family for prefix, family in FAMILIES if name.startswith(prefix)), None)


def delegation_bias(tool_calls: pd.DataFrame, tools: pd.DataFrame, run_info: pd.DataFrame,
                    run_ids: Sequence[str]) -> pd.DataFrame:
    """Delegation-bias indices per run (paper Fig. 3), over *model calls*: calls to toolkit tools with a model.

    strongest_share: share of model calls that went to the run's strongest model, defined as the model
    tool(s) with the highest output price per token in the run's toolkit (ties all count). own_family_share:
    share of model calls to tools whose model is in the orchestrator's own family (`model_family` of the
    run's orchestrator string); NaN when that family is unknown (e.g. `scripted:cheapest-first`).
    Both are NaN for a run with no model calls.
    """
    columns = ["run_id", "model_calls", "strongest", "strongest_calls", "strongest_share",
               "orchestrator_family", "own_family_calls", "own_family_share"]
    orchestrators = run_info.set_index("run_id").orchestrator
    rows = []
    for run_id in run_ids:
        kit = tools[(tools.run_id == run_id) & tools.model.notna()]
        calls = tool_calls[tool_calls.run_id == run_id].groupby("tool_name").n_calls.sum()
        model_calls = calls.reindex(kit.tool_name).fillna(0)                   # calls per model tool
        total = float(model_calls.sum())
        top = kit.output_per_mtok.max() if len(kit) else np.nan
        strongest = kit.tool_name[kit.output_per_mtok == top].tolist()
        family = model_family(orchestrators.get(run_id, ""))
        own = kit.tool_name[kit.model.map(model_family) == family].tolist() if family else []
        strong_calls = float(model_calls[strongest].sum())
        own_calls = float(model_calls[own].sum()) if family else np.nan
        rows.append([run_id, int(total), ", ".join(strongest), int(strong_calls),
                     strong_calls / total if total else np.nan,
                     family, own_calls, own_calls / total if total and family else np.nan])
    return pd.DataFrame(rows, columns=columns)
