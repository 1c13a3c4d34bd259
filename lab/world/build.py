"""Build, cache and load the offline world: corpus, tasks, bookshop database and search index.

    from lab.world.build import build_world, retrieval_recall
    world = build_world(seed=0)                  # ~1-2 min the first time on 2 cores, instant after
    world.select(family="frames", split="test")  # tasks
    world.doc("person-0042").text                # corpus lookup
    retrieval_recall(world, k=5)                 # how well local search finds the support documents

The world is a pure function of (`WORLD_VERSION`, seed, size): bump `WORLD_VERSION` whenever a
generator changes what it writes, so stale caches are never reused. A cache folder is complete when
its `manifest.json` exists (written last) and matches version, seed and size. The default folder is
`$ORCHESTRA_CACHE/world/v{VERSION}-seed{SEED}` (`$ORCHESTRA_CACHE` defaults to
`~/.cache/orchestra-lab`). Every build self-checks: each reference program runs in a fresh Python
process and must print its task's answer, multi-hop evidence must occur in the support documents, and
golden bookshop actions must be accepted by the shop.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lab.errors import LabInputError
from lab.world.bookshop import make_db
from lab.world.corpus import Document, make_graph, render_corpus
from lab.world.names import NameForge
from lab.world.selfcheck import self_check
from lab.world.task import WorldTask
from lab.world.tasks import FAMILIES, WorldSize, make_tasks
from lab.world.wrong_programs import verified_wrong_programs

WORLD_VERSION = "3"  # 2: verified wrong programs in hle task meta; 3: a validation split carved from train
CORPUS_FILE, DB_FILE, MANIFEST_FILE, INDEX_DIR = "corpus.jsonl", "bookshop_db.json", "manifest.json", "index"


def cache_root() -> Path:
    return Path(os.environ.get("ORCHESTRA_CACHE") or Path.home() / ".cache" / "orchestra-lab")


def default_dir(seed: int = 0, size: WorldSize | None = None) -> Path:
    return cache_root() / "world" / f"v{WORLD_VERSION}-seed{seed}{(size or WorldSize()).tag()}"


class World:
    """A built world on disk, loaded: documents by id, tasks, the shop database and the index folder."""

    def __init__(self, root: Path, manifest: dict[str, Any], docs: list[Document], tasks: list[WorldTask],
                 db: dict[str, Any], reused: bool = False) -> None:
        self.root, self.manifest, self.docs, self.tasks, self.db = root, manifest, docs, tasks, db
        self.reused = reused  # True when build_world found a complete cache and did not regenerate
        self._by_id = {d.id: d for d in docs}

    @property
    def index_dir(self) -> Path | None:
        return self.root / INDEX_DIR if self.manifest.get("index", {}).get("built") else None

    def doc(self, doc_id: str) -> Document:
        if doc_id not in self._by_id:
            raise LabInputError(f"world {self.root}: no document '{doc_id}'")
        return self._by_id[doc_id]

    def select(self, family: str | None = None, split: str | None = None, domain: str | None = None) -> list[WorldTask]:
        return [t for t in self.tasks if (family is None or t.family == family)
                and (split is None or t.split == split) and (domain is None or t.domain == domain)]

    def task(self, task_id: str) -> WorldTask:
        for t in self.tasks:
            if t.task_id == task_id:
                return t
        raise LabInputError(f"world {self.root}: no task '{task_id}'")


def generate(seed: int = 0, size: WorldSize | None = None) -> tuple[list[Document], list[WorldTask], dict]:
    """The world's content in memory, a pure function of seed and size."""
    size = size or WorldSize()
    rng = random.Random(seed)
    forge = NameForge(rng)  # one name registry for corpus and shop, so no name means two things
    graph = make_graph(size.n_docs, rng, forge)
    docs = render_corpus(graph, rng, forge)
    db = make_db(size.n_customers, rng, forge)
    tasks = make_tasks(graph, db, size, seed, forge)
    return docs, with_wrong_programs(tasks), db


def with_wrong_programs(tasks: list[WorldTask]) -> list[WorldTask]:
    """Computational tasks with `meta["wrong_programs"]`: what a simulated coder writes when it slips."""
    wrong = verified_wrong_programs(tasks)
    return [t.model_copy(update={"meta": {**t.meta, "wrong_programs": wrong[t.task_id]}}) if t.task_id in wrong else t
            for t in tasks]


def _write(root: Path, docs: list[Document], tasks: list[WorldTask], db: dict) -> dict[str, str]:
    """Write content files; returns relative path -> sha256 (the manifest's content record)."""
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    files = {CORPUS_FILE: "".join(d.model_dump_json() + "\n" for d in docs), DB_FILE: json.dumps(db, sort_keys=True)}
    for family in FAMILIES:
        files[f"tasks/{family}.jsonl"] = "".join(t.model_dump_json() + "\n" for t in tasks if t.family == family)
    for rel, text in files.items():
        (root / rel).write_text(text)
    return {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in files.items()}


def _counts(docs: list[Document], tasks: list[WorldTask]) -> dict[str, Any]:
    per: dict[str, dict[str, int]] = {}
    domains: dict[str, int] = {}
    for t in tasks:
        per.setdefault(t.family, {"train": 0, "validation": 0, "test": 0})[t.split] += 1
        domains[f"{t.family}/{t.domain}"] = domains.get(f"{t.family}/{t.domain}", 0) + 1
    return {"documents": len(docs), "tasks": per, "domains": dict(sorted(domains.items())), "total_tasks": len(tasks)}


def _build_search_index(corpus_path: Path, out_dir: Path, progress: bool) -> None:
    """The one place the world calls local search: a flat (exact) MiniLM index over the corpus."""
    from lab.tools.index_build import build_index

    build_index(corpus_path, out_dir, kind="flat", progress=progress)


def build_world(out_dir: str | Path | None = None, seed: int = 0, force: bool = False, progress: bool = True,
                size: WorldSize | None = None, index: bool = True) -> World:
    """Build the world into `out_dir` (default: the cache folder), or reuse a complete build there."""
    size = size or WorldSize()
    root = Path(out_dir) if out_dir else default_dir(seed, size)
    existing = _read_manifest(root)
    if existing and not force and _matches(existing, seed, size):
        if index and not existing["index"]["built"]:  # content is cached; only the index is missing
            _stage(progress, "search index", lambda: _build_search_index(root / CORPUS_FILE,
                                                                         root / INDEX_DIR, progress))
            existing["index"] = {"built": True, "dir": INDEX_DIR, "kind": "flat"}
            (root / MANIFEST_FILE).write_text(json.dumps(existing, indent=2))
        return load_world(root, seed=seed, size=size, reused=True)

    started = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST_FILE).unlink(missing_ok=True)  # an interrupted rebuild must not look complete
    docs, tasks, db = _stage(progress, "corpus and tasks", lambda: generate(seed, size))
    problems = _stage(progress, "self-check (runs every reference program)", lambda: self_check(docs, tasks, db))
    if problems:
        raise RuntimeError(f"world self-check failed ({len(problems)} problems), first: {problems[0]}")
    hashes = _write(root, docs, tasks, db)
    if index:
        _stage(progress, "search index", lambda: _build_search_index(root / CORPUS_FILE, root / INDEX_DIR, progress))
    manifest = {
        "version": WORLD_VERSION, "seed": seed, "size": size.model_dump(), "counts": _counts(docs, tasks),
        "content_hash": hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest(),
        "files": hashes, "index": {"built": index, "dir": INDEX_DIR, "kind": "flat"},
        "build_seconds": round(time.perf_counter() - started, 2),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (root / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))  # last: marks the folder complete
    return World(root, manifest, docs, tasks, db, reused=False)


def load_world(out_dir: str | Path | None = None, seed: int = 0, size: WorldSize | None = None,
               reused: bool = True) -> World:
    """Load a built world; raises `LabInputError` naming the folder when there is none."""
    root = Path(out_dir) if out_dir else default_dir(seed, size)
    manifest = _read_manifest(root)
    if manifest is None:
        raise LabInputError(f"{root}: no built world here ({MANIFEST_FILE} missing); run `orchestra world build`")
    docs = [Document.model_validate_json(line) for line in (root / CORPUS_FILE).read_text().splitlines()]
    tasks = [WorldTask.model_validate_json(line) for family in FAMILIES
             for line in (root / "tasks" / f"{family}.jsonl").read_text().splitlines()]
    db = json.loads((root / DB_FILE).read_text())
    return World(root, manifest, docs, tasks, db, reused=reused)


def _read_manifest(root: Path) -> dict[str, Any] | None:
    try:
        return json.loads((root / MANIFEST_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _matches(manifest: dict[str, Any], seed: int, size: WorldSize) -> bool:
    return (manifest.get("version") == WORLD_VERSION and manifest.get("seed") == seed
            and manifest.get("size") == size.model_dump())


def _stage(progress: bool, label: str, fn):
    """Run one build stage, with a rich spinner when `progress` is on."""
    if not progress:
        return fn()
    from rich.console import Console

    with Console(stderr=True).status(f"world: {label}..."):
        return fn()


def retrieval_recall(world: World, k: int = 5, split: str | None = None) -> dict[str, float]:
    """Recall@k of local search over the multi-hop tasks' support documents.

    `question`: fraction of support docs in the top-k when searching with the question alone (the first
    hop's entity is named, later hops are not, so this is well below 1 for 3-4 hop questions).
    `first_hop`: fraction of questions whose first support doc is in that top-k.
    `per_hop`: fraction of support docs found by their own hop query (entity reached so far + relation),
    which is what an orchestrator searching step by step issues.
    """
    if world.index_dir is None:
        raise LabInputError(f"world {world.root}: built without a search index; rebuild with the index")
    from lab.tools.local_search import LocalSearchIndex

    index = LocalSearchIndex.load(world.index_dir)
    tasks = world.select(family="frames", split=split)
    hops = [(q, d) for t in tasks for q, d in zip(t.meta["hop_queries"], t.meta["hop_doc_ids"])]
    # Queries are embedded in one batch (same vectors as `index.search`, far fewer model calls).
    prefix = index.embedder.config.query_prefix
    vectors = index.embedder.encode_documents([prefix + t.question for t in tasks] + [prefix + q for q, _ in hops])

    def top(row: int) -> set[str]:
        return {p.doc_id for p in index.search_vector(vectors[row : row + 1], k)}

    q_hits = q_total = first = 0
    for row, task in enumerate(tasks):
        found = top(row)
        q_hits += sum(d in found for d in task.support_doc_ids)
        q_total += len(task.support_doc_ids)
        first += task.support_doc_ids[0] in found
    hop_hits = sum(doc_id in top(len(tasks) + i) for i, (_, doc_id) in enumerate(hops))
    n = max(len(tasks), 1)
    return {"tasks": len(tasks), "k": k, "question": q_hits / max(q_total, 1), "first_hop": first / n,
            "per_hop": hop_hits / max(len(hops), 1)}
