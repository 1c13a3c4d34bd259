"""The travel domain's records and seeded data: customers with loyalty points, hotels and their room
types, dated tour departures, hotel stays and tour bookings.

Why apart from the tools (`lab.synth.domains.travel`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the pricing, availability and
refund rules (`reprice`, `free_rooms`, `seats_left`, `refund_percent`) live here too because the
generator books its stays and tours by them, as the tools do.

Twelve hotels in nine cities, each with two to four room types (a number of identical rooms at one
nightly rate); ten tours in eight of those cities, each departing on six days around today. Each
customer (standard, silver or gold member) has one to three stays (past ones completed, upcoming
ones booked, some with insurance or part paid with points, a few cancelled) and up to two tour
bookings. A room is held for every night from check-in to the night before check-out; a tour seat
for its departure. Dates are ISO days, times "HH:MM"; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng

NOW = "2025-10-06T10:45:00"
TODAY = date(2025, 10, 6)
BOOKING_DAYS = 180
MAX_NIGHTS = 21
#: Days before check-in (or a tour's day) from which a cancellation gets the full or the partial refund.
FULL_REFUND_DAYS, PARTIAL_REFUND_DAYS = 14, 3
PARTIAL_REFUND_PERCENT = 50
#: Insurance costs this share of the room price; basic refunds in full from 3 days before, premium always.
INSURANCE_PERCENT = {"basic": 5, "premium": 9}
TIER_DISCOUNT = {"standard": 0, "silver": 5, "gold": 10}
POINTS_PER_DOLLAR = 100
ROOM_CAPACITY = {"single": 1, "double": 2, "suite": 3, "family": 4}
#: Policy only: dates may change only this many days or more before check-in, and points may pay at
#: most this share of a stay's room price (the tools allow changes until the day before, and points
#: up to the whole room price).
CHANGE_NOTICE_DAYS = 7
POINTS_SHARE_PERCENT = 50

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]
RoomKind = Literal["single", "double", "suite", "family"]
Tier = Literal["standard", "silver", "gold"]
Cover = Literal["none", "basic", "premium"]
Plan = Literal["basic", "premium"]
Status = Literal["booked", "completed", "cancelled"]


class Customer(Record):
    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: Day
    address: people.Address
    loyalty_tier: Tier
    loyalty_points: Count


class RoomType(Record):
    room_type: RoomKind
    capacity: Annotated[int, Field(ge=1)]
    rooms: Annotated[int, Field(ge=1)]
    nightly_rate: Money


class Hotel(Record):
    hotel_id: str
    name: str
    city: str
    stars: Annotated[int, Field(ge=1, le=5)]
    room_types: list[RoomType]


class Tour(Record):
    tour_id: str
    title: str
    city: str
    date: Day
    starts: Clock
    duration_hours: Annotated[int, Field(ge=1)]
    price_per_person: Money
    seats: Annotated[int, Field(ge=1)]


class Stay(Record):
    stay_id: str
    customer_id: str
    hotel_id: str
    room_type: RoomKind
    check_in: Day
    check_out: Day
    travellers: list[str]
    nightly_rate: Money
    discount_percent: Annotated[int, Field(ge=0, le=100)]
    room_price: Money
    insurance: Cover
    insurance_price: Money
    points_redeemed: Count
    amount_paid: Money
    status: Status
    refund: Money
    booked_at: str


class TourBooking(Record):
    booking_id: str
    customer_id: str
    tour_id: str
    travellers: list[str]
    discount_percent: Annotated[int, Field(ge=0, le=100)]
    price: Money
    status: Status
    refund: Money
    booked_at: str


TABLES: dict[str, type[Record]] = {"customers": Customer, "hotels": Hotel, "tours": Tour, "stays": Stay,
                                   "tour_bookings": TourBooking}

# ---- dates, prices, rooms, seats and refunds -------------------------------------------------------



def nights(check_in: str, check_out: str) -> int:
    return (date.fromisoformat(check_out) - date.fromisoformat(check_in)).days


def room_type(hotel: dict, kind: str) -> dict | None:
    return next((r for r in hotel["room_types"] if r["room_type"] == kind), None)


def price(amount: float, discount_percent: int) -> float:
    """`amount` less the loyalty discount, to the cent."""
    return float(round(amount * (100 - discount_percent) / 100, 2))


def reprice(stay: dict) -> None:
    """Set the stay's room price, insurance price and amount paid from its nights, rate, discount,
    cover and redeemed points; every write that touches one of those calls this."""
    stay["room_price"] = price(stay["nightly_rate"] * nights(stay["check_in"], stay["check_out"]),
                               stay["discount_percent"])
    percent = INSURANCE_PERCENT.get(stay["insurance"], 0)
    stay["insurance_price"] = float(round(stay["room_price"] * percent / 100, 2))
    stay["amount_paid"] = float(round(stay["room_price"] + stay["insurance_price"]
                                      - stay["points_redeemed"] / POINTS_PER_DOLLAR, 2))


def free_rooms(db: dict, hotel_id: str, kind: str, check_in: str, check_out: str, ignore: str | None = None) -> int:
    """Rooms of the type free on every night from check-in to the night before check-out.

    Booked stays hold their room; `ignore` is a stay whose own room counts as free (it is moving).
    """
    rooms = room_type(db["hotels"][hotel_id], kind)["rooms"]
    held = [s for s in db["stays"].values()
            if (s["hotel_id"], s["room_type"], s["status"]) == (hotel_id, kind, "booked") and s["stay_id"] != ignore
            and s["check_in"] < check_out and check_in < s["check_out"]]
    first = date.fromisoformat(check_in)
    busiest = max((sum(s["check_in"] <= night < s["check_out"] for s in held)
                   for night in ((first + timedelta(days=k)).isoformat() for k in range(nights(check_in, check_out)))),
                  default=0)
    return rooms - busiest


def seats_left(db: dict, tour: dict) -> int:
    taken = sum(len(b["travellers"]) for b in db["tour_bookings"].values()
                if b["tour_id"] == tour["tour_id"] and b["status"] == "booked")
    return tour["seats"] - taken


def refund_percent(days_before: int, cover: str) -> int:
    """The share of the cash price refunded on cancelling `days_before` days ahead with this insurance."""
    if cover == "premium" or days_before >= FULL_REFUND_DAYS:
        return 100
    if days_before >= PARTIAL_REFUND_DAYS:
        return 100 if cover == "basic" else PARTIAL_REFUND_PERCENT
    return 0


# ---- seeded data -----------------------------------------------------------------------------------

#: (name, city, stars, room types offered)
_HOTELS = (("The Ashbury Grand", "Ashbury", 5, ("double", "suite", "family")),
           ("Canal Street Inn", "Ashbury", 3, ("single", "double")),
           ("Brookhaven Lodge", "Brookhaven", 3, ("single", "double", "family")),
           ("Calder Plaza Hotel", "Calder", 4, ("single", "double", "suite")),
           ("Dunmore Castle Hotel", "Dunmore", 5, ("double", "suite")),
           ("Eastwick Bay Hotel", "Eastwick", 4, ("double", "family", "suite")),
           ("Seagull Guesthouse", "Eastwick", 2, ("single", "double")),
           ("Glenrock Mountain Lodge", "Glenrock", 4, ("double", "family")),
           ("Harrowgate Station Hotel", "Harrowgate", 3, ("single", "double")),
           ("Kingsmere Harbour Hotel", "Kingsmere", 4, ("single", "double", "suite", "family")),
           ("Lakeport Lakeside Resort", "Lakeport", 5, ("double", "suite", "family")),
           ("Pebble Lane Bed & Breakfast", "Lakeport", 2, ("single", "double")))
_STAR_RATE = {2: 68, 3: 104, 4: 148, 5: 226}
_ROOM_FACTOR = {"single": 0.8, "double": 1.0, "suite": 2.1, "family": 1.45}
#: (title, city, start time, hours, price per person)
_TOURS = (("Old Town Walking Tour", "Ashbury", "10:00", 3, 28.0), ("Canal Boat Cruise", "Ashbury", "14:30", 2, 35.0),
          ("Brookhaven Vineyard Tasting", "Brookhaven", "13:00", 4, 64.0),
          ("Calder Brewery Visit", "Calder", "16:00", 2, 39.5), ("Dunmore Castle Tour", "Dunmore", "11:00", 3, 42.0),
          ("Coastal Kayak Morning", "Eastwick", "08:30", 4, 75.0),
          ("Glenrock Summit Hike", "Glenrock", "07:45", 7, 55.0),
          ("Harbour Lights Evening Cruise", "Kingsmere", "19:30", 2, 48.0),
          ("Island Ferry Day Trip", "Lakeport", "09:15", 8, 89.0),
          ("Lakeside Cycling Tour", "Lakeport", "10:30", 3, 32.5))
_TIERS = ("standard", "standard", "standard", "silver", "silver", "gold")
_POINTS = {"standard": (0, 4000), "silver": (2000, 12000), "gold": (8000, 30000)}
_COVERS = ("none", "none", "none", "none", "basic", "basic", "premium")


def _hotels(db: dict, rng: Any) -> None:
    for number, (name, city, stars, kinds) in enumerate(_HOTELS, start=101):
        hotel_id = f"HTL-{number}"
        room_types = [RoomType(room_type=kind, capacity=ROOM_CAPACITY[kind], rooms=rng.randint(2, 5),
                               nightly_rate=float(round(_STAR_RATE[stars] * _ROOM_FACTOR[kind]
                                                        * rng.uniform(0.9, 1.15))))
                      for kind in kinds]
        db["hotels"][hotel_id] = Hotel(hotel_id=hotel_id, name=name, city=city, stars=stars,
                                       room_types=room_types).model_dump(mode="json")


def _tours(db: dict, rng: Any) -> None:
    for title, city, starts, hours, fare in _TOURS:
        seats = rng.choice((8, 10, 12, 16))
        for offset in sorted(rng.sample(range(-25, 50), 6)):
            tour_id = next_id(db["tours"], "TUR-", 4)
            db["tours"][tour_id] = Tour(tour_id=tour_id, title=title, city=city,
                                        date=(TODAY + timedelta(days=offset)).isoformat(), starts=starts,
                                        duration_hours=hours, price_per_person=fare,
                                        seats=seats).model_dump(mode="json")


def companion_names(rng: Any, count: int, taken: list[str]) -> list[str]:
    """`count` full names of people travelling with a customer, none of them in `taken`."""
    names: list[str] = []
    while len(names) < count:
        name = f"{rng.choice(people.FIRST_NAMES)} {rng.choice(people.LAST_NAMES)}"
        if name not in taken and name not in names:
            names.append(name)
    return names


def _customer(rng: Any, customer_id: str, first: str, last: str, phones: set[str]) -> dict:
    tier = rng.choice(_TIERS)
    low, high = _POINTS[tier]
    return Customer(customer_id=customer_id, first_name=first, last_name=last,
                    email=people.email(first, last, "trip.example"), phone=people.phone(rng, phones),
                    date_of_birth=people.date_between(rng, 1950, 2004), address=people.address(rng),
                    loyalty_tier=tier, loyalty_points=rng.randrange(low, high + 1, 50)).model_dump(mode="json")


def _stay(db: dict, rng: Any, customer: dict) -> None:
    hotel = db["hotels"][rng.choice(sorted(db["hotels"]))]
    room = rng.choice(hotel["room_types"])
    stay_nights = rng.randint(1, 6)
    past = rng.random() < 0.35
    check_in = TODAY + timedelta(days=-rng.randint(stay_nights + 1, 120) if past else rng.randint(1, 75))
    check_out = check_in + timedelta(days=stay_nights)
    if not past and free_rooms(db, hotel["hotel_id"], room["room_type"], check_in.isoformat(),
                               check_out.isoformat()) < 1:
        return
    status = "completed" if past else rng.choice(("booked", "booked", "booked", "booked", "cancelled"))
    lead = f"{customer['first_name']} {customer['last_name']}"
    stay_id = next_id(db["stays"], "STY-", 5)
    stay = Stay(stay_id=stay_id, customer_id=customer["customer_id"], hotel_id=hotel["hotel_id"],
                room_type=room["room_type"], check_in=check_in.isoformat(), check_out=check_out.isoformat(),
                travellers=[lead, *companion_names(rng, rng.randint(0, room["capacity"] - 1), [lead])],
                nightly_rate=room["nightly_rate"], discount_percent=TIER_DISCOUNT[customer["loyalty_tier"]],
                room_price=0.0, insurance=rng.choice(_COVERS), insurance_price=0.0, points_redeemed=0, amount_paid=0.0,
                status=status, refund=0.0,
                booked_at=f"{min(check_in - timedelta(days=rng.randint(10, 60)), TODAY - timedelta(days=1))}T14:20:00"
                ).model_dump(mode="json")
    reprice(stay)
    if status != "completed" and rng.random() < 0.2:  # part paid with points, within the policy's share
        most = int(stay["room_price"] * POINTS_SHARE_PERCENT) // 100 * 100
        stay["points_redeemed"] = rng.randrange(100, most + 1, 100) if most >= 100 else 0
        reprice(stay)
    if status == "cancelled":  # cancelled early, for the whole cash price of the room
        stay["refund"] = float(round(stay["room_price"] - stay["points_redeemed"] / POINTS_PER_DOLLAR, 2))
    db["stays"][stay_id] = stay


def _tour_booking(db: dict, rng: Any, customer: dict) -> None:
    tour = db["tours"][rng.choice(sorted(db["tours"]))]
    lead = f"{customer['first_name']} {customer['last_name']}"
    travellers = [lead, *companion_names(rng, rng.randint(0, 2), [lead])]
    if seats_left(db, tour) < len(travellers):
        return
    upcoming = f"{tour['date']}T{tour['starts']}" > NOW
    status = rng.choice(("booked", "booked", "booked", "cancelled")) if upcoming else "completed"
    discount = TIER_DISCOUNT[customer["loyalty_tier"]]
    total = price(tour["price_per_person"] * len(travellers), discount)
    booking_id = next_id(db["tour_bookings"], "TBK-", 5)
    booked_on = min(date.fromisoformat(tour["date"]) - timedelta(days=rng.randint(5, 40)), TODAY - timedelta(days=1))
    db["tour_bookings"][booking_id] = TourBooking(
        booking_id=booking_id, customer_id=customer["customer_id"], tour_id=tour["tour_id"], travellers=travellers,
        discount_percent=discount, price=total, status=status, refund=total if status == "cancelled" else 0.0,
        booked_at=f"{booked_on}T09:05:00").model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """Hotels, tour departures and `size` customers with past and upcoming stays and tour bookings."""
    rng = seeded_rng("travel", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    _hotels(db, rng)
    _tours(db, rng)
    phones: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        customer = _customer(rng, f"CUS-{1001 + index}", first, last, phones)
        db["customers"][customer["customer_id"]] = customer
        for _ in range(rng.randint(1, 3)):
            _stay(db, rng, customer)
        for _ in range(rng.choice((0, 1, 1, 2))):
            _tour_booking(db, rng, customer)
    return db
