"""The private parts of TRL the trainer relies on, each checked against the installed TRL.

The trainer subclasses TRL's trainers and reaches past their public API in a few places (two methods it
overrides, attributes it reads, the keys of the batch it rewrites). A TRL upgrade that renames one would
otherwise surface as a crash, or worse a silent change, in the middle of a training run; here it fails
one test that names what moved and where the lab uses it.
"""

from __future__ import annotations

import inspect

import pytest
import trl
from trl import GRPOTrainer, SFTTrainer


def source(obj: object) -> str:
    return inspect.getsource(obj)


@pytest.mark.parametrize("method, parameters, used_in", [
    ("_generate_and_score_completions", ["inputs"],
     "trainer/grpo.py: OrchestraGRPOTrainer rewrites advantages and tool_mask"),
    ("_get_per_token_logps_and_entropies", ["model", "input_ids", "attention_mask", "logits_to_keep", "batch_size"],
     "trainer/grpo.py: shared-prompt logps and the reference model's"),
])
def test_the_grpo_methods_the_trainer_overrides_keep_their_signature(method, parameters, used_in):
    found = getattr(GRPOTrainer, method, None)
    assert found is not None, f"TRL {trl.__version__}: GRPOTrainer.{method} is gone ({used_in})"
    have = list(inspect.signature(found).parameters)
    assert have[1:1 + len(parameters)] == parameters, f"TRL {trl.__version__}: GRPOTrainer.{method}{have} ({used_in})"


@pytest.mark.parametrize("key", ["advantages", "tool_mask", "completion_mask", "num_items_in_batch", "prompt_ids",
                                 "completion_ids", "prompt_mask", "ref_per_token_logps"])
def test_the_batch_keys_the_trainer_writes_are_the_ones_trl_reads(key):
    assert f'"{key}"' in source(GRPOTrainer), f"TRL {trl.__version__}: GRPOTrainer no longer uses batch key {key!r}"


@pytest.mark.parametrize("key", ["prompt_ids", "completion_ids", "logprobs", "env_mask"])
def test_rollout_func_results_carry_the_keys_trl_reads(key):
    assert "rollout_func" in inspect.signature(GRPOTrainer.__init__).parameters, "GRPOTrainer takes no rollout_func"
    assert f'"{key}"' in source(GRPOTrainer), f"TRL {trl.__version__}: a rollout_func's {key!r} is no longer read"


@pytest.mark.parametrize("attribute", ["self.vllm_generation", "self.ref_model", "steps_per_generation",
                                       "self.processing_class"])
def test_the_grpo_attributes_the_trainer_reads_exist(attribute):
    assert attribute in source(GRPOTrainer), (
        f"TRL {trl.__version__}: GRPOTrainer has no {attribute} (trainer/grpo.py reads it)")


def test_the_vllm_generation_parts_the_samplers_use_exist():
    """trainer/grpo.py and trainer/vllm_samplers.py: `vllm_generation.llm` (colocate), `.vllm_client` (server),
    `sync_weights`, and `VLLMClient(base_url=..., connection_timeout=...)`."""
    from trl.generation.vllm_client import VLLMClient
    from trl.generation.vllm_generation import VLLMGeneration

    text = source(VLLMGeneration)
    for part in ("self.llm", "self.vllm_client", "def sync_weights"):
        assert part in text, f"TRL {trl.__version__}: VLLMGeneration has no {part}"
    assert {"base_url", "connection_timeout"} <= set(inspect.signature(VLLMClient.__init__).parameters)


@pytest.mark.parametrize("attribute", ["self._metrics", "self._total_train_tokens", "self.aux_loss_enabled",
                                       "self.compute_loss_func", "self.label_smoother"])
def test_the_sft_attributes_the_labelled_positions_loss_reads_exist(attribute):
    """trainer/sft.py (`labelled_positions_trainer`) reads and updates these in its `compute_loss`."""
    text = source(SFTTrainer) + source(SFTTrainer.__mro__[1])
    assert attribute in text, f"TRL {trl.__version__}: SFTTrainer has no {attribute} (trainer/sft.py uses it)"


def test_the_trl_log_keys_the_metrics_rename_are_logged():
    """trainer/metrics.py `TRL_KEYS`: each log key it renames must still be one TRL's trainer (or the
    transformers Trainer under it: loss, grad_norm, learning_rate) logs."""
    from transformers import Trainer

    from trainer.metrics import TRL_KEYS

    text = source(GRPOTrainer) + source(Trainer)
    missing = [key for key in TRL_KEYS
               if f'"{key}"' not in text and f"'{key}'" not in text and f'"{key.split("/")[0]}' not in text]
    assert not missing, f"TRL {trl.__version__}: no longer logs {missing}"
