"""Fingerprints of reused stages (`trainer.fingerprint`): a saved model is reused only when what made it is
what would make it now, and a mismatch names the input that differed (a config field, a source file, the
world). What a user would notice: a changed `warm_start.epochs` rebuilds and says so, an edited
`trainer/sft.py` rebuilds and says so, a matching folder is reused, an old folder without a fingerprint is
rebuilt, and a rebuilt folder replaces the old one whole."""

from __future__ import annotations

import json
import shutil

import pytest

from trainer import fingerprint
from trainer.config import OrchestraGRPOConfig
from trainer.fingerprint import (
    SFT_SOURCES,
    TRAINED_SOURCES,
    Fingerprint,
    read_fingerprint,
    record_trained_model,
    reuse_decision,
    swap_in,
    trained_fingerprint,
    warm_start_fingerprint,
    write_fingerprint,
)
from trainer.sft import warm_start_options

ORCHESTRATORS = ["scripted:random", "scripted:cheapest-first"]


def config(tmp_path, **warm_start) -> OrchestraGRPOConfig:
    return OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), run_name="fp", toolkit="paper", report_to="none",
                               warm_start={"orchestrators": ORCHESTRATORS, **warm_start})


def warm(config: OrchestraGRPOConfig) -> Fingerprint:
    return warm_start_fingerprint(config, warm_start_options(config))


def saved_model(folder, made_by: Fingerprint | None):
    """A folder as a save leaves it: a model's `config.json`, and the fingerprint of what made it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    if made_by is not None:
        write_fingerprint(folder, made_by)
    return folder


def test_every_listed_source_is_a_file_of_the_repository():
    """A pattern that matches nothing would silently leave its code out of the fingerprint."""
    for pattern in (*SFT_SOURCES, *TRAINED_SOURCES):
        assert list(fingerprint.ROOT.glob(pattern)), pattern
    assert "trainer/sft.py" in warm(OrchestraGRPOConfig(output_dir="x", report_to="none",
                                                        warm_start={"orchestrators": ORCHESTRATORS})).inputs["code"]


def test_a_matching_folder_is_reused(tmp_path):
    made_by = warm(config(tmp_path, epochs=3))
    folder = saved_model(tmp_path / "warm-start", made_by)
    assert reuse_decision(folder, warm(config(tmp_path, epochs=3))) == (True, f"fingerprint {made_by.digest} matches")
    recorded = json.loads((folder / "fingerprint.json").read_text())
    assert recorded["fingerprint"] == made_by.digest
    assert recorded["inputs"]["config"]["warm_start"]["epochs"] == 3  # readable: a user can see what made it


def test_a_changed_warm_start_option_rebuilds_naming_the_field(tmp_path):
    folder = saved_model(tmp_path / "warm-start", warm(config(tmp_path, epochs=3)))
    now = warm(config(tmp_path, epochs=8))
    assert now.digest != warm(config(tmp_path, epochs=3)).digest
    assert reuse_decision(folder, now) == (False, "was made by another config (warm_start.epochs 3 -> 8)")


def test_a_default_written_out_is_not_a_change(tmp_path):
    assert warm(config(tmp_path)).digest == warm(config(tmp_path, epochs=2, samples=1)).digest


def test_a_changed_config_field_outside_warm_start_is_named(tmp_path):
    before, after = config(tmp_path), config(tmp_path)
    after.max_turns = 7
    folder = saved_model(tmp_path / "warm-start", warm(before))
    assert reuse_decision(folder, warm(after)) == (False, f"was made by another config (max_turns "
                                                          f"{before.max_turns} -> 7)")


def test_pairing_the_instructions_rebuilds_the_warm_start_it_draws_from(tmp_path):
    """`paired_instructions` changes which instruction each of a task's draws takes, so the SFT's examples."""
    before, after = config(tmp_path), config(tmp_path)
    after.paired_instructions = True
    folder = saved_model(tmp_path / "warm-start", warm(before))
    assert reuse_decision(folder, warm(after)) == (False, "was made by another config (paired_instructions "
                                                          "false -> true)")


def test_a_grpo_only_field_does_not_rebuild_the_warm_start(tmp_path):
    before, after = config(tmp_path), config(tmp_path)
    after.examples_per_task, after.learning_rate = 9, 0.5  # GRPO's draws and step size, not the SFT's
    assert warm(before).digest == warm(after).digest


def test_an_edited_source_file_rebuilds_naming_the_file(tmp_path, monkeypatch):
    """The sources are hashed from a copy of the repository, so the test edits the copy, not the code."""
    copy = tmp_path / "repo"
    for pattern in SFT_SOURCES:
        for path in fingerprint.ROOT.glob(pattern):
            target = copy / path.relative_to(fingerprint.ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    monkeypatch.setattr(fingerprint, "ROOT", copy)
    cfg = config(tmp_path)
    folder = saved_model(tmp_path / "warm-start", warm(cfg))
    assert reuse_decision(folder, warm(cfg))[0]
    sft = copy / "trainer" / "sft.py"
    sft.write_text(sft.read_text() + "\n# a changed line\n")
    assert reuse_decision(folder, warm(cfg)) == (False, "was made by other code (trainer/sft.py changed)")
    (copy / "lab" / "rollout" / "new_step.py").write_text("")
    saved_model(folder, warm(cfg))
    (copy / "lab" / "rollout" / "new_step.py").unlink()
    assert reuse_decision(folder, warm(cfg)) == (False, "was made by other code (lab/rollout/new_step.py removed)")


def test_another_world_rebuilds_naming_its_content(tmp_path, monkeypatch):
    world = tmp_path / "world"
    world.mkdir()
    monkeypatch.setattr(fingerprint, "default_dir", lambda: world)
    (world / "manifest.json").write_text(json.dumps({"version": "2", "content_hash": "a" * 64}))
    cfg = config(tmp_path)
    folder = saved_model(tmp_path / "warm-start", warm(cfg))
    (world / "manifest.json").write_text(json.dumps({"version": "2", "content_hash": "b" * 64}))
    assert reuse_decision(folder, warm(cfg)) == (False, f"was made from other data (world_content {'a' * 12} -> "
                                                        f"{'b' * 12})")


def test_a_folder_without_a_fingerprint_is_rebuilt(tmp_path):
    expected = warm(config(tmp_path))
    assert reuse_decision(saved_model(tmp_path / "old", None), expected) == (
        False, "has no fingerprint (made before fingerprints)")
    broken = saved_model(tmp_path / "broken", None)
    (broken / "fingerprint.json").write_text("{not json")
    assert reuse_decision(broken, expected) == (False, "has no fingerprint (made before fingerprints)")
    assert reuse_decision(tmp_path / "absent", expected) == (False, "has no model")
    fingerprint_only = tmp_path / "fingerprint-only"
    write_fingerprint(fingerprint_only, expected)  # a fingerprint without the model it describes
    assert reuse_decision(fingerprint_only, expected) == (False, "has no model")


def test_a_rebuilt_folder_replaces_the_old_one_whole(tmp_path):
    target = saved_model(tmp_path / "warm-start", None)
    (target / "stale.bin").write_text("old weights")
    staging = saved_model(tmp_path / "warm-start.tmp", warm(config(tmp_path)))
    swap_in(staging, target)
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "fingerprint.json"]
    assert not staging.exists() and not (tmp_path / "warm-start.old").exists()
    swap_in(saved_model(tmp_path / "warm-start.tmp", None), tmp_path / "new")  # nothing there before: renamed in
    assert (tmp_path / "new" / "config.json").is_file()


def test_the_trained_models_fingerprint_is_what_the_demo_expects_and_names_a_new_warm_start(tmp_path):
    """`run_training` records it from the warm-start folder it started from; the demo computes it from the
    config (`DemoStages._trained_fingerprint`): the two agree, and another warm start is named."""
    cfg = config(tmp_path)
    start = saved_model(tmp_path / "warm-start", warm(cfg))
    record_trained_model(cfg, "fp-123", start)
    output_dir = tmp_path / "out"
    (output_dir / "config.json").write_text("{}")
    expected = trained_fingerprint(cfg, "fp-123", warm(cfg).digest)
    assert reuse_decision(output_dir, expected)[0]
    other = warm(config(tmp_path, epochs=8)).digest
    assert reuse_decision(output_dir, trained_fingerprint(cfg, "fp-123", other)) == (
        False, f"was trained from another warm start ({warm(cfg).digest} -> {other})")
    assert reuse_decision(output_dir, trained_fingerprint(cfg, "fp-456", warm(cfg).digest)) == (
        False, "was made by another train run (fp-123 -> fp-456)")
    longer = config(tmp_path)
    longer.max_steps = cfg.max_steps + 21  # the same run id (`--resume` extends a run), not the same model
    assert reuse_decision(output_dir, trained_fingerprint(longer, "fp-123", warm(cfg).digest)) == (
        False, f"was trained for another number of steps ({cfg.max_steps} -> {cfg.max_steps + 21})")
    recorded = read_fingerprint(output_dir)
    assert recorded is not None and "trainer/grpo.py" in recorded["inputs"]["code"]


@pytest.mark.parametrize("old, new, told", [
    ({"config": {"families": ["frames"]}}, {"config": {"families": ["frames", "hle"]}},
     'was made by another config (families ["frames"] -> ["frames", "hle"])'),
    ({"config": {"warm_start": {"orchestrators": ["a"]}}}, {"config": {"warm_start": {"orchestrators": ["a"],
                                                                                      "limit": 96}}},
     "was made by another config (warm_start.limit (unset) -> 96)"),
    ({"code": {}}, {"code": {"trainer/x.py": "1"}}, "was made by other code (trainer/x.py added)"),
])
def test_the_first_difference_is_told_plainly(old, new, told):
    assert fingerprint.first_difference(old, new) == told
