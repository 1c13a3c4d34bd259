"""The LLM-driven ToolScale generator: the paper's stages, each answer gated by executing it.

Why gates instead of the released notebook's yes/no questions: an LLM asked "is this code right?"
says yes. Here every stage's answer is checked by doing what it claims (`lab.synth.sandboxed` runs
all generated code in the sandbox, never in this process):

| stage     | the LLM writes                          | the gate                                           |
|-----------|-----------------------------------------|----------------------------------------------------|
| schema    | tables, fields, id fields, the policy   | the JSON parses; 3-6 tables; ids first, typed str  |
| models    | pydantic record classes                 | they import in the sandbox, one per table, fields  |
|           |                                         | exactly the schema's                               |
| records   | the initial data                        | every record validates; ids unique; every          |
|           |                                         | reference to another table exists                  |
| toolkit   | tool functions, kinds, one example each | 11-25 tools with schemas; every example runs; every|
|           |                                         | write changes the database, no read does           |
| intents   | what users call about                   | enough distinct ones                               |
| tasks     | scenario + golden calls per intent      | the build filters (`lab.synth.verify`): golden     |
|           |                                         | calls run, the task needs the tools, every write   |
|           |                                         | changes something, told values come from reads     |
| evolution | a harder version of a kept task         | the same filters                                   |

A rejected answer is asked again with the gate's message (at most `max_attempts` per stage); a
task that fails a filter is dropped and counted, as the paper drops unverifiable tasks. Every answer
is cached on disk under the hash of the model and prompt (a rerun costs no calls and gives the same
dataset); calls are capped by a semaphore shared by all domains and bounded by a timeout (the tool
itself retries transient HTTP errors a bounded number of times).

    results = asyncio.run(generate_domains(["library"], 30, seed=0, tool=tool, settings=LLMSettings()))
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.env.state import canonical_hash
from lab.errors import LabInputError
from lab.synth import llm_prompts as prompts
from lab.synth.domain import TOOL_RANGE, seeded_rng
from lab.synth.sandboxed import ANNOTATIONS, SandboxDomain, SandboxError, parse, read_tools, run_code
from lab.synth.tasks import PERSONAS, Scenario, tau2_task
from lab.synth.verify import tally, verify_task

#: The fixed clock of every LLM-built domain (its policy states it; tools get it as `now`).
NOW = "2025-06-02T09:00:00"
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")
#: Backend fields that change what the model answers (the rest say how to reach it).
_ANSWER_FIELDS = ("kind", "model", "temperature", "max_tokens", "system_prompt")


class GateError(ValueError):
    """An answer that fails its stage's check; the message is shown to the LLM on the retry."""


class StageFailed(RuntimeError):
    """A stage whose every attempt failed: the domain cannot be built."""


@dataclass(frozen=True)
class LLMSettings:
    """How hard the generator tries and how it uses the endpoint."""

    max_attempts: int = 3
    stage_timeout_s: float = 600.0
    concurrency: int = 4
    cache_dir: Path | None = None  # default: <cache root>/synth-llm
    records_per_table: int = 8
    intents_per_prompt: int = 6
    evolve_share: float = 0.3


@dataclass
class CachedLLM:
    """One LLM tool behind a response cache, a concurrency cap and a per-call timeout."""

    tool: Any
    cache_dir: Path
    concurrency: int
    timeout_s: float
    requests: int = 0
    cache_hits: int = 0
    _gate: asyncio.Semaphore | None = field(default=None, repr=False)

    def key(self, prompt: str) -> str:
        """The cache key: what decides the answer (the model, its sampling settings, the prompt), not
        where it is served from (URL, port, key variable, timeouts), so a moved server keeps its cache."""
        backend = {k: v for k, v in (self.tool.spec.backend or {}).items() if k in _ANSWER_FIELDS}
        identity = {"model": self.tool.spec.model, "backend": backend, "prompt": prompt}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    async def ask(self, prompt: str) -> str:
        path = self.cache_dir / f"{self.key(prompt)}.json"
        if path.is_file():
            self.cache_hits += 1
            return json.loads(path.read_text(encoding="utf-8"))["text"]
        self._gate = self._gate or asyncio.Semaphore(self.concurrency)
        async with self._gate:
            self.requests += 1
            try:
                observation = await asyncio.wait_for(self.tool.execute({"prompt": prompt}), self.timeout_s)
            except TimeoutError:
                raise StageFailed(f"{self.tool.spec.name}: no answer within {self.timeout_s:g} s") from None
        if observation.error:
            raise StageFailed(f"{self.tool.spec.name}: {observation.error}")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        staging = path.with_suffix(f".tmp-{os.getpid()}")
        staging.write_text(json.dumps({"text": observation.text}), encoding="utf-8")
        staging.replace(path)  # a reader never sees half a file
        return observation.text


def extract(text: str, language: str) -> str:
    """The first fenced block of `language`; a JSON answer without a fence is taken whole."""
    match = re.search(rf"```{language}\s*\n(.*?)```", text, re.DOTALL)
    if match:
        return match.group(1)
    if language == "json" and text.strip()[:1] in "[{":
        return text.strip()
    raise GateError(f"no ```{language} block in the answer")


def _json(text: str, kind: type) -> Any:
    try:
        value = json.loads(extract(text, "json"))
    except json.JSONDecodeError as exc:
        raise GateError(f"the JSON does not parse: {exc}") from None
    if not isinstance(value, kind):
        raise GateError(f"expected a JSON {kind.__name__}, got {type(value).__name__}")
    return value


async def staged(llm: CachedLLM, counts: Counter, stage: str, prompt: str, gate: Callable[[str], Any],
                 attempts: int) -> Any:
    """Ask, gate (in a worker thread: gates run the sandbox), and re-ask with the gate's message."""
    problem = ""
    for _ in range(attempts):
        text = await llm.ask(prompt + (prompts.RETRY.format(problem=problem) if problem else ""))
        try:
            return await asyncio.to_thread(gate, text)
        except (GateError, SandboxError, LabInputError) as exc:
            counts[f"llm/{stage}/rejected"] += 1
            problem = str(exc)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:  # an answer of the wrong shape
            counts[f"llm/{stage}/rejected"] += 1
            problem = f"the answer has the wrong shape ({type(exc).__name__}: {exc})"
    raise StageFailed(f"stage {stage}: {attempts} answers failed its checks; the last: {problem}")


# ---- gates -----------------------------------------------------------------------------------------


def gate_schema(text: str) -> dict[str, Any]:
    schema = _json(text, dict)
    tables, policy = schema.get("tables"), schema.get("policy")
    if not isinstance(tables, list) or not 3 <= len(tables) <= 6:
        raise GateError("'tables' must be a list of 3 to 6 tables")
    if not isinstance(policy, str) or not policy.strip():
        raise GateError("'policy' must be the policy text")
    names = set()
    for table in tables:
        name, fields = table.get("name") if isinstance(table, dict) else None, (table or {}).get("fields")
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) or name in names:
            raise GateError(f"table name {name!r}: must be a new snake_case identifier")
        names.add(name)
        if not isinstance(fields, list) or not fields:
            raise GateError(f"table {name}: 'fields' must be a non-empty list")
        for item in fields:
            if not isinstance(item, dict) or not _IDENTIFIER.fullmatch(str(item.get("name"))):
                raise GateError(f"table {name}: every field needs a snake_case 'name'")
            if item.get("type") not in ANNOTATIONS:
                raise GateError(f"table {name} field {item['name']}: type must be one of {prompts.FIELD_TYPES}")
        if fields[0]["name"] != table.get("id_field") or fields[0]["type"] != "str":
            raise GateError(f"table {name}: the first field must be its id_field, of type str")
    return schema


def gate_models(text: str, schema: dict[str, Any]) -> str:
    code = extract(text, "python")
    reply = run_code(code, {"op": "validate", "db": {t["name"]: {} for t in schema["tables"]}}, timeout_s=60)
    for table in schema["tables"]:
        wanted = [f["name"] for f in table["fields"]]
        got = reply["fields"].get(table["name"])
        if got != wanted:
            raise GateError(f"MODELS[{table['name']!r}] has fields {got}, the schema has {wanted}")
    return code


def gate_records(text: str, schema: dict[str, Any], models: str) -> dict[str, Any]:
    data = _json(text, dict)
    db: dict[str, Any] = {}
    ids = {t["id_field"]: t["name"] for t in schema["tables"]}
    for table in schema["tables"]:
        rows = data.get(table["name"])
        if not isinstance(rows, list) or len(rows) < 3:
            raise GateError(f"table {table['name']}: expected a list of at least 3 records")
        keyed = {}
        for row in rows:
            key = row.get(table["id_field"]) if isinstance(row, dict) else None
            if not isinstance(key, str) or key in keyed:
                raise GateError(f"table {table['name']}: every record needs a unique string {table['id_field']}")
            keyed[key] = row
        db[table["name"]] = keyed
    for table in schema["tables"]:
        for key, row in db[table["name"]].items():
            for name, value in row.items():
                target = ids.get(name)
                if target and target != table["name"] and value is not None and value not in db[target]:
                    raise GateError(f"{table['name']} {key!r}: {name} {value!r} is not in {target}")
    reply = run_code(models, {"op": "validate", "db": db}, timeout_s=60)
    if reply["problems"]:
        raise GateError(f"a record does not validate: {reply['problems'][0]}")
    return reply["db"]


def gate_toolkit(text: str, name: str, models: str, db: dict[str, Any], policy: str) -> SandboxDomain:
    tools_code = extract(text, "python")
    code = f'NOW = "{NOW}"\n\n{models}\n\n{tools_code}'
    found = read_tools(code)
    if found.problems:
        raise GateError(found.problems[0])
    own = {n: t for n, t in found.tools.items() if t.access != "generic"}
    low, high = TOOL_RANGE
    kinds = Counter(t.access for t in own.values())
    if not low <= len(found.tools) <= high or kinds["read"] < 4 or kinds["write"] < 4:
        raise GateError(f"{len(own)} tools ({kinds['read']} reads, {kinds['write']} writes); need {low - 2}-{high - 2} "
                        "with at least 4 of each")
    examples = _examples(tools_code)
    missing = sorted(set(own) - set(examples))
    if missing:
        raise GateError(f"EXAMPLES has no arguments for {missing[0]}")
    domain = SandboxDomain(name, code, found.tools, f"{policy.strip()}\n\nThe current time is {NOW}.\n", NOW)
    calls = []
    for tool_name in own:
        try:
            calls.append({"name": tool_name, "arguments": own[tool_name].bind(examples[tool_name])})
        except Exception as exc:  # a ToolRefused from the argument checks
            raise GateError(f"EXAMPLES[{tool_name!r}]: {exc}") from None
    for call, result in zip(calls, domain.examples(db, calls)):
        if result["error"]:
            raise GateError(f"{call['name']}({json.dumps(call['arguments'])}) failed on the data: {result['text']}")
        if result["changed"] != (own[call["name"]].access == "write"):
            what = "did not change the database" if not result["changed"] else "changed the database"
            raise GateError(f"{call['name']} is a {own[call['name']].access} but its example {what}")
    return domain


def _examples(code: str) -> dict[str, Any]:
    for node in parse(code).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise GateError("EXAMPLES must be a literal dict of tool name -> arguments") from None
            if isinstance(value, dict):
                return value
    raise GateError("no EXAMPLES = {...} dict")


def gate_intents(text: str, count: int) -> list[dict[str, str]]:
    intents = [i for i in _json(text, list) if isinstance(i, dict) and str(i.get("goal", "")).strip()]
    if len({i["goal"] for i in intents}) < count:
        raise GateError(f"expected {count} different requests with a 'goal', got {len(intents)}")
    return intents


_TASK_FIELDS = ("purpose", "reason_for_call", "known_info", "unknown_info")


def gate_tasks(text: str, domain: SandboxDomain, expected: int) -> list[dict[str, Any]]:
    items = _json(text, list)
    if len(items) != expected:
        raise GateError(f"expected {expected} tasks, one per request, got {len(items)}")
    for number, item in enumerate(items):
        where = f"task {number}"
        if not isinstance(item, dict) or any(not isinstance(item.get(k), str) for k in _TASK_FIELDS):
            raise GateError(f"{where}: needs the text fields {', '.join(_TASK_FIELDS)}")
        actions = item.get("actions")
        if not isinstance(actions, list) or not actions:
            raise GateError(f"{where}: 'actions' must be a non-empty list")
        for action in actions:
            if not isinstance(action, dict) or domain.access(action.get("name")) is None:
                raise GateError(f"{where}: action {action!r} names no tool of the domain")
            if not isinstance(action.get("arguments"), dict):
                raise GateError(f"{where}: action {action['name']} needs an 'arguments' object")
        info = item.get("communicate_info", [])
        if not isinstance(info, list) or not all(isinstance(s, str) for s in info):
            raise GateError(f"{where}: 'communicate_info' must be a list of strings")
    return items


def gate_evolved(text: str, domain: SandboxDomain) -> dict[str, Any]:
    """One task, as an object or a list holding one."""
    value = json.loads(extract(text, "json"))
    (item,) = gate_tasks(f"```json\n{json.dumps(value if isinstance(value, list) else [value])}\n```", domain, 1)
    return item


# ---- one domain ------------------------------------------------------------------------------------


@dataclass
class DomainResult:
    """A built domain (or the stage that stopped it) and its counts."""

    name: str
    domain: SandboxDomain | None = None
    db: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    error: str | None = None


def _difficulty(domain: SandboxDomain, actions: list[dict[str, Any]], evolved: bool) -> str:
    writes = sum(domain.access(a["name"]) == "write" for a in actions)
    return "hard" if evolved or writes >= 2 else "medium" if len(actions) >= 4 else "easy"


def _task(domain: SandboxDomain, item: dict[str, Any], task_id: str,
          rng: random.Random, evolved: bool) -> dict[str, Any]:
    actions = [{"name": a["name"], "arguments": a["arguments"]} for a in item["actions"]]
    scenario = Scenario(purpose=item["purpose"], reason_for_call=item["reason_for_call"], known_info=item["known_info"],
                        unknown_info=item["unknown_info"], chain=lambda golden: [],
                        difficulty=_difficulty(domain, actions, evolved))
    return tau2_task(task_id, domain, scenario, actions, list(item.get("communicate_info") or []), rng.choice(PERSONAS))


def _data_text(db: dict[str, Any], limit: int = 12_000) -> str:
    text = json.dumps(db, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + " ...(cut)"


async def generate_domain(name: str, n_tasks: int, seed: int, llm: CachedLLM, settings: LLMSettings,
                          on_stage: Callable[[str, str], None] | None = None) -> DomainResult:
    """Build domain `name` through every stage; a failing stage ends it with `error` set."""
    result = DomainResult(name)
    counts, attempts = result.counts, settings.max_attempts
    rng = seeded_rng("llm-synth", name, seed)

    def stage(label: str) -> None:
        if on_stage:
            on_stage(name, label)

    try:
        description = prompts.DESCRIPTIONS.get(name, f"a customer-service desk for {name.replace('_', ' ')}")
        stage("schema")
        schema = await staged(llm, counts, "schema", prompts.SCHEMA.format(
            name=name, description=description, seed=seed, types=prompts.FIELD_TYPES), gate_schema, attempts)
        schema_text = json.dumps(schema["tables"], indent=1)
        stage("models")
        models = await staged(llm, counts, "models", prompts.MODELS.format(schema=schema_text),
                              lambda text: gate_models(text, schema), attempts)
        stage("records")
        db = await staged(llm, counts, "records", prompts.RECORDS.format(
            schema=schema_text, seed=seed, count=settings.records_per_table, today=NOW[:10]),
            lambda text: gate_records(text, schema, models), attempts)
        stage("toolkit")
        low, high = TOOL_RANGE
        domain = await staged(llm, counts, "toolkit", prompts.TOOLKIT.format(
            models=models, sample=_data_text(db, 4000), policy=schema["policy"], low=low - 2, high=high - 2,
            types=prompts.FIELD_TYPES, reads=4, writes=4),
            lambda text: gate_toolkit(text, name, models, db, schema["policy"]), attempts)
        result.domain, result.db = domain, db
        tools, data = prompts.tool_lines(domain.schemas), _data_text(db)
        start = canonical_hash(db)
        stage("intents")
        wanted = n_tasks - round(n_tasks * settings.evolve_share)
        intents = await staged(llm, counts, "intents", prompts.INTENTS.format(
            seed=seed, policy=domain.policy, tools=tools, sample=data, count=wanted + max(2, wanted // 3)),
            lambda text: gate_intents(text, wanted), attempts)
        stage("tasks")
        verdicts = []
        evolved: set[str] = set()

        async def admit(item: dict[str, Any], is_evolved: bool) -> None:
            """Number the candidate, run the build filters on it, keep it if it passes."""
            task = _task(domain, item, str(len(verdicts)), rng, evolved=is_evolved)
            verdict = await asyncio.to_thread(verify_task, domain, db, task, start)
            verdicts.append(verdict)
            if verdict.kept:
                result.tasks.append(task)
                if is_evolved:
                    evolved.add(task["id"])

        for first in range(0, len(intents), settings.intents_per_prompt):
            if len(result.tasks) >= wanted:
                break
            batch = intents[first:first + settings.intents_per_prompt]
            items = await staged(llm, counts, "tasks", prompts.TASKS.format(
                policy=domain.policy, tools=tools, data=data, intents=json.dumps(batch, ensure_ascii=False)),
                lambda text, n=len(batch): gate_tasks(text, domain, n), attempts)
            for item in items:
                if len(result.tasks) >= wanted:
                    break  # the rest of the batch is neither generated nor counted
                await admit(item, is_evolved=False)
        stage("evolution")
        bases = rng.sample(result.tasks, len(result.tasks))
        for base in bases:
            if len(result.tasks) >= n_tasks:
                break
            shown = {k: v for k, v in base["user_scenario"]["instructions"].items() if k in _TASK_FIELDS}
            shown.update(purpose=base["description"]["purpose"],
                         communicate_info=base["evaluation_criteria"]["communicate_info"],
                         actions=[{"name": a["name"],
                                   "arguments": a["arguments"]} for a in base["evaluation_criteria"]["actions"]])
            item = await staged(llm, counts, "evolution", prompts.EVOLVE.format(
                tools=tools, data=data, task=json.dumps(shown, ensure_ascii=False)),
                lambda text: gate_evolved(text, domain), attempts)
            await admit(item, is_evolved=True)
        counts.update(tally(verdicts))
        for task in result.tasks:
            level = task["description"]["notes"].rsplit(" ", 1)[-1].rstrip(".")
            counts[f"difficulty/{level}/kept"] += 1
            counts[f"template/{'evolved' if task['id'] in evolved else 'base'}/kept"] += 1
    except StageFailed as exc:
        result.error = str(exc)
    return result


async def generate_domains(names: list[str], n_tasks: int, seed: int, tool: Any, settings: LLMSettings,
                           on_stage: Callable[[str, str], None] | None = None) -> tuple[list[DomainResult], CachedLLM]:
    """Every domain at once (their LLM calls share the concurrency cap); results in `names` order."""
    from lab.world.build import cache_root

    for name in names:
        if not _IDENTIFIER.fullmatch(name):
            raise LabInputError(f"--domains: {name!r} is not a snake_case domain name")
    llm = CachedLLM(tool, settings.cache_dir or cache_root() / "synth-llm", settings.concurrency,
                    settings.stage_timeout_s)
    results = await asyncio.gather(*(generate_domain(n, n_tasks, seed, llm, settings, on_stage) for n in names))
    return list(results), llm
