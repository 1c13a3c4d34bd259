"""The e-commerce domain: customers, a catalogue with variants and stock, orders, shipments, returns and
coupons, with 19 tools.

Why these records and rules: they are what an online shop's support agent handles (a new order, a
wrong size swapped before it ships, a moved customer, a coupon forgotten at checkout, a rushed
delivery, a return), and each rule gives a task a way to go wrong. The tools enforce stock, order
status, coupon terms and the return window; one rule is policy only (hygiene items, `personal_care`,
come back only when damaged, defective or wrong; the return tool would accept any reason), so a task
can test that the agent follows the policy and not just the tools' errors.

Money is a float rounded to the cent. An order is charged when placed; a gift card pays from its
balance, so every later change to an order's total (a coupon, a swap, faster shipping, a
cancellation) moves the difference on or off the gift card. The records and the seeded data are in
`lab.synth.domains.ecommerce_data`.
"""

from __future__ import annotations

import re
from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id
from lab.synth.domains.ecommerce_data import (
    EXPRESS_FEE,
    FREE_SHIPPING_FROM,
    HYGIENE_CATEGORIES,
    NOW,
    RETURN_DAYS,
    STANDARD_FEE,
    TABLES,
    CancelReason,
    Order,
    OrderLine,
    Return,
    ReturnReason,
    Speed,
    generate,
    order_totals,
)
from lab.synth.generic import add_generic_tools

#: Most portions one order may hold; a bound so a call cannot build an absurd order.
MAX_ITEMS = 20

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()


def _open_order(db: dict, order_id: str) -> dict:
    """The order, if it has not shipped yet (pending or processing); only those can change."""
    order = lookup(db, "orders", order_id, "order")
    if order["status"] not in ("pending", "processing"):
        raise ToolRefused(f"order {order_id} is {order['status']}; only pending or processing orders can change")
    return order


def _percent(db: dict, order: dict) -> int:
    return db["coupons"][order["coupon_code"]]["percent_off"] if order["coupon_code"] else 0


def _check_charge(db: dict, order: dict, new_total: float) -> float:
    """The change in what the order costs; a gift card must cover an increase (checked, not yet moved)."""
    delta = round(new_total - order["total"], 2)
    method = db["payment_methods"][order["payment_method_id"]]
    if method["kind"] == "gift_card" and delta > method["balance"]:
        raise ToolRefused(f"the gift card {method['method_id']} holds {method['balance']}, the order would cost "
                          f"{delta} more")
    return delta


def _charge(db: dict, order: dict, delta: float) -> None:
    """Take `delta` (negative: give it back) from the order's gift card; cards and PayPal are not tracked."""
    method = db["payment_methods"][order["payment_method_id"]]
    if method["kind"] == "gift_card":
        method["balance"] = round(method["balance"] - delta, 2)


@box.read
def find_customer_by_email(db: dict, email: str) -> str:
    """Find a customer's id from their email address.

    email: the customer's email address, any letter case.
    """
    return id_by_email(db, "customers", email, "customer")


@box.read
def find_customer_by_name_zip(db: dict, first_name: str, last_name: str, zip: str) -> str:  # noqa: A002
    """Find a customer's id from their full name and the zip code of their address.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    zip: the 5-digit zip code of the customer's address.
    """
    for customer_id, c in db["customers"].items():
        if (c["first_name"].lower(), c["last_name"].lower(), c["address"]["zip"]) == (
                first_name.strip().lower(), last_name.strip().lower(), zip.strip()):
            return customer_id
    raise ToolRefused(f"no customer named '{first_name} {last_name}' with zip code '{zip}'")


@box.read
def get_customer_details(db: dict, customer_id: str) -> str:
    """A customer's contact details and address, with the ids of their orders, oldest first.

    customer_id: the customer, e.g. 'CUS-2001'.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    return as_json({**customer, "order_ids": sorted(o for o, order in db["orders"].items()
                                                    if order["customer_id"] == customer_id)})


@box.read
def list_payment_methods(db: dict, customer_id: str) -> str:
    """A customer's saved payment methods: id, kind (card, paypal, gift_card), label and gift card balance.

    customer_id: the customer whose payment methods to list.
    """
    lookup(db, "customers", customer_id, "customer")
    return as_json([m for m in db["payment_methods"].values() if m["customer_id"] == customer_id])


@box.read
def search_products(db: dict, query: str) -> str:
    """Products whose name, brand or category contains the query: id, name, brand and category.

    query: part of a product name, a brand or a category, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([p for p in db["products"].values()
                    if text in p["name"].lower() or text in p["brand"].lower() or text in p["category"]])


@box.read
def get_product_details(db: dict, product_id: str) -> str:
    """A product with every variant: variant id, option (colour, size or capacity), price and stock.

    product_id: the product, e.g. 'PRD-101'.
    """
    product = lookup(db, "products", product_id, "product")
    return as_json({**product, "variants": [v for v in db["variants"].values() if v["product_id"] == product_id]})


@box.read
def get_order_details(db: dict, order_id: str) -> str:
    """An order's items, prices, coupon, shipping, payment, address and status, with its shipment and return ids.

    order_id: the order, e.g. 'ORD-00001'.
    """
    order = lookup(db, "orders", order_id, "order")
    return as_json({**order,
                    "shipment_ids": sorted(s for s, sh in db["shipments"].items() if sh["order_id"] == order_id),
                    "return_ids": sorted(r for r, ret in db["returns"].items() if ret["order_id"] == order_id)})


@box.read
def get_shipment_details(db: dict, shipment_id: str) -> str:
    """A shipment's carrier, tracking number, status and its shipped, expected and delivered days.

    shipment_id: the shipment, e.g. 'SHP-0001'.
    """
    return as_json(lookup(db, "shipments", shipment_id, "shipment"))


@box.read
def get_return_details(db: dict, return_id: str) -> str:
    """A return's item, quantity, reason, refund amount, refund method and status.

    return_id: the return, e.g. 'RET-0001'.
    """
    return as_json(lookup(db, "returns", return_id, "return"))


@box.read
def get_coupon_details(db: dict, code: str) -> str:
    """A coupon's percent off, minimum subtotal and expiry day (not who has used it).

    code: the coupon code, any letter case, e.g. 'SUMMER10'.
    """
    coupon = lookup(db, "coupons", code.strip().upper(), "coupon")
    return as_json({key: value for key, value in coupon.items() if key != "used_by"})


add_generic_tools(box)


@box.write
def place_order(db: dict, customer_id: str, variant_ids: list[str], payment_method_id: str, *, now: str) -> str:
    """Place an order shipped by standard delivery to the customer's address; list a variant id once per piece.

    customer_id: the customer ordering.
    variant_ids: variant ids of in-stock items, repeated for more than one piece of a variant.
    payment_method_id: one of the customer's own payment methods; a gift card must cover the total.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    method = lookup(db, "payment_methods", payment_method_id, "payment method")
    if method["customer_id"] != customer_id:
        raise ToolRefused(f"payment method {payment_method_id} does not belong to {customer_id}")
    if not 1 <= len(variant_ids) <= MAX_ITEMS:
        raise ToolRefused(f"variant_ids must name from 1 to {MAX_ITEMS} pieces, got {len(variant_ids)}")
    lines = []
    for variant_id in sorted(set(variant_ids)):
        variant = lookup(db, "variants", variant_id, "variant")
        count = variant_ids.count(variant_id)
        if count > variant["stock"]:
            raise ToolRefused(f"variant {variant_id} has {variant['stock']} in stock, {count} asked for")
        lines.append(OrderLine(variant_id=variant_id, product_name=db["products"][variant["product_id"]]["name"],
                               option=variant["option"], quantity=count, unit_price=variant["price"]).model_dump())
    totals = order_totals(lines, 0, "standard")
    if method["kind"] == "gift_card" and totals["total"] > method["balance"]:
        raise ToolRefused(f"the gift card {payment_method_id} holds {method['balance']}, the order costs "
                          f"{totals['total']}")
    order_id = next_id(db["orders"], "ORD-", 5)
    order = Order(order_id=order_id, customer_id=customer_id, items=lines, coupon_code=None, **totals,
                  shipping_speed="standard", payment_method_id=payment_method_id,
                  shipping_address=customer["address"], status="pending", cancel_reason=None, placed_at=now,
                  delivered_on=None).model_dump(mode="json")
    for line in lines:
        db["variants"][line["variant_id"]]["stock"] -= line["quantity"]
    db["orders"][order_id] = order
    _charge(db, order, order["total"])
    return as_json(order)


@box.write
def cancel_order(db: dict, order_id: str, reason: CancelReason) -> str:
    """Cancel an order that has not shipped: its items go back to stock and a gift card gets its money back.

    order_id: the pending or processing order.
    reason: 'no_longer_needed', 'ordered_by_mistake', 'found_cheaper' or 'delivery_too_slow'.
    """
    order = _open_order(db, order_id)
    for line in order["items"]:
        db["variants"][line["variant_id"]]["stock"] += line["quantity"]
    _charge(db, order, -order["total"])
    order["status"], order["cancel_reason"] = "cancelled", reason
    return as_json(order)


@box.write
def modify_order_address(db: dict, order_id: str, street: str, city: str, zip: str) -> str:  # noqa: A002
    """Change where an order that has not shipped will be delivered (the customer's own address stays).

    order_id: the pending or processing order.
    street: house number and street.
    city: city name.
    zip: 5-digit zip code.
    """
    order = _open_order(db, order_id)
    if not street.strip() or not city.strip() or not re.fullmatch(r"[0-9]{5}", zip):
        raise ToolRefused(f"street and city must not be empty and zip must be 5 digits, got {zip!r}")
    order["shipping_address"] = {"street": street, "city": city, "zip": zip}
    return as_json(order)


@box.write
def change_order_item(db: dict, order_id: str, variant_id: str, new_variant_id: str) -> str:
    """Swap an item of an order that has not shipped for another variant (colour, size) of the same product.

    order_id: the pending or processing order.
    variant_id: the variant now in the order.
    new_variant_id: the variant wanted instead; same product, enough stock for the same quantity.
    """
    order = _open_order(db, order_id)
    line = next((item for item in order["items"] if item["variant_id"] == variant_id), None)
    if line is None:
        raise ToolRefused(f"variant {variant_id} is not in order {order_id}")
    new = lookup(db, "variants", new_variant_id, "variant")
    if new["product_id"] != db["variants"][variant_id]["product_id"] or new_variant_id == variant_id:
        raise ToolRefused(f"variant {new_variant_id} is not another variant of the same product as {variant_id}")
    if any(item["variant_id"] == new_variant_id for item in order["items"]):
        raise ToolRefused(f"variant {new_variant_id} is already in order {order_id}")
    if new["stock"] < line["quantity"]:
        raise ToolRefused(f"variant {new_variant_id} has {new['stock']} in stock, {line['quantity']} needed")
    lines = [{**item, "variant_id": new_variant_id, "option": new["option"], "unit_price": new["price"]}
             if item is line else item for item in order["items"]]
    totals = order_totals(lines, _percent(db, order), order["shipping_speed"])
    delta = _check_charge(db, order, totals["total"])
    db["variants"][variant_id]["stock"] += line["quantity"]
    new["stock"] -= line["quantity"]
    _charge(db, order, delta)
    order.update(items=lines, **totals)
    return as_json(order)


@box.write
def apply_coupon(db: dict, order_id: str, code: str, *, now: str) -> str:
    """Apply a coupon to an order that has not shipped and has none; a gift card gets the discount back.

    order_id: the pending or processing order.
    code: the coupon code, any letter case; it must not have expired, the subtotal must reach its
        minimum, and each customer may use a coupon once.
    """
    order = _open_order(db, order_id)
    coupon = lookup(db, "coupons", code.strip().upper(), "coupon")
    if order["coupon_code"] is not None:
        raise ToolRefused(f"order {order_id} already has coupon {order['coupon_code']}; one coupon per order")
    if coupon["expires_on"] < now[:10]:
        raise ToolRefused(f"coupon {coupon['code']} expired on {coupon['expires_on']}")
    if order["subtotal"] < coupon["min_subtotal"]:
        raise ToolRefused(f"coupon {coupon['code']} needs a subtotal of {coupon['min_subtotal']}, the order has "
                          f"{order['subtotal']}")
    if order["customer_id"] in coupon["used_by"]:
        raise ToolRefused(f"customer {order['customer_id']} has already used coupon {coupon['code']}")
    totals = order_totals(order["items"], coupon["percent_off"], order["shipping_speed"])
    _charge(db, order, _check_charge(db, order, totals["total"]))
    coupon["used_by"].append(order["customer_id"])
    order.update(coupon_code=coupon["code"], **totals)
    return as_json(order)


@box.write
def set_shipping_speed(db: dict, order_id: str, speed: Speed) -> str:
    """Change how an order that has not shipped travels: 'express' costs 12.99, 'standard' 4.99 or free from 50.00.

    order_id: the pending or processing order.
    speed: 'standard' or 'express'; it must differ from the order's current speed.
    """
    order = _open_order(db, order_id)
    if order["shipping_speed"] == speed:
        raise ToolRefused(f"order {order_id} already ships {speed}")
    totals = order_totals(order["items"], _percent(db, order), speed)
    _charge(db, order, _check_charge(db, order, totals["total"]))
    order.update(shipping_speed=speed, **totals)
    return as_json(order)


@box.write
def request_return(db: dict, order_id: str, variant_id: str, quantity: int, reason: ReturnReason,
                   *, now: str) -> str:
    """Open a return for pieces of a delivered order, within 30 days of delivery; the refund goes to the
    order's payment method once the parcel arrives.

    order_id: the delivered order.
    variant_id: the variant to send back.
    quantity: pieces to return, at most those ordered and not yet returned.
    reason: 'damaged', 'defective', 'wrong_item', 'not_as_described' or 'changed_mind'.
    """
    order = lookup(db, "orders", order_id, "order")
    if order["status"] != "delivered":
        raise ToolRefused(f"order {order_id} is {order['status']}; only delivered orders can be returned")
    if (date.fromisoformat(now[:10]) - date.fromisoformat(order["delivered_on"])).days > RETURN_DAYS:
        raise ToolRefused(f"order {order_id} was delivered on {order['delivered_on']}, more than {RETURN_DAYS} days "
                          "ago; it can no longer be returned")
    line = next((item for item in order["items"] if item["variant_id"] == variant_id), None)
    if line is None:
        raise ToolRefused(f"variant {variant_id} is not in order {order_id}")
    returned = sum(r["quantity"] for r in db["returns"].values()
                   if r["order_id"] == order_id and r["variant_id"] == variant_id)
    if not 1 <= quantity <= line["quantity"] - returned:
        raise ToolRefused(f"quantity must be from 1 to {line['quantity'] - returned} (ordered {line['quantity']}, "
                          f"returned {returned}), got {quantity}")
    return_id = next_id(db["returns"], "RET-", 4)
    refund = round(line["unit_price"] * quantity * (100 - _percent(db, order)) / 100, 2)
    record = Return(return_id=return_id, order_id=order_id, variant_id=variant_id, quantity=quantity, reason=reason,
                    refund_amount=refund, refund_method_id=order["payment_method_id"], status="requested",
                    requested_at=now).model_dump(mode="json")
    db["returns"][return_id] = record
    return as_json(record)


POLICY = f"""# Online shop support policy

The current time is {NOW} (shop time). Treat it as now for every date rule below.

## Identity
- Before looking at or changing anything, identify the customer: by email address, or by full name
  and the zip code of their address. Help only that customer, with their own orders and payment methods.

## Changes
- Before any change (order, cancellation, address, item swap, coupon, shipping, return), state exactly
  what you will do and get the customer's explicit "yes".
- Make one change per tool call; do not make changes the customer did not ask for.

## Orders
- New orders ship by standard delivery to the customer's address and are paid with one of the
  customer's own payment methods; a gift card must cover the whole total. Only items in stock can
  be ordered; list a variant once per piece.
- Pending and processing orders have not shipped: they can be cancelled, their delivery address
  changed, an item swapped for another colour or size of the same product, a coupon applied or the
  shipping speed changed. Shipped and delivered orders cannot be changed.
- Shipping: standard costs {STANDARD_FEE:.2f}, free from a subtotal of {FREE_SHIPPING_FROM:.2f};
  express costs {EXPRESS_FEE:.2f}.
- Payments by gift card move with the order: a lower total goes back to the card, a higher one is
  taken from it.

## Coupons
- One coupon per order, once per customer, before its expiry day, and only if the subtotal reaches
  its minimum. The discount is the coupon's percent of the subtotal.

## Returns
- Delivered items can be returned within {RETURN_DAYS} days of delivery; the refund (what was paid for the
  pieces, after the order's coupon) goes to the order's payment method once the parcel arrives.
- Hygiene items (category {", ".join(HYGIENE_CATEGORIES)}: toothbrushes, earbuds) can be returned only
  if they arrived damaged, defective or were the wrong item. Refuse any other return of them, such
  as a change of mind, even though the system would accept it.
- Use the return reason that matches what the customer says.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="ecommerce", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
