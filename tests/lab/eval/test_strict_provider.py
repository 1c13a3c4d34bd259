"""Every call path of an evaluation against a server that behaves like OpenAI (strict mode), with GPT-5 models:
the orchestrator, the released experts in the slots, the judge and the tau2 user. None of their requests is
refused; with `max_tokens` put back for GPT-5 the run fails, naming the parameter, the model and the slot.

(The tau2 experts' path is in tests/lab/rollout/test_tau2_released.py, task synthesis's in
tests/lab/synth/test_llm_generate.py: both against the same strict server.)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from lab import providers
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.rollout import PolicyOutput
from lab.rollout.parse import format_tool_call
from lab.store import Store, queries
from lab.testing import OpenAICompatServer
from lab.toolkit import TOOLKITS_DIR

pytestmark = pytest.mark.usefixtures("world")

MODELS = ("gpt-5", "gpt-5-mini")


def gpt(url: str, model: str = "gpt-5", name: str | None = None) -> dict[str, Any]:
    """A toolkit entry for `model` on OpenAI's rules (`provider: openai`: the strict server is on 127.0.0.1)."""
    return {"name": name or model, "model": model, "category": "generalist", "description": f"{model} on OpenAI.",
            "backend": {"kind": "openai", "base_url": url, "model": model, "provider": "openai", "max_retries": 0,
                        "timeout_s": 30}}


def paper_kit(tmp_path: Path, url: str) -> str:
    """paper-small with GPT-5 answering and GPT-5-mini writing queries, both at the strict server."""
    kit = yaml.safe_load((TOOLKITS_DIR / "paper-small.yaml").read_text())
    slots = {tool["name"]: tool["backend"]["slots"] for tool in kit["tools"]}
    slots["answer"]["answer-1"] = gpt(url)
    slots["search"]["search-1"] = gpt(url, "gpt-5-mini")
    path = tmp_path / "paper-openai.yaml"
    path.write_text(yaml.safe_dump(kit))
    return str(path)


def model_reply(prompt: str) -> Any:
    """The orchestrator searches once, then answers with GPT-5; the experts reply in the released formats."""
    if "Choose an appropriate tool" in prompt:
        call = ("answer", "answer-1") if "Documents:" in prompt else ("search", "search-1")
        return {"content": "", "tool_calls": [{"name": call[0], "arguments": {"model": call[1]}}]}
    if "<query>" in prompt:
        return "<query>lighthouse keeper</query>"
    return "<think>from the documents</think><answer>Ada</answer>"


def test_the_orchestrator_and_the_released_experts_run_on_openais_rules(tmp_path: Path) -> None:
    with OpenAICompatServer(strict=True, models=MODELS, responder=model_reply) as server:
        config = EvalConfig(benchmark="world", split="test", limit=2, protocol="rounds", temperature=1.0,
                            orchestrator=f"openai:gpt-5@{server.base_url}", orchestrator_provider="openai",
                            toolkit=paper_kit(tmp_path, server.base_url), max_turns=[4])
        (summary,) = run_eval(config, Store(tmp_path / "strict.duckdb"))
    assert server.refused == [] and summary.failed_endpoints == [] and summary.trajectories == 2
    turns = [b for b in server.bodies if "tools" in b]
    experts = [b for b in server.bodies if "tools" not in b]
    assert len(turns) == 4 and {b["model"] for b in experts} == set(MODELS)
    for body in server.bodies:  # GPT-5's token limit under its own name, and no sampling it refuses
        assert "max_completion_tokens" in body and "max_tokens" not in body and "top_p" not in body
        assert body.get("temperature", 1.0) == 1.0
    assert {b["max_completion_tokens"] for b in experts} == {40000}  # the released client's GPT-5 budget


@pytest.fixture
def max_tokens_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug this issue fixed, put back: GPT-5 asked as vLLM is (`max_tokens`)."""
    sent_as_vllm = dataclasses.replace(providers.REASONING, token_parameter="max_tokens",
                                       refused=providers.REASONING.refused - {"max_tokens"})
    monkeypatch.setitem(providers.FAMILIES["openai"], "reasoning", sent_as_vllm)


@pytest.mark.usefixtures("max_tokens_put_back")
def test_with_max_tokens_put_back_a_gpt5_slot_fails_the_run_naming_parameter_model_and_slot(tmp_path: Path) -> None:
    with OpenAICompatServer(strict=True, models=MODELS, responder=model_reply) as server:
        config = EvalConfig(benchmark="world", split="test", limit=2, protocol="rounds",
                            orchestrator="scripted:always-strongest", toolkit=paper_kit(tmp_path, server.base_url))
        store = Store(tmp_path / "refused.duckdb")
        (summary,) = run_eval(config, store)
    assert server.refused and {e["param"] for e in server.refused} == {"max_tokens"}
    answer_line = next(line for line in summary.failed_endpoints if line.startswith("slot 'answer-1'"))
    assert answer_line.startswith("slot 'answer-1' of tool 'answer' (gpt-5): all ")
    assert "HTTP 400 for gpt-5 on openai (reasoning), parameter 'max_tokens': Unsupported parameter" in answer_line
    assert queries.run(store, summary.run_id).status == "failed"


def test_the_judge_runs_on_openais_rules(tmp_path: Path) -> None:
    with OpenAICompatServer(strict=True, models=MODELS, reply="<correct>False</correct>") as server:
        kit = yaml.safe_load((TOOLKITS_DIR / "world-offline.yaml").read_text())
        kit["tools"].append(gpt(server.base_url, name="judge"))
        (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
        for prompt in ("lab", "released"):
            config = EvalConfig(benchmark="world:frames", split="test", limit=6, orchestrator="scripted:cheapest-first",
                                toolkit=str(tmp_path / "kit.yaml"), judge="judge", judge_prompt=prompt,
                                run_name=f"judged-{prompt}")
            (summary,) = run_eval(config, Store(tmp_path / "judged.duckdb"))
            assert summary.judge_failed == 0 and summary.failed_endpoints == []
    assert server.refused == [] and server.bodies
    assert all("max_tokens" not in b and b.get("temperature", 1.0) == 1.0 for b in server.bodies)


def test_an_llm_user_of_tau2_runs_on_openais_rules(tmp_path: Path) -> None:
    with OpenAICompatServer(strict=True, models=MODELS, reply="Thanks, that is all. ###STOP###") as server:
        kit = yaml.safe_load((TOOLKITS_DIR / "world-offline.yaml").read_text())
        kit["tools"].append(gpt(server.base_url, "gpt-5-mini", name="customer"))
        (tmp_path / "kit.yaml").write_text(yaml.safe_dump(kit))
        config = EvalConfig(benchmark="tau2:retail", split="base", limit=2, orchestrator="scripted:oracle",
                            toolkit=str(tmp_path / "kit.yaml"), user="customer")
        (summary,) = run_eval(config, Store(tmp_path / "tau2.duckdb"))
    assert summary.trajectories == 2 and summary.failed_endpoints == []
    assert server.refused == [] and server.bodies and all(b["model"] == "gpt-5-mini" for b in server.bodies)
    assert all("max_tokens" not in b and "top_p" not in b for b in server.bodies)


class SearchThenAnswer:
    """Searches with `search-1`, then answers with the simulated `answer-2`."""

    name = "test:search-then-answer"

    def session(self, task: Any, specs: Any, seed: int) -> Any:
        turns = [format_tool_call("search", {"model": "search-1"}), format_tool_call("answer", {"model": "answer-2"})]

        class Session:
            async def generate(self, messages: Any, tools: Any = None, observations: Any = None) -> PolicyOutput:
                return PolicyOutput(text=turns.pop(0) if turns else "no call")

            def token_trajectory(self) -> None:
                return None

        return Session()


@pytest.mark.usefixtures("max_tokens_put_back")
def test_a_search_slot_whose_every_call_fails_is_named_though_its_search_fell_back(tmp_path: Path) -> None:
    """The released search falls back to the problem when its query writer fails: the step says so, and the
    run ends failed naming the slot, instead of looking like a cheaper search."""
    with OpenAICompatServer(strict=True, models=MODELS, responder=model_reply) as server:
        config = EvalConfig(benchmark="world", split="test", limit=2, protocol="rounds",
                            orchestrator="scripted:cheapest-first", toolkit=paper_kit(tmp_path, server.base_url))
        store = Store(tmp_path / "fallback.duckdb")
        (summary,) = run_eval(config, store, policy=SearchThenAnswer())
    assert summary.trajectories == 2  # the rollouts went on: the search searched the problem
    (line,) = summary.failed_endpoints
    assert line.startswith("slot 'search-1' of tool 'search' (gpt-5-mini): all 2 calls failed; last: ")
    assert "parameter 'max_tokens'" in line
    searches = queries.steps_df(store, summary.run_id).query("tool_name == 'search'")
    assert len(searches) == 2 and all(o.startswith("search-1 failed (tool 'gpt-5-mini': HTTP 400 for gpt-5-mini")
                                      for o in searches.observation)
    assert queries.run(store, summary.run_id).status == "failed"
