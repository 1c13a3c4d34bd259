"""Preference-aware rewards, GRPO advantages and the preference score (paper Eq. 2, §3.3, Table 3).

Pure numpy and vectorised, with no model calls: a logged run can be rescored under any preference
vector long after its rollouts, and the trainer adapts these functions instead of reimplementing them.

The equation. A trajectory tau with n tools has raw features (one row of M, shape (n + 3,))

    M[tau] = [m_1, ..., m_n, r, -c, -l]

calls of each tool, outcome r in {0, 1}, cost c in USD and latency l in seconds. The minus signs make
"larger is better" hold for every column, so one preference vector P in [0, 1]^(n+3) weighs them all.
Within a group T (the rollouts of one task under one P) every column k is min-max normalised:

    Mn[tau, k] = (M[tau, k] - min_T M[., k]) / (max_T M[., k] - min_T M[., k])     (0 if max == min)

and the reward is gated by the outcome:

    R(tau) = Mn[tau] . P   if r(tau) == 1,   else 0.

Note what the normalisation implies: a column that is constant within the group adds nothing, so the
outcome weight only separates successes from failures in groups that hold both.

The GRPO advantage is A = (R - mean_T R) / std_T R with the sample std (ddof=1); groups whose std is
below a threshold (0.1 in the paper) carry no signal and are dropped (homogeneity filter).

>>> M = np.array([[2, 0, 1, -0.10, -30.0],    # tool1 x2, success, $0.10, 30 s
...               [0, 1, 1, -0.50, -10.0],    # tool2 x1, success, $0.50, 10 s
...               [1, 1, 0, -0.30, -20.0]])   # failure
>>> P = np.array([0, 0, 1, 1, 0])              # outcome and cost matter
>>> preference_rewards(M, P).round(3).tolist()  # row 0: 1 + (0.4/0.4); row 1: 1 + 0; row 2: gated
[2.0, 1.0, 0.0]
>>> A, keep = group_advantages(np.array([2.0, 1.0, 0.0]), ["t", "t", "t"])
>>> A.tolist(), keep.tolist()
([1.0, 0.0, -1.0], [True, True, True])
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from lab.errors import LabInputError

if TYPE_CHECKING:
    from lab.preference import Preference

__all__ = [
    "RewardScale",
    "feature_matrix",
    "group_advantages",
    "grpo_scores",
    "minmax_normalise",
    "preference_rewards",
    "preference_score",
    "rescore",
]

#: Std below which a GRPO group is dropped as homogeneous (paper §3.3).
STD_THRESHOLD = 0.1


class RewardScale(NamedTuple):
    """Cost and latency on one scale for a whole run instead of min-max within each group (variants, not
    the paper's). `utility` False: Eq. 2 with c_ref / (c_ref + cost) and l_ref / (l_ref + latency) in place
    of the normalised columns, still gated by the outcome. `utility` True: the learning curve's U,
    w_o * r - w_c * cost / c_ref - w_l * latency / l_ref, for every rollout (tool weights still on the
    group-normalised calls of a solved one)."""

    c_ref: float
    l_ref: float
    utility: bool = False


# ---------------------------------------------------------------- groups


def _group_index(group_ids: Sequence[Hashable] | np.ndarray | None, n_rows: int) -> tuple[np.ndarray, int]:
    """Map arbitrary hashable labels to dense ints 0..G-1; returns (inverse (B,), G).

    np.unique covers the common case (strings or ints) quickly; labels numpy cannot sort or that turn
    into a 2-D array (tuples, mixed types) fall back to a dict, still O(B).
    """
    if group_ids is None:
        return np.zeros(n_rows, dtype=np.intp), 1 if n_rows else 0
    labels: np.ndarray | None
    if isinstance(group_ids, np.ndarray) and group_ids.ndim == 1 and group_ids.dtype != object:
        labels = group_ids
    else:
        ids = list(group_ids)
        kinds = set(map(type, ids))
        # Only all-str or all-int lists go through numpy: a mixed list would make 1 and "1" collide.
        labels = np.asarray(ids) if kinds in ({str}, {int}) else None
    if labels is not None:
        if len(labels) != n_rows:
            raise LabInputError(f"group_ids has {len(labels)} entries; features have {n_rows} rows")
        _, inverse = np.unique(labels, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.intp)
        return inverse, int(inverse.max()) + 1 if n_rows else 0
    if len(ids) != n_rows:
        raise LabInputError(f"group_ids has {len(ids)} entries; features have {n_rows} rows")
    codes: dict[Hashable, int] = {}
    inverse = np.fromiter((codes.setdefault(g, len(codes)) for g in ids), dtype=np.intp, count=n_rows)
    return inverse, len(codes)


def _group_extrema(X: np.ndarray, inverse: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group column min and max, each (G, K), by one sort and `reduceat` (fast at B ~ 1e5)."""
    order = np.argsort(inverse, kind="stable")
    sorted_groups = inverse[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    Xs = X[order]                                               # (B, K), rows grouped
    lo = np.minimum.reduceat(Xs, starts, axis=0)                # (G_present, K)
    hi = np.maximum.reduceat(Xs, starts, axis=0)
    present = sorted_groups[starts]                             # group id of each block
    full_lo = np.zeros((n_groups, X.shape[1]))
    full_hi = np.zeros((n_groups, X.shape[1]))
    full_lo[present], full_hi[present] = lo, hi
    return full_lo, full_hi


# ---------------------------------------------------------------- Eq. 2


def minmax_normalise(M: np.ndarray, group_ids: Sequence[Hashable] | np.ndarray | None = None) -> np.ndarray:
    """Min-max normalise every column of M within each group to [0, 1]; constant columns become 0.

    Safe for any finite input: when max - min overflows (|values| near 1e308) the ratio is taken on
    halved values, which cannot overflow; tiny (subnormal) spans are exact by IEEE gradual underflow.

    >>> minmax_normalise(np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]])).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.5, 0.0]]
    """
    X = _as_matrix(M, min_cols=0)
    inverse, n_groups = _group_index(group_ids, X.shape[0])
    if X.shape[0] == 0:
        return X.copy()
    g_lo, g_hi = _group_extrema(X, inverse, n_groups)
    lo, hi = g_lo[inverse], g_hi[inverse]                       # (B, K) each
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        span = hi - lo
        out = np.zeros_like(X)
        ok = (hi != lo) & np.isfinite(span)
        np.divide(X - lo, span, out=out, where=ok)
        huge = (hi != lo) & ~np.isfinite(span)
        if huge.any():
            halved = (X[huge] / 2 - lo[huge] / 2) / (hi[huge] / 2 - lo[huge] / 2)
            out[huge] = halved
    return np.clip(out, 0.0, 1.0)


def preference_rewards(
    M: np.ndarray, P: np.ndarray, group_ids: Sequence[Hashable] | np.ndarray | None = None,
    scale: RewardScale | tuple[float, float] | None = None,
) -> np.ndarray:
    """R = normalised(M) . P where the outcome is 1, else 0 (paper Eq. 2); shape (B,).

    M is (B, n + 3) raw features [tool calls..., outcome in {0, 1}, -cost_usd, -latency_s], P is
    (n + 3,) or (B, n + 3). Columns are normalised within each group (all rows form one group when
    `group_ids` is None). Bounded by sum(|P|), never NaN or inf for finite input.

    `scale` = (c_ref, l_ref), a variant (not the paper's): cost and latency are normalised on that fixed
    scale, c_ref / (c_ref + cost) and l_ref / (l_ref + latency), instead of within the group. Why: min-max
    stretches whatever spread a group has to [0, 1], so eight rollouts of one route, differing only by
    the models' token noise, get rewards a full unit apart; on a fixed scale that noise stays small,
    while a call that costs twice as much still scores lower whatever else its group holds.

    `RewardScale(c_ref, l_ref, utility=True)`: R = w_o * r - w_c * cost / c_ref - w_l * latency / l_ref (plus
    the tool terms of a solved rollout). Why: Eq. 2 gates the cost term by the outcome and bounds it by
    w_compute, so under "accurate but cheap" (w_o = w_c = 1) a route solving twice as often wins at any
    price, and a failed rollout's spending is free; the learning curve and `orchestra train evidence`
    score U, which charges every cent.

    >>> preference_rewards(np.array([[1, 1, -2.0, -1], [3, 1, -1.0, -1]]), np.array([1, 1, 1, 1])).tolist()
    [0.0, 2.0]
    """
    X = _as_matrix(M)
    weights = _as_preference(P, X.shape)
    outcome = X[:, -3]
    bad = ~np.isin(outcome, (0.0, 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise LabInputError(f"features row {row}: outcome column must be 0 or 1, got {outcome[row]!r}")
    normalised = minmax_normalise(X, group_ids)                 # (B, n + 3)
    if scale is None:
        return np.where(outcome == 1.0, (normalised * weights).sum(axis=1), 0.0)
    scale = RewardScale(*scale)
    if not (scale.c_ref > 0 and scale.l_ref > 0 and np.isfinite(scale.c_ref) and np.isfinite(scale.l_ref)):
        raise LabInputError(f"reward scale: c_ref and l_ref must be finite and > 0, got {tuple(scale)[:2]}")
    cost, latency = np.maximum(-X[:, -2], 0.0), np.maximum(-X[:, -1], 0.0)
    if scale.utility:
        w = np.broadcast_to(weights, X.shape)                   # (B, n + 3)
        tools = np.where(outcome == 1.0, (normalised[:, :-3] * w[:, :-3]).sum(axis=1), 0.0)
        return w[:, -3] * outcome - w[:, -2] * cost / scale.c_ref - w[:, -1] * latency / scale.l_ref + tools
    normalised[:, -2] = scale.c_ref / (scale.c_ref + cost)
    normalised[:, -1] = scale.l_ref / (scale.l_ref + latency)
    return np.where(outcome == 1.0, (normalised * weights).sum(axis=1), 0.0)


def feature_matrix(
    tool_counts: Sequence[dict[str, int]],
    outcomes: Sequence[float] | np.ndarray,
    costs: Sequence[float] | np.ndarray,
    latencies: Sequence[float] | np.ndarray,
    tools: Sequence[str],
) -> np.ndarray:
    """Build M (B, n + 3) = [calls per tool in `tools` order, outcome, -cost_usd, -latency_s].

    The signs follow the paper exactly: cost and latency enter negated, so a larger normalised value is
    always better (the authors' public code mixes signs here; see docs/reward.md).

    >>> feature_matrix([{"web": 2}, {}], [1, 0], [0.5, 0.1], [3.0, 1.0], ["web", "gpt-5"]).tolist()
    [[2.0, 0.0, 1.0, -0.5, -3.0], [0.0, 0.0, 0.0, -0.1, -1.0]]
    """
    n_rows = len(tool_counts)
    columns = {"outcomes": outcomes, "costs": costs, "latencies": latencies}
    arrays = {}
    for name, values in columns.items():
        array = np.asarray(values, dtype=float).reshape(-1)
        if len(array) != n_rows:
            raise LabInputError(f"{name} has {len(array)} entries; tool_counts has {n_rows}")
        if not np.isfinite(array).all():
            raise LabInputError(f"{name}: every entry must be finite, got {array[~np.isfinite(array)][0]}")
        arrays[name] = array
    for name in ("costs", "latencies"):
        if (arrays[name] < 0).any():
            row = int(np.flatnonzero(arrays[name] < 0)[0])
            raise LabInputError(f"{name} row {row}: must be >= 0, got {arrays[name][row]}")
    position = {tool: i for i, tool in enumerate(tools)}
    if len(position) != len(tools):
        raise LabInputError(f"tools: names must be unique, got {list(tools)}")
    counts = np.zeros((n_rows, len(tools)))                     # (B, n)
    for row, row_counts in enumerate(tool_counts):
        for tool, calls in row_counts.items():
            if tool not in position:
                raise LabInputError(f"tool_counts row {row}: unknown tool '{tool}' (toolkit: {', '.join(tools)})")
            if not calls >= 0:
                raise LabInputError(f"tool_counts row {row}: '{tool}' must be >= 0 calls, got {calls!r}")
            counts[row, position[tool]] = calls
    return np.column_stack([counts, arrays["outcomes"], -arrays["costs"], -arrays["latencies"]])


# ---------------------------------------------------------------- GRPO


def group_advantages(
    R: np.ndarray,
    group_ids: Sequence[Hashable] | np.ndarray | None,
    std_threshold: float = STD_THRESHOLD,
) -> tuple[np.ndarray, np.ndarray]:
    """GRPO advantages A = (R - group mean) / group std (ddof=1) and a keep mask, both (B,).

    ddof=1 matches the reference code and TRL. A group whose std is below `std_threshold` carries no
    learning signal (paper §3.3, homogeneity filter): its rows get keep=False and A=0. A group of one
    has no sample std; it counts as std 0 and is dropped.

    >>> A, keep = group_advantages(np.array([1.0, 1.0, 0.0, 2.0]), ["a", "a", "b", "b"])
    >>> A.round(4).tolist(), keep.tolist()
    ([0.0, 0.0, -0.7071, 0.7071], [False, False, True, True])
    """
    rewards = np.asarray(R, dtype=float)
    if rewards.ndim != 1:
        raise LabInputError(f"rewards must be 1-D, got shape {rewards.shape}")
    if not np.isfinite(rewards).all():
        raise LabInputError("rewards: every entry must be finite")
    if not (np.isfinite(std_threshold) and std_threshold >= 0):
        raise LabInputError(f"std_threshold must be a finite number >= 0, got {std_threshold}")
    inverse, n_groups = _group_index(group_ids, len(rewards))
    if len(rewards) == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    # Work on R / scale so squares cannot overflow; A is scale-free and the std is scaled back.
    scale = float(np.abs(rewards).max()) or 1.0
    x = rewards / scale
    counts = np.bincount(inverse, minlength=n_groups)           # (G,)
    mean = np.bincount(inverse, weights=x, minlength=n_groups) / np.maximum(counts, 1)
    centred = x - mean[inverse]                                 # (B,)
    sq = np.bincount(inverse, weights=centred**2, minlength=n_groups)
    std = np.sqrt(np.divide(sq, counts - 1, out=np.zeros(n_groups), where=counts > 1))
    keep_group = std >= std_threshold / scale                  # std * scale could overflow
    if std_threshold == 0:
        keep_group &= std > 0                                   # never divide by a zero std
    keep = keep_group[inverse]
    with np.errstate(invalid="ignore", divide="ignore"):  # masked lanes may still be evaluated by SIMD loops
        A = np.divide(centred, std[inverse], out=np.zeros_like(x), where=keep)
    return A, keep


# ---------------------------------------------------------------- evaluation and rescoring


def preference_score(
    M: np.ndarray,
    P: np.ndarray,
    systems: Sequence[str],
    task_ids: Sequence[Hashable] | np.ndarray,
) -> dict[str, float]:
    """Preference-aware evaluation score per system (paper Table 3), in long format.

    Row i of M is one trajectory of system `systems[i]` on task `task_ids[i]`. For each task, the
    trajectories of *all* compared systems on it are normalised together (column min-max, constant
    columns 0), dotted with P and gated by outcome, i.e. Eq. 2 with the task as the group; a system's
    score is the mean of its trajectories' rewards across tasks. The paper's appendix formula is not
    public; this is our definition, so scores compare systems only within one call.

    >>> M = np.array([[1, 1, -1.0, -5], [0, 1, -0.1, -5], [0, 0, -0.1, -5]])
    >>> P = np.array([0, 0, 1, 0])                 # only cost matters
    >>> preference_score(M, P, ["big", "small", "small"], ["q1", "q1", "q1"])
    {'big': 0.0, 'small': 0.5}
    """
    labels = list(systems)
    X = _as_matrix(M)
    if len(labels) != X.shape[0]:
        raise LabInputError(f"systems has {len(labels)} entries; features have {X.shape[0]} rows")
    rewards = preference_rewards(X, P, group_ids=task_ids)
    inverse, n_systems = _group_index(labels, len(labels))
    totals = np.bincount(inverse, weights=rewards, minlength=n_systems)
    counts = np.bincount(inverse, minlength=n_systems)
    first_row: dict[str, int] = {}
    for row, name in enumerate(labels):
        first_row.setdefault(name, row)
    # Report systems in order of first appearance, so tables follow the caller's order.
    return {name: float(totals[inverse[row]] / counts[inverse[row]]) for name, row in first_row.items()}


def rescore(
    tool_counts: Sequence[dict[str, int]],
    outcomes: Sequence[float] | np.ndarray,
    costs: Sequence[float] | np.ndarray,
    latencies: Sequence[float] | np.ndarray,
    tools: Sequence[str],
    P: np.ndarray | Preference,
    group_ids: Sequence[Hashable] | np.ndarray | None,
    std_threshold: float = STD_THRESHOLD,
    passed: Sequence[bool] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rewards, advantages and keep mask for logged trajectories under preference P: (R, A, keep).

    Features from logged counts, outcomes, costs and latencies, then Eq. 2 and the GRPO advantage with
    the homogeneity filter (`grpo_scores`); `orchestra rescore` and the trainer run the same through
    `lab.scoring.FeatureFrame`, which also fixes the columns and the groups. A `Preference` must name
    the same tools in the same order as `tools`, so column i of M and entry i of P mean the same thing.
    `passed` (B,) marks the trajectories that passed the trajectory filters (`lab.filters`): the others
    get R 0, A 0, keep False and take no part in their group's min-max or std.
    """
    if hasattr(P, "tools") and hasattr(P, "vector"):
        if tuple(P.tools) != tuple(tools):
            raise LabInputError(f"preference is bound to tools {list(P.tools)}; features use {list(tools)}")
        P = P.vector
    M = feature_matrix(tool_counts, outcomes, costs, latencies, tools)            # (B, n + 3), validated
    return grpo_scores(M, P, group_ids, std_threshold, passed)


def grpo_scores(
    M: np.ndarray,
    P: np.ndarray,
    group_ids: Sequence[Hashable] | np.ndarray | None,
    std_threshold: float = STD_THRESHOLD,
    passed: Sequence[bool] | np.ndarray | None = None,
    scale: RewardScale | tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`rescore` on a feature matrix M (B, n + 3) already built: (R, A, keep) under P, (n + 3,) or (B, n + 3).

    Rows not `passed` get R 0, A 0, keep False and take no part in their group's min-max or std; `scale`:
    see `preference_rewards`.
    """
    if passed is None:
        R = preference_rewards(M, P, group_ids, scale)
        A, keep = group_advantages(R, group_ids, std_threshold)
        return R, A, keep
    ok = np.asarray(passed, dtype=bool)                                          # (B,)
    if ok.shape != (M.shape[0],):
        raise LabInputError(f"passed has {ok.size} entries; features have {M.shape[0]} rows")
    ids = None if group_ids is None else list(group_ids)
    if ids is not None and len(ids) != M.shape[0]:
        raise LabInputError(f"group_ids has {len(ids)} entries; features have {M.shape[0]} rows")
    rows = np.flatnonzero(ok)                                                    # (B',)
    groups = None if ids is None else [ids[i] for i in rows]
    weights = np.asarray(P, dtype=float)
    R, A, keep = np.zeros(M.shape[0]), np.zeros(M.shape[0]), np.zeros(M.shape[0], dtype=bool)
    if len(rows):
        R[rows] = preference_rewards(M[rows], weights[rows] if weights.ndim == 2 else weights, groups, scale)
        A[rows], keep[rows] = group_advantages(R[rows], groups, std_threshold)
    return R, A, keep


# ---------------------------------------------------------------- validation


def _as_matrix(M: np.ndarray, min_cols: int = 3) -> np.ndarray:
    """M as a finite float (B, K) array; K >= 3 for reward features (outcome, cost, latency)."""
    X = np.asarray(M, dtype=float)
    if X.ndim != 2:
        raise LabInputError(f"features must be a 2-D (trajectories, n_tools + 3) array, got shape {X.shape}")
    if X.shape[1] < min_cols:
        raise LabInputError(f"features have {X.shape[1]} columns; need n_tools + 3 (outcome, cost, latency)")
    if not np.isfinite(X).all():
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise LabInputError(f"features row {row}: every entry must be finite, got {X[row].tolist()}")
    return X


def _as_preference(P: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """P as (K,) or (B, K) floats matching features of `shape`, named in the error if not."""
    weights = np.asarray(P, dtype=float)
    n_rows, n_cols = shape
    if weights.ndim == 1:
        if weights.shape[0] != n_cols:
            raise LabInputError(f"preference vector has {weights.shape[0]} entries; features have {n_cols} columns")
    elif weights.ndim == 2:
        if weights.shape != shape:
            raise LabInputError(f"preference matrix has shape {weights.shape}; features have shape {shape}")
    else:
        raise LabInputError(f"preference must be (n_tools + 3,) or (B, n_tools + 3), got shape {weights.shape}")
    # A finite row sum of |P| bounds R, so R can never overflow to inf.
    if not np.isfinite(np.abs(weights).sum(axis=-1)).all():
        raise LabInputError("preference: every entry must be finite, and their sum too")
    return weights
