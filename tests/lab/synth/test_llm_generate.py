"""Tests for the LLM-driven ToolScale generator (lab.synth.llm_generate) over real HTTP.

A fake model (`tests.helpers.fake_library_llm.LibraryLLM`) answers each stage behind the OpenAI-compatible test
server. What a user would notice: a domain comes out whose code ran only in the sandbox, whose
tasks passed the same build filters as the offline domains (and the ones that should not, did not);
a wrong answer is retried with the gate's complaint and a hopeless one stops after the set number of
attempts with one line naming the stage; a rerun costs no calls; calls never exceed the cap; and the
folder it writes is evaluated like any other ToolScale folder.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.store import Store, queries
from lab.synth.export import export_domain, import_domain, pack
from lab.synth.llm_generate import LLMSettings, generate_domains
from lab.synth.sandboxed import SandboxDomain
from lab.testing import OpenAICompatServer
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from tests.helpers.fake_library_llm import TASKS, LibraryLLM

pytestmark = pytest.mark.slow


def writer(base_url: str) -> OpenAIChatTool:
    """GPT-5 on OpenAI's rules: every server below is strict, so a stage asking it with a parameter it refuses
    fails the test."""
    return OpenAIChatTool(ToolSpec(name="writer", description="A generalist LLM.", parameters=LLM_TOOL_PARAMETERS,
                                   category="generalist", model="gpt-5",
                                   backend={"kind": "openai", "base_url": base_url, "model": "gpt-5",
                                            "provider": "openai", "backoff_s": 0.01}))


def llm_server(**behaviour) -> OpenAICompatServer:
    return OpenAICompatServer(strict=True, models=("gpt-5",), **behaviour)


def generate(model: LibraryLLM, tmp_path: Path, n_tasks: int = 6, **settings) -> tuple:
    with llm_server(responder=model.respond) as server:
        results, llm = asyncio.run(generate_domains(
            ["library"], n_tasks, seed=0, tool=writer(server.base_url),
            settings=LLMSettings(cache_dir=tmp_path / "cache", **settings)))
        assert server.refused == []  # every stage asked GPT-5 as OpenAI accepts
        return results[0], llm, server.requests, server.max_in_flight


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llm")
    model = LibraryLLM(broken={"models"})
    result, llm, requests, _ = generate(model, tmp)
    return tmp, model, result, llm, requests


def test_a_domain_comes_out_of_the_stages_with_verified_tasks(built):
    _, _, result, llm, requests = built
    assert result.error is None and isinstance(result.domain, SandboxDomain)
    assert {n: t.access for n,
            t in result.domain.tools.items()}["borrow_book"] == "write" and len(result.domain.tools) == 12
    assert "The current time is 2025-06-02T09:00:00" in result.domain.policy
    counts = result.counts
    assert counts["tasks/kept"] == len(result.tasks) == 6
    # the two bad intents fail the same filters as the offline domains' tasks would
    assert counts["filter/golden_runs"] == 1 and counts["filter/needs_tools"] == 1
    assert counts["tasks/generated"] == 6 + 2 and counts["template/evolved/kept"] == 2
    evolved = [t for t in result.tasks if "Ulysses" in t["description"]["purpose"]]
    assert evolved and all(t["description"]["notes"].endswith("difficulty hard.") for t in evolved)
    assert evolved[0]["evaluation_criteria"]["communicate_info"] == ["2025-06-16"]  # read after the write
    assert requests == llm.requests and llm.cache_hits == 0


def test_a_wrong_answer_is_retried_with_the_gates_complaint(built):
    _, model, result, _, _ = built
    first, second = model.prompts["models"]
    assert "failed this check" not in first and "failed this check" in second
    assert "syntax" in second.lower() or "did not run" in second  # the sandbox's own complaint, shown to the model
    assert result.counts["llm/models/rejected"] == 1


def test_a_rerun_is_answered_from_the_cache(built):
    tmp, _, result, _, _ = built
    again, llm, requests, _ = generate(LibraryLLM(broken={"models"}), tmp)
    assert requests == 0 and llm.cache_hits > 0
    assert again.tasks == result.tasks and again.db == result.db


def test_a_hopeless_stage_stops_after_the_set_attempts(tmp_path):
    model = LibraryLLM(always_broken={"toolkit"})
    result, _, requests, _ = generate(model, tmp_path, max_attempts=2)
    assert result.error.startswith("stage toolkit: 2 answers failed its checks")
    assert len(model.prompts["toolkit"]) == 2 and requests == 5  # schema, models, records, toolkit twice
    assert result.tasks == []


def test_calls_never_exceed_the_concurrency_cap(tmp_path):
    model = LibraryLLM()
    with llm_server(responder=model.respond, latency_s=0.05) as server:
        results, _ = asyncio.run(generate_domains(
            ["library", "archive", "lending"], 2, seed=0, tool=writer(server.base_url),
            settings=LLMSettings(cache_dir=tmp_path / "cache", concurrency=2)))
        peak = server.max_in_flight
    assert [r.error for r in results] == [None] * 3 and peak <= 2


def test_generated_code_cannot_reach_the_host(built, tmp_path):
    _, _, result, _, _ = built
    secret = tmp_path / "answers.json"
    secret.write_text('{"gold": 42}')
    spy = result.domain.code + f'''

def peek(db: dict) -> str:
    """Read a host file.
    """
    return open({str(secret)!r}).read()


TOOLS["peek"] = "read"
'''
    # the host reads the tool list with ast: a TOOLS entry added by code is not a tool at all
    assert "peek" not in SandboxDomain.from_code("spy", spy, result.domain.policy).tools
    spy = spy.replace('TOOLS["peek"] = "read"\n', "").replace("TOOLS = {", 'TOOLS = {"peek": "read", ')
    domain = SandboxDomain.from_code("spy", spy, result.domain.policy)
    text, failed = domain.call(json.loads(json.dumps(result.db)), "peek", {})
    assert failed and "tool failed" in text and "42" not in text


def test_the_written_folder_evaluates_like_any_toolscale_folder(built, tmp_path):
    _, _, result, _, _ = built
    folder = export_domain(pack(result.domain, result.db, result.tasks, seed=0), tmp_path / "ts" / "library")
    assert (folder / "domain.py").read_text() == result.domain.code
    assert import_domain(folder).code == result.domain.code
    store = Store(tmp_path / "s.duckdb")
    first = f"library-{result.tasks[0]['id']}"
    (summary,) = run_eval(EvalConfig.build(benchmark=f"toolscale:{tmp_path / 'ts'}", split="base",
                                           orchestrator="scripted:oracle", tasks=[first]), store, Console(quiet=True))
    (traj,) = queries.trajectories_df(store, [summary.run_id]).itertuples()
    assert traj.outcome == 1.0 and json.loads(traj.criteria_json)["db"] is True


def test_cli_synth_with_an_llm_tool(tmp_path):
    model = LibraryLLM()
    with llm_server(responder=model.respond) as server:
        kit = {"name": "writers", "tools": [{"name": "writer", "model": "gpt-5", "category": "generalist",
                                             "description": "A generalist LLM.",
                                             "backend": {"kind": "openai", "base_url": server.base_url,
                                                         "model": "gpt-5", "provider": "openai"}}]}
        (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
        done = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", "synth", "--domains",
                               "library",
                               "--tasks-per-domain", "3", "--out", str(tmp_path / "ts"), "--db",
                               str(tmp_path / "s.duckdb"),
                               "--llm", "writer", "--toolkit", str(tmp_path / "kit.yaml"), "--json"],
                              capture_output=True, text=True, timeout=600,
                              env={**__import__("os").environ, "ORCHESTRA_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]["library"]
    assert stats["tasks/kept"] == 3 and stats["llm/requests"] > 0 and stats["tools"] == 12
    assert {p.name for p in (tmp_path / "ts" / "library").iterdir()} >= {"tasks.json", "db.json", "policy.md",
                                                                         "domain.py"}
    assert len(TASKS) >= 3
