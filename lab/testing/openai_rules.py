"""OpenAI's own rules for a chat-completions request, as its API enforces them: the strict mode of the test server.

Why a second copy of the rules, apart from `lab.providers`: the test server must behave like the provider,
not like the lab's idea of it. These rules are written from OpenAI's API reference and the error bodies its
API returns (the widely reported "Unsupported parameter: 'max_tokens' is not supported with this model. Use
'max_completion_tokens' instead." among them), model family by model family; if the lab's table drifts from
them, a test against the strict server fails. They never import the lab.

`request_error(body, served)` returns None for a request OpenAI would take, else `(status, error object)`
with the real `message`, `type`, `param` and `code`.
"""

from __future__ import annotations

import re
from typing import Any

#: Every top-level parameter of `POST /v1/chat/completions` in OpenAI's API reference.
KNOWN_PARAMETERS = frozenset({
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})
#: Parameters a reasoning model (GPT-5 family, o-series) refuses whatever their value.
REASONING_UNSUPPORTED = ("max_tokens", "top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs",
                         "logit_bias")
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
ROLES = ("system", "developer", "user", "assistant", "tool")
FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

Refusal = tuple[int, dict[str, Any]]


def is_reasoning_model(model: str) -> bool:
    """GPT-5, GPT-5-mini, GPT-5-nano and the o-series reason; GPT-5-chat and the GPT-4 family do not."""
    return bool(re.match(r"(gpt-5|o\d)([.-]|$)", model)) and "-chat" not in model


def request_error(body: dict[str, Any], served: tuple[str, ...] = ()) -> Refusal | None:
    """What OpenAI answers a request it refuses; None for one it takes. `served`: the models the key may use
    (empty: any)."""
    model = str(body.get("model", ""))
    for name in body:
        if name not in KNOWN_PARAMETERS:
            return _invalid(f"Unrecognized request argument supplied: {name}", None, None)
    if served and model not in served:
        return 404, _error(f"The model `{model}` does not exist or you do not have access to it.", None,
                           "model_not_found")
    refusal = _sampling_error(body, model) or _messages_error(body.get("messages")) or _tools_error(body.get("tools"))
    return refusal


def _sampling_error(body: dict[str, Any], model: str) -> Refusal | None:
    effort = body.get("reasoning_effort")
    if not is_reasoning_model(model):
        if effort is not None:
            return _unsupported_parameter("reasoning_effort")
        return None
    if "max_tokens" in body:
        return _invalid("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                        "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
    temperature = body.get("temperature")
    if temperature is not None and float(temperature) != 1.0:
        return _invalid(f"Unsupported value: 'temperature' does not support {temperature} with this model. Only the "
                        "default (1) value is supported.", "temperature", "unsupported_value")
    for name in REASONING_UNSUPPORTED:
        if name in body:
            return _unsupported_parameter(name)
    if effort is not None and effort not in REASONING_EFFORTS:
        return _invalid(f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                        "Supported values are: 'minimal', 'low', 'medium', and 'high'.", "reasoning_effort",
                        "unsupported_value")
    return None


def _messages_error(messages: Any) -> Refusal | None:
    if not isinstance(messages, list) or not messages:
        return _invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                        "empty array instead.", "messages", "empty_array")
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            return _invalid(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                            "'function', 'tool', and 'developer'.", f"messages[{i}].role", "invalid_value")
        if role == "assistant":
            open_calls = {str(call.get("id")) for call in message.get("tool_calls") or [] if isinstance(call, dict)}
        elif role == "tool" and message.get("tool_call_id") not in open_calls:
            return _invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                            "message with 'tool_calls'.", f"messages.[{i}].role", None)
    return None


def _tools_error(tools: Any) -> Refusal | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return _invalid("Invalid type for 'tools': expected an array.", "tools", "invalid_type")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            return _invalid(f"Missing required parameter: 'tools[{i}].function'.", f"tools[{i}].function",
                            "missing_required_parameter")
        name = function.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name):
            return _invalid(f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string "
                            "that matches the pattern '^[a-zA-Z0-9_-]+$'.", f"tools[{i}].function.name",
                            "invalid_value")
        problem = _schema_problem(function.get("parameters", {"type": "object", "properties": {}}))
        if problem:
            return _invalid(f"Invalid schema for function '{name}': {problem}", f"tools[{i}].function.parameters",
                            "invalid_function_parameters")
    return None


def _schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a function's parameters: the top level must be an object schema whose properties
    are schemas (OpenAI checks the rest with JSON Schema, as `jsonschema` does here)."""
    if not isinstance(schema, dict):
        return f"{schema!r} is not of type 'object', 'boolean'."
    if schema.get("type") != "object":
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'."
    from jsonschema import Draft202012Validator, SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"{exc.message}."
    return None


def _unsupported_parameter(name: str) -> Refusal:
    return _invalid(f"Unsupported parameter: '{name}' is not supported with this model.", name,
                    "unsupported_parameter")


def _invalid(message: str, param: str | None, code: str | None) -> Refusal:
    return 400, _error(message, param, code)


def _error(message: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"message": message, "type": "invalid_request_error", "param": param, "code": code}
