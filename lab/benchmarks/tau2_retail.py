"""The tau2-bench retail domain: its 16 agent tools over the real db.json, and the checks that score them.

Why a faithful copy rather than a tidier shop: tau2 scores a retail task by replaying the agent's write
calls on a fresh database and comparing a sha256 of the result with the database its golden actions
produce. To agree with tau2's verdicts every error string, check order and float operation here follows
the specification `shared/benchmarks/tau2/retail/TOOLS.md`, quirks included (cancelling refunds every
payment-history entry; an item modification copies the last new variant's price and options onto every
replaced item; tool 12 records an unrounded price difference). Section numbers below refer to that file.

The database is plain dicts in the canonical form of §1 (`lab.benchmarks.tau2_retail_db`), so a
record's JSON text is the tool's result and `canonical_hash` reproduces tau2's hash. Tools are
`tool(db, **arguments)` returning a string and raising `ToolRefused` (`lab.env.errors`); `call` turns one
agent tool call into tau2's ToolMessage text, and `RETAIL` is the shop as a `lab.env` environment. The
checks of §3 that score a trajectory are tau2's criteria in `lab.env.grading`, applied to retail in
`lab.benchmarks.tau2_env`.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from lab.benchmarks.tau2_retail_db import payment_entry
from lab.env.calculator import evaluate
from lab.env.environment import Access, Environment
from lab.env.errors import ToolRefused
from lab.env.schema import description_of, function_schema, type_schema

CANCEL_REASONS = ("no longer needed", "ordered by mistake")


# ---- lookups and shared checks (§0) -----------------------------------------------------------------


def _lookup(table: dict, key: Any, what: str) -> dict:
    if key not in table:
        raise ToolRefused(f"{what} not found")
    return table[key]


def _order(db: dict, order_id: str, status: str, refusal: str, *, exact: bool = True) -> dict:
    """The order, if its status is `status` (with `exact`) or contains it; else `refusal` is raised."""
    order = _lookup(db["orders"], order_id, "Order")
    if not (order["status"] == status if exact else status in order["status"]):
        raise ToolRefused(refusal)
    return order


def _payment_method(db: dict, user_id: str, method_id: str) -> dict:
    return _lookup(_lookup(db["users"], user_id, "User")["payment_methods"], method_id, "Payment method")


def _check_balance(method: dict, amount: float, refusal: str) -> None:
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise ToolRefused(refusal)


def _credit(method: dict, amount: float) -> None:
    """Add `amount` (negative: charge) to a gift card, rounded to the cent; other methods hold no balance."""
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] + amount, 2)


class UserAddress(BaseModel):
    """tau2's address model, field for field and under its name: pydantic's error text for a field that
    is not a string names the model, so a wrong type reads exactly as in tau2."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:  # noqa: A002
    """An address in model field order; a field that is not a string is refused by tau2's model itself
    (its `ValidationError` text, every wrong field listed, becomes the agent's `Error: ...`)."""
    return UserAddress(address1=address1, address2=address2, city=city, state=state, country=country,
                       zip=zip).model_dump()


def _missing_item(order: dict, item_ids: Iterable[str]) -> str | None:
    """The first id asked for more often than the order holds it (the multiset check), else None."""
    wanted, held = Counter(item_ids), Counter(item["item_id"] for item in order["items"])
    return next((item_id for item_id in wanted if wanted[item_id] > held[item_id]), None)


def _price_difference(db: dict, order: dict, pairs: list[tuple[str, str]], *, forbid_same: bool) -> tuple[Any, Any]:
    """(sum of new minus old prices in pair order, unrounded; the last new variant), checking each pair.

    The sum starts at int 0, so no pairs give int 0: tool 16 stores exactly that.
    """
    diff: Any = 0
    variant = None
    for old, new in pairs:
        if forbid_same and old == new:
            raise ToolRefused("The new item id should be different from the old item id")
        item = next(i for i in order["items"] if i["item_id"] == old)
        variant = _lookup(_lookup(db["products"], item["product_id"], "Product")["variants"], new, "Variant")
        if not variant["available"]:
            raise ToolRefused(f"New item {new} not found or available")
        diff += variant["price"] - item["price"]
    return diff, variant


def _first(found: Iterable[str], message: str) -> str:
    for value in found:
        return value
    raise ToolRefused(message)


# ---- the toolkit: a tool's type hints and first docstring paragraph become its schema -------------

TOOLS: dict[str, Callable[..., str]] = {}
TOOL_ACCESS: dict[str, Access] = {}


def _tool(access: Access) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register a tool; its qualified name becomes `RetailTools.<name>` so that Python's own errors for
    a missing or extra argument read exactly as tau2's (§0)."""
    def register(function: Callable[..., str]) -> Callable[..., str]:
        TOOLS[function.__name__], TOOL_ACCESS[function.__name__] = function, access
        function.__qualname__ = f"RetailTools.{function.__name__}"
        return function
    return register


# ---- read and generic tools (§2.1) -----------------------------------------------------------------


@_tool("read")
def find_user_id_by_email(db: dict, email: str) -> str:
    """Find a user's id from their email address."""
    found = (u["user_id"] for u in db["users"].values() if u["email"].lower() == email.lower())
    return _first(found, "User not found")


@_tool("read")
def find_user_id_by_name_zip(db: dict, first_name: str, last_name: str, zip: str) -> str:  # noqa: A002
    """Find a user's id from their first name, last name and the zip code of their default address."""
    found = (u["user_id"] for u in db["users"].values()
             if u["name"]["first_name"].lower() == first_name.lower()
             and u["name"]["last_name"].lower() == last_name.lower() and u["address"]["zip"] == zip)
    return _first(found, "User not found")


@_tool("read")
def get_user_details(db: dict, user_id: str) -> str:
    """A user's name, default address, email, payment methods (gift cards with balance) and order ids."""
    return json.dumps(_lookup(db["users"], user_id, "User"))


@_tool("read")
def get_order_details(db: dict, order_id: str) -> str:
    """An order's items, status, address, fulfilments and payments; order ids start with '#'."""
    return json.dumps(_lookup(db["orders"], order_id, "Order"))


@_tool("read")
def get_product_details(db: dict, product_id: str) -> str:
    """A product's name and every variant (item) with its options, price and availability."""
    return json.dumps(_lookup(db["products"], product_id, "Product"))


@_tool("read")
def get_item_details(db: dict, item_id: str) -> str:
    """One variant (item) by its id: options, price and availability."""
    found = (json.dumps(p["variants"][item_id]) for p in db["products"].values() if item_id in p["variants"])
    return _first(found, "Item not found")


@_tool("read")
def list_all_product_types(db: dict) -> str:
    """Every product name with its product id."""
    return json.dumps({p["name"]: p["product_id"] for p in db["products"].values()}, sort_keys=True)


@_tool("generic")
def calculate(db: dict, expression: str) -> str:
    """Evaluate arithmetic with digits, + - * /, parentheses and points; the result has 2 decimals.

    The arithmetic is `lab.env.calculator.evaluate`: tau2's, with a cap on exponents.
    """
    return evaluate(expression)


@_tool("generic")
def transfer_to_human_agents(db: dict, summary: str) -> str:
    """Hand the user over to a human agent, with a summary of their issue."""
    return "Transfer successful"


# ---- write tools (§2.2): every check runs before the first change ----------------------------------


@_tool("write")
def cancel_pending_order(db: dict, order_id: str, reason: str) -> str:
    """Cancel a pending order and refund it; reason: 'no longer needed' or 'ordered by mistake'."""
    order = _order(db, order_id, "pending", "Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolRefused("Invalid reason")
    refunds = []
    for entry in order["payment_history"]:  # every entry, payments and refunds alike (tau2's quirk)
        method = _payment_method(db, order["user_id"], entry["payment_method_id"])
        refunds.append(payment_entry("refund", entry["amount"], entry["payment_method_id"]))
        _credit(method, entry["amount"])
    order["status"], order["cancel_reason"] = "cancelled", reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


@_tool("write")
def modify_pending_order_address(db: dict, order_id: str, address1: str, address2: str, city: str, state: str,
                                 country: str, zip: str) -> str:  # noqa: A002
    """Change the shipping address of a pending order."""
    order = _order(db, order_id, "pending", "Non-pending order cannot be modified", exact=False)
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


@_tool("write")
def modify_pending_order_items(db: dict, order_id: str, item_ids: list[str], new_item_ids: list[str],
                               payment_method_id: str) -> str:
    """Swap items of a pending order for other variants of the same products, once per order; the
    price difference is paid or refunded with the given payment method."""
    order = _order(db, order_id, "pending", "Non-pending order cannot be modified")
    missing = _missing_item(order, item_ids)
    if missing is not None:
        raise ToolRefused(f"{missing} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolRefused("The number of items to be exchanged should match")
    pairs = list(zip(item_ids, new_item_ids))
    diff, last_variant = _price_difference(db, order, pairs, forbid_same=True)
    method = _payment_method(db, order["user_id"], payment_method_id)
    _check_balance(method, diff, "Insufficient gift card balance to pay for the new item")
    order["payment_history"].append(payment_entry("payment" if diff > 0 else "refund", abs(diff), payment_method_id))
    _credit(method, -diff)
    for old, new in pairs:  # the first item whose current id is `old`, so earlier pairs count
        item = next(i for i in order["items"] if i["item_id"] == old)
        item["item_id"] = new
        item["price"], item["options"] = last_variant["price"], dict(last_variant["options"])  # tau2's quirk
    order["status"] = "pending (item modified)"
    return json.dumps(order)


@_tool("write")
def modify_pending_order_payment(db: dict, order_id: str, payment_method_id: str) -> str:
    """Pay a pending order with another of the user's payment methods; the old one is refunded."""
    order = _order(db, order_id, "pending", "Non-pending order cannot be modified", exact=False)
    method = _payment_method(db, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolRefused("There should be exactly one payment for a pending order")
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if old_id == payment_method_id:
        raise ToolRefused("The new payment method should be different from the current one")
    _check_balance(method, amount, "Insufficient gift card balance to pay for the order")
    old_method = _payment_method(db, order["user_id"], old_id)
    history.extend([payment_entry("payment", amount, payment_method_id), payment_entry("refund", amount, old_id)])
    _credit(method, -amount)
    _credit(old_method, amount)
    return json.dumps(order)


@_tool("write")
def modify_user_address(db: dict, user_id: str, address1: str, address2: str, city: str, state: str,
                        country: str, zip: str) -> str:  # noqa: A002
    """Change a user's default address (their orders keep theirs)."""
    user = _lookup(db["users"], user_id, "User")
    user["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(user)


@_tool("write")
def return_delivered_order_items(db: dict, order_id: str, item_ids: list[str], payment_method_id: str) -> str:
    """Request a return of items of a delivered order, refunded to the original payment method or a gift
    card."""
    order = _order(db, order_id, "delivered", "Non-delivered order cannot be returned")
    method = _payment_method(db, order["user_id"], payment_method_id)
    if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ToolRefused("Payment method should be the original payment method")
    if _missing_item(order, item_ids) is not None:
        raise ToolRefused("Some item not found")
    order["status"] = "return requested"
    order["return_items"], order["return_payment_method_id"] = sorted(item_ids), payment_method_id
    return json.dumps(order)


@_tool("write")
def exchange_delivered_order_items(db: dict, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str) -> str:
    """Request an exchange of delivered items for other variants of the same products, once per order;
    the price difference is settled with the given payment method."""
    order = _order(db, order_id, "delivered", "Non-delivered order cannot be exchanged")
    missing = _missing_item(order, item_ids)
    if missing is not None:
        raise ToolRefused(f"Number of {missing} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolRefused("The number of items to be exchanged should match.")
    diff, _ = _price_difference(db, order, list(zip(item_ids, new_item_ids)), forbid_same=False)
    diff = round(diff, 2)
    method = _payment_method(db, order["user_id"], payment_method_id)
    _check_balance(method, diff, "Insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"], order["exchange_new_items"] = sorted(item_ids), sorted(new_item_ids)
    order["exchange_payment_method_id"], order["exchange_price_difference"] = payment_method_id, diff
    return json.dumps(order)


# ---- schemas and one call as tau2 answers it (§0) --------------------------------------------------

def _schema(function: Callable[..., str]) -> dict[str, Any]:
    """OpenAI function schema: every argument after `db` is required, none other is allowed, and none
    is described (tau2's schemas describe them; the lab's retail agents are trained without)."""
    hints = typing.get_type_hints(function)
    names = list(inspect.signature(function).parameters)[1:]
    return function_schema(function.__name__, description_of(function.__doc__),
                           {name: type_schema(hints[name]) for name in names})


TOOL_SCHEMAS: dict[str, dict[str, Any]] = {name: _schema(function) for name, function in TOOLS.items()}


def call(db: dict, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """(ToolMessage text, error flag) of one tool call, mutating `db` for a successful write.

    Never raises for bad input: an unknown tool, a missing or extra argument (Python's TypeError text,
    e.g. `RetailTools.get_order_details() missing 1 required positional argument: 'order_id'`) and a
    refused call all come back as `Error: <message>` with the flag set.
    """
    if not isinstance(name, str) or name not in TOOLS:
        return f"Error: Tool '{name}' not found.", True
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {name} must be a JSON object, not {type(arguments).__name__}", True
    try:
        return TOOLS[name](db, **arguments), False
    except Exception as exc:  # noqa: BLE001 - any failure is the agent's observation, as in tau2
        return f"Error: {exc}", True


class RetailEnvironment(Environment):
    """The retail shop as a `lab.env` environment: its tools' access and `call`, for the adapter and the replay."""

    name = "tau2:retail"

    def access(self, name: Any) -> Access | None:
        return TOOL_ACCESS.get(name) if isinstance(name, str) else None

    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        return call(db, name, arguments)


RETAIL = RetailEnvironment()
