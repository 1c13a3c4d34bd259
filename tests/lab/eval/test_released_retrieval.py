"""FRAMES under the round protocol as released: `search` retrieves 150 documents (or `--retrieval-top-k`),
the run records the depth it used, and the orchestrator reads each document cut at 4,000 characters with
the best ones last (the context is cut from the front)."""

from __future__ import annotations

import csv
import json

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

QUESTION = FACTS["fact-lighthouse"][2]


class SearchThenAnswer:
    """An orchestrator that calls `search` and then `answer`, and keeps the prompts and tools it was shown."""

    name = "test:search-then-answer"

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.offered: list[list[str]] = []

    def session(self, task, specs, seed):
        policy, turns = self, [format_tool_call("search", {"model": "search-1"}), format_tool_call("answer", {"model": "answer-1"})]

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
        model = {"name": "gpt-5", "model": "gpt-5", "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}
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
    assert retriever["top_k"] == 150 and config["retrieval_top_k"] is None  # the released default, recorded with the run
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
