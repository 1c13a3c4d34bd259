"""`orchestra eval` (`orchestra/cli/evaluate.py`): bad input is stopped before any work (one line, exit 2,
nothing created, nothing said first), and a run that starts says once what an optional tool lacks.

Each case runs the real `orchestra` command in its own process, as a user would, on a store path that
must not exist afterwards: a refused command opens no store, loads no embedder and prints no warning
about optional features of a run that never starts.
"""

from __future__ import annotations

import pytest

from tests.conftest import orchestra

UNKNOWN_KIND = "name: bad\ntools:\n  - {name: x, backend: {kind: telepathy}}\n"
WORDY_TIMEOUT = "name: bad\ntools:\n  - {name: c, backend: {kind: code_interpreter, timeout_s: soon}}\n"
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
