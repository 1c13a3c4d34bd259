"""vLLM generation backends for the rollout engine's token buffer (`HFPolicy.live(..., sampler=...)`).

The session (`lab.policies.hf_policy`) still renders the conversation and keeps the exact token buffer;
only "sample the next turn after these ids" goes to vLLM, with the prompt given as token ids, so what
vLLM samples is what the trainer trains on. Weights reach vLLM through TRL (`vllm_generation.sync_weights`,
called by GRPOTrainer before every `rollout_func`).

No collective runs per turn: in server mode every rank posts its own turns to the server over HTTP
(vLLM batches concurrent requests itself); in colocate mode (tensor parallel 1) each rank's engine
decodes its own ready turns as one `generate` call. Ranks can therefore take different numbers of turns.

Not exercised on the 2-core CPU machine this was written on (vLLM needs a GPU); the transformers path
(`lab.policies.hf_batch`) is the tested one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lab.policies.hf_batch import TurnRequest


def _seed(request: TurnRequest) -> int:
    return int(request.generator.initial_seed()) % (2**31)


def _flatten(logprobs: list[Any]) -> list[float]:
    """vLLM's per-token logprob lists ([sampled, top-k...]) -> the sampled token's, NaN where unscored."""
    return [float(lp[0]) if lp and lp[0] is not None else float("nan") for lp in logprobs]


class VLLMServerSampler:
    """Turns sampled by a `vllm serve` server through TRL's `VLLMClient` (one HTTP call per turn)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def sample(self, request: TurnRequest) -> tuple[list[int], list[float]]:
        result = await asyncio.to_thread(
            self.client.generate, prompts=[request.context], n=1, temperature=request.temperature, top_p=request.top_p,
            max_tokens=request.max_new_tokens, logprobs=0,
            generation_kwargs={"stop_token_ids": sorted(request.stop_ids), "seed": _seed(request)},
        )
        ids = list(result["completion_ids"][0])
        return ids, _flatten(result["logprobs"][0])


class VLLMColocateSampler:
    """Turns sampled by the rank's own colocated `vllm.LLM`: the turns ready together go in one call."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.pending: list[tuple[TurnRequest, asyncio.Future]] = []
        self.driver: asyncio.Task | None = None

    async def sample(self, request: TurnRequest) -> tuple[list[int], list[float]]:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((request, future))
        if self.driver is None or self.driver.done():
            self.driver = asyncio.create_task(self._drive())
        return await future

    async def _drive(self) -> None:
        while self.pending:
            for _ in range(8):  # let every session that is ready this tick join the batch
                await asyncio.sleep(0)
            batch, self.pending = self.pending, []
            try:
                outputs = await asyncio.to_thread(self._generate, [r for r, _ in batch])
            except Exception as exc:  # every turn of the batch fails with it, visibly
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), output in zip(batch, outputs):
                if not future.done():
                    future.set_result(output)

    def _generate(self, requests: list[TurnRequest]) -> list[tuple[list[int], list[float]]]:
        from vllm import SamplingParams

        params = [SamplingParams(n=1, temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_new_tokens, logprobs=0,
                                 stop_token_ids=sorted(r.stop_ids), seed=_seed(r)) for r in requests]
        outputs = self.llm.generate([{"prompt_token_ids": r.context} for r in requests],
                                    sampling_params=params, use_tqdm=False)
        results = []
        for output in outputs:
            sample = output.outputs[0]
            logprobs = [entry[token].logprob if entry and token in entry else float("nan")
                        for token, entry in zip(sample.token_ids, sample.logprobs or [])]
            results.append((list(sample.token_ids), logprobs))
        return results
