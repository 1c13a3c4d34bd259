"""The order in which GRPO draws its groups when instructions are paired (`paired_instructions`).

TRL's `RepeatSampler` permutes the examples one by one, so a step's groups are unrelated examples: one task
under "keep the bill low", another under "money is no object". Whatever a policy that ignores the
instruction would gain from a step (one call made likelier everywhere) then moves the policy as much as
what the instruction asks. This sampler permutes whole *tasks* (all examples with one `task_id`,
wherever the dataset holds them) and keeps each task's examples together, so a step holds the same task under every
instruction and the instruction-independent part of its update cancels within the step.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from trl.trainer.utils import RepeatSampler


def task_blocks(task_ids: list[str]) -> list[list[int]]:
    """The dataset's indices per task, tasks in order of first appearance: ["a", "b", "a"] -> [[0, 2], [1]]."""
    blocks: dict[str, list[int]] = {}
    for index, task_id in enumerate(task_ids):
        blocks.setdefault(task_id, []).append(index)
    return list(blocks.values())


class TaskBlockSampler(RepeatSampler):
    """`RepeatSampler` (each index `mini_repeat_count` times in a row, each generation batch `repeat_count`
    times) over a permutation of whole task blocks instead of single examples."""

    def __init__(self, task_ids: list[str], mini_repeat_count: int, batch_size: int, repeat_count: int,
                 seed: int) -> None:
        super().__init__(data_source=task_ids, mini_repeat_count=mini_repeat_count, batch_size=batch_size,
                         repeat_count=repeat_count, shuffle=True, seed=seed)
        self.blocks = task_blocks(task_ids)

    def __iter__(self) -> Iterator[int]:
        order = torch.randperm(len(self.blocks), generator=self.generator).tolist()
        indexes = [index for block in order for index in self.blocks[block]]
        for start in range(0, len(indexes) - self.batch_size + 1, self.batch_size):  # whole batches only
            chunk = indexes[start:start + self.batch_size]
            for _ in range(self.repeat_count):
                for index in chunk:
                    yield from [index] * self.mini_repeat_count
