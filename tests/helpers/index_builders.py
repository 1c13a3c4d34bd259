"""Two index builds into one folder, each in its own process (`tests/lab/tools/test_index_build.py`).

The processes are started with multiprocessing's `spawn` and synchronised by events only: the first build
stops in its first chunk until the second build says it is waiting for the folder's lock (the hook
`lab.tools.index_build._announce_wait`), so the second always starts while the first is mid-build.
"""

from __future__ import annotations

import hashlib
import traceback
from typing import Any

import numpy as np

from lab.tools.embedder import Embedder, EmbedderConfig

#: How long a build waits for the other process's signal before going on regardless (a safety net for a
#: broken lock, which the test then reports; never a way of ordering the two).
SIGNAL_TIMEOUT_S = 120.0


class HashEmbedder(Embedder):
    """A deterministic 8-dimensional embedder (a text's vector comes from its hash), so two processes make
    the same vectors without loading a model. `on_documents` runs before each chunk is embedded."""

    def __init__(self, on_documents: Any = None) -> None:  # no model, no worker thread
        self.config, self.dim, self.on_documents, self.embedded = EmbedderConfig.minilm(), 8, on_documents, 0

    def encode_documents(self, texts, batch_size=32, on_progress=None) -> np.ndarray:
        if self.on_documents is not None:
            self.on_documents()
        self.embedded += len(texts)
        if on_progress:
            on_progress(len(texts))
        return np.stack([self._vector(t) for t in texts])  # (n, 8)

    def encode_query(self, query: str) -> np.ndarray:
        return self._vector(query)[None, :]  # (1, 8)

    @staticmethod
    def _vector(text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
        return vector / np.linalg.norm(vector)


def first_build(corpus: str, out_dir: str, started: Any, second_waits: Any, results: Any) -> None:
    """Build, pausing in the first chunk (lock held) until the second build waits for the lock."""
    def pause() -> None:
        if not started.is_set():
            started.set()
            second_waits.wait(SIGNAL_TIMEOUT_S)

    _build("first", corpus, out_dir, HashEmbedder(pause), results)


def second_build(corpus: str, out_dir: str, second_waits: Any, results: Any) -> None:
    """Build into the same folder, signalling the moment it finds the folder locked."""
    from lab.tools import index_build

    announce = index_build._announce_wait

    def waiting(*args: Any) -> None:
        announce(*args)
        second_waits.set()

    index_build._announce_wait = waiting
    _build("second", corpus, out_dir, HashEmbedder(), results)


def _build(name: str, corpus: str, out_dir: str, embedder: HashEmbedder, results: Any) -> None:
    from lab.tools.index_build import build_index

    try:
        index = build_index(corpus, out_dir, embedder=embedder, batch_size=4, progress=True, chunk_docs=8)
        results.put((name, "ok", index.manifest.model_dump(mode="json"), embedder.embedded))
    except BaseException:  # the test reports whatever happened in this process
        results.put((name, "error", traceback.format_exc(), embedder.embedded))
