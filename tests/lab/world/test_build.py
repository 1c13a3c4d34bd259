"""Tests for lab.world.build.

World build: files, manifest, cache reuse, loading, and the `orchestra world` commands.

Also the world's search index (MiniLM, flat) and local-search recall on its multi-hop questions.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lab.errors import LabInputError
from lab.world.build import WORLD_VERSION, build_world, default_dir, load_world, retrieval_recall
from lab.world.tasks import WorldSize
from orchestra.cli.world import world_app

SMALL = WorldSize.small()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    return build_world(root, seed=0, progress=False, size=SMALL, index=False)


def test_build_writes_files_and_manifest(built):
    root = built.root
    for rel in ("corpus.jsonl", "bookshop_db.json", "tasks/frames.jsonl", "tasks/hle.jsonl", "tasks/tau2.jsonl"):
        assert (root / rel).stat().st_size > 0
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["version"] == WORLD_VERSION and manifest["seed"] == 0
    assert manifest["counts"]["documents"] == SMALL.n_docs
    assert sum(sum(s.values()) for s in manifest["counts"]["tasks"].values()) == len(built.tasks)
    assert all(set(s) == {"train", "validation", "test"} for s in manifest["counts"]["tasks"].values())
    assert manifest["index"]["built"] is False and built.index_dir is None
    assert not built.reused
    first = json.loads((root / "corpus.jsonl").read_text().splitlines()[0])
    assert set(first) >= {"id", "title", "text"}


def test_second_build_reuses_the_cache(built):
    manifest = built.root / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    corpus_stamp = (built.root / "corpus.jsonl").stat().st_mtime_ns
    again = build_world(built.root, seed=0, progress=False, size=SMALL, index=False)
    assert again.reused
    assert manifest.stat().st_mtime_ns == stamp and (built.root / "corpus.jsonl").stat().st_mtime_ns == corpus_stamp
    assert again.manifest["content_hash"] == built.manifest["content_hash"]
    assert [t.task_id for t in again.tasks] == [t.task_id for t in built.tasks]


def test_force_seed_and_size_changes_rebuild(tmp_path):
    w0 = build_world(tmp_path, seed=0, progress=False, size=SMALL, index=False)
    forced = build_world(tmp_path, seed=0, progress=False, size=SMALL, index=False, force=True)
    assert not forced.reused and forced.manifest["content_hash"] == w0.manifest["content_hash"]
    other = build_world(tmp_path, seed=1, progress=False, size=SMALL, index=False)
    assert not other.reused and other.manifest["content_hash"] != w0.manifest["content_hash"]


def test_load_world_lookups(built):
    world = load_world(built.root)
    task = world.select(family="frames", split="train")[0]
    assert task.split == "train" and task.family == "frames"
    assert world.doc(task.support_doc_ids[0]).title in task.question
    assert world.task(task.task_id) == task
    assert world.select(family="tau2", domain="bookshop") and world.db["orders"]
    with pytest.raises(LabInputError, match="no document 'nope'"):
        world.doc("nope")


def test_load_world_without_a_build_names_the_folder(tmp_path):
    with pytest.raises(LabInputError, match="no built world here"):
        load_world(tmp_path / "empty")


def test_default_dir_follows_orchestra_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ORCHESTRA_CACHE", str(tmp_path))
    assert default_dir(7) == tmp_path / "world" / f"v{WORLD_VERSION}-seed7"
    assert default_dir(7, SMALL) != default_dir(7)


def test_cli_build_and_info(tmp_path, monkeypatch):
    monkeypatch.setenv("ORCHESTRA_CACHE", str(tmp_path / "cache"))
    runner = CliRunner()
    out = tmp_path / "w"
    first = runner.invoke(world_app, ["build", "--small", "--no-index", "--out", str(out), "--json"])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.output)
    assert summary["reused_cache"] is False and summary["documents"] == SMALL.n_docs
    assert set(summary["tasks"]) == {"frames", "hle", "tau2"}

    table = runner.invoke(world_app, ["build", "--small", "--no-index", "--out", str(out)])
    assert table.exit_code == 0 and "reused cache" in table.output and "hle/physics" in table.output

    info = runner.invoke(world_app, ["info", "--out", str(out), "--json"])
    assert info.exit_code == 0 and json.loads(info.output)["content_hash"] == summary["content_hash"]

    missing = runner.invoke(world_app, ["info", "--seed", "5"])
    assert isinstance(missing.exception, LabInputError)


@pytest.mark.slow
def test_small_world_index_is_built_cached_and_finds_first_hops(tmp_path):
    size = WorldSize(n_docs=200, n_frames=24, n_hle=12, n_tau2=7)
    content_only = build_world(tmp_path, seed=0, progress=False, size=size, index=False)
    world = build_world(tmp_path, seed=0, progress=False, size=size, index=True)
    assert world.reused and world.index_dir is not None  # content reused, only the index was added
    assert world.manifest["content_hash"] == content_only.manifest["content_hash"]
    recall = retrieval_recall(world, k=5)
    assert recall["tasks"] == 24
    assert recall["first_hop"] >= 0.9 and recall["per_hop"] >= 0.9
    assert recall["question"] < recall["per_hop"]  # later hops are not named in the question
