"""Tests for lab.eval.harness.

`orchestra eval` as a user runs it: offline, resumable after SIGKILL, budget-guarded, idempotent.

Also FRAMES under the round protocol as released: `search` retrieves 150 documents (or `--retrieval-top-k`),
the run records the depth it used, and the orchestrator reads each document cut at 4,000 characters.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.rollout import PolicyOutput
from lab.rollout.parse import format_tool_call
from lab.store import Store, queries
from lab.testing import OpenAICompatServer
from lab.tools.index_build import build_index
from tests.helpers.search_corpus import FACTS, write_corpus

pytestmark = pytest.mark.usefixtures("world")

EVAL = ["eval", "--benchmark", "world", "--split", "test", "--orchestrator", "scripted:cheapest-first", "--limit", "40"]


def orchestra(*args: str) -> list[str]:
    return [sys.executable, "-c", "from orchestra.cli import main; main()", *args]


def counts(store: Store) -> tuple[int, int, int]:
    trajs = queries.trajectories_df(store)
    keys = set(zip(trajs.task_id, trajs.sample_idx))
    steps = sum(len(queries.steps_df(store, run_id)) for run_id in trajs.run_id.unique())
    return len(trajs), len(keys), steps


def test_sigkill_half_way_then_rerun_ends_with_exactly_40(tmp_path: Path):
    db = tmp_path / "eval.duckdb"
    # a rate limit slows the first run down so it can be killed half-way
    first = subprocess.Popen(orchestra(*EVAL, "--rate-limit", "4", "--concurrency", "2", "--db", str(db)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    done = 0
    while time.monotonic() < deadline and first.poll() is None:
        done = len(queries.trajectories_df(Store(db))) if db.exists() else 0
        if done >= 8:
            break
        time.sleep(0.2)  # polling interval while waiting for progress (not synchronisation)
    assert first.poll() is None, "the first run finished before it could be killed"
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(30)
    killed_at = len(queries.trajectories_df(Store(db)))
    assert 8 <= killed_at < 40

    second = subprocess.run(orchestra(*EVAL, "--db", str(db), "--json"), capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    store = Store(db)
    rows, keys, steps = counts(store)
    assert rows == keys == 40  # no (task, sample) written twice
    run = queries.runs_df(store).iloc[0]
    assert run.status == "finished"
    assert len(queries.runs_df(store)) == 1  # the re-run resumed the same run
    per_traj = queries.steps_df(store, run.run_id).groupby(["task_id", "sample_idx", "turn", "call_idx"]).size()
    assert per_traj.max() == 1 and steps == len(per_traj)


def test_a_finished_run_is_not_run_again(tmp_path: Path, world):
    store = Store(tmp_path / "e.duckdb")
    config = EvalConfig(benchmark="world", split="test", orchestrator="scripted:round-robin", limit=6, samples=2)
    (first,) = run_eval(config, store)
    (again,) = run_eval(config, store)
    assert first.run_id == again.run_id
    assert (first.trajectories, again.trajectories, again.skipped_done) == (12, 0, 12)
    assert len(queries.trajectories_df(store)) == 12


@pytest.mark.parametrize("concurrency", [1, 8])
def test_budget_guard_stops_near_the_cap_and_never_stores_a_cut_rollout_as_wrong(tmp_path: Path, world,
                                                                                 concurrency: int):
    store = Store(tmp_path / "b.duckdb")
    config = EvalConfig(benchmark="world", split="test", orchestrator="scripted:always-strongest", limit=60,
                        budget_usd=0.6, concurrency=concurrency)
    (summary,) = run_eval(config, store)
    spent = queries.trajectories_df(store, include_cut=True)
    finished = queries.trajectories_df(store)
    steps = queries.steps_df(store, summary.run_id)
    assert summary.stopped_by_budget and 0 < len(finished) < 60
    # each rollout in flight may finish the one turn that reaches its allowance, nothing more
    assert spent.cost_usd.sum() <= 0.6 + concurrency * steps.cost_usd.max()
    cut = spent[spent.status == "cut"]
    assert len(cut) == summary.cut and (cut.outcome == 0).all()
    assert set(cut.task_id).isdisjoint(finished.task_id)  # no result, not a wrong answer
    assert queries.run(store, summary.run_id).status == "interrupted"
    (resumed,) = run_eval(config, store)  # the cap covers what the run already spent
    assert resumed.trajectories == 0 and resumed.stopped_by_budget
    if summary.cut:  # with room, a resume runs the cut rollouts again and replaces them
        (more,) = run_eval(config.model_copy(update={"budget_usd": 1.2}), store)
        redone = queries.trajectories_df(store, [more.run_id], include_cut=True)
        assert set(cut.task_id) <= set(redone[redone.status != "cut"].task_id) or more.stopped_by_budget


def test_failures_are_written_and_counted_outages_are_not(tmp_path: Path, world, monkeypatch):
    """A rollout that raises is stored with its error (status `error`); one whose endpoint is down is not
    stored at all, so the same command re-runs it."""
    from lab.errors import EndpointUnavailable
    from lab.policies import scripted

    calls = {"n": 0}
    original = scripted._ScriptSession.generate

    async def flaky(self, messages, tools=None, observations=None):
        calls["n"] += 1
        if calls["n"] % 7 == 3:
            raise EndpointUnavailable("openai:m@http://127.0.0.1:9/v1: connection refused")
        if calls["n"] % 7 == 5:
            raise ValueError("policy bug")
        return await original(self, messages, tools, observations)

    monkeypatch.setattr(scripted._ScriptSession, "generate", flaky)
    store = Store(tmp_path / "f.duckdb")
    config = EvalConfig(benchmark="world", split="test", orchestrator="scripted:cheapest-first", limit=20,
                        concurrency=1)
    (summary,) = run_eval(config, store)
    trajs = queries.trajectories_df(store)
    assert summary.unavailable > 0 and summary.failed > 0
    assert len(trajs) == 20 - summary.unavailable  # outages were not written
    errors = trajs[trajs.status == "error"]
    assert len(errors) == summary.failed and errors.error.str.startswith("policy failed: ValueError: policy bug").all()
    assert queries.runs_summary_df(store).errors.iloc[0] == summary.failed  # counted where users look
    monkeypatch.setattr(scripted._ScriptSession, "generate", original)
    (again,) = run_eval(config, store)  # the outages are retried; the failures are results and stay
    assert again.trajectories == summary.unavailable and len(queries.trajectories_df(store)) == 20


def test_preferences_and_turn_budgets_make_one_run_each(tmp_path: Path, world):
    store = Store(tmp_path / "v.duckdb")
    config = EvalConfig(benchmark="world", split="test", orchestrator="scripted:cheapest-first", limit=5,
                        preferences=["outcome=1,compute=1", "outcome=1,latency=1"], max_turns=[1, 50])
    summaries = run_eval(config, store)
    assert len({s.run_id for s in summaries}) == 4
    by_turns = {(s.preference, s.max_turns): s for s in summaries}
    one_turn = queries.trajectories_df(store, [by_turns[("outcome=1,compute=1", 1)].run_id])
    assert (one_turn.n_turns <= 1).all() and one_turn.outcome.sum() == 0  # no answer fits in one tool turn
    logged = queries.trajectories_df(store, [by_turns[("outcome=1,latency=1", 50)].run_id]).preference_json.iloc[0]
    assert '"latency": 1.0' in logged


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path):
    cases = [
        (["eval", "--benchmark", "nope"], "--benchmark 'nope'"),
        (["eval", "--orchestrator", "wizard:x"], "--orchestrator 'wizard:x'"),
        (["eval", "--orchestrator", "scripted:nope", "--limit", "1"], "unknown script"),
        (["eval", "--toolkit", "missing", "--limit", "1"], "--toolkit 'missing'"),
        (["eval", "--tasks", "frames-9999"], "--tasks: unknown task id"),
        (["eval", "--preference", "outcome=3", "--limit", "1"], "'outcome' must be in [0, 1]"),
    ]
    for args, message in cases:
        result = subprocess.run(orchestra(*args, "--db", str(tmp_path / "x.duckdb")), capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
    assert len(queries.trajectories_df(Store(tmp_path / "x.duckdb"))) == 0


def test_a_policy_that_cannot_start_fails_the_run_with_one_line(tmp_path: Path, world):
    db = tmp_path / "f.duckdb"
    result = subprocess.run(orchestra(*EVAL[:-2], "--limit", "3", "--orchestrator", "hf:/no/such/model", "--db",
                                      str(db)),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "hf: model not found: /no/such/model" in result.stderr
    runs = queries.runs_df(Store(db))
    assert list(runs.status) == ["failed"]


def test_an_orchestrator_endpoint_nobody_answers_fails_before_work_in_one_line(tmp_path: Path, world):
    from lab.testing.openai_server import unused_port

    db = tmp_path / "down.duckdb"
    url = f"http://127.0.0.1:{unused_port()}/v1"
    result = subprocess.run(orchestra(*EVAL[:-2], "--limit", "2", "--orchestrator", f"openai:qwen3-8b@{url}", "--db",
                                      str(db)), capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --orchestrator: {url}: cannot be reached") and "Traceback" not in result.stderr
    assert not db.exists()


def test_an_orchestrator_endpoint_lost_mid_run_exits_1_naming_it_and_stores_nothing(tmp_path: Path, world):
    from lab.testing.openai_server import OpenAICompatServer

    db = tmp_path / "down.duckdb"
    with OpenAICompatServer(fail_first=10_000, fail_status=503, models=("qwen3-8b",)) as server:
        result = subprocess.run(orchestra(*EVAL[:-2], "--limit", "2", "--orchestrator",
                                          f"openai:qwen3-8b@{server.base_url}", "--db", str(db), "--json"),
                                capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    (row,) = json.loads(result.stdout)
    assert row["unavailable_rollouts"] == 2 and row["trajectories"] == 0
    assert all("endpoint unavailable" in e and server.base_url in e for e in row["errors_seen"])
    assert queries.trajectories_df(Store(db), include_cut=True).empty
    assert queries.runs_df(Store(db)).status.tolist() == ["interrupted"]  # the same command resumes it


QUESTION = FACTS["fact-lighthouse"][2]


class SearchThenAnswer:
    """An orchestrator that calls `search` and then `answer`, and keeps the prompts and tools it was shown."""

    name = "test:search-then-answer"

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.offered: list[list[str]] = []

    def session(self, task, specs, seed):
        policy, turns = self, [format_tool_call("search", {"model": "search-1"}),
                               format_tool_call("answer", {"model": "answer-1"})]

        class Session:
            async def generate(self, messages, tools=None, observations=None):
                policy.prompts.append(messages[-1]["content"])
                policy.offered.append([entry["function"]["name"] for entry in tools or []])
                return PolicyOutput(text=turns.pop(0) if turns else "no call")

            def token_trajectory(self):
                return None

        return Session()


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A FRAMES file with one question, an index over the 36-document corpus, and a toolkit over both
    whose slots are one scripted endpoint (it writes the query, then answers)."""
    root = tmp_path_factory.mktemp("frames")
    write_corpus(root / "corpus.jsonl")
    build_index(root / "corpus.jsonl", root / "index", progress=False)
    with (root / "frames.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["question", "true_answer"], [QUESTION, "Edda Lindqvist"]])
    server = OpenAICompatServer(script=[f"QUERY: {QUESTION}", "ANSWER: Edda Lindqvist"] * 2)
    with server:
        model = {"name": "gpt-5", "model": "gpt-5",
                 "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}
        toolkit = {"name": "frames-wiki", "tools": [
            {"name": "search", "backend": {"kind": "paper", "role": "search", "slots": {"search-1": model},
                                           "retriever": {"kind": "local_search", "index": str(root / "index")}}},
            {"name": "answer", "backend": {"kind": "paper", "role": "answer", "slots": {"answer-1": model}}},
        ]}
        (root / "toolkit.yaml").write_text(yaml.safe_dump(toolkit))
        yield root


def evaluate(root, **options):
    config = EvalConfig.build(benchmark="frames", benchmark_path=str(root / "frames.csv"), protocol="rounds",
                              toolkit=str(root / "toolkit.yaml"), max_turns=[4], **options)
    store = Store(root / "eval.duckdb")
    policy = SearchThenAnswer()
    (summary,) = run_eval(config, store, policy=policy)
    run = queries.runs_df(store).set_index("run_id").loc[summary.run_id]
    (search,) = [t for t in json.loads(run.toolkit_json)["tools"] if t["name"] == "search"]
    assert policy.offered == [["search", "answer"], ["answer"]]  # FRAMES: `search` withdrawn once documents exist
    return policy.prompts[-1], search["backend"]["retriever"], json.loads(run.config_json)


def documents(prompt: str) -> list[str]:
    return [part.split("\n\n")[0] for part in prompt.split("\nDoc ")[1:]]


def test_frames_retrieves_the_released_150_best_last_cut_at_4000_characters(setup):
    prompt, retriever, config = evaluate(setup)
    # the released default, recorded with the run
    assert retriever["top_k"] == 150 and config["retrieval_top_k"] is None
    shown = documents(prompt)
    assert len(shown) == 36  # all of the corpus: fewer than 150 documents
    assert shown[-1].startswith("36: Varnholm Lighthouse: The Varnholm lighthouse was painted crimson")
    assert not any(d.endswith(" ...") for d in shown)  # FRAMES shows documents without HLE's " ..."


def test_retrieval_top_k_is_honoured_and_recorded(setup):
    prompt, retriever, config = evaluate(setup, retrieval_top_k=3)
    assert retriever["top_k"] == 3 and config["retrieval_top_k"] == 3
    shown = documents(prompt)
    assert [d.split(":")[0] for d in shown] == ["1", "2", "3"] and "Varnholm" in shown[-1]


def test_retrieval_top_k_needs_a_search_tool_over_a_local_index(setup):
    with pytest.raises(LabInputError, match="--retrieval-top-k 5: toolkit 'perf' has no `search` tool"):
        run_eval(EvalConfig.build(benchmark="frames", benchmark_path=str(setup / "frames.csv"), toolkit="perf",
                                  retrieval_top_k=5), Store(setup / "refused.duckdb"), policy=SearchThenAnswer())
