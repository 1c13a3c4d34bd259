"""The released trainer's round selection and reward scaling as the authors' code writes them
(rrbanda/ToolOrchestra at d882ee7), transcribed for tests to compare the lab's training rows against. Kept in
the released code's own shape on purpose.

- training/lead_agent/llm_agent/generation_quick3.py lines 1500-1515: a round (turn) trains only when its
  group's reward std is over 0.1, its rollout produced a valid answer and the round itself had a valid
  tool call (`turn_format`, from `postprocess_predictions`); the others are dropped, none penalised.
- training/verl/nvidia/reward_manager/naive.py lines 69-80: `stop_properly_penalty` multiplies the reward
  of a generation that did not stop properly (`finish_reason != 'stop'`, vllm_rollout_spmd.py line 320)
  by `penalty_coef`; `set_stop_properly_penalty` is only called from a line commented out in
  training/verl/trainer/ppo/ray_trainer.py (line 329), so `self.stop_properly_penalty` stays None.
"""

from __future__ import annotations


def released_selected_indices(all_turn_formats: list[bool], all_turn_rollouts: list[str],
                              example_reward_std: dict[str, float], valid_answers: dict[str, bool]) -> list[int]:
    selected_indices = []
    iter_index = -1
    for turn_format,rollout_id in zip(all_turn_formats,all_turn_rollouts):
        iter_index += 1
        if example_reward_std[rollout_id]>0.1 and rollout_id in valid_answers and valid_answers[rollout_id] and turn_format:  # noqa: E501
            selected_indices.append(iter_index)
    return selected_indices


class ReleasedRewardManager:
    """naive.py's reward manager, reduced to the stop-properly part."""

    def __init__(self) -> None:
        self.stop_properly_penalty = None  # ray_trainer.py: the call to set_stop_properly_penalty is commented out

    def set_stop_properly_penalty(self, stop_properly_penalty):
        self.stop_properly_penalty = stop_properly_penalty

    def apply(self, score: float, stop_properly: bool) -> float:
        if self.stop_properly_penalty is not None:
            stop_penalty_coef = self.stop_properly_penalty
            stop_properly_scale = (1.0 - float(stop_properly)) * stop_penalty_coef + float(stop_properly)
            score = score * stop_properly_scale
        return score
