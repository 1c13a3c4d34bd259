"""Tests for lab.rollout.rounds.

The round protocol: what the orchestrator is shown each round, what runs, and what ends a task.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.rollout import PolicyOutput, RolloutConfig, RolloutRequest, TokenTrajectory, run_rollout
from lab.rollout.parse import format_tool_call
from lab.rollout.rounds import ROUND_SYSTEM, load_catalog, render_context, round_catalog, round_messages
from lab.store import Store, queries
from lab.tools.base import Observation, ToolContext, estimate_tokens
from lab.tools.experts import Gathered, cut_front
from lab.tools.paper import paper_parameters
from lab.toolspec import ToolSpec
from tests.conftest import SHARED
from tests.helpers.released_rounds import orchestrator_context_str


@dataclass
class Task:
    task_id: str = "t1"
    question: str = "Who founded the lantern guild?"


class Slot:
    """A slot tool: `search` returns documents, `enhance_reasoning` a program, `answer` ends the task."""

    def __init__(self, name: str) -> None:
        self.spec = ToolSpec(name=name, description=f"{name} tool", category="basic",
                             parameters=paper_parameters(["m-1", "m-2"]))
        self.seen: list[str | None] = []

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        self.seen.append(context.round.shown if context and context.round else None)
        meta: dict[str, Any] = {"counted_as": arguments["model"]}
        if self.spec.name == "search":
            meta["documents"] = ["Ada Brook founded the lantern guild in 1834."]
        elif self.spec.name == "enhance_reasoning":
            meta |= {"program": "print(1834 - 1800)", "program_output": "34"}
        else:
            meta["final_answer"] = "Ada Brook"
        return Observation(text=f"{self.spec.name} ran", cost_usd=0.01, latency_s=2.0, meta=meta)


class Rounds:
    """A policy that plays fixed round texts and records each round's messages and catalog."""

    name = "test:rounds"

    def __init__(self, *texts: str) -> None:
        self.texts, self.seen, self.catalogs = list(texts), [], []

    def session(self, task, specs, seed):
        policy = self

        class Session:
            async def generate(self, messages, tools=None, observations=None):
                policy.seen.append([dict(m) for m in messages])
                policy.catalogs.append(tools)
                return PolicyOutput(text=policy.texts.pop(0) if policy.texts else "I think the answer is 42.")

            def token_trajectory(self):
                return None

        return Session()


async def right(task, answer, context) -> float:
    return float(answer == "Ada Brook")


def play(policy, config: RolloutConfig | None = None, instruction: str | None = None):
    tools = {name: Slot(name) for name in ("search", "enhance_reasoning", "answer")}
    request = RolloutRequest(run_id="r", task=Task(), preference={"outcome": 1.0}, preference_instruction=instruction)
    config = config or RolloutConfig(protocol="rounds", max_turns=6)
    return asyncio.run(run_rollout(policy, tools, request, right, config)), tools


def call(name: str, model: str = "m-1") -> str:
    return format_tool_call(name, {"model": model})


def test_each_round_is_a_fresh_two_message_prompt_with_the_environment_context():
    policy = Rounds(call("search"), call("enhance_reasoning"), call("answer", "m-2"))
    result, tools = play(policy)
    # what eval_hle.py's `run_single` shows after nothing, after the search, after the search and the program
    gathered = [([], []), (["Ada Brook founded the lantern guild in 1834."], []),
                (["Ada Brook founded the lantern guild in 1834."], [{"code": "print(1834 - 1800)", "output": "34"}])]
    question = Task().question
    assert policy.seen == [
        [{"role": "system", "content": ROUND_SYSTEM},
         {"role": "user", "content": f"Problem: {question}\n\n{orchestrator_context_str(question, docs, code, False)}"
                                     "\n\nChoose an appropriate tool."}]  # (eval_hle.py's stray `'` left out)
        for docs, code in gathered]
    third = policy.seen[2]
    assert "python code and execution outputs:\n```python\nprint(1834 - 1800)\n```" in third[1]["content"]
    # the model reads that context
    assert tools["answer"].seen[0] == third[1]["content"].split("\n\n", 1)[1].rsplit("\n\nChoose", 1)[0]
    assert [s.prompt for s in result.steps if s.kind == "tool"] == [m[1]["content"] for m in policy.seen]
    assert json.loads(result.trajectory.tool_counts_json) == {"m-1": 2, "m-2": 1}
    assert result.trajectory.final_answer == "Ada Brook" and result.trajectory.outcome == 1.0


def test_the_catalog_travels_natively_and_the_instruction_precedes_the_last_line():
    policy = Rounds(call("answer"))
    play(policy, instruction="Keep the bill low.")
    assert [entry["function"]["name"] for entry in policy.catalogs[0]] == ["search", "enhance_reasoning", "answer"]
    assert policy.seen[0][1]["content"].endswith("\n\nKeep the bill low.\n\nChoose an appropriate tool.")
    assert "search" not in policy.seen[0][0]["content"]  # the catalog is not in the prompt text


def test_only_answer_ends_a_task_and_skipped_rounds_count():
    policy = Rounds("<answer>Ada Brook</answer>", "no call at all", call("nonexistent"), call("answer"))
    result, _ = play(policy)
    kinds = [s.kind for s in result.steps]
    assert kinds == ["format_error", "format_error", "format_error", "tool", "answer"]
    assert result.trajectory.n_turns == 4 and not result.trajectory.format_ok
    assert result.trajectory.final_answer == "Ada Brook"


class TokenRounds(Rounds):
    """`Rounds` whose outputs carry token ids, as an `hf:` policy's do: round r reads [r] and samples [10 + r]."""

    def session(self, task, specs, seed):
        inner, policy = super().session(task, specs, seed), self

        class Session:
            async def generate(self, messages, tools=None, observations=None):
                output = await inner.generate(messages, tools, observations)
                r = len(policy.seen) - 1
                output.tokens = TokenTrajectory(prompt_ids=[r], completion_ids=[10 + r], mask=[1], logprobs=[-0.5 - r])
                return output

            def token_trajectory(self):
                return None

        return Session()


def test_each_round_stores_its_tokens_with_its_index_and_whether_it_ran_a_call(tmp_path):
    result, _ = play(TokenRounds("no call at all", call("search"), call("answer")))
    store = Store(tmp_path / "s.duckdb")
    store.write_trajectories([result.store_item()])
    stored = queries.token_trajectories_df(store, "r")
    assert stored.round_idx.tolist() == [0, 1, 2] == sorted({s.turn for s in result.steps})  # steps.turn
    assert [list(c) for c in stored.completion_ids] == [[10], [11], [12]]
    assert [list(lp) for lp in stored.logprobs] == [[-0.5], [-1.5], [-2.5]]
    assert stored.valid.tolist() == [False, True, True]  # the first round trained as a format error


def test_a_round_limit_without_answer_stores_no_answer():
    policy = Rounds(*[call("search")] * 3)
    result, _ = play(policy, RolloutConfig(protocol="rounds", max_turns=3))
    assert result.trajectory.status == "no_answer" and result.trajectory.n_turns == 3
    assert "round limit 3" in result.trajectory.error


def test_the_first_valid_call_of_a_round_runs_alone():
    policy = Rounds(call("nonexistent") + call("search") + call("answer"), call("answer"))
    result, tools = play(policy)
    assert [s.tool_name for s in result.steps if s.kind == "tool"] == ["search", "answer"]
    assert result.trajectory.format_ok  # the invalid call before a valid one does not skip the round


def test_search_is_withdrawn_once_a_document_exists_where_the_benchmark_says():
    policy = Rounds(call("search"), call("search"), call("answer"))
    config = RolloutConfig(protocol="rounds", max_turns=5, withdraw_search_after_documents=True)
    result, _ = play(policy, config)
    assert [e["function"]["name"] for e in policy.catalogs[1]] == ["enhance_reasoning", "answer"]
    # the released loop checks a call against every tool it knows: a withdrawn `search` written anyway runs
    assert [s.kind for s in result.steps] == ["tool", "tool", "tool", "answer"]
    policy = Rounds(call("search"), call("search"), call("answer"))
    result, _ = play(policy, config.model_copy(update={"expert_protocol": "lab"}))
    assert [s.kind for s in result.steps] == ["tool", "format_error", "tool", "answer"]  # the lab's check refuses it


def test_the_released_check_reads_only_the_model_and_the_labs_refuses_an_extra_argument():
    extra = format_tool_call("answer", {"model": "m-2", "confidence": "high"})
    result, tools = play(Rounds(extra))
    assert [s.kind for s in result.steps] == ["tool", "answer"] and result.trajectory.format_ok
    assert json.loads(result.steps[0].arguments_json) == {"model": "m-2", "confidence": "high"}  # logged as written
    result, _ = play(Rounds(extra, format_tool_call("answer", {"model": "m-3"})),
                     RolloutConfig(protocol="rounds", max_turns=2, expert_protocol="lab"))
    assert [s.kind for s in result.steps] == ["format_error", "format_error"]
    assert "unknown argument 'confidence'" in result.steps[0].error
    assert "m-3" in result.steps[1].error  # not a slot of the tool, under either check


def test_the_lab_protocol_keeps_its_own_layout():
    policy = Rounds(call("search"), call("enhance_reasoning"), call("answer", "m-2"))
    result, tools = play(policy, RolloutConfig(protocol="rounds", max_turns=6, expert_protocol="lab"))
    first, second, third = policy.seen
    assert first[1]["content"] == "Problem: Who founded the lantern guild?\n\n\n\nChoose an appropriate tool."
    assert second[1]["content"] == ("Problem: Who founded the lantern guild?\n\nDocuments:\n"
                                    "Doc 1: Ada Brook founded the lantern guild in 1834. ...\n\n"
                                    "Choose an appropriate tool.")
    assert ("python code and execution outputs:\n```python\nprint(1834 - 1800)\n```\n\n```output\n34\n```"
            in third[1]["content"])
    assert tools["answer"].seen[0] == third[1]["content"].split("\n\n", 1)[1].rsplit("\n\nChoose", 1)[0]


@given(st.text(min_size=0, max_size=400), st.integers(min_value=1, max_value=120))
def test_cut_front_keeps_the_longest_tail_within_the_budget(text, budget):
    cut = cut_front(text, budget, estimate_tokens)
    assert text.endswith(cut) and estimate_tokens(cut) <= budget
    if len(cut) < len(text) and budget > 0:
        assert estimate_tokens(text[len(text) - len(cut) - 1:]) > budget  # one character more would not fit


def test_the_context_is_cut_from_the_front_by_the_orchestrators_tokenizer():
    context = Gathered(documents=[f"document {i} " + "x" * 300 for i in range(6)])
    text = render_context(context, 1200)
    words = lambda s: len(s.split())  # noqa: E731 (a stand-in tokenizer: one token per word)
    cut = cut_front(text, 20, words)
    assert words(cut) <= 20 and cut.endswith(text[-50:]) and "document 0" not in cut
    assert round_messages("P?", cut)[1]["content"].startswith("Problem: P?\n\n")


def test_the_released_catalog_loads_against_the_paper_toolkit():
    from lab.toolkit import load_toolkit

    specs = list(load_toolkit("paper").tools)
    catalog = load_catalog(str(SHARED / "toolorchestra" / "tools.json"), specs)
    assert sorted(e["function"]["name"] for e in catalog) == ["answer", "enhance_reasoning", "search"]
    assert "answer-math-1" in json.dumps(catalog)
    with pytest.raises(LabInputError, match="offers slot 'reasoner-2', which the toolkit does not have"):
        load_catalog(str(SHARED / "toolorchestra" / "tools.json"), list(load_toolkit("paper-small").tools))


def test_the_lab_catalog_lists_slots_with_prices_in_the_released_layout():
    from lab.toolkit import load_toolkit

    (answer,) = [e for e in round_catalog(list(load_toolkit("paper-small").tools)) if e["function"]["name"] == "answer"]
    described = answer["function"]["parameters"]["properties"]["model"]["description"]
    assert "Choices: ['answer-1', 'answer-2', 'answer-3']" in described
    assert "Model | price per million input tokens | price per million output tokens | average latency" in described
    assert "answer-1 | $1.25 | $10 |" in described
