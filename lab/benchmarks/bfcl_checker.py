"""BFCL's AST check: does a model's function call match one of the possible answers?

BFCL (Patil et al., Berkeley Function Calling Leaderboard) grades single-turn categories without
executing anything. The rules follow the leaderboard's own checker (`bfcl_eval/eval_checker/ast_eval/
ast_checker.py` of the `bfcl-eval` package, read at 2026.3.23):

- the output is Python call syntax, `f(a=1, b="x")` or a list `[f(a=1), g(b=2)]`; arguments are keywords;
- the called function must be the expected one; every parameter the doc marks required must be given;
  no parameter outside the doc (or outside the possible answer) may be given;
- each value must have the documented type (`integer`, `float`, `string`, `boolean`, `array`/`tuple`
  with typed items, `dict`, `any`); a Python int is accepted where `float` is documented; a Python tuple
  only where `tuple` is documented, never for `array` (`type_checker`: `array` maps to `list`);
- each value must equal one of the accepted values; strings compare case-insensitively after removing
  spaces and the punctuation `, . / - _ * ^` (spaces only: tabs and newlines count, `standardize_string`);
  `""` in an accepted list means "may be left out", and also accepts a string that is empty after that
  standardisation or an empty list (`string_checker`, `list_checker`); `dict` answers are nested
  (`{key: [accepted values]}`), lists compare element by element, in order;
- `parallel*` categories accept the calls in any order; `irrelevance` is correct iff no call is made
  (an output that does not decode to calls counts as no call there);
- with `underscore_names` (a model behind a function-calling API that cannot put `.` in a tool name: the
  leaderboard's per-model `underscore_to_dot`, `convert_func_name`), `math_factorial` stands for
  `math.factorial`; the dotted name stays accepted too.

Why a value may pass the type check against the doc: where an answer's values have another type than the
doc says, BFCL takes the answer's type. That covers variable references (`x=data['sales']`, kept as
source text in both the answer and the decoded output) and a few mistyped docs. Such values compare
exactly, without the string standardisation (`simple_function_checker`, the `is_variable` branch).

Deliberate differences, where the leaderboard's checker has a plain bug:

- parallel calls are matched by a perfect bipartite matching; the leaderboard matches greedily
  (`parallel_function_checker_no_order`) and fails an output whose calls can all be assigned when an
  early answer takes a call a later one needed;
- `+5` is 5; the leaderboard reads any unary operator as minus (`resolve_ast_by_type`);
- a positional argument makes the output unparseable; the leaderboard drops it silently
  (`resolve_ast_call` reads only keywords).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import BaseModel, Field


class CallParseError(ValueError):
    """A model output that is not Python call syntax (or a structured call list)."""


class FunctionCall(BaseModel):
    """One decoded call: a (possibly dotted) function name and its keyword arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class CheckResult(BaseModel):
    """The verdict on one model output; `error` says what failed first, empty when valid."""

    valid: bool
    error: str = ""


OK = CheckResult(valid=True)

_STRIP = re.compile(r"[ ,./\-_*^]")  # what BFCL removes before comparing strings: spaces, not all whitespace
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


# ---------------------------------------------------------------------------------------------------
# Decoding model output
# ---------------------------------------------------------------------------------------------------


def parse_calls(output: Any) -> list[FunctionCall]:
    """Decode a model output into calls.

    Accepts Python call syntax (one call, or a list/tuple of calls, optionally in a ``` fence), a JSON
    or Python list of `{"name": ..., "arguments": {...}}` or `{name: {args}}` objects, or `FunctionCall`s.
    An empty string or empty list is "no call".
    """
    if isinstance(output, FunctionCall):
        return [output]
    if isinstance(output, dict):
        return [_call_from_dict(output)]
    if isinstance(output, (list, tuple)):
        return [item if isinstance(item, FunctionCall) else _call_from_dict(item) for item in output]
    if not isinstance(output, str):
        raise CallParseError(f"expected text or a list of calls, got {type(output).__name__}")
    text = _FENCE.sub("", output.strip()).strip()
    if not text:
        return []
    if text[0] in "[{":
        try:  # structured JSON output (OpenAI-style tool calls) before Python syntax
            return parse_calls(json.loads(text))
        except (json.JSONDecodeError, CallParseError):
            pass
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise CallParseError(f"not Python call syntax ({exc.msg})") from exc
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    return [_call_from_ast(node) for node in nodes]


def _call_from_dict(item: Any) -> FunctionCall:
    if not isinstance(item, dict):
        raise CallParseError(f"a call must be an object, got {type(item).__name__}")
    if "name" in item:
        arguments = item.get("arguments", {})
        if isinstance(arguments, str):  # OpenAI tool calls carry arguments as a JSON string
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                raise CallParseError(f"arguments of '{item['name']}' are not JSON ({exc.msg})") from exc
        if not isinstance(arguments, dict):
            raise CallParseError(f"arguments of '{item['name']}' must be an object")
        return FunctionCall(name=str(item["name"]), arguments=arguments)
    if len(item) == 1:
        ((name, arguments),) = item.items()
        if isinstance(arguments, dict):
            return FunctionCall(name=str(name), arguments=arguments)
    raise CallParseError("a call object needs 'name' and 'arguments', or be {name: {arguments}}")


def _call_from_ast(node: ast.expr) -> FunctionCall:
    if not isinstance(node, ast.Call):
        raise CallParseError(f"not a function call: {ast.unparse(node)[:80]}")
    name = _dotted_name(node.func)
    if node.args:
        raise CallParseError(f"positional argument in call to '{name}' (use keyword arguments)")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError(f"'**' argument in call to '{name}'")
        arguments[keyword.arg] = _value(keyword.value)
    return FunctionCall(name=name, arguments=arguments)


def _dotted_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise CallParseError(f"cannot read a function name from {ast.unparse(node)[:80]}")


def _value(node: ast.expr) -> Any:
    """A literal argument value; names and other expressions become their source text (BFCL's rule)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return node.id if isinstance(node, ast.Name) else ast.unparse(node)


# ---------------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------------


def check_bfcl(
    model_output_calls: Any,
    possible_answer: list[dict[str, dict[str, list[Any]]]] | None,
    function_docs: list[dict[str, Any]],
    category: str,
    underscore_names: bool = False,
) -> CheckResult:
    """Check a model output against a BFCL possible answer (the `ground_truth` list of an answer row).

    `underscore_names`: the model is behind a function-calling API that cannot put `.` in a tool name, so
    `math_factorial` is accepted for `math.factorial` (the leaderboard's `underscore_to_dot`; off by
    default, as the lab's recording tools keep the dotted names).
    """
    irrelevance = "irrelevance" in category
    try:
        calls = parse_calls(model_output_calls)
    except CallParseError as exc:
        return OK if irrelevance else CheckResult(valid=False, error=f"unparseable output: {exc}")
    if irrelevance:
        if calls:
            return CheckResult(valid=False, error=f"expected no function call, got {', '.join(c.name for c in calls)}")
        return OK
    expected = possible_answer or []
    if len(calls) != len(expected):
        return CheckResult(valid=False, error=f"expected {len(expected)} call(s), got {len(calls)}")
    docs = {doc["name"]: doc for doc in function_docs}
    if category.startswith("parallel"):
        return _check_unordered(calls, expected, docs, underscore_names)
    for index, (call, entry) in enumerate(zip(calls, expected)):
        error = check_call(call, entry, docs, underscore_names)
        if error:
            return CheckResult(valid=False, error=f"call {index}: {error}" if len(calls) > 1 else error)
    return OK


def check_call(
    call: FunctionCall,
    entry: dict[str, dict[str, list[Any]]],
    docs: dict[str, dict[str, Any]],
    underscore_names: bool = False,
) -> str:
    """The first reason `call` fails the expected `{name: {param: [accepted]}}` entry, or ''."""
    ((expected_name, accepted_args),) = entry.items()
    if call.name not in _names_for(expected_name, underscore_names):
        return f"wrong function: expected '{expected_name}', got '{call.name}'"
    doc = docs.get(expected_name)
    if doc is None:
        return f"function '{expected_name}' is not among the documented functions"
    schema = doc.get("parameters") or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in call.arguments:
            return f"missing required parameter '{name}'"
    for name, value in call.arguments.items():
        if name not in properties:
            return f"unknown parameter '{name}' for '{expected_name}'"
        if name not in accepted_args:
            return f"unexpected parameter '{name}' (not in the possible answer)"
        error = _check_value(name, value, properties[name], accepted_args[name])
        if error:
            return error
    for name, accepted in accepted_args.items():
        if name not in call.arguments and not _may_omit(accepted):
            return f"missing parameter '{name}' (the possible answer requires it)"
    return ""


def _check_value(name: str, value: Any, schema: dict[str, Any], accepted: list[Any]) -> str:
    """Type per the doc, then membership in the accepted values; '' when both hold."""
    if value is None and None in accepted:
        return ""
    if not type_ok(value, schema):
        # BFCL's variable rule: where the answer's values have another type than the doc says (a variable
        # written as text, a mistyped doc), a value of exactly the answer's type passes the type check
        if not any(_same_types(value, option) for option in accepted if not _is_omit(option)):
            return f"parameter '{name}': expected {_type_name(schema)}, got {type(value).__name__} {value!r}"[:300]
    if schema.get("type") == "tuple" and isinstance(value, tuple):
        value = list(value)  # answers are JSON, so a documented tuple is answered as a list (as BFCL converts)
    if _is_variable(schema, accepted):
        # the answer is a variable reference (or mistyped): BFCL compares it exactly, no standardisation
        matched = any(_exact_match(value, option) for option in accepted)
    else:
        # `""` ("may be left out") also accepts "" (after standardisation) and [] (`list_checker` reads
        # the empty string as an empty list)
        matched = any(values_match(value, option) for option in accepted) or (
            value == [] and isinstance(value, list) and _may_omit(accepted)
        )
    if not matched:
        shown = [option for option in accepted if not _is_omit(option)]
        return f"parameter '{name}': {value!r} is not an accepted value {shown!r}"[:300]
    return ""


#: The Python type BFCL expects for each documented type (its `PYTHON_TYPE_MAPPING`; `number`/`object`
#: are the JSON Schema spellings the lab also reads).
_PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "number": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "object": dict, "any": str,
}


def _is_variable(schema: dict[str, Any], accepted: list[Any]) -> bool:
    """BFCL's `is_variable`: the first non-omit accepted value's type is not the doc type's Python type."""
    expected = _PYTHON_TYPES.get(str(schema.get("type", "any")))
    first = next((option for option in accepted if not _is_omit(option)), None)
    return expected is not None and first is not None and type(first) is not expected


def _exact_match(value: Any, option: Any) -> bool:
    """Equality without string standardisation (strings case- and space-sensitive)."""
    if isinstance(value, str) or isinstance(option, str):
        return isinstance(value, str) and isinstance(option, str) and value == option
    return values_match(value, option)


def _names_for(name: str, underscore_names: bool) -> set[str]:
    """The names a call may use for the documented `name`: also `a_b` for `a.b` with `underscore_names`."""
    return {name, name.replace(".", "_")} if underscore_names else {name}


def _type_name(schema: dict[str, Any]) -> str:
    """`integer`, or `array of string` for typed arrays, for error messages."""
    kind = str(schema.get("type", "any"))
    items = schema.get("items")
    return f"{kind} of {_type_name(items)}" if isinstance(items, dict) and kind in ("array", "tuple") else kind


def type_ok(value: Any, schema: dict[str, Any]) -> bool:
    """Whether `value` has the documented type; int passes for float, bool never passes for numbers."""
    kind = schema.get("type", "any")
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "number"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("array", "tuple"):
        # a tuple only where the doc says `tuple`: BFCL maps `array` to `list` and rejects tuples there
        shapes = (list, tuple) if kind == "tuple" else list
        items = schema.get("items")
        return isinstance(value, shapes) and (not items or all(type_ok(v, items) for v in value))
    if kind in ("dict", "object"):
        return isinstance(value, dict)
    return True  # `any` or an undocumented type


def values_match(value: Any, option: Any) -> bool:
    """Whether `value` equals one accepted `option`, recursing into lists and nested-answer dicts."""
    if isinstance(option, dict):  # nested answer: {key: [accepted values]}
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            if key not in option:
                return False
            choices = option[key]
            choices = choices if isinstance(choices, list) else [choices]
            if not any(values_match(item, c) for c in choices):  # "" accepts "" (`dict_checker`)
                return False
        return all(key in value or _may_omit(c if isinstance(c, list) else [c]) for key, c in option.items())
    if isinstance(option, (list, tuple)):  # a tuple never equals a list (answers hold lists only)
        return (
            isinstance(value, list)
            and len(value) == len(option)
            and all(values_match(v, o) for v, o in zip(value, option))
        )
    if isinstance(option, str):
        return isinstance(value, str) and normalize(value) == normalize(option)
    if isinstance(option, bool) or isinstance(value, bool):
        return type(option) is type(value) and option == value
    if option is None:
        return value is None
    return isinstance(value, (int, float)) and value == option


def normalize(text: str) -> str:
    """BFCL's string standardisation: lowercase, no spaces or `,./-_*^`, one kind of quote.

    Only spaces go: a tab or a newline stays and must match (BFCL's `standardize_string`).

    >>> normalize("New York, NY") == normalize("new york ny")
    True
    >>> normalize("a\\nb") == normalize("ab")
    False
    """
    return _STRIP.sub("", text).lower().replace("'", '"')


def _same_types(value: Any, option: Any) -> bool:
    """Whether `value` has exactly the Python types of `option`, element by element (int is not float)."""
    if isinstance(option, (list, tuple)):
        return (
            isinstance(value, list)
            and len(value) == len(option)
            and all(_same_types(v, o) for v, o in zip(value, option))
        )
    if isinstance(option, dict):
        return isinstance(value, dict)
    return type(value) is type(option)


def _is_omit(option: Any) -> bool:
    return isinstance(option, str) and option == ""


def _may_omit(accepted: list[Any]) -> bool:
    return any(_is_omit(option) for option in accepted)


def _check_unordered(
    calls: list[FunctionCall],
    expected: list[dict[str, Any]],
    docs: dict[str, dict[str, Any]],
    underscore_names: bool = False,
) -> CheckResult:
    """Match calls to expected entries in any order (a perfect bipartite matching must exist).

    Deliberately not BFCL's greedy matching, which can miss an assignment that exists.
    """
    # (n_expected, n_calls)
    errors = [[check_call(call, entry, docs, underscore_names) for call in calls] for entry in expected]
    owner: dict[int, int] = {}  # call index -> expected index it is matched to

    def assign(i: int, seen: set[int]) -> bool:
        # Kuhn's augmenting path: give entry i a free compatible call, or move that call's owner elsewhere
        for j in range(len(calls)):
            if errors[i][j] or j in seen:
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    expected_names = {next(iter(entry)) for entry in expected}
    allowed = set().union(*(_names_for(name, underscore_names) for name in expected_names))
    for call in calls:
        if call.name not in allowed:
            error = f"unexpected function '{call.name}' (expected {sorted(expected_names)})"
            return CheckResult(valid=False, error=error)
    for i, entry in enumerate(expected):
        if not assign(i, set()):
            name = next(iter(entry))
            # explain with a same-name call left unmatched: that is the one that should have fitted
            names = _names_for(name, underscore_names)
            same_name = sorted((j in owner, j) for j, call in enumerate(calls) if call.name in names)
            reason = errors[i][same_name[0][1]] if same_name else f"no call to '{name}'"
            return CheckResult(valid=False, error=f"no call matches expected call {i} ('{name}'): {reason}")
    return OK
