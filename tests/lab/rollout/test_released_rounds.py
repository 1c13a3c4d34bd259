"""The round protocol under the released experts against the authors' own loop (`tests/helpers/released_rounds.py`,
a transcription of `run_single` and `call_tool` of evaluation/eval_hle.py and eval_frames.py at d882ee7).

For the same generated states (documents, programs whose output ends in newlines, long code, long problems) the
lab must build the released orchestrator context and expert requests byte for byte; for the same scripted
orchestrator, experts, retrieval and interpreter, a whole rollout must show the orchestrator the same messages and
catalog every round, run the same calls, ask every expert the same thing and end with the same answer. The HLE
and FRAMES settings are the benchmarks' own (`rollout_config_for`), as `orchestra eval --protocol rounds` uses them.
Tokens are counted with the word stand-in of `tests/helpers/released_experts.py`.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.eval.config import EvalConfig
from lab.eval.sources import rollout_config_for
from lab.rollout import PolicyOutput, RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.rounds import released_round_context
from lab.toolkit import load_toolkit
from lab.tools.base import ModelRequest, Observation, ToolContext
from lab.tools.experts import ExpertSettings, Gathered, expert_context, expert_request, family_of
from lab.tools.paper import PaperTool
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from tests.conftest import SHARED
from tests.helpers.released_experts import words
from tests.helpers.released_rounds import (
    ALL_TOOLS,
    MODEL_MAPPING,
    World,
    call_tool,
    completion,
    expert_context_str,
    orchestrator_context_str,
    run_single,
    tool_call,
)

TOOLS_JSON = SHARED / "toolorchestra" / "tools.json"
ROLE = {"search": "search", "reasoner": "enhance_reasoning", "answer": "answer"}


def slow(examples: int = 100) -> Any:
    """Settings for examples that build contexts of tens of thousands of tokens."""
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def released_config(benchmark: str, max_turns: int = 50) -> RolloutConfig:
    """The rollout settings `orchestra eval --benchmark <benchmark> --protocol rounds` runs with."""
    return rollout_config_for(EvalConfig(benchmark=benchmark, protocol="rounds", toolkit="paper",
                                         catalog=str(TOOLS_JSON)), max_turns)


def role_of(slot: str) -> str:
    return ROLE[slot.split("-")[0]]


def as_request(messages: Any) -> tuple[str | None, str]:
    """(system, prompt) of what the released code sent: a string, or a system + user chat."""
    if isinstance(messages, str):
        return None, messages
    return messages[0]["content"], messages[1]["content"]


# ---- generated states ---------------------------------------------------------------------------------------

WORD = st.sampled_from(["a", "Ada", "guild", "1834", "é", "x=1", "print(2)", "}"])
SEP = st.sampled_from([" ", "\n", "  ", " \n\n"])


def run_of(word: str, n: int, sep: str) -> str:
    return sep.join([word] * n)


def text(*sizes: int) -> st.SearchStrategy[str]:
    """A run of one word, of one of these lengths (the large ones reach the released budgets)."""
    return st.builds(run_of, WORD, st.sampled_from(sizes), SEP)


# documents long enough to be cut at 1,000 / 1,200 / 4,000 characters, many enough to pass 24k-27k tokens
DOCUMENT = st.builds(lambda n, body: f"d{n} {body}", st.integers(0, 999), text(1, 7, 300, 2500))
# outputs as printed: trailing newlines, blank lines, or long enough to pass the 12k-token program cut
OUTPUT = st.builds(lambda body, end: body + end, text(1, 4, 6500), st.sampled_from(["", "\n", "\n\n"]))
PROGRAM = st.tuples(text(1, 5, 30), OUTPUT)
# a problem long enough makes a budget 0 or negative (Qwen2.5-Math's 2,000 tokens; HLE's 27,000)
PROBLEM = text(1, 12, 1000, 2000, 2600, 27000, 27500)


@st.composite
def states(draw: Any) -> tuple[str, list[str], list[tuple[str, str]]]:
    documents = draw(st.sampled_from([0, 1, 3, 15, 50]).flatmap(
        lambda n: st.lists(DOCUMENT, min_size=n, max_size=n, unique=True)))
    programs = draw(st.sampled_from([0, 1, 2, 5]).flatmap(lambda n: st.lists(PROGRAM, min_size=n, max_size=n)))
    return draw(PROBLEM), documents, programs


# ---- what the orchestrator and each expert read, built from one state --------------------------------------


@slow()
@given(states(), st.sampled_from(["hle", "frames"]))
def test_the_orchestrators_context_is_the_released_one_byte_for_byte(state, benchmark):
    problem, documents, programs = state
    lab = released_round_context(Gathered(documents, programs), problem, released_config(benchmark), words)
    code_list = [{"code": code, "output": output} for code, output in programs]
    assert lab == orchestrator_context_str(problem, documents, code_list, frames=benchmark == "frames")


@slow()
@given(states(), st.sampled_from(["hle", "frames"]), st.sampled_from(sorted(MODEL_MAPPING)))
def test_each_expert_is_asked_what_the_released_code_asks_it(state, variant, slot):
    problem, documents, programs = state
    role, model = role_of(slot), MODEL_MAPPING[slot]
    code_list = [{"code": code, "output": output} for code, output in programs]
    family = family_of(model, variant)
    context = expert_context(Gathered(documents, programs), family, problem, words)
    assert context == expert_context_str(role, model, documents, code_list, problem, variant == "frames")
    request = expert_request(role, family, variant, problem, context, ExpertSettings())
    world = World(orchestrator=None, expert=lambda model, messages: completion(""), retrieve=lambda query: [],
                  execute=lambda code: "", raw_tools=[])  # type: ignore[arg-type]
    call_tool({"tool": role, "model": model, "context_str": context, "problem": problem}, world, variant == "frames")
    assert world.asked == [(model, world.asked[0][1])] and as_request(world.asked[0][1]) == (request.system,
                                                                                            request.prompt)


# ---- whole rollouts: the same orchestrator, experts, retrieval and interpreter on both sides -----------------


@dataclass
class Script:
    """What the world does, in order: the orchestrator's calls per round, the experts' replies (the n-th
    expert call gets the n-th), each retrieval's documents (best first) and each program's stdout."""

    problem: str
    rounds: list[list[tuple[str, Any]]]
    replies: list[str]
    found: list[list[str]]
    stdouts: list[str]


def take(items: list[Any], default: Any) -> Any:
    return items.pop(0) if items else default


class Orchestrator:
    """Plays the script's calls as a server's parsed `tool_calls`; records each round's messages and catalog."""

    name = "test:released-rounds"
    count_tokens = staticmethod(words)

    def __init__(self, rounds: list[list[tuple[str, Any]]]) -> None:
        self.rounds, self.seen = rounds, []

    def session(self, task: Any, specs: Any, seed: int) -> Any:
        policy = self

        class Session:
            async def generate(self, messages, tools=None, observations=None):
                policy.seen.append(([dict(m) for m in messages], tools))
                calls = take(policy.rounds, [])
                return PolicyOutput(text="", native_calls=[
                    {"id": f"call-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                    for i, (name, args) in enumerate(calls)])

            def token_trajectory(self):
                return None

        return Session()


class Expert:
    """A slot's model: records each request and answers with the script's next reply."""

    def __init__(self, slot: str, script: Script, log: list[tuple[str, str | None, str]]) -> None:
        self.spec = ToolSpec(name=slot, description=slot, category="generalist", parameters=LLM_TOOL_PARAMETERS,
                             model=MODEL_MAPPING[slot])
        self.script, self.log = script, log

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        raise AssertionError("a slot's model is asked, not executed")

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation:
        self.log.append((self.spec.model or "", request.system, request.prompt))
        return Observation(text=take(self.script.replies, ""), model=self.spec.model)


class Backend:
    """The retrieval server and the interpreter: the script's next documents / stdout, each query and program kept."""

    def __init__(self, script: Script) -> None:
        self.script, self.queries, self.programs = script, [], []
        self.spec = ToolSpec(name="backend", description="", category="basic", parameters={"type": "object"})

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if "query" in arguments:
            self.queries.append(arguments["query"])
            return Observation(text="found", meta={"documents": take(self.script.found, [])})
        self.programs.append(arguments["code"])
        stdout = take(self.script.stdouts, "")
        return Observation(text=stdout, meta={"stdout": stdout})


def play_lab(script: Script, benchmark: str) -> dict[str, Any]:
    log: list[tuple[str, str | None, str]] = []
    backend = Backend(script)
    specs = {spec.name: spec for spec in load_toolkit("paper").tools}
    tools = {name: PaperTool(specs[name], name, {slot: Expert(slot, script, log) for slot in specs[name].slots},
                             retriever=backend, interpreter=backend)  # type: ignore[arg-type]
             for name in ("search", "enhance_reasoning", "answer")}
    policy = Orchestrator(script.rounds)

    async def grade(task, answer, context):
        return 0.0

    task = type("Task", (), {"task_id": "t", "question": script.problem})()
    config = released_config(benchmark, max_turns=len(script.rounds))
    result = asyncio.run(run_rollout(policy, tools, RolloutRequest(run_id="r", task=task), grade, config))
    return {"chats": policy.seen, "asked": log, "queries": backend.queries, "programs": backend.programs,
            "ran": [(s.tool_name, json.loads(s.arguments_json)["model"]) for s in result.steps if s.kind == "tool"],
            "pred": result.trajectory.final_answer}


def play_released(script: Script, benchmark: str) -> dict[str, Any]:
    queries: list[str] = []
    programs: list[str] = []

    def orchestrator(chat, tools):
        return completion(None, [tool_call(name, args) for name, args in take(script.rounds, [])])

    def retrieve(query):
        queries.append(query)
        return take(script.found, [])

    def execute(code):
        programs.append(code)
        return take(script.stdouts, "")

    world = World(orchestrator=orchestrator, expert=lambda model, messages: completion(take(script.replies, "")),
                  retrieve=retrieve, execute=execute, raw_tools=json.loads(TOOLS_JSON.read_text()),
                  MAX_ROUNDS=len(script.rounds))
    out = run_single({"question": script.problem}, world, frames=benchmark == "frames")
    return {"chats": out["chats"], "asked": [(model, *as_request(messages)) for model, messages in world.asked],
            "queries": queries, "programs": programs, "ran": out["tool_calls"], "pred": out["pred"]}


def as_lab_prompt(chats: list[Any], benchmark: str) -> list[Any]:
    """The released chats with the one difference the lab keeps on purpose: eval_hle.py's last line ends in
    `tool.'`, a stray quote the lab does not send (docs/reproduce.md, the fidelity table's second row)."""
    if benchmark == "frames":
        return chats
    fixed = []
    for chat, tools in chats:
        user = chat[1]["content"]
        assert user.endswith("Choose an appropriate tool.'")
        fixed.append(([chat[0], {"role": "user", "content": user[:-1]}], tools))
    return fixed


SLOTS = sorted(MODEL_MAPPING)
# one reply serves every reader: a query (long enough to search, or too short), a program and both answer forms
QUERY = st.sampled_from(["lantern guild founder", "Ada Brook 1834", "river", "q" * 500, "abc", ""])
REPLY = st.one_of(st.builds(
    lambda query, code, answer: f"<query>{query}</query>\n```python\n{code}\n```\n\\boxed{{{answer}}}\n"
                                f"<answer>{answer}</answer>",
    QUERY, st.sampled_from(["print(1)", "x = 1", ""]), st.sampled_from(["Ada Brook", "", "1834"])), st.just(""))
SMALL_DOCUMENT = st.builds(lambda n, body: f"d{n} {body}", st.integers(0, 99), text(1, 20, 300))
STDOUT = st.one_of(st.just(""), st.just("  \n"), OUTPUT)


@st.composite
def calls(draw: Any, frames: bool) -> tuple[str, dict[str, Any]]:
    """One call as an orchestrator writes it: mostly a slot of its own tool, else another tool's, a number,
    none (FRAMES only: eval_hle.py stops the whole evaluation with a KeyError on it), or an extra argument."""
    name = draw(st.sampled_from(["search", "enhance_reasoning", "answer", "web_search"]))
    own = st.sampled_from(ALL_TOOLS.get(name, {"model": SLOTS})["model"])
    arguments: dict[str, Any] = {"model": draw(st.one_of(own, own, st.sampled_from(SLOTS), st.just(3)))}
    if frames and draw(st.integers(0, 5)) == 0:
        del arguments["model"]
    if draw(st.booleans()):
        arguments["note"] = "why"
    return name, arguments


@st.composite
def scripts(draw: Any, frames: bool) -> Script:
    rounds = draw(st.lists(st.lists(calls(frames), max_size=3), min_size=2, max_size=6))
    pool = draw(st.lists(SMALL_DOCUMENT, min_size=1, max_size=30, unique=True))
    found = draw(st.lists(st.lists(st.sampled_from(pool), max_size=20), max_size=6))
    return Script(draw(text(1, 30, 2600)), rounds, draw(st.lists(REPLY, min_size=6, max_size=10)), found,
                  draw(st.lists(STDOUT, min_size=2, max_size=6)))


def assert_same_rollout(script: Script, benchmark: str) -> None:
    lab, released = play_lab(copy.deepcopy(script), benchmark), play_released(copy.deepcopy(script), benchmark)
    assert [chat for chat, _ in lab["chats"]] == [chat for chat, _ in as_lab_prompt(released["chats"], benchmark)]
    assert [tools for _, tools in lab["chats"]] == [tools for _, tools in released["chats"]]
    assert lab["ran"] == released["ran"]
    assert lab["asked"] == released["asked"]
    assert (lab["queries"], lab["programs"]) == (released["queries"], released["programs"])
    assert lab["pred"] == released["pred"]


@slow()
@given(scripts(frames=False))
def test_an_hle_rollout_is_the_released_loop_round_by_round(script):
    assert_same_rollout(script, "hle")


@slow()
@given(scripts(frames=True))
def test_a_frames_rollout_is_the_released_loop_round_by_round(script):
    assert_same_rollout(script, "frames")


# ---- named cases a user would notice ------------------------------------------------------------------------


def test_frames_runs_only_the_first_valid_call_of_a_round_and_never_a_program():
    script = Script("Who founded the lantern guild?",
                    [[("enhance_reasoning", {"model": "reasoner-1"}), ("search", {"model": "search-1"})],
                     [("answer", {"model": "answer-1"})]],
                    ["```python\nprint(1834)\n```", "<answer>Ada Brook</answer>"], [], ["1834\n"])
    lab = play_lab(copy.deepcopy(script), "frames")
    assert lab["ran"] == [("enhance_reasoning", "reasoner-1"), ("answer", "answer-1")]  # the search did not run
    assert lab["programs"] == []  # the coder was asked (and paid), its program never ran
    assert "python code and execution outputs:\n\n\nChoose" in lab["chats"][1][0][1]["content"]
    assert_same_rollout(script, "frames")


def test_an_extra_argument_or_a_withdrawn_search_still_runs_as_released():
    script = Script("Who founded the lantern guild?",
                    [[("search", {"model": "search-1", "query": "lantern guild"})], [("search", {"model": "search-3"})],
                     [("answer", {"model": "answer-4", "note": "sure"})]],
                    ["<query>lantern guild founder</query>", "<query>Ada Brook birthplace</query>", "\\boxed{Ada}"],
                    [["Ada Brook founded the lantern guild."], ["Ada Brook was born in Welmouth."]], [])
    lab = play_lab(copy.deepcopy(script), "frames")
    assert "search" not in [e["function"]["name"] for e in lab["chats"][1][1]]  # withdrawn from the catalog ...
    assert lab["ran"] == [("search", "search-1"), ("search", "search-3"), ("answer", "answer-4")]  # ... yet it ran
    assert lab["pred"] == "Ada"
    assert_same_rollout(script, "frames")


def test_on_frames_an_empty_reply_from_gpt5_searches_the_problem_and_one_from_qwen3_nothing():
    script = Script("Who founded the lantern guild?",
                    [[("search", {"model": "search-3"})], [("search", {"model": "search-2"})],
                     [("answer", {"model": "answer-2"})]],
                    ["", "", "<answer>Ada Brook</answer>"], [["Ada Brook founded the lantern guild."]], [])
    lab = play_lab(copy.deepcopy(script), "frames")
    assert lab["queries"] == ["Who founded the lantern guild?"]  # GPT-5-mini's, not Qwen3's
    assert "Doc 1: Ada Brook founded the lantern guild." in lab["chats"][2][0][1]["content"]
    assert_same_rollout(script, "frames")
