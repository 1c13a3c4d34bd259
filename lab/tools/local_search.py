"""Local search: a FAISS index over a document corpus, and the `local_search` tool on top of it.

The paper's basic search tool retrieves passages from a fixed corpus with Qwen3-Embedding-8B (§3.1);
offline we default to all-MiniLM-L6-v2 (see `lab.tools.embedder`). Build once, search many times:

    index = build_index("corpus.jsonl", "runs/index", kind="hnsw")   # id, title?, text per line
    tool = LocalSearch(LocalSearchIndex.load("runs/index"), top_k=5)
    obs = await tool.execute({"query": "who founded X?"}, ToolContext(task=task))

Vectors are unit length and the index scores by inner product, so scores are cosines. `flat` is exact;
`ivf` (IVF-Flat, nlist from corpus size, trained on the corpus) and `hnsw` are approximate. An index
folder holds `index.faiss`, `docs.parquet` (row i is FAISS id i) and `manifest.json`, written last, so
a folder with a manifest is complete. A rebuild whose build key (corpus bytes, embedder, kind, index
shape) matches the manifest reuses the folder instead of re-embedding.

Per-task whitelists (FRAMES-style tasks restrict which documents count) are searched exactly over the
allowed rows when few, else with a FAISS ID selector. When FAISS sees a GPU (`faiss-gpu`), flat and IVF
indexes are searched there; that path cannot be exercised on the CPU-only dev machine.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import time
from collections.abc import Collection, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, ValidationError

from lab.errors import LabInputError
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.tools.embedder import Embedder, EmbedderConfig, load_embedder
from lab.toolspec import ToolSpec

IndexKind = Literal["flat", "ivf", "hnsw"]
INDEX_FILE, DOCS_FILE, MANIFEST_FILE = "index.faiss", "docs.parquet", "manifest.json"
FORMAT_VERSION = 2  # 2: titles are embedded with their text
HNSW_M = 32  # graph degree; 32 is FAISS's usual recall/memory balance for a few hundred dims
GPU_MAX_K = 2048  # FAISS GPU search returns at most this many neighbours


class IndexManifest(BaseModel):
    """What an index folder holds and how it was built; `build_key` decides cache reuse."""

    version: int = FORMAT_VERSION
    build_key: str = Field(description="sha256 over corpus bytes, embedder, kind and index shape.")
    embedder: EmbedderConfig
    dim: int = Field(description="Vector width.")
    kind: IndexKind
    corpus_path: str
    corpus_sha256: str
    count: int = Field(description="Documents indexed.")
    nlist: int | None = Field(None, description="IVF cells (ivf only).")
    nprobe: int | None = Field(None, description="IVF cells visited per query (ivf only).")
    ef_search: int | None = Field(None, description="HNSW candidate list size per query (hnsw only).")
    build_seconds: float = Field(0.0, description="Wall clock of embedding plus indexing.")
    docs_per_s: float = Field(0.0, description="Indexing throughput of that build.")
    created_at: str = ""


class Passage(BaseModel):
    """One retrieved document."""

    doc_id: str
    title: str = ""
    text: str
    score: float = Field(description="Cosine similarity to the query.")
    rank: int = Field(description="1-based rank.")


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
    for number, row in enumerate(frame.to_dict("records"), start=1):
        yield number, row


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
# Build and load


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
) -> "LocalSearchIndex":
    """Embed a corpus and persist a FAISS index in `out_dir`, or reuse the one already there.

    `nlist` defaults to `choose_nlist(n)`, `nprobe` to an eighth of it (at least 8, at most nlist).
    `progress` shows a rich progress bar on stderr. `force` rebuilds even when the cache matches.
    """
    if kind not in ("flat", "ivf", "hnsw"):
        raise LabInputError(f"index kind '{kind}': must be flat, ivf or hnsw")
    if batch_size < 1:
        raise LabInputError(f"batch_size {batch_size}: must be >= 1")
    corpus_path, out_dir = Path(corpus_path), Path(out_dir)
    if not corpus_path.is_file():
        raise LabInputError(f"{corpus_path}: corpus file not found")
    config = embedder.config if isinstance(embedder, Embedder) else (embedder or EmbedderConfig.minilm())
    corpus_sha = file_sha256(corpus_path)
    key_fields = {"v": FORMAT_VERSION, "corpus": corpus_sha, "embedder": config.cache_key(), "kind": kind,
                  "nlist": nlist if kind == "ivf" else None, "hnsw_m": HNSW_M if kind == "hnsw" else None}
    build_key = hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()

    cached = _cached_manifest(out_dir, build_key)
    if cached is not None and not force:
        index = LocalSearchIndex.load(out_dir, embedder)
        index.nprobe = nprobe or index.nprobe
        index.ef_search = ef_search if kind == "hnsw" else index.ef_search
        return index

    docs = read_corpus(corpus_path)
    model = embedder if isinstance(embedder, Embedder) else load_embedder(config)
    started = time.perf_counter()
    vectors = _embed_with_progress(model, passage_texts(docs), batch_size, progress)  # (n, dim)
    faiss_index, shape = _make_faiss_index(vectors, kind, nlist, nprobe, ef_search)
    seconds = time.perf_counter() - started

    manifest = IndexManifest(
        build_key=build_key, embedder=config, dim=model.dim, kind=kind, corpus_path=str(corpus_path),
        corpus_sha256=corpus_sha, count=len(docs), build_seconds=round(seconds, 3),
        docs_per_s=round(len(docs) / max(seconds, 1e-9), 1),
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), **shape,
    )
    _persist(out_dir, faiss_index, docs, manifest)
    return LocalSearchIndex(faiss_index, docs, manifest, model, out_dir)


def _cached_manifest(out_dir: Path, build_key: str) -> IndexManifest | None:
    if not all((out_dir / name).is_file() for name in (INDEX_FILE, DOCS_FILE, MANIFEST_FILE)):
        return None
    try:
        manifest = IndexManifest.model_validate_json((out_dir / MANIFEST_FILE).read_text())
    except (ValidationError, ValueError):
        return None  # an old or damaged manifest is rebuilt, not trusted
    return manifest if manifest.build_key == build_key else None


def _embed_with_progress(model: Embedder, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("embed", total=len(texts))
        return model.encode_documents(texts, batch_size, on_progress=lambda n: bar.advance(task, n))


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


class LocalSearchIndex:
    """A loaded index: FAISS vectors, the document table and the embedder that made them."""

    #: Whitelists up to this size are scored exactly over their own vectors; larger ones use FAISS
    #: ID selectors (approximate for ivf/hnsw, like unrestricted search).
    exact_whitelist_max = 10_000

    def __init__(
        self, index: faiss.Index, docs: pd.DataFrame, manifest: IndexManifest, embedder: Embedder, out_dir: Path
    ) -> None:
        self.cpu_index, self.docs, self.manifest, self.embedder = index, docs, manifest, embedder
        self.out_dir = Path(out_dir)
        self.nprobe, self.ef_search = manifest.nprobe, manifest.ef_search
        self._row_of = {doc_id: row for row, doc_id in enumerate(docs["doc_id"])}
        if manifest.kind == "ivf":
            index.make_direct_map()  # lets whitelisted search reconstruct vectors by id
        self.index, self.on_gpu = _maybe_to_gpu(index, manifest.kind, manifest.nprobe)

    @classmethod
    def load(cls, out_dir: str | Path, embedder: EmbedderConfig | Embedder | None = None) -> "LocalSearchIndex":
        """Reopen a built index; the embedder defaults to the one recorded in the manifest."""
        out_dir = Path(out_dir)
        if not (out_dir / MANIFEST_FILE).is_file():
            raise LabInputError(f"{out_dir}: no local-search index here ({MANIFEST_FILE} missing); build it first")
        try:
            manifest = IndexManifest.model_validate_json((out_dir / MANIFEST_FILE).read_text())
        except ValidationError as exc:
            raise LabInputError(f"{out_dir / MANIFEST_FILE}: invalid manifest ({exc.errors()[0]['msg']})") from None
        config = embedder.config if isinstance(embedder, Embedder) else (embedder or manifest.embedder)
        if config.cache_key() != manifest.embedder.cache_key():
            raise LabInputError(
                f"{out_dir}: index was built with embedder '{manifest.embedder.name}', not '{config.name}'"
            )
        model = embedder if isinstance(embedder, Embedder) else load_embedder(config)
        index = faiss.read_index(str(out_dir / INDEX_FILE))
        docs = pd.read_parquet(out_dir / DOCS_FILE)
        return cls(index, docs, manifest, model, out_dir)

    def __len__(self) -> int:
        return len(self.docs)

    def search(self, query: str, k: int = 5, allowed: Collection[str] | None = None) -> list[Passage]:
        """Top-k passages for a query, optionally only among `allowed` doc ids (unknown ids are ignored)."""
        return self.search_vector(self.embedder.encode_query(query), k, allowed)

    def search_vector(self, query: np.ndarray, k: int, allowed: Collection[str] | None = None) -> list[Passage]:
        """Top-k for an embedded query of shape (1, dim)."""
        if allowed is None:
            scores, rows = self._search(query, min(k, len(self)), None)
        else:
            ids = np.array(sorted({self._row_of[d] for d in allowed if d in self._row_of}), dtype=np.int64)
            if ids.size == 0:
                return []
            if ids.size <= self.exact_whitelist_max:
                scores, rows = self._exact(query, ids, k)
            else:
                scores, rows = self._search(query, min(k, ids.size), ids)
        return [self._passage(int(r), float(s), rank) for rank, (s, r) in enumerate(zip(scores, rows), start=1)]

    def _exact(self, query: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        vectors = self.cpu_index.reconstruct_batch(ids)  # (m, dim)
        scores = vectors @ query[0]  # (m,)
        order = np.argsort(-scores, kind="stable")[:k]
        return scores[order], ids[order]

    def _search(self, query: np.ndarray, k: int, ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if self.on_gpu:
            # GPU indexes take no ID selector: over-fetch, then filter on the host.
            fetch = min(len(self), GPU_MAX_K) if ids is not None else k
            scores, rows = self.index.search(query, fetch)
            keep = rows[0] >= 0 if ids is None else np.isin(rows[0], ids)
            return scores[0][keep][:k], rows[0][keep][:k]
        selector = faiss.IDSelectorBatch(ids) if ids is not None else None
        if self.manifest.kind == "ivf":
            # With a selector every cell is visited, so allowed documents in far cells still count.
            nprobe = self.manifest.nlist if ids is not None else self.nprobe
            params = faiss.SearchParametersIVF(sel=selector, nprobe=int(nprobe or 1))
        elif self.manifest.kind == "hnsw":
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=int(max(self.ef_search or 64, k)))
        else:
            params = faiss.SearchParameters(sel=selector) if selector is not None else None
        scores, rows = self.index.search(query, k, params=params)
        keep = rows[0] >= 0  # FAISS pads with -1 when fewer than k results pass
        return scores[0][keep], rows[0][keep]

    def _passage(self, row: int, score: float, rank: int) -> Passage:
        doc = self.docs.iloc[row]
        return Passage(doc_id=doc["doc_id"], title=doc["title"], text=doc["text"], score=score, rank=rank)


def _maybe_to_gpu(index: faiss.Index, kind: str, nprobe: int | None) -> tuple[faiss.Index, bool]:
    """Search flat/IVF on all GPUs when faiss-gpu sees one (HNSW has no GPU version). Untested on CPU."""
    if kind == "hnsw" or not hasattr(faiss, "index_cpu_to_all_gpus") or faiss.get_num_gpus() == 0:
        return index, False
    gpu_index = faiss.index_cpu_to_all_gpus(index)
    if kind == "ivf":
        faiss.GpuParameterSpace().set_index_parameter(gpu_index, "nprobe", int(nprobe or 1))
    return gpu_index, True


# ---------------------------------------------------------------------------------------------------
# The tool


def default_local_search_spec() -> ToolSpec:
    return ToolSpec(
        name="local_search",
        description="Search the local document corpus; returns the most relevant passages with ids and scores.",
        category="basic",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for, in natural language."},
                "top_k": {"type": "integer", "description": "How many passages to return (default 5)."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        backend={"kind": "local_search"},
    )


class LocalSearch:
    """The `local_search` tool: dense retrieval over a `LocalSearchIndex`, free and wall-clock timed."""

    max_top_k = 50
    max_passage_chars = 800  # long passages are cut so one call cannot flood the orchestrator's context

    def __init__(
        self,
        index: LocalSearchIndex,
        spec: ToolSpec | None = None,
        top_k: int = 5,
        whitelists: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.index, self.spec, self.top_k = index, spec or default_local_search_spec(), top_k
        self.whitelists = whitelists

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        started = time.perf_counter()
        problem = validate_arguments(self.spec, arguments)
        if problem is None:
            problem = self._check_values(arguments)
        if problem:
            return Observation.failure(problem, latency_s=time.perf_counter() - started)
        query, k = arguments["query"].strip(), int(arguments.get("top_k", self.top_k))
        allowed = self.whitelist_for(context)
        try:
            # Embedding is CPU-bound; a thread keeps the event loop serving other rollouts.
            passages = await asyncio.to_thread(self.index.search, query, k, allowed)
        except Exception as exc:  # a failing backend is an observation, not a crashed rollout
            return Observation.failure(
                f"tool '{self.spec.name}': search failed ({type(exc).__name__}: {exc})",
                latency_s=time.perf_counter() - started,
            )
        return Observation(
            text=self._format(query, passages, restricted=allowed is not None),
            latency_s=time.perf_counter() - started,
            meta={"doc_ids": [p.doc_id for p in passages], "scores": [round(p.score, 6) for p in passages],
                  "documents": [f"{p.title}: {p.text}" if p.title else p.text for p in passages]},
        )

    def whitelist_for(self, context: ToolContext | None) -> list[str] | None:
        """Allowed doc ids: the task's `doc_whitelist` (attribute, key or meta key), else this tool's map."""
        if context is None:
            return None
        task = context.task
        for source in (task, _lookup(task, "meta")):
            ids = _lookup(source, "doc_whitelist")
            if ids is not None:
                return [str(i) for i in ids]
        if self.whitelists is not None and context.task_id in self.whitelists:
            return [str(i) for i in self.whitelists[context.task_id]]
        return None

    def _check_values(self, arguments: dict[str, Any]) -> str | None:
        if not arguments["query"].strip():
            return f"tool '{self.spec.name}': argument 'query' is empty"
        k = arguments.get("top_k", self.top_k)
        if not 1 <= int(k) <= self.max_top_k:
            return f"tool '{self.spec.name}': argument 'top_k' must be between 1 and {self.max_top_k}, got {k}"
        return None

    def _format(self, query: str, passages: list[Passage], restricted: bool) -> str:
        if not passages:
            scope = " among this task's allowed documents" if restricted else ""
            return f'No passages found for "{query}"{scope}.'
        lines = [f'Top {len(passages)} passages for "{query}":']
        for p in passages:
            text = p.text if len(p.text) <= self.max_passage_chars else p.text[: self.max_passage_chars] + " ..."
            title = f" | {p.title}" if p.title else ""
            lines.append(f"[{p.rank}] doc_id={p.doc_id}{title} | score={p.score:.3f}\n{text}")
        return "\n\n".join(lines)


def _lookup(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)
