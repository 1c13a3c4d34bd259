"""The one interface every tool shares: an async `execute(arguments, context) -> Observation`.

Why errors are observations and not exceptions: in the paper's loop a malformed or failing call is
something the orchestrator sees and recovers from (and the reward counts), never a crashed rollout.
`validate_arguments` checks a call against the tool's JSON schema and says exactly what is wrong.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from lab.task import Task
from lab.toolspec import ToolSpec


class Observation(BaseModel):
    """What a tool call returns to the orchestrator, with its accounting."""

    text: str = Field("", description="What the orchestrator reads.")
    error: str | None = Field(None, description="None, or what went wrong (the text then explains it too).")
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0)
    latency_s: float = Field(0.0, ge=0, description="Wall-clock (real tools) or simulated seconds.")
    model: str | None = Field(None, description="Canonical model id that produced it, for repricing.")
    simulated: bool = Field(False, description="Produced by a simulated model, not a real one.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Tool-specific detail (doc ids, scores...).")

    @classmethod
    def failure(cls, message: str, **kwargs: Any) -> Observation:
        return cls(text=f"Error: {message}", error=message, **kwargs)


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: one token per 4 characters, at least 1 for non-empty text (the usual
    ~4 characters per English token). What simulated models are billed by, and what the round protocol
    cuts a context by when the orchestrator's own tokenizer is not at hand (a remote endpoint).

    >>> estimate_tokens("What is the capital of France?")
    8
    """
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class ModelRequest:
    """One request to a model tool (`ask`): what a slot tool sends its expert. `execute({"prompt": p})` is
    `ask(ModelRequest(p))`; the other fields are the released expert protocol's (`lab.tools.experts`):
    a system message, sampling, and how long to wait. None leaves the tool's own setting."""

    prompt: str
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    #: ceiling for the whole call, retries included
    timeout_s: float | None = None
    #: retries after the first attempt, and the longest wait between two
    retries: int | None = None
    backoff_max_s: float | None = None


@runtime_checkable
class ModelTool(Protocol):
    """A tool that is a model: besides `execute({"prompt": ...})`, it takes a whole `ModelRequest`."""

    spec: ToolSpec

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation: ...

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation: ...


@dataclass
class JudgeCall:
    """One call a grader made to its judge model (`lab.judge`): stored as a step of kind `judge`."""

    tool_name: str
    prompt: str
    observation: Observation


#: `ToolContext.state` key of the messages the orchestrator wrote to the user (its answers), in order.
AGENT_MESSAGES = "agent_messages"
#: `ToolContext.state` key of the rollout's whole message list (what a judge of the conversation reads).
CONVERSATION = "conversation"


@dataclass
class ToolContext:
    """Per-rollout facts a tool may use: the task (for whitelists and simulated grading) and a seeded RNG."""

    task_id: str = ""
    task: Task | None = None
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)
    #: Observations so far in this rollout (the context the paper toolkit's tools hand their models).
    transcript: list[str] = field(default_factory=list)
    #: What tools found so far in this rollout: successful observations minus the call's own arguments
    #: (`lab.tools.findings.finding`), tracked by the rollout engine; simulated models then count evidence
    #: only from these. None outside a rollout (a tool called directly): the prompt alone decides.
    findings: list[str] | None = None
    #: Per-rollout state of stateful tools, keyed by tool domain (e.g. a `lab.env.state.Session`),
    #: and what the rollout engine leaves for graders and experts (`AGENT_MESSAGES`, `CONVERSATION`).
    state: dict[str, Any] = field(default_factory=dict)
    #: Round protocol (`lab.rollout.rounds`): a `lab.tools.experts.RoundView`, what the environment gathered
    #: this rollout (documents, programs and outputs), the context the orchestrator saw, and how experts are
    #: asked; slot tools build their model's prompt from it in place of the transcript. None otherwise.
    #: (Typed `Any`: `lab.tools.experts` builds on this module, so this module cannot name its classes.)
    round: Any = None
    #: What a grader judged, per criterion (tau2: db, communicate, actions, nl; None = not judged), for
    #: graders that judge more than one thing; stored with the trajectory as `criteria_json`.
    criteria: dict[str, Any] | None = None
    #: The grader's calls to a judge model, in order (`lab.eval.judged`): stored as steps of kind `judge`,
    #: their cost kept apart from the rollout's.
    judge_calls: list[JudgeCall] = field(default_factory=list)
    #: The grade without and with a judge model, `{"exact": bool, "judge": bool}`, for graders that have
    #: one (`lab.eval.judged`); None otherwise (the outcome is then the model-free grade).
    verdicts: dict[str, bool] | None = None


@runtime_checkable
class Tool(Protocol):
    """Anything with a spec and an async execute is a tool."""

    spec: ToolSpec

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation: ...


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def validate_arguments(spec: ToolSpec, arguments: Any) -> str | None:
    """None when `arguments` fit the tool's schema, else one sentence saying what is wrong.

    Checks what orchestrators get wrong in practice: not an object, missing required fields, unknown
    fields (when the schema forbids extras), wrong JSON types and values outside an enum.

    >>> from lab.toolspec import ToolSpec
    >>> s = ToolSpec(name="t", description="", category="basic",
    ...              parameters={"type": "object", "properties": {"q": {"type": "string"}},
    ...                          "required": ["q"], "additionalProperties": False})
    >>> validate_arguments(s, {"q": 3})
    "tool 't': argument 'q' must be string, got integer"
    """
    schema = spec.parameters
    if not isinstance(arguments, dict):
        return f"tool '{spec.name}': arguments must be a JSON object, got {_json_type(arguments)}"
    properties: dict[str, Any] = schema.get("properties", {})
    missing = [name for name in schema.get("required", []) if name not in arguments]
    if missing:
        return f"tool '{spec.name}': missing required argument '{missing[0]}'"
    if schema.get("additionalProperties") is False:
        extra = [name for name in arguments if name not in properties]
        if extra:
            return f"tool '{spec.name}': unknown argument '{extra[0]}' (allowed: {', '.join(properties) or 'none'})"
    for name, value in arguments.items():
        prop = properties.get(name)
        if not prop:
            continue
        problem = _check_value(value, prop)
        if problem:
            return f"tool '{spec.name}': argument '{name}' {problem}"
    return None


def _check_value(value: Any, prop: dict[str, Any]) -> str | None:
    expected = prop.get("type")
    if expected:
        types = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, t) for t in types):
            return f"must be {' or '.join(types)}, got {_json_type(value)}"
    if "enum" in prop and value not in prop["enum"]:
        return f"must be one of {prop['enum']}, got {value!r}"
    if isinstance(value, list) and isinstance(prop.get("items"), dict):
        for i, item in enumerate(value):
            problem = _check_value(item, prop["items"])
            if problem:
                return f"item {i} {problem}"
    return None


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(name, (object,)))


def _json_type(value: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is_type(value, name):
            return name
    return type(value).__name__
