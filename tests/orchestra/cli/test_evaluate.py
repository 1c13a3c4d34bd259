"""`orchestra eval` (`orchestra/cli/evaluate.py`): bad input is stopped before any work (one line, exit 2,
nothing created, nothing said first), and a run that starts says once what an optional tool lacks.

Each case runs the real `orchestra` command in its own process, as a user would, on a store path that
must not exist afterwards: a refused command opens no store, loads no embedder and prints no warning
about optional features of a run that never starts.
"""

from __future__ import annotations

import pytest

from tests.conftest import REPO, orchestra

UNKNOWN_KIND = "name: bad\ntools:\n  - {name: x, backend: {kind: telepathy}}\n"
WORDY_TIMEOUT = "name: bad\ntools:\n  - {name: c, backend: {kind: code_interpreter, timeout_s: soon}}\n"
SMALL_WINDOW = ("name: served\ntools:\n  - name: answer\n    backend:\n      kind: paper\n      role: answer\n"
                "      slots:\n        answer-4: {name: qwen3-32b, model: qwen3-32b, backend: {kind: openai, "
                "base_url: 'http://127.0.0.1:9/v1', model: Qwen/Qwen3-32B, context_window: 16384}}\n")
WORDY_ENDPOINT = ("name: bad\ntools:\n  - {name: g, model: gpt-5, category: generalist, description: strong, "
                  "backend: {kind: openai, base_url: 'http://127.0.0.1:9/v1', model: gpt-5, timeout_s: soon}}\n")


@pytest.mark.parametrize("args, toolkit_text, problem", [
    (["eval", "-p", "gpt-5=2"], "", "must be in [0, 1], got 2.0"),
    (["eval", "-p", "nonsense=1"], "", "nonsense"),
    (["eval", "--toolkit", "{toolkit}"], UNKNOWN_KIND, "backend.kind: expected one of"),
    (["eval", "--toolkit", "{toolkit}"], WORDY_TIMEOUT, "backend.timeout_s: expected a number, got 'soon'"),
    (["eval", "--toolkit", "{toolkit}"], WORDY_ENDPOINT, "backend.timeout_s: Input should be a valid number"),
    (["eval", "--toolkit", "paper", "--protocol", "rounds", "--retrieval-top-k", "0"], "", "retrieval"),
    (["eval", "--judge", "no-such-tool"], "", "no-such-tool"),
    (["eval", "--shard", "0/2"], "", "--shard 0/2: i must be 1..2"),
    (["eval", "--shard", "half"], "", "--shard 'half': expected i/N"),
    (["eval", "--expert-protocol", "verbatim"], "", "expert_protocol: Input should be 'released' or 'lab'"),
    (["eval", "--expert-protocol", "released"], "", "--expert-protocol released: the released experts read"),
    (["eval", "--tool-timeout-s", "-1"], "", "tool_timeout_s: Input should be greater than 0"),
    (["eval", "--expert-timeout-s", "0"], "", "expert_timeout_s: Input should be greater than 0"),
    (["eval", "--protocol", "rounds", "--run-programs", "maybe"], "", "run_programs: Input should be a valid boolean"),
    (["eval", "--run-programs", "yes"], "", "--run-programs is read by the released experts only"),
    (["eval", "--calls-per-round", "distinct"], "", "--calls-per-round is read by the round protocol only"),
    (["eval", "--orchestrator", "openai:gpt-5@https://api.openai.com/v1", "--temperature", "0.7"], "",
     "takes temperature 1 only (got 0.7)"),
    (["eval", "--orchestrator", "openai:my-model@https://llm.example.com/v1"], "",
     "cannot tell which provider serves https://llm.example.com/v1"),
    (["eval", "--benchmark", "world:hle", "--protocol", "rounds", "--toolkit", "{toolkit}"], SMALL_WINDOW,
     "slot answer-4 (qwen3-32b): a context budget of 24,000 tokens plus 8,000 to generate exceeds the model's "
     "window of 16,384"),
])
def test_a_refused_eval_says_one_line_and_creates_nothing(tmp_path, args, toolkit_text, problem):
    toolkit = tmp_path / "bad.yaml"
    toolkit.write_text(toolkit_text)
    db = tmp_path / "runs.duckdb"
    result = orchestra(*[a.replace("{toolkit}", str(toolkit)) for a in args], db=db)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert problem in lines[0] and lines[0].startswith("error:")
    assert "TAVILY_API_KEY" not in result.stderr + result.stdout  # no word on optional tools of a run that never starts
    assert not db.exists() and list(tmp_path.iterdir()) == [toolkit]


def test_the_tavily_note_comes_once_with_a_run_that_starts(tmp_path, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    result = orchestra("eval", "--toolkit", "default", "--limit", "1", db=tmp_path / "runs.duckdb")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("TAVILY_API_KEY") == 1


def test_a_ceiling_stricter_than_an_experts_wait_is_named_when_the_run_starts(tmp_path):
    toolkit = tmp_path / "paper-120.yaml"
    toolkit.write_text((REPO / "configs" / "toolkits" / "paper.yaml").read_text())
    result = orchestra("eval", "--benchmark", "world:hle", "--toolkit", str(toolkit), "--protocol", "rounds",
                       "--tool-timeout-s", "120", "--limit", "1", db=tmp_path / "runs.duckdb")
    assert result.returncode == 0, result.stderr[-2000:]
    (named,) = [line for line in result.stderr.splitlines() if "--tool-timeout-s 120" in line]
    assert "stops calls before their experts' own limits" in named and "answer-1 (3600 s)" in named
    assert named.count(" s)") == 12  # every slot of the paper toolkit, in one line


def _trajectories(db):
    from lab.store import Store

    return Store(db)._read("SELECT run_id, task_id, sample_idx, outcome, cost_usd FROM trajectories "
                           "ORDER BY task_id, sample_idx")


def test_two_shards_on_two_machines_merge_into_the_one_run_a_single_machine_makes(tmp_path):
    """Each shard writes its own store (two machines); `orchestra store merge` gives the run a single
    `orchestra eval` gives: the same id, every (task, sample) once, finished once both shards are."""
    args = ("eval", "--limit", "5", "--samples", "2", "--run-name", "sharded")
    whole = orchestra(*args, db=tmp_path / "whole.duckdb")
    assert whole.returncode == 0, whole.stderr[-2000:]
    for i in (1, 2):
        shard = orchestra(*args, "--shard", f"{i}/2", db=tmp_path / f"shard{i}.duckdb")
        assert shard.returncode == 0, shard.stderr[-2000:]
    halves = [_trajectories(tmp_path / f"shard{i}.duckdb") for i in (1, 2)]
    assert sorted(len(h) for h in halves) == [5, 5]  # tasks x samples dealt evenly, none twice
    merged = orchestra("store", "merge", str(tmp_path / "shard1.duckdb"), str(tmp_path / "shard2.duckdb"),
                       db=tmp_path / "all.duckdb")
    assert merged.returncode == 0, merged.stderr[-2000:]
    assert "every shard finished" in merged.stdout
    assert _trajectories(tmp_path / "all.duckdb").equals(_trajectories(tmp_path / "whole.duckdb"))
    from lab.store import Store, queries

    runs = queries.runs_df(Store(tmp_path / "all.duckdb"))
    assert runs.status.tolist() == ["finished"]


def test_shards_into_one_shared_store_are_read_as_one_run_before_and_after_compaction(tmp_path):
    db = tmp_path / "shared.duckdb"
    args = ("eval", "--limit", "4", "--run-name", "shared")
    first = orchestra(*args, "--shard", "1/2", db=db)
    assert first.returncode == 0, first.stderr[-2000:]
    from lab.store import Store, queries

    store = Store(db)
    assert queries.runs_df(store).status.tolist() == ["running"]  # shard 2 has not run
    second = orchestra(*args, "--shard", "2/2", db=db)
    again = orchestra(*args, "--shard", "2/2", db=db)  # re-run: resumes, nothing twice
    assert second.returncode == again.returncode == 0
    before = _trajectories(db)
    assert len(before) == 4 and before.task_id.is_unique
    assert queries.runs_df(store).status.tolist() == ["finished"]
    compacted = orchestra("store", "compact", db=db)
    assert compacted.returncode == 0 and "folded" in compacted.stdout
    assert _trajectories(db).equals(before) and not list((tmp_path / "shared.duckdb.spool").iterdir())


def test_a_killed_shard_is_named_and_its_rerun_finishes_the_run_with_nothing_twice(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    db = tmp_path / "shared.duckdb"
    args = ["eval", "--limit", "30", "--run-name", "killed"]
    slow = [*args, "--shard", "1/2", "--rate-limit", "2", "--db", str(db)]  # 2 rollout starts a second
    shard = subprocess.Popen([sys.executable, "-m", "orchestra", *slow], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "250"})
    spool = tmp_path / "shared.duckdb.spool"
    deadline = time.monotonic() + 300
    while not list(spool.glob("*/trajectories.parquet")):  # its first rollouts are stored
        assert shard.poll() is None and time.monotonic() < deadline, "the shard ended before it could be killed"
        time.sleep(0.1)
    shard.send_signal(signal.SIGKILL)
    shard.wait()
    stored = len(_trajectories(db))
    assert 0 < stored < 15
    compacted = orchestra("store", "compact", db=db)
    assert "shards 1, 2 not finished" in compacted.stdout  # 1 killed, 2 never started
    for i in (1, 2):
        done = orchestra(*args, "--shard", f"{i}/2", db=db)  # shard 1 resumes, shard 2 runs
        assert done.returncode == 0, done.stderr[-2000:]
    compacted = orchestra("store", "compact", db=db)
    assert "every shard finished" in compacted.stdout
    rows = _trajectories(db)
    assert len(rows) == 30 and rows.task_id.is_unique
