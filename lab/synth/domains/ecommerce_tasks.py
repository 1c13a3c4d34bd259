"""E-commerce task templates: what a customer writes in about, and the agent's golden chain for each.

Eight templates: an easy cancellation, medium requests found by description (a new order built from
product names and options, a new delivery address, a swapped size or colour, a return), two writes
in one call (a new order with a coupon, whose discount depends on the subtotal and the coupon's
terms; a rushed order sent to another address), and a refusal: a change-of-mind return of a hygiene
item, which the policy forbids though the return tool would take it, where the right chain reads the
order total the customer asks for and writes nothing. The evolution step adds a read-only question
(the gift card balance, the tracking number of a parcel on its way, the total of the latest order)
asked after the request is done.

Each chain identifies the customer as the policy demands, by email or by name and zip code,
whichever the scenario's known info gives, and finds orders, variants and payment methods through
the tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date
from typing import Any

from lab.synth import people
from lab.synth.domains.ecommerce_data import HYGIENE_CATEGORIES, RETURN_DAYS, TODAY
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your customer id or any order, product, variant or payment method ids."
_CANCEL = {"no_longer_needed": "you no longer need it", "ordered_by_mistake": "you ordered it by mistake",
           "found_cheaper": "you found it cheaper elsewhere", "delivery_too_slow": "delivery would take too long"}
_RETURN = {"damaged": "it arrived damaged", "defective": "it does not work",
           "wrong_item": "you were sent the wrong item", "not_as_described": "it is not as described on the site",
           "changed_mind": "you changed your mind"}
_OPEN = ("pending", "processing")


def _own(db: dict, table: str, customer_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "customer_id", customer_id, **match)


def _identity(db: dict, customer_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    c = db["customers"][customer_id]
    if rng.random() < 0.5:
        return (f"You are {c['first_name']} {c['last_name']}. Your email is {c['email']}.",
                lambda g: g("find_customer_by_email", email=c["email"]))
    return (f"You are {c['first_name']} {c['last_name']}. Your zip code is {c['address']['zip']}.",
            lambda g: g("find_customer_by_name_zip", first_name=c["first_name"], last_name=c["last_name"],
                        zip=c["address"]["zip"]))


def _items(lines: list[dict]) -> list[tuple[str, str, int]]:
    return [(line["product_name"], line["option"], line["quantity"]) for line in lines]


def _describe(order: dict) -> str:
    """How the customer names an order: the day they placed it and what is in it."""
    wording = " and ".join(f"{n} x {name} ({option})" for name, option, n in _items(order["items"]))
    return f"your order of {wording} placed on {order['placed_at'][:10]}"


def _find_order(g: Golden, customer_id: str, order: dict) -> dict:
    """The order the customer described, as the agent finds it among theirs."""
    order_ids = g("get_customer_details", customer_id=customer_id)["order_ids"]
    found = (g("get_order_details", order_id=o) for o in order_ids)
    return next(o for o in found if (o["placed_at"][:10], _items(o["items"]))
                == (order["placed_at"][:10], _items(order["items"])))


def _variant_id(g: Golden, product: str, option: str) -> str:
    product_id = next(p["product_id"] for p in g("search_products", query=product) if p["name"] == product)
    return next(v["variant_id"] for v in g("get_product_details", product_id=product_id)["variants"]
                if v["option"] == option)


def _method_wording(method: dict) -> str:
    return {"card": f"your {method['label']}", "paypal": "your PayPal account",
            "gift_card": "your gift card"}[method["kind"]]


def _basket(db: dict, rng: random.Random) -> list[tuple[str, str, int]]:
    """1-2 (product name, option, pieces) the customer wants."""
    products = rng.sample(sorted(db["products"]), rng.randint(1, 2))
    basket = []
    for product_id in products:
        options = sorted(v["option"] for v in db["variants"].values() if v["product_id"] == product_id)
        basket.append((db["products"][product_id]["name"], rng.choice(options), rng.randint(1, 2)))
    return basket


def _order_chain(g: Golden, customer_id: str, basket: list[tuple[str, str, int]], method: dict) -> dict:
    variant_ids = [variant for name, option, n in basket for variant in [_variant_id(g, name, option)] * n]
    methods = g("list_payment_methods", customer_id=customer_id)
    method_id = next(m["method_id"] for m in methods if (m["kind"], m["label"]) == (method["kind"], method["label"]))
    return g("place_order", customer_id=customer_id, variant_ids=variant_ids, payment_method_id=method_id)


def _basket_wording(basket: list[tuple[str, str, int]]) -> str:
    return " and ".join(f"{n} x {name} ({option})" for name, option, n in basket)


def buy_items(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    basket, method = _basket(db, rng), rng.choice(_own(db, "payment_methods", customer_id))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        _order_chain(g, identify(g), basket, method)
        return []
    return Scenario("Place the order the customer dictates, paid with the payment method they name.",
                    f"You want to order {_basket_wording(basket)}, paid with {_method_wording(method)}.",
                    known, UNKNOWN, chain, "medium")


def buy_with_coupon(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    basket, method = _basket(db, rng), rng.choice(_own(db, "payment_methods", customer_id))
    code = rng.choice(sorted(c for c, coupon in db["coupons"].items() if coupon["expires_on"] >= TODAY.isoformat()))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        order = _order_chain(g, identify(g), basket, method)
        g("apply_coupon", order_id=order["order_id"], code=code)
        return []
    return Scenario("Place the order the customer dictates and apply their coupon to it.",
                    f"You want to order {_basket_wording(basket)}, paid with {_method_wording(method)}, and you "
                    f"have the coupon code {code} to use on it.", known, UNKNOWN, chain, "hard")


def _open_orders(db: dict, customer_id: str) -> list[dict]:
    return [o for o in _own(db, "orders", customer_id) if o["status"] in _OPEN]


def cancel_order(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    orders = _open_orders(db, customer_id)
    if not orders:
        return None
    order, reason = rng.choice(orders), rng.choice(sorted(_CANCEL))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        g("cancel_order", order_id=_find_order(g, identify(g), order)["order_id"], reason=reason)
        return []
    return Scenario("Cancel the order the customer describes, with the reason they give.",
                    f"You want to cancel {_describe(order)}, because {_CANCEL[reason]}.",
                    known, UNKNOWN, chain, "easy")


def redirect_order(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    orders = _open_orders(db, customer_id)
    if not orders:
        return None
    order, new = rng.choice(orders), people.address(rng)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        g("modify_order_address", order_id=_find_order(g, identify(g), order)["order_id"], **new)
        return []
    return Scenario("Send an order that has not shipped to the new address the customer gives.",
                    f"You want {_describe(order)} delivered to {new['street']}, {new['city']} {new['zip']} "
                    "instead; your account address stays as it is.", known, UNKNOWN, chain, "medium")


def swap_variant(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    orders = _open_orders(db, customer_id)
    if not orders:
        return None
    order = rng.choice(orders)
    line = rng.choice(order["items"])
    in_order = {item["variant_id"] for item in order["items"]}
    product_id = db["variants"][line["variant_id"]]["product_id"]
    others = sorted(v["option"] for v in db["variants"].values()
                    if v["product_id"] == product_id and v["variant_id"] not in in_order)
    if not others:
        return None
    option = rng.choice(others)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_order(g, identify(g), order)
        new_id = _variant_id(g, line["product_name"], option)
        old_id = next(item["variant_id"] for item in found["items"]
                      if (item["product_name"], item["option"]) == (line["product_name"], line["option"]))
        g("change_order_item", order_id=found["order_id"], variant_id=old_id, new_variant_id=new_id)
        return []
    return Scenario("Swap an item of an order that has not shipped for the option the customer wants.",
                    f"In {_describe(order)}, you want the {line['product_name']} in {option} instead of "
                    f"{line['option']}.", known, UNKNOWN, chain, "medium")


def _delivered(db: dict, customer_id: str) -> list[dict]:
    """Delivered orders the customer would still think of returning (received in the last 40 days)."""
    return [o for o in _own(db, "orders", customer_id, status="delivered")
            if (TODAY - date.fromisoformat(o["delivered_on"])).days <= RETURN_DAYS + 10]


def _is_hygiene(db: dict, line: dict) -> bool:
    return db["products"][db["variants"][line["variant_id"]]["product_id"]]["category"] in HYGIENE_CATEGORIES


def return_item(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    orders = _delivered(db, customer_id)
    if not orders:
        return None
    order = rng.choice(orders)
    returned = {r["variant_id"] for r in db["returns"].values() if r["order_id"] == order["order_id"]}
    lines = [line for line in order["items"] if line["variant_id"] not in returned]  # the customer knows
    if not lines:
        return None
    line = rng.choice(lines)
    reasons = ["damaged", "defective", "wrong_item"] if _is_hygiene(db, line) else sorted(_RETURN)
    reason, quantity = rng.choice(reasons), rng.randint(1, line["quantity"])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_order(g, identify(g), order)
        variant_id = next(item["variant_id"] for item in found["items"]
                          if (item["product_name"], item["option"]) == (line["product_name"], line["option"]))
        g("request_return", order_id=found["order_id"], variant_id=variant_id, quantity=quantity, reason=reason)
        return []
    return Scenario("Open a return for the delivered item the customer describes, with their reason.",
                    f"From {_describe(order)} (delivered on {order['delivered_on']}), you want to return {quantity} "
                    f"x {line['product_name']} ({line['option']}) because {_RETURN[reason]}.",
                    known, UNKNOWN, chain, "medium")


def rush_to_new_address(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    orders = [o for o in _open_orders(db, customer_id) if o["shipping_speed"] == "standard"]
    if not orders:
        return None
    order, new = rng.choice(orders), people.address(rng)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_order(g, identify(g), order)
        g("modify_order_address", order_id=found["order_id"], **new)
        g("set_shipping_speed", order_id=found["order_id"], speed="express")
        return []
    return Scenario("Send an order to a new address and upgrade it to express shipping.",
                    f"You are staying at {new['street']}, {new['city']} {new['zip']} for a while. You want "
                    f"{_describe(order)} sent there, by express shipping.", known, UNKNOWN, chain, "hard")


def refused_hygiene_return(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    fits = [(o, line) for o in _delivered(db, customer_id) for line in o["items"] if _is_hygiene(db, line)]
    if not fits:
        return None
    order, line = rng.choice(fits)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_order(g, identify(g), order)
        g("search_products", query=line["product_name"])  # its category: hygiene, so no change-of-mind return
        return [str(found["total"])]
    return Scenario(f"Refuse a change-of-mind return of {line['product_name']} (a hygiene item, per the policy) and "
                    "tell the customer what the order cost.",
                    f"From {_describe(order)}, you want to return the {line['product_name']} ({line['option']}): it "
                    "works fine, you just changed your mind. You also want to know how much you paid for that "
                    "order in total.", known, UNKNOWN, chain, "hard")


def gift_card_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    if not _own(db, "payment_methods", customer_id, kind="gift_card"):
        return None
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        methods = g("list_payment_methods", customer_id=g("find_customer_by_email", email=email))
        return [str(next(m["balance"] for m in methods if m["kind"] == "gift_card"))]
    return Scenario("Tell the customer their gift card balance.", "ask how much is left on your gift card.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def tracking_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    shipped = _own(db, "orders", customer_id, status="shipped")
    if not shipped:
        return None
    order, email = shipped[0], db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        found = _find_order(g, g("find_customer_by_email", email=email), order)
        return [g("get_shipment_details", shipment_id=found["shipment_ids"][0])["tracking_number"]]
    return Scenario("Give the customer the tracking number of their parcel on its way.",
                    f"ask for the tracking number of {_describe(order)}, which is on its way.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def last_order_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        order_ids = g("get_customer_details", customer_id=g("find_customer_by_email", email=email))["order_ids"]
        return [str(g("get_order_details", order_id=order_ids[-1])["total"])]
    return Scenario("Tell the customer the total of their most recent order.",
                    "ask what the total of your most recent order comes to now.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def _customers(db: dict[str, Any]) -> list[str]:
    return sorted(db["customers"])


RECIPE = TaskRecipe(
    subjects=_customers,
    templates={"buy_items": buy_items, "cancel_order": cancel_order, "redirect_order": redirect_order,
               "swap_variant": swap_variant, "return_item": return_item, "buy_with_coupon": buy_with_coupon,
               "rush_to_new_address": rush_to_new_address, "refused_hygiene_return": refused_hygiene_return},
    follow_ups={"gift_card_question": gift_card_question, "tracking_question": tracking_question,
                "last_order_question": last_order_question},
)
