"""Tests for lab.policies.oracle: the oracle solves at least what the baselines solve, never at a higher cost."""

from __future__ import annotations

from tests.helpers.scripted_runs import run_policy


def assert_oracle_bounds_the_baselines(source, tools) -> None:
    """At least as accurate as each baseline, and never dearer on a task both solve."""
    oracle = run_policy("oracle", source, tools)
    for name in ("cheapest-first", "always-strongest"):
        other = run_policy(name, source, tools)
        assert sum(r.trajectory.outcome for r in oracle) >= sum(r.trajectory.outcome for r in other)
        both = [(o, b) for o, b in zip(oracle, other) if o.trajectory.outcome and b.trajectory.outcome]
        assert all(o.trajectory.cost_usd <= b.trajectory.cost_usd + 1e-12 for o, b in both)


def test_oracle_is_an_upper_bound_at_lowest_cost(offline):
    assert_oracle_bounds_the_baselines(*offline)


def test_oracle_on_the_paper_shape_is_never_dearer_than_a_baseline_that_solves(offline_paper):
    assert_oracle_bounds_the_baselines(*offline_paper)
