"""Fingerprints of reused stages: a saved model is reused only when what would make it now made it.

Why: `orchestra train` and `orchestra demo` skip a stage whose model is on disk. Reusing any model
found there reused stale ones: a 3-step `orchestra train` left a warm start that two later demos took
as theirs, skipping their SFT. So a reused folder carries `fingerprint.json`: a short sha256 of its
inputs (the config fields that change the model, the text of the code that makes it, and the data's
identity), with the inputs themselves, so that a mismatch can name what differed:

    warm start: reusing runs/cpu-tiny/warm-start (fingerprint 3f2a9c0d1b7e matches)
    warm start: runs/cpu-tiny/warm-start was made by another config (warm_start.epochs 3 -> 8); rebuilding
    warm start: runs/cpu-tiny/warm-start was made by other code (trainer/sft.py changed); rebuilding
    warm start: runs/cpu-tiny/warm-start has no fingerprint (made before fingerprints); rebuilding

The fingerprint is written into the staging folder before it is renamed into place (`swap_in`), so a
folder never holds a model without the fingerprint of what made it.

Code is hashed as text: an edit to a listed module, comments included, rebuilds. That errs toward
rebuilding: a stale model costs a wrong result, a rebuild costs minutes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.benchmarks.source import resolve
from lab.eval.config import model_fingerprint
from lab.toolkit import load_toolkit
from lab.world.build import MANIFEST_FILE, default_dir
from trainer.config import OrchestraGRPOConfig

#: Where the listed sources are found: the folder holding `lab/` and `trainer/`.
ROOT = Path(__file__).resolve().parents[1]

#: The modules whose text makes the warm start: the SFT itself and its data selection (`trainer/sft.py`),
#: the examples it is shown under (`examples.py`, `environment.py`: tasks, prices, instructions), the base
#: model and its tokenizer (`models.py`), its training forward (`local_attention.py`), the rollout engine
#: and prompts the scripted runs and the rebuilt chats go through (`lab/rollout/`), the scripted
#: orchestrators whose routes it imitates, and the Eq. 2 reward that picks the best route (`lab/scoring.py`,
#: `lab/reward.py`). Patterns are relative to `ROOT`.
SFT_SOURCES: tuple[str, ...] = (
    "trainer/sft.py", "trainer/examples.py", "trainer/environment.py", "trainer/models.py",
    "trainer/local_attention.py", "lab/rollout/*.py", "lab/policies/scripted.py", "lab/scoring.py", "lab/reward.py",
)

#: The modules whose text makes the trained model: the whole trainer (GRPO, its reward adapter, rounds,
#: callbacks), the rollout engine it samples through and the reward it optimises.
TRAINED_SOURCES: tuple[str, ...] = ("trainer/*.py", "lab/rollout/*.py", "lab/reward.py", "lab/scoring.py")

#: The config fields that change the warm start. `examples_per_task` is GRPO's: the warm start draws
#: `warm_start.examples_per_task` examples per task instead (the same draws, `TrainingEnvironment.examples`).
#: `bf16` changes the SFT's arithmetic; `use_cpu` and `gradient_checkpointing` only where it runs and how fast.
#: `paired_instructions` changes which instruction each draw takes (`draw_examples(cycle=...)`).
WARM_START_FIELDS: tuple[str, ...] = (
    "model", "tiny_model", "benchmark", "families", "toolkit", "train_split", "task_limit", "protocol",
    "context_tokens", "max_turns", "observation_chars", "seed", "tool_subset_min", "pricing_providers",
    "held_out_pricing", "training_instructions", "bf16", "expert_protocol", "calls_per_round", "document_order",
    "retrieval_top_k", "document_chars", "document_suffix", "paired_instructions",
)

FINGERPRINT_FILE = "fingerprint.json"

#: Each group of inputs, and how a difference in it is told.
_TOLD = {"config": "was made by another config", "data": "was made from other data", "code": "was made by other code",
         "warm_start": "was trained from another warm start", "train_run": "was made by another train run",
         "max_steps": "was trained for another number of steps"}


@dataclass(frozen=True)
class Fingerprint:
    """What made a model: `inputs` (a JSON mapping of groups: config, data, code, ...) and its digest."""

    inputs: dict[str, Any]

    @classmethod
    def of(cls, **groups: Any) -> Fingerprint:
        """The inputs as JSON reads them back (tuples as lists), so a recorded one compares equal."""
        return cls(json.loads(json.dumps(groups, default=str)))

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.inputs, sort_keys=True).encode()).hexdigest()[:12]


def code_hashes(sources: tuple[str, ...]) -> dict[str, str]:
    """Relative path -> short sha256 of the text of every file the patterns `sources` match under `ROOT`."""
    files = sorted({path for pattern in sources for path in ROOT.glob(pattern) if path.is_file()})
    return {path.relative_to(ROOT).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()[:12] for path in files}


def data_identity(config: OrchestraGRPOConfig) -> dict[str, Any]:
    """What the config's tasks, tools and base model are, beyond their names: the offline world's version and
    content hash (its `manifest.json`), the benchmark's run identity (as eval run ids take it: e.g. the
    ToolScale dataset's version), the loaded toolkit and, for a model directory, its weight files' stamp."""
    source, qualifier = resolve(config.benchmark)
    identity: dict[str, Any] = {"benchmark": source.name, **source.run_identity(qualifier)}
    if source.name == "world":  # the world benchmark reads the cached world of seed 0 (`lab.benchmarks.world`)
        try:
            manifest = json.loads((default_dir() / MANIFEST_FILE).read_text())
            identity.update(world_version=manifest.get("version"),
                            world_content=str(manifest.get("content_hash"))[:12])
        except (FileNotFoundError, json.JSONDecodeError):
            identity["world_content"] = "not built"
    toolkit = load_toolkit(config.toolkit).model_dump_json()
    identity["toolkit"] = hashlib.sha256(toolkit.encode()).hexdigest()[:12]
    weights = model_fingerprint(f"hf:{config.model}")
    if weights:
        identity["model_weights"] = weights
    return identity


def warm_start_fingerprint(config: OrchestraGRPOConfig, options: dict[str, Any]) -> Fingerprint:
    """The warm start's fingerprint; `options` is `trainer.sft.warm_start_options(config)` (defaults filled,
    so a default written out in the YAML does not count as a change)."""
    settings = {name: getattr(config, name) for name in WARM_START_FIELDS}
    return Fingerprint.of(config={**settings, "warm_start": options}, data=data_identity(config),
                          code=code_hashes(SFT_SOURCES))


def trained_fingerprint(config: OrchestraGRPOConfig, run_id: str, warm_start: str | None) -> Fingerprint:
    """The trained model's fingerprint: the train run id (a hash of every config field that changes what is
    trained), `max_steps` (left out of the run id so that `--resume` can extend a run, but a 3-step model is
    not a 24-step one), the fingerprint of the warm start it started from (None without one), data and code."""
    return Fingerprint.of(train_run=run_id, max_steps=config.max_steps, warm_start=warm_start,
                          data=data_identity(config), code=code_hashes(TRAINED_SOURCES))


def training_fingerprint(config: OrchestraGRPOConfig, run_id: str, start_model: str | Path) -> Fingerprint:
    """What makes the model a training from `start_model` (its warm start's fingerprint, if any) saves."""
    started = read_fingerprint(Path(start_model)) if config.warm_start else None
    warm = Fingerprint(started["inputs"]).digest if started else None
    return trained_fingerprint(config, run_id, warm)


def record_trained_model(config: OrchestraGRPOConfig, run_id: str, start_model: str | Path) -> None:
    """Write the fingerprint of the model `run_training` just saved into `output_dir`, taking the warm
    start's fingerprint from the folder training started from (`start_model`)."""
    write_fingerprint(Path(config.output_dir), training_fingerprint(config, run_id, start_model))


def read_fingerprint(folder: Path) -> dict[str, Any] | None:
    """The recorded `{"fingerprint", "inputs"}` of a folder, or None when it has none (or an unreadable one)."""
    try:
        recorded = json.loads((folder / FINGERPRINT_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return recorded if isinstance(recorded, dict) and isinstance(recorded.get("inputs"), dict) else None


def write_fingerprint(folder: Path, fingerprint: Fingerprint) -> None:
    """Write `fingerprint.json` (through a temporary file, so a reader never sees half of one)."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{FINGERPRINT_FILE}.{os.getpid()}.tmp"  # one per process: ranks of a launch may all write
    partial.write_text(json.dumps({"fingerprint": fingerprint.digest, "inputs": fingerprint.inputs}, indent=2) + "\n")
    partial.replace(folder / FINGERPRINT_FILE)


def reuse_decision(folder: Path, expected: Fingerprint) -> tuple[bool, str]:
    """Whether the model in `folder` may be reused for `expected`, and why, as words that follow the folder's
    name: "fingerprint ... matches", "has no model", "has no fingerprint (...)" or "was made by ... (...)"."""
    if not (folder / "config.json").is_file():
        return False, "has no model"
    recorded = read_fingerprint(folder)
    if recorded is None:
        return False, "has no fingerprint (made before fingerprints)"
    if Fingerprint(recorded["inputs"]).digest == expected.digest:
        return True, f"fingerprint {expected.digest} matches"
    return False, first_difference(recorded["inputs"], expected.inputs)


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The first input that differs between two fingerprints' inputs, told for a user:
    `was made by another config (warm_start.epochs 3 -> 8)`, `was made by other code (trainer/sft.py changed)`."""
    for group in [*new, *(g for g in old if g not in new)]:
        was, now = _flat(old.get(group)), _flat(new.get(group))
        for key in [*now, *(k for k in was if k not in now)]:
            if was.get(key, _MISSING) == now.get(key, _MISSING):
                continue
            told = _TOLD.get(group, f"was made with other {group}")
            if group == "code":
                change = "added" if key not in was else "removed" if key not in now else "changed"
                return f"{told} ({key} {change})"
            name = f"{key} " if key else ""
            return f"{told} ({name}{_show(was.get(key, _MISSING))} -> {_show(now.get(key, _MISSING))})"
    return "was made by other inputs"


_MISSING = object()


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as dotted keys (`warm_start.epochs`); anything else under the key `prefix`."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value)


def swap_in(staging: Path, target: Path) -> None:
    """Put the complete folder `staging` at `target`: the old one is renamed aside, the new one renamed in,
    then the old one deleted, so `target` is never a half-written or missing model while a new one exists."""
    aside = target.with_name(f"{target.name}.old")
    if aside.exists():
        shutil.rmtree(aside)
    if target.exists():
        target.rename(aside)
    staging.rename(target)
    if aside.exists():
        shutil.rmtree(aside)
