"""Tests for lab.tools.local_search.

LocalSearch over a synthetic corpus with the bundled MiniLM: retrieval, persistence, cache, whitelists.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from pathlib import Path

import faiss
import numpy as np
import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.tools import index_build
from lab.tools.base import Tool, ToolContext
from lab.tools.embedder import EmbedderConfig, load_embedder
from lab.tools.index_build import build_index, choose_nlist, read_corpus
from lab.tools.local_search import LocalSearch, LocalSearchIndex
from lab.world.task import WorldTask

# Distinctive facts and a query for each; the rest of the corpus is look-alike filler.
FACTS = {  # doc id -> (title, text, query)
    "fact-lighthouse": (
        "Varnholm Lighthouse",
        "The Varnholm lighthouse was painted crimson in 1874 by keeper Edda Lindqvist.",
        "Who painted the Varnholm lighthouse crimson?",
    ),
    "fact-volcano": (
        "Mount Teskari",
        "Mount Teskari is a dormant volcano whose last eruption buried the village of Orum in 1612.",
        "Which village did the Teskari volcano bury?",
    ),
    "fact-chess": (
        "Chess prodigy",
        "Ilse Marwen became a chess grandmaster at age thirteen after beating the champion in Zagreb.",
        "At what age did Ilse Marwen become a chess grandmaster?",
    ),
    "fact-bridge": (
        "Kolvik Bridge",
        "The Kolvik suspension bridge spans 1,420 metres and opened to traffic in 1967.",
        "How long is the Kolvik suspension bridge?",
    ),
    "fact-orchid": (
        "Blue orchid",
        "The ghost-blue orchid blooms only once every seven years in the cloud forests of Tarapo.",
        "How often does the ghost-blue orchid bloom?",
    ),
}
TOWNS = ["Ashford", "Belmar", "Corrin", "Dunmore", "Elsby", "Farrow", "Glenholt", "Harwick", "Islay", "Jorvik"]
TOPICS = [
    ("market", "The weekly market in {t} sells {x} and draws traders from nearby valleys."),
    ("school", "The primary school of {t} teaches {n} pupils and was rebuilt after a storm."),
    ("river", "The river through {t} floods in spring, and the council built {n} new levees."),
    ("festival", "Every autumn {t} holds a festival with music, {x} and a parade of boats."),
    ("railway", "The railway station at {t} opened with {n} platforms serving the coastal line."),
    ("library", "The public library in {t} keeps {n} books and a collection of old maps of {x}."),
]
GOODS = ["apples", "wool", "cheese", "pottery", "honey", "timber", "fish", "lace"]


def write_corpus(path, n_filler: int = 195, seed: int = 7) -> None:
    rng = random.Random(seed)
    rows = [{"id": doc_id, "title": title, "text": text} for doc_id, (title, text, _) in FACTS.items()]
    for i in range(n_filler):
        topic, template = rng.choice(TOPICS)
        town = rng.choice(TOWNS)
        text = template.format(t=town, x=rng.choice(GOODS), n=rng.randint(2, 900))
        rows.append({"id": f"doc-{i:04d}", "title": f"{town} {topic}", "text": text})
    rng.shuffle(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(EmbedderConfig.minilm())  # loaded once; every build below shares it


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    write_corpus(path)
    return path


@pytest.fixture(scope="module")
def flat(corpus, embedder, tmp_path_factory):
    return build_index(corpus, tmp_path_factory.mktemp("flat"), embedder=embedder, kind="flat")


def test_flat_index_ranks_the_fact_first_and_records_its_build(flat):
    for doc_id, (_, _, query) in FACTS.items():
        hits = flat.search(query, k=5)
        assert hits[0].doc_id == doc_id, (query, [h.doc_id for h in hits])
        assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
        assert -1.0 <= hits[-1].score <= hits[0].score <= 1.0 + 1e-5  # cosine on unit vectors
    manifest = json.loads((flat.out_dir / "manifest.json").read_text())
    assert manifest["count"] == 200 and manifest["dim"] == 384 and manifest["kind"] == "flat"
    assert manifest["embedder"]["name"] == "all-MiniLM-L6-v2" and len(manifest["corpus_sha256"]) == 64
    assert manifest["docs_per_s"] > 0
    print(f"\nindexing throughput: {manifest['docs_per_s']} docs/s ({manifest['count']} docs)")


@pytest.fixture(scope="module")
def approximate(corpus, embedder, tmp_path_factory):
    """The IVF and HNSW indexes over the shared corpus, built once for the module."""
    return {
        kind: build_index(corpus, tmp_path_factory.mktemp(kind), embedder=embedder, kind=kind, progress=False)
        for kind in ("ivf", "hnsw")
    }


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_indexes_find_the_fact_in_top5(approximate, kind):
    index = approximate[kind]
    assert index.manifest.kind == kind and index.cpu_index.ntotal == 200
    if kind == "ivf":
        assert index.manifest.nlist == choose_nlist(200) == 5 and index.cpu_index.is_trained
        assert 1 <= index.nprobe <= index.manifest.nlist
    else:
        assert index.ef_search == 128
    for doc_id, (_, _, query) in FACTS.items():
        assert doc_id in [h.doc_id for h in index.search(query, k=5)], query


def test_reload_gives_identical_results(flat, embedder):
    reloaded = LocalSearchIndex.load(flat.out_dir, embedder)
    for _, _, query in FACTS.values():
        before, after = flat.search(query, k=8), reloaded.search(query, k=8)
        assert [h.doc_id for h in before] == [h.doc_id for h in after]
        np.testing.assert_allclose([h.score for h in before], [h.score for h in after], rtol=1e-6)


def test_second_build_reuses_the_persisted_index(flat, corpus, embedder, monkeypatch):
    names = ("index.faiss", "docs.parquet", "manifest.json")
    files = {name: (flat.out_dir / name).stat().st_mtime_ns for name in names}

    def must_not_embed(*args, **kwargs):
        raise AssertionError("a cached build re-embedded the corpus")

    monkeypatch.setattr(index_build, "_embed_in_chunks", must_not_embed)
    again = build_index(corpus, flat.out_dir, embedder=embedder, kind="flat")
    assert again.manifest.build_key == flat.manifest.build_key
    assert {name: (flat.out_dir / name).stat().st_mtime_ns for name in files} == files


def test_changed_corpus_or_kind_rebuilds(embedder, tmp_path):
    corpus = tmp_path / "small.jsonl"
    write_corpus(corpus, n_filler=20)
    first = build_index(corpus, tmp_path / "idx", embedder=embedder, progress=False)
    with corpus.open("a") as fh:
        fh.write(json.dumps({"id": "late", "text": "A document added after the first build."}) + "\n")
    second = build_index(corpus, tmp_path / "idx", embedder=embedder, progress=False)
    assert (first.manifest.count, second.manifest.count) == (25, 26)
    assert second.manifest.build_key != first.manifest.build_key
    reloaded = LocalSearchIndex.load(tmp_path / "idx", embedder)
    assert reloaded.search("added after the first build", 1)[0].doc_id == "late"
    hnsw = build_index(corpus, tmp_path / "idx", embedder=embedder, kind="hnsw", progress=False)
    assert hnsw.manifest.kind == "hnsw" and hnsw.manifest.build_key != second.manifest.build_key


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_whitelist_restricts_results_exactly_and_with_faiss_selectors(flat, approximate, kind):
    index = flat if kind == "flat" else approximate[kind]
    query = FACTS["fact-volcano"][2]
    allowed = ["doc-0001", "doc-0002", "doc-0003", "fact-chess", "not-in-corpus"]
    exact = index.search(query, k=10, allowed=allowed)
    assert {h.doc_id for h in exact} == set(allowed) - {"not-in-corpus"}  # fewer than k: all allowed, ranked
    assert all(a.score >= b.score for a, b in zip(exact, exact[1:]))
    index.exact_whitelist_max = 0  # force the FAISS IDSelector path
    try:
        selected = index.search(query, k=10, allowed=allowed)
    finally:
        del index.exact_whitelist_max
    if kind == "hnsw":  # a filtered graph walk may stop early; what it returns must still be allowed
        assert selected[0].doc_id == exact[0].doc_id and {h.doc_id for h in selected} <= set(allowed)
    else:  # flat, and IVF visiting every cell under a selector, are exact
        assert [h.doc_id for h in selected] == [h.doc_id for h in exact]
    assert index.search(query, k=3, allowed=["nothing-known"]) == []


def test_tool_schema_and_formatted_observation(flat):
    tool = LocalSearch(flat, top_k=3)
    assert isinstance(tool, Tool)
    assert tool.spec.name == "local_search" and tool.spec.category == "basic"
    assert tool.spec.parameters["required"] == ["query"]
    assert tool.spec.parameters["additionalProperties"] is False
    assert set(tool.spec.parameters["properties"]) == {"query", "top_k"}

    obs = asyncio.run(tool.execute({"query": FACTS["fact-bridge"][2]}, ToolContext(task_id="t1")))
    assert obs.error is None and obs.cost_usd == 0 and obs.latency_s > 0
    assert obs.meta["doc_ids"][0] == "fact-bridge" and len(obs.meta["doc_ids"]) == 3 == len(obs.meta["scores"])
    assert "doc_id=fact-bridge | Kolvik Bridge | score=" in obs.text and "1,420 metres" in obs.text
    more = asyncio.run(tool.execute({"query": "river floods", "top_k": 7}))
    assert len(more.meta["doc_ids"]) == 7


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({}, "missing required argument 'query'"),
        ({"query": ["a"]}, "'query' must be string"),
        ({"query": "x", "k": 3}, "unknown argument 'k'"),
        ({"query": "x", "top_k": "3"}, "'top_k' must be integer"),
        ({"query": "x", "top_k": 0}, "'top_k' must be between 1 and 50"),
        ({"query": "  "}, "'query' is empty"),
        ("just a string", "arguments must be a JSON object"),
    ],
)
def test_tool_bad_arguments_are_error_observations(flat, arguments, fragment):
    obs = asyncio.run(LocalSearch(flat).execute(arguments))
    assert obs.error is not None and fragment in obs.error and obs.text.startswith("Error:")


def test_tool_whitelists_from_task_meta_dict_and_mapping(flat):
    query = FACTS["fact-orchid"][2]
    allowed = ["doc-0010", "doc-0011", "fact-lighthouse"]
    world_task = WorldTask(task_id="frames-1", family="frames", domain="multihop", question="q", answer="a",
                           meta={"doc_whitelist": allowed})
    contexts = [
        ToolContext(task_id="frames-1", task=world_task),
        ToolContext(task_id="x", task={"doc_whitelist": allowed}),
        ToolContext(task_id="mapped"),
    ]
    tool = LocalSearch(flat, top_k=5, whitelists={"mapped": allowed})
    for context in contexts:
        obs = asyncio.run(tool.execute({"query": query}, context))
        assert sorted(obs.meta["doc_ids"]) == sorted(allowed) and "fact-orchid" not in obs.text
    free = asyncio.run(tool.execute({"query": query}, ToolContext(task_id="other")))
    assert free.meta["doc_ids"][0] == "fact-orchid"
    none = asyncio.run(tool.execute({"query": query}, ToolContext(task={"doc_whitelist": ["ghost"]})))
    assert none.error is None and none.meta["doc_ids"] == [] and "allowed documents" in none.text


def test_search_runs_off_the_event_loop_and_concurrent_calls_agree(flat):
    tool = LocalSearch(flat)
    release, ran_in_thread = threading.Event(), []
    real_search = flat.search

    def gated_search(query, k, allowed):
        # Only the event loop can set `release`; if search ran on the loop, this would time out.
        ran_in_thread.append(release.wait(timeout=10))
        return real_search(query, k, allowed)

    async def scenario():
        flat.search = gated_search
        try:
            call = asyncio.ensure_future(tool.execute({"query": FACTS["fact-chess"][2]}))
            await asyncio.sleep(0)  # let the call start its thread before the loop releases it
            release.set()
            gated = await call
        finally:
            del flat.search
        many = await asyncio.gather(*(tool.execute({"query": FACTS["fact-chess"][2]}) for _ in range(6)))
        return gated, many

    gated, many = asyncio.run(scenario())
    assert ran_in_thread == [True] and gated.meta["doc_ids"][0] == "fact-chess"
    assert all(obs.meta == many[0].meta for obs in many)


@pytest.mark.parametrize(
    "lines, fragment",
    [
        (['{"id": "a", "text": "ok"}', '{"id": "b", "text": "ok"}', '{"id": "c", "text": '], "line 3: malformed JSON"),
        (['{"id": "a", "text": "fine"}', '{"id": "b", "title": "no text"}'], "line 2: missing required field 'text'"),
        (['', '{"text": "no id"}'], "line 2: missing required field 'id'"),
        (['{"id": "a", "text": "x"}', '{"id": "a", "text": "y"}'], "line 2: duplicate id 'a' (first at line 1)"),
        (['["not", "an", "object"]'], "line 1: expected a JSON object"),
        (['{"id": "a", "text": 5}'], "line 1: fields 'text' and 'title' must be strings"),
    ],
)
def test_malformed_corpus_names_file_and_line(tmp_path, lines, fragment):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LabInputError) as err:
        build_index(path, tmp_path / "idx", progress=False)
    assert str(path) in str(err.value) and fragment in str(err.value)
    assert not (tmp_path / "idx" / "manifest.json").exists()


def test_parquet_corpus_reads_and_reports_bad_rows(tmp_path):
    good = tmp_path / "good.parquet"
    pd.DataFrame({"id": [1, 2], "text": ["alpha", "beta"], "title": ["A", None]}).to_parquet(good)
    frame = read_corpus(good)
    assert frame.to_dict("list") == {"doc_id": ["1", "2"], "title": ["A", ""], "text": ["alpha", "beta"]}
    no_text = tmp_path / "no_text.parquet"
    pd.DataFrame({"id": ["a"], "body": ["x"]}).to_parquet(no_text)
    with pytest.raises(LabInputError, match="missing required column 'text'"):
        read_corpus(no_text)
    null_text = tmp_path / "null_text.parquet"
    pd.DataFrame({"id": ["a", "b"], "text": ["x", None]}).to_parquet(null_text)
    with pytest.raises(LabInputError, match=r"null_text.parquet: row 2: missing required field 'text'"):
        read_corpus(null_text)


def test_loading_a_missing_or_mismatched_index_is_a_clear_error(flat, tmp_path):
    with pytest.raises(LabInputError, match="no local-search index here"):
        LocalSearchIndex.load(tmp_path)
    other = EmbedderConfig.qwen3_8b("/nonexistent/qwen3")
    with pytest.raises(LabInputError, match="built with embedder 'all-MiniLM-L6-v2', not 'Qwen3-Embedding-8B'"):
        LocalSearchIndex.load(flat.out_dir, other)
    with pytest.raises(LabInputError, match="index kind 'annoy'"):
        build_index(flat.manifest.corpus_path, tmp_path, kind="annoy")


def test_query_embedding_leaves_the_callers_torch_threads_alone(embedder):
    import torch

    before = torch.get_num_threads()
    vector = embedder.encode_query("lighthouse keeper")  # runs single-threaded on the embedder's worker
    assert torch.get_num_threads() == before
    assert vector.shape == (1, 384) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_qwen3_preset_prefixes_queries_only_with_the_released_instruction():
    """The query the embedder reads is the released retrievers' (`retrieval_hle.py`, `retrieval_wiki.py`:
    f'Instruct: Given a search query, retrieve relevant passages\\nQuery:{query}'); documents get none."""
    config = EmbedderConfig.qwen3_8b("/models/Qwen3-Embedding-8B")
    query = "who painted the Varnholm lighthouse"
    assert config.query_prefix + query == f'Instruct: Given a search query, retrieve relevant passages\nQuery:{query}'
    assert "query_prefix" not in config.cache_key()  # an index built with the older instruction is still valid
    assert EmbedderConfig.named("qwen3-8b").path == "Qwen/Qwen3-Embedding-8B"
    assert EmbedderConfig.minilm().query_prefix == ""
    with pytest.raises(LabInputError, match="embedder 'bert'"):
        EmbedderConfig.named("bert")


def test_document_threads_follow_the_cores_others_leave_idle(tmp_path):
    """The embedder sizes its document threads from idle CPU time between two /proc/stat samples,
    over the CPUs this process may use; a minute-long load average would count its own work."""
    from lab.tools.embedder import cpu_jiffies, idle_cores

    stat = tmp_path / "stat"
    stat.write_text("cpu  30 0 10 160 0 0 0 0 0 0\ncpu0 10 0 5 85 0 0 0 0 0 0\ncpu1 20 0 5 75 0 0 0 0 0 0\nintr 1 2\n")
    before = cpu_jiffies(stat)
    assert before == {0: (85, 100), 1: (75, 100)}
    # cpu0 idle throughout, cpu1 busy with another process throughout
    after = {0: (185, 200), 1: (75, 200)}
    assert idle_cores(before, after, {0, 1}) == pytest.approx(1.0)
    assert idle_cores(before, after, {1}) == 0.0, "a CPU outside this process's affinity is not its to use"
    half = {0: (135, 200), 1: (125, 200)}
    assert idle_cores(before, half, {0, 1}) == pytest.approx(1.0)
    assert cpu_jiffies(tmp_path / "missing") == {}


def test_a_repeated_query_is_embedded_once_and_each_caller_gets_its_own_copy(embedder, monkeypatch):
    texts = []
    encode = embedder._encode

    def counting(batch, *args):
        texts.extend(batch)
        return encode(batch, *args)

    monkeypatch.setattr(embedder, "_encode", counting)
    query = "which keeper tended the northern lighthouse in the year of the flood"
    first = embedder.encode_query(query)
    first[:] = 0.0  # a caller scribbling on its vector
    second = embedder.encode_query(query)
    assert texts == [query], "the second call should reuse the first's vector"
    assert abs(float(np.linalg.norm(second)) - 1.0) < 1e-5
    other = embedder.encode_query(query + "?")
    assert texts == [query, query + "?"] and not np.array_equal(other, second)


class RankedIndex:
    """An index stand-in returning fixed passages best first, as many as asked (it records how many)."""

    def __init__(self, passages: list[tuple[str, float]]) -> None:
        from lab.tools.local_search import Passage

        self.passages = [Passage(doc_id=str(i), title="", text=text, score=score, rank=i + 1)
                         for i, (text, score) in enumerate(passages)]
        self.asked: list[int] = []

    def __len__(self) -> int:
        return len(self.passages)

    def search(self, query: str, k: int = 5, allowed=None) -> list:
        self.asked.append(k)
        return self.passages[:k]


def test_released_filters_keep_long_documents_scoring_over_the_threshold():
    long, short = "x" * 101, "y" * 100
    index = RankedIndex([(long, 0.9), (short, 0.8), (long + "a", 0.5), (long + "b", 0.1), (long + "c", 0.05)])
    tool = LocalSearch(index, top_k=50, min_chars=100, min_score=0.1)  # the released HLE server's filters
    observation = asyncio.run(tool.execute({"query": "q"}))
    assert observation.meta["documents"] == [long, long + "a"]  # 100 characters is not over 100; 0.1 not over 0.1
    assert observation.meta["scores"] == [0.9, 0.5] and index.asked == [1000]  # read 1,000 hits, as released
    assert "[2] doc_id=2" in observation.text  # kept passages are ranked among themselves
    capped = asyncio.run(LocalSearch(index, top_k=1, min_chars=100, min_score=0.1).execute({"query": "q"}))
    assert capped.meta["documents"] == [long]
    unfiltered = asyncio.run(LocalSearch(index, top_k=2).execute({"query": "q"}))
    assert unfiltered.meta["documents"] == [long, short] and index.asked[-1] == 2


class FixedQuery:
    """An embedder stand-in whose every query is the vector `e0`."""

    def __init__(self, dim: int) -> None:
        self.vector = np.eye(1, dim, dtype=np.float32)  # (1, dim)

    def encode_query(self, query: str) -> np.ndarray:
        return self.vector.copy()


def ranked_index(count: int) -> LocalSearchIndex:
    """A real flat FAISS index of `count` documents whose cosine to every query falls with their number:
    doc-0000 ranks first, doc-1200 ranks 1,201st (cosines from 1 down to about 0.2, all over 0.1)."""
    from lab.tools.local_search import IndexManifest

    angles = np.linspace(0.0, 1.35, count)  # radians; cos(1.35) ~ 0.22
    vectors = np.zeros((count, 8), dtype=np.float32)  # (count, dim)
    vectors[:, 0], vectors[:, 1] = np.cos(angles), np.sin(angles)
    index = faiss.IndexFlatIP(8)
    index.add(vectors)
    docs = pd.DataFrame({"doc_id": [f"doc-{i:04d}" for i in range(count)], "title": "",
                         "text": [f"Passage {i}: " + "a long enough document to pass the length filter. " * 3
                                  for i in range(count)]})
    manifest = IndexManifest(build_key="x", embedder=EmbedderConfig.minilm(), dim=8, kind="flat", corpus_path="",
                             corpus_sha256="", count=count)
    return LocalSearchIndex(index, docs, manifest, FixedQuery(8), Path("."))


def test_the_released_scope_searches_the_global_top_1000_before_the_whitelist():
    """The released HLE server reads the index's global top 1,000 and keeps the task's documents among them:
    a task document ranked past 1,000 is never found, and a search finds fewer documents (so the paper
    search tool falls back to the web sooner). The lab's `inside` scope finds it."""
    index = ranked_index(1500)
    task = {"doc_whitelist": ["doc-0005", "doc-0999", "doc-1000", "doc-1200"]}
    released = dict(top_k=50, min_chars=100, min_score=0.1)  # what --protocol rounds --benchmark hle sets

    def found(scope: str) -> list[str]:
        tool = LocalSearch(index, whitelist_scope=scope, **released)
        return asyncio.run(tool.execute({"query": "q"}, ToolContext(task=task))).meta["doc_ids"]

    assert found("global") == ["doc-0005", "doc-0999"]  # ranks 6 and 1,000 are in the top 1,000; 1,001 is not
    assert found("inside") == ["doc-0005", "doc-0999", "doc-1000", "doc-1200"]
    assert len(found("global")) < 3 <= len(found("inside"))  # the released web fallback triggers under global only
    assert found("global") == found_by_the_released_server(index, task["doc_whitelist"])


def found_by_the_released_server(index: LocalSearchIndex, example_ids: list[str]) -> list[str]:
    """retrieval_hle.py's `_batch_search(num=1000)` and `/retrieve` filters, in its shape, on the same index."""
    scores, idxs = index.cpu_index.search(FixedQuery(8).vector, 1000)
    results = [index.docs.iloc[int(i)] for i in idxs[0]]
    cur_batch_results, cur_batch_scores = [], []
    for r, s in zip(results, scores[0]):
        if r['doc_id'] in example_ids:
            cur_batch_results.append(r)
            cur_batch_scores.append(s)
    combined = []
    for doc, score in zip(cur_batch_results, cur_batch_scores):
        if len(doc["text"]) > 100 and score > 0.1:
            combined.append(doc["doc_id"])
        if len(combined) >= 50:
            break
    return combined


def test_an_hle_run_under_rounds_searches_as_released_and_inside_on_request():
    from lab.eval.checks import with_search_depth
    from lab.eval.config import EvalConfig
    from lab.toolkit import load_toolkit

    def scope(**options) -> str | None:
        toolkit = with_search_depth(EvalConfig(toolkit="paper", **options), load_toolkit("paper"))
        (search,) = [t for t in toolkit.tools if t.name == "search"]
        return (search.backend.get("retriever") or {}).get("whitelist_scope")

    assert scope(benchmark="hle", protocol="rounds") == "global"
    assert scope(benchmark="hle", protocol="rounds", retrieval_whitelist="inside") == "inside"
    assert scope(benchmark="frames", protocol="rounds") is None  # FRAMES has no per-question corpus
    assert scope(benchmark="hle") is None
    with pytest.raises(ValueError, match="--retrieval-whitelist global: applies with --protocol rounds"):
        EvalConfig(benchmark="hle", retrieval_whitelist="global")


def test_a_toolkit_names_the_whitelist_scope_or_is_refused_when_it_loads(tmp_path):
    from lab.toolkit import load_toolkit

    for scope, problem in (("global", None), ("everywhere", "whitelist_scope: expected one of inside, global")):
        path = tmp_path / f"{scope}.yaml"
        path.write_text(f"name: kit\ntools:\n  - {{name: local_search, backend: {{kind: local_search, index: world, "
                        f"whitelist_scope: {scope}}}}}\n")
        if problem is None:
            assert load_toolkit(str(path)).tools[0].backend["whitelist_scope"] == "global"
        else:
            with pytest.raises(LabInputError, match=problem):
                load_toolkit(str(path))
