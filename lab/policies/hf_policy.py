"""`hf:<path>`: a local transformers causal LM orchestrating with its own chat template (CPU or GPU).

Training needs the exact tokens the model sampled, so this session keeps a token buffer: the prompt ids
once, then per turn the sampled completion ids (mask 1, with their logprobs) and the ids of whatever the
environment adds (tool responses and the template's turn markers, mask 0). Only those added fragments
are rendered with the chat template; the model's own tokens are never re-tokenized from text, which
would silently change them (TRL and the paper's trainer need the sampled ids for importance ratios).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lab.errors import LabInputError
from lab.rollout.policy import PolicyOutput, TokenTrajectory
from lab.toolspec import ToolSpec


class HFPolicy:
    """An orchestrator run in-process by transformers."""

    def __init__(self, path: str, max_new_tokens: int = 512, temperature: float = 0.0, device: str | None = None) -> None:
        self.path = path
        self.name = f"hf:{path}"
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.device = device

    @classmethod
    def from_spec(cls, spec: str, **kwargs: Any) -> "HFPolicy":
        path = spec.removeprefix("hf:")
        if not path:
            raise LabInputError(f"--orchestrator '{spec}': expected hf:<model dir, .gguf file or 'smollm2'>")
        return cls(path, **kwargs)

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> "_HFSession":
        loaded = load_model(self.path, self.device)
        return _HFSession(self, loaded, seed)


def load_model(path: str, device: str | None = None) -> Any:
    """The loaded model (cached per process); `smollm2` is the offline SmolLM2-135M-Instruct GGUF."""
    from lab.tools.local_llm import load_local_model, smollm2_gguf_path

    target = smollm2_gguf_path() if path == "smollm2" else Path(path)
    if not target.exists():
        raise LabInputError(f"hf: model not found: {target}")
    return load_local_model(target, device=device or "auto")


class _HFSession:
    def __init__(self, policy: HFPolicy, loaded: Any, seed: int) -> None:
        self.policy = policy
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.seed = seed
        self.tokens = TokenTrajectory()
        self._rendered = 0  # messages already in the token buffer
        self._eos_text = self.tokenizer.eos_token or ""

    async def generate(self, messages: list[dict[str, Any]]) -> PolicyOutput:
        self._append_new_messages(messages)
        started = time.monotonic()
        completion, logprobs, closed = await asyncio.to_thread(self._sample)
        self._rendered = len(messages) + 1  # the assistant message the engine appends next
        self.tokens.completion_ids += completion
        self.tokens.mask += [1] * len(completion)
        self.tokens.logprobs += logprobs
        if closed is not None:
            # cut by max_new_tokens: close the turn (not sampled, so mask 0) so the next fragment lines up
            self.tokens.completion_ids.append(closed)
            self.tokens.mask.append(0)
            self.tokens.logprobs.append(0.0)
        text = self.tokenizer.decode(completion, skip_special_tokens=True)
        return PolicyOutput(
            text=text, input_tokens=len(self.tokens.prompt_ids) + len(self.tokens.completion_ids) - len(completion),
            output_tokens=len(completion), latency_s=time.monotonic() - started,
        )

    def token_trajectory(self) -> TokenTrajectory:
        return self.tokens

    def _append_new_messages(self, messages: list[dict[str, Any]]) -> None:
        """Append the ids of messages the buffer lacks: the whole prompt at first, then only the new
        fragment (tool responses + turn markers), found as the template's text after the last end-of-turn
        marker of the conversation so far."""
        if not self.tokens.prompt_ids:
            text = self._render(messages, generation_prompt=True)
            self.tokens.prompt_ids = self.tokenizer(text, add_special_tokens=False).input_ids
            return
        before = self._render(messages[: self._rendered], generation_prompt=False)
        after = self._render(messages, generation_prompt=True)
        cut = before.rfind(self._eos_text) + len(self._eos_text) if self._eos_text in before else len(before)
        fragment = after[cut:]
        ids = self.tokenizer(fragment, add_special_tokens=False).input_ids
        self.tokens.completion_ids += ids
        self.tokens.mask += [0] * len(ids)
        self.tokens.logprobs += [0.0] * len(ids)

    def _render(self, messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        plain = [{"role": m["role"], "content": m["content"]} for m in messages]
        return self.tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=generation_prompt)

    def _sample(self) -> tuple[list[int], list[float], int | None]:
        """Sample one turn -> (ids, logprobs, end-of-turn id to append when generation was cut)."""
        import torch

        context = self.tokens.prompt_ids + self.tokens.completion_ids
        input_ids = torch.tensor([context], device=self.model.device)
        sampling = self.policy.temperature > 0
        with self.loaded.lock, torch.no_grad():
            torch.manual_seed(self.seed + len(context))
            out = self.model.generate(
                input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=self.policy.max_new_tokens,
                do_sample=sampling, temperature=self.policy.temperature if sampling else None, top_p=None, top_k=None,
                output_scores=True, return_dict_in_generate=True, pad_token_id=self.tokenizer.eos_token_id,
            )
            completion = out.sequences[0, input_ids.shape[1]:]
            scores = torch.stack(out.scores, dim=0)[:, 0, :].float()  # (T, vocab)
            logprobs = torch.log_softmax(scores, dim=-1).gather(1, completion[:, None])[:, 0]
        ids = completion.tolist()
        eos = self.tokenizer.eos_token_id
        closed = eos if eos is not None and (not ids or ids[-1] != eos) else None
        return ids, logprobs.tolist(), closed
