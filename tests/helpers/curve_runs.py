"""A training run with a learning curve, built from records (no model): evaluation runs at steps 0, 2 and 4
under two instructions, linked to the train run as `trainer.curve` links them, and `train_metrics` rows
carrying the signals the Training page plots (a step where every rollout was filtered, informative
groups, filter reasons, rows per step, the probe)."""

from __future__ import annotations

import json

from lab.records import RunRecord, TrainMetricsRecord
from lab.store import Store

#: The curve's two instructions as a train config lists them: a training pair's wording (P `outcome=1`)
#: and a P string (worded by the harness).
WORDING, P_STRING = "Get the answer right; money is no object.", "outcome=1,compute=1"
#: Outcomes of tasks t0..t2 per step: the policy solves more as it trains.
OUTCOMES = {0: {"t0": [0.0], "t1": [1.0], "t2": [0.0]}, 2: {"t0": [1.0], "t1": [1.0], "t2": [0.0]},
            4: {"t0": [1.0], "t1": [1.0], "t2": [1.0]}}
#: The scale stored with the run (USD and seconds per task).
SCALE = {"c_ref": 0.01, "l_ref": 5.2, "basis": "mean per task of the step 0 evaluation"}


def eval_run_id(train_run_id: str, step: int, instruction: str) -> str:
    return f"{train_run_id}-s{step}-{'wording' if instruction == WORDING else 'p'}"


def write_curve_run(store: Store, make_run, train_run_id: str = "train-c", scale: dict | None = SCALE,
                    steps: tuple[int, ...] = (0, 2, 4), follows: bool = False) -> None:
    """The train run (with `scale` stored in its config_json, or none) and its evaluations at `steps`;
    `make_run` is the `make_run` fixture of `tests/conftest.py`. Step 0 calls gpt-5, later steps the
    cheaper qwen3-32b under both instructions (thrift), or with `follows` only under the cost-saving
    one (instruction following)."""
    config = {"curve_scale": scale} if scale else {}
    store.write_run(RunRecord(run_id=train_run_id, kind="train", name=train_run_id, orchestrator="hf:tiny",
                              benchmark="world", config_json=json.dumps(config)))
    for step in steps:
        for instruction, preference, weights in ((WORDING, "outcome=1", {"outcome": 1.0}),
                                                 (P_STRING, P_STRING, {"outcome": 1.0, "compute": 1.0})):
            linked = {"train_run_id": train_run_id, "train_step": step,
                      "preference_instruction": instruction if instruction == WORDING else None,
                      "variant": {"preference": preference, "max_turns": 8}}
            cheaper = step > 0 and not (follows and instruction == WORDING)
            run, items = make_run(eval_run_id(train_run_id, step, instruction), OUTCOMES[step],
                                  tool="qwen3-32b" if cheaper else "gpt-5", config=linked)
            items = [(t.model_copy(update={"preference_json": json.dumps(weights)}), s, k) for t, s, k in items]
            store.write_run(run)
            store.write_trajectories(items)
            store.finish_run(run.run_id)
    store.write_train_metrics([TrainMetricsRecord(run_id=train_run_id, step=s, metrics_json=json.dumps({
        "reward/mean": 0.0 if s == 3 else 0.2 * s, "outcome/mean": 0.1 * s, "filtered/format": 0.5 if s == 3 else 0.1,
        "filtered/homogeneous": 0.5 if s == 3 else 0.2, "filtered/all": 1.0 if s == 3 else 0.3,
        "groups/informative": 0.0 if s == 3 else 0.6, "rounds/kept": 0.0 if s == 3 else 12.0, "loss": 1.0 / s,
        "cost/per_trajectory": 0.01 * s, "latency/per_trajectory": 3.0 + s, "probe/best_call": 0.2 * s}))
        for s in (1, 2, 3, 4)])
    store.finish_run(train_run_id)
