"""Train configs fail in one line naming the field; randomised examples follow the paper's recipe."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
import torch

from lab.errors import LabInputError
from lab.preference import OBJECTIVES, preference_pairs
from lab.tools.registry import load_toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.examples import draw_examples, training_providers


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, problem", [
    ("loss_typo: dapo\n", "unknown field 'loss_typo'"),
    ("loss_type: grpo\n", "loss_type 'grpo'"),
    ("num_generations: 1\nper_device_train_batch_size: 1\n", "at least 2 generations"),
    ("pricing_providers: [together, deepinfra]\n", "held-out pricing"),
    ("tool_subset_min: 0\n", "tool_subset_min"),
    ("benchmark: frames\n", "benchmark 'frames'"),
    ("tools: [\n", "malformed YAML"),
])
def test_a_bad_config_is_one_line_naming_the_file_and_the_field(tmp_path, text, problem):
    path = write(tmp_path, f"output_dir: {tmp_path}/out\n" + text)
    with pytest.raises(LabInputError) as info:
        OrchestraGRPOConfig.from_yaml(path)
    assert problem in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_cli_reports_a_bad_config_without_a_traceback(tmp_path):
    path = write(tmp_path, "loss_type: grpo\n")
    result = subprocess.run([sys.executable, "-c", "from lab.cli import main; main()", "train", "--config", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "loss_type 'grpo'" in result.stderr and "Traceback" not in result.stderr


def test_shipped_configs_load():
    on_cpu = not torch.cuda.is_available()
    for name in ("cpu-tiny", "h100-qwen3-8b", "gpu-smoke"):
        config = OrchestraGRPOConfig.from_yaml(f"configs/train/{name}.yaml", use_vllm=False if on_cpu else None)
        assert config.loss_type in ("dapo", "bnpo", "cispo", "vespo") and config.num_generations >= 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without CUDA")
def test_use_vllm_without_a_gpu_is_refused_at_start_with_the_reason_and_the_way_out(tmp_path):
    result = subprocess.run([sys.executable, "-c", "from lab.cli import main; main()", "train", "--config",
                             "configs/train/h100-qwen3-8b.yaml", "--output-dir", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "use_vllm" in lines[0] and "needs a GPU" in lines[0] and "use_vllm: false" in lines[0]
    assert not (tmp_path / "out").exists()


class Task:
    def __init__(self, i):
        self.task_id, self.question = f"t{i}", f"question {i}"


@pytest.mark.parametrize("toolkit_name", ["paper-small", "default"])
def test_examples_randomise_tools_prices_and_preferences_as_the_paper_does(toolkit_name):
    toolkit = load_toolkit(toolkit_name)
    pricings = training_providers(toolkit_name, lambda p: load_toolkit(toolkit_name, pricing=p), [], "deepinfra")
    assert "deepinfra" not in pricings and len(pricings) >= 2
    examples = draw_examples([Task(i) for i in range(40)], toolkit, pricings, per_task=3, subset_min=0.5, seed=7)
    again = draw_examples([Task(i) for i in range(40)], toolkit, pricings, per_task=3, subset_min=0.5, seed=7)
    assert examples == again  # sha256-seeded: the same config gives the same examples everywhere
    assert len({e.features for e in examples}) > 5 and len(Counter(e.pricing for e in examples)) >= 2
    train_instructions = {p.instruction for p in preference_pairs("train")}
    names = toolkit.feature_names
    for e in examples:
        assert len(e.features) >= round(0.5 * len(names)) and set(e.features) <= set(names)
        for tool in toolkit.tools:  # a slot tool keeps at least one slot
            assert not tool.slots or set(tool.slots) & set(e.features)
        assert e.instruction in train_instructions
        weights = dict(e.preference)
        assert list(weights) == [*names, *OBJECTIVES]
        assert all(weights[n] == 0 for n in names if n not in e.features)  # P never rewards a tool not offered


def test_every_metric_is_documented_in_the_training_docs():
    from pathlib import Path

    from trainer.metrics import METRICS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text()
    for name, meaning in METRICS.items():
        assert f"| `{name}` | {meaning} |" in docs


def test_task_limit_cuts_training_tasks_but_not_an_evaluation_of_the_train_split(tmp_path, world):
    from trainer.environment import TrainingEnvironment

    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), toolkit="paper", families=["frames", "hle"],
                                 task_limit=3, report_to="none")
    training = TrainingEnvironment(config)
    evaluation = TrainingEnvironment(config, split=config.train_split)
    assert len(training.tasks) == 3
    assert len(evaluation.tasks) > 3 and set(training.tasks) < set(evaluation.tasks)
