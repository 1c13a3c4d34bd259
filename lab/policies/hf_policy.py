"""`hf:<path>`: a local transformers causal LM orchestrating with its own chat template (CPU or GPU).

Training needs the exact tokens the model sampled and the exact context it sampled them in, so a
session keeps a token buffer and never re-tokenises the model's own text (that silently changes ids,
and GRPO's importance ratios need the sampled ones):

    prompt_ids     = tok(render(system, user, generation prompt))                       mask
    completion_ids = sampled_1 (ends on <eot>, or + <eot> when cut by max_new_tokens)   1...1 (0)
                   + tok(fragment_1: the turn's tail, new tool/user turns, next prompt) 0...0
                   + sampled_2 ...                                                      1...1

`<eot>` is the template's end-of-turn token (`<|im_end|>` for ChatML/Qwen3, which need not be
`tokenizer.eos_token`); each assistant turn holds exactly one, as its last token.

Where a fragment comes from. Chat templates are not append-only: Qwen3 drops the `<think>` blocks of
assistant turns before the last user query and re-spaces the ones it keeps, so cutting "render
after minus render before" corrupts ids once a turn is rewritten. At each turn the new render is
instead parsed against the buffer: every template segment the buffer holds (system, user and tool
turns, turn markers) must reappear byte for byte, each assistant turn must reappear as the text the
model sampled up to `<think>` blocks and whitespace (the only rewriting accepted, by design), closed
by `<eot>`; the fragment is what follows the last assistant turn's `<eot>`. Anything else raises
`ChatTemplateError` naming the turn, and the buffer must decode to exactly the text it stands for.
So the buffer is the conversation as the model saw it, earlier think blocks included.

Sampling. Logprobs are log-softmax of the raw logits (temperature 1, before temperature/top-p), the
quantity the trainer recomputes for pi_theta. temperature 0 is greedy; otherwise each turn draws
from its own generator seeded by (session seed, turn), so reruns repeat and other seeds differ.

Batching. Sessions of one loaded model hand their turns to its `BatchedSampler` (`hf_batch.py`), which
decodes the turns that are ready at the same time as one left-padded batch; each row keeps its own
generator, budget and stop ids, so a turn samples the same tokens whichever turns share its batch.
Each session also keeps its KV cache between turns, so a turn prefills only the tool output and the
next header, not the whole conversation again.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

from lab.errors import LabInputError
from lab.policies.hf_batch import PrefixCache, TurnRequest, sampler_for
from lab.rollout.policy import PolicyOutput, TokenTrajectory, sampling_seed
from lab.task import Task
from lab.toolspec import ToolSpec

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_PROBE = "EOT-PROBE-7f3a"  # assistant content whose rendered tail reveals the end-of-turn token


class ChatTemplateError(LabInputError):
    """The model's chat template cannot yield a consistent token buffer (raised before corrupting it)."""


class HFPolicy:
    """An orchestrator run in-process by transformers.

    Args:
        path: model directory, `.gguf` file, or `smollm2` (the offline SmolLM2-135M-Instruct GGUF).
        max_new_tokens: generation limit per turn (`--max-new-tokens`); a cut turn is closed with `<eot>`.
        temperature: 0 = greedy (`--temperature`); > 0 samples, seeded per (rollout seed, turn).
        top_p: nucleus mass kept when sampling (`--top-p`); 1 keeps the whole distribution.
        device: `cpu`, `cuda` or None (CUDA when available).
        latency_per_token_s: None reports each turn's wall time as its latency; a number reports
            generated tokens x this instead (a modelled, load-independent latency; see `_latency`).
    """

    def __init__(self, path: str, max_new_tokens: int = 512, temperature: float = 0.0, top_p: float = 1.0,
                 device: str | None = None, latency_per_token_s: float | None = None) -> None:
        if max_new_tokens < 1:
            raise LabInputError(f"--max-new-tokens must be at least 1 (got {max_new_tokens})")
        if temperature < 0:
            raise LabInputError(f"--temperature must be >= 0, 0 meaning greedy (got {temperature})")
        if not 0 < top_p <= 1:
            raise LabInputError(f"--top-p must be in (0, 1] (got {top_p})")
        if latency_per_token_s is not None and not latency_per_token_s > 0:
            raise LabInputError(f"--latency-per-token must be > 0 seconds (got {latency_per_token_s})")
        self.path = path
        self.name = f"hf:{path}"
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.device = device
        self.latency_per_token_s = latency_per_token_s
        self._loaded: Any = None  # set by `live`; else loaded (and cached per process) on first session
        self._sampler: Any = None  # set by `live`; else the model's batched sampler

    @classmethod
    def live(cls, model: Any, tokenizer: Any, name: str, sampler: Any = None, **kwargs: Any) -> HFPolicy:
        """A policy sampling from a model already in memory (the trainer's live model, whose weights
        change between steps); `name` is recorded as the orchestrator. Same token buffer, same sampling.

        `sampler` replaces the in-process batched sampler with another backend taking the same
        `TurnRequest`s (the trainer's vLLM samplers), so the token buffer stays the one above."""
        from lab.tools.local_llm import LoadedModel

        policy = cls(name.removeprefix("hf:"), **kwargs)
        policy.name = name
        policy._sampler = sampler
        policy._loaded = LoadedModel(model=model, tokenizer=tokenizer, device=str(model.device))
        return policy

    @classmethod
    def from_spec(cls, spec: str, **kwargs: Any) -> HFPolicy:
        path = spec.removeprefix("hf:")
        if not path:
            raise LabInputError(f"--orchestrator '{spec}': expected hf:<model dir, .gguf file or 'smollm2'>")
        return cls(path, **kwargs)

    def session(self, task: Task, specs: list[ToolSpec], seed: int) -> _HFSession:
        loaded = self._loaded or load_model(self.path, self.device)
        return _HFSession(self, loaded, sampling_seed(seed, task.task_id))

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in this orchestrator's own tokenizer (the round protocol cuts its context by it)."""
        loaded = self._loaded or load_model(self.path, self.device)
        return len(loaded.tokenizer(text, add_special_tokens=False).input_ids)


#: The tool block of Qwen3's chat template, used for templates that ignore `tools=` (SmolLM2's), so every
#: model reads the catalog the way the released checkpoint did.
TOOLS_SYSTEM_BLOCK = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>{tools}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    "XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>"
)


def render_round(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """One round's prompt through the chat template with `tools=` (and the generation prompt). A template
    that renders the same text with and without tools is given the catalog in its system message."""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    with_tools = tokenizer.apply_chat_template(plain, tools=tools, tokenize=False, add_generation_prompt=True)
    if with_tools != tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=True):
        return with_tools
    block = TOOLS_SYSTEM_BLOCK.format(tools="".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools))
    if plain and plain[0]["role"] == "system":
        plain[0] = {"role": "system", "content": plain[0]["content"] + "\n\n" + block}
    else:
        plain.insert(0, {"role": "system", "content": block})
    return tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=True)


def load_model(path: str, device: str | None = None) -> Any:
    """The loaded model (cached per process); `smollm2` is the offline SmolLM2-135M-Instruct GGUF."""
    from lab.tools.local_llm import load_local_model, smollm2_gguf_path

    target = smollm2_gguf_path() if path == "smollm2" else Path(path)
    if not target.exists():
        raise LabInputError(f"hf: model not found: {target}")
    return load_local_model(target, device=device or "auto")


def end_of_turn(tokenizer: Any) -> tuple[int, str]:
    """(id, text) of the token that closes an assistant turn in the tokenizer's chat template.

    Found by rendering a one-exchange conversation and tokenising what follows the assistant's text:
    `<|im_end|>` for ChatML and Qwen3, `<|eot_id|>` for Llama 3, `<end_of_turn>` for Gemma.
    """
    probe = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": _PROBE}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False)
    except Exception as exc:  # no template, or one that rejects a plain user/assistant exchange
        raise ChatTemplateError(f"hf: cannot render a chat with this tokenizer: {type(exc).__name__}: {exc}") from None
    tail = text[text.rfind(_PROBE) + len(_PROBE):] if _PROBE in text else ""
    ids = tokenizer(tail, add_special_tokens=False).input_ids if tail.strip() else []
    added = set(getattr(tokenizer, "added_tokens_decoder", {})) | set(tokenizer.all_special_ids)
    if ids and ids[0] in added:
        return ids[0], _decode(tokenizer, ids[:1])
    eos = tokenizer.eos_token
    if eos and tail.lstrip().startswith(eos):
        return tokenizer.eos_token_id, eos
    raise ChatTemplateError("hf: cannot tell which token ends an assistant turn: the template "
                            f"renders {tail!r} after it")


def _decode(tokenizer: Any, ids: list[int]) -> str:
    return tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def _canon(text: str) -> str:
    """An assistant turn up to what templates may rewrite in it: `<think>` blocks and whitespace."""
    return " ".join(_THINK.sub(" ", text).split())


def _turn_seed(seed: int, turn: int) -> int:
    """A 63-bit seed per (session seed, turn): reruns repeat, other seeds and turns draw independently."""
    digest = hashlib.blake2b(f"{seed}/{turn}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def _choose(logits: Any, temperature: float, top_p: float, generator: Any) -> int:
    """The next token from raw logits (vocab,): argmax at temperature 0, else a seeded nucleus draw.

    The draw inverts the cumulative distribution at one uniform number from the session's generator:
    an exact categorical draw, about 4x cheaper than `torch.multinomial` on a CPU (which costs ~0.2 ms
    per call at a 4k vocabulary, a tenth of a GRPO rollout's time). The first index whose cumulative
    mass exceeds the number is taken, so a token of probability 0 is never drawn (were rounding to put
    the number at the total mass, the last token of nonzero probability is taken)."""
    import torch

    if temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        sorted_probs[sorted_probs.cumsum(0) - sorted_probs >= top_p] = 0.0  # mass before it already >= top_p
        probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
    cumulative = probs.cumsum(0)
    point = torch.rand(1, generator=generator, dtype=torch.float64, device=probs.device) * cumulative[-1]
    index = int(torch.searchsorted(cumulative, point, right=True))
    return index if index < len(probs) else int(probs.nonzero()[-1])


def _first_difference(expected: str, got: str) -> str:
    i = next((n for n, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    return f"expected {expected[max(0, i - 30): i + 40]!r}, the template now renders {got[max(0, i - 30): i + 40]!r}"


class _HFSession:
    """One rollout's token buffer. The texts below mirror it segment by segment, so each new render
    can be checked against what the model actually saw."""

    def __init__(self, policy: HFPolicy, loaded: Any, seed: int) -> None:
        self.policy = policy
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.seed = seed
        self.tokens = TokenTrajectory()
        self.eot_id, self.eot_text = end_of_turn(self.tokenizer)
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        eos = eos if isinstance(eos, list) else [eos]
        self.stop_ids = {self.eot_id, self.tokenizer.eos_token_id, *eos} - {None}
        # shared by every session of the model: ready turns decode together
        self.sampler = policy._sampler or sampler_for(loaded)
        self._text = ""  # what prompt_ids + completion_ids decode to
        self._before: list[str] = []  # per turn: template text from the previous <eot> to the generation prompt
        self._said: list[str] = []  # per turn: generation prompt + the sampled text, as the model saw it
        self._contents: list[str] = []  # per turn: the text handed to the engine (its assistant message)
        self._n_messages = 0  # messages in the conversation at the last turn
        self._kv = PrefixCache()  # this rollout's KV cache: the next turn prefills only what is new
        self._rounds = 0  # round protocol: rounds sampled so far (each seeds its own draw)

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        if tools is not None:
            return await self._round(messages, tools)
        turn = len(self._said) + 1
        started = time.monotonic()
        if turn == 1:
            fragment, prompt_head = self._render_with_head(messages)
        else:
            fragment, prompt_head = self._new_fragment(messages, turn)
        ids = self._encode(fragment, turn)
        context = self.tokens.prompt_ids + self.tokens.completion_ids + ids
        sampled, logprobs = await self.sampler.sample(self._request(context, turn))
        # commit only now: a turn that raised above leaves the buffer as it was
        if turn == 1:
            self.tokens.prompt_ids = ids
        else:
            self._extend(ids, [0] * len(ids), [0.0] * len(ids))
        body = sampled[:-1] if sampled and sampled[-1] in self.stop_ids else sampled
        self._extend(sampled, [1] * len(sampled), logprobs)
        self._text += fragment + _decode(self.tokenizer, sampled)
        if sampled[-1:] != [self.eot_id]:  # cut by max_new_tokens (or stopped on another eos): close the turn
            self._extend([self.eot_id], [0], [0.0])
            self._text += self.eot_text
        text = _decode(self.tokenizer, body)
        self._before.append(fragment[: len(fragment) - len(prompt_head)])
        self._said.append(prompt_head + text)
        self._contents.append(text)
        self._n_messages = len(messages)
        return PolicyOutput(text=text, input_tokens=len(context), output_tokens=len(sampled),
                            latency_s=self._latency(len(sampled), time.monotonic() - started))

    def token_trajectory(self) -> TokenTrajectory | None:
        return self.tokens if self.tokens.completion_ids else None

    async def _round(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> PolicyOutput:
        """Round protocol: a fresh prompt rendered with `tools=`, sampled on its own; the round's ids are
        returned with the output (each round is a training row), the session's buffer is not used."""
        self._rounds += 1
        started = time.monotonic()
        ids = self.tokenizer(render_round(self.tokenizer, messages, tools), add_special_tokens=False).input_ids
        sampled, logprobs = await self.sampler.sample(self._request(ids, self._rounds))
        body = sampled[:-1] if sampled and sampled[-1] in self.stop_ids else sampled
        tokens = TokenTrajectory(prompt_ids=ids, completion_ids=list(sampled), mask=[1] * len(sampled),
                                 logprobs=list(logprobs))
        if sampled[-1:] != [self.eot_id]:  # cut by max_new_tokens: closed with <eot>, which the model did not sample
            tokens.completion_ids.append(self.eot_id)
            tokens.mask.append(0)
            tokens.logprobs.append(0.0)
        return PolicyOutput(text=_decode(self.tokenizer, body), input_tokens=len(ids), output_tokens=len(sampled),
                            latency_s=self._latency(len(sampled), time.monotonic() - started), tokens=tokens)

    def _latency(self, generated: int, wall_s: float) -> float:
        """The turn's latency: wall time, or with `latency_per_token_s` a modelled decode time.

        Why model it: a local model's wall time depends on the machine's load and, with batched
        decoding, on which other rollouts share the batch; in a reward (Eq. 2's latency column) or a
        comparison of two checkpoints that is noise, not a property of the orchestrator's choices."""
        per_token = self.policy.latency_per_token_s
        return wall_s if per_token is None else generated * per_token

    # -- stages ---------------------------------------------------------------------------------------

    def _new_fragment(self, messages: list[dict[str, Any]], turn: int) -> tuple[str, str]:
        """The template text for the messages added since the last turn, after checking that the new
        render reproduces the buffer: -> (fragment, its generation prompt)."""
        n = self._n_messages
        said = messages[n] if len(messages) > n else {}
        if said.get("role") != "assistant" or said.get("content") != self._contents[-1]:
            raise self._error(turn, f"message {n} must be the assistant turn this session sampled")
        if len(messages) == n + 1:
            raise self._error(turn, "no new message after the last assistant turn")
        full, prompt_head = self._render_with_head(messages)
        pos = 0
        for j, (before, turn_text) in enumerate(zip(self._before, self._said), start=1):
            if not full.startswith(before, pos):
                raise self._error(turn, f"the template re-renders the text before assistant turn {j} differently: "
                                        f"{_first_difference(before, full[pos:])}")
            pos += len(before)
            end = full.find(self.eot_text, pos)
            if end < 0:
                raise self._error(turn, f"assistant turn {j} is no longer closed by {self.eot_text!r}")
            if _canon(full[pos:end]) != _canon(turn_text):
                raise self._error(turn, f"the template rewrites assistant turn {j} beyond <think> blocks and "
                                        f"whitespace: {_first_difference(_canon(turn_text), _canon(full[pos:end]))}")
            pos = end + len(self.eot_text)
        return full[pos:], prompt_head

    def _render_with_head(self, messages: list[dict[str, Any]]) -> tuple[str, str]:
        """(render with the generation prompt, that generation prompt's text) for `messages`."""
        full = self._render(messages, generation_prompt=True)
        bare = self._render(messages, generation_prompt=False)
        return full, full[len(bare):] if full.startswith(bare) else ""

    def _render(self, messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        plain = [{"role": m["role"], "content": m["content"]} for m in messages]
        return self.tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=generation_prompt)

    def _encode(self, fragment: str, turn: int) -> list[int]:
        """Ids of a template fragment, checked to decode, after the buffer, to exactly the text intended."""
        ids = self.tokenizer(fragment, add_special_tokens=False).input_ids
        buffer = self.tokens.prompt_ids + self.tokens.completion_ids + ids
        got, want = _decode(self.tokenizer, buffer), self._text + fragment
        if unicodedata.normalize("NFC", got) != unicodedata.normalize("NFC", want):
            raise self._error(turn, f"the token buffer does not decode to the rendered conversation: "
                                    f"{_first_difference(want, got)}")
        return ids

    def _request(self, context: list[int], turn: int) -> TurnRequest:
        """The turn after `context` as a sampler request: the policy's options, and a generator of this
        (session seed, turn) alone, so the draw does not depend on which turns share its batch."""
        import torch

        policy = self.policy
        generator = torch.Generator(device=self.model.device).manual_seed(_turn_seed(self.seed, turn))
        return TurnRequest(context=context, max_new_tokens=policy.max_new_tokens, temperature=policy.temperature,
                           top_p=policy.top_p, generator=generator, stop_ids=self.stop_ids, choose=_choose, turn=turn,
                           cache=self._kv)

    def _extend(self, ids: list[int], mask: list[int], logprobs: list[float]) -> None:
        self.tokens.completion_ids += ids
        self.tokens.mask += mask
        self.tokens.logprobs += logprobs

    def _error(self, turn: int, problem: str) -> ChatTemplateError:
        return ChatTemplateError(f"hf: {self.policy.path}: turn {turn}: {problem}; refusing to "
                                 "build a corrupt token buffer")
