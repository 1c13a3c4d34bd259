"""tau2-like tasks for the bookshop domain: a user scenario plus the golden actions that satisfy it.

As in tau2-bench, the question is the user's instruction (what a user simulator is told), the answer is
the list of golden actions (`{"name", "arguments"}`), and success is judged by replaying the golden
actions on a fresh copy of the database and comparing it with the rollout's final database
(`lab.env.grading.state_check`). Each task uses its own customer, so tasks never interfere.

Difficulty: one write identified by id is easy; finding the order from a book title, or returning
items by title, is medium; two writes in one conversation, or a request the shop's policy refuses
(the right outcome is no write at all), is hard. `evidence` lists the ids an agent can only learn from
the tools (customer id, order id, book ids).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from lab.world.bookshop import CANCEL_REASONS, random_address
from lab.world.names import NameForge
from lab.world.task import WorldTask

Draft = tuple[str, list[dict], list[str]]  # instruction, golden actions, evidence


def _act(tool: str, **arguments: Any) -> dict:
    return {"name": tool, "arguments": arguments}


def _orders(db: dict, cid: str, status: str) -> list[dict]:
    return [o for o in sorted(db["orders"].values(), key=lambda o: o["order_id"])
            if o["customer_id"] == cid and o["status"] == status]


def _unique_title(db: dict, cid: str, order: dict) -> str | None:
    """A title in `order` that appears in no other order of the customer (so it identifies the order)."""
    others = {i["title"] for o in db["orders"].values() if o["customer_id"] == cid and o is not order
              for i in o["items"]}
    titles = [i["title"] for i in order["items"] if i["title"] not in others]
    return titles[0] if titles else None


def _cancel_by_id(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    order = _orders(db, c["customer_id"], "pending")[0]
    reason = rng.choice(CANCEL_REASONS)
    text = (f"You are {c['name']} (email {c['email']}). You want to cancel your order {order['order_id']} "
            f"because you {'no longer need it' if reason == CANCEL_REASONS[0] else 'ordered it by mistake'}.")
    golden = [_act("find_customer_by_email", email=c["email"]), _act("get_order", order_id=order["order_id"]),
              _act("cancel_order", order_id=order["order_id"], reason=reason)]
    return text, golden, [c["customer_id"]]


def _cancel_by_title(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    order = _orders(db, c["customer_id"], "pending")[0]
    title = _unique_title(db, c["customer_id"], order)
    if not title:
        return None
    text = (f"You are {c['name']}, zip code {c['address']['zip']}. You don't remember the order number, but you "
            f"want to cancel the order that contains '{title}', because you ordered it by mistake.")
    golden = [_act("find_customer_by_name", name=c["name"], zip=c["address"]["zip"]),
              _act("list_orders", customer_id=c["customer_id"]),
              _act("cancel_order", order_id=order["order_id"], reason="ordered by mistake")]
    return text, golden, [c["customer_id"], order["order_id"]]


def _return_by_title(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    order = _orders(db, c["customer_id"], "delivered")[0]
    items = rng.sample(order["items"], rng.randint(1, len(order["items"])))
    titles = " and ".join(f"'{i['title']}'" for i in items)
    text = (f"You are {c['name']} (email {c['email']}). Your order {order['order_id']} arrived, and you want to "
            f"return {titles}. Keep everything else.")
    book_ids = sorted(i["book_id"] for i in items)
    golden = [_act("find_customer_by_email", email=c["email"]), _act("get_order", order_id=order["order_id"]),
              _act("return_items", order_id=order["order_id"], book_ids=book_ids)]
    return text, golden, [c["customer_id"], *book_ids]


def _order_address(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    order = _orders(db, c["customer_id"], "pending")[0]
    new = random_address(rng, forge)
    text = (f"You are {c['name']}, zip code {c['address']['zip']}. You want your order {order['order_id']} "
            f"shipped to {new['street']}, {new['city']}, {new['zip']} instead. Don't change your default address.")
    golden = [_act("find_customer_by_name", name=c["name"], zip=c["address"]["zip"]),
              _act("update_order_address", order_id=order["order_id"], **new)]
    return text, golden, [c["customer_id"]]


def _customer_address(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    new = random_address(rng, forge)
    text = (f"You are {c['name']} (email {c['email']}). You moved: your new default address is {new['street']}, "
            f"{new['city']}, {new['zip']}. Existing orders should stay as they are.")
    golden = [_act("find_customer_by_email", email=c["email"]),
              _act("update_customer_address", customer_id=c["customer_id"], **new)]
    return text, golden, [c["customer_id"]]


def _cancel_and_return(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    pending = _orders(db, c["customer_id"], "pending")[0]
    delivered = _orders(db, c["customer_id"], "delivered")[0]
    keep, give_back = _unique_title(db, c["customer_id"], pending), _unique_title(db, c["customer_id"], delivered)
    if not keep or not give_back:
        return None
    book_id = next(i["book_id"] for i in delivered["items"] if i["title"] == give_back)
    text = (f"You are {c['name']}, zip code {c['address']['zip']}. Two things: cancel the order with "
            f"'{keep}' (you no longer need it), and return '{give_back}' from the order that was delivered.")
    golden = [_act("find_customer_by_name", name=c["name"], zip=c["address"]["zip"]),
              _act("list_orders", customer_id=c["customer_id"]),
              _act("cancel_order", order_id=pending["order_id"], reason="no longer needed"),
              _act("get_order", order_id=delivered["order_id"]),
              _act("return_items", order_id=delivered["order_id"], book_ids=[book_id])]
    return text, golden, [c["customer_id"], pending["order_id"], delivered["order_id"], book_id]


def _refused_cancel(db: dict, c: dict, rng: random.Random, forge: NameForge) -> Draft | None:
    late = _orders(db, c["customer_id"], "shipped") + _orders(db, c["customer_id"], "processing")
    if not late:
        return None
    order = late[0]
    text = (f"You are {c['name']} (email {c['email']}). You want to cancel your order {order['order_id']} "
            "because you no longer need it. Insist once if the agent hesitates.")
    # Policy allows cancelling pending orders only: the right outcome is to explain and change nothing.
    golden = [_act("find_customer_by_email", email=c["email"]), _act("get_order", order_id=order["order_id"])]
    return text, golden, [c["customer_id"], order["status"]]


TEMPLATES: list[tuple[str, str, Callable[..., Draft | None]]] = [
    ("cancel_by_id", "easy", _cancel_by_id), ("order_address", "easy", _order_address),
    ("customer_address", "easy", _customer_address), ("cancel_by_title", "medium", _cancel_by_title),
    ("return_by_title", "medium", _return_by_title), ("cancel_and_return", "hard", _cancel_and_return),
    ("refused_cancel", "hard", _refused_cancel),
]


def make_bookshop_tasks(db: dict, n: int, rng: random.Random, forge: NameForge) -> list[WorldTask]:
    """`n` tasks, templates cycled, each on a customer no other task uses."""
    customers = [db["customers"][cid] for cid in sorted(db["customers"])]
    rng.shuffle(customers)
    tasks: list[WorldTask] = []
    attempts = 0
    while len(tasks) < n and customers and attempts < n * 20:
        name, level, template = TEMPLATES[len(tasks) % len(TEMPLATES)]
        attempts += 1
        customer = customers[-1]
        draft = template(db, customer, rng, forge)
        if draft is None:
            customers.insert(0, customers.pop())  # try this customer with a later template
            continue
        customers.pop()
        text, golden, evidence = draft
        tasks.append(WorldTask(
            task_id=f"tau2-{len(tasks):04d}", family="tau2", domain="bookshop", difficulty=level,
            question=text, answer=golden, answer_type="actions", evidence=evidence, needs=["actions"],
            meta={"template": name, "customer_id": customer["customer_id"]},
        ))
    return tasks
