"""The warm start's loss on CPU projects only the assistant positions, and gives TRL's numbers: the loss,
its gradient and the logged entropy and token accuracy equal `SFTTrainer`'s own on the same batch."""

from __future__ import annotations

import pytest
import torch

from trainer.models import CHATML_TRAINING_TEMPLATE, build_tiny_qwen3
from trainer.sft import labelled_positions_trainer

pytestmark = pytest.mark.slow

TINY = {"tokenizer": "world", "vocab_size": 1024, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
        "num_key_value_heads": 1, "intermediate_size": 64}

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

    folder = build_tiny_qwen3(TINY, seed=0)
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
