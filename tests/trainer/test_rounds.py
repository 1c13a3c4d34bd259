"""Round-protocol training rows: every kept round is a row with its rollout's advantage; nothing else trains."""

from __future__ import annotations

import torch

from lab.records import TrajectoryRecord
from lab.rollout import RolloutResult, TokenTrajectory
from lab.rollout.rounds import RoundRecord
from trainer.rounds import round_batch, round_rows


def result(*rounds: tuple[list[int], list[int], bool]) -> RolloutResult:
    trajectory = TrajectoryRecord(run_id="r", task_id="t", preference_json="{}", outcome=1.0, n_turns=len(rounds),
                                  cost_usd=0.0, latency_s=0.0, input_tokens=0, output_tokens=0, format_ok=True,
                                  valid_output=True, benchmark="world", tool_counts_json="{}")
    records = [RoundRecord(TokenTrajectory(prompt_ids=p, completion_ids=c, mask=[1] * len(c),
                                           logprobs=[0.0] * len(c)), ok)
               for p, c, ok in rounds]
    return RolloutResult(trajectory, [], rounds=records)


def test_each_valid_round_of_a_kept_rollout_is_a_row_carrying_the_rollouts_advantage():
    a = result(([1, 2], [7, 8], True), ([1, 3], [9], False), ([1, 4, 5], [6], True))
    b = result(([1], [2], True))
    rows, skipped = round_rows([a, b], advantages=[0.8, -1.1], keep=[True, True])
    assert [(r.prompt_ids, r.completion_ids, r.advantage) for r in rows] == [
        ([1, 2], [7, 8], 0.8), ([1, 4, 5], [6], 0.8), ([1], [2], -1.1)]
    assert skipped == 1  # the malformed round, dropped alone


def test_a_filtered_rollout_contributes_no_row():
    rows, _ = round_rows([result(([1], [2], True)), result(([3], [4], True))], advantages=[0.0, 0.5],
                         keep=[False, True])
    assert [r.prompt_ids for r in rows] == [[3]]


def test_the_batch_pads_prompts_left_and_completions_right_and_masks_only_sampled_tokens():
    rows, _ = round_rows([result(([1, 2, 3], [7], True), ([4], [8, 9, 10], True))], advantages=[0.5], keep=[True])
    batch = round_batch(rows, pad_id=0, device="cpu")
    assert batch["prompt_ids"].tolist() == [[1, 2, 3], [0, 0, 4]]
    assert batch["prompt_mask"].tolist() == [[1, 1, 1], [0, 0, 1]]
    assert batch["completion_ids"].tolist() == [[7, 0, 0], [8, 9, 10]]
    assert batch["completion_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    assert torch.equal(batch["advantages"], torch.tensor([0.5, 0.5]))


def test_with_nothing_kept_one_empty_row_carries_no_gradient():
    batch = round_batch([], pad_id=0, device="cpu")
    assert batch["completion_mask"].sum() == 0 and batch["advantages"].tolist() == [0.0]
    padded = round_batch(round_rows([result(([1], [2], True))], [1.0], [True])[0], pad_id=0, device="cpu", multiple=4)
    assert padded["completion_mask"].sum(1).tolist() == [1, 0, 0, 0]


def test_with_a_format_penalty_a_malformed_round_trains_against_itself_whatever_its_rollout():
    a = result(([1, 2], [7, 8], True), ([1, 3], [9], False))
    b = result(([5], [6], False))
    rows, skipped = round_rows([a, b], advantages=[0.8, 0.0], keep=[True, False], format_penalty=0.5)
    assert [(r.prompt_ids, r.advantage) for r in rows] == [([1, 2], 0.8), ([1, 3], -0.5), ([5], -0.5)]
    assert skipped == 2


def test_the_batch_carries_the_samplers_log_probabilities_where_the_mask_is_1():
    record = RoundRecord(TokenTrajectory(prompt_ids=[1], completion_ids=[7, 8, 2], mask=[1, 1, 0],
                                         logprobs=[-0.5, -0.25, 0.0]), True)
    trajectory = result(([1], [2], True)).trajectory
    rows, _ = round_rows([RolloutResult(trajectory, [], rounds=[record])], advantages=[1.0], keep=[True])
    batch = round_batch([*rows, *round_rows([result(([3], [4], True))], [1.0], [True])[0]], pad_id=0, device="cpu")
    assert batch["sampling_per_token_logps"].tolist() == [[-0.5, -0.25, 0.0], [0.0, 0.0, 0.0]]
