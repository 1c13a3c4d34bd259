"""Every metric of the `train_metrics` table, defined once: slash-key name -> what it measures.

One row per optimizer step (`step` = `trajectories.train_step` of the rollouts it trained on). TRL's own
log keys are renamed here (`TRL_KEYS`), so the dashboard, notebooks and reports read one vocabulary.
`tools/share/<feature>` has one entry per reward feature of the toolkit (a tool, or a slot).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

METRICS: dict[str, str] = {
    "loss": "Eq. 4 clipped surrogate (plus beta * KL) averaged over the step's kept tokens.",
    "kl": "Mean per-token KL to the reference model (only when beta > 0).",
    "clip/fraction": "Share of kept tokens whose importance ratio was clipped (TRL clip_ratio/region_mean).",
    "entropy": "Mean per-token entropy of the policy on kept tokens.",
    "grad_norm": "Gradient norm before clipping.",
    "learning_rate": "Learning rate used by this step.",
    "reward/mean": "Mean Eq. 2 reward over the rollouts that passed the format and invalid-output filters.",
    "reward/std": "Std (ddof=1) of that reward.",
    "outcome/mean": "Share of the step's rollouts that solved their task.",
    "filtered/format": "Share of rollouts dropped for a malformed tool call.",
    "filtered/invalid": "Share of rollouts dropped for having no valid final answer.",
    "filtered/homogeneous": "Share of rollouts in groups whose reward std was below the threshold.",
    "filtered/all": "Share of rollouts that carried no gradient (any reason).",
    "groups/informative": "Share of the step's GRPO groups with at least one rollout carrying gradient.",
    "update/skipped": "1 when no rollout of the step was kept, so the optimizer did not step; else 0.",
    "cost/per_trajectory": "Mean USD cost of a rollout (tool and model calls, at the example's prices).",
    "latency/per_trajectory": "Mean critical-path latency of a rollout, in seconds.",
    "turns/per_trajectory": "Mean orchestrator turns per rollout.",
    "tokens/generated": "Tokens the policy sampled in this step's rollouts (tool output excluded).",
    "time/rollout_s": "Seconds spent running the step's rollouts (generation and tools).",
    "time/reward_s": "Seconds spent grading, scoring (Eq. 2, Eq. 3, filters) and logging the rollouts.",
    "time/update_s": "Seconds of the step outside rollout and reward: forward, backward and optimizer.",
    "tools/share/<feature>": "Share of the step's executed calls that went to this tool or slot.",
    "rounds/kept": "Round protocol: training rows of the step (rounds of kept rollouts that ran a call).",
    "rounds/skipped_format": "Round protocol: rounds without a valid call (skipped in the "
                             "rollout, dropped from training).",
    "rounds/per_trajectory": "Round protocol: mean rounds per rollout that produced tokens.",
    "sampling/logp_gap/mean": "Mean abs(log pi_train - log pi_sampler) over the step's kept tokens (about 0 on a "
                              "batch's first pass at temperature 1: a larger one is a token, mask or "
                              "distribution mismatch).",
    "sampling/logp_gap/max": "Largest abs(log pi_train - log pi_sampler) over the step's kept tokens.",
    "sampling/ratio/min": "Smallest importance ratio pi_train / pi_sampler over the step's kept tokens.",
    "sampling/ratio/mean": "Mean importance ratio pi_train / pi_sampler over the step's kept tokens.",
    "sampling/ratio/max": "Largest importance ratio pi_train / pi_sampler over the step's kept tokens.",
    "probe/best_call": "Probability of the known best call on fixed round prompts, read from log-probabilities "
                       "after the step (`trainer.probe`; the learning check's runs, step 0 the start).",
}

#: TRL log key -> our name.
TRL_KEYS = {
    "loss": "loss", "kl": "kl", "clip_ratio/region_mean": "clip/fraction", "entropy": "entropy",
    "grad_norm": "grad_norm", "learning_rate": "learning_rate",
}


def rollout_metrics(tool_counts: Sequence[dict[str, int]], outcomes: Sequence[float], costs: Sequence[float],
                    latencies: Sequence[float], turns: Sequence[int], reasons: Sequence[str | None],
                    rewards: Sequence[float], passed: Sequence[bool], features: Sequence[str],
                    generated_tokens: int, groups: Sequence[str] = ()) -> dict[str, float]:
    """The rollout-side metrics of one generation batch (every rank's rows); `groups`: each row's GRPO group."""
    n = max(len(outcomes), 1)
    calls: Counter = Counter()
    for counts in tool_counts:
        calls.update(counts)
    total_calls = sum(calls.values())
    kept_rewards = np.asarray([r for r, ok in zip(rewards, passed) if ok], dtype=float)
    metrics = {
        "reward/mean": float(kept_rewards.mean()) if kept_rewards.size else 0.0,
        "reward/std": float(kept_rewards.std(ddof=1)) if kept_rewards.size > 1 else 0.0,
        "outcome/mean": float(np.mean(outcomes)) if len(outcomes) else 0.0,
        **{f"filtered/{reason}": sum(r == reason for r in reasons) / n for reason in ("format",
                                                                                      "invalid", "homogeneous")},
        "filtered/all": sum(r is not None for r in reasons) / n,
        "groups/informative": (len({g for g, r in zip(groups, reasons) if r is None}) / len(set(groups))
                               if groups else 0.0),
        "cost/per_trajectory": float(np.mean(costs)) if len(costs) else 0.0,
        "latency/per_trajectory": float(np.mean(latencies)) if len(latencies) else 0.0,
        "turns/per_trajectory": float(np.mean(turns)) if len(turns) else 0.0,
        "tokens/generated": float(generated_tokens),
    }
    metrics.update({f"tools/share/{name}": calls.get(name, 0) / total_calls if total_calls else 0.0
                    for name in features})
    return metrics


def metric_doc(name: str) -> str:
    """The definition of a metric name (`tools/share/x` resolves to its pattern)."""
    if name.startswith("tools/share/"):
        return METRICS["tools/share/<feature>"]
    return METRICS[name]
