"""The e-commerce domain's records and seeded data: customers, payment methods, a catalogue of products
with variants and stock, orders, shipments, returns and coupons.

Why apart from the tools (`lab.synth.domains.ecommerce`): the schema and the generator are the
domain's "database schema + data" half (paper §3.3) and read on their own; the pricing rule
(`order_totals`) lives here too because the generator prices its orders by it, as the tools do.

Sixteen products in six categories, each with two to four variants (colour, size or capacity), about
one variant in eight out of stock. Each customer pays by card and sometimes also by PayPal or a gift
card, and has one to three orders: older ones delivered (some with a return), recent ones shipped,
today's pending or processing, a few cancelled. Stock is drawn independently of the order history
(a simplification: the catalogue is a snapshot, not a ledger). Ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng
from lab.synth.people import Address

NOW = "2025-07-08T14:00:00"
TODAY = date(2025, 7, 8)
RETURN_DAYS = 30
FREE_SHIPPING_FROM = 50.0
STANDARD_FEE = 4.99
EXPRESS_FEE = 12.99
#: Categories whose items the policy lets back only when damaged, defective or wrong (hygiene).
HYGIENE_CATEGORIES = ("personal_care",)

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Category = Literal["footwear", "apparel", "electronics", "home", "outdoors", "personal_care"]
Speed = Literal["standard", "express"]
CancelReason = Literal["no_longer_needed", "ordered_by_mistake", "found_cheaper", "delivery_too_slow"]
ReturnReason = Literal["damaged", "defective", "wrong_item", "not_as_described", "changed_mind"]


class Customer(Record):
    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    address: Address
    member_since: Day


class PaymentMethod(Record):
    method_id: str
    customer_id: str
    kind: Literal["card", "paypal", "gift_card"]
    label: str
    balance: Money | None  # gift cards only


class Product(Record):
    product_id: str
    name: str
    category: Category
    brand: str


class Variant(Record):
    variant_id: str
    product_id: str
    option: str
    price: Money
    stock: Annotated[int, Field(ge=0)]


class OrderLine(Record):
    variant_id: str
    product_name: str
    option: str
    quantity: Annotated[int, Field(ge=1)]
    unit_price: Money


class Order(Record):
    order_id: str
    customer_id: str
    items: list[OrderLine]
    coupon_code: str | None
    subtotal: Money
    discount: Money
    shipping_speed: Speed
    shipping_fee: Money
    total: Money
    payment_method_id: str
    shipping_address: Address
    status: Literal["pending", "processing", "shipped", "delivered", "cancelled"]
    cancel_reason: CancelReason | None
    placed_at: str
    delivered_on: Day | None


class Shipment(Record):
    shipment_id: str
    order_id: str
    carrier: Literal["Parcelink", "SwiftPost", "Northline Freight"]
    tracking_number: str
    status: Literal["in_transit", "delivered"]
    shipped_on: Day
    expected_on: Day
    delivered_on: Day | None


class Return(Record):
    return_id: str
    order_id: str
    variant_id: str
    quantity: Annotated[int, Field(ge=1)]
    reason: ReturnReason
    refund_amount: Money
    refund_method_id: str
    status: Literal["requested", "received", "refunded"]
    requested_at: str


class Coupon(Record):
    code: str
    percent_off: Annotated[int, Field(ge=1, le=90)]
    min_subtotal: Money
    expires_on: Day
    used_by: list[str]


TABLES: dict[str, type[Record]] = {"customers": Customer, "payment_methods": PaymentMethod, "products": Product,
                                   "variants": Variant, "orders": Order, "shipments": Shipment, "returns": Return,
                                   "coupons": Coupon}


def order_totals(lines: list[dict], percent_off: int, speed: str) -> dict[str, float]:
    """Subtotal, discount (the coupon's percent of the subtotal), shipping fee and total of an order.

    Standard shipping is free from `FREE_SHIPPING_FROM` of subtotal, express always costs `EXPRESS_FEE`.
    """
    subtotal = round(sum(line["quantity"] * line["unit_price"] for line in lines), 2)
    discount = round(subtotal * percent_off / 100, 2)
    fee = EXPRESS_FEE if speed == "express" else 0.0 if subtotal >= FREE_SHIPPING_FROM else STANDARD_FEE
    return {"subtotal": float(subtotal), "discount": float(discount), "shipping_fee": float(fee),
            "total": float(round(subtotal - discount + fee, 2))}


# ---- seeded data -----------------------------------------------------------------------------------

#: (name, category, brand, base price, options as (option, price change)).
_CATALOGUE: tuple[tuple[str, str, str, float, tuple[tuple[str, float], ...]], ...] = (
    ("Trail Runner Shoes", "footwear", "Fellstep", 89.0, (("blue, 41", 0), ("blue, 43", 0), ("grey, 42", 0),
                                                           ("grey, 44", 0))),
    ("Canvas Sneakers", "footwear", "Dockyard", 54.0, (("white, 39", 0), ("white, 42", 0), ("navy, 42", 0))),
    ("Wool Hiking Socks", "apparel", "Fellstep", 14.5, (("M", 0), ("L", 0))),
    ("Linen Shirt", "apparel", "Marlow & Finch", 42.0, (("sand, S", 0), ("sand, M", 0), ("olive, M", 0),
                                                        ("olive, L", 0))),
    ("Rain Shell Jacket", "apparel", "Northcape", 119.0, (("red, M", 0), ("black, M", 0), ("black, L", 0))),
    ("Noise-Cancelling Headphones", "electronics", "Auralis", 179.0, (("black", 0), ("silver", 0))),
    ("Portable Speaker", "electronics", "Auralis", 64.0, (("teal", 0), ("charcoal", 0))),
    ("E-Reader", "electronics", "Quillon", 129.0, (("8 GB", 0), ("32 GB", 30.0))),
    ("Power Bank", "electronics", "Voltway", 39.0, (("10000 mAh", 0), ("20000 mAh", 15.0))),
    ("Cast Iron Skillet", "home", "Hearthwell", 45.0, (("26 cm", 0), ("30 cm", 10.0))),
    ("Ceramic Mug Set", "home", "Kiln & Co", 28.0, (("speckled", 0), ("matte blue", 0))),
    ("Linen Duvet Cover", "home", "Marlow & Finch", 96.0, (("single", -20.0), ("double", 0), ("king", 24.0))),
    ("Two-Person Tent", "outdoors", "Northcape", 210.0, (("green", 0), ("orange", 0))),
    ("Insulated Bottle", "outdoors", "Voltway", 24.0, (("500 ml", 0), ("750 ml", 4.0), ("1 l", 7.0))),
    ("Electric Toothbrush", "personal_care", "Brightline", 59.0, (("white", 0), ("black", 0))),
    ("Wireless Earbuds", "personal_care", "Auralis", 99.0, (("white", 0), ("graphite", 0))),
)
_COUPONS = (("SUMMER10", 10, 40.0, "2025-08-31"), ("WELCOME15", 15, 0.0, "2025-12-31"),
            ("BIGBASKET20", 20, 150.0, "2025-09-30"), ("SPRING25", 25, 0.0, "2025-05-31"),
            ("HOMEWEEK12", 12, 60.0, "2025-07-20"), ("FIVEOFF", 5, 20.0, "2025-10-31"))
_CARDS = ("Visa", "Mastercard", "Amex")
_CARRIERS = ("Parcelink", "SwiftPost", "Northline Freight")


def _catalogue(db: dict, rng: Any) -> None:
    for index, (name, category, brand, base, options) in enumerate(_CATALOGUE):
        product_id = f"PRD-{101 + index}"
        db["products"][product_id] = Product(product_id=product_id, name=name, category=category,
                                             brand=brand).model_dump(mode="json")
        for option, change in options:
            variant_id = next_id(db["variants"], "VAR-", 4)
            db["variants"][variant_id] = Variant(
                variant_id=variant_id, product_id=product_id, option=option,
                price=round(base + change + rng.choice((-2.0, 0.0, 0.0, 5.0)), 2),
                stock=0 if rng.random() < 0.12 else rng.randint(1, 15)).model_dump(mode="json")


def _payment_methods(db: dict, rng: Any, customer_id: str) -> list[str]:
    made = []
    kinds = ["card"] + [k for k, share in (("paypal", 0.4), ("gift_card", 0.35)) if rng.random() < share]
    for kind in kinds:
        method_id = next_id(db["payment_methods"], "PM-", 4)
        label = {"card": f"{rng.choice(_CARDS)} card ending {rng.randint(1000, 9999)}", "paypal": "PayPal",
                 "gift_card": "Gift card"}[kind]
        db["payment_methods"][method_id] = PaymentMethod(
            method_id=method_id, customer_id=customer_id, kind=kind, label=label,
            balance=float(rng.randrange(20, 300, 5)) if kind == "gift_card" else None).model_dump(mode="json")
        made.append(method_id)
    return made


def _order(db: dict, rng: Any, customer: dict, method_id: str, placed: date, status: str) -> None:
    variants = [db["variants"][v] for v in sorted(db["variants"])]
    chosen = sorted(rng.sample(variants, rng.randint(1, 3)), key=lambda v: v["variant_id"])
    lines = [OrderLine(variant_id=v["variant_id"], product_name=db["products"][v["product_id"]]["name"],
                       option=v["option"], quantity=rng.choice((1, 1, 1, 2, 3)), unit_price=v["price"]).model_dump()
             for v in chosen]
    coupon = rng.choice([None, None, None, "SUMMER10", "WELCOME15"])
    if coupon is not None and customer["customer_id"] in db["coupons"][coupon]["used_by"]:
        coupon = None
    percent = db["coupons"][coupon]["percent_off"] if coupon else 0
    speed = "express" if rng.random() < 0.2 else "standard"
    if coupon and order_totals(lines, percent, speed)["subtotal"] < db["coupons"][coupon]["min_subtotal"]:
        coupon, percent = None, 0
    if coupon:
        db["coupons"][coupon]["used_by"].append(customer["customer_id"])
    delivered = placed + timedelta(days=rng.randint(2, 5)) if status == "delivered" else None
    hour = rng.randint(7, 13 if placed == TODAY else 22)  # today's orders were placed before now
    order_id = next_id(db["orders"], "ORD-", 5)
    db["orders"][order_id] = Order(
        order_id=order_id, customer_id=customer["customer_id"], items=lines, coupon_code=coupon,
        **order_totals(lines, percent, speed), shipping_speed=speed, payment_method_id=method_id,
        shipping_address=customer["address"], status=status,
        cancel_reason=rng.choice(("no_longer_needed", "found_cheaper")) if status == "cancelled" else None,
        placed_at=f"{placed.isoformat()}T{hour:02d}:{rng.randint(0, 59):02d}:00",
        delivered_on=delivered.isoformat() if delivered else None).model_dump(mode="json")
    if status in ("shipped", "delivered"):
        shipped = placed + timedelta(days=1)
        shipment_id = next_id(db["shipments"], "SHP-", 4)
        db["shipments"][shipment_id] = Shipment(
            shipment_id=shipment_id, order_id=order_id, carrier=rng.choice(_CARRIERS),
            tracking_number=f"1Z{rng.randrange(10**9, 10**10)}", status="delivered" if delivered else "in_transit",
            shipped_on=shipped.isoformat(),
            expected_on=(shipped + timedelta(days=2 if speed == "express" else 4)).isoformat(),
            delivered_on=delivered.isoformat() if delivered else None).model_dump(mode="json")
    if status == "delivered" and rng.random() < 0.2:
        line = lines[0]
        return_id = next_id(db["returns"], "RET-", 4)
        db["returns"][return_id] = Return(
            return_id=return_id, order_id=order_id, variant_id=line["variant_id"], quantity=1,
            reason=rng.choice(("damaged", "not_as_described")),
            refund_amount=round(line["unit_price"] * (100 - percent) / 100, 2), refund_method_id=method_id,
            status=rng.choice(("received", "refunded")),
            requested_at=f"{delivered.isoformat()}T18:00:00").model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """The catalogue, the coupons and `size` customers, each with payment methods and 1-3 orders."""
    rng = seeded_rng("ecommerce", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    _catalogue(db, rng)
    for code, percent, minimum, expires in _COUPONS:
        db["coupons"][code] = Coupon(code=code, percent_off=percent, min_subtotal=minimum, expires_on=expires,
                                     used_by=[]).model_dump(mode="json")
    phones: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        customer_id = f"CUS-{2001 + index}"
        customer = Customer(customer_id=customer_id, first_name=first, last_name=last,
                            email=people.email(first, last, "shop.example"), phone=people.phone(rng, phones),
                            address=people.address(rng),
                            member_since=people.date_between(rng, 2016, 2024)).model_dump(mode="json")
        db["customers"][customer_id] = customer
        methods = _payment_methods(db, rng, customer_id)
        for _ in range(rng.randint(1, 3)):
            status = rng.choice(("delivered", "delivered", "shipped", "pending", "processing", "cancelled"))
            ago = {"delivered": rng.randint(6, 50), "shipped": rng.randint(1, 3), "cancelled": rng.randint(1, 20)}
            _order(db, rng, customer, rng.choice(methods), TODAY - timedelta(days=ago.get(status, 0)), status)
    return db
