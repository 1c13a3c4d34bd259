"""Tests for lab.tools.paper.

The paper's toolkit shape: `search`, `enhance_reasoning`, `answer`, each taking one model slot, with the
environment (not the orchestrator) handing the slot's model the problem and the context gathered so far.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from lab.rollout import RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.testing import OpenAICompatServer
from lab.toolkit import TOOLKITS_DIR, build_tools, load_toolkit
from lab.tools.base import Observation, ToolContext
from lab.tools.paper import NOTHING_TO_SEARCH, PaperTool, paper_parameters
from lab.toolspec import ToolSpec
from lab.world.task import WorldTask
from tests.helpers.plays import Plays


def test_a_rollout_gathers_context_and_answer_ends_it(world):
    task = next(t for t in world.select(family="frames", split="test") if t.meta["hops"] == 2)
    tools = build_tools(load_toolkit("paper"))
    policy = Plays(*[format_tool_call("search", {"model": "search-1"})] * 3,
                   format_tool_call("answer", {"model": "answer-1"}), "<answer>never reached</answer>")

    async def grade(t, answer, context):
        return 1.0 if answer == str(t.answer) else 0.0

    result = asyncio.run(run_rollout(policy, tools, RolloutRequest(run_id="p", task=task), grade))
    steps = [s for s in result.steps if s.kind == "tool"]
    assert [s.tool_name for s in steps][-1] == "answer" and result.steps[-1].kind == "answer"
    assert result.trajectory.final_answer == result.steps[-1].observation
    found = [s.observation for s in steps if s.tool_name == "search"]
    assert any("Top 5 passages" in o for o in found)  # the slot's model wrote a query and retrieval ran
    counts = json.loads(result.trajectory.tool_counts_json)
    assert set(counts) <= {"search-1", "answer-1"} and counts["answer-1"] == 1
    assert all(s.model == "gpt-5" and s.simulated for s in steps)
    assert result.trajectory.cost_usd == pytest.approx(sum(s.cost_usd for s in steps))
    # two hops, two searches; once both facts are found the query writer has nothing more to look up
    assert [NOTHING_TO_SEARCH in o for o in found] == [False, False, True]


def test_reasoning_runs_the_slots_program_and_its_output_joins_the_context(world):
    task = next(t for t in world.select(family="hle") if t.reference_code)
    tools = build_tools(load_toolkit("paper"))
    policy = Plays(format_tool_call("enhance_reasoning", {"model": "reasoner-1"}),
                   format_tool_call("answer", {"model": "answer-2"}))

    async def grade(t, answer, context):
        return 0.0

    result = asyncio.run(run_rollout(policy, tools, RolloutRequest(run_id="p", task=task), grade))
    reasoning = result.steps[0]
    assert "```python" in reasoning.observation and "Output:" in reasoning.observation
    assert reasoning.observation.split("Output:\n")[1].strip()  # the interpreter really ran it


def test_a_slot_can_be_a_real_endpoint_that_gets_the_problem_and_the_context(tmp_path: Path):
    raw = yaml.safe_load((TOOLKITS_DIR / "paper.yaml").read_text())
    with OpenAICompatServer(script=["QUERY: founders of the guild", "The guild was founded by Ada.\nANSWER: Ada"],
                            usage=(200, 20)) as server:
        raw["tools"][0]["backend"]["slots"]["search-1"] = {
            "name": "gpt-5", "model": "gpt-5",
            "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}
        raw["tools"][0]["backend"]["retriever"] = {"kind": "local_search", "index": "world"}
        raw["tools"][2]["backend"]["slots"]["answer-1"] = {
            "name": "gpt-5", "model": "gpt-5",
            "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}
        path = tmp_path / "paper-real.yaml"
        path.write_text(yaml.safe_dump(raw))
        kit = load_toolkit(str(path))
        assert not kit.get("answer").slots["answer-1"].simulated
        tools = {name: tool for name, tool in build_tools(kit).items()}
        task = WorldTask(task_id="real-1", family="frames", domain="multihop", question="Who founded the guild?",
                         answer="Ada")
        policy = Plays(format_tool_call("search", {"model": "search-1"}),
                       format_tool_call("answer", {"model": "answer-1"}))

        async def grade(t, answer, context):
            return float(answer == "Ada")

        result = asyncio.run(run_rollout(policy, tools, RolloutRequest(run_id="p", task=task), grade))
        bodies = server.bodies
    assert result.trajectory.outcome == 1.0
    search_prompt = bodies[0]["messages"][-1]["content"]
    answer_prompt = bodies[1]["messages"][-1]["content"]
    assert "Who founded the guild?" in search_prompt and "Write a short search query" in search_prompt
    # the answer model gets the problem and what the search found, without the orchestrator writing it
    assert "Who founded the guild?" in answer_prompt and 'searched for "founders of the guild"' in answer_prompt
    assert result.steps[1].cost_usd == pytest.approx((200 * 1.25 + 20 * 10.0) / 1e6)


def test_an_unknown_slot_is_a_format_error_the_orchestrator_can_read(world):
    tools = build_tools(load_toolkit("paper"))
    task = world.select(family="frames")[0]
    policy = Plays(format_tool_call("answer", {"model": "answer-9"}), "<answer>x</answer>")

    async def grade(t, answer, context):
        return 0.0

    result = asyncio.run(run_rollout(policy, tools, RolloutRequest(run_id="p", task=task), grade))
    assert result.steps[0].kind == "format_error" and "must be one of" in result.steps[0].error
    assert json.loads(result.trajectory.tool_counts_json) == {}


class Replies:
    """A slot model that answers every request with one fixed text (and records the requests)."""

    def __init__(self, text: str, model: str = "qwen3-32b") -> None:
        from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec

        self.spec = ToolSpec(name=model, description=model, parameters=LLM_TOOL_PARAMETERS, category="generalist",
                             model=model)
        self.text, self.requests = text, []

    async def ask(self, request, context=None):
        self.requests.append(request)
        return Observation(text=self.text, input_tokens=10, output_tokens=5, model=self.spec.model)


class Found:
    """A retriever that finds fixed documents."""

    spec = None

    def __init__(self, documents: list[str]) -> None:
        self.documents = documents

    async def execute(self, arguments, context=None):
        return Observation(text=f"{len(self.documents)} documents", meta={"documents": self.documents})


class Tavily:
    """Stands in for AsyncTavilyClient: search results with scores; each page's extraction from `pages`."""

    pages = {"https://a": "a" * 150, "https://b": "b" * 80, "https://c": "c" * 300, "https://d": None}
    calls: list = []

    def __init__(self, api_key=None, **kwargs) -> None:
        pass

    async def search(self, query, **options):
        Tavily.calls.append(("search", query, options))
        return {"results": [{"url": url, "score": score} for url, score in
                            (("https://a", 0.4), ("https://b", 0.9), ("https://c", 0.7), ("https://d", 0.8))]}

    async def extract(self, urls, **options):
        Tavily.calls.append(("extract", urls[0], options))
        page = Tavily.pages[urls[0]]
        if page is None:
            raise ConnectionError("403")
        return {"results": [{"raw_content": page}]}


def released_context() -> ToolContext:
    from lab.tools.base import estimate_tokens
    from lab.tools.experts import ExpertSettings, Gathered, RoundView

    return ToolContext(task=WorldTask(task_id="t", family="hle", domain="d", question="Who founded the guild?",
                                      answer="Ada"),
                       round=RoundView(Gathered(), "", estimate_tokens, ExpertSettings()))


def search_tool(found: list[str], web_fallback=None) -> PaperTool:
    spec = ToolSpec(name="search", description="search", category="basic", parameters=paper_parameters(["search-3"]))
    return PaperTool(spec, "search", {"search-3": Replies("<query>lantern guild founder</query>")},
                     retriever=Found(found), web_fallback=web_fallback)


def test_a_search_finding_fewer_than_three_documents_falls_back_to_the_web(monkeypatch):
    from lab.pricing import PriceTable
    from lab.tools import web_search as ws

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    monkeypatch.setattr(ws, "AsyncTavilyClient", Tavily)
    Tavily.calls = []
    observation = asyncio.run(search_tool(["local one", "local two"], ws.WebSearch()).execute(
        {"model": "search-3"}, released_context()))
    # the local hits, then the extracted pages over 100 characters, best search score first; a page that
    # cannot be extracted and one of 80 characters are left out
    assert observation.meta["documents"] == ["local one", "local two", "c" * 300 + "\n\n", "a" * 150 + "\n\n"]
    search = Tavily.calls[0]
    assert search[:2] == ("search", "lantern guild founder")
    assert search[2]["search_depth"] == "advanced" and search[2]["max_results"] == 20
    assert search[2]["chunks_per_source"] == 5
    assert {c[2]["extract_depth"] for c in Tavily.calls[1:]} == {"advanced"}
    prices = PriceTable.load()
    assert observation.cost_usd == pytest.approx(prices.price("tavily-search-advanced").per_call
                                                 + 4 * prices.price("tavily-extract").per_call)
    Tavily.calls = []
    enough = asyncio.run(search_tool(["1", "2", "3"], ws.WebSearch()).execute({"model": "search-3"},
                                                                                 released_context()))
    assert enough.meta["documents"] == ["1", "2", "3"] and Tavily.calls == []


def test_released_programs_run_for_60_s_and_only_their_stdout_joins_the_context():
    from lab.tools.experts import Gathered

    tools = build_tools(load_toolkit("paper"))
    assert tools["enhance_reasoning"].interpreter.timeout_s == 60  # eval_hle.py: subprocess.run(..., timeout=60)
    spec = tools["enhance_reasoning"].spec
    code = "import sys\nprint(1834 - 1800)\nprint('a warning', file=sys.stderr)\n"
    tool = PaperTool(spec, "enhance_reasoning",
                     {"reasoner-3": Replies(f"Here:\n```python\n{code}```\nDone.", "qwen2.5-coder-32b-instruct")},
                     interpreter=tools["enhance_reasoning"].interpreter)
    observation = asyncio.run(tool.execute({"model": "reasoner-3"}, released_context()))
    # the released split keeps the newline after ```python
    assert observation.meta["program"] == "\n" + code and observation.meta["program_output"] == "34\n"
    silent = PaperTool(spec, "enhance_reasoning",
                       {"reasoner-3": Replies("```python\nx = 1\n```", "qwen2.5-coder-32b-instruct")},
                       interpreter=tools["enhance_reasoning"].interpreter)
    quiet = asyncio.run(silent.execute({"model": "reasoner-3"}, released_context()))
    gathered = Gathered()
    gathered.add(observation)
    gathered.add(quiet)
    assert gathered.programs == [("\n" + code, "34\n")]  # a program that printed nothing does not join
