"""Reprice a logged run: every step's cost from its logged tokens under another provider's price table.

Why from tokens: a run's cost depends on the price table as much as on the routing, and the paper's
unseen-pricing experiment (Table 4) asks what the same trajectories would cost elsewhere. Nothing
logged is modified; `orchestra reprice` and the report's `--pricing` only print.

`step_costs_under`, `reprice_steps`: each step's cost from its logged tokens under another
price table. Steps of a local model, and the orchestrator rows of an `hf:` orchestrator, are *local*:
nobody bills them per token, so they keep their logged cost (0) as "local, unpriced", or, given a GPU
rate, cost their logged latency x rate / 3600 ("local at $X/GPU-hour"; an upper bound under
concurrency, since a call's latency includes time queued behind other calls on the same model). A step
is local when its tool is a `local_llm` tool of the run's toolkit, never when it is one of its `openai`
or `sim` tools, and otherwise (paper-toolkit slots, tools the toolkit does not list, orchestrator rows,
no toolkit given) when its model id is SmolLM2's (`smollm2-135m-instruct`), one a `local_llm` tool of
the toolkit records, or starts with `hf:`. Any other model without a price is a one-line error listing
them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.pricing import PriceTable, canonical_model
from lab.scoring import TRAJECTORY_KEY

#: How local models are priced without a GPU rate.
LOCAL_UNPRICED = "local, unpriced"


def orchestrator_model(orchestrator: str) -> str | None:
    """The priced model behind a run's orchestrator: `openai:<model>@<url>` -> model; None for local and
    scripted orchestrators, which cost nothing per token."""
    if not orchestrator.startswith("openai:"):
        return None
    return orchestrator.removeprefix("openai:").partition("@")[0] or None


@dataclass(frozen=True)
class ToolkitLocality:
    """What a run's toolkit says about which steps ran a local model (see `local_mask`)."""

    local_tools: frozenset[str]      # top-level `local_llm` tools: every call is local
    model_tools: frozenset[str]      # top-level `openai` / `sim` tools: their model is a priced one
    local_ids: frozenset[str]        # model ids the toolkit's `local_llm` tools record (paper slots too)

    @classmethod
    def of(cls, toolkit_json: str | None) -> ToolkitLocality:
        """Read from a run's `toolkit_json`. The ids are those `lab.tools.local_llm.LocalLLMTool`
        records: backend.model_id, else the spec's model, else SmolLM2's id (no path), else the path's
        file stem and folder name (both: the file may be gone, so its kind cannot be checked)."""
        local, model, ids = set(), set(), set()
        for tool in json.loads(toolkit_json or "{}").get("tools", []):
            backend = tool.get("backend") or {}
            if backend.get("kind") == "local_llm":
                local.add(tool["name"])
            elif backend.get("kind") in ("openai", "sim"):
                model.add(tool["name"])
            slots = [*(tool.get("slots") or {}).values(), *(backend.get("slots") or {}).values()]
            for entry in [tool, *slots]:                        # a paper tool's slots are model tools
                if isinstance(entry, dict) and (entry.get("backend") or {}).get("kind") == "local_llm":
                    ids |= _local_ids(entry)
        return cls(frozenset(local), frozenset(model), frozenset(ids))


def _local_ids(entry: dict[str, Any]) -> set[str]:
    backend = entry.get("backend") or {}
    if backend.get("model_id") or entry.get("model"):
        return {canonical_model(str(backend.get("model_id") or entry["model"]))}
    if backend.get("path"):
        path = PurePath(str(backend["path"]))
        return {canonical_model(path.stem), canonical_model(path.name)}
    return {_smollm2_id()}


def is_local_model(model: str | None, local_ids: Iterable[str] = ()) -> bool:
    """True for a model id only a local run records: `hf:...`, SmolLM2's id, or one of `local_ids`."""
    if not model:
        return False
    return model.startswith("hf:") or canonical_model(model) in {_smollm2_id(), *local_ids}


def _smollm2_id() -> str:
    # Imported here: `lab.tools` costs startup time every `orchestra` command would pay.
    from lab.tools.local_llm import SMOLLM2_MODEL_ID

    return SMOLLM2_MODEL_ID


def local_mask(steps: pd.DataFrame, toolkit_json: str | None = None) -> np.ndarray:
    """(S,) True for steps that ran a local model.

    A call of a `local_llm` tool of the run's toolkit is local; a call of its `openai` or `sim` tools is
    not (their model is a hosted one, whatever its id). Any other step (a paper-toolkit slot, a tool the
    toolkit does not list, an orchestrator row, or no toolkit given) is local when its model id is
    (`is_local_model`, with the ids of the toolkit's `local_llm` tools).
    """
    if steps.empty:
        return np.zeros(0, dtype=bool)
    kit = ToolkitLocality.of(toolkit_json)
    models = steps.model.fillna("")
    by_id = models.isin([m for m in models.unique() if is_local_model(m, kit.local_ids)]).to_numpy()
    tool = steps.tool_name.fillna("")
    return tool.isin(kit.local_tools).to_numpy() | (by_id & ~tool.isin(kit.model_tools).to_numpy())


def with_orchestrator_steps(steps: pd.DataFrame, trajs: pd.DataFrame, orchestrator: str,
                            toolkit_json: str | None = None) -> pd.DataFrame:
    """Steps plus one row per trajectory for the orchestrator's own tokens, cost and latency (the engine
    logs them on the trajectory, not as a step), so repricing covers the orchestrator model too, and a
    `local` column (`local_mask`; `hf:` orchestrator rows are local). Pass the run's `toolkit_json` so
    local tools are recognised by their backend kind, not only by model id.

    A judge's steps (kind `judge`) are left out: their cost is the grading's, never part of the
    trajectory's `cost_usd`, so neither the orchestrator's share nor the repriced run may include it."""
    if "kind" in steps:
        steps = steps[steps.kind != "judge"]
    steps = steps.assign(local=local_mask(steps, toolkit_json))
    model = orchestrator_model(orchestrator) or (orchestrator if orchestrator.startswith("hf:") else None)
    if model is None or trajs.empty:
        return steps
    if len(steps):
        tool_cost = steps.groupby(TRAJECTORY_KEY).cost_usd.sum().rename("tool_cost")
        # tools of one turn run concurrently: the turn waited for its slowest call  # (T,) -> per trajectory
        tool_latency = (steps.groupby(TRAJECTORY_KEY + ["turn"]).latency_s.max()
                        .groupby(level=TRAJECTORY_KEY).sum().rename("tool_latency"))
    else:  # keyed like the grouped sums, so the joins below line up (a run of judge-only steps, or none)
        nothing = pd.MultiIndex.from_tuples([], names=TRAJECTORY_KEY)
        tool_cost = pd.Series(dtype=float, name="tool_cost", index=nothing)
        tool_latency = pd.Series(dtype=float, name="tool_latency", index=nothing)
    own = (trajs[TRAJECTORY_KEY + ["input_tokens", "output_tokens", "cost_usd", "latency_s"]]
           .join(tool_cost, on=TRAJECTORY_KEY).join(tool_latency, on=TRAJECTORY_KEY))
    own = own.assign(cost_usd=(own.cost_usd - own.tool_cost.fillna(0.0)).clip(lower=0.0),
                     latency_s=(own.latency_s - own.tool_latency.fillna(0.0)).clip(lower=0.0), model=model,
                     tool_name="(orchestrator)", kind="orchestrator", local=model.startswith("hf:"))
    return pd.concat([steps, own.drop(columns=["tool_cost", "tool_latency"])], ignore_index=True)


def step_costs_under(steps: pd.DataFrame, table: PriceTable, gpu_hour_usd: float | None = None) -> np.ndarray:
    """Each step's cost under `table`, from its logged tokens; steps without a model keep their cost.

    Local steps (the `local` column of `with_orchestrator_steps`, else `is_local_model`) keep their
    cost, or cost latency_s x `gpu_hour_usd` / 3600 when a GPU rate is given. Every other model must
    have a price in the new table: a silent zero would make a run look cheaper than it is, so missing
    prices are a user error listing the models.
    """
    if gpu_hour_usd is not None and not (np.isfinite(gpu_hour_usd) and gpu_hour_usd >= 0):
        raise LabInputError(f"--gpu-hour-usd must be a finite number >= 0, got {gpu_hour_usd}")
    models = steps.model.fillna("") if len(steps) else pd.Series(dtype=str)
    local = _local_column(steps)                                        # (S,)
    priced = (models != "").to_numpy() & ~local
    missing = sorted(m for m in models[priced].unique() if not table.has(m))
    if missing:
        raise LabInputError(f"pricing '{table.name}' has no price for model(s) {', '.join(missing)}")
    new = steps.cost_usd.to_numpy(float).copy()                         # (S,)
    for model in models[priced].unique():
        mask = (models == model).to_numpy() & priced
        new[mask] = table.price(model).cost(steps.input_tokens.to_numpy()[mask], steps.output_tokens.to_numpy()[mask])
    if gpu_hour_usd is not None and local.any():
        new[local] = steps.latency_s.fillna(0.0).to_numpy(float)[local] * gpu_hour_usd / 3600
    return new


def reprice_steps(steps: pd.DataFrame, table: PriceTable, gpu_hour_usd: float | None = None) -> pd.DataFrame:
    """Per-model calls, tokens, logged cost and cost under `table` (see `step_costs_under`); local
    models are priced by "local, unpriced" or "local at $X/GPU-hour"."""
    columns = ["model", "calls", "input_tokens", "output_tokens", "old_cost_usd", "new_cost_usd", "priced_by"]
    if steps.empty:
        return pd.DataFrame(columns=columns)
    steps = steps.assign(model=steps.model.fillna(""), local=_local_column(steps),
                         new_cost_usd=step_costs_under(steps, table, gpu_hour_usd))
    local_by = LOCAL_UNPRICED if gpu_hour_usd is None else f"local at ${gpu_hour_usd:g}/GPU-hour"
    rows = []
    for (model, local), group in steps.groupby(["model", "local"], sort=True):
        by = local_by if local else table.price(model).provider if model else "(no model: unchanged)"
        rows.append([model or "(tools without a model)", len(group), int(group.input_tokens.sum()),
                     int(group.output_tokens.sum()), float(group.cost_usd.sum()), float(group.new_cost_usd.sum()), by])
    return pd.DataFrame(rows, columns=columns)


def _local_column(steps: pd.DataFrame) -> np.ndarray:
    """The `local` column as a bool array, or the model-id rule when the frame has none."""
    if "local" in steps.columns:
        return steps.local.astype("boolean").fillna(False).to_numpy(bool)
    return local_mask(steps)
