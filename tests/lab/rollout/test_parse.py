"""Tests for lab.rollout.parse.

The turn parser: what a model writes becomes calls, an answer, or a precise format error.
"""

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lab.rollout.parse import format_tool_call, parse_turn

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                         st.text())
json_values = st.recursive(json_scalars,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                           max_leaves=8)
names = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_-:."), min_size=1,
                max_size=20)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(names, st.dictionaries(st.text(max_size=10), json_values, max_size=4)), min_size=1,
                max_size=4), st.text(max_size=40))
@example([("0", {"<think>": None})], "")
@example([("echo", {"text": "<think>a</think>"}), ("echo", {"text": "</think>"})], "plan")
def test_formatted_calls_parse_back_exactly(calls, reasoning):
    reasoning = reasoning.replace("<", "")
    text = f"<think>{reasoning}</think>" + "\n".join(format_tool_call(n, a) for n, a in calls)
    parsed = parse_turn(text)
    assert [(c.name, c.arguments) for c in parsed.calls] == calls
    assert all(c.error is None for c in parsed.calls)
    assert parsed.reasoning == reasoning.strip()
    assert parsed.answer is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_without_raising(text):
    parsed = parse_turn(text)
    # exactly one of: calls, an answer, a format error
    assert sum([bool(parsed.calls), parsed.answer is not None, parsed.format_error is not None]) == 1


def test_think_tags_inside_call_arguments_are_not_reasoning():
    text = '<think>quote the tags</think>' + format_tool_call("python", {"code": "print('<think>')"})
    parsed = parse_turn(text)
    assert parsed.reasoning == "quote the tags"
    assert [(c.name, c.arguments, c.error) for c in parsed.calls] == [("python", {"code": "print('<think>')"}, None)]


def test_unclosed_reasoning_is_reasoning_to_the_end():
    parsed = parse_turn("<think>I will call <tool_call> next")
    assert parsed.reasoning == "I will call <tool_call> next"
    assert parsed.calls == [] and parsed.format_error is not None


def test_answer_tag_and_plain_text():
    assert parse_turn("<think>easy</think><answer> Paris </answer>").answer == "Paris"
    assert parse_turn("The answer is 4.").answer == "The answer is 4."


def test_malformed_calls_say_what_is_wrong():
    bad_json = parse_turn('<tool_call>{"name": "search", "arguments": {"q": }</tool_call>').calls[0]
    assert bad_json.error.startswith("tool call is not valid JSON")
    no_name = parse_turn('<tool_call>{"arguments": {}}</tool_call>').calls[0]
    assert no_name.error == "tool call has no 'name' string"
    bad_args = parse_turn('<tool_call>{"name": "s", "arguments": [1]}</tool_call>').calls[0]
    assert "must be a JSON object" in bad_args.error
    open_call = parse_turn('<tool_call>{"name": "s", "arguments": {}}').calls[0]
    assert "unterminated" in open_call.error


def test_empty_turn_and_empty_answer_are_format_errors():
    assert parse_turn("<think>hmm</think>").format_error
    assert parse_turn("<answer>  </answer>").format_error == "empty <answer></answer>"


def test_native_calls_keep_their_ids_and_decode_arguments():
    native = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": "x"})}}]
    call = parse_turn("", native).calls[0]
    assert (call.id, call.name, call.arguments, call.error) == ("call_1", "lookup", {"q": "x"}, None)
    broken = parse_turn("", [{"id": "c", "function": {"name": "lookup", "arguments": "{oops"}}]).calls[0]
    assert broken.error.startswith("arguments are not valid JSON")


def test_a_string_argument_may_contain_the_closing_tag():
    text = format_tool_call("python", {"code": "print('</tool_call>')"}) + format_tool_call("s", {"q": 1})
    calls = parse_turn(text).calls
    assert [(c.name, c.arguments, c.error) for c in calls] == [
        ("python", {"code": "print('</tool_call>')"}, None), ("s", {"q": 1}, None)]


def test_text_between_the_json_and_the_closing_tag_is_a_format_error():
    call = parse_turn('<tool_call>{"name": "s", "arguments": {}} trailing</tool_call>').calls[0]
    assert call.error == "unexpected text after the tool call's JSON object"
