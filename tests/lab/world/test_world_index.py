"""The world's search index (MiniLM, flat) and local-search recall on its multi-hop questions."""

from __future__ import annotations

import pytest

from lab.world.build import build_world, retrieval_recall
from lab.world.tasks import WorldSize


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
