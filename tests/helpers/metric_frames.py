"""Hand-made trajectory frames for the report metrics' tests, small enough to work the answers out by hand."""

from __future__ import annotations

import pandas as pd


def trajs(rows: list[tuple[str, str, float]], cost: float = 0.01, latency: float = 2.0) -> pd.DataFrame:
    """Trajectories from (run_id, task_id, outcome); samples numbered in order within (run, task)."""
    frame = pd.DataFrame(rows, columns=["run_id", "task_id", "outcome"])
    return frame.assign(sample_idx=frame.groupby(["run_id", "task_id"]).cumcount(), train_step=0,
                        cost_usd=cost, latency_s=latency, tool_counts_json="{}", preference_json="{}")


def one_sample_runs(a: list[float], b: list[float]) -> pd.DataFrame:
    return trajs([("A", f"t{i}", o) for i, o in enumerate(a)] + [("B", f"t{i}", o) for i, o in enumerate(b)])
