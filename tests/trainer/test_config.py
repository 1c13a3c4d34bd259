"""Train configs (`trainer.config`) load as shipped, and a bad one fails in one line naming the file and the
field, from the CLI too: exit 2, no traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from trainer.config import OrchestraGRPOConfig


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
    ("warm_start: {orchestrators: [scripted:random], select: best-of}\n", "warm_start.select: 'best-of'"),
    ("reward_scale: wobbly\n", "reward_scale 'wobbly'"),
    ("lora: {r: 8}\n", "lora.target_modules: name the modules to adapt"),
    ("lora: {r: eight, target_modules: [q_proj]}\n", "field 'lora.r': got 'eight' (str), expected int"),
    ("lora: {rank: 8, target_modules: [q_proj]}\n", "lora: unknown key 'rank'"),
    ("advantage_estimator: ppo\n", "advantage_estimator 'ppo': expected one of 'grpo', 'rft'"),
    ("reward_scale: fixed\nreward_cost_ref_usd: 0\n", "reward_cost_ref_usd and reward_latency_ref_s must be > 0"),
    ("format_penalty: 1.0\n", "applies under protocol: rounds"),
    ("paired_instructions: true\nnum_generations: 8\nper_device_train_batch_size: 48\nexamples_per_task: 4\n",
     "paired_instructions: a step's 6 groups must hold whole tasks, a multiple of examples_per_task (4)"),
    ("format_penalty: lots\n", "field 'format_penalty': got 'lots' (str), expected float"),
    ("learning_check: {best: [answer]}\n", "field 'learning_check.best'"),
    ("train_split: test\n", "train_split 'test': that split is held out from training"),
    ("train_split: validation\n", "train_split 'validation': that split is held out from training"),
    ("eval_split: train\n", "eval_split 'train': the periodic evaluations would score the tasks GRPO trains on"),
    ("benchmark: toolscale\n", "eval_split 'validation': only the offline world carves a validation split"),
    ("training_instructions: [Be cheap]\n", "training_instructions: 'Be cheap' is not the wording of a `train` pair"),
    ("training_instructions: ['Only the answer matters to me.']\n", "is not the wording of a `train` pair"),  # eval
    ("training_instructions: ['Balance accuracy, cost and speed equally.', "
     "'Balance accuracy, cost and speed equally.']\n", "is listed twice"),
])
def test_a_bad_config_is_one_line_naming_the_file_and_the_field(tmp_path, text, problem):
    path = write(tmp_path, f"output_dir: {tmp_path}/out\n" + text)
    with pytest.raises(LabInputError) as info:
        OrchestraGRPOConfig.from_yaml(path)
    assert problem in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_cli_reports_a_bad_config_without_a_traceback(tmp_path):
    path = write(tmp_path, "loss_type: grpo\n")
    result = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()",
                             "train", "--config", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "loss_type 'grpo'" in result.stderr and "Traceback" not in result.stderr


def test_shipped_configs_load():
    on_cpu = not torch.cuda.is_available()
    for name in ("cpu-tiny", "cpu-smollm2", "h100-qwen3-8b", "gpu-smoke"):
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


@pytest.mark.parametrize("text, problem", [
    ("lab_eval_limit: 100000\n", "lab_eval_limit 100000: the 'validation' split of world (frames, hle) has 71 tasks"),
    ("lab_eval_instructions: [outcome=1, 'outcome=much,compute=1']\n", "'outcome' has non-numeric value 'much'"),
    ("lab_eval_instructions: [Be quick please]\n", "'Be quick please' is neither a P string"),
    ("lab_eval_samples: 0\n", "at least one sample"),
])
def test_a_learning_curve_it_cannot_run_is_refused_before_anything_is_written(text, problem, tmp_path, monkeypatch,
                                                                              capsys, world):
    """The curve's tasks and instructions are checked with the config (`trainer.curve.eval_set`): one line,
    exit 2, no store and no output folder, before any model is built."""
    from orchestra.cli import main

    path = write(tmp_path, f"output_dir: {tmp_path}/out\nfamilies: [frames, hle]\n" + text)
    monkeypatch.setenv("ORCHESTRA_VERBOSE", "1")  # leave this process's warning filters alone
    monkeypatch.setattr(sys, "argv", ["orchestra", "train", "--config", str(path), "--db", str(tmp_path / "db.duckdb")])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and problem in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_the_shipped_configs_curves_are_readable():
    from trainer.curve import curve_instructions

    on_cpu = not torch.cuda.is_available()
    for name in ("cpu-tiny", "cpu-smollm2", "h100-qwen3-8b", "gpu-smoke"):
        config = OrchestraGRPOConfig.from_yaml(f"configs/train/{name}.yaml", use_vllm=False if on_cpu else None)
        assert curve_instructions(config), name


def test_each_ablation_variant_changes_only_its_own_fields_of_the_recipe(tmp_path):
    """scripts/recipe_ablation.py: a variant is the shipped recipe with the fields it names changed, nothing else
    (so its row in docs/training.md measures that change), and every variant is a config that loads."""
    import importlib.util
    from dataclasses import fields

    spec = importlib.util.spec_from_file_location("recipe_ablation", "scripts/recipe_ablation.py")
    ablation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ablation)
    recipe = ablation.variant_config("recipe", tmp_path)
    own = {"run_name", "output_dir", "db", "logging_dir"}
    for name, changes in ablation.VARIANTS.items():
        config = ablation.variant_config(name, tmp_path)
        differ = {f.name for f in fields(config) if f.init and f.name not in own
                  and getattr(config, f.name) != getattr(recipe, f.name)}
        assert differ == set(changes), name
        assert config.output_dir == str(tmp_path / f"{name}-s0") and config.db == str(tmp_path / f"{name}-s0.duckdb")
    assert recipe.reward_scale == "group" and recipe.filter_format and not recipe.filter_invalid   # Eq. 2
    assert ablation.variant_config("paper-filters", tmp_path).filter_invalid   # the paper's third filter
    assert recipe.std_threshold == 0.1
    other = ablation.variant_config("recipe", tmp_path, seed=2)   # a seed changes the seed and the folders only
    assert other.seed == 2 and {f.name for f in fields(other) if f.init and f.name not in own
                                and getattr(other, f.name) != getattr(recipe, f.name)} == {"seed"}


def test_the_ablation_refuses_an_empty_seed_list_in_one_line_before_anything_is_written(tmp_path):
    result = subprocess.run([sys.executable, "scripts/recipe_ablation.py", "--out", str(tmp_path / "a"),
                             "--seeds", " , "], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: --seeds ' , ': name at least one seed (e.g. 0,1,2)"
    assert not (tmp_path / "a").exists()


def test_a_config_that_says_nothing_of_checkpointing_keeps_the_shared_prompt_forward(tmp_path):
    """TRL defaults activation checkpointing on, which turns the shared-prompt forward off and recomputes every
    step; the lab's configs get it only where they ask (cpu-smollm2 does, for memory). Saying nothing raises
    no deprecation warning for a name the config never wrote (transformers renamed it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        config = OrchestraGRPOConfig.from_yaml(write(tmp_path, f"output_dir: {tmp_path}/out\n"))
    assert not config.gradient_checkpointing and not config.activation_checkpointing
    assert OrchestraGRPOConfig.from_yaml("configs/train/cpu-smollm2.yaml").activation_checkpointing
