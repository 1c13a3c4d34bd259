"""Tests for lab.policies.hf_policy.

HFPolicy's token buffer on a Qwen3-style chat template, with a tiny random Qwen3 model (offline, CPU).

The model and its template are built in `tests.helpers.tiny_qwen3`. Where a test needs a tool turn, the sampling step
is replaced by a script of token ids; logits and logprobs stay the model's.

Also round prompts through a chat template: the catalog renders natively (`tools=`), as Qwen3's does.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

from lab.errors import LabInputError
from lab.policies import hf_policy
from lab.policies.hf_policy import ChatTemplateError, HFPolicy, render_round
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.engine import FORMAT_REMINDER
from lab.rollout.prompt import tool_response_text
from lab.rollout.rounds import round_catalog, round_messages
from lab.toolkit import load_toolkit
from tests.helpers.tiny_qwen3 import (
    LOOKUP,
    QWEN3_TEMPLATE,
    TURN_1,
    TURN_2,
    TURN_3,
    Lookup,
    Task,
    build_model_dir,
    grade,
    ids,
)
from trainer.models import CHATML_TRAINING_TEMPLATE

pytestmark = pytest.mark.usefixtures("one_thread")

#: Templates that change earlier turns in ways no buffer can follow.
BROKEN = {
    "system turn counts the messages": QWEN3_TEMPLATE.replace(
        "messages[0].content + '<|im_end|>",
        "messages[0].content + ' (' + (messages|length|string) + ' messages)<|im_end|>"),
    "earlier assistant turns truncated": QWEN3_TEMPLATE.replace(
        "{#- BROKEN-HOOK #}", "{%- if not loop.last %}{%- set content = content[:12] %}{%- endif %}"),
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return build_model_dir(tmp_path_factory.mktemp("qwen3-tiny"), QWEN3_TEMPLATE)


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    return transformers.AutoTokenizer.from_pretrained(model_dir)


class Script:
    """Stands in for the sampling step: emits the given token ids in order and records them."""

    def __init__(self, *turns: list[int]) -> None:
        self.queue = [token for turn in turns for token in turn]
        self.emitted: list[int] = []

    def __call__(self, logits, temperature, top_p, generator) -> int:
        assert self.queue, "the script ran out of tokens"
        self.emitted.append(self.queue.pop(0))
        return self.emitted[-1]


class Recording:
    """A policy wrapper that keeps the messages each turn was generated from."""

    def __init__(self, policy: HFPolicy) -> None:
        self.policy, self.name, self.seen = policy, policy.name, []

    def session(self, task, specs, seed):
        self.inner = inner = self.policy.session(task, specs, seed)
        seen = self.seen

        class Session:
            async def generate(self, messages, **_):
                seen.append([dict(m) for m in messages])
                return await inner.generate(messages)

            def token_trajectory(self):
                return inner.token_trajectory()

        return Session()


def test_rollout_buffer_is_the_conversation_as_the_model_saw_it(model_dir, tokenizer, monkeypatch):
    eot = tokenizer.convert_tokens_to_ids("<|im_end|>")
    turn_1, turn_3 = ids(tokenizer, TURN_1) + [eot], ids(tokenizer, TURN_3) + [eot]
    max_new = max(len(turn_1), len(turn_3))
    turn_2 = ids(tokenizer, TURN_2)[:max_new]  # exactly the budget, no <|im_end|>: generation is cut
    script = Script(turn_1, turn_2, turn_3)
    monkeypatch.setattr(hf_policy, "_choose", script)
    # sampling options on: the logprobs must still be the raw-logit ones, not the tempered / top-p ones
    policy = Recording(HFPolicy(str(model_dir), max_new_tokens=max_new, temperature=0.7, top_p=0.9))
    result = asyncio.run(run_rollout(policy, {"lookup": Lookup()}, RolloutRequest(run_id="hf", task=Task()), grade,
                                     RolloutConfig(max_turns=4)))
    traj, tokens, session = result.trajectory, result.tokens, policy.inner

    assert (traj.outcome, traj.n_turns, traj.error, traj.format_ok) == (1.0, 3, None, False)  # turn 2 had no call
    assert session.eot_id == eot != tokenizer.eos_token_id  # Qwen3: turns end on <|im_end|>, not on eos
    # the buffer decodes to ChatML as the model saw it: its own think blocks kept, the cut turn closed
    first, second, third = policy.seen
    expected = (
        f"<|im_start|>system\n{first[0]['content']}<|im_end|>\n<|im_start|>user\n{Task.question}<|im_end|>\n"
        f"<|im_start|>assistant\n{TURN_1}<|im_end|>\n"
        f"<|im_start|>user\n<tool_response>\n{tool_response_text('lookup', 'RESULT-42', 10**6)}\n"
        f"</tool_response><|im_end|>\n"
        f"<|im_start|>assistant\n{tokenizer.decode(turn_2)}<|im_end|>\n"
        f"<|im_start|>user\n{third[-1]['content']}<|im_end|>\n"
        f"<|im_start|>assistant\n{TURN_3}<|im_end|>"
    )
    assert third[-1]["content"] == FORMAT_REMINDER.format(error="the turn holds neither a <tool_call> nor an <answer>")
    assert tokenizer.decode(tokens.prompt_ids + tokens.completion_ids) == expected
    assert tokenizer.decode(tokens.prompt_ids) == tokenizer.apply_chat_template(first, tokenize=False,
                                                                                add_generation_prompt=True)
    # ...which a re-render cannot give: the template re-spaced turn 1's think at turn 2, dropped it at turn 3
    assert "<think>\nI need the value.\n</think>\n\n<tool_call>" in tokenizer.apply_chat_template(second,
                                                                                                  tokenize=False)
    final = tokenizer.apply_chat_template([*third, {"role": "assistant", "content": TURN_3}], tokenize=False)
    assert "I need the value." not in final and "<|im_start|>assistant\n<tool_call>" in final

    # mask 1 exactly on the sampled ids, in order; logprobs only there
    completion, mask = tokens.completion_ids, tokens.mask
    assert len(completion) == len(mask) == len(tokens.logprobs)
    assert [t for t, m in zip(completion, mask) if m] == script.emitted == turn_1 + turn_2 + turn_3
    assert all(lp == 0.0 for lp, m in zip(tokens.logprobs, mask) if not m)
    # one <|im_end|> per assistant turn, as its last token: sampled, or appended (mask 0) to the cut turn
    runs, start = [], None
    for i, m in enumerate([*mask, 0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    assert len(runs) == 3
    for a, b in runs:
        closed = b if completion[b - 1] != eot else b - 1
        assert completion[a:closed].count(eot) == 0 and completion[closed] == eot
    assert mask[runs[1][1]] == 0 and completion[runs[1][1]] == eot  # turn 2 was cut and closed by the session

    # logprobs are the model's own: log-softmax of a fresh forward pass over the buffer
    sequence = torch.tensor([tokens.prompt_ids + completion])
    with torch.no_grad():
        logp = torch.log_softmax(session.model(sequence).logits[0].float(), dim=-1)  # (T, vocab)
    offset = len(tokens.prompt_ids)
    for i, m in enumerate(mask):
        if m:
            assert tokens.logprobs[i] == pytest.approx(float(logp[offset + i - 1, completion[i]]), abs=1e-4)


@pytest.mark.parametrize("broken", list(BROKEN))
def test_template_that_rewrites_earlier_turns_fails_loudly_and_leaves_the_buffer(broken, tmp_path, monkeypatch):
    model_dir = build_model_dir(tmp_path / "broken", BROKEN[broken])
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    turn_1 = ids(tokenizer, TURN_1) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    monkeypatch.setattr(hf_policy, "_choose", Script(turn_1))
    session = HFPolicy(str(model_dir), max_new_tokens=len(turn_1)).session(Task(), [LOOKUP], seed=0)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": Task.question}]
    first = asyncio.run(session.generate(messages))
    before = session.token_trajectory().model_copy(deep=True)
    messages += [{"role": "assistant", "content": first.text},
                 {"role": "tool", "content": tool_response_text("lookup", "RESULT-42", 1000)}]
    problem = "text before assistant turn 1" if "counts" in broken else "rewrites assistant turn 1 beyond <think>"
    with pytest.raises(ChatTemplateError, match=f"turn 2: .*{problem}.*refusing to build a corrupt token buffer"):
        asyncio.run(session.generate(messages))
    assert session.token_trajectory() == before


def test_broken_template_ends_the_rollout_with_the_error(tmp_path, monkeypatch):
    model_dir = build_model_dir(tmp_path / "broken", BROKEN["system turn counts the messages"])
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    monkeypatch.setattr(hf_policy, "_choose",
                        Script(ids(tokenizer, TURN_1) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]))
    result = asyncio.run(run_rollout(HFPolicy(str(model_dir)), {"lookup": Lookup()},
                                     RolloutRequest(run_id="hf", task=Task()), grade))
    assert result.trajectory.error.startswith("policy failed: ChatTemplateError: hf: ")
    assert "turn 2: the template re-renders the text before assistant turn 1 differently" in result.trajectory.error
    assert sum(result.tokens.mask) == len(ids(tokenizer, TURN_1)) + 1  # turn 1 kept, nothing of turn 2


def sample(model_dir: Path, seed: int, **options: Any) -> tuple[list[int], list[float]]:
    session = HFPolicy(str(model_dir), max_new_tokens=10, **options).session(Task(), [], seed=seed)
    asyncio.run(session.generate([{"role": "user", "content": Task.question}]))
    tokens = session.token_trajectory()
    return tokens.completion_ids, tokens.logprobs


def test_greedy_ignores_the_seed_and_sampling_is_seeded_per_rollout(model_dir):
    assert sample(model_dir, 0) == sample(model_dir, 1)  # temperature 0 = greedy
    hot_0, hot_1 = sample(model_dir, 0, temperature=1.0), sample(model_dir, 1, temperature=1.0)
    assert hot_0 != hot_1 and hot_0 != sample(model_dir, 0)
    assert sample(model_dir, 0, temperature=1.0) == hot_0  # a rerun draws the same tokens
    assert sample(model_dir, 3, temperature=1.0, top_p=1e-6)[0] == sample(model_dir, 0)[0]  # nucleus of one = greedy
    assert hf_policy._turn_seed(0, 1) != hf_policy._turn_seed(0, 2) != hf_policy._turn_seed(1, 2)


def test_options_have_the_cli_names_and_are_checked():
    params = inspect.signature(HFPolicy).parameters
    assert {n: p.default for n, p in params.items()} == {
        "path": inspect.Parameter.empty, "max_new_tokens": 512, "temperature": 0.0, "top_p": 1.0, "device": None,
        "latency_per_token_s": None}
    policy = HFPolicy.from_spec("hf:/m", temperature=0.7, top_p=0.9, max_new_tokens=64)
    assert (policy.path, policy.temperature, policy.top_p, policy.max_new_tokens) == ("/m", 0.7, 0.9, 64)
    for options, flag in [({"temperature": -1}, "--temperature"), ({"top_p": 0}, "--top-p"),
                          ({"top_p": 1.5}, "--top-p"), ({"max_new_tokens": 0}, "--max-new-tokens"),
                          ({"latency_per_token_s": 0}, "--latency-per-token")]:
        with pytest.raises(LabInputError, match=flag):
            HFPolicy("/m", **options)


def test_a_modelled_latency_depends_on_the_tokens_not_on_the_machine(model_dir):
    """In a reward, wall time is noise (load, batch neighbours); the modelled latency is tokens x rate."""
    session = HFPolicy(str(model_dir), max_new_tokens=10, latency_per_token_s=0.05).session(Task(), [], seed=0)
    output = asyncio.run(session.generate([{"role": "user", "content": Task.question}]))
    assert output.latency_s == pytest.approx(0.05 * output.output_tokens) and output.output_tokens > 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-8.0, 8.0), min_size=2, max_size=12), st.floats(0.2, 2.0), st.floats(0.05, 1.0),
       st.integers(0, 2**31))
def test_a_draw_never_takes_a_token_outside_the_nucleus(logits, temperature, top_p, seed):
    """Tokens of probability 0 (cut by top-p) are never drawn, whatever the seed, temperature and logits."""
    logits = torch.tensor(logits)
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    ranked = torch.sort(probs, descending=True)
    allowed = set(ranked.indices[(ranked.values.cumsum(0) - ranked.values) < top_p].tolist())
    generator = torch.Generator().manual_seed(seed)
    assert {hf_policy._choose(logits, temperature, top_p, generator) for _ in range(20)} <= allowed


def test_draws_follow_the_tempered_distribution():
    """20,000 draws land on each token in proportion to softmax(logits / T), within sampling noise."""
    logits = torch.tensor([2.0, 0.0, -1.0, 1.0, -30.0])
    expected = torch.softmax(logits / 0.7, dim=-1)
    generator = torch.Generator().manual_seed(0)
    draws = torch.tensor([hf_policy._choose(logits, 0.7, 1.0, generator) for _ in range(20_000)])
    shares = torch.bincount(draws, minlength=5).double() / 20_000
    assert torch.allclose(shares, expected.double(), atol=0.015)  # 4+ standard errors at n = 20,000
    assert shares[4] == 0.0  # p ~ 1e-19


# Round prompts through a chat template: the catalog renders natively (`tools=`), as Qwen3's template does.

PLAIN_CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
                "'<|im_end|>\\n' }}{% endfor %}"
                "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def word_tokenizer(template: str) -> PreTrainedTokenizerFast:
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")),
                                  eos_token="<|im_end|>")
    tok.chat_template = template
    return tok


def test_the_qwen3_style_template_renders_the_catalog_in_the_system_turn():
    catalog = round_catalog(list(load_toolkit("paper-small").tools))
    text = render_round(word_tokenizer(CHATML_TRAINING_TEMPLATE), round_messages("What is 2+2?", ""), catalog)
    lines = [json.dumps(entry, ensure_ascii=False) for entry in catalog]
    assert text.startswith("<|im_start|>system\nYou are good at using tools.\n\n# Tools\n\n")
    assert "<tools>\n" + "\n".join(lines) + "\n</tools>" in text
    assert text.count("<|im_start|>system") == 1
    assert text.endswith("Problem: What is 2+2?\n\n\n\nChoose an appropriate tool.<|im_end|>\n<|im_start|>assistant\n")


def test_a_template_that_ignores_tools_gets_the_same_block_in_its_system_message():
    catalog = round_catalog(list(load_toolkit("paper-small").tools))
    messages = round_messages("What is 2+2?", "")
    native = render_round(word_tokenizer(CHATML_TRAINING_TEMPLATE), messages, catalog)
    injected = render_round(word_tokenizer(PLAIN_CHATML), messages, catalog)
    assert injected == native
