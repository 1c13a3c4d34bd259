"""Train configs fail in one line naming the field; randomised examples follow the paper's recipe."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.preference import OBJECTIVES, preference_pairs
from lab.toolkit import load_toolkit
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
    ("learning_rate: fast\n", "field 'learning_rate': got 'fast' (str), expected float"),
    ("lr_scheduler_type: wobbly\n", "expected one of 'linear', 'cosine'"),
    ("warm_start: {orchestrators: [scripted:random], epochs: many}\n", "field 'warm_start.epochs'"),
    ("warm_start: {orchestrators: [scripted:random], epoch: 3}\n", "warm_start: unknown key 'epoch'"),
])
def test_a_bad_config_is_one_line_naming_the_file_and_the_field(tmp_path, text, problem):
    path = write(tmp_path, f"output_dir: {tmp_path}/out\n" + text)
    with pytest.raises(LabInputError) as info:
        OrchestraGRPOConfig.from_yaml(path)
    assert problem in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_cli_reports_a_bad_config_without_a_traceback(tmp_path):
    path = write(tmp_path, "loss_type: grpo\n")
    result = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", "train", "--config", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "loss_type 'grpo'" in result.stderr and "Traceback" not in result.stderr


def test_shipped_configs_load():
    on_cpu = not torch.cuda.is_available()
    for name in ("cpu-tiny", "h100-qwen3-8b", "gpu-smoke"):
        config = OrchestraGRPOConfig.from_yaml(f"configs/train/{name}.yaml", use_vllm=False if on_cpu else None)
        assert config.loss_type in ("dapo", "bnpo", "cispo", "vespo") and config.num_generations >= 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without CUDA")
def test_use_vllm_without_a_gpu_is_refused_at_start_with_the_reason_and_the_way_out(tmp_path):
    result = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", "train", "--config",
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


def _wrong_values_for(name: str) -> list:
    """YAML values of a kind the field does not take, judged by its default's kind (a number, a flag, a
    text, a list, a mapping), or by its annotation's plain type when the default is None."""
    import dataclasses
    import typing

    field = next(f for f in dataclasses.fields(OrchestraGRPOConfig) if f.name == name)
    default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
    if default is None:
        plain = [a for a in typing.get_args(typing.get_type_hints(OrchestraGRPOConfig)[name]) if a is not type(None)]
        default = {int: 1, float: 1.0, str: "x", bool: True}.get(plain[0]) if len(plain) == 1 else None
    if isinstance(default, bool):
        return ["sometimes", 3, [True]]
    if isinstance(default, (int, float)):
        return ["fast", [1], {"k": 1}, True]
    if isinstance(default, str) and not hasattr(default, "value"):
        return [[1, 2], {"k": "v"}]
    if isinstance(default, list):
        return ["not-a-list", {"k": "v"}]
    if isinstance(default, dict):
        return ["not-a-mapping", [1]]
    return []


CHECKABLE = sorted(n for n in {f.name for f in __import__("dataclasses").fields(OrchestraGRPOConfig) if f.init}
                   if _wrong_values_for(n))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_wrongly_typed_field_is_one_line_exit_2_and_nothing_written(data, tmp_path_factory, monkeypatch, capsys):
    """The real CLI (`orchestra.cli.main`) on a config with one field of the wrong type, for any field."""
    from orchestra.cli import main

    name = data.draw(st.sampled_from(CHECKABLE), label="field")
    value = data.draw(st.sampled_from(_wrong_values_for(name)), label="value")
    folder = tmp_path_factory.mktemp("cfg")
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump({"output_dir": str(folder / "out"), name: value}) if name != "output_dir"
                    else yaml.safe_dump({name: value}))
    monkeypatch.setenv("ORCHESTRA_VERBOSE", "1")  # leave this process's warning filters alone
    monkeypatch.setattr(sys, "argv", ["orchestra", "train", "--config", str(path), "--db", str(folder / "db.duckdb")])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and str(path) in err and name in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["c.yaml"]  # no output folder, no store
