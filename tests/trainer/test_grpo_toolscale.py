"""GRPO on synthesized ToolScale tasks: conversations with the simulated user, graded by database.

What a user would notice: `benchmark: toolscale:DIR` trains on the folder `orchestra synth` wrote;
each rollout talks to the scripted user (its opening is the prompt, its replies are logged steps),
calls the domain's own tools on a private database, and is graded by tau2's criteria.
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from lab.store import Store, queries
from lab.synth.dataset import write_dataset
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.grpo import OrchestraGRPOTrainer
from trainer.train import run_training

pytestmark = pytest.mark.slow

TURNS = ['<tool_call>{"name": "calculate", "arguments": {"expression": "2 * 21"}}</tool_call>',
         "Thanks, that is all done for you.", "Is there anything else?"]


class ScriptedSampler:
    """The session's sampler, returning the next scripted turn as token ids."""

    def __init__(self, session) -> None:
        self.session = session

    async def sample(self, request):
        text = TURNS[min(request.turn, len(TURNS)) - 1]
        ids = self.session.tokenizer(text, add_special_tokens=False).input_ids + [self.session.eot_id]
        return ids, [-0.5] * len(ids)


def test_training_steps_on_toolscale_tasks_talk_to_the_user(tmp_path, monkeypatch):
    write_dataset(tmp_path / "ts", ["bank", "railway"], n_tasks=3, seed=0)
    original = OrchestraGRPOTrainer.rollout_policy

    def rollout_policy(self, model):
        policy = original(self, model)
        make_session = policy.session

        def session(task, specs, seed):
            live = make_session(task, specs, seed)
            live.sampler = ScriptedSampler(live)
            return live

        policy.session = session
        return policy

    monkeypatch.setattr(OrchestraGRPOTrainer, "rollout_policy", rollout_policy)
    config = OrchestraGRPOConfig(
        output_dir=str(tmp_path / "out"), run_name="ts", model="tiny-qwen3", tiny_model=TINY_MODEL, toolkit="paper",
        benchmark=f"toolscale:{tmp_path / 'ts'}", task_limit=2, examples_per_task=1, tool_subset_min=1.0, max_turns=3,
        turn_max_new_tokens=32, observation_chars=200, num_generations=2, per_device_train_batch_size=4,
        learning_rate=1e-3, max_steps=1, save_steps=10, lab_eval_steps=0, lab_eval_limit=1, report_to="none",
        gradient_checkpointing=False, seed=0)
    store = Store(tmp_path / "s.duckdb")
    summary = run_training(config, store, Console(quiet=True))

    trajs = queries.trajectories_df(store, [summary.run_id])
    assert len(trajs) == 4 and set(trajs.benchmark) == {"toolscale"}
    assert all(set(json.loads(c)) == {"db", "communicate", "actions", "nl"} for c in trajs.criteria_json)
    steps = queries.steps_df(store, summary.run_id)
    assert (steps.tool_name == "calculate").sum() == 4 and "42" in steps[steps.tool_name == "calculate"].observation.iloc[0]
    assert (steps.kind == "user").sum() >= 4  # every rollout's answer reached the simulated user, who replied
