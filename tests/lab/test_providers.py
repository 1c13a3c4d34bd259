"""Provider contracts (lab.providers) against the provider's own rules (lab.testing.openai_rules, written apart).

The two are separate encodings on purpose: the lab's table decides what to send, the strict rules what
OpenAI's API refuses. A request the lab builds for a setting it accepts must never be one the API refuses.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.providers import contract_for, provider_of, refusal_line
from lab.testing.openai_rules import request_error

OPENAI = "https://api.openai.com/v1"
OPENAI_MODELS = ["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-2025-08-07", "gpt-5.1", "o1", "o3", "o3-mini",
                 "o4-mini", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5-chat-latest"]
MESSAGES = [{"role": "user", "content": "What is 2 + 2?"}]


def test_gpt5_on_openai_gets_max_completion_tokens_and_no_sampling_it_refuses() -> None:
    contract = contract_for("gpt-5", [OPENAI], "tool 'answer'")
    assert contract.options(max_tokens=40000, temperature=1.0, top_p=0.9) == {
        "max_completion_tokens": 40000, "temperature": 1.0}
    # a protocol's default it does not take (the lab's experts at 0.2) stays home: the model runs at 1 anyway
    assert contract.options(max_tokens=8000, temperature=0.2) == {"max_completion_tokens": 8000}


def test_a_vllm_server_gets_max_tokens_and_every_sampling_value() -> None:
    contract = contract_for("Qwen/Qwen3-32B", ["http://127.0.0.1:8001/v1"], "slot 'answer-4'")
    assert contract.options(max_tokens=8000, temperature=0.2, top_p=0.95) == {
        "max_tokens": 8000, "temperature": 0.2, "top_p": 0.95}
    assert contract_for("meta-llama/Llama-3.3-70B-Instruct-Turbo", ["https://api.together.xyz/v1"],
                        "slot").provider == "compatible"


def test_a_chosen_setting_the_model_refuses_is_one_line_naming_where_and_what() -> None:
    contract = contract_for("gpt-5-mini", [OPENAI], "tool 'judge'")
    with pytest.raises(LabInputError) as refused:
        contract.check("tool 'judge': backend", temperature=0.2)
    assert str(refused.value) == ("tool 'judge': backend: gpt-5-mini on openai (reasoning) takes temperature 1 only "
                                  "(got 0.2); leave it out or set it to 1")
    with pytest.raises(LabInputError, match="refuses top_p"):
        contract.check("--orchestrator", top_p=0.9)
    with pytest.raises(LabInputError, match="takes no reasoning_effort"):
        contract_for("gpt-4o", [OPENAI], "tool").check("tool", reasoning_effort="high")
    contract.check("tool", temperature=1, reasoning_effort="high")  # what the model takes passes


def test_a_provider_or_model_the_lab_cannot_place_is_refused_with_how_to_name_it() -> None:
    with pytest.raises(LabInputError) as unknown_host:
        provider_of("https://llm.example.com/v1", "slot 'answer-1' of tool 'answer'")
    assert "slot 'answer-1' of tool 'answer'" in str(unknown_host.value)
    assert "`provider:` in a toolkit backend" in str(unknown_host.value) and "\n" not in str(unknown_host.value)
    with pytest.raises(LabInputError, match="cannot place model 'gpt-7-turbo'.*`model_family:`"):
        contract_for("gpt-7-turbo", [OPENAI], "tool 'x'")
    assert contract_for("gpt-7-turbo", [OPENAI], "tool 'x'", family="reasoning").family.name == "reasoning"
    assert contract_for("my-model", ["https://llm.example.com/v1"], "t", provider="openai",
                        family="chat").provider == "openai"
    with pytest.raises(LabInputError, match="unknown provider 'anthropic'"):
        contract_for("gpt-5", [OPENAI], "t", provider="anthropic")


@pytest.mark.parametrize("url", ["http://localhost:8000/v1", "http://10.0.0.7:8000/v1", "https://gpu1:8000/v1",
                                 "https://vllm.internal/v1", "https://192.168.1.20/v1"])
def test_servers_on_this_machine_or_a_private_network_follow_vllms_rules(url: str) -> None:
    assert provider_of(url, "t") == "compatible"


@settings(max_examples=300, deadline=None)
@given(model=st.sampled_from(OPENAI_MODELS),
       max_tokens=st.one_of(st.none(), st.integers(1, 128000)),
       temperature=st.one_of(st.none(), st.sampled_from([0.0, 0.2, 0.7, 1.0, 1.3])),
       top_p=st.one_of(st.none(), st.sampled_from([0.5, 0.95, 1.0])),
       effort=st.one_of(st.none(), st.sampled_from(["minimal", "low", "medium", "high"])),
       chosen=st.booleans())
def test_whatever_the_lab_sends_openai_accepts(model: str, max_tokens: int | None, temperature: float | None,
                                               top_p: float | None, effort: str | None, chosen: bool) -> None:
    """For settings the user chose (checked first) or a protocol filled in (sent as the model takes them), the
    request the contract builds is one OpenAI's rules take."""
    contract = contract_for(model, [OPENAI], "tool")
    if chosen:
        try:
            contract.check("tool", temperature=temperature, top_p=top_p, reasoning_effort=effort)
        except LabInputError:
            return  # refused before any call: nothing is sent
    options = contract.options(max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                               reasoning_effort=effort if contract.family.reasoning_effort else None)
    assert request_error({"model": model, "messages": MESSAGES, **options}) is None
    if max_tokens is not None:
        assert options.get("max_completion_tokens") == max_tokens and "max_tokens" not in options


def test_the_strict_rules_refuse_what_openai_refuses_with_its_error_bodies() -> None:
    status, error = request_error({"model": "gpt-5", "messages": MESSAGES, "max_tokens": 10}) or (0, {})
    assert status == 400 and error == {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                   "'max_completion_tokens' instead.",
        "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}
    assert (request_error({"model": "gpt-5-mini", "messages": MESSAGES, "temperature": 0.2}) or (0, {}))[1][
        "code"] == "unsupported_value"
    assert (request_error({"model": "o3", "messages": MESSAGES, "top_p": 1}) or (0, {}))[1]["param"] == "top_p"
    assert (request_error({"model": "gpt-4o", "messages": MESSAGES, "return_token_ids": True}) or (0, {}))[1][
        "message"] == "Unrecognized request argument supplied: return_token_ids"
    bad_schema = [{"type": "function", "function": {"name": "answer", "parameters": {"type": "string"}}}]
    assert (request_error({"model": "gpt-4o", "messages": MESSAGES, "tools": bad_schema}) or (0, {}))[1][
        "code"] == "invalid_function_parameters"
    orphan = [*MESSAGES, {"role": "tool", "content": "4", "tool_call_id": "call_1"}]
    assert request_error({"model": "gpt-4o", "messages": orphan}) is not None
    assert request_error({"model": "gpt-5", "messages": MESSAGES}, served=("gpt-5-mini",)) == (404, {
        "message": "The model `gpt-5` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": None, "code": "model_not_found"})


@given(param=st.one_of(st.none(), st.text(min_size=1, max_size=20)), message=st.text(min_size=1, max_size=400))
def test_a_refusal_is_one_line_naming_the_parameter_and_the_model(param: str | None, message: str) -> None:
    contract = contract_for("gpt-5", [OPENAI], "tool")
    line = refusal_line(400, {"error": {"message": message, "param": param}}, contract)
    assert "\n" not in line and line.startswith("HTTP 400 for gpt-5 on openai (reasoning)")
    if param and param.split():
        assert f"parameter '{' '.join(param.split())}'" in line
    assert refusal_line(502, "<html>bad gateway</html>", contract) == "HTTP 502: <html>bad gateway</html>"
