"""`paired_instructions`: every step's groups are whole tasks, each under every training instruction."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from lab.toolkit import load_toolkit
from trainer.examples import draw_examples
from trainer.task_sampler import TaskBlockSampler, task_blocks

TWO = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]


class Task:
    def __init__(self, i: int) -> None:
        self.task_id, self.question = f"t{i}", f"question {i}"


@given(tasks=st.integers(1, 12), per_task=st.integers(1, 4), tasks_per_step=st.integers(1, 3),
       generations=st.integers(2, 4), repeats=st.integers(1, 2), seed=st.integers(0, 50), interleaved=st.booleans())
def test_each_generation_batch_is_whole_tasks_each_example_a_group(tasks, per_task, tasks_per_step, generations,
                                                                   repeats, seed, interleaved):
    # a task's examples side by side (training's draws) or spread through the dataset (one condition after another)
    task_ids = ([f"t{t}" for _ in range(per_task) for t in range(tasks)] if interleaved
                else [f"t{t}" for t in range(tasks) for _ in range(per_task)])
    batch = tasks_per_step * per_task   # groups per generation batch
    sampler = TaskBlockSampler(task_ids, mini_repeat_count=generations, batch_size=batch, repeat_count=repeats,
                               seed=seed)
    drawn = list(sampler)
    assert len(drawn) == len(sampler)   # what TRL's dataloader is told
    step = batch * generations * repeats
    for start in range(0, len(drawn), step):
        chunk = drawn[start:start + step]
        groups = chunk[: batch * generations]
        assert chunk == groups * repeats   # a generation batch is reused as a whole
        for g in range(0, len(groups), generations):
            assert len(set(groups[g:g + generations])) == 1   # a group: one example, G times
        examples = groups[::generations]
        counts = Counter(task_ids[i] for i in examples)
        assert set(counts.values()) == {per_task}   # every example of a task it holds, no task cut in two
        assert len(set(examples)) == len(examples)
    assert len(set(drawn)) == (tasks // tasks_per_step) * tasks_per_step * per_task   # only a last part-batch left


def test_tasks_come_in_a_seeded_order_that_is_not_the_dataset_order():
    task_ids = [f"t{t}" for t in range(20) for _ in range(2)]
    first = list(TaskBlockSampler(task_ids, 1, 2, 1, seed=0))
    assert first == list(TaskBlockSampler(task_ids, 1, 2, 1, seed=0))
    assert first != list(range(40)) and first != list(TaskBlockSampler(task_ids, 1, 2, 1, seed=1))
    assert task_blocks(["a", "a", "b", "a"]) == [[0, 1, 3], [2]]


def test_cycled_draws_give_each_task_every_training_instruction():
    toolkit = load_toolkit("paper-small")
    examples = draw_examples([Task(i) for i in range(30)], toolkit, ["together"], per_task=4, subset_min=1.0, seed=3,
                             instructions=TWO, cycle=True)
    for i in range(30):
        mine = [e.instruction for e in examples if e.task_id == f"t{i}"]
        assert Counter(mine) == Counter({TWO[0]: 2, TWO[1]: 2})
    drawn = draw_examples([Task(i) for i in range(30)], toolkit, ["together"], per_task=4, subset_min=1.0, seed=3,
                          instructions=TWO)
    assert any(len({e.instruction for e in drawn if e.task_id == f"t{i}"}) == 1 for i in range(30))
