"""Every endpoint is checked once before any work (lab.tools.endpoints): what no retry can fix fails at once,
in one line naming the endpoint's role and URL; what a retry can fix is a notice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lab.errors import LabInputError
from lab.testing import OpenAICompatServer, unused_port
from lab.toolkit import TOOLKITS_DIR
from lab.tools.endpoints import Endpoint, check_endpoints

KEY_ENV = "LAB_TEST_ENDPOINT_KEY"


def test_a_closed_port_is_one_line_naming_the_role_and_url() -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    with pytest.raises(LabInputError) as refused:
        check_endpoints([Endpoint("slot 'answer-1' of tool 'answer'", (url,), "gpt-5")])
    line = str(refused.value)
    assert line.startswith(f"slot 'answer-1' of tool 'answer': {url}: cannot be reached") and "\n" not in line


def test_an_unknown_host_is_refused() -> None:
    with pytest.raises(LabInputError, match="tool 'judge' \\(--judge\\): http://no-such-host.invalid/v1: cannot"):
        check_endpoints([Endpoint("tool 'judge' (--judge)", ("http://no-such-host.invalid/v1",), "gpt-5")])


def test_a_wrong_key_an_unlisted_model_and_a_wrong_root_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-123")
    with OpenAICompatServer(models=("gpt-5", "gpt-5-mini"), api_key="sk-right") as server:
        with pytest.raises(LabInputError) as refused:
            check_endpoints([Endpoint("--orchestrator", (server.base_url,), "gpt-5", KEY_ENV)])
        assert f"HTTP 401: the server refuses the key from ${KEY_ENV}" in str(refused.value)
        assert "sk-wrong-key-123" not in str(refused.value)
        monkeypatch.setenv(KEY_ENV, "sk-right")
        assert check_endpoints([Endpoint("--orchestrator", (server.base_url,), "gpt-5", KEY_ENV)]) == []
        with pytest.raises(LabInputError, match="does not serve model 'gpt-5o' \\(it serves: gpt-5, gpt-5-mini\\)"):
            check_endpoints([Endpoint("tool 'x'", (server.base_url,), "gpt-5o", KEY_ENV)])
        root = server.base_url.removesuffix("/v1")
        with pytest.raises(LabInputError, match="HTTP 404 for GET /models: not an OpenAI-compatible API root"):
            check_endpoints([Endpoint("tool 'x'", (root,), "gpt-5", KEY_ENV)])
    assert server.requests == 0  # a check is no chat call: nothing is billed


def test_one_replica_down_of_two_is_a_notice_and_the_run_goes_on() -> None:
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    with OpenAICompatServer(models=("qwen3-32b",)) as up:
        notices = check_endpoints([Endpoint("slot 'answer-4' of tool 'answer'", (closed, up.base_url), "qwen3-32b")])
    assert len(notices) == 1 and notices[0].startswith(f"slot 'answer-4' of tool 'answer': replica {closed}: ")


def test_a_busy_server_is_a_notice_not_a_refusal() -> None:
    with OpenAICompatServer(models=()) as server:
        assert check_endpoints([Endpoint("tool 'x'", (server.base_url,), "m")]) == [
            f"tool 'x': {server.base_url}: lists no models, so 'm' was not checked"]


def test_a_slot_at_a_closed_port_fails_the_run_before_work_in_one_line(tmp_path: Path, world) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    kit = yaml.safe_load((TOOLKITS_DIR / "paper-small.yaml").read_text())
    answer = next(t for t in kit["tools"] if t["name"] == "answer")
    slot = next(iter(answer["backend"]["slots"]))
    answer["backend"]["slots"][slot] = {"name": "qwen3-32b", "model": "qwen3-32b",
                                        "backend": {"kind": "openai", "base_url": url, "model": "Qwen/Qwen3-32B"}}
    (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
    db = tmp_path / "never.duckdb"
    result = subprocess.run([sys.executable, "-m", "orchestra", "eval", "--benchmark", "world", "--split", "test",
                             "--limit", "2", "--orchestrator", "scripted:cheapest-first", "--protocol", "rounds",
                             "--toolkit", str(tmp_path / "kit.yaml"), "--db", str(db)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: slot '{slot}' of tool 'answer': {url}: cannot be reached")
    assert not db.exists()
