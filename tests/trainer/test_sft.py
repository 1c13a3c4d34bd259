"""The warm start (`trainer.sft`): what it imitates, and the loss it trains with.

It learns, per training instruction, the routes the training reward ranks best. `select_best` is a
reward-fed signal (it decides what the model imitates), so these tests also try to game it: a cheap
route that fails, a route that calls the preferred model without solving.

Its loss on CPU projects only the assistant positions, and gives TRL's numbers: the loss, its gradient
and the logged entropy and token accuracy equal `SFTTrainer`'s own on the same batch (marked slow: they
build tiny models and train a step).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import TINY_MODEL
from trainer.examples import Example
from trainer.models import CHATML_TRAINING_TEMPLATE, build_tiny_qwen3
from trainer.sft import labelled_positions_trainer, select_best, select_solved

FEATURES = ["search-1", "answer-1", "answer-2"]


def example(preference: dict[str, float], task_id: str = "t1", name: str = "e") -> Example:
    weights = tuple((k, float(preference.get(k, 0.0))) for k in [*FEATURES, "outcome", "compute", "latency"])
    return Example(example_id=f"{task_id}#{name}", task_id=task_id, question="q", features=tuple(FEATURES),
                   pricing="together", instruction=name, preference=weights)


def routes(rows: list[tuple[str, dict[str, int], float, float, float]], task_id: str = "t1") -> pd.DataFrame:
    return pd.DataFrame([{"run_id": run, "task_id": task_id, "sample_idx": 0, "tool_counts_json": json.dumps(counts),
                          "outcome": outcome, "cost_usd": cost, "latency_s": latency}
                         for run, counts, outcome, cost, latency in rows])


GROUP = routes([
    ("strong", {"search-1": 1, "answer-1": 1}, 1.0, 0.040, 90.0),
    ("cheap", {"search-1": 1, "answer-2": 1}, 1.0, 0.004, 30.0),
    ("cheaper-but-wrong", {"answer-2": 1}, 0.0, 0.001, 10.0),
])


def chosen(trajectories: pd.DataFrame, examples: list[Example]) -> dict[str, list[str]]:
    picked: dict[str, list[str]] = {}
    for ex, traj in select_best(trajectories, examples, FEATURES):
        picked.setdefault(ex.instruction, []).append(traj.run_id)
    return picked


def test_a_cost_instruction_learns_the_cheapest_route_that_solved():
    assert chosen(GROUP, [example({"outcome": 1, "compute": 1}, name="cheap please")]) == {"cheap please": ["cheap"]}


def test_an_accuracy_only_instruction_learns_every_solved_route():
    assert chosen(GROUP, [example({"outcome": 1}, name="accuracy")]) == {"accuracy": ["strong", "cheap"]}


def test_a_model_preference_learns_the_route_that_uses_it_and_solves():
    picked = chosen(GROUP, [example({"outcome": 1, "answer-1": 1}, name="use answer-1")])
    assert picked == {"use answer-1": ["strong"]}


def test_calling_the_preferred_model_without_solving_is_never_imitated():
    group = routes([("spam", {"answer-1": 5}, 0.0, 0.2, 300.0), ("plain", {"answer-2": 1}, 1.0, 0.004, 30.0)])
    assert chosen(group, [example({"outcome": 1, "answer-1": 1}, name="use answer-1")]) == {"use answer-1": ["plain"]}


def test_a_task_nobody_solved_teaches_nothing():
    group = routes([("a", {"answer-1": 1}, 0.0, 0.04, 90.0), ("b", {"answer-2": 1}, 0.0, 0.004, 30.0)])
    assert chosen(group, [example({"outcome": 1, "compute": 1})]) == {}


def test_each_example_is_scored_within_its_own_task():
    """A cheap route on another task must not make this task's cheap route look expensive."""
    other = routes([("elsewhere", {"answer-2": 1}, 1.0, 0.0001, 1.0)], task_id="t2")
    picked = chosen(pd.concat([GROUP, other]), [example({"outcome": 1, "compute": 1}, name="cheap")])
    assert picked == {"cheap": ["cheap"]}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0.001, 1.0), st.floats(1.0, 500.0), st.integers(0, 3)),
                min_size=1, max_size=6),
       st.sampled_from([{"outcome": 1}, {"outcome": 1, "compute": 1}, {"outcome": 1, "latency": 1, "compute": 0.2},
                        {"outcome": 1, "answer-1": 1}]))
def test_only_solved_routes_are_kept_and_a_kept_route_is_never_dominated(rows, preference):
    group = routes([(f"r{i}", {"answer-1": calls}, float(ok), cost, latency)
                    for i, (ok, cost, latency, calls) in enumerate(rows)])
    kept = [traj for _, traj in select_best(group, [example(preference)], FEATURES)]
    solved = group[group.outcome == 1]
    assert all(t.outcome == 1 for t in kept)
    assert bool(kept) == bool(len(solved))
    for t in kept:  # no solved route is at least as good on every weighted objective and strictly better on one
        for other in solved.itertuples():
            better = [other.cost_usd < t.cost_usd if preference.get("compute") else False,
                      other.latency_s < t.latency_s if preference.get("latency") else False,
                      json.loads(other.tool_counts_json)["answer-1"] > json.loads(t.tool_counts_json)["answer-1"]
                      if preference.get("answer-1") else False]
            worse = [other.cost_usd > t.cost_usd if preference.get("compute") else False,
                     other.latency_s > t.latency_s if preference.get("latency") else False,
                     json.loads(other.tool_counts_json)["answer-1"] < json.loads(t.tool_counts_json)["answer-1"]
                     if preference.get("answer-1") else False]
            assert not (any(better) and not any(worse))


def test_a_stored_trajectory_is_rebuilt_turn_by_turn_as_the_engine_showed_it():
    """Steps in any row order come back as the chat the rollout engine showed: per turn the reasoning (when
    the orchestrator wrote any), every call of the turn, each tool's response, and the answer last."""
    from lab.rollout.parse import format_tool_call
    from lab.rollout.prompt import tool_response_text
    from trainer.sft import _turn_messages

    def step(turn, kind, tool="", arguments=None, observation="", reasoning=""):
        return {"turn": turn, "kind": kind, "tool_name": tool, "arguments_json": json.dumps(arguments or {}),
                "observation": observation, "reasoning": reasoning}

    steps = pd.DataFrame([
        step(2, "answer", observation="Varn"),
        step(1, "tool", "search", {"model": "search-2"}, "The capital lies on the Varn.", reasoning="look it up"),
        step(1, "tool", "enhance_reasoning", {"model": "reasoner-1"}, "x" * 50),
    ])
    messages = _turn_messages(steps, observation_chars=20)
    assert messages == [
        {"role": "assistant", "content": "<think>look it up</think>\n"
         + format_tool_call("search", {"model": "search-2"})
         + "\n" + format_tool_call("enhance_reasoning", {"model": "reasoner-1"})},
        {"role": "tool", "content": tool_response_text("search", "The capital lies on the Varn.", 20)},
        {"role": "tool", "content": tool_response_text("enhance_reasoning", "x" * 50, 20)},
        {"role": "assistant", "content": "<answer>Varn</answer>"},
    ]
    # a tool that answers ends the episode before the model reads its response: no trailing tool message
    assert _turn_messages(steps[steps.kind == "tool"], 20)[-1]["role"] == "assistant"


def test_each_example_teaches_one_of_its_best_routes_so_instructions_weigh_the_same():
    from trainer.sft import one_per_example

    examples = [example({"outcome": 1}, name="accuracy"), example({"outcome": 1, "compute": 1}, name="cheap please")]
    picked = one_per_example(select_best(GROUP, examples, FEATURES))
    assert sorted(e.instruction for e, _ in picked) == ["accuracy", "cheap please"]
    assert dict((e.instruction, t.run_id) for e, t in picked)["cheap please"] == "cheap"
    assert one_per_example(select_best(GROUP, examples, FEATURES)) == picked  # the same pick every time


def test_select_solved_offers_every_instruction_the_same_solved_routes_whatever_its_p():
    examples = [example({"outcome": 1, "compute": 1}, name="cheap please"), example({"outcome": 1}, name="accuracy"),
                example({"outcome": 1, "answer-1": 1}, name="gpt-5 please")]
    offered = {}
    for ex, traj in select_solved(GROUP, examples):
        offered.setdefault(ex.instruction, set()).add(traj.run_id)
    assert offered == dict.fromkeys(["cheap please", "accuracy", "gpt-5 please"], {"strong", "cheap"})


def test_a_warm_start_is_reused_only_when_its_fingerprint_matches(tmp_path, monkeypatch):
    """A folder saved by this config, code and data is reused, saying so; one from before fingerprints is
    rebuilt, saying why, and stays whole until a new one replaces it (here the rebuild stops early: the
    stubbed scripted runs solved nothing)."""
    from types import SimpleNamespace

    from rich.console import Console

    from lab.errors import LabInputError
    from trainer import sft
    from trainer.config import OrchestraGRPOConfig
    from trainer.fingerprint import warm_start_fingerprint, write_fingerprint

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(sft, "collect_runs", lambda *args: ["warm-start-random-0"])
    monkeypatch.setattr(sft, "sft_rows", lambda *args: [])
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), toolkit="paper", report_to="none",
                                 warm_start={"orchestrators": ["scripted:random"], "epochs": 3})
    folder = sft.warm_start_dir(config)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")

    def run() -> str:
        console = Console(record=True, width=400)
        try:
            assert sft.train_sft(config, None, SimpleNamespace(tasks={}), console) == folder
        except LabInputError as error:
            assert "solved no task" in str(error)
        return console.export_text()

    assert run() == f"warm start: {folder} has no fingerprint (made before fingerprints); rebuilding\n"
    assert (folder / "config.json").is_file(), "the old warm start is kept until a new one is complete"
    expected = warm_start_fingerprint(config, sft.warm_start_options(config))
    write_fingerprint(folder, expected)
    assert run() == f"warm start: reusing {folder} (fingerprint {expected.digest} matches)\n"
    config.warm_start = {**config.warm_start, "epochs": 8}
    assert run().startswith(f"warm start: {folder} was made by another config (warm_start.epochs 3 -> 8); "
                            "rebuilding\n")


# the warm start's loss: two chats, one with a tool response no position should learn from
CONVERSATIONS = [
    [{"role": "system", "content": "You are an orchestrator. User preference: keep the bill low."},
     {"role": "user", "content": "Which river runs through the capital?"},
     {"role": "assistant", "content": '<tool_call>{"name": "search", "arguments": {"model": "search-2"}}</tool_call>'},
     {"role": "tool", "content": '<tool_response name="search">\nThe capital lies on the Varn.\n</tool_response>'},
     {"role": "assistant", "content": '<tool_call>{"name": "answer", "arguments": {"model": "answer-3"}}</tool_call>'}],
    [{"role": "system", "content": "You are an orchestrator. User preference: money is no object."},
     {"role": "user", "content": "What is 17 squared?"},
     {"role": "assistant", "content": '<tool_call>{"name": "answer", "arguments": {"model": "answer-1"}}</tool_call>'}],
]


@pytest.fixture(scope="module")
def trainers(tmp_path_factory):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    folder = build_tiny_qwen3(TINY_MODEL, seed=0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHATML_TRAINING_TEMPLATE
    args = SFTConfig(output_dir=str(tmp_path_factory.mktemp("sft")), assistant_only_loss=True, use_cpu=True, bf16=False,
                     per_device_train_batch_size=2, report_to=[], save_strategy="no")
    data = Dataset.from_list([{"messages": m} for m in CONVERSATIONS])
    model = AutoModelForCausalLM.from_pretrained(folder)
    ours = labelled_positions_trainer()(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    theirs = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    batch = next(iter(ours.get_train_dataloader()))
    return ours, theirs, batch


def loss_and_grad(trainer, batch, num_items_in_batch=None):
    trainer.model.train()
    trainer.model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(trainer.model, dict(batch), num_items_in_batch=num_items_in_batch)
    loss.backward()
    grad = torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])
    metrics = {k: trainer._metrics["train"][k][-1] for k in ("entropy", "mean_token_accuracy")}
    return loss.detach(), grad, metrics


@pytest.mark.slow
def test_the_warm_start_loss_gradient_and_metrics_are_trls(trainers):
    ours, theirs, batch = trainers
    labelled = int((batch["labels"][:, 1:] != -100).sum())
    assert labelled < 0.5 * batch["labels"].numel(), "the batch should be mostly prompt and tool output"
    projected = []
    hook = ours.model.get_output_embeddings().register_forward_hook(
        lambda module, args, out: projected.append(args[0].shape[0]))
    try:
        loss_and_grad(ours, batch)
    finally:
        hook.remove()
    assert projected == [labelled], "the LM head should project the labelled positions only"
    # alone, and as one of two accumulated micro-batches (Trainer then passes the tokens of both)
    for num_items in (None, 2 * labelled):
        mine, trl = loss_and_grad(ours, batch, num_items), loss_and_grad(theirs, batch, num_items)
        torch.testing.assert_close(mine[0], trl[0], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(mine[1], trl[1], rtol=1e-4, atol=1e-6)
        for name in mine[2]:
            assert mine[2][name] == pytest.approx(trl[2][name], rel=1e-4, abs=1e-6), name


SLIDING = {**TINY_MODEL, "num_hidden_layers": 2, "use_sliding_window": True, "sliding_window": 4,
           "max_window_layers": 0}


def labelled_logprobs(model, input_ids: list[int], labels: list[int]) -> torch.Tensor:
    """Log-probabilities of the labelled tokens of one row, in order."""
    ids = torch.tensor([input_ids])
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0, :-1]
    targets = torch.tensor(labels[1:])
    picked = torch.log_softmax(logits.float(), -1).gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    return picked[targets != -100]


@pytest.mark.slow
def test_the_warm_start_drops_only_tokens_no_labelled_position_can_see():
    from transformers import AutoModelForCausalLM

    from trainer.sft import fit_row, receptive_field

    model = AutoModelForCausalLM.from_pretrained(build_tiny_qwen3(SLIDING, seed=0)).eval()
    reach = receptive_field(model.config)
    assert reach == 2 * 3
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(5, 1000, (40,), generator=generator).tolist()
    labels = [-100] * 25 + input_ids[25:30] + [-100] * 5 + input_ids[35:]
    cropped = fit_row({"input_ids": input_ids, "labels": labels}, max_length=None, reach=reach)
    assert len(cropped["input_ids"]) == 40 - (25 - 1 - reach)
    truncated = fit_row({"input_ids": input_ids, "labels": labels}, max_length=32, reach=reach)
    assert truncated["input_ids"] == cropped["input_ids"][:32 - (25 - 1 - reach)]
    full = labelled_logprobs(model, input_ids, labels)
    torch.testing.assert_close(labelled_logprobs(model, cropped["input_ids"], cropped["labels"]), full,
                               rtol=1e-5, atol=1e-5)
    # one token more and the first labelled prediction changes: the reach is exact, not a guess
    short = labelled_logprobs(model, cropped["input_ids"][1:], cropped["labels"][1:])
    assert not torch.allclose(short[0], full[0], rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_a_model_with_a_full_attention_layer_has_no_receptive_field_to_crop_to():
    from transformers import Qwen3Config

    from trainer.sft import receptive_field

    assert receptive_field(Qwen3Config(num_hidden_layers=2)) is None
    mixed = Qwen3Config(num_hidden_layers=2, use_sliding_window=True, sliding_window=4, max_window_layers=1)
    assert mixed.layer_types == ["full_attention", "sliding_attention"]
    assert receptive_field(mixed) is None


@pytest.mark.slow
def test_the_packed_warm_start_of_a_sliding_model_has_trls_padded_loss_and_gradient(tmp_path):
    """`train_sft` packs an all-sliding model's rows without padding under block attention: the same
    batch, the same loss and gradient as TRL's padded SDPA step."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from trainer.sft import block_attention

    folder = build_tiny_qwen3(SLIDING, seed=0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHATML_TRAINING_TEMPLATE
    data = Dataset.from_list([{"messages": m} for m in CONVERSATIONS])
    model = AutoModelForCausalLM.from_pretrained(folder)

    def args(padding_free: bool):
        return SFTConfig(output_dir=str(tmp_path / str(padding_free)), assistant_only_loss=True, use_cpu=True,
                         bf16=False, per_device_train_batch_size=2, report_to=[], save_strategy="no",
                         padding_free=padding_free, max_length=None)

    theirs = SFTTrainer(model=model, args=args(False), train_dataset=data, processing_class=tokenizer)
    padded = next(iter(theirs.get_train_dataloader()))
    expected = loss_and_grad(theirs, padded)
    assert block_attention(model)
    ours = labelled_positions_trainer()(model=model, args=args(True), train_dataset=data, processing_class=tokenizer)
    packed = next(iter(ours.get_train_dataloader()))
    assert packed["input_ids"].shape[0] == 1 and "attention_mask" not in packed, "one row, no padding"
    mine = loss_and_grad(ours, packed)
    torch.testing.assert_close(mine[0], expected[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(mine[1], expected[1], rtol=1e-4, atol=1e-6)
