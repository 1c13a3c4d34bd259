"""A domain whose records and tools are code an LLM wrote: read with `ast`, run only in the sandbox.

Why: the LLM-driven ToolScale generator (`lab.synth.llm_generate`) gets pydantic models and tool
functions as Python source. That code must be executed to be trusted (the paper's yes/no questions
to an LLM are no check at all), but it must never run in the lab's own process, which holds API keys,
stores and answers. So the host only *reads* the source with `ast` (tool names, kinds, argument
types, docstrings: enough for the schemas and the argument checks, through the same
`lab.env.schema.Tool` the hand-written domains use), and every execution happens in the
code_interpreter sandbox (`lab.tools.code_interpreter`: no network, no project files, no secrets,
CPU, memory and time limits), one sandbox run per chain of calls.

The code's contract (what the generator's prompts ask for):
- `Record` (a pydantic BaseModel that forbids unknown fields) and `ToolRefused` are predefined;
- `MODELS = {"table": RecordClass, ...}`, each model's first field its id;
- tool functions `def name(db: dict, arg: str, ...) -> str` with a docstring whose first paragraph
  is the description and one `arg: text` line per argument, raising `ToolRefused` to refuse, and a
  keyword-only `now` where the fixed clock is needed;
- `TOOLS = {"name": "read" | "write", ...}`. The two generic tools (calculate, hand-over to a human)
  are the lab's own and run here, since they touch no database.

A `SandboxDomain` is a `lab.env` environment offering what `lab.synth.domain.Domain` offers the
verifier, the exporter and the adapter (`name`, `tools`, `policy`, `now`, `access`, `schemas`, `call`,
`run_chain`), so the build filters and the tau2 grading run on it unchanged.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lab.env.environment import Access, Environment, Step
from lab.env.errors import ToolRefused, error_line
from lab.env.schema import Tool, Toolbox
from lab.errors import LabInputError
from lab.synth.generic import add_generic_tools

#: Argument annotations the generated code may use, and the Python types the checks use for them.
ANNOTATIONS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "list[str]": list[str]}
MARK = "@@SANDBOX-RESULT@@"

PREAMBLE = '''\
import json
from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolRefused(ValueError):
    pass


DomainError = ToolRefused  # the name domain.py files exported before lab.env raise

'''

#: Runs after the domain's code, in the same module; reads the request, prints one marked JSON line.
HARNESS = '''

import base64 as _b64, copy as _copy, hashlib as _hashlib, json as _json


def _hash(db):
    return _hashlib.sha256(_json.dumps(db, sort_keys=True, default=str, check_circular=False).encode()).hexdigest()


def _run(request):
    db, steps = request["db"], []
    for call in request["calls"]:
        write = TOOLS.get(call["name"]) == "write"
        saved = _copy.deepcopy(db) if write else None
        try:
            arguments = dict(call["arguments"], **({"now": request["now"]} if call["needs_now"] else {}))
            text = globals()[call["name"]](db, **arguments)
            if not isinstance(text, str):
                raise TypeError(f"returned {type(text).__name__}, not str")
            _json.dumps(db)
            steps.append({"text": text, "error": None, "hash": _hash(db) if write and call["hash"] else None})
        except ToolRefused as exc:
            steps.append({"text": str(exc), "error": "refused", "hash": None})
        except Exception as exc:
            steps.append({"text": f"{type(exc).__name__}: {exc}", "error": "crashed", "hash": None})
        if saved is not None and steps[-1]["error"]:
            db.clear()
            db.update(saved)
    return {"steps": steps, "db": db}


def _isolated(request):
    """Each call on its own fresh copy of the database: did it succeed, did it change the state."""
    start, results = _hash(request["db"]), []
    for call in request["calls"]:
        reply = _run(dict(request, db=_copy.deepcopy(request["db"]), calls=[dict(call, hash=True)]))
        step = reply["steps"][0]
        results.append(dict(step, changed=_hash(reply["db"]) != start))
    return {"steps": results}


def _validate(request):
    canonical, problems = {}, []
    for table, model in MODELS.items():
        id_field = next(iter(model.model_fields))
        canonical[table] = {}
        for key, record in request["db"].get(table, {}).items():
            try:
                dumped = model.model_validate(record).model_dump(mode="json")
            except Exception as exc:
                problems.append(f"{table} {key!r}: {str(exc).splitlines()[0]} ({str(exc).splitlines()[-1].strip()})")
                continue
            if dumped[id_field] != key:
                problems.append(f"{table} {key!r}: its {id_field} is {dumped[id_field]!r}")
            canonical[table][key] = dumped
    extra = sorted(set(request["db"]) - set(MODELS))
    if extra:
        problems.append(f"tables {extra} have no model in MODELS")
    fields = {table: list(model.model_fields) for table, model in MODELS.items()}
    return {"db": canonical, "problems": problems, "fields": fields}


_REQUEST = _json.loads(_b64.b64decode("{request}").decode())
print("{mark}" + _json.dumps({"run": _run, "isolated": _isolated, "validate": _validate}[_REQUEST["op"]](_REQUEST)))
'''


#: CPython 3.11's AST constructor keeps a recursion counter that is not thread-safe ("AST constructor
#: recursion depth mismatch" when two threads parse at once, as the generator's gates do), so every
#: parse of generated code goes through this lock.
_PARSE_LOCK = threading.Lock()


def parse(code: str) -> ast.Module:
    """`ast.parse`, one thread at a time (see `_PARSE_LOCK`); raises SyntaxError as it does."""
    with _PARSE_LOCK:
        return ast.parse(code)


class SandboxError(RuntimeError):
    """The domain's code could not be run at all (a syntax error, a crash on import, a time limit)."""


@dataclass(frozen=True)
class CodeTools:
    """What `read_tools` found in the source: the tools by name, and the tables it defines models for."""

    tools: dict[str, Tool]
    problems: list[str]


def _sandboxed(*_: Any, **__: Any) -> str:
    raise ToolRefused("this tool runs only in the sandbox")


def read_tools(code: str) -> CodeTools:
    """The tools `TOOLS` names, built from the source's function signatures and docstrings (no
    execution), plus every problem that stops one from being offered (named, for the generator's
    retry prompt). Generic tools are the lab's and are added here."""
    try:
        module = parse(code)
    except SyntaxError as exc:
        return CodeTools({}, [f"syntax error line {exc.lineno}: {exc.msg}"])
    kinds, functions = None, {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOOLS" for t in node.targets):
            try:
                kinds = ast.literal_eval(node.value)
            except ValueError:
                return CodeTools({}, ["TOOLS must be a literal dict of tool name -> 'read' or 'write'"])
    if not isinstance(kinds, dict):
        return CodeTools({}, ["no TOOLS = {...} dict naming each tool's kind"])
    tools, problems = {}, []
    for name, kind in kinds.items():
        if kind not in ("read", "write"):
            problems.append(f"TOOLS[{name!r}]: kind must be 'read' or 'write', got {kind!r}")
        elif name not in functions:
            problems.append(f"TOOLS names {name!r} but no top-level function defines it")
        else:
            try:
                tools[name] = _tool(functions[name], kind)
            except (TypeError, ValueError) as exc:
                problems.append(str(exc))
    box = Toolbox()
    add_generic_tools(box)
    for name in box.tools:
        if name in tools:
            problems.append(f"tool {name!r} is the lab's generic tool; do not define it")
    return CodeTools({**tools, **box.tools}, problems)


def read_now(code: str) -> str | None:
    """The `NOW = "<ISO time>"` constant of the code (its fixed clock), read without running it."""
    try:
        module = parse(code)
    except SyntaxError:
        return None
    for node in module.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "NOW" for t in node.targets):
            value = node.value.value if isinstance(node.value, ast.Constant) else None
            return value if isinstance(value, str) else None
    return None


def _tool(node: ast.FunctionDef, access: Access) -> Tool:
    args = node.args
    if not args.args or args.args[0].arg != "db":
        raise TypeError(f"tool {node.name}: the first parameter must be db")
    if args.vararg or args.kwarg or args.posonlyargs or args.defaults:
        raise TypeError(f"tool {node.name}: no *args, **kwargs, positional-only or default arguments")
    arguments = {}
    for arg in args.args[1:]:
        text = ast.unparse(arg.annotation) if arg.annotation else ""
        if text not in ANNOTATIONS:
            raise TypeError(f"tool {node.name}: argument {arg.arg} needs one of the annotations "
                            f"{', '.join(ANNOTATIONS)}, got {text or 'none'!r}")
        arguments[arg.arg] = ANNOTATIONS[text]
    extra = [a.arg for a in args.kwonlyargs if a.arg != "now"]
    if extra:
        raise TypeError(f"tool {node.name}: the only keyword-only argument may be now, got {extra}")
    needs_now = bool(args.kwonlyargs)
    return Tool.described(node.name, access, _sandboxed, arguments, ast.get_docstring(node) or "", needs_now)


def _in_thread(coroutine: Any) -> Any:
    """Run a coroutine to completion from sync code, even inside a running event loop (the engine's)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="sandbox-run")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_code(code: str, request: dict[str, Any], timeout_s: float = 60.0) -> dict[str, Any]:
    """Run `PREAMBLE + code + HARNESS` on `request` in the sandbox; the harness's JSON reply."""
    from lab.tools.code_interpreter import CodeInterpreter  # late: only LLM domains need the sandbox

    encoded = base64.b64encode(json.dumps(request).encode()).decode()
    program = PREAMBLE + code + HARNESS.replace("{request}", encoded).replace("{mark}", MARK)
    sandbox = CodeInterpreter(timeout_s=timeout_s, cpu_s=max(1, int(timeout_s)), memory_mb=1024,
                              max_output_chars=8_000_000, isolation="namespaces")
    observation = _in_thread(sandbox.execute({"code": program}))
    for line in observation.text.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    tail = observation.text.strip().splitlines()[-1:] or ["no output"]
    raise SandboxError(f"the domain code did not run: {observation.error or tail[0]}")


@dataclass(frozen=True)
class SandboxDomain(Environment):
    """An LLM-written domain (see the module docstring); its data lives with its tasks, not here."""

    name: str
    code: str
    tools: Mapping[str, Tool]
    policy: str
    now: str

    @classmethod
    def from_code(cls, name: str, code: str, policy: str) -> SandboxDomain:
        """Read the tools and the clock (`NOW = "..."` in the code); a `LabInputError` naming the first
        problem when the code offers none usable."""
        found = read_tools(code)
        now = read_now(code)
        problems = found.problems + ([] if now is not None else ['no NOW = "<ISO time>" line (the fixed clock)'])
        if problems:
            raise LabInputError(f"domain {name}: {problems[0]}")
        return cls(name, code, found.tools, policy, now)

    def examples(self, db: dict[str, Any], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each call on its own fresh copy of `db` in one sandbox run: per call its `text`, `error`
        (None, 'refused' or 'crashed') and whether it `changed` the database."""
        remote = [{"name": c["name"], "arguments": c["arguments"], "needs_now": self.tools[c["name"]].needs_now}
                  for c in calls]
        return run_code(self.code, {"op": "isolated", "db": db, "calls": remote, "now": self.now})["steps"]

    def access(self, name: Any) -> Access | None:
        tool = self.tools.get(name) if isinstance(name, str) else None
        return tool.access if tool else None

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema for tool in self.tools.values()]

    def validate(self, db: dict[str, Any]) -> dict[str, Any]:
        """Every record through its model in the sandbox: the canonical database (each record as its
        model dumps it), or a `LabInputError` naming the first record that does not fit."""
        reply = run_code(self.code, {"op": "validate", "db": db})
        if reply["problems"]:
            raise LabInputError(f"{self.name} db: {reply['problems'][0]}")
        return reply["db"]

    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        (step,) = self.run_chain(db, [{"name": name, "arguments": arguments}], hash_writes=False)
        return step.text, step.is_error

    def run_chain(self, db: dict[str, Any], calls: Iterable[Mapping[str, Any]], hash_writes: bool = True) -> list[Step]:
        """The calls in order: checked here against the schemas, generic ones run here, the rest in one
        sandbox run whose end state replaces `db`'s content. A refused or crashed write leaves the
        database as it was (the harness restores it), whatever the code did before failing."""
        steps: list[Step | None] = []
        remote: list[dict[str, Any]] = []
        for item in calls:
            name, arguments = item.get("name"), item.get("arguments")
            tool = self.tools.get(name) if isinstance(name, str) else None
            if tool is None:
                steps.append(Step(f"Error: unknown tool {name!r} in domain {self.name}", True))
                continue
            try:
                if not isinstance(arguments, dict):
                    raise ToolRefused(f"arguments must be a JSON object, got {type(arguments).__name__}")
                values = tool.bind(arguments)
            except ToolRefused as exc:
                steps.append(Step(error_line(name, str(exc)), True))
                continue
            if tool.access == "generic":
                try:
                    steps.append(Step(tool.function(db, **values), False))
                except ToolRefused as exc:
                    steps.append(Step(error_line(name, str(exc)), True))
                continue
            steps.append(None)
            remote.append({"name": name, "arguments": values, "needs_now": tool.needs_now, "hash": hash_writes})
        if remote:
            reply = run_code(self.code, {"op": "run", "db": db, "calls": remote, "now": self.now})
            db.clear()
            db.update(reply["db"])
            ran = iter(zip(remote, reply["steps"]))
            for index, step in enumerate(steps):
                if step is None:
                    call, result = next(ran)
                    text = result["text"] if not result["error"] else error_line(
                        call["name"],
                        result["text"] if result["error"] == "refused" else f"tool failed: {result['text']}")
                    steps[index] = Step(text, bool(result["error"]), result["hash"])
        return [step for step in steps if step is not None]
