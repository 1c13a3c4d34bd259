"""Tests for lab.preference: preference vectors, the instruction pairs, and the instruction each eval task is shown.

Each eval task is shown a preference instruction (paper §3.2, Table 3), chosen by rules a report can replay.

Pairing rules on their own (`lab.preference.task_preferences`), then a real `run_eval` whose orchestrator
is an `openai:` policy over the fake server, so the system prompts it sent can be read back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.eval.sources import load_source
from lab.preference import (
    HELD_OUT,
    OBJECTIVES,
    Preference,
    describe,
    instruction_for,
    logged_instruction,
    preference_pairs,
    task_preferences,
)
from lab.store import Store, queries
from lab.testing import OpenAICompatServer

TOOLS = ["local_search", "code_interpreter", "sim:gpt-5", "sim:qwen3-32b", "sim:llama-3.3-70b"]
TASK_IDS = [f"world-{i:04d}" for i in range(60)]
TRAIN = {p.instruction for p in preference_pairs("train")}


def cli_string(weights: dict[str, float]) -> str:
    return ",".join(f"{k}={v}" for k, v in weights.items())


def test_an_eval_p_gets_one_of_its_eval_instructions_never_a_train_one():
    evals = preference_pairs("eval", TOOLS)
    for weights in {json.dumps(p.weights, sort_keys=True) for p in evals}:
        weights = json.loads(weights)
        wordings = {p.instruction for p in evals if p.weights == weights}
        assert len(wordings) >= 2  # paraphrases, so one P is not measured on one phrasing
        shown = {instruction_for(t, cli_string(weights), TOOLS) for t in TASK_IDS}
        assert shown <= wordings and len(shown) >= 2 and not shown & TRAIN
    # outcome=1 is also a train P: its train wording is never shown at eval
    assert Preference.parse("outcome=1", TOOLS).weights == preference_pairs("train")[0].bind(TOOLS).weights
    assert instruction_for("world-0001", "outcome=1",
                           TOOLS) in {p.instruction for p in evals if p.weights == {"outcome": 1.0}}


def test_the_choice_is_stable_by_task_id_and_matches_p_after_binding():
    first = [instruction_for(t, "outcome=1,compute=0.8", TOOLS) for t in TASK_IDS]
    assert first == [instruction_for(t, "compute=0.80,outcome=1.0", TOOLS) for t in TASK_IDS]  # same P, other spelling
    # the same in a fresh interpreter (no per-process hash salt)
    code = ("from lab.preference import instruction_for; import json, sys; "
            f"print(json.dumps([instruction_for(t, 'outcome=1,compute=0.8', {TOOLS!r}) for t in {TASK_IDS!r}]))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(other.stdout) == first
    # a P naming models binds to their simulated stand-ins, and still matches its eval pair
    private = "outcome=1,local_search=1,llama-3.3-70b=0.6,qwen3-32b=0.6"
    assert task_preferences(private, TOOLS).source == "eval"


def test_an_unknown_p_gets_the_template_naming_each_nonzero_weight():
    prefs = task_preferences("outcome=0.7,latency=0.3,local_search=0.5", TOOLS)
    assert prefs.source == "template" and len(prefs.choices) == 1
    text = prefs.for_task("world-0001").instruction
    assert text == describe(Preference.parse("outcome=0.7,latency=0.3,local_search=0.5", TOOLS))
    assert text.startswith("Getting the answer right matters; calling local_search matters; "
                           "answering quickly matters a little.")
    assert "outcome=0.7" in text and "local_search=0.5" in text and "latency=0.3" in text
    assert "cost" not in text and "compute" not in text  # zero weights are not mentioned
    assert {instruction_for(t, "outcome=0.7,latency=0.3,local_search=0.5", TOOLS) for t in TASK_IDS} == {text}
    assert not {text} & TRAIN


def test_preference_instruction_overrides_the_text_for_every_task_and_keeps_p():
    given = "Use whatever you like."
    for spec in ("outcome=1,compute=0.8", "outcome=0.3", None, HELD_OUT):
        prefs = task_preferences(spec, TOOLS, given)
        assert prefs.source == "given"
        assert {prefs.for_task(t).instruction for t in TASK_IDS} == {given}
    held_out = task_preferences(HELD_OUT, TOOLS, given)
    assert len({held_out.for_task(t).weights for t in TASK_IDS}) >= 3  # P still varies per task
    assert task_preferences(None, TOOLS).for_task("world-0001").instruction is None  # no flags: no instruction


def test_held_out_gives_each_task_a_whole_eval_pair_of_this_toolkit():
    prefs = task_preferences(HELD_OUT, TOOLS)
    pairs = {(p.instruction, p.bind(TOOLS).weights) for p in preference_pairs("eval")}
    got = [prefs.for_task(t) for t in TASK_IDS]
    assert all((p.instruction, p.weights) in pairs for p in got)
    assert len({p.weights for p in got}) >= 4  # one run measures several held-out P
    assert got == [task_preferences(HELD_OUT, TOOLS).for_task(t) for t in TASK_IDS]
    # a toolkit without the private pair's tools only offers the other pairs
    small = task_preferences(HELD_OUT, ["code_interpreter"])
    assert small.choices and all(set(c.as_dict()) == {"code_interpreter", "outcome", "compute",
                                                      "latency"} for c in small.choices)
    assert not any("local search" in c.instruction.lower() for c in small.choices)


@pytest.mark.usefixtures("world")
def test_run_eval_puts_each_tasks_instruction_in_the_system_prompt_and_logs_it(tmp_path: Path):
    questions = {t.task_id: t.question for t in load_source(EvalConfig(benchmark="world", split="test", limit=8)).tasks}
    assert len(set(questions.values())) == 8

    def run(db: Path, preference: str):
        with OpenAICompatServer(reply="<answer>unknown</answer>") as server:
            config = EvalConfig(benchmark="world", split="test", orchestrator=f"openai:m@{server.base_url}", limit=8,
                                preferences=[preference], concurrency=4)
            (summary,) = run_eval(config, Store(db))
            bodies = list(server.bodies)  # one request per rollout: the server answers at once
        assert summary.trajectories == 8 and summary.failed == 0 and len(bodies) == 8
        store = Store(db)
        return queries.run(store, summary.run_id), queries.trajectories_df(store, [summary.run_id]), bodies

    for preference in ("outcome=1,compute=0.8", HELD_OUT, "outcome=0.5,compute=0.5"):
        run_record, trajs, bodies = run(tmp_path / "first.duckdb", preference)
        variant = json.loads(run_record.config_json)["variant"]
        assert variant["preference"] == preference and variant["instruction"]["choices"]
        tools = [t["name"] for t in json.loads(run_record.toolkit_json)["tools"]]
        system_of = {body["messages"][1]["content"]: body["messages"][0]["content"] for body in bodies}
        for row in trajs.itertuples():
            expected = instruction_for(row.task_id, preference, tools)
            assert expected and logged_instruction(run_record.config_json, row.task_id) == expected
            assert system_of[questions[row.task_id]].endswith(f"\nUser preference: {expected}\n")
            assert json.loads(row.preference_json) == task_preferences(preference,
                                                                       tools).for_task(row.task_id).as_dict()
        if preference == HELD_OUT:
            assert trajs.preference_json.nunique() >= 2  # one run, several held-out P
            # a second, independent run pairs every task the same way
            again_record, again, _ = run(tmp_path / "again.duckdb", preference)
            assert dict(zip(again.task_id, again.preference_json)) == dict(zip(trajs.task_id, trajs.preference_json))
            assert json.loads(again_record.config_json)["variant"] == variant


# Preference vectors on their own, over a three-tool toolkit (3 tools + 3 objectives = 6 weights).
THREE_TOOLS = ["local_search", "gpt-5", "qwen3-32b"]


def test_preference_from_dict_string_and_vector_agree():
    a = Preference.from_dict({"outcome": 1, "compute": 1, "gpt-5": 0}, THREE_TOOLS)
    b = Preference.parse("outcome=1, compute=1, gpt-5=0", THREE_TOOLS)
    c = Preference.from_vector([0, 0, 0, 1, 1, 0], THREE_TOOLS)
    assert a.weights == b.weights == c.weights
    assert a.names == [*THREE_TOOLS, *OBJECTIVES]
    assert np.array_equal(a.vector, np.array([0, 0, 0, 1, 1, 0], dtype=float))


@pytest.mark.parametrize(
    "text, message",
    [
        ("outcome=1.5", "'outcome' must be in [0, 1], got 1.5"),
        ("outcome=-0.1", "must be in [0, 1]"),
        ("speed=1", "unknown entry 'speed'"),
        ("outcome", "'outcome' is not NAME=VALUE"),
        ("outcome=high", "non-numeric value 'high'"),
    ],
)
def test_bad_preference_strings(text: str, message: str):
    with pytest.raises(LabInputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Preference.parse(text, THREE_TOOLS)


def test_wrong_length_vector_names_the_expected_entries():
    with pytest.raises(LabInputError, match="has 4 entries; toolkit needs 6"):
        Preference.from_vector([1, 0, 0, 1], THREE_TOOLS)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=6, max_size=6))
def test_cli_string_round_trips(weights):
    pref = Preference.from_vector(weights, THREE_TOOLS)
    text = ",".join(f"{k}={v!r}" for k, v in pref.as_dict().items())
    assert Preference.parse(text, THREE_TOOLS).weights == pref.weights


def test_preference_pairs_split_train_and_eval_without_shared_instructions():
    train, evals = preference_pairs("train"), preference_pairs("eval")
    assert train and evals
    assert not {p.instruction for p in train} & {p.instruction for p in evals}
    usable = preference_pairs("train", tools=THREE_TOOLS)
    assert usable and all(p.applies_to(THREE_TOOLS) for p in usable)
    bound = usable[0].bind(THREE_TOOLS)
    assert bound.instruction == usable[0].instruction and len(bound.weights) == len(THREE_TOOLS) + 3
