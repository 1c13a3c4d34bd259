"""One rollout played live (`lab.eval.playground`): the rollout an evaluation would run, watched while it
plays, cancellable, and stored as a run of kind `playground` only when it finished with a result."""

from __future__ import annotations

import asyncio

import pytest

from lab.eval.config import EvalConfig
from lab.eval.playground import Playground, store_plays
from lab.rollout.policy import PolicyOutput
from lab.store import Store, queries


@pytest.fixture(scope="module")
def playground(world) -> Playground:
    return Playground(EvalConfig.build(benchmark="world", toolkit="paper-small", protocol="rounds",
                                       context_tokens=240, observation_chars=300))


def test_a_play_is_the_evaluations_rollout_and_is_stored_as_a_playground_run(playground, tmp_path):
    from lab.eval.harness import run_eval

    task = playground.task(next(t for t in playground.tasks if t.startswith("frames")))
    preference = playground.preference("outcome=1,compute=1", "Be accurate but keep the bill as low as you can.")
    play = playground.start("scripted:cheapest-first", task, preference, max_turns=8)
    play.wait()
    assert play.failure is None and play.result is not None and play.state.steps == play.result.steps
    store = Store(tmp_path / "p.duckdb")
    (run_id,) = store_plays(store, [play])
    runs = queries.runs_summary_df(store)
    assert runs.set_index("run_id").kind[run_id] == "playground"
    config = playground.config.model_copy(update={
        "orchestrator": "scripted:cheapest-first", "tasks": [task.task_id], "max_turns": [8],
        "preferences": ["outcome=1,compute=1"], "preference_instruction": preference.instruction, "run_name": "same"})
    (summary,) = run_eval(config, store)
    played, evaluated = (queries.trajectories_df(store, [r]).iloc[0] for r in (run_id, summary.run_id))
    # the same calls, answer, tokens and cost (latency holds the local tools' wall time, so it is not compared)
    for column in ("outcome", "cost_usd", "n_turns", "tool_counts_json", "final_answer", "input_tokens"):
        assert played[column] == evaluated[column], column


class _Stalled:
    """A policy whose first turn never ends (an endpoint that accepted the request and went quiet)."""

    name = "stalled"

    def session(self, task, specs, seed):
        return self

    async def generate(self, messages, **kwargs) -> PolicyOutput:
        await asyncio.Event().wait()   # never set: only cancelling ends it
        raise AssertionError("unreachable")

    def token_trajectory(self):
        return None


def test_a_cancelled_play_stores_nothing(playground, tmp_path, monkeypatch):
    import lab.eval.playground as module

    monkeypatch.setattr(module, "make_policy", lambda spec, **kwargs: _Stalled())
    task = playground.task(next(iter(playground.tasks)))
    play = playground.start("openai:slow@http://127.0.0.1:9/v1", task, playground.preference("outcome=1", None))
    play.cancel()
    play.wait()
    assert play.cancelled and play.result is None
    assert store_plays(Store(tmp_path / "c.duckdb"), [play]) == []
    assert queries.runs_summary_df(Store(tmp_path / "c.duckdb")).empty


def test_bad_input_is_one_line_before_anything_runs(playground):
    from lab.errors import LabInputError

    with pytest.raises(LabInputError, match="unknown entry 'cheapness'"):
        playground.preference("outcome=1,cheapness=1", None)
    with pytest.raises(LabInputError, match="unknown task 'nope'"):
        playground.task("nope")
    with pytest.raises(LabInputError, match="typed question is empty"):
        playground.task(question="  ")
