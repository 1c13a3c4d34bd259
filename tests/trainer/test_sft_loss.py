"""The warm start's loss on CPU projects only the assistant positions, and gives TRL's numbers: the loss,
its gradient and the logged entropy and token accuracy equal `SFTTrainer`'s own on the same batch."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import TINY_MODEL
from trainer.models import CHATML_TRAINING_TEMPLATE, build_tiny_qwen3
from trainer.sft import labelled_positions_trainer

pytestmark = pytest.mark.slow


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


def test_the_warm_start_loss_gradient_and_metrics_are_trls(trainers):
    ours, theirs, batch = trainers
    labelled = int((batch["labels"][:, 1:] != -100).sum())
    assert labelled < 0.5 * batch["labels"].numel(), "the batch should be mostly prompt and tool output"
    projected = []
    hook = ours.model.get_output_embeddings().register_forward_hook(lambda module, args, out: projected.append(args[0].shape[0]))
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


SLIDING = {**TINY_MODEL, "num_hidden_layers": 2, "use_sliding_window": True, "sliding_window": 4, "max_window_layers": 0}


def labelled_logprobs(model, input_ids: list[int], labels: list[int]) -> torch.Tensor:
    """Log-probabilities of the labelled tokens of one row, in order."""
    ids = torch.tensor([input_ids])
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0, :-1]
    targets = torch.tensor(labels[1:])
    picked = torch.log_softmax(logits.float(), -1).gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    return picked[targets != -100]


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
    torch.testing.assert_close(labelled_logprobs(model, cropped["input_ids"], cropped["labels"]), full, rtol=1e-5, atol=1e-5)
    # one token more and the first labelled prediction changes: the reach is exact, not a guess
    short = labelled_logprobs(model, cropped["input_ids"][1:], cropped["labels"][1:])
    assert not torch.allclose(short[0], full[0], rtol=1e-5, atol=1e-5)


def test_a_model_with_a_full_attention_layer_has_no_receptive_field_to_crop_to():
    from transformers import Qwen3Config

    from trainer.sft import receptive_field

    assert receptive_field(Qwen3Config(num_hidden_layers=2)) is None
    mixed = Qwen3Config(num_hidden_layers=2, use_sliding_window=True, sliding_window=4, max_window_layers=1)
    assert mixed.layer_types == ["full_attention", "sliding_attention"]
    assert receptive_field(mixed) is None


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
        return SFTConfig(output_dir=str(tmp_path / str(padding_free)), assistant_only_loss=True, use_cpu=True, bf16=False,
                         per_device_train_batch_size=2, report_to=[], save_strategy="no", padding_free=padding_free,
                         max_length=None)

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
