"""Fit a simulated-model profile to logged runs of the real model it should imitate.

Which calls count as the model's graded answers: in each trajectory, the *last successful LLM-tool call*
(a `tool` step with a model and no error, latest by (turn, call_idx)). When its model is the one being
fitted, the trajectory's graded outcome is taken as that call's correctness. Why: the run stores one
grade per trajectory, not per call, and the final answer normally repeats the last expert's answer; an
orchestrator that ignores a right expert makes this a slight under-estimate, which smoothing towards the
prior partly absorbs. Evidence presence is judged exactly as `SimModel` judges it: the task's key facts
in that call's `prompt` argument.

Three fits:
- accuracy: per (accuracy key, difficulty, evidence) cell, k right out of n, Beta-smoothed towards the
  prior's P for that cell with `prior_strength` pseudo-counts: (k + s * p0) / (n + s). The smoothed cells
  are then projected onto the profile's parametrisation by weighted least squares in logit space,
  logit p = a[key, evidence] + offset[difficulty] (offset[medium] = 0, weights n + s), and each a[key, e]
  is turned back into the mean accuracy over the difficulty mix that the YAML stores.
- output tokens: lognormal by moments of log(tokens) over every successful call of the model.
- latency: least squares latency = base + per_token * output_tokens (non-negative), jitter = std of
  log(latency / fitted line).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import yaml

from lab.errors import LabInputError
from lab.pricing import canonical_model
from lab.sim.profiles import DIFFICULTIES, UNIFORM_MIX, AccuracyEntry, OutputLength, Profile
from lab.task import Task
from lab.tools.findings import finding
from lab.toolspec import LatencyProfile
from lab.world.task import evidence_found

#: Pseudo-counts of the prior in the Beta smoothing: a cell needs ~10 graded answers to move halfway.
PRIOR_STRENGTH = 10.0
_TRAJ_KEY = ["run_id", "task_id", "sample_idx", "train_step"]
_EPS = 1e-4


def fit_profile(
    trajectories_df: pd.DataFrame,
    steps_df: pd.DataFrame,
    tasks_df: pd.DataFrame,
    model: str,
    prior: Profile | None = None,
    prior_strength: float = PRIOR_STRENGTH,
) -> Profile:
    """A profile for `model` fitted from logs (columns as in `lab.records`), smoothed towards `prior`."""
    model = canonical_model(model)
    calls = model_calls(steps_df, model)
    if calls.empty:
        seen = sorted({canonical_model(m) for m in steps_df.get("model", pd.Series(dtype=str)).dropna()})
        raise LabInputError(
            f"no successful calls of model '{model}' in the logged steps (models seen: {', '.join(seen) or 'none'})"
        )
    samples = graded_answers(trajectories_df, steps_df, tasks_df, model)
    if samples.empty and prior is None:
        raise LabInputError(f"model '{model}' never gave a trajectory's last answer; pass a prior profile to fit it")
    base = prior or _neutral_prior(model, samples)
    accuracy, offsets = _fit_accuracy(samples, base, prior_strength)
    output_tokens = _fit_output_tokens(calls, base)
    latency, latency_source = _fit_latency(calls, base)
    return Profile(
        name=base.name,
        stands_for=base.stands_for,
        family=base.family,
        category=base.category,
        description=base.description,
        accuracy=accuracy,
        difficulty_logit=offsets,
        output_tokens=output_tokens,
        latency=latency,
        latency_source=latency_source,
        paper=base.paper,
        calibration_source=(
            f"fitted by lab.sim.calibrate.fit_profile from {len(samples)} graded last answers and {len(calls)} "
            f"calls of {model}; prior: {'profile ' + prior.name if prior else 'none (pooled rate)'}, "
            f"strength {prior_strength:g} pseudo-counts"
        ),
        difficulty_mix=base.difficulty_mix,
    )


# ---- selecting the data ---------------------------------------------------------------------------


def model_calls(steps_df: pd.DataFrame, model: str) -> pd.DataFrame:
    """Every successful tool call of `model` (for token and latency fits)."""
    if steps_df.empty:
        return steps_df
    ok = (steps_df["kind"] == "tool") & steps_df["model"].notna() & steps_df["error"].isna()
    calls = steps_df[ok]
    return calls[calls["model"].map(canonical_model) == canonical_model(model)]


def graded_answers(trajectories_df: pd.DataFrame, steps_df: pd.DataFrame, tasks_df: pd.DataFrame,
                   model: str) -> pd.DataFrame:
    """One row per trajectory whose last successful LLM call was `model`: domain, family, difficulty,
    evidence (bool) and outcome (0/1)."""
    columns = ["task_id", "domain", "family", "difficulty", "evidence", "outcome"]
    if steps_df.empty or trajectories_df.empty:
        return pd.DataFrame(columns=columns)
    llm = steps_df[(steps_df["kind"] == "tool") & steps_df["model"].notna() & steps_df["error"].isna()]
    last = llm.sort_values(_TRAJ_KEY + ["turn", "call_idx"]).groupby(_TRAJ_KEY, as_index=False).tail(1)
    last = last[last["model"].map(canonical_model) == canonical_model(model)]
    joined = last.merge(trajectories_df[_TRAJ_KEY + ["outcome"]], on=_TRAJ_KEY, how="inner")
    tasks = task_info(tasks_df)
    joined = joined.merge(tasks, on="task_id", how="inner")
    if joined.empty:
        return pd.DataFrame(columns=columns)
    findings = _findings_before(steps_df)
    joined["evidence"] = [
        evidence_found(facts, _prompt_of(args, found := findings(key, turn)), found, question)
        for facts, args, question, key, turn in zip(
            joined["facts"], joined["arguments_json"], joined["question"],
            zip(*(joined[k] for k in _TRAJ_KEY)), joined["turn"])
    ]
    joined["outcome"] = (joined["outcome"].astype(float) >= 0.5).astype(int)
    return joined[columns].reset_index(drop=True)


def task_info(tasks_df: pd.DataFrame) -> pd.DataFrame:
    """task_id, domain, family, difficulty, facts; from columns if present, else from `meta_json`.

    World tasks keep `family`, `difficulty` and `evidence` in their meta (the world's loader writes the
    WorldTask fields there); `family` falls back to the benchmark name, `difficulty` to medium.
    """
    rows = []
    for rec in tasks_df.to_dict("records"):
        meta = _json(rec.get("meta_json"), {})
        rows.append({
            "task_id": rec["task_id"],
            "question": rec.get("question") or "",
            "domain": rec.get("domain") or meta.get("domain") or "",
            "family": rec.get("family") or meta.get("family") or rec.get("benchmark") or "",
            "difficulty": rec.get("difficulty") or meta.get("difficulty") or "medium",
            "facts": list(rec.get("evidence") if isinstance(rec.get("evidence"), list) else meta.get("evidence") or []),
        })
    # A task id seen under two benchmarks keeps its last row: runs of one world never mix them.
    frame = pd.DataFrame(rows, columns=["task_id", "question", "domain", "family", "difficulty", "facts"])
    return frame.drop_duplicates("task_id", keep="last")


def _prompt_of(arguments_json: Any, context: list[str]) -> str:
    """What the model was shown: the prompt the orchestrator wrote, or (a paper-toolkit slot call, whose
    environment hands the model the context gathered so far) what earlier tools found."""
    args = _json(arguments_json, {})
    if isinstance(args, dict) and isinstance(args.get("prompt"), str):
        return args["prompt"]
    return "\n\n".join(context)


def _findings_before(steps_df: pd.DataFrame):
    """`findings(trajectory key, turn)`: what tools found before that turn, by the simulator's rule
    (`lab.world.task.finding`): successful tool calls that are not model replies (calls with a
    `prompt`), minus their own arguments."""
    found = steps_df[(steps_df["kind"] == "tool") & steps_df["error"].isna()]
    by_key: dict[tuple, list[tuple[int, str]]] = {}
    for row in found.itertuples():
        args = _json(row.arguments_json, {})
        if isinstance(args, dict) and "prompt" in args:
            continue
        key = tuple(getattr(row, k) for k in _TRAJ_KEY)
        by_key.setdefault(key, []).append((int(row.turn),
                                           finding(row.observation, args if isinstance(args, dict) else {})))

    def findings(key: tuple, turn: int) -> list[str]:
        return [text for t, text in by_key.get(tuple(key), []) if t < turn]

    return findings


def _json(text: Any, default: Any) -> Any:
    if not isinstance(text, str) or not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default


# ---- the three fits -------------------------------------------------------------------------------


def _fit_accuracy(
    samples: pd.DataFrame, prior: Profile, strength: float
) -> tuple[dict[str, AccuracyEntry], dict[str, float]]:
    samples = samples.assign(key=[prior.accuracy_key(d, f) for d, f in zip(samples["domain"], samples["family"])])
    counts = samples.groupby(["key", "difficulty", "evidence"])["outcome"].agg(["sum", "count"])
    keys = list(prior.accuracy)
    cells = [(k, d, e) for k in keys for d in DIFFICULTIES for e in (False, True)]  # (K * 3 * 2,)
    p_hat, weights = [], []
    for k, d, e in cells:
        right, n = (counts.loc[(k, d, e)] if (k, d, e) in counts.index else (0, 0))
        p0 = prior.p_correct(k, k, d, e)
        p_hat.append((right + strength * p0) / (n + strength))
        weights.append(n + strength)
    # Design: one column per (key, evidence) intercept, then offsets for easy and hard (medium = 0).
    ab = [(k, e) for k in keys for e in (False, True)]
    X = np.zeros((len(cells), len(ab) + 2))  # (cells, 2K + 2)
    for i, (k, d, e) in enumerate(cells):
        X[i, ab.index((k, e))] = 1.0
        if d != "medium":
            X[i, len(ab) + (0 if d == "easy" else 1)] = 1.0
    y = np.log(np.array(p_hat) / (1 - np.array(p_hat)))  # (cells,)
    sw = np.sqrt(np.array(weights))
    coef, *_ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
    offsets = {"easy": float(coef[-2]), "medium": 0.0, "hard": float(coef[-1])}
    mix = _norm(prior.difficulty_mix)
    accuracy: dict[str, AccuracyEntry] = {}
    for k in keys:
        means = {e: sum(w * _sigmoid(coef[ab.index((k, e))] + offsets[d]) for d, w in mix.items())
                 for e in (False, True)}
        without = _clip(means[False])
        with_ = max(_clip(means[True]), without)  # evidence never hurts; noise may say otherwise
        n0 = int(samples[(samples.key == k) & ~samples.evidence.astype(bool)].shape[0])
        n1 = int(samples[(samples.key == k) & samples.evidence.astype(bool)].shape[0])
        accuracy[k] = AccuracyEntry(
            without_evidence=without, with_evidence=with_,
            source=f"fitted: {n0} graded answers without evidence, {n1} with; Beta-smoothed "
                   f"({strength:g} pseudo-counts)",
        )
    return accuracy, offsets


def _fit_output_tokens(calls: pd.DataFrame, prior: Profile) -> OutputLength:
    tokens = calls["output_tokens"].to_numpy(dtype=float)
    tokens = tokens[tokens > 0]
    if len(tokens) < 2:
        return prior.output_tokens
    logs = np.log(tokens)
    return OutputLength(
        median_tokens=round(float(math.exp(logs.mean())), 2),
        sigma=round(float(logs.std(ddof=1)), 4),
        source=f"fitted: lognormal moments of log(output tokens) over {len(tokens)} calls",
    )


def _fit_latency(calls: pd.DataFrame, prior: Profile) -> tuple[LatencyProfile, str]:
    data = calls[(calls["latency_s"] > 0)]
    t = data["output_tokens"].to_numpy(dtype=float)  # (n,)
    lat = data["latency_s"].to_numpy(dtype=float)  # (n,)
    if len(lat) < 3:
        return prior.latency, prior.latency_source
    base, per_token = np.linalg.lstsq(np.column_stack([np.ones_like(t), t]), lat, rcond=None)[0]
    if per_token < 0:  # no length effect visible: a constant
        base, per_token = lat.mean(), 0.0
    elif base < 0:  # fit through the origin instead
        base, per_token = 0.0, float((t * lat).sum() / (t * t).sum())
    pred = base + per_token * t
    ratio = np.log(lat[pred > 0] / pred[pred > 0])
    jitter = float(ratio.std(ddof=1)) if len(ratio) > 1 else 0.0
    latency = LatencyProfile(
        base_s=round(float(base), 4), per_output_token_s=round(float(per_token), 6), jitter=round(jitter, 4)
    )
    return latency, f"fitted: least squares latency = base + per_token * output_tokens over {len(lat)} calls"


def _neutral_prior(model: str, samples: pd.DataFrame) -> Profile:
    """A prior that knows nothing: every family at the model's pooled success rate, default offsets."""
    right, n = int(samples["outcome"].sum()), len(samples)
    pooled = _clip((right + 1) / (n + 2))
    entry = {"without_evidence": pooled, "with_evidence": pooled, "source": "neutral prior: pooled success rate"}
    keys = sorted(set(samples["family"]) | {"default"})
    return Profile(
        name=model, stands_for=model, family=model.split("-")[0], category="generalist",
        accuracy={k: entry for k in keys},
        output_tokens=OutputLength(median_tokens=500, sigma=0.7, source="assumption (no prior)"),
        latency=LatencyProfile(base_s=2.0, per_output_token_s=0.01, jitter=0.3),
        latency_source="assumption (no prior)",
        difficulty_mix=dict(UNIFORM_MIX),
    )


# ---- reporting ------------------------------------------------------------------------------------


def calibration_table(tasks: list[Task], profiles: dict[str, Profile]) -> pd.DataFrame:
    """Exact expected accuracy (percent) of each profile on these tasks, beside the paper's numbers.

    `no_tool` assumes prompts without evidence (the model used alone), `with_evidence` prompts holding
    every listed fact; `paper_no_tool` is Table 1's no-tool number where the paper has one. Computed from
    P(correct), not sampled, so a difference to the paper is the task mix (difficulty, domains), not noise.
    """
    bench = {"hle": "hle", "frames": "frames", "tau2": "tau2_bench"}
    rows = []
    for profile in profiles.values():
        for family in sorted({t.family for t in tasks}):
            subset = [t for t in tasks if t.family == family]
            alone = [profile.p_correct(t.domain, t.family, t.difficulty, False) for t in subset]
            helped = [profile.p_correct(t.domain, t.family, t.difficulty, bool(t.evidence)) for t in subset]
            paper = profile.paper.no_tool.get(bench.get(family, family)) if profile.paper else None
            rows.append({
                "profile": profile.name, "family": family, "tasks": len(subset),
                "no_tool": 100 * float(np.mean(alone)), "with_evidence": 100 * float(np.mean(helped)),
                "paper_no_tool": paper,
            })
    return pd.DataFrame(rows, columns=["profile", "family", "tasks", "no_tool", "with_evidence", "paper_no_tool"])


# ---- writing --------------------------------------------------------------------------------------


def profile_to_yaml(profile: Profile) -> str:
    """A complete profiles file holding this one profile; `load_profiles` reads it back."""
    body = profile.model_dump(mode="json", exclude={"name", "difficulty_mix"}, exclude_none=True)
    for entry in body["accuracy"].values():
        entry["without_evidence"] = round(entry["without_evidence"], 4)
        entry["with_evidence"] = round(entry["with_evidence"], 4)
    body["difficulty_logit"] = {d: round(v, 4) for d, v in body["difficulty_logit"].items()}
    doc = {
        "version": 1,
        "calibration_source": profile.calibration_source or "written by lab.sim.calibrate.profile_to_yaml",
        "difficulty_mix": dict(profile.difficulty_mix),
        "profiles": {profile.name: body},
    }
    return yaml.safe_dump(doc, sort_keys=False, width=120)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _clip(p: float) -> float:
    return min(max(float(p), _EPS), 1 - _EPS)


def _norm(mix: dict[str, float]) -> dict[str, float]:
    total = sum(mix.values())
    return {d: w / total for d, w in mix.items()}


__all__ = [
    "PRIOR_STRENGTH", "calibration_table", "fit_profile", "graded_answers", "model_calls", "profile_to_yaml",
    "task_info",
]
