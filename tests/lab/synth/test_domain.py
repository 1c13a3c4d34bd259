"""Tests for lab.synth.domain and the bank and restaurant domains: data, tools, schemas, errors, seeds.

What a user would notice: every tool works on generated data, every write really changes the
database (and leaves it valid), reads change nothing, bad calls come back as one `Error:` line that
names the problem and leave the database alone, and a seed fixes the database in every process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.env.schema import Toolbox
from lab.env.state import canonical_hash, clone
from lab.errors import LabInputError
from lab.synth import DOMAINS
from lab.synth.domain import TOOL_RANGE, derive_seed, next_id

NAMES = sorted(DOMAINS)
PINNED_SEED = 369337870096154816


@pytest.fixture(scope="module", params=NAMES)
def domain_db(request):
    domain = DOMAINS[request.param]
    return domain, domain.make_db(seed=3)


def test_tool_counts_and_access():
    for domain in DOMAINS.values():
        kinds = [tool.access for tool in domain.tools.values()]
        assert TOOL_RANGE[0] <= len(kinds) <= TOOL_RANGE[1]
        assert kinds.count("write") >= 4 and kinds.count("read") >= 4 and kinds.count("generic") >= 1


def test_schemas_are_openai_functions():
    for domain in DOMAINS.values():
        for schema in domain.schemas:
            parameters = schema["parameters"]
            assert set(schema) == {"name", "description", "parameters"} and schema["description"]
            assert parameters["additionalProperties"] is False
            assert parameters["required"] == list(parameters["properties"])
            assert all(p["description"] and p["type"] for p in parameters["properties"].values())
            assert "now" not in parameters["properties"]  # the clock is the domain's, never the agent's


def test_policy_states_the_fixed_time():
    for domain in DOMAINS.values():
        assert f"The current time is {domain.now}" in domain.policy


def test_every_tool_runs_and_every_write_changes_the_db(domain_db, valid_calls):
    domain, db = domain_db
    calls = valid_calls[domain.name](db)
    assert sorted(calls) == sorted(domain.tools)
    for name, steps in calls.items():
        state = clone(db)
        for setup_name, arguments in steps[:-1]:
            assert domain.call(state, setup_name, arguments)[1] is False
        before = canonical_hash(state)
        text, is_error = domain.call(state, name, steps[-1][1])
        assert not is_error, f"{name}: {text}"
        assert text
        changed = canonical_hash(state) != before
        assert changed is (domain.access(name) == "write"), name
        domain.validate(state)


def test_bad_input_gives_one_error_line(domain_db, valid_calls):
    domain, db = domain_db
    before = canonical_hash(db)
    calls = valid_calls[domain.name](db)
    for name, steps in calls.items():
        arguments = steps[-1][1]
        if arguments:
            first = next(iter(arguments))
            missing = {k: v for k, v in arguments.items() if k != first}
            assert domain.call(db, name, missing) == (f"Error: {name}: missing required argument '{first}'", True)
            text, is_error = domain.call(db, name, {**arguments, first: {"nested": 1}})
            assert is_error and text.startswith(f"Error: {name}: argument '{first}' must be ") and "got object" in text
        text, is_error = domain.call(db, name, {**arguments, "colour": "red"})
        assert is_error and "unexpected argument 'colour'" in text
    assert domain.call(db, "drop_tables", {}) == (f"Error: unknown tool 'drop_tables' in domain {domain.name}", True)
    assert domain.call(db, None, {})[1] and domain.call(db, "calculate", ["1+1"])[1]
    assert canonical_hash(db) == before


def test_refusals_name_the_problem():
    bank = DOMAINS["bank"]
    db = bank.make_db(seed=3)
    assert bank.call(db, "get_card_details", {"card_id": "CRD-99999"}) == (
        "Error: get_card_details: card 'CRD-99999' not found", True)
    text, _ = bank.call(db, "set_card_daily_limit", {"card_id": "CRD-00001", "daily_limit": 150})
    assert "multiple of 100" in text or "only active cards" in text
    assert bank.call(db, "transfer_funds", {"from_account_id": "ACC-000001", "to_account_id": "ACC-000001",
                                            "amount": 5})[0] == "Error: transfer_funds: the two accounts must differ"
    assert "finite number" in bank.call(db, "transfer_funds", {"from_account_id": "ACC-000001",
                                        "to_account_id": "ACC-000002", "amount": float("nan")})[0]
    assert "must be an integer, got number" in bank.call(db, "set_card_daily_limit",
                                                        {"card_id": "CRD-00001", "daily_limit": 500.0})[0]


def _typed(hint, db: dict) -> st.SearchStrategy:
    """Values of the argument's own type, mostly drawn from the records (so calls reach the tool bodies)."""
    texts = sorted({v for table in db.values() for record in table.values() for v in record.values()
                    if isinstance(v, str)} | {"", " ", "2025-02-30", "20250620", "٢٠٢٥-06-20", "25:99", "²3:00",
                                              "٣٠١١١"})
    numbers = st.one_of(st.sampled_from([0, 1, 5, 100, 500, 1000, 10**9]), st.integers(-10**4, 10**4),
                        st.floats(allow_nan=True, allow_infinity=True))
    if hint is str:
        return st.one_of(st.sampled_from(texts), st.text(max_size=8))
    if hint in (int, float):
        return numbers
    if typing.get_origin(hint) is list:
        return st.lists(st.sampled_from(texts), max_size=4)
    return st.one_of(st.sampled_from(typing.get_args(hint)), st.text(max_size=5))


JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@pytest.mark.parametrize("name", NAMES)
def test_calls_never_raise_and_refusals_leave_the_db_alone(name):
    domain = DOMAINS[name]
    db = domain.make_db(seed=5, size=6)
    outcomes = {"ok": 0, "refused": 0, "bad_arguments": 0}
    typed = {(tool.name, a): _typed(hint, db) for tool in domain.tools.values() for a, hint in tool.arguments.items()}

    @st.composite
    def calls(draw):
        tool = domain.tools[draw(st.sampled_from(sorted(domain.tools)))]
        arguments = {}
        for argument in tool.arguments:
            kind = draw(st.integers(0, 19))  # mostly well typed; sometimes missing or junk
            if kind:
                arguments[argument] = draw(typed[tool.name, argument] if kind > 2 else JUNK)
        if draw(st.integers(0, 19)) == 0:
            arguments[draw(st.sampled_from(["x", "now", "db"]))] = draw(JUNK)
        return tool.name, arguments

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None,
              derandomize=True)
    @given(calls())
    def check(call):
        tool_name, arguments = call
        state = clone(db)
        before = canonical_hash(state)
        text, is_error = domain.call(state, tool_name, arguments)
        assert isinstance(text, str)
        bad_arguments = re.match(rf"Error: {tool_name}: (missing required |unexpected )?argument '", text)
        outcomes["bad_arguments" if bad_arguments else "refused" if is_error else "ok"] += 1
        if is_error:
            assert text.startswith(f"Error: {tool_name}: ") and "\n" not in text
            assert canonical_hash(state) == before
        elif domain.access(tool_name) == "write":
            domain.validate(state)

    check()
    assert min(outcomes.values()) >= 3 and outcomes["refused"] >= 40  # most calls reach the tool bodies


def test_same_seed_same_db_other_seed_other_db():
    for domain in DOMAINS.values():
        assert canonical_hash(domain.make_db(1)) == canonical_hash(domain.make_db(1))
        assert canonical_hash(domain.make_db(1)) != canonical_hash(domain.make_db(2))


def test_seeds_do_not_depend_on_the_process():
    code = ("from lab.synth import DOMAINS; from lab.env.state import canonical_hash;"
            "print(*(canonical_hash(d.make_db(4)) for d in DOMAINS.values()))")
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == [canonical_hash(d.make_db(4)) for d in DOMAINS.values()]
    assert derive_seed("bank", 1) == PINNED_SEED  # the derivation itself must not change


def test_validate_catches_bad_records():
    domain = DOMAINS["bank"]
    db = domain.make_db(seed=3)
    broken = clone(db)
    broken["accounts"]["ACC-000001"]["balance"] = -1.0
    with pytest.raises(LabInputError, match="accounts 'ACC-000001'"):
        domain.validate(broken)
    broken = clone(db)
    # e.g. 1585, not 1585.0
    broken["accounts"]["ACC-000001"]["balance"] = int(broken["accounts"]["ACC-000001"]["balance"])
    with pytest.raises(LabInputError, match="canonical form"):
        domain.validate(broken)
    broken = clone(db)
    del broken["loans"]
    with pytest.raises(LabInputError, match="tables"):
        domain.validate(broken)


def test_next_id_and_toolbox_rules():
    assert next_id({}, "T-", 3) == "T-001"
    assert next_id({"T-001": 1, "T-002": 2}, "T-", 3) == "T-003"
    assert next_id({"T-002": 1}, "T-", 3) == "T-003"  # a gap: one after the largest

    def undocumented(db: dict, x: str) -> str:
        """Does something."""
        return x

    with pytest.raises(TypeError, match="'name: description' line"):
        Toolbox().read(undocumented)
