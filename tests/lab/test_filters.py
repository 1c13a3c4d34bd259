"""Tests for lab.filters: format-consistency and invalid-output filters on trajectory records."""

from __future__ import annotations

import pytest

from lab.errors import LabInputError
from lab.filters import (
    apply_filters,
    format_consistent,
    has_valid_output,
    steps_by_trajectory,
    trajectory_key,
)
from lab.records import StepRecord, TrajectoryRecord


def traj(sample_idx: int, **fields) -> TrajectoryRecord:
    defaults = {"run_id": "run-1", "task_id": "q1", "sample_idx": sample_idx, "final_answer": "42"}
    return TrajectoryRecord(**{**defaults, **fields})


def step(sample_idx: int, kind: str = "tool", **fields) -> StepRecord:
    return StepRecord(run_id="run-1", task_id="q1", sample_idx=sample_idx, kind=kind, **fields)


def test_format_flag_or_format_error_step_fails_the_format_filter() -> None:
    assert format_consistent(traj(0))
    assert not format_consistent(traj(0, format_ok=False))
    assert format_consistent(traj(0), [step(0), step(0, "answer")])
    assert not format_consistent(traj(0), [step(0), step(0, "format_error", turn=1)])


def test_steps_of_another_trajectory_are_rejected() -> None:
    with pytest.raises(LabInputError, match="does not belong to trajectory"):
        format_consistent(traj(0), [step(1)])


@pytest.mark.parametrize(
    ("fields", "valid"),
    [
        ({}, True),
        ({"valid_output": False}, False),
        ({"final_answer": None}, False),
        ({"final_answer": ""}, False),
        ({"final_answer": "  \n"}, False),
        ({"final_answer": "0"}, True),
    ],
)
def test_valid_output_needs_flag_and_a_non_blank_answer(fields, valid) -> None:
    assert has_valid_output(traj(0, **fields)) is valid


def test_apply_filters_keeps_order_and_counts_each_drop_once() -> None:
    trajs = [
        traj(0),
        traj(1, format_ok=False, final_answer=None),  # fails both: counted under format only
        traj(2, final_answer=None),
        traj(3),  # has a format_error step
        traj(4, valid_output=False),
        traj(5),
    ]
    steps = steps_by_trajectory([step(0), step(3), step(3, "format_error", turn=1), step(5, "answer")])
    report = apply_filters(trajs, steps)
    assert [t.sample_idx for t in report.kept] == [0, 5]
    assert report.dropped == {"format": 2, "invalid": 2}
    assert [key[2] for key in report.dropped_keys["format"]] == [1, 3]
    assert report.total == len(trajs)


def test_apply_filters_without_steps_uses_the_flags_only() -> None:
    report = apply_filters([traj(0), traj(1, format_ok=False)])
    assert [t.sample_idx for t in report.kept] == [0]
    assert report.dropped == {"format": 1, "invalid": 0}


def test_steps_are_matched_by_train_step_too() -> None:
    later = traj(0, train_step=7)
    steps = steps_by_trajectory([StepRecord(run_id="run-1", task_id="q1", kind="format_error", train_step=3)])
    assert trajectory_key(later) not in steps
    assert apply_filters([later], steps).kept == [later]
