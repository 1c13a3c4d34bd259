"""Restaurant task templates: what a guest calls about, and the agent's golden chain for each.

Eight templates: easy cancellations (a booking, a takeaway order), medium requests found by
description (a new booking, a changed party size, a takeaway order built from dish names on the
menu), two writes in one call (an order paid partly with points, whose amount depends on the order's
total and the guest's balance; a moved booking with a note), and a refusal: a party above the phone
limit, where the right chain reads the restaurant's phone number the guest asks for and hands over
to the events team without booking. The evolution step adds a read-only question (the guest's
points, their next booking) asked after the request is done.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from lab.synth.domains.restaurant_data import NOW, PHONE_PARTY_LIMIT, POINTS_PER_DOLLAR, TODAY, seating_times
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your guest id or any booking, order or table ids."
_NOTES = {"birthday": "it is a birthday", "anniversary": "it is your anniversary",
          "high_chair": "you need a high chair",
          "wheelchair_access": "one of you uses a wheelchair", "window_seat": "you would like a window seat",
          "quiet_table": "you would like a quiet table"}


def _own(db: dict, table: str, guest_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "guest_id", guest_id, **match)


def _identity(db: dict, guest_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the guest says about who they are, the chain step that finds their id)."""
    guest = db["guests"][guest_id]
    name = f"{guest['first_name']} {guest['last_name']}"
    if rng.random() < 0.5:
        return f"You are {name}. Your phone is {guest['phone']}.", lambda g: g("find_guest_by_phone",
                                                                               phone=guest["phone"])
    return f"You are {name}. Your email is {guest['email']}.", lambda g: g("find_guest_by_email", email=guest["email"])


def _find_restaurant(g: Golden, name: str) -> str:
    return next(r["restaurant_id"] for r in g("search_restaurants", query=name) if r["name"] == name)


def _find_booking(g: Golden, guest_id: str, restaurant_id: str, booking: dict) -> dict:
    reservation_ids = g("get_guest_details", guest_id=guest_id)["reservation_ids"]
    found = (g("get_reservation_details", reservation_id=r) for r in reservation_ids)
    return next(r for r in found if (r["restaurant_id"], r["date"], r["time"], r["status"])
                == (restaurant_id, booking["date"], booking["time"], "confirmed"))


def _pickup_times(restaurant: dict) -> list[str]:
    return [t for t in seating_times(restaurant) if t >= "11:00"]  # 30 minutes after NOW at the earliest


def _at(db: dict, record: dict) -> str:
    restaurant = db["restaurants"][record["restaurant_id"]]
    return f"{restaurant['name']} in {restaurant['city']}"


def book_table(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    restaurant = rng.choice([db["restaurants"][r] for r in sorted(db["restaurants"])])
    day = (TODAY + timedelta(days=rng.randint(1, 10))).isoformat()
    time, party = rng.choice(seating_times(restaurant)), rng.randint(2, PHONE_PARTY_LIMIT)
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        guest, restaurant_id = identify(g), _find_restaurant(g, restaurant["name"])
        g("check_table_availability", restaurant_id=restaurant_id, date=day, time=time, party_size=party)
        g("create_reservation", guest_id=guest, restaurant_id=restaurant_id, date=day, time=time, party_size=party)
        return []
    return Scenario("Book a table the guest asks for.",
                    f"You want a table for {party} at {_at(db, restaurant)} on "
                    f"{day} at {time}.", known, UNKNOWN, chain, "medium")


def cancel_booking(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    bookings = _own(db, "reservations", guest_id, status="confirmed")
    if not bookings:
        return None
    booking = rng.choice(bookings)
    name = db["restaurants"][booking["restaurant_id"]]["name"]
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_booking(g, identify(g), _find_restaurant(g, name), booking)
        g("cancel_reservation", reservation_id=found["reservation_id"])
        return []
    return Scenario("Cancel the booking the guest describes.",
                    f"You want to cancel your booking at {_at(db, booking)} on {booking['date']} at {booking['time']}.",
                    known, UNKNOWN, chain, "easy")


def change_party(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    bookings = _own(db, "reservations", guest_id, status="confirmed")
    if not bookings:
        return None
    booking = rng.choice(bookings)
    party = rng.choice([n for n in range(1, PHONE_PARTY_LIMIT + 1) if n != booking["party_size"]])
    name = db["restaurants"][booking["restaurant_id"]]["name"]
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_booking(g, identify(g), _find_restaurant(g, name), booking)
        g("modify_reservation", reservation_id=found["reservation_id"], date=found["date"], time=found["time"],
          party_size=party)
        return []
    return Scenario("Change the party size of a booking.",
                    f"Your booking at {_at(db, booking)} on {booking['date']} at {booking['time']} should be for "
                    f"{party} instead of {booking['party_size']}; same day and time.", known, UNKNOWN, chain, "medium")


def _dishes(db: dict, restaurant: dict, rng: random.Random) -> tuple[dict[str, int], str]:
    """(dish name -> portions, the guest's wording) for 1-3 dishes of the menu."""
    menu = sorted(m["name"] for m in db["menu_items"].values() if m["restaurant_id"] == restaurant["restaurant_id"])
    portions = {dish: rng.randint(1, 2) for dish in rng.sample(menu, rng.randint(1, 3))}
    return portions, " and ".join(f"{n} x {dish}" for dish, n in portions.items())


def _order_chain(g: Golden, guest_id: str, name: str, portions: dict[str, int], pickup: str) -> dict:
    restaurant_id = _find_restaurant(g, name)
    menu = {m["name"]: m["item_id"] for m in g("get_menu", restaurant_id=restaurant_id)}
    item_ids = [menu[dish] for dish, n in portions.items() for _ in range(n)]
    return g("place_order", guest_id=guest_id, restaurant_id=restaurant_id, item_ids=item_ids, pickup_time=pickup)


def takeaway_order(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    restaurant = rng.choice([db["restaurants"][r] for r in sorted(db["restaurants"])])
    portions, wording = _dishes(db, restaurant, rng)
    pickup = rng.choice(_pickup_times(restaurant))
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        _order_chain(g, identify(g), restaurant["name"], portions, pickup)
        return []
    return Scenario("Place the takeaway order the guest dictates.",
                    f"You want a takeaway order from {_at(db, restaurant)} for pickup today at {pickup}: {wording}.",
                    known, UNKNOWN, chain, "medium")


def order_with_points(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    if db["guests"][guest_id]["loyalty_points"] < 100:
        return None
    restaurant = rng.choice([db["restaurants"][r] for r in sorted(db["restaurants"])])
    portions, wording = _dishes(db, restaurant, rng)
    pickup = rng.choice(_pickup_times(restaurant))
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        guest = identify(g)
        order = _order_chain(g, guest, restaurant["name"], portions, pickup)
        points = g("get_guest_details", guest_id=guest)["loyalty_points"]
        usable = min(points, int(order["total"] * POINTS_PER_DOLLAR)) // 100 * 100
        g("redeem_loyalty_points", order_id=order["order_id"], points=usable)
        return []
    return Scenario("Place a takeaway order and take as much off it with loyalty points as the rules allow.",
                    f"You want a takeaway order from {_at(db, restaurant)} for pickup today at {pickup}: {wording}. "
                    "Pay as much of it as possible with your loyalty points.", known, UNKNOWN, chain, "hard")


def reschedule_with_note(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    bookings = [b for b in _own(db, "reservations", guest_id, status="confirmed") if b["date"] > NOW[:10]]
    if not bookings:
        return None
    booking = rng.choice(bookings)
    restaurant = db["restaurants"][booking["restaurant_id"]]
    time = rng.choice([t for t in seating_times(restaurant) if t != booking["time"]])
    note = rng.choice(sorted(_NOTES))
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        restaurant_id = _find_restaurant(g, restaurant["name"])
        found = _find_booking(g, identify(g), restaurant_id, booking)
        g("check_table_availability", restaurant_id=restaurant_id, date=found["date"], time=time,
          party_size=found["party_size"])
        g("modify_reservation", reservation_id=found["reservation_id"], date=found["date"], time=time,
          party_size=found["party_size"])
        g("set_reservation_note", reservation_id=found["reservation_id"], note=note)
        return []
    return Scenario("Move a booking to another time the same day and add a note for the staff.",
                    f"You want to move your booking at {_at(db, booking)} on {booking['date']} from {booking['time']} "
                    f"to {time}, same day and party. Also, {_NOTES[note]}, and you want the staff told.",
                    known, UNKNOWN, chain, "hard")


def cancel_takeaway(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    orders = [o for o in _own(db, "orders", guest_id, pickup_date=NOW[:10]) if o["status"] in ("placed", "preparing")]
    if not orders:
        return None
    order = rng.choice(orders)
    name = db["restaurants"][order["restaurant_id"]]["name"]
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        guest, restaurant_id = identify(g), _find_restaurant(g, name)
        found = (g("get_order_details", order_id=o) for o in g("get_guest_details", guest_id=guest)["order_ids"])
        match = next(o for o in found if (o["restaurant_id"], o["pickup_date"], o["pickup_time"])
                     == (restaurant_id, order["pickup_date"], order["pickup_time"]))
        g("cancel_order", order_id=match["order_id"])
        return []
    return Scenario("Cancel the guest's takeaway order for today.",
                    f"You ordered takeaway from {_at(db, order)} for pickup today at {order['pickup_time']} and want "
                    "to cancel it.", known, UNKNOWN, chain, "easy")


def refused_large_party(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    restaurant = rng.choice([db["restaurants"][r] for r in sorted(db["restaurants"])])
    largest = max(t["seats"] for t in db["tables"].values() if t["restaurant_id"] == restaurant["restaurant_id"])
    if largest <= PHONE_PARTY_LIMIT:
        return None
    party = rng.randint(PHONE_PARTY_LIMIT + 1, largest)  # a table would seat them; the policy says no
    day = (TODAY + timedelta(days=rng.randint(1, 10))).isoformat()
    time = rng.choice(seating_times(restaurant))
    known, identify = _identity(db, guest_id, rng)

    def chain(g: Golden) -> list[str]:
        identify(g)
        details = g("get_restaurant_details", restaurant_id=_find_restaurant(g, restaurant["name"]))
        g("transfer_to_human_agents", summary=f"Guest wants a table for {party} on {day} at {time}; parties above "
                                              f"{PHONE_PARTY_LIMIT} go to the events team.")
        return [details["phone"]]
    return Scenario(f"Refuse to book a party of {party} (above the phone limit), give the restaurant's phone number "
                    "and transfer to the events team.",
                    f"You want a table for {party} at {_at(db, restaurant)} on {day} at {time}, and you want the "
                    "restaurant's phone number.", known, UNKNOWN, chain, "hard")


def points_question(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    email = db["guests"][guest_id]["email"]

    def chain(g: Golden) -> list[str]:
        return [str(g("get_guest_details", guest_id=g("find_guest_by_email", email=email))["loyalty_points"])]
    return Scenario("Tell the guest their loyalty points.", "ask how many loyalty points you have now.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def next_booking_question(db: dict, guest_id: str, rng: random.Random) -> Scenario | None:
    if len(_own(db, "reservations", guest_id, status="confirmed")) < 2:
        return None
    email = db["guests"][guest_id]["email"]

    def chain(g: Golden) -> list[str]:
        details = g("get_guest_details", guest_id=g("find_guest_by_email", email=email))
        bookings = [g("get_reservation_details", reservation_id=r) for r in details["reservation_ids"]]
        first = min((b for b in bookings if b["status"] == "confirmed"), key=lambda b: (b["date"], b["time"]))
        return [first["date"], first["time"]]
    return Scenario("Tell the guest the date and time of their next booking.",
                    "ask for the date and time of your next booking.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def _guests(db: dict[str, Any]) -> list[str]:
    return sorted(db["guests"])


RECIPE = TaskRecipe(
    subjects=_guests,
    templates={"book_table": book_table, "cancel_booking": cancel_booking, "change_party": change_party,
               "takeaway_order": takeaway_order, "order_with_points": order_with_points,
               "reschedule_with_note": reschedule_with_note, "cancel_takeaway": cancel_takeaway,
               "refused_large_party": refused_large_party},
    follow_ups={"points_question": points_question, "next_booking_question": next_booking_question},
)
