"""Tests for lab.tools.index_build.

Building an index in committed chunks: an interrupted build resumes where it stopped and ends with
the index an uninterrupted build makes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.tools.embedder import EmbedderConfig, load_embedder
from lab.tools.index_build import build_index
from lab.tools.local_search import LocalSearchIndex
from tests.helpers.search_corpus import FACTS, write_corpus

CHUNK = 8  # documents per committed chunk: the 36-document corpus makes 5 chunks


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(EmbedderConfig.minilm())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    assert write_corpus(path) == 36
    return path


def vectors(index: LocalSearchIndex) -> np.ndarray:
    return index.cpu_index.reconstruct_n(0, index.cpu_index.ntotal)  # (n, dim)


def test_an_interrupted_build_resumes_from_its_last_chunk_and_equals_a_full_build(corpus, embedder, tmp_path,
                                                                                  monkeypatch):
    full = build_index(corpus, tmp_path / "full", embedder=embedder, batch_size=4, progress=False, chunk_docs=CHUNK)
    real_encode = embedder.encode_documents
    embedded: list[int] = []

    def interrupted_on_the_third_chunk(texts, *args, **kwargs):
        if len(embedded) == 2:
            raise KeyboardInterrupt  # what Ctrl-C does mid-build
        embedded.append(len(texts))
        return real_encode(texts, *args, **kwargs)

    monkeypatch.setattr(embedder, "encode_documents", interrupted_on_the_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        build_index(corpus, tmp_path / "resumed", embedder=embedder, batch_size=4, progress=False, chunk_docs=CHUNK)
    folder = tmp_path / "resumed"
    assert sorted(p.name for p in (folder / "chunks").glob("*.npy")) == ["000000.npy", "000001.npy"]
    assert not (folder / "manifest.json").exists()  # not a usable index yet
    with pytest.raises(LabInputError, match="no local-search index here"):
        LocalSearchIndex.load(folder, embedder)

    def counted(texts, *args, **kwargs):
        embedded.append(len(texts))
        return real_encode(texts, *args, **kwargs)

    embedded.clear()
    monkeypatch.setattr(embedder, "encode_documents", counted)
    resumed = build_index(corpus, folder, embedder=embedder, batch_size=4, progress=False, chunk_docs=CHUNK)
    assert embedded == [8, 8, 4]  # only the three chunks that were never committed
    assert resumed.manifest.resumed_docs == 16 and resumed.manifest.count == full.manifest.count == 36
    assert not (folder / "chunks").exists()  # removed once the index is complete
    pd.testing.assert_frame_equal(resumed.docs, full.docs)
    np.testing.assert_allclose(vectors(resumed), vectors(full), atol=1e-6)
    for doc_id, (_, _, query) in FACTS.items():
        assert [p.doc_id for p in resumed.search(query, 5)] == [p.doc_id for p in full.search(query, 5)]
        assert resumed.search(query, 1)[0].doc_id == doc_id


def test_chunks_of_another_corpus_are_not_mixed_in(corpus, embedder, tmp_path, monkeypatch):
    other = tmp_path / "other.jsonl"
    write_corpus(other, seed=9)  # same documents, other order: every chunk's vectors differ
    real_encode = embedder.encode_documents
    calls: list[int] = []

    def interrupted(texts, *args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(len(texts))
        return real_encode(texts, *args, **kwargs)

    monkeypatch.setattr(embedder, "encode_documents", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_index(other, tmp_path / "idx", embedder=embedder, progress=False, chunk_docs=CHUNK)
    monkeypatch.setattr(embedder, "encode_documents", real_encode)
    index = build_index(corpus, tmp_path / "idx", embedder=embedder, progress=False, chunk_docs=CHUNK)
    assert index.manifest.resumed_docs == 0
    for doc_id, (_, _, query) in FACTS.items():
        assert index.search(query, 1)[0].doc_id == doc_id


def test_two_builds_into_one_folder_leave_one_complete_index_and_no_traceback(corpus, tmp_path):
    """Two processes build into one folder at once (the second starts while the first holds its first
    chunk): the second waits for the folder's lock, then reuses the index the first finished, embedding
    nothing; neither fails and the folder holds one complete index."""
    import multiprocessing

    from tests.helpers.index_builders import SIGNAL_TIMEOUT_S, HashEmbedder, first_build, second_build

    spawn = multiprocessing.get_context("spawn")
    started, second_waits, results = spawn.Event(), spawn.Event(), spawn.Queue()
    folder = tmp_path / "shared-index"
    first = spawn.Process(target=first_build, args=(str(corpus), str(folder), started, second_waits, results))
    first.start()
    assert started.wait(SIGNAL_TIMEOUT_S), "the first build never reached its first chunk"
    second = spawn.Process(target=second_build, args=(str(corpus), str(folder), second_waits, results))
    second.start()
    outcomes = {name: (status, detail, embedded) for name, status, detail, embedded in
                (results.get(timeout=2 * SIGNAL_TIMEOUT_S) for _ in range(2))}
    first.join(), second.join()
    for name, (status, detail, _) in outcomes.items():
        assert status == "ok", f"the {name} build failed:\n{detail}"
    assert second_waits.is_set(), "the second build did not wait for the first"
    (_, made, embedded_first), (_, reused, embedded_second) = outcomes["first"], outcomes["second"]
    assert embedded_first == 36 and embedded_second == 0  # the corpus was embedded once
    assert reused == made and made["count"] == 36
    assert sorted(p.name for p in folder.iterdir()) == [".build.lock", "docs.parquet", "index.faiss",
                                                        "manifest.json"]
    assert len(LocalSearchIndex.load(folder, HashEmbedder())) == 36
