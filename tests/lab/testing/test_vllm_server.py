"""Tests for lab.testing.vllm_server.

The vLLM environment's set-up: a second run changes nothing, a failed install says why in one line.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from lab.testing.vllm_server import VLLMServer, VLLMServerError, vllm_unavailable, vllm_venv
from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "install_vllm.sh"


def install(venv, python: str = "python3") -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ORCHESTRA_VLLM_VENV": str(venv), "PYTHON": python})


def test_an_install_that_cannot_happen_leaves_one_line_the_tests_skip_with(tmp_path, monkeypatch):
    venv = tmp_path / "vllm-venv"
    result = install(venv, python="false")
    assert result.returncode == 0  # never fails the set-up around it
    assert result.stderr.strip().count("\n") == 0 and "could not create a virtual environment" in result.stderr
    monkeypatch.setenv("ORCHESTRA_VLLM_VENV", str(venv))
    reason = vllm_unavailable()
    assert reason is not None and "could not create a virtual environment with false" in reason
    with pytest.raises(VLLMServerError, match="could not create"):
        VLLMServer(tmp_path, name="m").start()


def test_a_second_install_over_a_ready_environment_changes_nothing():
    venv = vllm_venv()
    if vllm_unavailable():
        pytest.skip(vllm_unavailable())
    before = {p: p.stat().st_mtime_ns for p in (venv / "ready", venv / "bin" / "python")}
    result = install(venv)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    assert {p: p.stat().st_mtime_ns for p in before} == before
