"""The tau2-like tool domain: a bookshop's database and the operations its tools perform.

Why plain functions over a dict: the same operations serve the tools a rollout calls
(`lab.world.domain_tools`) and the check that replays golden actions on a fresh copy
(`lab.env.grading.state_check`), both through `BOOKSHOP.call`, so the two cannot drift apart. Every
operation validates its inputs against the database and the shop's policy (only pending orders can be
cancelled or re-addressed, only delivered ones returned) and raises `ToolRefused` with a sentence an
agent can act on.

Database shape (JSON): `{"customers": {id: {...}}, "books": {id: {...}}, "orders": {id: {...}}}`.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from lab.env.environment import Access, Environment
from lab.env.errors import ToolRefused
from lab.world.names import NameForge

STATUSES = ["pending", "processing", "shipped", "delivered"]
CANCEL_REASONS = ["no longer needed", "ordered by mistake"]
_STREETS = ["Elm Row", "Quarry Lane", "Mill Street", "Harbour Walk", "Chapel Close", "Orchard Way", "Kiln Road"]
_TITLE_WORDS = ["Glass", "Orchard", "River", "Lantern", "Winter", "Salt", "Copper", "Silent", "Paper", "Tide",
                "Harvest", "Garden", "Shadow", "Clock", "Ember", "Hollow", "Meadow", "Signal"]


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



# ---- operations (the tools' bodies) ----------------------------------------------------------------


def _customer(db: dict, customer_id: str) -> dict:
    if customer_id not in db["customers"]:
        raise ToolRefused(f"no customer with id '{customer_id}'")
    return db["customers"][customer_id]


def _order(db: dict, order_id: str) -> dict:
    if order_id not in db["orders"]:
        raise ToolRefused(f"no order with id '{order_id}' (order ids look like '#O05001')")
    return db["orders"][order_id]


def find_customer_by_email(db: dict, email: str) -> str:
    for cid, c in db["customers"].items():
        if c["email"].lower() == email.strip().lower():
            return cid
    raise ToolRefused(f"no customer with email '{email}'")


def find_customer_by_name(db: dict, name: str, zip: str) -> str:  # noqa: A002 - the field is called zip
    for cid, c in db["customers"].items():
        if c["name"].lower() == name.strip().lower() and c["address"]["zip"] == zip.strip():
            return cid
    raise ToolRefused(f"no customer named '{name}' with zip code '{zip}'")


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
        raise ToolRefused("empty search query")
    return [copy.deepcopy(b) for b in db["books"].values() if q in b["title"].lower() or q in b["author"].lower()]


def cancel_order(db: dict, order_id: str, reason: str) -> dict:
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolRefused(f"order {order_id} is {order['status']}; only pending orders can be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolRefused(f"reason must be one of {CANCEL_REASONS}")
    order["status"], order["cancel_reason"] = "cancelled", reason
    for item in order["items"]:  # cancelled copies go back on the shelf
        db["books"][item["book_id"]]["stock"] += item["quantity"]
    return copy.deepcopy(order)


def return_items(db: dict, order_id: str, book_ids: list[str]) -> dict:
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolRefused(f"order {order_id} is {order['status']}; only delivered orders can be returned")
    in_order = {i["book_id"] for i in order["items"]}
    unknown = [b for b in book_ids if b not in in_order]
    if not book_ids or unknown:
        raise ToolRefused(f"book ids {unknown or book_ids} are not items of order {order_id}")
    order["status"] = "return requested"
    order["returned_book_ids"] = sorted(set(book_ids))
    return copy.deepcopy(order)


def update_order_address(db: dict, order_id: str, street: str, city: str, zip: str) -> dict:  # noqa: A002
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolRefused(f"order {order_id} is {order['status']}; only pending orders can change address")
    order["shipping_address"] = {"street": street, "city": city, "zip": zip}
    return copy.deepcopy(order)


def update_customer_address(db: dict, customer_id: str, street: str, city: str, zip: str) -> dict:  # noqa: A002
    customer = _customer(db, customer_id)
    customer["address"] = {"street": street, "city": city, "zip": zip}
    return copy.deepcopy(customer)


#: name -> (function, does it write, one-line description): what `BOOKSHOP` runs and the tools describe.
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



class BookshopEnvironment(Environment):
    """The shop as a `lab.env` environment: the operations above, each call answered as JSON text
    (sorted keys) or one `Error: ...` line. Arguments are checked against the tools' schemas before
    a rollout's call gets here (`lab.world.domain_tools`); a replayed action is not, so a call that
    does not fit an operation (a missing or unknown argument, a wrong type) is refused here."""

    name = "bookshop"

    def access(self, name: Any) -> Access | None:
        operation = OPERATIONS.get(name) if isinstance(name, str) else None
        return None if operation is None else ("write" if operation[1] else "read")

    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        if self.access(name) is None:
            return f"Error: unknown bookshop operation '{name}'", True
        if not isinstance(arguments, dict):
            return f"Error: the arguments of {name} must be a JSON object", True
        try:
            result = OPERATIONS[name][0](db, **arguments)
        except TypeError as exc:  # wrong argument names
            return f"Error: bad arguments for {name}: {exc}", True
        except (ToolRefused, KeyError, AttributeError, ValueError) as exc:
            return f"Error: {exc}", True
        return json.dumps(result, sort_keys=True), False


BOOKSHOP = BookshopEnvironment()
