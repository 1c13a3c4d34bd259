"""Toolkits by name, and the tool objects behind their specs.

Named toolkits are the YAML files in the checkout's `configs/toolkits/` (`default`: free-form tools
and models; `paper`: the released code's `search` / `enhance_reasoning` / `answer` with model slots);
any other toolkit is given by path. A toolkit file may leave entries short
(`{name: sim:gpt-5, backend: {kind: sim, profile: gpt-5}}`): each backend kind fills in its own
description, schema, category and latency here, so the YAML lists only what differs; a `paper` entry's
slots are filled the same way. A `sim` backend may name a `profiles_file` (e.g. one `orchestra
calibrate` wrote) to take its profile from there instead of the packaged `lab/data/sim_profiles.yaml`.
Tools that cannot be offered in this environment (web search without a key) are dropped with one line
saying why, never kept as a tool that silently returns nothing.

Why a module above `lab.tools`: it is the composition root that builds tools of every kind, simulated
models (`lab.sim`) and the offline world's search index (`lab.world.build`) included, while the tools,
the simulated models and the world only import the tool interface below them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from rich.console import Console

from lab.errors import LabInputError, read_yaml
from lab.tools.base import Tool
from lab.toolspec import LLM_TOOL_PARAMETERS, Toolkit, ToolSpec

KINDS = ("local_search", "web_search", "code_interpreter", "sim", "openai", "local_llm", "paper")
#: What a paper `search` tool retrieves with when its entry names no `backend.retriever`.
DEFAULT_RETRIEVER = {"kind": "local_search", "index": "world"}
#: Where named toolkits live: `configs/toolkits/` of the checkout the lab is installed from.
TOOLKITS_DIR = Path(__file__).resolve().parents[1] / "configs" / "toolkits"


def toolkit_names() -> list[str]:
    if not TOOLKITS_DIR.is_dir():
        return []
    return sorted(p.stem for p in TOOLKITS_DIR.glob("*.yaml"))


def load_toolkit(name_or_path: str, pricing: str = "default", console: Console | None = None) -> Toolkit:
    """A toolkit by name (`default`) or YAML path, with defaults filled and unavailable tools dropped."""
    source, raw = _read(name_or_path)
    if not isinstance(raw, dict) or not isinstance(raw.get("tools"), list):
        raise LabInputError(f"{source}: a toolkit is a mapping with a 'tools' list")
    entries = []
    for i, entry in enumerate(raw["tools"]):
        if not isinstance(entry, dict):
            raise LabInputError(f"{source}: tools[{i}] must be a mapping")
        filled = _with_defaults(entry, source, i, pricing)
        if filled is not None:
            entries.append(filled)
        elif console is not None:
            console.print(f"[yellow]{_unavailable_message(entry)}[/]")
    return Toolkit.from_dict({**raw, "tools": entries}, source=source, pricing=pricing)


def _read(name_or_path: str) -> tuple[str, Any]:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        return str(path), read_yaml(path, "toolkit file")
    if name_or_path not in toolkit_names():
        known = ", ".join(toolkit_names()) or f"none: {TOOLKITS_DIR} is missing"
        raise LabInputError(f"--toolkit '{name_or_path}': no such toolkit (known: {known}; or a .yaml path)")
    return f"toolkit '{name_or_path}'", read_yaml(TOOLKITS_DIR / f"{name_or_path}.yaml", "toolkit file")


#: The numeric, flag and text options each backend kind reads when its tool is built, checked when the
#: toolkit is read (so a wrong type is refused before any store or model is opened, not at the first call).
BACKEND_OPTIONS: dict[str, dict[str, type]] = {
    "code_interpreter": {"timeout_s": float, "cpu_s": int, "memory_mb": int, "max_output_chars": int},
    "web_search": {"timeout_s": float, "max_results": int, "search_depth": str, "include_answer": bool},
    "local_search": {"min_chars": int, "min_score": float, "whitelist_scope": str},
}


def _check_options(kind: str, backend: dict[str, Any], where: str) -> None:
    if kind in ("openai", "local_llm"):  # their backends are models of their own: validated the same way here
        from pydantic import ValidationError

        from lab.errors import first_error

        if kind == "openai":
            from lab.tools.openai_llm import OpenAIBackend as Backend
        else:
            from lab.tools.local_llm import LocalBackend as Backend
        try:
            Backend.model_validate(backend)
        except ValidationError as exc:
            raise LabInputError(f"{where}.{first_error(exc)}") from None
    for option, expected in BACKEND_OPTIONS.get(kind, {}).items():
        if option not in backend:
            continue
        value = backend[option]
        ok = {float: isinstance(value, (int, float)), int: isinstance(value, int), bool: isinstance(value, bool),
              str: isinstance(value, str)}[expected] and (expected is bool or not isinstance(value, bool))
        if not ok:
            raise LabInputError(f"{where}.{option}: expected "
                                f"{'a number' if expected is float else expected.__name__}, got {value!r}")
    if kind == "local_search" and "whitelist_scope" in backend:
        from lab.tools.local_search import WHITELIST_SCOPES

        if backend["whitelist_scope"] not in WHITELIST_SCOPES:
            raise LabInputError(f"{where}.whitelist_scope: expected one of {', '.join(WHITELIST_SCOPES)}, got "
                                f"{backend['whitelist_scope']!r}")


def _with_defaults(entry: dict[str, Any], source: str, index: int, pricing: str) -> dict[str, Any] | None:
    """The entry over its kind's default spec; None when the tool cannot be offered here."""
    backend = entry.get("backend") or {}
    if not isinstance(backend, dict):
        raise LabInputError(f"{source}: tools[{index}].backend: must be a mapping with a 'kind', got {backend!r}")
    kind = backend.get("kind")
    if kind not in KINDS:
        raise LabInputError(f"{source}: tools[{index}].backend.kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    _check_options(kind, backend, f"{source}: tools[{index}].backend")
    if kind == "web_search":
        from lab.tools.web_search import web_search_available

        if not web_search_available():
            return None
    if kind == "local_search":
        _check_top_k(backend.get("top_k"), f"{source}: tools[{index}].backend.top_k")
    if kind == "paper":
        return _paper_entry(entry, backend, source, index, pricing)
    default = _default_spec(kind, backend, pricing, str(entry.get("name", "")))
    base = default.model_dump(exclude={"backend"}) if default else {"parameters": LLM_TOOL_PARAMETERS}
    return {**base, **{k: v for k, v in entry.items() if k != "backend"},
            "backend": {**(default.backend if default else {}), **backend}}


def _paper_entry(entry: dict[str, Any], backend: dict[str, Any], source: str,
                 index: int, pricing: str) -> dict[str, Any]:
    """A paper-toolkit tool: its one-argument schema over the slots, and each slot filled like a tool."""
    from lab.tools.paper import DESCRIPTIONS, ROLES, paper_parameters

    role = backend.get("role") or entry.get("name")
    where = f"{source}: tools[{index}]"
    if role not in ROLES:
        raise LabInputError(f"{where}.backend.role: expected one of {', '.join(ROLES)}, got {role!r}")
    retriever = backend.get("retriever")
    if role == "search" and isinstance(retriever, dict):
        _check_top_k(retriever.get("top_k"), f"{where}.backend.retriever.top_k")
        _check_options(str(retriever.get("kind")), retriever, f"{where}.backend.retriever")
    raw_slots = backend.get("slots")
    if not isinstance(raw_slots, dict) or not raw_slots:
        raise LabInputError(f"{where}.backend.slots: a mapping of slot name -> model tool entry is required")
    _check_paper_options(backend, list(raw_slots), f"{where}.backend")
    slots = {}
    for slot, slot_entry in raw_slots.items():
        if not isinstance(slot_entry, dict):
            raise LabInputError(f"{where}.backend.slots.{slot}: must be a tool entry mapping")
        filled = _with_defaults(slot_entry, f"{where}.backend.slots.{slot}", index, pricing)
        if filled is None or (filled.get("backend") or {}).get("kind") not in MODEL_KINDS:
            raise LabInputError(f"{where}.backend.slots.{slot}: must be a model tool ({', '.join(MODEL_KINDS)}) "
                                "that can be offered here")
        # a slot's model is reached only through its tool: a short entry needs no description of its own
        slots[slot] = {"description": f"{filled.get('model') or filled.get('name')} behind slot {slot}",
                       "category": "generalist", **filled,
                       "parameters": filled.get("parameters") or LLM_TOOL_PARAMETERS}
    return {
        "description": DESCRIPTIONS[role], "category": "basic", "parameters": paper_parameters(list(slots)),
        **{k: v for k, v in entry.items() if k != "backend"},
        "name": entry.get("name", role), "slots": slots,
        "backend": {k: v for k, v in backend.items() if k != "slots"} | {"role": role},
    }


#: The backend kinds that are models, the only ones a paper tool's slot can be (they take a `ModelRequest`).
MODEL_KINDS = ("sim", "openai", "local_llm")


def _check_paper_options(backend: dict[str, Any], slots: list[str], where: str) -> None:
    """`web_fallback` a flag, `code_timeout_s` a positive number, `context_tokens` a mapping of this tool's
    slots to token budgets."""
    if not isinstance(backend.get("web_fallback", False), bool):
        raise LabInputError(f"{where}.web_fallback: expected true or false, got {backend['web_fallback']!r}")
    timeout = backend.get("code_timeout_s", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise LabInputError(f"{where}.code_timeout_s: expected a number of seconds > 0, got {timeout!r}")
    budgets = backend.get("context_tokens") or {}
    if not isinstance(budgets, dict):
        raise LabInputError(f"{where}.context_tokens: expected a mapping of slot -> tokens, got {budgets!r}")
    for slot, tokens in budgets.items():
        if slot not in slots:
            raise LabInputError(f"{where}.context_tokens.{slot}: not a slot of this tool ({', '.join(slots)})")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise LabInputError(f"{where}.context_tokens.{slot}: expected a whole number of tokens >= 1, "
                                f"got {tokens!r}")


def _default_spec(kind: str, backend: dict[str, Any], pricing: str, name: str) -> ToolSpec | None:
    if kind == "local_search":
        from lab.tools.local_search import default_local_search_spec

        return default_local_search_spec(backend.get("top_k", 5))
    if kind == "web_search":
        from lab.tools.web_search import default_web_search_spec

        return default_web_search_spec(backend.get("search_depth", "basic"))
    if kind == "code_interpreter":
        from lab.tools.code_interpreter import DEFAULT_SPEC

        return DEFAULT_SPEC
    if kind == "sim":
        from lab.sim.model import sim_spec
        from lab.sim.profiles import get_profile

        profile = get_profile(str(backend.get("profile") or name.removeprefix("sim:")), backend.get("profiles_file"))
        return sim_spec(profile, pricing=pricing)
    return None  # openai / local_llm entries spell out their own spec


def _check_top_k(top_k: Any, where: str) -> None:
    """A retrieval depth must be a whole number of passages, at least one (None: the tool's default)."""
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise LabInputError(f"{where}: expected an integer >= 1 (passages per search), got {top_k!r}")


def _unavailable_message(entry: dict[str, Any]) -> str:
    from lab.tools.web_search import NOT_OFFERED

    return (NOT_OFFERED if (entry.get("backend") or {}).get("kind") == "web_search"
            else f"tool {entry.get('name')} not offered")


def with_retrieval_top_k(toolkit: Toolkit, top_k: int, **filters: Any) -> Toolkit | None:
    """The toolkit with every paper `search` tool that retrieves from a local index returning `top_k`
    documents per query, kept by `filters` (`min_chars`, `min_score`, `whitelist_scope`; the released HLE
    server's) where given (its `backend.retriever`, so the run's toolkit records it); None when no tool of
    the toolkit does."""
    tools, changed = [], False
    for spec in toolkit.tools:
        retriever = spec.backend.get("retriever") or DEFAULT_RETRIEVER
        if (spec.backend.get("kind") == "paper" and spec.backend.get("role") == "search"
                and retriever.get("kind") == "local_search"):
            retriever = {**retriever, "top_k": top_k, **filters}
            spec = spec.model_copy(update={"backend": {**spec.backend, "retriever": retriever}})
            changed = True
        tools.append(spec)
    return toolkit.model_copy(update={"tools": tools}) if changed else None


def build_tools(toolkit: Toolkit, extra: dict[str, Tool] | None = None) -> dict[str, Tool]:
    """Tool objects for every spec (shared by all rollouts of a run), plus task-specific tools
    (e.g. a tool domain's functions) appended after the toolkit's."""
    tools: dict[str, Tool] = {spec.name: _build(spec) for spec in toolkit.tools}
    for name, tool in (extra or {}).items():
        if name in tools:
            raise LabInputError(f"tool name '{name}' is both in toolkit '{toolkit.name}' and a benchmark tool")
        tools[name] = tool
    return tools


def _build(spec: ToolSpec) -> Tool:
    kind = spec.backend.get("kind")
    if kind == "local_search":
        from lab.tools.local_search import LocalSearch

        return LocalSearch(_search_index(str(spec.backend.get("index", "world"))), spec=spec,
                           top_k=int(spec.backend.get("top_k", 5)), min_chars=int(spec.backend.get("min_chars", 0)),
                           min_score=spec.backend.get("min_score"),
                           whitelist_scope=spec.backend.get("whitelist_scope", "inside"))
    if kind == "web_search":
        from lab.tools.web_search import web_search_or_none

        options = {k: v for k, v in spec.backend.items() if k in ("timeout_s", "max_results",
                                                                  "search_depth", "include_answer")}
        tool, message = web_search_or_none(spec, **options)
        if tool is None:
            raise LabInputError(f"tool '{spec.name}': {message}")
        return tool
    if kind == "code_interpreter":
        from lab.tools.code_interpreter import CodeInterpreter

        options = {k: v for k, v in spec.backend.items() if k in ("timeout_s", "cpu_s",
                                                                  "memory_mb", "max_output_chars")}
        return CodeInterpreter(spec=spec, **options)
    if kind == "sim":
        from lab.sim.model import SimModel

        return SimModel.from_spec(spec, path=spec.backend.get("profiles_file"))
    if kind == "openai":
        from lab.tools.openai_llm import OpenAIChatTool

        return OpenAIChatTool(spec)
    if kind == "local_llm":
        from lab.tools.local_llm import LocalLLMTool

        return LocalLLMTool(spec)
    if kind == "paper":
        return _build_paper(spec)
    raise LabInputError(f"tool '{spec.name}': unknown backend kind {kind!r}")


def _build_paper(spec: ToolSpec) -> Tool:
    from lab.tools.paper import PaperTool

    role = spec.backend["role"]
    models = {slot: _build(slot_spec) for slot, slot_spec in spec.slots.items()}
    retriever = interpreter = web_fallback = None
    if role == "search":
        options = spec.backend.get("retriever") or DEFAULT_RETRIEVER
        kind = options.get("kind")
        if kind not in ("local_search", "web_search"):
            raise LabInputError(f"tool '{spec.name}': backend.retriever.kind must be local_search "
                                f"or web_search, got {kind!r}")
        default = _default_spec(kind, options, "default", kind)
        retriever = _build(default.model_copy(update={"backend": {**default.backend, **options}}))
        if spec.backend.get("web_fallback"):  # released HLE: the web when the index finds fewer than 3
            from lab.tools.web_search import web_search_or_none

            web_fallback, message = web_search_or_none(search_depth="advanced")
            if web_fallback is None:
                raise LabInputError(f"tool '{spec.name}': backend.web_fallback: {message}")
    if role == "enhance_reasoning":
        from lab.tools.code_interpreter import CodeInterpreter

        # released: a program runs up to 60 s (eval_hle.py `subprocess.run(..., timeout=60)`)
        interpreter = CodeInterpreter(timeout_s=float(spec.backend.get("code_timeout_s", 60.0)))
    return PaperTool(spec, role, models, retriever=retriever, interpreter=interpreter,
                     context_chars=int(spec.backend.get("context_chars", 12000)),
                     context_tokens=dict(spec.backend.get("context_tokens") or {}), web_fallback=web_fallback)


@lru_cache(maxsize=4)
def _search_index(index: str) -> Any:
    """`world` is the offline world's index (built on first use); anything else is an index folder."""
    from lab.tools.local_search import LocalSearchIndex

    if index == "world":
        from lab.world.build import build_world

        folder = build_world(progress=True).index_dir
        if folder is None:
            raise LabInputError("the offline world was built without a search index; run "
                                "`orchestra world build --force`")
        return LocalSearchIndex.load(folder)
    if not Path(index).is_dir():
        raise LabInputError(f"local_search: index folder not found: {index}")
    return LocalSearchIndex.load(index)
