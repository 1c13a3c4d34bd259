"""Travel task templates: what a customer calls the agency about, and the agent's golden chain for each.

Nine templates: easy changes to a stay found by description (cancel it, add a guest to its room),
medium requests found by description (a room at the hotel the customer names, seats on a tour
departure, new dates for a stay, a cancelled tour and the refund it gives, read back after the
cancellation), two writes in one call (a new stay with insurance on it; insurance and points on a
booked stay, the points within the policy's half of the room price), and a refusal: new dates for a
stay checking in within a week, which the policy forbids though the change tool would accept them,
where the right chain reads the amount paid the customer asks for and writes nothing. The evolution
step adds a read-only question (the points balance, the amount paid for the next stay, a tour's
start time) asked after the request is done.

Each chain identifies the customer as the policy demands, by email or by name and date of birth,
whichever the scenario's known info gives, and finds hotels, tours, stays and bookings through the
tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from lab.synth.domains.travel_data import (
    CHANGE_NOTICE_DAYS,
    PARTIAL_REFUND_DAYS,
    POINTS_SHARE_PERCENT,
    ROOM_CAPACITY,
    TODAY,
    companion_names,
)
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your customer id or any stay, tour booking, hotel or tour ids."


def _own(db: dict, table: str, customer_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "customer_id", customer_id, **match)


def _identity(db: dict, customer_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    c = db["customers"][customer_id]
    if rng.random() < 0.5:
        return (f"You are {c['first_name']} {c['last_name']}. Your email is {c['email']}.",
                lambda g: g("find_customer_by_email", email=c["email"]))
    return (f"You are {c['first_name']} {c['last_name']}. You were born on {c['date_of_birth']}.",
            lambda g: g("find_customer_by_name_dob", first_name=c["first_name"], last_name=c["last_name"],
                        date_of_birth=c["date_of_birth"]))


def _days_ahead(day: str) -> int:
    return (date.fromisoformat(day) - TODAY).days


def _later(days: int) -> str:
    return (TODAY + timedelta(days=days)).isoformat()


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _stays(db: dict, customer_id: str) -> list[dict]:
    """The customer's booked stays whose check-in day is still ahead: those the tools can change."""
    return [s for s in _own(db, "stays", customer_id, status="booked") if _days_ahead(s["check_in"]) >= 1]


def _describe_stay(db: dict, stay: dict) -> str:
    return (f"your stay at {db['hotels'][stay['hotel_id']]['name']} checking in on {stay['check_in']} and out "
            f"on {stay['check_out']}")


def _find_stay(g: Golden, customer_id: str, db: dict, stay: dict) -> dict:
    """The booked stay the customer described (hotel name and dates), as the agent finds it among theirs."""
    wanted = (db["hotels"][stay["hotel_id"]]["name"], stay["check_in"], stay["check_out"], "booked")
    found = (g("get_stay_details", stay_id=s) for s in g("get_customer_details", customer_id=customer_id)["stay_ids"])
    return next(s for s in found if (s["hotel_name"], s["check_in"], s["check_out"], s["status"]) == wanted)


def _tour_bookings(db: dict, customer_id: str, days_ahead: int) -> list[dict]:
    """The customer's booked tours departing at least `days_ahead` days from today."""
    return [b for b in _own(db, "tour_bookings", customer_id, status="booked")
            if _days_ahead(db["tours"][b["tour_id"]]["date"]) >= days_ahead]


def _describe_tour(tour: dict) -> str:
    return f"the {tour['title']} in {tour['city']} on {tour['date']}"


def _find_tour_booking(g: Golden, customer_id: str, tour: dict) -> dict:
    """The booked tour the customer described, as the agent finds it among theirs."""
    ids = g("get_customer_details", customer_id=customer_id)["tour_booking_ids"]
    found = (g("get_tour_booking_details", booking_id=b) for b in ids)
    return next(b for b in found if (b["tour"]["title"], b["tour"]["date"], b["status"])
                == (tour["title"], tour["date"], "booked"))


def _lead(db: dict, customer_id: str) -> str:
    c = db["customers"][customer_id]
    return f"{c['first_name']} {c['last_name']}"


def _stay_wish(db: dict, customer_id: str, rng: random.Random) -> tuple[dict, str, str, str, list[str], str]:
    """A room someone could ask for: (hotel, room type, check-in, check-out, companions, the request in words)."""
    hotel = db["hotels"][rng.choice(sorted(db["hotels"]))]
    kind = rng.choice(hotel["room_types"])["room_type"]
    arrive = rng.randint(5, 90)
    check_in, check_out = _later(arrive), _later(arrive + rng.randint(1, 5))
    companions = companion_names(rng, rng.randint(0, ROOM_CAPACITY[kind] - 1), [_lead(db, customer_id)])
    who = f"for {_and(['you', *companions])}" if companions else "just for you"
    return (hotel, kind, check_in, check_out, companions,
            f"a {kind} room at {hotel['name']} in {hotel['city']}, checking in on {check_in} and out on {check_out}, "
            f"{who}")


def _book_stay_chain(g: Golden, customer_id: str, hotel: dict, kind: str, check_in: str, check_out: str,
                     companions: list[str]) -> dict:
    """Find the hotel the customer named, check its rooms for the dates and book one; the new stay."""
    found = next(h for h in g("search_hotels", city=hotel["city"]) if h["name"] == hotel["name"])
    g("check_availability", hotel_id=found["hotel_id"], check_in=check_in, check_out=check_out)
    return g("book_hotel_stay", customer_id=customer_id, hotel_id=found["hotel_id"], room_type=kind,
             check_in=check_in, check_out=check_out, companions=companions)


def book_stay(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    hotel, kind, check_in, check_out, companions, wish = _stay_wish(db, customer_id, rng)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        _book_stay_chain(g, identify(g), hotel, kind, check_in, check_out, companions)
        return []
    return Scenario("Book the hotel room the customer asks for.", f"You want to book {wish}.", known, UNKNOWN, chain,
                    "medium")


def stay_with_insurance(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    hotel, kind, check_in, check_out, companions, wish = _stay_wish(db, customer_id, rng)
    plan = rng.choice(["basic", "premium"])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        stay = _book_stay_chain(g, identify(g), hotel, kind, check_in, check_out, companions)
        g("add_stay_insurance", stay_id=stay["stay_id"], plan=plan)
        return []
    return Scenario(f"Book the hotel room the customer asks for, then add {plan} travel insurance to the stay.",
                    f"You want to book {wish}, and {plan} travel insurance on the stay.", known, UNKNOWN, chain,
                    "hard")


def book_tour(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    tours = [t for t in db["tours"].values() if _days_ahead(t["date"]) >= 1]
    tour = tours[rng.randrange(len(tours))]
    companions = companion_names(rng, rng.randint(1, 2), [_lead(db, customer_id)])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        customer = identify(g)
        found = next(t for t in g("search_tours", city=tour["city"])
                     if (t["title"], t["date"]) == (tour["title"], tour["date"]))
        g("book_tour", customer_id=customer, tour_id=found["tour_id"], companions=companions)
        return []
    return Scenario("Book seats on the tour departure the customer names, for them and their companions.",
                    f"You want to book {_describe_tour(tour)} for {_and(['you', *companions])}.", known, UNKNOWN, chain,
                    "medium")


def cancel_stay(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    stays = _stays(db, customer_id)
    if not stays:
        return None
    stay = rng.choice(stays)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        g("cancel_stay", stay_id=_find_stay(g, identify(g), db, stay)["stay_id"])
        return []
    return Scenario("Cancel the stay the customer describes.", f"You want to cancel {_describe_stay(db, stay)}.",
                    known, UNKNOWN, chain, "easy")


def add_guest(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    stays = [s for s in _stays(db, customer_id) if len(s["travellers"]) < ROOM_CAPACITY[s["room_type"]]]
    if not stays:
        return None
    stay = rng.choice(stays)
    (guest,) = companion_names(rng, 1, stay["travellers"])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        g("add_stay_guest", stay_id=_find_stay(g, identify(g), db, stay)["stay_id"], full_name=guest)
        return []
    return Scenario("Add a traveller to the room of the stay the customer describes.",
                    f"{guest} is joining you: you want them added to {_describe_stay(db, stay)} "
                    f"(your {stay['room_type']} room).", known, UNKNOWN, chain, "easy")


def change_dates(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    stays = [s for s in _stays(db, customer_id) if _days_ahead(s["check_in"]) >= CHANGE_NOTICE_DAYS]
    if not stays:
        return None
    stay = rng.choice(stays)
    arrive = max(1, _days_ahead(stay["check_in"]) + rng.choice([-3, -2, -1, 1, 2, 3, 7, 14]))
    length = (date.fromisoformat(stay["check_out"]) - date.fromisoformat(stay["check_in"])).days
    check_in, check_out = _later(arrive), _later(arrive + max(1, length + rng.choice([-1, 0, 0, 1])))
    if (check_in, check_out) == (stay["check_in"], stay["check_out"]):
        return None
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_stay(g, identify(g), db, stay)
        g("check_availability", hotel_id=found["hotel_id"], check_in=check_in, check_out=check_out)
        g("change_stay_dates", stay_id=found["stay_id"], check_in=check_in, check_out=check_out)
        return []
    return Scenario("Move the stay the customer describes to new dates (check-in is a week or more away).",
                    f"You want to move {_describe_stay(db, stay)} to check in on {check_in} and out on {check_out} "
                    "instead, same hotel and room.", known, UNKNOWN, chain, "medium")


def cancel_tour_refund(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    bookings = _tour_bookings(db, customer_id, PARTIAL_REFUND_DAYS)  # some refund is due, so there is one to tell
    if not bookings:
        return None
    tour = db["tours"][rng.choice(bookings)["tour_id"]]
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_tour_booking(g, identify(g), tour)
        g("cancel_tour_booking", booking_id=found["booking_id"])
        return [str(g("get_tour_booking_details", booking_id=found["booking_id"])["refund"])]
    return Scenario("Cancel the tour booking the customer describes and tell them the refund.",
                    f"You want to cancel your booking for {_describe_tour(tour)}, and to know how much you get back.",
                    known, UNKNOWN, chain, "medium")


def insure_and_redeem(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    balance = db["customers"][customer_id]["loyalty_points"]
    fits = []
    for stay in _stays(db, customer_id):
        most = min(balance, int(stay["room_price"] * POINTS_SHARE_PERCENT) - stay["points_redeemed"]) // 100 * 100
        if stay["insurance"] == "none" and most >= 100:
            fits.append((stay, most))
    if not fits:
        return None
    stay, most = rng.choice(fits)
    points, plan = rng.randrange(100, most + 1, 100), rng.choice(["basic", "premium"])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_stay(g, identify(g), db, stay)
        g("add_stay_insurance", stay_id=found["stay_id"], plan=plan)
        g("redeem_loyalty_points", stay_id=found["stay_id"], points=points)  # within half of the room price
        return []
    return Scenario(f"Add {plan} insurance to the stay the customer describes and pay part of it with {points} points "
                    "(within the policy's share of the room price).",
                    f"You want {plan} travel insurance added to {_describe_stay(db, stay)}, and to use {points} of "
                    "your loyalty points towards the stay.", known, UNKNOWN, chain, "hard")


def refused_late_change(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    stays = [s for s in _stays(db, customer_id) if _days_ahead(s["check_in"]) < CHANGE_NOTICE_DAYS]
    if not stays:
        return None
    stay = rng.choice(stays)
    shift = timedelta(days=rng.randint(7, 21))
    check_in = (date.fromisoformat(stay["check_in"]) + shift).isoformat()
    check_out = (date.fromisoformat(stay["check_out"]) + shift).isoformat()
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_stay(g, identify(g), db, stay)  # check-in within a week: the policy allows no new dates
        return [str(found["amount_paid"])]
    return Scenario("Refuse to move a stay whose check-in is less than a week away (policy) and tell the customer "
                    "the amount paid for it.",
                    f"You want to move {_describe_stay(db, stay)} to check in on {check_in} and out on {check_out}. "
                    "You also want to know how much you have paid for the stay in total.",
                    known, UNKNOWN, chain, "hard")


def points_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        return [str(g("get_customer_details", customer_id=g("find_customer_by_email", email=email))["loyalty_points"])]
    return Scenario("Tell the customer their loyalty points balance.", "ask how many loyalty points you have now.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def next_stay_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    if len(_stays(db, customer_id)) < 2:  # one may be cancelled by the request before
        return None
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        ids = g("get_customer_details", customer_id=g("find_customer_by_email", email=email))["stay_ids"]
        booked = [s for s in (g("get_stay_details", stay_id=i) for i in ids) if s["status"] == "booked"]
        return [str(min(booked, key=lambda s: (s["check_in"], s["stay_id"]))["amount_paid"])]
    return Scenario("Tell the customer the amount paid for their next booked stay.",
                    "ask how much you have paid in total for your next booked hotel stay.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def tour_start_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    tours = [t for t in db["tours"].values() if _days_ahead(t["date"]) >= 1]
    tour = tours[rng.randrange(len(tours))]
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        g("find_customer_by_email", email=email)
        return [next(t["starts"] for t in g("search_tours", city=tour["city"])
                     if (t["title"], t["date"]) == (tour["title"], tour["date"]))]
    return Scenario("Tell the customer when a tour departure starts.",
                    f"ask what time {_describe_tour(tour)} starts.", f"Your email is {email}.", UNKNOWN, chain, "easy")


def _customers(db: dict[str, Any]) -> list[str]:
    return sorted(db["customers"])


RECIPE = TaskRecipe(
    subjects=_customers,
    templates={"book_stay": book_stay, "cancel_stay": cancel_stay, "book_tour": book_tour, "add_guest": add_guest,
               "change_dates": change_dates, "stay_with_insurance": stay_with_insurance,
               "cancel_tour_refund": cancel_tour_refund, "insure_and_redeem": insure_and_redeem,
               "refused_late_change": refused_late_change},
    follow_ups={"points_question": points_question, "next_stay_question": next_stay_question,
                "tour_start_question": tour_start_question},
)
