"""The restaurant domain's records and seeded data: restaurants, menus, tables, guests, bookings, orders.

Why apart from the tools (`lab.synth.domains.restaurant`): the schema and the generator are the
domain's "database schema + data" half (paper §3.3) and read on their own; the availability rule
(`free_tables`) lives here too because the generator books tables by it, as the tools do.

Ten restaurants of five cuisines, each with its cuisine's eight dishes (prices jittered, about one
in ten unavailable) and 5-8 tables of 2-10 seats. Each guest has 0-2 past bookings, 1-2 upcoming
ones (some today, a few too soon to cancel) and 0-2 takeaway orders (past ones collected, today's
placed or being prepared). Times are "HH:MM" on the half hour; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, clock_text, next_id, seeded_rng

NOW = "2025-06-14T10:00"
TODAY = date(2025, 6, 14)
SITTING_MINUTES = 120
CANCEL_HOURS = 2
PHONE_PARTY_LIMIT = 6
BOOKING_DAYS = 30
POINTS_PER_DOLLAR = 20

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Price = Annotated[float, Field(ge=0)]
Note = Literal["birthday", "anniversary", "high_chair", "wheelchair_access", "window_seat", "quiet_table"]


class Restaurant(Record):
    restaurant_id: str
    name: str
    cuisine: str
    street: str
    city: str
    phone: str
    opens: Clock
    closes: Clock


class MenuItem(Record):
    item_id: str
    restaurant_id: str
    name: str
    category: Literal["starter", "main", "dessert", "drink"]
    price: Price
    available: bool
    dietary: list[Literal["vegetarian", "vegan", "gluten_free"]]


class DiningTable(Record):
    table_id: str
    restaurant_id: str
    seats: Annotated[int, Field(ge=1)]
    area: Literal["indoor", "terrace", "bar"]


class Guest(Record):
    guest_id: str
    first_name: str
    last_name: str
    phone: str
    email: str
    loyalty_points: Annotated[int, Field(ge=0)]


class Reservation(Record):
    reservation_id: str
    restaurant_id: str
    guest_id: str
    table_id: str
    date: Day
    time: Clock
    party_size: Annotated[int, Field(ge=1)]
    status: Literal["confirmed", "cancelled", "completed"]
    note: Note | None
    created_at: str


class OrderLine(Record):
    item_id: str
    name: str
    quantity: Annotated[int, Field(ge=1)]
    unit_price: Price


class Order(Record):
    order_id: str
    restaurant_id: str
    guest_id: str
    items: list[OrderLine]
    subtotal: Price
    discount: Price
    total: Price
    points_redeemed: Annotated[int, Field(ge=0)]
    pickup_date: Day
    pickup_time: Clock
    status: Literal["placed", "preparing", "ready", "collected", "cancelled"]
    placed_at: str


TABLES: dict[str, type[Record]] = {"restaurants": Restaurant, "menu_items": MenuItem, "tables": DiningTable,
                                   "guests": Guest, "reservations": Reservation, "orders": Order}

# ---- seeded data -----------------------------------------------------------------------------------

_NAMES = ("Copper Pot", "Saffron House", "Blue Fig", "Lantern Room", "Olive & Ash", "Juniper Table", "Salt Cellar",
          "Golden Wok", "Harbour Kitchen", "Ember Grill", "Little Basil", "Marigold", "Tamarind Tree", "The Quince")
_HOURS = (("11:30", "22:00"), ("12:00", "23:00"), ("17:00", "23:00"), ("11:00", "21:30"))
_SEATS = (2, 2, 2, 4, 4, 4, 6, 8, 10)
#: cuisine -> (dish, category, price, dietary tags)
_MENUS: dict[str, tuple[tuple[str, str, float, tuple[str, ...]], ...]] = {
    "italian": (("Bruschetta", "starter", 7.5, ("vegan",)), ("Burrata", "starter", 11.0, ("vegetarian", "gluten_free")),
                ("Margherita Pizza", "main", 13.0, ("vegetarian",)), ("Tagliatelle Ragu", "main", 16.5, ()),
                ("Risotto ai Funghi", "main", 17.0, ("vegetarian", "gluten_free")),
                ("Tiramisu", "dessert", 7.0, ("vegetarian",)),
                ("Panna Cotta", "dessert", 6.5, ("gluten_free",)), ("Lemon Soda", "drink", 3.5, ("vegan",))),
    "japanese": (("Edamame", "starter", 5.0, ("vegan", "gluten_free")), ("Gyoza", "starter", 8.0, ()),
                 ("Salmon Don", "main", 18.0, ()), ("Tofu Ramen", "main", 15.5, ("vegan",)),
                 ("Chicken Katsu Curry", "main", 16.0, ()), ("Matcha Cheesecake", "dessert", 7.5, ("vegetarian",)),
                 ("Mochi Trio", "dessert", 6.0, ("vegan", "gluten_free")), ("Yuzu Lemonade", "drink", 4.0, ("vegan",))),
    "mexican": (("Guacamole & Chips", "starter", 7.0, ("vegan", "gluten_free")),
                ("Elote", "starter", 6.0, ("vegetarian",)),
                ("Carnitas Tacos", "main", 14.0, ("gluten_free",)), ("Black Bean Burrito", "main", 12.5, ("vegan",)),
                ("Chicken Enchiladas", "main", 15.0, ()), ("Churros", "dessert", 6.5, ("vegetarian",)),
                ("Horchata", "drink", 4.0, ("vegan",)), ("Hibiscus Agua Fresca", "drink", 3.5, ("vegan",))),
    "indian": (("Samosa Chaat", "starter", 7.0, ("vegetarian",)), ("Onion Bhaji", "starter", 6.0, ("vegan",)),
               ("Butter Chicken", "main", 16.0, ("gluten_free",)),
               ("Chana Masala", "main", 13.0, ("vegan", "gluten_free")),
               ("Lamb Rogan Josh", "main", 18.0, ("gluten_free",)), ("Gulab Jamun", "dessert", 5.5, ("vegetarian",)),
               ("Mango Lassi", "drink", 4.5, ("vegetarian",)), ("Garlic Naan", "starter", 3.5, ("vegetarian",))),
    "greek": (("Tzatziki & Pita", "starter", 6.5, ("vegetarian",)), ("Spanakopita", "starter", 8.0, ("vegetarian",)),
              ("Lamb Souvlaki", "main", 17.0, ("gluten_free",)), ("Moussaka", "main", 16.0, ()),
              ("Gemista", "main", 14.0, ("vegan", "gluten_free")), ("Baklava", "dessert", 6.0, ("vegetarian",)),
              ("Loukoumades", "dessert", 6.5, ("vegetarian",)),
              ("Mountain Tea", "drink", 3.0, ("vegan", "gluten_free"))),
}


def minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])



def seating_times(restaurant: dict) -> list[str]:
    """Every half hour a booking may start: from opening until a full sitting before closing."""
    last = minutes(restaurant["closes"]) - SITTING_MINUTES
    return [clock_text(m) for m in range(minutes(restaurant["opens"]), last + 1, 30)]


def free_tables(db: dict, restaurant_id: str, day: str, time: str, party_size: int,
                 ignore: str | None = None) -> list[dict]:
    """Tables of the restaurant that seat the party and no confirmed booking (but `ignore`) holds then,
    smallest first."""
    start = minutes(time)
    taken = {r["table_id"] for r in db["reservations"].values()
             if r["restaurant_id"] == restaurant_id and r["date"] == day and r["status"] == "confirmed"
             and r["reservation_id"] != ignore and abs(minutes(r["time"]) - start) < SITTING_MINUTES}
    tables = [t for t in db["tables"].values()
              if t["restaurant_id"] == restaurant_id and t["seats"] >= party_size and t["table_id"] not in taken]
    return sorted(tables, key=lambda t: (t["seats"], t["table_id"]))


def _book(db: dict, rng: Any, guest_id: str, restaurant: dict, day: date, status: str) -> None:
    time, party = rng.choice(seating_times(restaurant)), rng.randint(1, 6)
    if status == "confirmed" and day == TODAY:
        time = rng.choice(["11:00", "11:30", "12:00", "19:00"])  # some bookings today, a few too soon to cancel
        if time not in seating_times(restaurant):
            return
    free = free_tables(db, restaurant["restaurant_id"], day.isoformat(), time, party)
    if not free:
        return
    reservation_id = next_id(db["reservations"], "RES-", 5)
    db["reservations"][reservation_id] = Reservation(
        reservation_id=reservation_id, restaurant_id=restaurant["restaurant_id"], guest_id=guest_id,
        table_id=free[0]["table_id"], date=day.isoformat(), time=time, party_size=party, status=status,
        note=rng.choice([None, None, None, "birthday", "window_seat"]),
        created_at="2025-06-01T12:00").model_dump(mode="json")


def _order(db: dict, rng: Any, guest_id: str, restaurant: dict, day: date, status: str) -> None:
    restaurant_id = restaurant["restaurant_id"]
    menu = [m for m in db["menu_items"].values() if m["restaurant_id"] == restaurant_id]
    lines = [OrderLine(item_id=m["item_id"], name=m["name"], quantity=rng.randint(1, 3), unit_price=m["price"])
             for m in sorted(rng.sample(menu, rng.randint(1, 3)), key=lambda m: m["item_id"])]
    subtotal = round(sum(line.quantity * line.unit_price for line in lines), 2)
    order_id = next_id(db["orders"], "ORD-", 5)
    db["orders"][order_id] = Order(
        order_id=order_id, restaurant_id=restaurant_id, guest_id=guest_id, items=lines, subtotal=subtotal,
        discount=0.0, total=subtotal, points_redeemed=0, pickup_date=day.isoformat(),
        pickup_time=rng.choice(seating_times(restaurant)[2:]), status=status,
        placed_at=f"{day.isoformat()}T09:{rng.randint(10, 59)}").model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """Ten restaurants with tables and menus, and `size` guests with past and upcoming bookings and orders."""
    rng = seeded_rng("restaurant", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    phones: set[str] = set()
    for index, name in enumerate(rng.sample(_NAMES, 10)):
        restaurant_id = f"RST-{index + 1:02d}"
        cuisine = rng.choice(sorted(_MENUS))
        opens, closes = rng.choice(_HOURS)
        where = people.address(rng)
        db["restaurants"][restaurant_id] = Restaurant(
            restaurant_id=restaurant_id, name=name, cuisine=cuisine, street=where["street"], city=where["city"],
            phone=people.phone(rng, phones), opens=opens, closes=closes).model_dump(mode="json")
        for dish, category, price, dietary in _MENUS[cuisine]:
            item_id = next_id(db["menu_items"], "MNU-", 4)
            db["menu_items"][item_id] = MenuItem(
                item_id=item_id, restaurant_id=restaurant_id, name=dish, category=category,
                price=round(price + rng.choice((-0.5, 0.0, 0.5, 1.0)), 2), available=rng.random() > 0.1,
                dietary=list(dietary)).model_dump(mode="json")
        for seats in sorted(rng.sample(_SEATS, rng.randint(5, 8))):
            table_id = next_id(db["tables"], "TBL-", 3)
            db["tables"][table_id] = DiningTable(table_id=table_id, restaurant_id=restaurant_id, seats=seats,
                                                 area=rng.choice(("indoor",
                                                                  "indoor", "terrace", "bar"))).model_dump(mode="json")
    restaurants = [db["restaurants"][r] for r in sorted(db["restaurants"])]
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        guest_id = f"GST-{1001 + index}"
        db["guests"][guest_id] = Guest(
            guest_id=guest_id, first_name=first, last_name=last, phone=people.phone(rng, phones),
            email=people.email(first, last, "post.example"),
            loyalty_points=rng.randrange(0, 900, 10)).model_dump(mode="json")
        for _ in range(rng.randint(0, 2)):
            _book(db, rng, guest_id, rng.choice(restaurants), TODAY - timedelta(days=rng.randint(1, 40)), "completed")
        for _ in range(rng.randint(1, 2)):
            _book(db, rng, guest_id, rng.choice(restaurants), TODAY + timedelta(days=rng.randint(0, 12)), "confirmed")
        for _ in range(rng.randint(0, 2)):
            past = rng.random() < 0.5
            _order(db, rng, guest_id, rng.choice(restaurants),
                   TODAY - timedelta(days=rng.randint(1, 30)) if past else TODAY,
                   "collected" if past else rng.choice(("placed", "placed", "preparing")))
    return db
