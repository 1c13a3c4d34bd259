"""Tests for lab.synth.export: a built domain as a tau2 folder, read back without loss.

What a user would notice: export -> import -> export gives byte-identical files and the same folder
hash, the splits partition the tasks, the lab's own tau2 loader reads the folder, and a broken
folder is refused with the file named.
"""

from __future__ import annotations

import json

import pytest

from lab.benchmarks.tau2 import load_tau2, load_tau2_domain
from lab.errors import LabInputError
from lab.synth import DOMAINS
from lab.synth.export import export_domain, folder_hash, import_domain, make_splits, pack

FILES = ("tasks.json", "split_tasks.json", "db.json", "policy.md")


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_round_trip_is_lossless(name, build, tmp_path):
    domain, db, tasks, _ = build(name)
    first = export_domain(pack(domain, db, tasks, seed=0), tmp_path / "a" / name)
    content = import_domain(first, domain)
    assert content == pack(domain, db, tasks, seed=0)
    second = export_domain(content, tmp_path / "b" / name)
    for file in FILES:
        assert (first / file).read_bytes() == (second / file).read_bytes(), file
    assert folder_hash(first) == folder_hash(second)


def test_folder_hash_ignores_formatting_but_not_content(build, tmp_path):
    domain, db, tasks, _ = build("bank")
    folder = export_domain(pack(domain, db, tasks, seed=0), tmp_path / "bank")
    before = folder_hash(folder)
    db_file = folder / "db.json"
    db_file.write_text(json.dumps(json.loads(db_file.read_text())))  # same content, one line
    assert folder_hash(folder) == before
    changed = json.loads(db_file.read_text())
    changed["accounts"]["ACC-000001"]["balance"] += 1
    db_file.write_text(json.dumps(changed))
    assert folder_hash(folder) != before


def test_splits_partition_the_tasks(build):
    _, _, tasks, _ = build("restaurant")
    splits = make_splits(tasks, seed=0)
    ids = [t["id"] for t in tasks]
    assert splits["base"] == ids and sorted(splits["train"] + splits["test"]) == sorted(ids)
    assert not set(splits["train"]) & set(splits["test"]) and len(splits["test"]) == round(0.35 * len(ids))
    assert make_splits(tasks, seed=0) == splits and make_splits(tasks, seed=1) != splits


def test_the_tau2_loader_reads_the_folder(build, tmp_path):
    domain, db, tasks, _ = build("bank")
    folder = export_domain(pack(domain, db, tasks, seed=0), tmp_path / "bank")
    loaded = load_tau2(path=folder, domain="bank")
    assert [t.meta["tau2_id"] for t in loaded] == [t["id"] for t in tasks]
    assert loaded[0].answer == tasks[0]["evaluation_criteria"]["actions"]
    info = load_tau2_domain("bank", folder)
    assert info.db == db and info.policy == domain.policy and set(info.splits) == {"train", "test", "base"}
    assert len(load_tau2(path=folder, domain="bank", split="test")) == len(info.splits["test"])


def test_broken_folders_are_refused(build, tmp_path):
    domain, db, tasks, _ = build("bank")
    folder = export_domain(pack(domain, db, tasks, seed=0), tmp_path / "bank")
    (folder / "split_tasks.json").write_text("[]")
    with pytest.raises(LabInputError, match="split_tasks.json: expected a JSON dict"):
        import_domain(folder)
    (folder / "split_tasks.json").unlink()
    with pytest.raises(LabInputError, match="split_tasks.json: not found"):
        import_domain(folder)
    export_domain(pack(domain, db, tasks, seed=0), folder)
    broken = json.loads((folder / "db.json").read_text())
    broken["cards"]["CRD-00001"]["status"] = "melted"
    (folder / "db.json").write_text(json.dumps(broken))
    with pytest.raises(LabInputError, match="cards 'CRD-00001'"):
        import_domain(folder, domain)
