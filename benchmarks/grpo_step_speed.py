"""GRPO step speed: the lab's multi-turn `rollout_func` path against TRL's built-in generation, one run.

    python benchmarks/grpo_step_speed.py [--steps 4] [--rounds 3] [--model runs/cpu-tiny/warm-start]

Both trainers train the same model (the cpu-tiny warm start when it exists, else the random tiny Qwen3)
with the same G, batch and optimizer. The lab path runs real rollouts (the paper-small toolkit on the
offline world: tools, grading, Eq. 2 scoring, store writes); TRL's path generates one completion per
row with `min_new_tokens = max_new_tokens` set to the lab's mean generated tokens per rollout, so both
generate the same number of tokens per step. Printed: seconds per step, generated tokens per second,
their ratio (goal: the lab's path costs at most 1.25x TRL's per generated token) and where the lab's
step time goes (rollout, reward, update). The first step of each trainer is a warm-up and not counted.
A round times both paths back to back; on a shared 2-core machine one trainer's step time alone varies
by half between runs, so several rounds print each round's ratio and their median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console

REPO = Path(__file__).resolve().parents[1]


def lab_path(model: str, steps: int, tmp: Path) -> dict[str, float]:
    from lab.store import Store, queries
    from trainer.config import OrchestraGRPOConfig
    from trainer.train import run_training

    config = OrchestraGRPOConfig.from_yaml(REPO / "configs/train/cpu-tiny.yaml", max_steps=steps + 1)
    config.model, config.warm_start, config.output_dir = model, None, str(tmp / "lab")
    config.lab_eval_limit, config.save_steps = 1, 10_000
    store = Store(tmp / "bench.duckdb")
    summary = run_training(config, store, Console(quiet=True))
    metrics = queries.train_metrics_df(store, summary.run_id).iloc[1:]  # drop the warm-up step
    step_s = (metrics["time/rollout_s"] + metrics["time/reward_s"] + metrics["time/update_s"]).mean()
    rows = config.per_device_train_batch_size
    return {
        "step_s": float(step_s), "tokens_per_step": float(metrics["tokens/generated"].mean()),
        "tokens_per_rollout": float(metrics["tokens/generated"].mean() / rows),
        "rollout_share": float(metrics["time/rollout_s"].mean() / step_s),
        "reward_share": float(metrics["time/reward_s"].mean() / step_s),
        "update_share": float(metrics["time/update_s"].mean() / step_s),
        "batch": rows, "G": config.num_generations, "model_dir": str(summary.start_model),
    }


class _StepTimer:
    def __init__(self) -> None:
        self.times: list[float] = []
        self.started = 0.0

    def on_step_begin(self, *args, **kwargs):
        self.started = time.perf_counter()

    def on_step_end(self, *args, **kwargs):
        self.times.append(time.perf_counter() - self.started)


def trl_path(model_dir: str, steps: int, tokens: int, batch: int, G: int, tmp: Path) -> dict[str, float]:
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from lab.rollout.prompt import system_prompt
    from lab.toolkit import load_toolkit
    from lab.world.build import build_world

    specs = load_toolkit("paper-small").tools
    questions = [t.question for t in build_world(seed=0).select(family="frames", split="train")[:32]]
    prompts = [[{"role": "system", "content": system_prompt(specs, "Be accurate but keep the bill as low as you can.")},
                {"role": "user", "content": q}] for q in questions]
    timer = _StepTimer()
    callback = type("Timer", (TrainerCallback,),
                    {"on_step_begin": timer.on_step_begin, "on_step_end": timer.on_step_end})()
    args = GRPOConfig(output_dir=str(tmp / "trl"), max_steps=steps + 1, per_device_train_batch_size=batch,
                      num_generations=G,
                      max_completion_length=tokens, generation_kwargs={"min_new_tokens": tokens}, learning_rate=3e-4,
                      beta=0.0, loss_type="dapo", use_cpu=True, bf16=False, report_to="none", save_strategy="no",
                      logging_steps=1, gradient_checkpointing=False, disable_tqdm=True, temperature=1.0)
    trainer = GRPOTrainer(model=model_dir,
                          reward_funcs=[lambda completions, **_: [random.random() for _ in completions]],
                          args=args, train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
                          processing_class=AutoTokenizer.from_pretrained(model_dir), callbacks=[callback])
    trainer.train()
    return {"step_s": statistics.mean(timer.times[1:]), "tokens_per_step": float(tokens * batch)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="Timed steps per trainer (after one warm-up step).")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of both paths; the median ratio is printed last.")
    parser.add_argument("--model", default=None,
                        help="Model dir or tiny-qwen3 (default: the cpu-tiny warm start if built).")
    options = parser.parse_args()
    warm = REPO / "runs/cpu-tiny/warm-start"
    model = options.model or (str(warm) if (warm / "config.json").is_file() else "tiny-qwen3")
    ratios = []
    for round_ in range(1, options.rounds + 1):
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            lab = lab_path(model, options.steps, tmp)
            tokens = max(1, round(lab["tokens_per_rollout"]))
            trl = trl_path(lab["model_dir"], options.steps, tokens, lab["batch"], lab["G"], tmp)
        lab_tps, trl_tps = lab["tokens_per_step"] / lab["step_s"], trl["tokens_per_step"] / trl["step_s"]
        ratios.append(trl_tps / lab_tps)
        print(f"round {round_}: model {model}; batch {lab['batch']} rollouts (G = {lab['G']}), "
              f"{options.steps} timed steps each")
        print(f"  lab rollout_func path : {lab['step_s']:6.2f} s/step, {lab['tokens_per_step']:7.0f} generated "
              f"tokens/step, {lab_tps:7.1f} tokens/s")
        print(f"  TRL built-in generate : {trl['step_s']:6.2f} s/step, {trl['tokens_per_step']:7.0f} generated "
              f"tokens/step, {trl_tps:7.1f} tokens/s")
        print(f"  cost per generated token, lab / TRL: {ratios[-1]:.2f}x")
        print(f"  lab step time: rollout {lab['rollout_share']:.0%}, reward {lab['reward_share']:.0%}, update "
              f"{lab['update_share']:.0%}")
    print(f"cost per generated token, lab / TRL: median {statistics.median(ratios):.2f}x over {len(ratios)} rounds "
          f"({', '.join(f'{r:.2f}x' for r in ratios)}; goal <= 1.25x)")


if __name__ == "__main__":
    main()
