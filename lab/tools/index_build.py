"""Build a local-search index folder from a corpus: validated first, embedded in committed chunks.

    index = build_index("wiki.jsonl", "runs/wiki-index")              # id, title?, text per line
    index = build_index("wiki.jsonl", "runs/wiki-index", EmbedderConfig(name="bge", path="/models/bge"))

What `orchestra index build` and the offline world both call. The folder's format (index, document
table, manifest written last) belongs to `lab.tools.local_search`, which reopens it.

Why the order of work: every line of the corpus is checked before anything is written, so a bad line
costs seconds, not an hour of embedding, and leaves no folder behind. Why chunks: embedding a
Wikipedia dump takes hours, so vectors are committed every `chunk_docs` documents to `chunks/` (each
file written under a temporary name, then renamed, so a chunk file is whole or absent). A rerun after
an interruption reloads the committed chunks and embeds only the rest; chunk boundaries and batches
are the same as an uninterrupted build's, so it makes the same vectors, and the same index. The chunk
folder is removed once the manifest is written.

Why a lock: two builds into one folder (two `orchestra index build` commands, two processes building the
offline world on first use) would write the same chunk files and remove each other's. A build holds an
exclusive `flock` on `.build.lock` in the folder from the check for a complete index to the manifest; a
second build waits for it (saying so once on stderr) and then finds the index complete and reuses it, as a
re-run would, instead of embedding the corpus a second time. The kernel drops the lock when its holder
exits, so a killed build never leaves the folder locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pandas as pd
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from lab.errors import LabInputError
from lab.tools.embedder import Embedder, EmbedderConfig, load_embedder
from lab.tools.local_search import (
    DOCS_FILE,
    FORMAT_VERSION,
    INDEX_FILE,
    MANIFEST_FILE,
    IndexKind,
    IndexManifest,
    LocalSearchIndex,
)

HNSW_M = 32  # graph degree; 32 is FAISS's usual recall/memory balance for a few hundred dims
#: Documents per committed chunk: about a minute of MiniLM on two CPU cores, what an interruption can lose.
CHUNK_DOCS = 4096
CHUNKS_DIR, CHUNKS_STATE = "chunks", "state.json"
#: The lock file a build holds in its folder (`build_lock`).
LOCK_FILE = ".build.lock"


# ---------------------------------------------------------------------------------------------------
# Corpus


def read_corpus(path: str | Path) -> pd.DataFrame:
    """Documents as a frame with columns doc_id, title, text; bad rows raise naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise LabInputError(f"{path}: corpus file not found")
    if path.suffix.lower() in (".parquet", ".pq"):
        rows, unit = _parquet_rows(path), "row"
    elif path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        rows, unit = _jsonl_rows(path), "line"
    else:
        raise LabInputError(f"{path}: corpus must be .jsonl or .parquet, got '{path.suffix}'")
    ids, titles, texts, first_seen = [], [], [], {}
    for number, row in rows:
        where = f"{path}: {unit} {number}"
        if not isinstance(row, dict):
            raise LabInputError(f"{where}: expected a JSON object, got {type(row).__name__}")
        for field in ("id", "text"):
            if row.get(field) is None:
                raise LabInputError(f"{where}: missing required field '{field}'")
        doc_id, text, title = row["id"], row["text"], row.get("title") or ""
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            raise LabInputError(f"{where}: field 'id' must be a string or integer, got {doc_id!r}")
        if not isinstance(text, str) or not isinstance(title, str):
            raise LabInputError(f"{where}: fields 'text' and 'title' must be strings")
        doc_id = str(doc_id)
        if doc_id in first_seen:
            raise LabInputError(f"{where}: duplicate id '{doc_id}' (first at {unit} {first_seen[doc_id]})")
        first_seen[doc_id] = number
        ids.append(doc_id), titles.append(title), texts.append(text)
    if not ids:
        raise LabInputError(f"{path}: corpus has no documents")
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts})


def _jsonl_rows(path: Path):
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise LabInputError(f"{path}: line {number}: malformed JSON ({exc.msg})") from None


def _parquet_rows(path: Path):
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise LabInputError(f"{path}: unreadable parquet ({type(exc).__name__})") from None
    missing = [c for c in ("id", "text") if c not in frame.columns]
    if missing:
        raise LabInputError(f"{path}: missing required column '{missing[0]}'")
    frame = frame.astype(object).where(frame.notna(), None)
    yield from enumerate(frame.to_dict("records"), start=1)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def passage_texts(docs: pd.DataFrame) -> list[str]:
    """What gets embedded: the title on its own line, then the text (titles name the entity a query asks about)."""
    return [f"{title}\n{text}" if title else text for title, text in zip(docs["title"], docs["text"])]


def choose_nlist(count: int) -> int:
    """IVF cells: ~4·sqrt(n), capped so each cell gets the >= 39 training points FAISS asks for."""
    return max(1, min(int(4 * math.sqrt(count)), count // 39))


# ---------------------------------------------------------------------------------------------------
# Build


def build_index(
    corpus_path: str | Path,
    out_dir: str | Path,
    embedder: EmbedderConfig | Embedder | None = None,
    kind: IndexKind = "flat",
    batch_size: int = 32,
    nlist: int | None = None,
    nprobe: int | None = None,
    ef_search: int = 128,
    progress: bool = True,
    force: bool = False,
    chunk_docs: int = CHUNK_DOCS,
) -> LocalSearchIndex:
    """Embed a corpus and persist a FAISS index in `out_dir`, reuse the complete one already there, or
    finish the interrupted build there.

    `nlist` defaults to `choose_nlist(n)`, `nprobe` to an eighth of it (at least 8, at most nlist).
    `progress` shows a rich progress bar on stderr. `force` rebuilds from scratch even when the folder
    holds this build, complete or in part. `chunk_docs` is the commit interval.
    """
    if kind not in ("flat", "ivf", "hnsw"):
        raise LabInputError(f"index kind '{kind}': must be flat, ivf or hnsw")
    if batch_size < 1:
        raise LabInputError(f"batch_size {batch_size}: must be >= 1")
    if chunk_docs < 1:
        raise LabInputError(f"chunk_docs {chunk_docs}: must be >= 1")
    corpus_path, out_dir = Path(corpus_path), Path(out_dir)
    if not corpus_path.is_file():
        raise LabInputError(f"{corpus_path}: corpus file not found")
    if out_dir.exists() and not out_dir.is_dir():
        raise LabInputError(f"{out_dir}: is a file; the index needs a folder")
    config = embedder.config if isinstance(embedder, Embedder) else (embedder or EmbedderConfig.minilm())
    corpus_sha = file_sha256(corpus_path)
    key_fields = {"v": FORMAT_VERSION, "corpus": corpus_sha, "embedder": config.cache_key(), "kind": kind,
                  "nlist": nlist if kind == "ivf" else None, "hnsw_m": HNSW_M if kind == "hnsw" else None}
    build_key = _digest(key_fields)

    if _cached_manifest(out_dir, build_key) is not None and not force:
        return _reuse(out_dir, embedder, kind, nprobe, ef_search)
    docs = read_corpus(corpus_path)  # every line checked before anything is written
    with build_lock(out_dir, progress):
        if _cached_manifest(out_dir, build_key) is not None and not force:  # built while this build waited
            return _reuse(out_dir, embedder, kind, nprobe, ef_search)
        return _build(docs, corpus_path, out_dir, config, embedder, kind, batch_size, nlist, nprobe, ef_search,
                      progress, force, chunk_docs, corpus_sha, build_key)


@contextlib.contextmanager
def build_lock(out_dir: Path, progress: bool = True) -> Iterator[None]:
    """Hold the folder's build lock (an exclusive `flock` on `LOCK_FILE`, made with the folder) for the
    block; while another build holds it, say so once on stderr (when `progress`) and wait for it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / LOCK_FILE, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _announce_wait(out_dir, progress)
            fcntl.flock(handle, fcntl.LOCK_EX)  # blocks until the other build ends (or its process dies)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _announce_wait(out_dir: Path, progress: bool) -> None:
    """The one line a waiting build prints (a test hook too: the moment the second build is known to wait)."""
    if progress:
        Console(stderr=True).print(f"{out_dir}: another build of this index is running; waiting for it to finish")


def _reuse(out_dir: Path, embedder: EmbedderConfig | Embedder | None, kind: IndexKind, nprobe: int | None,
           ef_search: int) -> LocalSearchIndex:
    """The complete index in `out_dir`, with this call's search settings."""
    index = LocalSearchIndex.load(out_dir, embedder)
    index.nprobe = nprobe or index.nprobe
    index.ef_search = ef_search if kind == "hnsw" else index.ef_search
    return index


def _build(docs: pd.DataFrame, corpus_path: Path, out_dir: Path, config: EmbedderConfig,
           embedder: EmbedderConfig | Embedder | None, kind: IndexKind, batch_size: int, nlist: int | None,
           nprobe: int | None, ef_search: int, progress: bool, force: bool, chunk_docs: int, corpus_sha: str,
           build_key: str) -> LocalSearchIndex:
    """Embed (resuming committed chunks), index and persist; the caller holds the folder's build lock."""
    model = embedder if isinstance(embedder, Embedder) else load_embedder(config)
    # the vectors do not depend on the index kind: an interrupted flat build resumes as an hnsw one
    chunks_key = _digest({"v": FORMAT_VERSION, "corpus": corpus_sha, "embedder": config.cache_key(),
                          "chunk_docs": chunk_docs})
    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("embedding", total=len(docs))
        chunks = _ChunkFolder(out_dir / CHUNKS_DIR, chunks_key, chunk_docs, model.dim, fresh=force)
        vectors, resumed = _embed_in_chunks(model, passage_texts(docs), chunks, batch_size, bar, task)  # (n, dim)
        bar.update(task, description="indexing")
        faiss_index, shape = _make_faiss_index(vectors, kind, nlist, nprobe, ef_search)
    seconds = time.perf_counter() - started

    manifest = IndexManifest(
        build_key=build_key, embedder=config, dim=model.dim, kind=kind, corpus_path=str(corpus_path),
        corpus_sha256=corpus_sha, count=len(docs), build_seconds=round(seconds, 3),
        docs_per_s=round((len(docs) - resumed) / max(seconds, 1e-9), 1), resumed_docs=resumed,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), **shape,
    )
    _persist(out_dir, faiss_index, docs, manifest)
    shutil.rmtree(chunks.folder)  # the index holds the vectors now
    return LocalSearchIndex(faiss_index, docs, manifest, model, out_dir)


def _digest(fields: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _cached_manifest(out_dir: Path, build_key: str) -> IndexManifest | None:
    if not all((out_dir / name).is_file() for name in (INDEX_FILE, DOCS_FILE, MANIFEST_FILE)):
        return None
    try:
        manifest = IndexManifest.model_validate_json((out_dir / MANIFEST_FILE).read_text())
    except (ValidationError, ValueError):
        return None  # an old or damaged manifest is rebuilt, not trusted
    return manifest if manifest.build_key == build_key else None


class _ChunkFolder:
    """Committed chunk vectors of one build: `{i:06d}.npy` for documents [i*chunk_docs, (i+1)*chunk_docs).

    `state.json` names the build the chunks belong to; a folder left by another build (other corpus,
    embedder or chunk size) is emptied rather than mixed in."""

    def __init__(self, folder: Path, key: str, chunk_docs: int, dim: int, fresh: bool) -> None:
        self.folder, self.chunk_docs, self.dim = folder, chunk_docs, dim
        state = {"key": key, "chunk_docs": chunk_docs, "dim": dim}
        try:
            previous = json.loads((folder / CHUNKS_STATE).read_text())
        except (OSError, ValueError):
            previous = None
        if fresh or previous != state:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            _write_atomic(folder / CHUNKS_STATE, lambda fh: fh.write(json.dumps(state).encode()))

    def path(self, number: int) -> Path:
        return self.folder / f"{number:06d}.npy"

    def load(self, number: int, rows: int) -> np.ndarray | None:
        """The committed vectors of chunk `number`, or None when it was not committed. Shape (rows, dim)."""
        try:
            vectors = np.load(self.path(number))
        except (OSError, ValueError):
            return None
        return vectors if vectors.shape == (rows, self.dim) and vectors.dtype == np.float32 else None

    def commit(self, number: int, vectors: np.ndarray) -> None:
        _write_atomic(self.path(number), lambda fh: np.save(fh, vectors))


def _write_atomic(path: Path, write) -> None:
    """Write under a temporary name, flush to disk, then rename: the file is whole or absent."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _embed_in_chunks(model: Embedder, texts: list[str], chunks: _ChunkFolder, batch_size: int, bar: Any,
                     task: Any) -> tuple[np.ndarray, int]:
    """All vectors (n, dim), committed chunk by chunk, and how many documents came from earlier commits;
    `task` of the rich progress `bar` counts documents."""
    out = np.empty((len(texts), model.dim), dtype=np.float32)
    starts = range(0, len(texts), chunks.chunk_docs)
    missing, resumed = [], 0
    for number, start in enumerate(starts):
        rows = min(chunks.chunk_docs, len(texts) - start)
        committed = chunks.load(number, rows)
        if committed is None:
            missing.append((number, start, rows))
        else:
            out[start : start + rows] = committed
            resumed += rows
    if resumed:
        bar.update(task, completed=resumed, description=f"embedding (resumed at {resumed:,})")
    for number, start, rows in missing:
        part = texts[start : start + rows]
        vectors = model.encode_documents(part, batch_size, on_progress=lambda n: bar.advance(task, n))
        chunks.commit(number, vectors)
        out[start : start + rows] = vectors
    return out, resumed


def _make_faiss_index(
    vectors: np.ndarray, kind: IndexKind, nlist: int | None, nprobe: int | None, ef_search: int
) -> tuple[faiss.Index, dict[str, Any]]:
    """Build on CPU (always serialisable); returns the index and its shape fields for the manifest."""
    dim, count = vectors.shape[1], vectors.shape[0]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
        shape: dict[str, Any] = {}
    elif kind == "ivf":
        nlist = min(nlist or choose_nlist(count), count)
        index = faiss.index_factory(dim, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)  # k-means over the corpus itself gives the cell centroids
        shape = {"nlist": nlist, "nprobe": min(nlist, nprobe or max(8, nlist // 8))}
    else:
        index = faiss.index_factory(dim, f"HNSW{HNSW_M}", faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 200  # a better graph for a one-off cost at build time
        shape = {"ef_search": ef_search}
    index.add(vectors)
    return index, shape


def _persist(out_dir: Path, index: faiss.Index, docs: pd.DataFrame, manifest: IndexManifest) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST_FILE).unlink(missing_ok=True)  # the folder is incomplete until the manifest returns
    faiss.write_index(index, str(out_dir / f"{INDEX_FILE}.tmp"))
    os.replace(out_dir / f"{INDEX_FILE}.tmp", out_dir / INDEX_FILE)
    docs.to_parquet(out_dir / DOCS_FILE, index=False)
    (out_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2))
