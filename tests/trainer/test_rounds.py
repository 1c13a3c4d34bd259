"""Round-protocol training rows: every kept round is a row with its rollout's advantage; nothing else trains."""

from __future__ import annotations

import functools

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.records import TrajectoryRecord
from lab.rollout import RolloutResult, TokenTrajectory
from lab.rollout.rounds import RoundRecord
from trainer.config import OrchestraGRPOConfig
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


@functools.cache
def h100_format_penalty() -> float:
    return OrchestraGRPOConfig.from_yaml("configs/train/h100-qwen3-8b.yaml", use_vllm=False).format_penalty


@settings(deadline=None)  # the first example reads the config file
@given(st.lists(st.tuples(st.lists(st.booleans(), min_size=1, max_size=4), st.booleans(), st.booleans()),
                min_size=1, max_size=5))
def test_the_h100_config_trains_the_rounds_the_released_trainer_selects(rollouts):
    """Under the H100 config (the released trainer's behaviours) a round trains exactly when the released
    trainer selects it: its rollout is kept (informative group, valid answer) and the round made a valid
    call. A round without one is dropped, never penalised: the released `stop_properly_penalty` scales a
    cut-off generation's reward, and its setter is commented out, so it is never applied."""
    from tests.helpers.released_training import released_selected_indices

    format_penalty = h100_format_penalty()
    results, keep, formats, owners, stds, answers, order = [], [], [], [], {}, {}, []
    for n, (valid_rounds, informative, answered) in enumerate(rollouts):
        results.append(result(*(([n, i], [100 + i], ok) for i, ok in enumerate(valid_rounds))))
        keep.append(informative and answered)  # what the homogeneity and valid-answer filters decide
        stds[str(n)], answers[str(n)] = (0.5 if informative else 0.0), answered
        formats += valid_rounds
        owners += [str(n)] * len(valid_rounds)
        order += [[n, i] for i in range(len(valid_rounds))]
    rows, _ = round_rows(results, advantages=[1.0] * len(results), keep=keep, format_penalty=format_penalty)
    selected = released_selected_indices(formats, owners, stds, answers)
    assert [r.prompt_ids for r in rows] == [order[i] for i in selected]


def test_the_released_stop_properly_penalty_is_never_applied():
    from tests.helpers.released_training import ReleasedRewardManager

    manager = ReleasedRewardManager()  # as the released trainer leaves it
    assert manager.apply(1.0, stop_properly=False) == 1.0  # a generation cut off by length keeps its reward
    manager.set_stop_properly_penalty(0.1)  # what the commented-out line would have done
    assert manager.apply(1.0, stop_properly=False) == 0.1 and manager.apply(1.0, stop_properly=True) == 1.0
