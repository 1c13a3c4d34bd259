"""`trainer.probe`: the probability of a call read from log-probabilities, on the prompt a rollout really shows."""

from __future__ import annotations

import asyncio

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lab.policies.hf_policy import HFPolicy
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.models import resolve_model
from trainer.probe import CallProbe, call_text, first_round_prompt, parse_call


@pytest.fixture(scope="module")
def tiny():
    config = OrchestraGRPOConfig.from_yaml("configs/train/check.yaml")
    source = resolve_model(config.model, config.tiny_model, config.seed)
    return config, AutoTokenizer.from_pretrained(source), AutoModelForCausalLM.from_pretrained(source)


def test_a_call_parses_to_its_tool_and_slot_and_renders_as_a_policy_writes_it():
    assert parse_call("answer:answer-3") == ("answer", {"model": "answer-3"})
    assert parse_call("code_interpreter") == ("code_interpreter", {})
    expected = '<tool_call>{"name": "answer", "arguments": {"model": "answer-3"}}</tool_call>'
    assert call_text("answer:answer-3") == expected


def test_each_probability_is_the_exponent_of_the_calls_summed_token_log_probabilities(tiny):
    _, tokenizer, model = tiny
    window = model.config.sliding_window
    # one prompt past the sliding window: its cached keys must be masked to the window as a full forward masks them
    prompts = [tokenizer("Problem: one", add_special_tokens=False).input_ids,
               tokenizer("Problem: a longer second question " * 80, add_special_tokens=False).input_ids]
    assert window and len(prompts[1]) > window
    # candidates of different lengths: the shorter one's padding must not change a value
    probe = CallProbe.build(tokenizer, prompts, ["answer:answer-1", "search:search-2", "code_interpreter"],
                            "answer:answer-1")
    assert len({len(ids) for ids in probe.calls.values()}) > 1
    expected = {}
    with torch.no_grad():
        for name, completion in probe.calls.items():
            values = []
            for prompt in prompts:
                logits = model(input_ids=torch.tensor([prompt + completion])).logits[0].float()
                logprobs = torch.log_softmax(logits, dim=-1)
                values.append(sum(float(logprobs[len(prompt) - 1 + i, token]) for i, token in enumerate(completion)))
            expected[name] = float(torch.tensor(values).exp().mean())
    got = probe.probabilities(model)
    assert got == pytest.approx(expected, rel=1e-4, abs=1e-12)
    assert probe.best_probability(model) == got["answer:answer-1"] and sum(got.values()) <= 1


def test_the_probe_prompt_is_the_first_round_prompt_a_rollout_shows_the_policy(tiny):
    config, tokenizer, model = tiny
    environment = TrainingEnvironment(config)
    example = environment.examples(1)[0]
    tools = environment.tools_for(example)
    task = environment.task(example.task_id)
    policy = HFPolicy.live(model, tokenizer, name="hf:probe", max_new_tokens=8, temperature=1.0)
    request = RolloutRequest(run_id="probe", task=task, preference=dict(example.preference),
                             preference_instruction=example.instruction, seed=0)
    result = asyncio.run(run_rollout(policy, tools, request, environment.source.grader,
                                     RolloutConfig(max_turns=1, protocol="rounds",
                                                   context_tokens=config.context_tokens)))
    shown = result.rounds[0].tokens.prompt_ids
    assert shown == first_round_prompt(tokenizer, task.question, example.instruction,
                                       [tool.spec for tool in tools.values()])
