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
    batch_size: int = 16

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
            pairs = [(p, name) for p in range(len(self.prompts)) for name in self.calls]
            logps: dict[str, list[float]] = {name: [] for name in self.calls}
            for start in range(0, len(pairs), self.batch_size):
                chunk = pairs[start:start + self.batch_size]
                for (_, name), value in zip(chunk, self._sequence_logps(model, chunk)):
                    logps[name].append(value)
        finally:
            model.train(was_training)
        return {name: float(torch.tensor(values).exp().mean()) for name, values in logps.items()}

    def best_probability(self, model: Any) -> float:
        return self.probabilities(model)[self.best]

    def _sequence_logps(self, model: Any, chunk: list[tuple[int, str]]) -> list[float]:
        """Sum of the completion's token log-probabilities per (prompt, candidate), right-padded batch."""
        device = next(model.parameters()).device
        rows = [(self.prompts[p], self.calls[name]) for p, name in chunk]
        width = max(len(p) + len(c) for p, c in rows)
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, (prompt, completion) in enumerate(rows):
            ids[i, : len(prompt) + len(completion)] = torch.tensor(prompt + completion)
            mask[i, : len(prompt) + len(completion)] = 1
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.float() / self.temperature
        logprobs = torch.log_softmax(logits, dim=-1)
        out = []
        for i, (prompt, completion) in enumerate(rows):
            positions = torch.arange(len(prompt) - 1, len(prompt) + len(completion) - 1, device=device)
            targets = torch.tensor(completion, device=device)
            out.append(float(logprobs[i, positions, targets].sum()))
        return out


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
