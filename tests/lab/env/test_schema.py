"""lab.env.schema: the schema an agent reads comes from the code, and a bad argument is refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.env.errors import ToolRefused
from lab.env.schema import Tool
from tests.helpers.toy_environment import box

ADD = box.tools["add"]
GOOD = {"counter_id": "c1", "amount": 1.5, "mode": "up", "tags": ["x"]}


def test_the_schema_is_read_off_hints_and_docstring() -> None:
    assert ADD.access == "write" and box.tools["get_counter"].access == "read"
    assert ADD.schema["description"] == "Move a counter by an amount; a counter never goes below zero."
    parameters = ADD.schema["parameters"]
    assert parameters["required"] == ["counter_id", "amount", "mode", "tags"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["mode"] == {"type": "string", "enum": ["up", "down"], "description": "up or down."}
    assert parameters["properties"]["tags"] == {"type": "array", "items": {"type": "string"},
                                                "description": "labels recorded with the change."}


def test_an_undocumented_argument_is_refused_when_the_tool_is_built() -> None:
    def bare(db: dict, x: str) -> str:
        """Does something."""
        return x

    with pytest.raises(TypeError, match="'name: description' line for each of \\['x'\\]"):
        Tool.of(bare, "read")


@pytest.mark.parametrize(("change", "message"), [
    ({"qq": 1}, "add: unexpected argument 'qq' (it takes ['counter_id', 'amount', 'mode', 'tags'])"),
    ({"amount": None}, "add: argument 'amount' must be a number, got null"),
    ({"amount": float("inf")}, "add: argument 'amount' must be a finite number, got inf"),
    ({"amount": True}, "add: argument 'amount' must be a number, got boolean"),
    ({"counter_id": 5}, "add: argument 'counter_id' must be a string, got integer"),
    ({"mode": "sideways"}, "add: argument 'mode' must be one of ['up', 'down'], got 'sideways'"),
    ({"tags": [1]}, "add: argument 'tags' must be an array of strings, holds integer"),
    ({"tags": "x"}, "add: argument 'tags' must be an array, got string"),
])
def test_a_bad_argument_is_refused_naming_it(change: dict, message: str) -> None:
    with pytest.raises(ToolRefused) as refused:
        ADD.bind({**GOOD, **change})
    assert str(refused.value) == message


def test_a_missing_argument_is_named_and_an_int_becomes_a_float() -> None:
    with pytest.raises(ToolRefused, match="^add: missing required argument 'tags'$"):
        ADD.bind({k: v for k, v in GOOD.items() if k != "tags"})
    bound = ADD.bind({**GOOD, "amount": 2})
    assert bound["amount"] == 2.0 and isinstance(bound["amount"], float)


VALUES = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.lists(st.integers() | st.text())


@given(st.sampled_from(list(GOOD)), VALUES)
def test_any_value_is_either_bound_or_refused_never_an_other_error(name: str, value: object) -> None:
    try:
        ADD.bind({**GOOD, name: value})
    except ToolRefused as exc:
        assert str(exc).startswith(f"add: argument '{name}' must be")
