"""Tests for lab.sim.profiles.

Profiles file: validates, is priced, reproduces the paper where it says so, and rejects bad files clearly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import lab
from lab.errors import LabInputError
from lab.pricing import PriceTable, canonical_model
from lab.sim.profiles import find_profile_for, get_profile, load_profiles, paper_reference

DATA = Path(lab.__file__).parent / "data"
#: The shared folder sits beside the repository root (../shared).
PAPER = Path(__file__).resolve().parents[4] / "shared" / "paper" / "toolorchestra_tables.json"
PAPER_MODELS = [
    "gpt-5", "gpt-5-mini", "qwen3-32b", "llama-3.3-70b-instruct", "qwen2.5-math-72b-instruct",
    "qwen2.5-math-7b-instruct", "qwen2.5-coder-32b-instruct",
]


def test_packaged_profiles_cover_the_paper_tools_and_are_all_priced():
    profiles = load_profiles()
    assert set(PAPER_MODELS) <= set(profiles)
    assert len(profiles) >= 10
    table = PriceTable.load("default")
    unpriced = [p.stands_for for p in profiles.values() if not table.has(p.stands_for)]
    assert unpriced == []


def test_without_evidence_accuracy_reproduces_paper_no_tool_numbers():
    checked = 0
    for profile in load_profiles().values():
        if profile.paper is None:
            continue
        for family, bench in (("hle", "hle"), ("frames", "frames")):
            reported = profile.paper.no_tool[bench]
            assert abs(profile.expected_accuracy(family, evidence=False) - reported / 100) < 0.002, (profile.name,
                                                                                                     family)
            # with evidence the model is at least as good as the paper's model-with-basic-tools
            assert profile.expected_accuracy(family, evidence=True) >= profile.paper.basic_tools[bench] / 100
        checked += 1
    assert checked >= 5


@pytest.mark.skipif(not PAPER.exists(), reason="shared paper tables not present")
def test_paper_blocks_match_the_transcribed_paper_tables():
    table_1 = json.loads(PAPER.read_text())["table_1"]
    for profile in load_profiles().values():
        if profile.paper is None:
            continue
        for row in ("no_tool", "basic_tools"):
            paper_row = table_1[row][profile.paper.key]
            for bench, value in getattr(profile.paper, row).items():
                assert paper_row[bench] == value, (profile.name, row, bench)


def test_mean_latency_matches_the_authors_tool_descriptions():
    latency = json.loads((DATA / "pricing.json").read_text())["latency"]
    described = latency["toolorchestra_tool_descriptions"]
    reference = {canonical_model(v["model"]): v["avg_latency_s"] for v in described["answer"].values()}
    reference["qwen2.5-coder-32b-instruct"] = described["enhance_reasoning"]["reasoner-3"]["avg_latency_s"]
    for model, seconds in reference.items():
        profile = find_profile_for(model)
        assert profile is not None, model
        assert abs(profile.expected_latency_s() - seconds) <= 0.05 * seconds, (model, profile.expected_latency_s())


def test_harder_tasks_lower_and_evidence_raises_success_in_every_profile():
    for profile in load_profiles().values():
        for key in profile.accuracy:
            for evidence in (False, True):
                easy, medium, hard = (profile.p_correct(key, key, d, evidence) for d in ("easy", "medium", "hard"))
                assert easy > medium > hard
            for d in ("easy", "medium", "hard"):
                assert profile.p_correct(key, key, d, True) >= profile.p_correct(key, key, d, False)


def test_accuracy_lookup_prefers_domain_then_family_then_default():
    math = get_profile("qwen2.5-math-72b-instruct")
    assert math.accuracy_key("mathematics", "hle") == "mathematics"
    assert math.accuracy_key("physics", "hle") == "hle"
    assert math.accuracy_key("physics", "bfcl") == "default"
    assert math.p_correct("mathematics", "hle", "medium", False) > math.p_correct("physics", "hle", "medium", False)


def test_paper_reference_by_profile_or_model_id():
    ref = paper_reference("sim:gpt-5")
    assert ref["key"] == "gpt-5" and ref["no_tool"]["hle"] == 23.4 and ref["basic_tools"]["hle"] == 35.1
    assert paper_reference("Meta-Llama/Llama-3.3-70B-Instruct")["no_tool"]["frames"] == 32.4
    assert paper_reference("qwen2.5-math-7b-instruct") == {}  # never run alone in the paper
    assert paper_reference("no-such-model") == {}


def test_unknown_profile_names_the_known_ones():
    with pytest.raises(LabInputError, match="unknown simulated model 'sim:nope'.*gpt-5"):
        get_profile("sim:nope")


def _good_doc() -> dict:
    raw = yaml.safe_load((DATA / "sim_profiles.yaml").read_text())
    return {**raw, "profiles": {"gpt-5": raw["profiles"]["gpt-5"]}}


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda p: p["accuracy"]["hle"].update(with_evidence=1.5),
         r"profiles\.gpt-5\.accuracy\.hle\.with_evidence: .*1\.5"),
        (lambda p: p["accuracy"]["hle"].update(with_evidence=0.1),
         r"profiles\.gpt-5\.accuracy\.hle: .*below without_evidence"),
        (lambda p: p["accuracy"].pop("default"), r"profiles\.gpt-5.*'default'"),
        (lambda p: p.pop("stands_for"), r"profiles\.gpt-5\.stands_for: Field required"),
        (lambda p: p["latency"].update(speed=3), r"profiles\.gpt-5\.latency\.speed: Extra inputs"),
        (lambda p: p.update(category="oracle"), r"profiles\.gpt-5\.category: .*'oracle'"),
    ],
)
def test_bad_profile_file_names_file_and_field(tmp_path, mutate, expected):
    doc = _good_doc()
    mutate(doc["profiles"]["gpt-5"])
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(LabInputError, match=expected) as info:
        load_profiles(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_missing_and_malformed_files_are_one_line_errors(tmp_path):
    with pytest.raises(LabInputError, match="profiles file not found"):
        load_profiles(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles: {gpt-5: [unclosed\n")
    with pytest.raises(LabInputError, match=r"bad\.yaml:.*malformed YAML"):
        load_profiles(bad)
    no_source = tmp_path / "nosource.yaml"
    no_source.write_text(yaml.safe_dump({"profiles": {}}))
    with pytest.raises(LabInputError, match=r"nosource\.yaml: calibration_source: Field required"):
        load_profiles(no_source)


def test_calibration_table_puts_the_sim_beside_the_paper_on_a_task_set():
    from lab.sim.calibrate import calibration_table
    from lab.world.task import WorldTask

    tasks = [WorldTask(task_id=f"{f}-{d}", family=f, domain="general", difficulty=d, question="?", answer="x",
                       evidence=["fact"]) for f in ("hle", "frames") for d in ("easy", "medium", "hard")]
    table = calibration_table(tasks, load_profiles()).set_index(["profile", "family"])
    # a uniform difficulty mix is the calibration mix, so the paper's number comes back exactly
    assert table.loc[("gpt-5", "hle"), "no_tool"] == pytest.approx(23.4, abs=0.01)
    assert table.loc[("claude-opus-4-1", "frames"), "paper_no_tool"] == 58.2
    assert table.loc[("gpt-5", "frames"), "with_evidence"] > table.loc[("gpt-5", "frames"), "no_tool"]
    assert pd.isna(table.loc[("gpt-5-mini", "hle"), "paper_no_tool"])
