"""Tests for lab.synth.dataset: bare `toolscale` means the synthesized dataset, built once and reused.

What a user would notice: `--benchmark toolscale` works without running `orchestra synth` first, it
holds every registered domain (never the world's bookshop), a second use does not rebuild it, and
an edit to the synthesis code gives a new dataset instead of a stale one.
"""

from __future__ import annotations

import json

from lab.benchmarks import load_benchmark
from lab.eval.config import EvalConfig
from lab.synth import DOMAINS
from lab.synth import dataset as dataset_module
from lab.synth.dataset import DEFAULT_TASKS_PER_DOMAIN, STATS_FILE, default_dataset


def test_bare_toolscale_is_the_synthesized_dataset_built_once(tmp_path, monkeypatch):
    monkeypatch.setenv("ORCHESTRA_CACHE", str(tmp_path))
    folder = default_dataset(n_tasks=4)
    assert (folder.parent == tmp_path / "toolscale"
            and sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(DOMAINS))
    stats = json.loads((folder / STATS_FILE).read_text())
    assert all(stats[name]["tasks/kept"] == 4 for name in DOMAINS)
    stamp = (folder / "bank" / "tasks.json").stat().st_mtime_ns
    assert default_dataset(n_tasks=4) == folder and (folder / "bank" / "tasks.json").stat().st_mtime_ns == stamp
    assert not [p for p in folder.parent.iterdir() if ".tmp-" in p.name]  # no staging folder left behind

    monkeypatch.setattr(dataset_module, "code_key", lambda: "edited-code")
    assert default_dataset(n_tasks=4) != folder  # changed synthesis code, new dataset


def test_toolscale_tasks_are_the_domains_not_the_bookshop(tmp_path, monkeypatch):
    monkeypatch.setenv("ORCHESTRA_CACHE", str(tmp_path))
    tasks = load_benchmark("toolscale", split=None)
    assert {t.domain for t in tasks} == set(DOMAINS) and len(tasks) == DEFAULT_TASKS_PER_DOMAIN * len(DOMAINS)
    assert default_dataset().parent == tmp_path / "toolscale"  # built in the cache, then reused


def test_run_ids_of_bare_toolscale_follow_the_dataset(monkeypatch):
    config = EvalConfig.build(benchmark="toolscale", orchestrator="scripted:oracle")
    before = config.run_id(None, 50)
    monkeypatch.setattr(dataset_module, "code_key", lambda: "edited-code")
    assert config.run_id(None, 50) != before
