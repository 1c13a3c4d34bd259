"""lab.env.state: the hash tau2 compares databases by, the copy every rollout starts from, the call log."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lab.env.state import Session, canonical_hash, clone

INT64 = st.integers(-2**63, 2**63 - 1)  # what orjson (and so `clone`) takes; databases hold no larger ints
JSON = st.recursive(st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)
DBS = st.dictionaries(st.text(max_size=4), JSON, max_size=4)


@given(DBS)
def test_a_clone_is_equal_hashes_alike_and_shares_nothing(db: dict) -> None:
    copy = clone(db)
    assert copy == db and canonical_hash(copy) == canonical_hash(db)
    copy["__new__"] = [1]
    assert "__new__" not in db


@given(DBS)
def test_the_hash_ignores_key_order(db: dict) -> None:
    assert canonical_hash(dict(reversed(list(db.items())))) == canonical_hash(db)


def test_the_hash_tells_an_int_from_a_float_and_is_tau2s_text_hash() -> None:
    assert canonical_hash({"a": 1}) != canonical_hash({"a": 1.0})
    # sha256 of '{"a": 1}': sorted keys, Python's default separators
    assert canonical_hash({"a": 1}) == "f9d86028c6e0d64e225186f96acb69338b2c59764df79162107f5c4bb34d1310"


def test_a_session_logs_a_copy_of_each_calls_arguments() -> None:
    session = Session(env=None, initial={}, db={})
    arguments = {"ids": ["a"]}
    session.record("t", arguments, error=False)
    arguments["ids"].append("b")
    assert session.calls == [{"name": "t", "arguments": {"ids": ["a"]}, "error": False}]
