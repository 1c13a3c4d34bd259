"""Local search: a FAISS index over a document corpus, and the `local_search` tool on top of it.

The paper's basic search tool retrieves passages from a fixed corpus with Qwen3-Embedding-8B (§3.1);
offline we default to all-MiniLM-L6-v2 (see `lab.tools.embedder`). Build once (`lab.tools.index_build`,
`orchestra index build`), search many times:

    index = build_index("corpus.jsonl", "runs/index", kind="hnsw")   # id, title?, text per line
    tool = LocalSearch(LocalSearchIndex.load("runs/index"), top_k=5)
    obs = await tool.execute({"query": "who founded X?"}, ToolContext(task=task))

Vectors are unit length and the index scores by inner product, so scores are cosines. `flat` is exact;
`ivf` (IVF-Flat, nlist from corpus size, trained on the corpus) and `hnsw` are approximate. An index
folder holds `index.faiss`, `docs.parquet` (row i is FAISS id i) and `manifest.json`, written last, so
a folder with a manifest is complete. This module owns that format and reopens it.

Per-task whitelists (a task's `doc_whitelist`: the documents that count for it) apply in one of two
scopes (`WhitelistScope`). `inside`, the lab's: the search runs among the allowed documents only, exactly
over their rows when few, else with a FAISS ID selector, so every allowed document can be found. `global`,
the released HLE server's (`evaluation/retrieval_hle.py` at d882ee7: `batch_search(..., num=1000)`, then
`if int(r['id']) in self.example_ids[eid]`): the index's global top 1,000, then the allowed among them, so
an allowed document ranked past 1,000 is never found and a search finds fewer (and falls back to the web
sooner, `lab.tools.paper`). When FAISS sees a GPU (`faiss-gpu`), flat and IVF indexes are searched there;
that path cannot be exercised on the CPU-only dev machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Mapping
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
#: Where a task's whitelist applies: `inside` (search among the allowed) or `global` (the global top hits, then
#: the allowed among them: the released HLE server's).
WhitelistScope = Literal["inside", "global"]
WHITELIST_SCOPES: tuple[str, ...] = ("inside", "global")
INDEX_FILE, DOCS_FILE, MANIFEST_FILE = "index.faiss", "docs.parquet", "manifest.json"
FORMAT_VERSION = 2  # 2: titles are embedded with their text
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
    docs_per_s: float = Field(0.0,
                              description="Documents embedded per second by that build (resumed ones not counted).")
    resumed_docs: int = Field(0, description="Documents whose vectors an interrupted build had committed.")
    created_at: str = ""


class Passage(BaseModel):
    """One retrieved document."""

    doc_id: str
    title: str = ""
    text: str
    score: float = Field(description="Cosine similarity to the query.")
    rank: int = Field(description="1-based rank.")


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
    def load(cls, out_dir: str | Path, embedder: EmbedderConfig | Embedder | None = None) -> LocalSearchIndex:
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


def default_local_search_spec(top_k: int = 5) -> ToolSpec:
    """The free-form tool's spec; `top_k` is what a call that names no `top_k` gets."""
    return ToolSpec(
        name="local_search",
        description="Search the local document corpus; returns the most relevant passages with ids and scores.",
        category="basic",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for, in natural language."},
                "top_k": {"type": "integer", "description": f"How many passages to return (default {top_k})."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        backend={"kind": "local_search"},
    )


class LocalSearch:
    """The `local_search` tool: dense retrieval over a `LocalSearchIndex`, free and wall-clock timed.

    `top_k` is the configured depth (toolkit `backend.top_k`; the released FRAMES search reads 150);
    `max_top_k` caps only what a caller asks for in its `top_k` argument."""

    max_top_k = 50
    max_passage_chars = 800  # long passages are cut so one call cannot flood the orchestrator's context

    #: Candidates a filtered or `global`-scope search reads before its filters (the released HLE server
    #: searches 1,000).
    filtered_candidates = 1000

    def __init__(
        self,
        index: LocalSearchIndex,
        spec: ToolSpec | None = None,
        top_k: int = 5,
        whitelists: Mapping[str, Collection[str]] | None = None,
        min_chars: int = 0,
        min_score: float | None = None,
        whitelist_scope: WhitelistScope = "inside",
    ) -> None:
        """`min_chars` / `min_score`: keep only passages longer than / scoring above these (the released HLE
        retrieval server keeps documents over 100 characters scoring over 0.1, up to its top k).
        `whitelist_scope`: where a task's whitelist applies (module docstring)."""
        if whitelist_scope not in WHITELIST_SCOPES:
            raise LabInputError(f"whitelist_scope {whitelist_scope!r}: expected one of {', '.join(WHITELIST_SCOPES)}")
        self.index, self.spec, self.top_k = index, spec or default_local_search_spec(), top_k
        self.whitelists = whitelists
        self.min_chars, self.min_score = min_chars, min_score
        self.whitelist_scope = whitelist_scope

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
            passages = await asyncio.to_thread(self._search, query, k, allowed)
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

    def _search(self, query: str, k: int, allowed: list[str] | None) -> list[Passage]:
        """The top `k` passages that pass the whitelist and the filters, ranked 1..n among those kept."""
        if allowed is not None and self.whitelist_scope == "global":
            # released HLE: the whole index's top hits first, the task's documents among them after
            permitted = set(allowed)
            candidates = [p for p in self.index.search(query, max(k, self.filtered_candidates))
                          if p.doc_id in permitted]
        elif not self.min_chars and self.min_score is None:
            return self.index.search(query, k, allowed)
        else:
            candidates = self.index.search(query, max(k, self.filtered_candidates), allowed)
        kept = [p for p in candidates if len(p.text) > self.min_chars
                and (self.min_score is None or p.score > self.min_score)][:k]
        return [p.model_copy(update={"rank": rank}) for rank, p in enumerate(kept, start=1)]

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
        k = arguments.get("top_k")
        if k is not None and not 1 <= int(k) <= self.max_top_k:
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
