"""The tau2-like tool domain: a bookshop's database and the operations its tools perform.

Why plain functions over a dict: the same operations serve the tools a rollout calls
(`lab.world.domain_tools`) and the checker that replays golden actions on a fresh copy, so the two
cannot drift apart. Every operation validates its inputs against the database and the shop's policy
(only pending orders can be cancelled or re-addressed, only delivered ones returned) and raises
`DomainError` with a sentence an agent can act on.

Database shape (JSON): `{"customers": {id: {...}}, "books": {id: {...}}, "orders": {id: {...}}}`.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from lab.world.names import NameForge

STATUSES = ["pending", "processing", "shipped", "delivered"]
CANCEL_REASONS = ["no longer needed", "ordered by mistake"]
_STREETS = ["Elm Row", "Quarry Lane", "Mill Street", "Harbour Walk", "Chapel Close", "Orchard Way", "Kiln Road"]
_TITLE_WORDS = ["Glass", "Orchard", "River", "Lantern", "Winter", "Salt", "Copper", "Silent", "Paper", "Tide",
                "Harvest", "Garden", "Shadow", "Clock", "Ember", "Hollow", "Meadow", "Signal"]


class DomainError(ValueError):
    """A refused or impossible operation; tools turn it into an error observation."""


def make_db(n_customers: int, rng: random.Random, forge: NameForge) -> dict[str, Any]:
    """A seeded shop: books, customers, and 1-4 orders per customer in assorted statuses."""
    books: dict[str, dict] = {}
    titles: set[str] = set()
    while len(books) < max(30, n_customers // 2):
        title = f"The {rng.choice(_TITLE_WORDS)} {rng.choice(_TITLE_WORDS)} of {forge.town()}"
        if title in titles:
            continue
        titles.add(title)
        bid = f"BK{len(books) + 100:04d}"
        books[bid] = {"book_id": bid, "title": title, "author": forge.person(),
                      "price": round(rng.uniform(6, 45), 2), "stock": rng.randint(0, 30)}
    customers: dict[str, dict] = {}
    orders: dict[str, dict] = {}
    for i in range(n_customers):
        name = forge.person()
        cid = f"C{i + 1000:05d}"
        customers[cid] = {"customer_id": cid, "name": name,
                          "email": name.lower().replace(" ", ".") + "@example.com",
                          "address": random_address(rng, forge)}
        statuses = ["pending", "delivered"] + rng.sample(STATUSES, rng.randint(0, 2))  # every customer can act
        for status in statuses:
            oid = f"#O{len(orders) + 5000:05d}"
            items = [{"book_id": b, "title": books[b]["title"], "quantity": rng.randint(1, 3),
                      "price": books[b]["price"]} for b in rng.sample(sorted(books), rng.randint(1, 3))]
            orders[oid] = {"order_id": oid, "customer_id": cid, "status": status, "items": items,
                           "shipping_address": copy.deepcopy(customers[cid]["address"]),
                           "cancel_reason": None, "returned_book_ids": []}
    return {"customers": customers, "books": books, "orders": orders}


def random_address(rng: random.Random, forge: NameForge) -> dict[str, str]:
    return {"street": f"{rng.randint(1, 240)} {rng.choice(_STREETS)}", "city": forge.town(),
            "zip": f"{rng.randint(10000, 99999)}"}


def clone(db: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a database; an orjson round trip is far faster than `copy.deepcopy` on plain data."""
    return orjson.loads(orjson.dumps(db))


# ---- operations (the tools' bodies) ----------------------------------------------------------------


def _customer(db: dict, customer_id: str) -> dict:
    if customer_id not in db["customers"]:
        raise DomainError(f"no customer with id '{customer_id}'")
    return db["customers"][customer_id]


def _order(db: dict, order_id: str) -> dict:
    if order_id not in db["orders"]:
        raise DomainError(f"no order with id '{order_id}' (order ids look like '#O05001')")
    return db["orders"][order_id]


def find_customer_by_email(db: dict, email: str) -> str:
    for cid, c in db["customers"].items():
        if c["email"].lower() == email.strip().lower():
            return cid
    raise DomainError(f"no customer with email '{email}'")


def find_customer_by_name(db: dict, name: str, zip: str) -> str:  # noqa: A002 - the field is called zip
    for cid, c in db["customers"].items():
        if c["name"].lower() == name.strip().lower() and c["address"]["zip"] == zip.strip():
            return cid
    raise DomainError(f"no customer named '{name}' with zip code '{zip}'")


def get_customer(db: dict, customer_id: str) -> dict:
    c = copy.deepcopy(_customer(db, customer_id))
    c["order_ids"] = sorted(o["order_id"] for o in db["orders"].values() if o["customer_id"] == customer_id)
    return c


def list_orders(db: dict, customer_id: str) -> list[dict]:
    _customer(db, customer_id)
    return [{"order_id": o["order_id"], "status": o["status"], "titles": [i["title"] for i in o["items"]]}
            for o in sorted(db["orders"].values(), key=lambda o: o["order_id"]) if o["customer_id"] == customer_id]


def get_order(db: dict, order_id: str) -> dict:
    return copy.deepcopy(_order(db, order_id))


def search_books(db: dict, query: str) -> list[dict]:
    q = query.strip().lower()
    if not q:
        raise DomainError("empty search query")
    return [copy.deepcopy(b) for b in db["books"].values() if q in b["title"].lower() or q in b["author"].lower()]


def cancel_order(db: dict, order_id: str, reason: str) -> dict:
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise DomainError(f"order {order_id} is {order['status']}; only pending orders can be cancelled")
    if reason not in CANCEL_REASONS:
        raise DomainError(f"reason must be one of {CANCEL_REASONS}")
    order["status"], order["cancel_reason"] = "cancelled", reason
    for item in order["items"]:  # cancelled copies go back on the shelf
        db["books"][item["book_id"]]["stock"] += item["quantity"]
    return copy.deepcopy(order)


def return_items(db: dict, order_id: str, book_ids: list[str]) -> dict:
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise DomainError(f"order {order_id} is {order['status']}; only delivered orders can be returned")
    in_order = {i["book_id"] for i in order["items"]}
    unknown = [b for b in book_ids if b not in in_order]
    if not book_ids or unknown:
        raise DomainError(f"book ids {unknown or book_ids} are not items of order {order_id}")
    order["status"] = "return requested"
    order["returned_book_ids"] = sorted(set(book_ids))
    return copy.deepcopy(order)


def update_order_address(db: dict, order_id: str, street: str, city: str, zip: str) -> dict:  # noqa: A002
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise DomainError(f"order {order_id} is {order['status']}; only pending orders can change address")
    order["shipping_address"] = {"street": street, "city": city, "zip": zip}
    return copy.deepcopy(order)


def update_customer_address(db: dict, customer_id: str, street: str, city: str, zip: str) -> dict:  # noqa: A002
    customer = _customer(db, customer_id)
    customer["address"] = {"street": street, "city": city, "zip": zip}
    return copy.deepcopy(customer)


#: name -> (function, does it write, one-line description); the tools and the replay both use this table.
OPERATIONS: dict[str, tuple[Any, bool, str]] = {
    "find_customer_by_email": (find_customer_by_email, False, "Find a customer's id from their email address."),
    "find_customer_by_name": (find_customer_by_name, False, "Find a customer's id from full name and zip code."),
    "get_customer": (get_customer, False, "Customer details: name, email, address and order ids."),
    "list_orders": (list_orders, False, "A customer's orders with status and book titles."),
    "get_order": (get_order, False, "Full details of one order: items (book ids, titles), status, address."),
    "search_books": (search_books, False, "Books whose title or author contains the query."),
    "cancel_order": (cancel_order, True, "Cancel a pending order; reason: 'no longer needed' or "
                                          "'ordered by mistake'. Confirm with the user first."),
    "return_items": (return_items, True, "Request a return of some books of a delivered order."),
    "update_order_address": (update_order_address, True, "Change the shipping address of a pending order."),
    "update_customer_address": (update_customer_address, True, "Change a customer's default address."),
}


def apply(db: dict, name: str, arguments: dict[str, Any]) -> Any:
    """Run one operation by name on `db` (mutating it for writes)."""
    if name not in OPERATIONS:
        raise DomainError(f"unknown bookshop operation '{name}'")
    try:
        return OPERATIONS[name][0](db, **arguments)
    except TypeError as exc:  # wrong argument names: the tool layer validates first, replay may not
        raise DomainError(f"bad arguments for {name}: {exc}") from None


def replay(initial_db: dict, actions: list[dict]) -> dict:
    """A fresh copy of `initial_db` after `actions` ({name, arguments}); refused actions change nothing."""
    db = clone(initial_db)
    for action in actions:
        arguments = action.get("arguments") if isinstance(action, dict) else None
        if not isinstance(arguments, dict):
            continue  # a malformed action changes nothing, as a malformed tool call would not run
        try:
            apply(db, action["name"], dict(arguments))
        except (DomainError, KeyError, TypeError, AttributeError, ValueError):
            continue  # as in a rollout, a refused call leaves the database as it was
    return db
