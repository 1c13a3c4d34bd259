"""The probability of a known best call on fixed round prompts, read from log-probabilities.

Why read it and not sample it: whether GRPO moved the policy toward the call with the higher reward is a
statement about probabilities. Sampled rollouts measure it through the noise of sampling, the tools
and the grader; teacher-forcing each candidate call after the same fixed prompts measures it exactly,
so a curve of it against the step shows learning (or its absence) with no sampling noise at all.

A candidate call is the text the policy would write (`lab.rollout.parse.format_tool_call`) closed by
the end-of-turn token; its probability is exp(sum of the token log-probabilities), at the temperature
the policy samples at. Mass on anything else (another call, a malformed one) counts against every
candidate, so P(best) near 1 means the policy writes that call, not merely that it ranks it first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import torch
from transformers import TrainerCallback

from lab.records import TrainMetricsRecord
from lab.rollout.parse import format_tool_call
from lab.rollout.rounds import round_catalog, round_messages
from lab.store import Store


def parse_call(call: str) -> tuple[str, dict[str, str]]:
    """`answer:answer-3` -> (`answer`, {"model": "answer-3"}); a bare `name` takes no arguments."""
    tool, _, slot = call.partition(":")
    return tool, ({"model": slot} if slot else {})


def call_text(call: str) -> str:
    """The exact text a policy writes for `tool:slot`."""
    tool, arguments = parse_call(call)
    return format_tool_call(tool, arguments)


def first_round_prompt(tokenizer: Any, question: str, instruction: str | None, specs: list[Any]) -> list[int]:
    """The ids of a task's first round prompt (no context gathered yet), rendered as `hf:` renders it."""
    from lab.policies.hf_policy import render_round

    text = render_round(tokenizer, round_messages(question, "", instruction), round_catalog(specs))
    return tokenizer(text, add_special_tokens=False).input_ids


@dataclass
class CallProbe:
    """Fixed round prompts and candidate calls (their token ids), and which candidate is best."""

    prompts: list[list[int]]
    calls: dict[str, list[int]]   # candidate name -> completion ids (the call, then the end-of-turn token)
    best: str
    temperature: float = 1.0

    @classmethod
    def build(cls, tokenizer: Any, prompts: list[list[int]], calls: list[str], best: str,
              temperature: float = 1.0) -> CallProbe:
        eot = tokenizer.eos_token_id
        ids = {c: tokenizer(call_text(c), add_special_tokens=False).input_ids + [eot] for c in calls}
        return cls(prompts=prompts, calls=ids, best=best, temperature=temperature if temperature > 0 else 1.0)

    @torch.no_grad()
    def probabilities(self, model: Any) -> dict[str, float]:
        """Each candidate's probability, averaged over the prompts."""
        was_training = model.training
        model.eval()
        try:
            logps: dict[str, list[float]] = {name: [] for name in self.calls}
            for prompt in self.prompts:
                values = continuation_logps(model, prompt, list(self.calls.values()), self.temperature)
                for name, value in zip(self.calls, values.tolist()):
                    logps[name].append(value)
        finally:
            model.train(was_training)
        return {name: float(torch.tensor(values).exp().mean()) for name, values in logps.items()}

    def best_probability(self, model: Any) -> float:
        return self.probabilities(model)[self.best]


def continuation_logps(model: Any, prompt: list[int], completions: list[list[int]],
                       temperature: float = 1.0) -> torch.Tensor:
    """Each completion's summed token log-probability after `prompt`, (len(completions),), with the prompt
    forwarded once: its keys and values (all but its last token, without a gradient) are copied to every
    completion's row, and the rows continue from the prompt's last token.

    Why: a probe asks k candidates after each of its prompts, and a prompt (the catalog, the problem, the
    instruction: ~400 tokens) is most of every row, so forwarding it once instead of k times is most of the
    saving on a 30-layer model. The values equal a full forward's; a gradient (when enabled) flows through
    the completions' own positions and the prompt's last one, which predicts their first token, not through
    the prompt's cached keys: what a format fit of the candidates needs (`trainer.check.fit_format_start`)."""
    from lab.policies.hf_batch import cache_argument, cache_rows, full_cache

    device = next(model.parameters()).device
    cache_name = cache_argument(model)
    with torch.no_grad():
        head = model(input_ids=torch.tensor([prompt[:-1]], device=device), use_cache=True,
                     **{cache_name: full_cache()})
    cache = cache_rows(getattr(head, cache_name), torch.zeros(len(completions), dtype=torch.long, device=device))
    width = 1 + max(len(c) for c in completions)
    ids = torch.zeros((len(completions), width), dtype=torch.long)
    for i, completion in enumerate(completions):  # right-padded: a causal row's real tokens never see its pads
        ids[i, : 1 + len(completion)] = torch.tensor([prompt[-1], *completion])
    mask = torch.ones((len(completions), len(prompt) - 1 + width), dtype=torch.long, device=device)
    logits = model(input_ids=ids.to(device), attention_mask=mask, **{cache_name: cache}).logits.float() / temperature
    logprobs = torch.log_softmax(logits, dim=-1)
    return torch.stack([logprobs[i, torch.arange(len(c), device=device), torch.tensor(c, device=device)].sum()
                        for i, c in enumerate(completions)])


class ProbeCallback(TrainerCallback):
    """Reads each probe at the start of training (step 0, the GRPO start: its own `train_metrics` row unless
    the run resumes) and after every optimizer step, into `readings` (probe key -> (step, P(best))) and into
    the step's `train_metrics` row (the metrics callback, listed after this one, writes it): `probe/best_call`
    is the lowest reading (one probe: its reading), and with several probes `probe/best_call/<key>` each."""

    def __init__(self, probes: CallProbe | dict[int, CallProbe], store: Store, run_id: str) -> None:
        self.probes = probes if isinstance(probes, dict) else {0: probes}
        self.store, self.run_id = store, run_id
        self.readings: dict[int, list[tuple[int, float]]] = {key: [] for key in self.probes}
        self.trainer: Any = None  # set once the trainer exists

    def _read(self, model: Any, step: int) -> dict[str, float]:
        values = {key: probe.best_probability(model) for key, probe in self.probes.items()}
        for key, value in values.items():
            self.readings[key].append((step, value))
        metrics = {"probe/best_call": min(values.values())}
        if len(values) > 1:
            metrics.update({f"probe/best_call/{key}": value for key, value in values.items()})
        return metrics

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if state.global_step == 0 and state.is_world_process_zero:
            self.store.write_train_metrics([TrainMetricsRecord(
                run_id=self.run_id, step=0, metrics_json=json.dumps(self._read(model, 0)))])

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self.trainer.generation_metrics.update(self._read(model, state.global_step))
