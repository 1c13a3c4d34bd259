"""`orchestra index build`: a FAISS index over your own corpus, for `local_search` and `search` tools.

    orchestra index build --corpus wiki.jsonl                               # offline MiniLM, default folder
    orchestra index build --corpus wiki.jsonl --embedder /models/bge-base --out runs/wiki --batch-size 64
    orchestra index build --corpus wiki.jsonl --embedder qwen3-8b=/models/Qwen3-Embedding-8B

Re-running the same command after an interruption continues from the last committed chunk; once the
index is complete it is reused. A toolkit then points at the folder:
`backend: {kind: local_search, index: DIR}`, or a paper `search` tool's
`retriever: {kind: local_search, index: DIR}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from lab.errors import LabInputError
from orchestra.cli.options import JsonOption, console, print_json

if TYPE_CHECKING:
    from lab.tools.embedder import EmbedderConfig

index_app = typer.Typer(help="Build a local-search index (FAISS) over your own corpus.", no_args_is_help=True)


@index_app.command("build")
def build(
    corpus: Path = typer.Option(..., "--corpus",
                                help="JSONL (or Parquet) corpus: one document per line with `id`, "
                                     "`text` and optional `title`."),
    embedder: str = typer.Option(
        "minilm", "--embedder",
        help="A local sentence-transformers folder, `minilm` (the offline all-MiniLM-L6-v2) or `qwen3-8b=FOLDER`."),
    out: Path | None = typer.Option(None, "--out",
                                    help="Index folder (else $ORCHESTRA_CACHE/index/<corpus name>-<embedder name>)."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Documents per forward pass of the embedder."),
    kind: str = typer.Option("flat", "--kind",
                             help="flat (exact, as released), ivf or hnsw (approximate, for large corpora)."),
    as_json: bool = JsonOption,
) -> None:
    """Embed a corpus with a sentence-transformers model and write a FAISS index and document store."""
    from lab.tools.index_build import build_index
    from lab.world.build import cache_root

    config = embedder_config(embedder)
    folder = out or cache_root() / "index" / f"{corpus.stem}-{config.name}"
    index = build_index(corpus, folder, config, kind=kind, batch_size=batch_size, progress=not as_json)
    m = index.manifest
    summary = {"path": str(folder), "documents": m.count, "embedder": m.embedder.name, "dim": m.dim, "kind": m.kind,
               "resumed_documents": m.resumed_docs, "build_seconds": m.build_seconds, "docs_per_s": m.docs_per_s}
    if as_json:
        print_json(summary)
        return
    resumed = f", {m.resumed_docs:,} of them from an interrupted build" if m.resumed_docs else ""
    console.print(f"index: {folder}\n{m.count:,} documents{resumed}; {m.embedder.name}, {m.dim} dims, {m.kind}; "
                  f"built in {m.build_seconds:g} s", highlight=False, markup=False)
    console.print(f"use it in a toolkit: backend: {{kind: local_search, index: {folder}}}",
                  highlight=False, markup=False)


def embedder_config(value: str) -> EmbedderConfig:
    """`--embedder` as an `EmbedderConfig`: a preset name (with `=FOLDER`), or a local folder named after
    itself. A folder that is not there is refused here, before the corpus is read."""
    from lab.tools.embedder import EmbedderConfig

    name, _, path = value.partition("=")
    if path and not Path(path).expanduser().is_dir():
        raise LabInputError(f"--embedder {value}: no such folder '{path}'")
    if name.strip().lower() in ("minilm", "qwen3-8b"):
        return EmbedderConfig.named(name, str(Path(path).expanduser().resolve()) if path else None)
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise LabInputError(f"--embedder {value}: no such folder (expected a local sentence-transformers model folder, "
                            "`minilm` or `qwen3-8b=FOLDER`)")
    return EmbedderConfig(name=folder.resolve().name, path=str(folder.resolve()))
