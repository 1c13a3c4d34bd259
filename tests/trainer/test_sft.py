"""The warm start learns, per training instruction, the routes the training reward ranks best.

`trainer.sft.select_best` is a reward-fed signal (it decides what the model imitates), so these tests
also try to game it: a cheap route that fails, a route that calls the preferred model without solving.
"""

from __future__ import annotations

import json

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer.examples import Example
from trainer.sft import select_best

FEATURES = ["search-1", "answer-1", "answer-2"]


def example(preference: dict[str, float], task_id: str = "t1", name: str = "e") -> Example:
    weights = tuple((k, float(preference.get(k, 0.0))) for k in [*FEATURES, "outcome", "compute", "latency"])
    return Example(example_id=f"{task_id}#{name}", task_id=task_id, question="q", features=tuple(FEATURES),
                   pricing="together", instruction=name, preference=weights)


def routes(rows: list[tuple[str, dict[str, int], float, float, float]], task_id: str = "t1") -> pd.DataFrame:
    return pd.DataFrame([{"run_id": run, "task_id": task_id, "sample_idx": 0, "tool_counts_json": json.dumps(counts),
                          "outcome": outcome, "cost_usd": cost, "latency_s": latency}
                         for run, counts, outcome, cost, latency in rows])


GROUP = routes([
    ("strong", {"search-1": 1, "answer-1": 1}, 1.0, 0.040, 90.0),
    ("cheap", {"search-1": 1, "answer-2": 1}, 1.0, 0.004, 30.0),
    ("cheaper-but-wrong", {"answer-2": 1}, 0.0, 0.001, 10.0),
])


def chosen(trajectories: pd.DataFrame, examples: list[Example]) -> dict[str, list[str]]:
    picked: dict[str, list[str]] = {}
    for ex, traj in select_best(trajectories, examples, FEATURES):
        picked.setdefault(ex.instruction, []).append(traj.run_id)
    return picked


def test_a_cost_instruction_learns_the_cheapest_route_that_solved():
    assert chosen(GROUP, [example({"outcome": 1, "compute": 1}, name="cheap please")]) == {"cheap please": ["cheap"]}


def test_an_accuracy_only_instruction_learns_every_solved_route():
    assert chosen(GROUP, [example({"outcome": 1}, name="accuracy")]) == {"accuracy": ["strong", "cheap"]}


def test_a_model_preference_learns_the_route_that_uses_it_and_solves():
    picked = chosen(GROUP, [example({"outcome": 1, "answer-1": 1}, name="use answer-1")])
    assert picked == {"use answer-1": ["strong"]}


def test_calling_the_preferred_model_without_solving_is_never_imitated():
    group = routes([("spam", {"answer-1": 5}, 0.0, 0.2, 300.0), ("plain", {"answer-2": 1}, 1.0, 0.004, 30.0)])
    assert chosen(group, [example({"outcome": 1, "answer-1": 1}, name="use answer-1")]) == {"use answer-1": ["plain"]}


def test_a_task_nobody_solved_teaches_nothing():
    group = routes([("a", {"answer-1": 1}, 0.0, 0.04, 90.0), ("b", {"answer-2": 1}, 0.0, 0.004, 30.0)])
    assert chosen(group, [example({"outcome": 1, "compute": 1})]) == {}


def test_each_example_is_scored_within_its_own_task():
    """A cheap route on another task must not make this task's cheap route look expensive."""
    other = routes([("elsewhere", {"answer-2": 1}, 1.0, 0.0001, 1.0)], task_id="t2")
    picked = chosen(pd.concat([GROUP, other]), [example({"outcome": 1, "compute": 1}, name="cheap")])
    assert picked == {"cheap": ["cheap"]}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0.001, 1.0), st.floats(1.0, 500.0), st.integers(0, 3)),
                min_size=1, max_size=6),
       st.sampled_from([{"outcome": 1}, {"outcome": 1, "compute": 1}, {"outcome": 1, "latency": 1, "compute": 0.2},
                        {"outcome": 1, "answer-1": 1}]))
def test_only_solved_routes_are_kept_and_a_kept_route_is_never_dominated(rows, preference):
    group = routes([(f"r{i}", {"answer-1": calls}, float(ok), cost, latency)
                    for i, (ok, cost, latency, calls) in enumerate(rows)])
    kept = [traj for _, traj in select_best(group, [example(preference)], FEATURES)]
    solved = group[group.outcome == 1]
    assert all(t.outcome == 1 for t in kept)
    assert bool(kept) == bool(len(solved))
    for t in kept:  # no solved route is at least as good on every weighted objective and strictly better on one
        for other in solved.itertuples():
            better = [other.cost_usd < t.cost_usd if preference.get("compute") else False,
                      other.latency_s < t.latency_s if preference.get("latency") else False,
                      json.loads(other.tool_counts_json)["answer-1"] > json.loads(t.tool_counts_json)["answer-1"]
                      if preference.get("answer-1") else False]
            worse = [other.cost_usd > t.cost_usd if preference.get("compute") else False,
                     other.latency_s > t.latency_s if preference.get("latency") else False,
                     json.loads(other.tool_counts_json)["answer-1"] < json.loads(t.tool_counts_json)["answer-1"]
                     if preference.get("answer-1") else False]
            assert not (any(better) and not any(worse))


def test_a_stored_trajectory_is_rebuilt_turn_by_turn_as_the_engine_showed_it():
    """Steps in any row order come back as the chat the rollout engine showed: per turn the reasoning (when
    the orchestrator wrote any), every call of the turn, each tool's response, and the answer last."""
    from lab.rollout.parse import format_tool_call
    from lab.rollout.prompt import tool_response_text
    from trainer.sft import _turn_messages

    def step(turn, kind, tool="", arguments=None, observation="", reasoning=""):
        return {"turn": turn, "kind": kind, "tool_name": tool, "arguments_json": json.dumps(arguments or {}),
                "observation": observation, "reasoning": reasoning}

    steps = pd.DataFrame([
        step(2, "answer", observation="Varn"),
        step(1, "tool", "search", {"model": "search-2"}, "The capital lies on the Varn.", reasoning="look it up"),
        step(1, "tool", "enhance_reasoning", {"model": "reasoner-1"}, "x" * 50),
    ])
    messages = _turn_messages(steps, observation_chars=20)
    assert messages == [
        {"role": "assistant", "content": "<think>look it up</think>\n" + format_tool_call("search", {"model": "search-2"})
         + "\n" + format_tool_call("enhance_reasoning", {"model": "reasoner-1"})},
        {"role": "tool", "content": tool_response_text("search", "The capital lies on the Varn.", 20)},
        {"role": "tool", "content": tool_response_text("enhance_reasoning", "x" * 50, 20)},
        {"role": "assistant", "content": "<answer>Varn</answer>"},
    ]
    # a tool that answers ends the episode before the model reads its response: no trailing tool message
    assert _turn_messages(steps[steps.kind == "tool"], 20)[-1]["role"] == "assistant"


def test_each_example_teaches_one_of_its_best_routes_so_instructions_weigh_the_same():
    from trainer.sft import one_per_example

    examples = [example({"outcome": 1}, name="accuracy"), example({"outcome": 1, "compute": 1}, name="cheap please")]
    picked = one_per_example(select_best(GROUP, examples, FEATURES))
    assert sorted(e.instruction for e, _ in picked) == ["accuracy", "cheap please"]
    assert dict((e.instruction, t.run_id) for e, t in picked)["cheap please"] == "cheap"
    assert one_per_example(select_best(GROUP, examples, FEATURES)) == picked  # the same pick every time
