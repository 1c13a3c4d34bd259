"""Railway task templates: what a passenger calls about, and the agent's golden chain for each.

Nine templates: easy cancellations (a ticket, a season pass not yet started) and an upgrade to first
class, medium requests found by description (a ticket on the train the passenger names, a later
train for a booked ticket, a season pass between two stations), two writes in one call (a return
journey; a railcard the passenger is old or young enough for, added before the booking so that the
fare is discounted), and a refusal: a second change of a ticket already changed once, which the
policy forbids though the change tool would accept it, where the right chain reads the seat the
passenger asks for and writes nothing. The evolution step adds a read-only question (the seat on the
next journey, the last day of the season pass, tomorrow's first train between two stations) asked
after the request is done.

Each chain identifies the passenger as the policy demands, by email or by name and date of birth,
whichever the scenario's known info gives, and finds stations, trains, tickets and passes through
the tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from lab.synth.domains.railway_data import NOW, SENIOR_FROM, TODAY, YOUTH_UNDER, leg, railcard_percent
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your passenger id or any ticket, train, pass or station ids."


def _own(db: dict, table: str, passenger_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "passenger_id", passenger_id, **match)


def _identity(db: dict, passenger_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    p = db["passengers"][passenger_id]
    if rng.random() < 0.5:
        return (f"You are {p['first_name']} {p['last_name']}. Your email is {p['email']}.",
                lambda g: g("find_passenger_by_email", email=p["email"]))
    return (f"You are {p['first_name']} {p['last_name']}. You were born on {p['date_of_birth']}.",
            lambda g: g("find_passenger_by_name_dob", first_name=p["first_name"], last_name=p["last_name"],
                        date_of_birth=p["date_of_birth"]))


def _name(db: dict, station_id: str) -> str:
    return db["stations"][station_id]["name"]


def _station(g: Golden, name: str) -> str:
    return next(s["station_id"] for s in g("search_stations", query=name) if s["name"] == name)


def _upcoming(db: dict, passenger_id: str) -> list[dict]:
    return [t for t in _own(db, "tickets", passenger_id, status="booked") if f"{t['date']}T{t['departs']}" > NOW]


def _describe(db: dict, ticket: dict) -> str:
    return (f"your ticket from {_name(db, ticket['origin_id'])} to {_name(db, ticket['destination_id'])} on "
            f"{ticket['date']} at {ticket['departs']}")


def _find_ticket(g: Golden, passenger_id: str, ticket: dict) -> dict:
    """The booked ticket the passenger described, as the agent finds it among theirs."""
    found = (g("get_ticket_details", ticket_id=t)
             for t in g("get_passenger_details", passenger_id=passenger_id)["ticket_ids"])
    return next(t for t in found if (t["date"], t["departs"], t["origin_id"], t["destination_id"], t["status"])
                == (ticket["date"], ticket["departs"], ticket["origin_id"], ticket["destination_id"], "booked"))


def _journey(db: dict, rng: random.Random) -> tuple[dict, str, str]:
    """A train and two of its stops, in order: a journey someone could ask for."""
    train = db["trains"][rng.choice(sorted(db["trains"]))]
    first, second = sorted(rng.sample(range(len(train["stops"])), 2))
    return train, train["stops"][first]["station_id"], train["stops"][second]["station_id"]


def _book_chain(g: Golden, passenger_id: str, origin: str, destination: str, day: str, departs: str,
                fare_class: str) -> None:
    origin_id, destination_id = _station(g, origin), _station(g, destination)
    train = next(t for t in g("search_trains", origin_id=origin_id, destination_id=destination_id, date=day)
                 if t["departs"] == departs)
    g("book_ticket", passenger_id=passenger_id, train_id=train["train_id"], date=day, origin_id=origin_id,
      destination_id=destination_id, fare_class=fare_class)


def _wish(db: dict, train: dict, origin: str, destination: str, day: str, fare_class: str) -> str:
    departs = leg(train, origin, destination)[0]
    return (f"a {fare_class} class ticket from {_name(db, origin)} to {_name(db, destination)} on {day}, on the "
            f"train leaving {_name(db, origin)} at {departs}")


def book_journey(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    train, origin, destination = _journey(db, rng)
    day, fare_class = (TODAY + timedelta(days=rng.randint(1, 14))).isoformat(), rng.choice(["standard"] * 3 + ["first"])
    departs = leg(train, origin, destination)[0]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        _book_chain(g, identify(g), _name(db, origin), _name(db, destination), day, departs, fare_class)
        return []
    return Scenario("Book the ticket the passenger asks for.",
                    f"You want {_wish(db, train, origin, destination, day, fare_class)}.", known, UNKNOWN, chain,
                    "medium")


def return_trip(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    train, origin, destination = _journey(db, rng)
    out_day = TODAY + timedelta(days=rng.randint(1, 10))
    back_day = (out_day + timedelta(days=rng.randint(0, 3))).isoformat()
    arrives = leg(train, origin, destination)[1]
    backs = [t for t in db["trains"].values() if (found := leg(t, destination, origin))
             and (back_day > out_day.isoformat() or found[0] > arrives)]
    if not backs:
        return None
    back = backs[rng.randrange(len(backs))]
    out_departs, back_departs = leg(train, origin, destination)[0], leg(back, destination, origin)[0]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        passenger = identify(g)
        _book_chain(g, passenger, _name(db, origin), _name(db, destination), out_day.isoformat(), out_departs,
                    "standard")
        _book_chain(g, passenger, _name(db, destination), _name(db, origin), back_day, back_departs, "standard")
        return []
    return Scenario("Book the outward and return tickets the passenger asks for.",
                    f"You want a return journey in standard class: "
                    f"{_wish(db, train, origin, destination, out_day.isoformat(), 'standard')}, and back on "
                    f"{back_day} on the train leaving {_name(db, destination)} at {back_departs}.",
                    known, UNKNOWN, chain, "hard")


def cancel_ticket(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    tickets = _upcoming(db, passenger_id)
    if not tickets:
        return None
    ticket = rng.choice(tickets)
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        g("cancel_ticket", ticket_id=_find_ticket(g, identify(g), ticket)["ticket_id"])
        return []
    return Scenario("Cancel the ticket the passenger describes.", f"You want to cancel {_describe(db, ticket)}.",
                    known, UNKNOWN, chain, "easy")


def _other_trains(db: dict, ticket: dict) -> list[tuple[str, str]]:
    """(train id, departure) of the other trains that day between the ticket's stations, not yet left."""
    found = [(t["train_id"], found[0]) for t in db["trains"].values()
             if t["train_id"] != ticket["train_id"] and (found := leg(t, ticket["origin_id"], ticket["destination_id"]))
             and f"{ticket['date']}T{found[0]}" > NOW]
    return sorted(found)


def later_train(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    tickets = [t for t in _upcoming(db, passenger_id) if t["changes"] == 0 and _other_trains(db, t)]
    if not tickets:
        return None
    ticket = rng.choice(tickets)
    departs = rng.choice(_other_trains(db, ticket))[1]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_ticket(g, identify(g), ticket)
        train = next(t for t in g("search_trains", origin_id=found["origin_id"], destination_id=found["destination_id"],
                                  date=found["date"]) if t["departs"] == departs)
        g("change_ticket", ticket_id=found["ticket_id"], train_id=train["train_id"], date=found["date"])
        return []
    return Scenario("Move a booked ticket to another train the same day.",
                    f"You want to move {_describe(db, ticket)} to the train leaving at {departs} the same day.",
                    known, UNKNOWN, chain, "medium")


def upgrade_first(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    tickets = [t for t in _upcoming(db, passenger_id) if t["fare_class"] == "standard"]
    if not tickets:
        return None
    ticket = rng.choice(tickets)
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        g("change_fare_class", ticket_id=_find_ticket(g, identify(g), ticket)["ticket_id"], fare_class="first")
        return []
    return Scenario("Move a booked standard ticket to first class.",
                    f"You want {_describe(db, ticket)} moved to first class.", known, UNKNOWN, chain, "easy")


def _age(passenger: dict) -> int:
    born = passenger["date_of_birth"]
    return TODAY.year - int(born[:4]) - ((TODAY.month, TODAY.day) < (int(born[5:7]), int(born[8:10])))


def railcard_then_book(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    passenger = db["passengers"][passenger_id]
    age = _age(passenger)
    card = "youth" if age < YOUTH_UNDER else "senior" if age >= SENIOR_FROM else None
    if card is None or railcard_percent(passenger, TODAY.isoformat()):
        return None
    train, origin, destination = _journey(db, rng)
    day = (TODAY + timedelta(days=rng.randint(1, 14))).isoformat()
    departs = leg(train, origin, destination)[0]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        g("get_passenger_details", passenger_id=found)  # the date of birth: old or young enough for the card
        g("add_railcard", passenger_id=found, railcard=card)
        _book_chain(g, found, _name(db, origin), _name(db, destination), day, departs, "standard")
        return []
    return Scenario(f"Add a {card} railcard (the passenger's age fits it), then book the ticket with its discount.",
                    f"You are {age} and want a {card} railcard, then "
                    f"{_wish(db, train, origin, destination, day, 'standard')}, with the railcard discount.",
                    known, UNKNOWN, chain, "hard")


def buy_pass(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    train, origin, destination = _journey(db, rng)
    duration = rng.choice(["weekly", "monthly", "monthly", "annual"])
    starts = (TODAY + timedelta(days=rng.randint(1, 14))).isoformat()
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        g("buy_season_pass", passenger_id=found, origin_id=_station(g, _name(db, origin)),
          destination_id=_station(g, _name(db, destination)), duration=duration, starts_on=starts)
        return []
    return Scenario("Sell the season pass the passenger asks for.",
                    f"You commute between {_name(db, origin)} and {_name(db, destination)} and want a {duration} "
                    f"season pass starting on {starts}.", known, UNKNOWN, chain, "medium")


def cancel_pass(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    passes = [p for p in _own(db, "season_passes", passenger_id, status="active") if p["starts_on"] > NOW[:10]]
    if not passes:
        return None
    wanted = passes[0]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        ids = g("get_passenger_details", passenger_id=identify(g))["season_pass_ids"]
        found = next(p for p in (g("get_season_pass_details", pass_id=s) for s in ids)
                     if (p["starts_on"], p["status"]) == (wanted["starts_on"], "active"))
        g("cancel_season_pass", pass_id=found["pass_id"])
        return []
    return Scenario("Cancel a season pass that has not started.",
                    f"You no longer need your {wanted['duration']} season pass between "
                    f"{_name(db, wanted['origin_id'])} and {_name(db, wanted['destination_id'])} starting on "
                    f"{wanted['starts_on']}; you want it cancelled.", known, UNKNOWN, chain, "easy")


def refused_second_change(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    tickets = [t for t in _upcoming(db, passenger_id) if t["changes"] >= 1 and _other_trains(db, t)]
    if not tickets:
        return None
    ticket = rng.choice(tickets)
    departs = rng.choice(_other_trains(db, ticket))[1]
    known, identify = _identity(db, passenger_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_ticket(g, identify(g), ticket)  # changes: 1, so the policy allows no further change
        return [found["seat"]]
    return Scenario("Refuse to change a ticket that was already changed once (policy) and tell the passenger "
                    "their seat.",
                    f"You already moved {_describe(db, ticket)} once; now you want it moved again, to the train "
                    f"leaving at {departs} the same day. You also want to know your seat number.",
                    known, UNKNOWN, chain, "hard")


def next_seat_question(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    if len(_upcoming(db, passenger_id)) < 2:  # one may be cancelled by the request before
        return None
    email = db["passengers"][passenger_id]["email"]

    def chain(g: Golden) -> list[str]:
        ids = g("get_passenger_details", passenger_id=g("find_passenger_by_email", email=email))["ticket_ids"]
        booked = [t for t in (g("get_ticket_details", ticket_id=i) for i in ids) if t["status"] == "booked"]
        return [min(booked, key=lambda t: (t["date"], t["departs"]))["seat"]]
    return Scenario("Tell the passenger their seat on their next journey.",
                    "ask which seat you have on your next booked train.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def pass_end_question(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    started = [p for p in _own(db, "season_passes", passenger_id, status="active") if p["starts_on"] <= NOW[:10]]
    if not started:
        return None
    email = db["passengers"][passenger_id]["email"]

    def chain(g: Golden) -> list[str]:
        ids = g("get_passenger_details", passenger_id=g("find_passenger_by_email", email=email))["season_pass_ids"]
        passes = [g("get_season_pass_details", pass_id=s) for s in ids]
        return [next(p["ends_on"] for p in passes if p["status"] == "active" and p["starts_on"] <= NOW[:10])]
    return Scenario("Tell the passenger the last valid day of their current season pass.",
                    "ask until which day your current season pass is valid.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def first_train_question(db: dict, passenger_id: str, rng: random.Random) -> Scenario | None:
    _, origin, destination = _journey(db, rng)
    day, email = (TODAY + timedelta(days=1)).isoformat(), db["passengers"][passenger_id]["email"]

    def chain(g: Golden) -> list[str]:
        g("find_passenger_by_email", email=email)
        trains = g("search_trains", origin_id=_station(g, _name(db, origin)),
                   destination_id=_station(g, _name(db, destination)), date=day)
        return [trains[0]["departs"], str(trains[0]["fares"]["standard"])]
    return Scenario("Tell the passenger when tomorrow's first train between two stations leaves and its standard fare.",
                    f"ask when the first train from {_name(db, origin)} to {_name(db, destination)} leaves tomorrow "
                    f"({day}) and what a standard ticket on it costs.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def _passengers(db: dict[str, Any]) -> list[str]:
    return sorted(db["passengers"])


RECIPE = TaskRecipe(
    subjects=_passengers,
    templates={"book_journey": book_journey, "return_trip": return_trip, "cancel_ticket": cancel_ticket,
               "later_train": later_train, "upgrade_first": upgrade_first, "railcard_then_book": railcard_then_book,
               "buy_pass": buy_pass, "cancel_pass": cancel_pass, "refused_second_change": refused_second_change},
    follow_ups={"next_seat_question": next_seat_question, "pass_end_question": pass_end_question,
                "first_train_question": first_train_question},
)
