"""The travel domain: a travel agency's desk for hotel stays, tours, travel insurance and loyalty
points, with 19 tools.

Why these records and rules: they are what a travel agent handles on the phone (a room for some
nights, a place on a guided tour, a companion joining, new dates, a cancellation and its refund,
insurance bought after booking, points spent on a stay), and each rule gives a task a way to go
wrong. The tools enforce room and seat availability, room capacity, the booking window, the refund
scale and the insurance rules; two rules are policy only: dates may change only a week or more
before check-in (the change tool accepts them until the day before), and points may pay at most
half a stay's room price (the points tool takes them up to the whole room price), so a task can
test that the agent follows the policy and not just the tools' errors.

Prices are in dollars, less the member's loyalty discount, rounded to the cent. The records, the
seeded data and the price, room, seat and refund rules are in `lab.synth.domains.travel_data`.
"""

from __future__ import annotations

from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id, parse_day
from lab.synth.domains.travel_data import (
    BOOKING_DAYS,
    CHANGE_NOTICE_DAYS,
    FULL_REFUND_DAYS,
    INSURANCE_PERCENT,
    MAX_NIGHTS,
    NOW,
    PARTIAL_REFUND_DAYS,
    PARTIAL_REFUND_PERCENT,
    POINTS_PER_DOLLAR,
    POINTS_SHARE_PERCENT,
    ROOM_CAPACITY,
    TABLES,
    TIER_DISCOUNT,
    Plan,
    RoomKind,
    Stay,
    TourBooking,
    free_rooms,
    generate,
    nights,
    price,
    refund_percent,
    reprice,
    room_type,
    seats_left,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()


def _days_ahead(day: str, now: str) -> int:
    return (date.fromisoformat(day) - date.fromisoformat(now[:10])).days


def _dates(check_in: str, check_out: str, now: str) -> None:
    """Check a stay's dates: check-in from tomorrow to the end of the booking window, 1 to 21 nights."""
    first, last = parse_day(check_in, "check_in"), parse_day(check_out, "check_out")
    if not 1 <= _days_ahead(check_in, now) <= BOOKING_DAYS:
        raise ToolRefused(f"check_in must be from the day after {now[:10]} to {BOOKING_DAYS} days ahead, "
                          f"got {check_in}")
    if not 1 <= (last - first).days <= MAX_NIGHTS:
        raise ToolRefused(f"a stay is 1 to {MAX_NIGHTS} nights; check_out {check_out} is "
                          f"{(last - first).days} nights after check_in {check_in}")


def _room(hotel: dict, kind: str) -> dict:
    found = room_type(hotel, kind)
    if found is None:
        raise ToolRefused(f"{hotel['name']} has no {kind} rooms (it has "
                          f"{', '.join(r['room_type'] for r in hotel['room_types'])})")
    return found


def _name(full_name: str, travellers: list[str]) -> str:
    """The traveller's name with its spaces tidied, once it is a first and last name not yet on the booking."""
    name = " ".join(full_name.split())
    if " " not in name or len(name) > 60:
        raise ToolRefused(f"a traveller needs a first and last name of at most 60 characters, got {full_name!r}")
    if name.lower() in (t.lower() for t in travellers):
        raise ToolRefused(f"{name} is already on the booking")
    return name


def _party(customer: dict, companions: list[str]) -> list[str]:
    """The customer first, then each companion, checked one by one."""
    travellers = [f"{customer['first_name']} {customer['last_name']}"]
    for companion in companions:
        travellers.append(_name(companion, travellers))
    return travellers


def _upcoming_stay(db: dict, stay_id: str, now: str) -> dict:
    """The stay, if it is booked and its check-in day is still ahead; only those can change."""
    stay = lookup(db, "stays", stay_id, "stay")
    if stay["status"] != "booked" or _days_ahead(stay["check_in"], now) < 1:
        raise ToolRefused(f"stay {stay_id} is {stay['status']} with check-in {stay['check_in']}; only booked stays "
                          "before their check-in day can change")
    return stay


def _upcoming_tour(db: dict, booking_id: str, now: str) -> tuple[dict, dict]:
    """The tour booking and its tour, if it is booked and the tour has not started."""
    booking = lookup(db, "tour_bookings", booking_id, "tour booking")
    tour = db["tours"][booking["tour_id"]]
    if booking["status"] != "booked" or f"{tour['date']}T{tour['starts']}" <= now:
        raise ToolRefused(f"tour booking {booking_id} is {booking['status']} for {tour['date']} {tour['starts']}; "
                          "only booked tours that have not started can change")
    return booking, tour


@box.read
def find_customer_by_email(db: dict, email: str) -> str:
    """Find a customer's id from their email address.

    email: the customer's email address, any letter case.
    """
    return id_by_email(db, "customers", email, "customer")


@box.read
def find_customer_by_name_dob(db: dict, first_name: str, last_name: str, date_of_birth: str) -> str:
    """Find a customer's id from their full name and date of birth.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    wanted = (first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip())
    for customer_id, c in db["customers"].items():
        if (c["first_name"].lower(), c["last_name"].lower(), c["date_of_birth"]) == wanted:
            return customer_id
    raise ToolRefused(f"no customer named '{first_name} {last_name}' born on '{date_of_birth}'")


@box.read
def get_customer_details(db: dict, customer_id: str) -> str:
    """A customer's contact details, loyalty tier and points balance, with the ids of their stays and tour bookings.

    customer_id: the customer, e.g. 'CUS-1001'.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    return as_json({**customer,
                    "stay_ids": sorted(s for s, stay in db["stays"].items() if stay["customer_id"] == customer_id),
                    "tour_booking_ids": sorted(b for b, booking in db["tour_bookings"].items()
                                               if booking["customer_id"] == customer_id)})


@box.read
def search_hotels(db: dict, city: str) -> str:
    """The hotels in a city: hotel id, name, stars and each room type with its capacity, number of rooms
    and nightly rate (before any loyalty discount).

    city: a city or part of its name, any letter case.
    """
    text = city.strip().lower()
    if not text:
        raise ToolRefused("city must not be empty")
    return as_json([h for h in db["hotels"].values() if text in h["city"].lower()])


@box.read
def check_availability(db: dict, hotel_id: str, check_in: str, check_out: str, *, now: str) -> str:
    """The free rooms of each room type of a hotel for a stay, with the nightly rate and the price of the
    whole stay before any loyalty discount.

    hotel_id: the hotel, e.g. 'HTL-101'.
    check_in: the day of arrival, YYYY-MM-DD, from tomorrow to 180 days ahead.
    check_out: the day of departure, YYYY-MM-DD, 1 to 21 nights after check_in.
    """
    hotel = lookup(db, "hotels", hotel_id, "hotel")
    _dates(check_in, check_out, now)
    stay_nights = nights(check_in, check_out)
    return as_json([{"room_type": r["room_type"], "capacity": r["capacity"], "nightly_rate": r["nightly_rate"],
                     "free_rooms": free_rooms(db, hotel_id, r["room_type"], check_in, check_out), "nights": stay_nights,
                     "price": price(r["nightly_rate"] * stay_nights, 0)} for r in hotel["room_types"]])


@box.read
def search_tours(db: dict, city: str, *, now: str) -> str:
    """The tour departures in a city that have not started: title, day, start time, hours, price per person
    (before any loyalty discount) and seats left, soonest first.

    city: a city or part of its name, any letter case.
    """
    text = city.strip().lower()
    if not text:
        raise ToolRefused("city must not be empty")
    found = [{**tour, "seats_left": seats_left(db, tour)} for tour in db["tours"].values()
             if text in tour["city"].lower() and f"{tour['date']}T{tour['starts']}" > now]
    return as_json(sorted(found, key=lambda t: (t["date"], t["starts"], t["tour_id"])))


@box.read
def get_stay_details(db: dict, stay_id: str) -> str:
    """A hotel stay's hotel (id and name), room type, dates, travellers, prices, insurance, points redeemed,
    amount paid, status and refund.

    stay_id: the stay, e.g. 'STY-00001'.
    """
    stay = lookup(db, "stays", stay_id, "stay")
    return as_json({**stay, "hotel_name": db["hotels"][stay["hotel_id"]]["name"]})


@box.read
def get_tour_booking_details(db: dict, booking_id: str) -> str:
    """A tour booking's travellers, discount, price, status and refund, with its tour (title, city, day,
    start time and price per person).

    booking_id: the tour booking, e.g. 'TBK-00001'.
    """
    booking = lookup(db, "tour_bookings", booking_id, "tour booking")
    return as_json({**booking, "tour": db["tours"][booking["tour_id"]]})


add_generic_tools(box)


@box.write
def book_hotel_stay(db: dict, customer_id: str, hotel_id: str, room_type: RoomKind, check_in: str, check_out: str,
                    companions: list[str], *, now: str) -> str:
    """Book one room for a stay; the customer is the first traveller and their loyalty tier's discount
    lowers the room price.

    customer_id: the customer booking and staying.
    hotel_id: the hotel, as search_hotels lists it.
    room_type: 'single', 'double', 'suite' or 'family'; the hotel must have the type and a room of it free.
    check_in: the day of arrival, YYYY-MM-DD, from tomorrow to 180 days ahead.
    check_out: the day of departure, YYYY-MM-DD, 1 to 21 nights after check_in.
    companions: the full names of the others staying in the room (may be empty); the room's capacity
      counts the customer too.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    hotel = lookup(db, "hotels", hotel_id, "hotel")
    room = _room(hotel, room_type)
    _dates(check_in, check_out, now)
    travellers = _party(customer, companions)
    if len(travellers) > room["capacity"]:
        raise ToolRefused(f"a {room_type} room sleeps {room['capacity']}, not {len(travellers)}")
    if free_rooms(db, hotel_id, room_type, check_in, check_out) < 1:
        raise ToolRefused(f"{hotel['name']} has no {room_type} room free from {check_in} to {check_out}")
    stay_id = next_id(db["stays"], "STY-", 5)
    stay = Stay(stay_id=stay_id, customer_id=customer_id, hotel_id=hotel_id, room_type=room_type, check_in=check_in,
                check_out=check_out, travellers=travellers, nightly_rate=room["nightly_rate"],
                discount_percent=TIER_DISCOUNT[customer["loyalty_tier"]], room_price=0.0, insurance="none",
                insurance_price=0.0, points_redeemed=0, amount_paid=0.0, status="booked", refund=0.0,
                booked_at=now).model_dump(mode="json")
    reprice(stay)
    db["stays"][stay_id] = stay
    return as_json(stay)


@box.write
def change_stay_dates(db: dict, stay_id: str, check_in: str, check_out: str, *, now: str) -> str:
    """Move a booked stay to new dates in the same hotel and room type; the room and insurance prices are
    worked out again at the stay's nightly rate.

    stay_id: the booked stay whose check-in day is still ahead.
    check_in: the new day of arrival, YYYY-MM-DD, from tomorrow to 180 days ahead.
    check_out: the new day of departure, YYYY-MM-DD, 1 to 21 nights after check_in.
    """
    stay = _upcoming_stay(db, stay_id, now)
    _dates(check_in, check_out, now)
    if (check_in, check_out) == (stay["check_in"], stay["check_out"]):
        raise ToolRefused(f"stay {stay_id} is already from {check_in} to {check_out}")
    if free_rooms(db, stay["hotel_id"], stay["room_type"], check_in, check_out, ignore=stay_id) < 1:
        raise ToolRefused(f"no {stay['room_type']} room is free at {stay['hotel_id']} from {check_in} to {check_out}")
    moved = {**stay, "check_in": check_in, "check_out": check_out}
    reprice(moved)
    if moved["points_redeemed"] / POINTS_PER_DOLLAR > moved["room_price"]:
        raise ToolRefused(f"the new room price {moved['room_price']} is less than the "
                          f"{stay['points_redeemed']} points already redeemed on stay {stay_id} are worth")
    stay.update(moved)
    return as_json(stay)


@box.write
def add_stay_guest(db: dict, stay_id: str, full_name: str, *, now: str) -> str:
    """Add a traveller to a booked stay's room, if the room sleeps one more; the price does not change.

    stay_id: the booked stay whose check-in day is still ahead.
    full_name: the new traveller's first and last name.
    """
    stay = _upcoming_stay(db, stay_id, now)
    name = _name(full_name, stay["travellers"])
    capacity = room_type(db["hotels"][stay["hotel_id"]], stay["room_type"])["capacity"]
    if len(stay["travellers"]) >= capacity:
        raise ToolRefused(f"stay {stay_id}'s {stay['room_type']} room sleeps {capacity} and is full")
    stay["travellers"].append(name)
    return as_json(stay)


@box.write
def cancel_stay(db: dict, stay_id: str, *, now: str) -> str:
    """Cancel a booked stay before its check-in day: the cash paid for the room is refunded by the scale
    (with insurance, more), the insurance price is not, and redeemed points go back to the customer.

    stay_id: the booked stay whose check-in day is still ahead.
    """
    stay = _upcoming_stay(db, stay_id, now)
    percent = refund_percent(_days_ahead(stay["check_in"], now), stay["insurance"])
    cash = stay["room_price"] - stay["points_redeemed"] / POINTS_PER_DOLLAR
    db["customers"][stay["customer_id"]]["loyalty_points"] += stay["points_redeemed"]
    stay.update(status="cancelled", refund=float(round(cash * percent / 100, 2)))
    return as_json(stay)


@box.write
def add_stay_insurance(db: dict, stay_id: str, plan: Plan, *, now: str) -> str:
    """Add travel insurance to a booked stay, or upgrade basic to premium; it is priced as a share of the
    room price and raises the refund on cancelling.

    stay_id: the booked stay whose check-in day is still ahead.
    plan: 'basic' (5% of the room price) or 'premium' (9%); it must be above the stay's current cover.
    """
    stay = _upcoming_stay(db, stay_id, now)
    ranks = ["none", *INSURANCE_PERCENT]
    if ranks.index(plan) <= ranks.index(stay["insurance"]):
        raise ToolRefused(f"stay {stay_id} already has {stay['insurance']} cover; only an upgrade can be added")
    stay["insurance"] = plan
    reprice(stay)
    return as_json(stay)


@box.write
def redeem_loyalty_points(db: dict, stay_id: str, points: int, *, now: str) -> str:
    """Pay part of a booked stay's room price with the customer's loyalty points, 100 points to the dollar.

    stay_id: the booked stay whose check-in day is still ahead.
    points: a positive multiple of 100, at most the customer's balance and the room price still unpaid by points.
    """
    stay = _upcoming_stay(db, stay_id, now)
    customer = db["customers"][stay["customer_id"]]
    if points <= 0 or points % 100:
        raise ToolRefused(f"points must be a positive multiple of 100, got {points}")
    if points > customer["loyalty_points"]:
        raise ToolRefused(f"customer {customer['customer_id']} has {customer['loyalty_points']} points, not {points}")
    if (stay["points_redeemed"] + points) / POINTS_PER_DOLLAR > stay["room_price"]:
        raise ToolRefused(f"{points} more points would pay more than the room price {stay['room_price']} of "
                          f"stay {stay_id}, which already has {stay['points_redeemed']} points redeemed")
    customer["loyalty_points"] -= points
    stay["points_redeemed"] += points
    reprice(stay)
    return as_json(stay)


@box.write
def book_tour(db: dict, customer_id: str, tour_id: str, companions: list[str], *, now: str) -> str:
    """Book seats on a tour departure that has not started, for the customer and their companions; the
    loyalty tier's discount lowers the price.

    customer_id: the customer booking and taking part.
    tour_id: the tour departure, as search_tours lists it.
    companions: the full names of the others taking part (may be empty); each takes a seat.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    tour = lookup(db, "tours", tour_id, "tour")
    if f"{tour['date']}T{tour['starts']}" <= now:
        raise ToolRefused(f"tour {tour_id} started on {tour['date']} at {tour['starts']}")
    travellers = _party(customer, companions)
    if seats_left(db, tour) < len(travellers):
        raise ToolRefused(f"tour {tour_id} has {seats_left(db, tour)} seats left, not {len(travellers)}")
    discount = TIER_DISCOUNT[customer["loyalty_tier"]]
    booking_id = next_id(db["tour_bookings"], "TBK-", 5)
    booking = TourBooking(booking_id=booking_id, customer_id=customer_id, tour_id=tour_id, travellers=travellers,
                          discount_percent=discount, price=price(tour["price_per_person"] * len(travellers), discount),
                          status="booked", refund=0.0, booked_at=now).model_dump(mode="json")
    db["tour_bookings"][booking_id] = booking
    return as_json(booking)


@box.write
def add_tour_traveller(db: dict, booking_id: str, full_name: str, *, now: str) -> str:
    """Add a traveller to a booked tour that has not started, if a seat is left; the price is worked out
    again for the larger party.

    booking_id: the booked tour booking.
    full_name: the new traveller's first and last name.
    """
    booking, tour = _upcoming_tour(db, booking_id, now)
    name = _name(full_name, booking["travellers"])
    if seats_left(db, tour) < 1:
        raise ToolRefused(f"tour {tour['tour_id']} has no seats left")
    booking["travellers"].append(name)
    booking["price"] = price(tour["price_per_person"] * len(booking["travellers"]), booking["discount_percent"])
    return as_json(booking)


@box.write
def cancel_tour_booking(db: dict, booking_id: str, *, now: str) -> str:
    """Cancel a booked tour that has not started; the price is refunded by the scale of days before the tour's day.

    booking_id: the booked tour booking.
    """
    booking, tour = _upcoming_tour(db, booking_id, now)
    percent = refund_percent(_days_ahead(tour["date"], now), "none")
    booking.update(status="cancelled", refund=float(round(booking["price"] * percent / 100, 2)))
    return as_json(booking)


_TIERS = ", ".join(f"{tier} {percent}%" for tier, percent in TIER_DISCOUNT.items())
_CAPACITY = ", ".join(f"{kind} {sleeps}" for kind, sleeps in ROOM_CAPACITY.items())
_COVER = " or ".join(f"{percent}% ({plan})" for plan, percent in INSURANCE_PERCENT.items())

POLICY = f"""# Travel agency desk policy

The current time is {NOW} (agency time). Treat it as now for every date rule below.

## Identity
- Before looking at or changing anything, identify the customer: by email address, or by full name
  and date of birth. Help only that customer, with their own stays, tour bookings and points.

## Changes
- Before any change (a booking, new dates, a traveller added, a cancellation, insurance, points),
  state exactly what you will do and get the customer's explicit "yes".
- Make one change per tool call; do not make changes the customer did not ask for.

## Hotel stays
- Find hotels with search_hotels and free rooms with check_availability. A stay is one room, checking
  in from tomorrow to {BOOKING_DAYS} days ahead, for 1 to {MAX_NIGHTS} nights. The customer is the first traveller;
  a room sleeps at most its capacity ({_CAPACITY}).
- Loyalty tiers take a discount off every room and tour price: {_TIERS}.
- A traveller can be added to a booked stay while its room sleeps one more; the price does not change.
- A booked stay can be moved to new dates in the same hotel and room type, but only when its current
  check-in is at least {CHANGE_NOTICE_DAYS} days away. Closer to check-in, refuse the change (the customer may
  cancel instead), even though the system would accept it.

## Tours
- Find departures with search_tours. Every traveller takes a seat and pays the price per person.
- A traveller can be added to a booked tour that has not started while seats are left.

## Cancelling and refunds
- Stays can be cancelled before the check-in day, tours before they start. Of the cash paid (a
  stay's room price less its redeemed points; a tour's price), the refund is all of it from
  {FULL_REFUND_DAYS} days before the check-in or tour day, {PARTIAL_REFUND_PERCENT}% from {PARTIAL_REFUND_DAYS} to
  {FULL_REFUND_DAYS - 1} days before, and nothing later.
- Travel insurance is for stays only, any time before check-in, for {_COVER}
  of the room price; basic can be upgraded to premium. Basic makes the refund all of the cash room
  price from {PARTIAL_REFUND_DAYS} days before check-in, premium up to the day before. The insurance price
  itself is never refunded.

## Loyalty points
- Points pay for stays only, {POINTS_PER_DOLLAR} points to the dollar, in multiples of 100, from the customer's balance.
- Points may pay at most {POINTS_SHARE_PERCENT}% of a stay's room price, counting points already redeemed on it: refuse
  more, even though the system would accept it. Points redeemed on a cancelled stay go back to the
  customer's balance.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="travel", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
