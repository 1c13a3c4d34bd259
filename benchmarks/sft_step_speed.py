"""Warm-start step speed: the lab's `SFTTrainer` (assistant positions only through the LM head), alone,
on conversations cropped to the model's receptive field (`trainer.sft.fit_rows`), and cropped and
packed without padding under block sliding attention (`trainer.sft.block_attention`: how the warm start
runs), against TRL's own, one run.

    python benchmarks/sft_step_speed.py [--steps 6] [--batch 8]

Both train the cpu-tiny config's tiny Qwen3 from the same weights on the same batches: conversations
shaped like the warm start's (the paper-small catalog and a preference in the system prompt, a question,
three tool calls with 300-character tool responses: about 1,000 tokens, 6% of them the assistant's).
Printed: seconds per optimizer step of each, their ratios to TRL's, and the largest loss difference
from TRL's over the timed steps (all four should train identically). The first step of each is a warm-up and not
counted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def conversations(count: int) -> list[list[dict[str, str]]]:
    from lab.rollout.parse import format_tool_call
    from lab.rollout.prompt import system_prompt, tool_response_text
    from lab.toolkit import load_toolkit

    specs = list(load_toolkit("paper-small").tools)
    rows = []
    for i in range(count):
        slot = ("answer-1", "answer-3")[i % 2]
        messages = [{"role": "system",
                     "content": system_prompt(specs, "Be accurate but keep the bill as low as you can.")},
                    {"role": "user",
                     "content": f"Which of the three founders of the Varn guild of year {1700 + i} was born first?"}]
        for name, model in (("search", "search-2"), ("enhance_reasoning", "reasoner-1")):
            messages.append({"role": "assistant", "content": format_tool_call(name, {"model": model})})
            messages.append({"role": "tool",
                             "content": tool_response_text(name, f"{model}: found record {i} " * 20, 300)})
        messages.append({"role": "assistant", "content": format_tool_call("answer", {"model": slot})})
        rows.append(messages)
    return rows


def timed(trainer_class: type, steps: int, batch: int, tmp: Path, crop: bool = False,
          packed: bool = False) -> tuple[float, list[float]]:
    """Seconds per step (after a warm-up step) and the loss of every step."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import SFTConfig

    from trainer.config import OrchestraGRPOConfig
    from trainer.models import CHATML_TRAINING_TEMPLATE, resolve_model
    from trainer.sft import block_attention, fit_rows

    config = OrchestraGRPOConfig.from_yaml(REPO / "configs/train/cpu-tiny.yaml")
    source = resolve_model(config.model, config.tiny_model, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(source)
    tokenizer.chat_template = CHATML_TRAINING_TEMPLATE
    ends: list[float] = []
    losses: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            ends.append(time.perf_counter())

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))

    model = AutoModelForCausalLM.from_pretrained(source)
    packed = packed and block_attention(model)
    args = SFTConfig(output_dir=str(tmp / trainer_class.__name__), assistant_only_loss=True, use_cpu=True, bf16=False,
                     per_device_train_batch_size=batch, max_steps=steps + 1, learning_rate=3e-3, logging_steps=1,
                     save_strategy="no", report_to=[], seed=0, disable_tqdm=True, padding_free=packed, max_length=None)
    data = Dataset.from_list([{"messages": m} for m in conversations(batch * (steps + 1))])
    trainer = trainer_class(model=model, args=args, train_dataset=data, processing_class=tokenizer, callbacks=[Clock()])
    if crop:
        fit_rows(trainer, max_length=None)
    trainer.train()
    return statistics.mean(b - a for a, b in zip(ends, ends[1:])), losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="Timed steps per trainer (after one warm-up step).")
    parser.add_argument("--batch", type=int, default=8,
                        help="Conversations per step (the cpu-tiny warm start's batch).")
    options = parser.parse_args()
    from trl import SFTTrainer

    from trainer.sft import labelled_positions_trainer

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        lab_s, lab_losses = timed(labelled_positions_trainer(), options.steps, options.batch, tmp)
        crop_s, crop_losses = timed(labelled_positions_trainer(), options.steps, options.batch, tmp / "crop", crop=True)
        packed_s, packed_losses = timed(labelled_positions_trainer(), options.steps, options.batch, tmp / "packed",
                                        crop=True, packed=True)
        trl_s, trl_losses = timed(SFTTrainer, options.steps, options.batch, tmp)

    def drift(losses: list[float]) -> float:
        return max(abs(a - b) for a, b in zip(losses, trl_losses))

    print(f"batch {options.batch} conversations, {options.steps} timed steps each")
    print(f"TRL SFTTrainer (fused head, every position): {trl_s:6.2f} s/step")
    print(f"lab SFTTrainer (labelled positions only):    {lab_s:6.2f} s/step, {lab_s / trl_s:.2f}x TRL's; "
          f"largest per-step loss difference {drift(lab_losses):.2e}")
    print(f"  and cropped to the receptive field:        {crop_s:6.2f} s/step, {crop_s / trl_s:.2f}x TRL's; "
          f"largest per-step loss difference {drift(crop_losses):.2e}")
    print(f"  and packed under block sliding attention:  {packed_s:6.2f} s/step, {packed_s / trl_s:.2f}x TRL's; "
          f"largest per-step loss difference {drift(packed_losses):.2e}")


if __name__ == "__main__":
    main()
