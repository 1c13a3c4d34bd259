"""Tests for lab.benchmarks.tau2_retail: the real retail tools against the check values of TOOLS.md.

What a user would notice: the hashes tau2 reports, the golden replays of all 114 tasks, a wrong
trajectory failing the DB check, the exact error texts an agent reads, and the evaluation helpers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.benchmarks.base import default_benchmarks_dir, read_json
from lab.benchmarks.tau2_env import gold_db
from lab.benchmarks.tau2_retail import RETAIL, TOOL_ACCESS, TOOL_SCHEMAS, call
from lab.benchmarks.tau2_retail_db import copy_db, load_retail_db
from lab.env import replay
from lab.env.grading import actions_ok, communicate_ok, db_matches
from lab.env.state import canonical_hash

RETAIL_DIR = default_benchmarks_dir() / "tau2" / "retail"
pytestmark = pytest.mark.skipif(not (RETAIL_DIR / "db.json").is_file(), reason=f"retail data not found at {RETAIL_DIR}")



def replay_writes(initial: dict, calls: list[dict]) -> dict:
    """The retail replay tau2's DB check makes: the write calls on a fresh copy of `initial`."""
    return replay.replay_writes(RETAIL, initial, calls, copy=copy_db)


INITIAL_HASH = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"
TASK_78_HASH = "4ceb2d12183fc803d711eecf1146b54f9226a43a830737c46d26d6a5bff64a7e"
TASK_0_HASH = "a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a"
UNCHANGED_TASKS = {"10", "12", "24", "25", "50", "57", "62", "65", "67", "68", "105"}
ORDER_FIELDS = ["order_id", "user_id", "address", "items", "status", "fulfillments", "payment_history",
                "cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                "exchange_price_difference", "return_items", "return_payment_method_id"]
CALCULATOR_CHARS = "0123456789+-*/(). "

# Records of db.json used below (found by looking at the file):
PROCESSED = "#W2611340"
PENDING = "#W7634667"  # amelia_kim_4338 paid 607.65 by paypal_1742092; gift_card_4019778 holds 17.0
LAMP, OTHER_PRODUCT_ITEM = "5320792178", "6454334990"  # its Desk Lamp (135.24) and its Tea Kettle
LAMP_UNAVAILABLE, LAMP_PRICIER = "4385534692", "9083642334"  # Desk Lamp variants; the second +29.04
DELIVERED = "#W7728728"  # aarav_nguyen_7344 paid by paypal_7859314; gift_card_2742113 holds 22.0
DELIVERED_ITEM, DELIVERED_PRICIER = "8555936349", "9580569596"  # +30.89
GIFT_PAID_DELIVERED = "#W9077205"  # paid by gift_card_7108145; the user also has paypal_4101143
GIFT_PAID_PENDING = "#W6779827"  # 4079.45 from gift_card_7219486 (49.0); also credit_card_9789590
# its item 3379843752 (3203.76) has a cheaper available variant 3709608322 (2744.7)


@pytest.fixture(scope="module")
def initial() -> dict:
    """The canonical db.json; never mutated (tests that write work on `copy_db(initial)`)."""
    return load_retail_db()


@pytest.fixture(scope="module")
def tasks() -> dict[str, dict]:
    return {task["id"]: task for task in read_json(RETAIL_DIR / "tasks.json")}


def golden(task: dict) -> list[dict]:
    """A task's golden actions as a trajectory's `{name, arguments}` calls."""
    return [{"name": a["name"], "arguments": a["arguments"]} for a in task["evaluation_criteria"]["actions"]]


def writes(task: dict) -> list[dict]:
    return [c for c in golden(task) if TOOL_ACCESS[c["name"]] == "write"]


# ---- the database and the check values of §4 -------------------------------------------------------


def test_the_three_check_hashes(initial: dict, tasks: dict[str, dict]) -> None:
    assert canonical_hash(initial) == INITIAL_HASH
    assert canonical_hash(gold_db(tasks["78"], initial)) == TASK_78_HASH
    assert canonical_hash(gold_db(tasks["0"], initial)) == TASK_0_HASH


def test_the_loaded_database_is_canonical_and_a_fresh_copy_each_time(initial: dict) -> None:
    assert [len(initial[t]) for t in ("products", "users", "orders")] == [50, 500, 1000]
    assert all(list(order) == ORDER_FIELDS for order in initial["orders"].values())
    cancelled = [o for o in initial["orders"].values() if o["status"] == "cancelled"]
    assert len(cancelled) == 102 and all(o["cancel_reason"] is None for o in cancelled)
    assert all(type(m["balance"]) is float for u in initial["users"].values()
               for m in u["payment_methods"].values() if m["source"] == "gift_card")
    mine = load_retail_db(RETAIL_DIR / "db.json")
    mine["orders"][PENDING]["items"][0]["options"]["color"] = "mauve"
    mine["users"]["amelia_kim_4338"]["payment_methods"]["gift_card_4019778"]["balance"] = 0.0
    assert load_retail_db(RETAIL_DIR) == initial != mine


# ---- golden replays of all 114 tasks (§3.2) ----------------------------------------------------------


@dataclass
class GoldenReplay:
    calls: int  # golden calls gold_db made
    errors: list[str]  # "tool: message" for each of them that errored
    unchanged: bool  # the gold database equals the initial one
    golden_trajectory_matches: bool  # db_matches(replay_writes(golden calls), gold_db)


def _recording(calls: list[tuple[str, str, bool]]) -> Callable[[dict, str, dict], tuple[str, bool]]:
    def recording_call(db: dict, name: str, arguments: dict) -> tuple[str, bool]:
        text, error = call(db, name, arguments)
        calls.append((name, text, error))
        return text, error
    return recording_call


@pytest.fixture(scope="module")
def replays(initial: dict, tasks: dict[str, dict]) -> dict[str, GoldenReplay]:
    """Every task's gold database, with gold_db's own calls recorded, and its golden trajectory replayed."""
    results = {}
    for task_id, task in tasks.items():
        calls: list[tuple[str, str, bool]] = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(RETAIL, "call", _recording(calls))
            gold = gold_db(task, initial)
        results[task_id] = GoldenReplay(
            calls=len(calls),
            errors=[f"{name}: {text}" for name, text, error in calls if error],
            unchanged=gold == initial and db_matches(gold, initial),
            golden_trajectory_matches=db_matches(replay_writes(initial, golden(task)), gold),
        )
    return results


def test_eighteen_golden_calls_error_as_the_spec_counts(replays: dict[str, GoldenReplay]) -> None:
    errors = {task_id: r.errors for task_id, r in replays.items() if r.errors}
    assert sum(len(e) for e in errors.values()) == 18, errors
    assert errors["64"] == ["exchange_delivered_order_items: Error: Non-delivered order cannot be exchanged"]
    assert errors["105"] == ["exchange_delivered_order_items: Error: Insufficient gift card balance to pay "
                             "for the price difference"]
    lookups = [e for task_id, e in errors.items() if task_id not in ("64", "105")]
    assert all(m.endswith(("User not found", "Order not found", "Product not found")) for e in lookups for m in e)


def test_eleven_tasks_leave_the_database_unchanged(replays: dict[str, GoldenReplay]) -> None:
    assert {task_id for task_id, r in replays.items() if r.unchanged} == UNCHANGED_TASKS


def test_the_golden_calls_as_a_trajectory_pass_the_db_check_for_every_task(replays: dict[str, GoldenReplay]) -> None:
    assert len(replays) == 114 and sum(r.calls for r in replays.values()) == 550
    assert [t for t, r in replays.items() if not r.golden_trajectory_matches] == []


# ---- wrong trajectories fail the DB check ------------------------------------------------------------


@pytest.fixture(scope="module")
def gold_78(initial: dict, tasks: dict[str, dict]) -> dict:
    return gold_db(tasks["78"], initial)


def _with(call_: dict, **changes: object) -> dict:
    return {"name": call_["name"], "arguments": {**call_["arguments"], **changes}}


@pytest.mark.parametrize("skipped", [0, 1, 2])
def test_skipping_one_golden_write_fails(initial: dict, tasks: dict[str, dict], gold_78: dict, skipped: int) -> None:
    calls = [c for i, c in enumerate(writes(tasks["78"])) if i != skipped]
    assert not db_matches(replay_writes(initial, calls), gold_78)


@pytest.mark.parametrize(("index", "changes"), [
    (2, {"reason": "no longer needed"}),  # another cancel reason
    (0, {"zip": "92102"}),  # another address
    (0, {"address2": ""}),
    (2, {"order_id": PENDING}),  # cancels another pending order
    (0, {"order_id": "#W5995614"}),  # re-addresses the order that is then cancelled
    (1, {"payment_method_id": "paypal_0000000"}),  # a method that does not exist: the swap fails
])
def test_a_wrong_value_or_record_fails(initial: dict, tasks: dict[str, dict], gold_78: dict, index: int,
                                       changes: dict) -> None:
    calls = writes(tasks["78"])
    calls[index] = _with(calls[index], **changes)
    assert not db_matches(replay_writes(initial, calls), gold_78)


def test_reads_and_failing_writes_around_the_golden_writes_still_pass(initial: dict, tasks: dict[str, dict],
                                                                     gold_78: dict) -> None:
    reads = [c for c in golden(tasks["78"]) if TOOL_ACCESS[c["name"]] != "write"]
    failing = [{"name": "cancel_pending_order", "arguments": {"order_id": PROCESSED, "reason": "ordered by mistake"}},
               {"name": "cancel_pending_order", "arguments": {"order_id": "#W5995614"}},
               {"name": "no_such_tool", "arguments": {}}]
    assert not db_matches(replay_writes(initial, reads), gold_78)  # reads only: the DB stays initial
    assert db_matches(replay_writes(initial, reads + failing + writes(tasks["78"]) + failing), gold_78)


def test_the_order_of_items_in_one_modification_matters(initial: dict, tasks: dict[str, dict]) -> None:
    modify = next(c for c in writes(tasks["20"]) if c["name"] == "modify_pending_order_items")
    args = modify["arguments"]
    reversed_ = _with(modify, item_ids=args["item_ids"][::-1], new_item_ids=args["new_item_ids"][::-1])
    assert not db_matches(replay_writes(initial, [reversed_]), replay_writes(initial, [modify]))
    order = gold_db(tasks["20"], initial)["orders"]["#W9911714"]
    assert {item["price"] for item in order["items"]} == {261.11}  # the last variant's price on every item
    assert order["payment_history"][-1]["amount"] == 71.96000000000001


def test_step_order_of_task_78_does_not_matter_and_the_diff_is_unrounded(initial: dict, tasks: dict[str, dict],
                                                                         gold_78: dict) -> None:
    first, second, third = writes(tasks["78"])
    assert canonical_hash(replay_writes(initial, [second, first, third])) == TASK_78_HASH
    order = gold_78["orders"]["#W5056519"]
    assert order["payment_history"][-1] == {"transaction_type": "payment", "amount": 10.359999999999985,
                                            "payment_method_id": "credit_card_3095586"}
    assert order["status"] == "pending (item modified)" and order["items"][0]["price"] == 253.98


# ---- exact error texts; a refused call changes nothing ------------------------------------------------

ERRORS = [
    ("get_order_details", {"order_id": "W5995614"}, "Order not found"),
    ("get_product_details", {"product_id": "0"}, "Product not found"),
    ("get_item_details", {"item_id": "0"}, "Item not found"),
    ("find_user_id_by_email", {"email": "nobody@example.com"}, "User not found"),
    ("cancel_pending_order", {"order_id": PROCESSED, "reason": "ordered by mistake"},
     "Non-pending order cannot be cancelled"),
    ("cancel_pending_order", {"order_id": PENDING, "reason": "changed my mind"}, "Invalid reason"),
    ("modify_pending_order_address", {"order_id": PROCESSED, "address1": "1 A St", "address2": "", "city": "X",
                                      "state": "CA", "country": "USA", "zip": "90001"},
     "Non-pending order cannot be modified"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP, LAMP], "new_item_ids": ["1", "2"],
                                    "payment_method_id": "paypal_1742092"}, f"{LAMP} not found"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [],
                                    "payment_method_id": "paypal_1742092"},
     "The number of items to be exchanged should match"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [LAMP],
                                    "payment_method_id": "paypal_1742092"},
     "The new item id should be different from the old item id"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [OTHER_PRODUCT_ITEM],
                                    "payment_method_id": "paypal_1742092"}, "Variant not found"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [LAMP_UNAVAILABLE],
                                    "payment_method_id": "paypal_1742092"},
     f"New item {LAMP_UNAVAILABLE} not found or available"),
    ("modify_pending_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [LAMP_PRICIER],
                                    "payment_method_id": "gift_card_4019778"},
     "Insufficient gift card balance to pay for the new item"),
    ("modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": "paypal_1742092"},
     "The new payment method should be different from the current one"),
    ("modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": "gift_card_4019778"},
     "Insufficient gift card balance to pay for the order"),
    ("modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": "gift_card_2742113"},
     "Payment method not found"),  # another user's card
    ("modify_user_address", {"user_id": "nobody_0000", "address1": "1 A St", "address2": "", "city": "X",
                             "state": "CA", "country": "USA", "zip": "90001"}, "User not found"),
    ("return_delivered_order_items", {"order_id": PENDING, "item_ids": [LAMP], "payment_method_id": "paypal_1742092"},
     "Non-delivered order cannot be returned"),
    ("return_delivered_order_items", {"order_id": GIFT_PAID_DELIVERED, "item_ids": ["9370300555"],
                                      "payment_method_id": "paypal_4101143"},
     "Payment method should be the original payment method"),
    ("return_delivered_order_items", {"order_id": DELIVERED, "item_ids": [LAMP], "payment_method_id": "paypal_7859314"},
     "Some item not found"),
    ("exchange_delivered_order_items", {"order_id": PENDING, "item_ids": [LAMP], "new_item_ids": [LAMP_PRICIER],
                                        "payment_method_id": "paypal_1742092"},
     "Non-delivered order cannot be exchanged"),
    ("exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [LAMP], "new_item_ids": [LAMP_PRICIER],
                                        "payment_method_id": "paypal_7859314"}, f"Number of {LAMP} not found."),
    ("exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [DELIVERED_ITEM], "new_item_ids": [],
                                        "payment_method_id": "paypal_7859314"},
     "The number of items to be exchanged should match."),
    ("exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [DELIVERED_ITEM],
                                        "new_item_ids": [LAMP_PRICIER], "payment_method_id": "paypal_7859314"},
     "Variant not found"),
    ("exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [DELIVERED_ITEM],
                                        "new_item_ids": [DELIVERED_PRICIER], "payment_method_id": "gift_card_2742113"},
     "Insufficient gift card balance to pay for the price difference"),
    ("get_order_details", {}, "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'"),
    ("cancel_pending_order", {"order_id": PENDING, "reason": "ordered by mistake", "note": "x"},
     "RetailTools.cancel_pending_order() got an unexpected keyword argument 'note'"),
    ("refund_everything", {}, "Tool 'refund_everything' not found."),
]


@pytest.mark.parametrize(("name", "arguments", "message"), ERRORS, ids=[f"{e[0]}:{e[2][:30]}" for e in ERRORS])
def test_a_refused_call_reads_as_tau2_and_changes_nothing(initial: dict, name: str, arguments: dict,
                                                         message: str) -> None:
    db = copy_db(initial)
    assert call(db, name, arguments) == (f"Error: {message}", True)
    assert db == initial


def test_an_item_modified_order_can_only_change_its_address(initial: dict, tasks: dict[str, dict]) -> None:
    db = replay_writes(initial, writes(tasks["78"])[1:2])
    order = "#W5056519"
    assert call(db, "cancel_pending_order", {"order_id": order, "reason": "no longer needed"}) == (
        "Error: Non-pending order cannot be cancelled", True)
    pay = {"order_id": order, "payment_method_id": "credit_card_3095586"}
    assert call(db, "modify_pending_order_payment", pay) == (
        "Error: There should be exactly one payment for a pending order", True)
    text, error = call(db, "modify_pending_order_address", writes(tasks["78"])[0]["arguments"] | {"order_id": order})
    assert not error and json.loads(text)["address"]["city"] == "San Diego"


# ---- what successful writes record ----------------------------------------------------------------------


def test_results_are_model_json_in_field_order_or_raw_strings(initial: dict) -> None:
    text, error = call(initial, "get_order_details", {"order_id": PENDING})
    assert not error and text == json.dumps(initial["orders"][PENDING]) and list(json.loads(text)) == ORDER_FIELDS
    assert call(initial, "find_user_id_by_email", {"email": "NOAH.BROWN7922@example.com"}) == ("noah_brown_6181", False)
    assert call(initial, "transfer_to_human_agents", {"summary": "help"}) == ("Transfer successful", False)
    products = json.loads(call(initial, "list_all_product_types", {})[0])
    assert len(products) == 50 and list(products) == sorted(products)


def test_a_cheaper_variant_refunds_the_unrounded_difference_onto_a_gift_card(initial: dict) -> None:
    db = copy_db(initial)
    text, error = call(db, "modify_pending_order_items", {"order_id": GIFT_PAID_PENDING, "item_ids": ["3379843752"],
                                                          "new_item_ids": ["3709608322"],
                                                          "payment_method_id": "gift_card_7219486"})
    diff = 0 + (2744.7 - 3203.76)  # new minus old price, summed from 0 and never rounded
    assert not error
    assert json.loads(text)["payment_history"][-1] == {"transaction_type": "refund", "amount": abs(diff),
                                                       "payment_method_id": "gift_card_7219486"}
    assert db["users"]["ethan_lopez_6291"]["payment_methods"]["gift_card_7219486"]["balance"] == round(49.0 - diff, 2)


def test_cancelling_after_a_payment_change_refunds_every_history_entry(initial: dict) -> None:
    db, amount = copy_db(initial), 4079.45
    card = db["users"]["ethan_lopez_6291"]["payment_methods"]["gift_card_7219486"]
    assert not call(db, "modify_pending_order_payment", {"order_id": GIFT_PAID_PENDING,
                                                         "payment_method_id": "credit_card_9789590"})[1]
    assert card["balance"] == round(49.0 + amount, 2)
    assert not call(db, "cancel_pending_order", {"order_id": GIFT_PAID_PENDING, "reason": "no longer needed"})[1]
    history = db["orders"][GIFT_PAID_PENDING]["payment_history"]
    assert [(p["transaction_type"], p["payment_method_id"]) for p in history[3:]] == [
        ("refund", "gift_card_7219486"), ("refund", "credit_card_9789590"), ("refund", "gift_card_7219486")]
    assert card["balance"] == round(round(round(49.0 + amount, 2) + amount, 2) + amount, 2)


def test_returns_and_exchanges_record_sorted_ids_and_an_int_zero_for_nothing(initial: dict) -> None:
    db = copy_db(initial)
    items = [i["item_id"] for i in db["orders"][DELIVERED]["items"]]
    assert not call(db, "return_delivered_order_items", {"order_id": DELIVERED, "item_ids": items[::-1],
                                                         "payment_method_id": "gift_card_2742113"})[1]
    assert db["orders"][DELIVERED]["return_items"] == sorted(items)
    nothing = {"order_id": GIFT_PAID_DELIVERED, "item_ids": [], "new_item_ids": [],
               "payment_method_id": "paypal_4101143"}
    assert not call(db, "exchange_delivered_order_items", nothing)[1]
    difference = db["orders"][GIFT_PAID_DELIVERED]["exchange_price_difference"]
    assert difference == 0 and type(difference) is int
    as_float = copy_db(db)
    as_float["orders"][GIFT_PAID_DELIVERED]["exchange_price_difference"] = 0.0
    assert not db_matches(as_float, db)  # tau2's hash tells an int from a float


def _pydantic_string_error(field: str, value: str, kind: str) -> str:
    url = f"https://errors.pydantic.dev/{pydantic.version.version_short()}/v/string_type"
    return (f"{field}\n  Input should be a valid string [type=string_type, input_value={value}, input_type={kind}]\n"
            f"    For further information visit {url}")


def test_an_address_field_that_is_not_text_is_refused_with_tau2s_pydantic_text(initial: dict) -> None:
    """tau2 builds its `UserAddress` model from the arguments, so pydantic words the refusal and lists
    every wrong field in model order; the agent must read exactly that, and nothing may change."""
    db = copy_db(initial)
    address = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA"}
    text, error = call(db, "modify_user_address", {"user_id": "noah_brown_6181", **address, "zip": 90001})
    assert (text,
            error) == ("Error: 1 validation error for UserAddress\n" + _pydantic_string_error("zip", "90001", "int"),
                             True)
    text, error = call(db, "modify_pending_order_address", {"order_id": PENDING, **address, "city": None, "zip": 1.5})
    assert text == ("Error: 2 validation errors for UserAddress\n" + _pydantic_string_error("city", "None", "NoneType")
                    + "\n" + _pydantic_string_error("zip", "1.5", "float"))
    assert error and db == initial


# ---- calculate ------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(CALCULATOR_CHARS), st.characters().filter(lambda c: c not in CALCULATOR_CHARS), st.text())
def test_any_character_outside_the_calculator_set_is_refused(head: str, bad: str, tail: str) -> None:
    assert call({}, "calculate", {"expression": head + bad + tail}) == ("Error: Invalid characters in expression",
                                                                         True)


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-10**4, 10**4).filter(bool))
def test_calculate_rounds_to_two_decimals(numerator: int, denominator: int) -> None:
    assert call({}, "calculate", {"expression": f"{numerator} / ({denominator})"}) == (
        str(round(numerator / denominator, 2)), False)


@pytest.mark.parametrize(("expression", "text"), [("10/3", "3.33"), ("2 * 2", "4.0"), ("2**10", "1024.0"),
                                                  ("7 // 2", "3.0"), ("1/0", "Error: division by zero")])
def test_calculate_examples(expression: str, text: str) -> None:
    assert call({}, "calculate", {"expression": expression})[0] == text


# ---- COMMUNICATE and ACTION checks; the toolkit ---------------------------------------------------------


def test_communicate_ok_ignores_case_blank_messages_and_commas_on_both_sides() -> None:
    said = [None, "  ", "Your refund of $1,234.56 goes to PayPal."]
    assert communicate_ok(["1234.56", "paypal"], said)
    assert communicate_ok(["1,234.56"], said)  # tau2 itself can never match a string with a comma
    assert communicate_ok(["1,234.56"], ["refund: 1234.56"])
    assert not communicate_ok(["1234.56", "gift card"], said)
    assert communicate_ok(None, []) and communicate_ok([], said)


def test_actions_ok_with_null_and_empty_compare_args(tasks: dict[str, dict]) -> None:
    gold = {"name": "cancel_pending_order", "arguments": {"order_id": "#W1", "reason": "ordered by mistake"},
            "compare_args": None}
    same = {"name": "cancel_pending_order", "arguments": {"reason": "ordered by mistake", "order_id": "#W1"}}
    assert actions_ok([gold], [same])
    assert actions_ok([gold], [{"name": gold["name"], "arguments": {"order_id": "#W1"}}])  # omitted: tau2's quirk
    assert not actions_ok([gold], [_with(same, reason="no longer needed")])
    assert not actions_ok([gold], [_with(same, extra=1)])
    transfer = {"name": "transfer_to_human_agents", "arguments": {"summary": "gold words"}, "compare_args": []}
    assert actions_ok([transfer], [{"name": "transfer_to_human_agents", "arguments": {"summary": "mine"}}])
    assert not actions_ok([transfer, gold], [same])
    only_id = {**gold, "compare_args": ["order_id"]}
    assert actions_ok([only_id], [_with(same, reason="no longer needed")])
    assert all(actions_ok(t["evaluation_criteria"]["actions"], golden(t)) for t in tasks.values())


def test_tool_types_and_schemas_fit_every_golden_action(tasks: dict[str, dict]) -> None:
    kinds = list(TOOL_ACCESS.values())
    assert len(TOOL_ACCESS) == 16 and (kinds.count("read"), kinds.count("generic"), kinds.count("write")) == (7, 2, 7)
    assert TOOL_SCHEMAS.keys() == TOOL_ACCESS.keys()
    for name, schema in TOOL_SCHEMAS.items():
        parameters = schema["parameters"]
        assert schema["name"] == name and schema["description"] and parameters["additionalProperties"] is False
        assert sorted(parameters["required"]) == sorted(parameters["properties"])
    assert TOOL_SCHEMAS["return_delivered_order_items"]["parameters"]["properties"]["item_ids"] == {
        "type": "array", "items": {"type": "string"}}
    for task in tasks.values():
        for action in golden(task):
            assert set(action["arguments"]) == set(TOOL_SCHEMAS[action["name"]]["parameters"]["required"])


def test_a_tower_of_powers_is_refused_at_once_instead_of_stalling_the_rollout():
    text, is_error = call({}, "calculate", {"expression": "9**9**9"})
    assert is_error and text == "Error: exponent 387420489 is too large (the limit is 10000)"
    assert call({}, "calculate", {"expression": "2**10 - 24"}) == ("1000.0", False)
