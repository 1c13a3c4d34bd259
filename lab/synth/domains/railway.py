"""The railway domain: stations, trains with a daily timetable, passengers, tickets, railcards and
season passes, with 17 tools.

Why these records and rules: they are what a rail operator's booking line handles (a seat on a given
train, a return journey, a later train, an upgrade, a cancelled trip and its refund, a railcard, a
commuter's pass), and each rule gives a task a way to go wrong. The tools enforce the timetable,
seats, the booking window and the refund scale; two rules are policy only: a ticket may be changed
once (the change tool would change it again) and a railcard is for the ages it is named after (the
railcard tool does not check a birth date), so a task can test that the agent follows the policy and
not just the tools' errors.

Fares are per km and class, less the discount of a railcard valid on the day of travel, rounded to
the cent. The records, the seeded data and the fare and seat rules are in
`lab.synth.domains.railway_data`.
"""

from __future__ import annotations

from datetime import date, timedelta

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id, parse_day
from lab.synth.domains.railway_data import (
    BOOKING_DAYS,
    FIRST_FACTOR,
    FULL_REFUND_HOURS,
    LATE_REFUND_PERCENT,
    NOW,
    PASS_DAYS,
    PASS_FARES,
    PASS_START_DAYS,
    RAILCARD_DAYS,
    RAILCARD_PERCENT,
    SENIOR_FROM,
    STANDARD_RATE,
    TABLES,
    YOUTH_UNDER,
    Duration,
    FareClass,
    Railcard,
    SeasonPass,
    Ticket,
    free_seat,
    generate,
    leg,
    railcard_percent,
    route_km,
    ticket_price,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()



def _hours_until(day: str, clock: str, now: str) -> float:
    """Hours from `now` until `clock` on `day` (negative once it has passed)."""
    days = (date.fromisoformat(day) - date.fromisoformat(now[:10])).days
    return days * 24 + (int(clock[:2]) * 60 + int(clock[3:]) - int(now[11:13]) * 60 - int(now[14:16])) / 60


def _service(db: dict, train_id: str, day: str, origin_id: str, destination_id: str, now: str) -> tuple[dict, tuple]:
    """The train and its (departs, arrives, km) between the stations, once the day and leg are checked:
    the train calls at the origin and then the destination, after now and within the booking window."""
    train = lookup(db, "trains", train_id, "train")
    when = parse_day(day, "date")
    found = leg(train, origin_id, destination_id)
    if found is None:
        raise ToolRefused(f"train {train_id} does not call at {origin_id} and then at {destination_id}")
    if _hours_until(day, found[0], now) <= 0 or (when - date.fromisoformat(now[:10])).days > BOOKING_DAYS:
        raise ToolRefused(f"the train must leave after {now} and within {BOOKING_DAYS} days, got {day} {found[0]}")
    return train, found


def _upcoming(db: dict, ticket_id: str, now: str) -> dict:
    """The ticket, if it is booked and its train has not left yet; only those can change."""
    ticket = lookup(db, "tickets", ticket_id, "ticket")
    if ticket["status"] != "booked" or _hours_until(ticket["date"], ticket["departs"], now) <= 0:
        raise ToolRefused(f"ticket {ticket_id} is {ticket['status']} for {ticket['date']} {ticket['departs']}; only "
                          "booked tickets for trains that have not left can change")
    return ticket


def _seat(db: dict, train: dict, day: str, fare_class: str, ignore: str | None = None) -> str:
    seat = free_seat(db, train, day, fare_class, ignore)
    if seat is None:
        raise ToolRefused(f"train {train['train_id']} has no free {fare_class} seat on {day}")
    return seat


@box.read
def find_passenger_by_email(db: dict, email: str) -> str:
    """Find a passenger's id from their email address.

    email: the passenger's email address, any letter case.
    """
    return id_by_email(db, "passengers", email, "passenger")


@box.read
def find_passenger_by_name_dob(db: dict, first_name: str, last_name: str, date_of_birth: str) -> str:
    """Find a passenger's id from their full name and date of birth.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    for passenger_id, p in db["passengers"].items():
        if (p["first_name"].lower(), p["last_name"].lower(), p["date_of_birth"]) == (
                first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip()):
            return passenger_id
    raise ToolRefused(f"no passenger named '{first_name} {last_name}' born on '{date_of_birth}'")


@box.read
def get_passenger_details(db: dict, passenger_id: str) -> str:
    """A passenger's contact details, date of birth and railcard, with the ids of their tickets and season passes.

    passenger_id: the passenger, e.g. 'PAX-1001'.
    """
    passenger = lookup(db, "passengers", passenger_id, "passenger")
    return as_json({**passenger,
                    "ticket_ids": sorted(t for t, ticket in db["tickets"].items()
                                         if ticket["passenger_id"] == passenger_id),
                    "season_pass_ids": sorted(s for s, p in db["season_passes"].items()
                                              if p["passenger_id"] == passenger_id)})


@box.read
def search_stations(db: dict, query: str) -> str:
    """Stations whose name or city contains the query: station id, name and city.

    query: part of a station name or a city, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([s for s in db["stations"].values() if text in s["name"].lower() or text in s["city"].lower()])


@box.read
def search_trains(db: dict, origin_id: str, destination_id: str, date: str, *, now: str) -> str:
    """The trains from one station to another on a day that have not left yet: departure, arrival, free
    seats and fares per class (before any railcard discount), earliest first.

    origin_id: the station the journey starts from, e.g. 'ASH'.
    destination_id: the station the journey ends at.
    date: the day of travel, YYYY-MM-DD, within the booking window.
    """
    lookup(db, "stations", origin_id, "station")
    lookup(db, "stations", destination_id, "station")
    if not 0 <= (parse_day(date, "date") - parse_day(now[:10], "now")).days <= BOOKING_DAYS:
        raise ToolRefused(f"date must be from {now[:10]} to {BOOKING_DAYS} days later, got {date}")
    booked = [t for t in db["tickets"].values() if t["date"] == date and t["status"] == "booked"]
    found = []
    for train in db["trains"].values():
        journey = leg(train, origin_id, destination_id)
        if journey is None or _hours_until(date, journey[0], now) <= 0:
            continue
        taken = {c: sum((t["train_id"], t["fare_class"]) == (train["train_id"], c) for t in booked)
                 for c in ("standard", "first")}
        found.append({"train_id": train["train_id"], "line": train["line"], "departs": journey[0],
                      "arrives": journey[1], "km": journey[2],
                      "free_seats": {"standard": train["standard_seats"] - taken["standard"],
                                     "first": train["first_seats"] - taken["first"]},
                      "fares": {c: ticket_price(journey[2], c, 0) for c in ("standard", "first")}})
    return as_json(sorted(found, key=lambda t: (t["departs"], t["train_id"])))


@box.read
def get_train_details(db: dict, train_id: str) -> str:
    """A train's line, its stops in order with the time it calls at each and the km run, and its seats per class.

    train_id: the train, e.g. 'TRN-101'; it runs every day to the same timetable.
    """
    return as_json(lookup(db, "trains", train_id, "train"))


@box.read
def get_ticket_details(db: dict, ticket_id: str) -> str:
    """A ticket's train, day, stations, times, class, seat, discount, price, status, refund and number of changes.

    ticket_id: the ticket, e.g. 'TKT-00001'.
    """
    return as_json(lookup(db, "tickets", ticket_id, "ticket"))


@box.read
def get_season_pass_details(db: dict, pass_id: str) -> str:
    """A season pass's stations, duration, first and last valid day, price, status and refund.

    pass_id: the season pass, e.g. 'SSN-0001'.
    """
    return as_json(lookup(db, "season_passes", pass_id, "season pass"))


add_generic_tools(box)


@box.write
def book_ticket(db: dict, passenger_id: str, train_id: str, date: str, origin_id: str, destination_id: str,
                fare_class: FareClass, *, now: str) -> str:
    """Book a seat on a train for one journey; a railcard valid on the day of travel lowers the fare.

    passenger_id: the passenger travelling.
    train_id: the train, as search_trains lists it.
    date: the day of travel, YYYY-MM-DD.
    origin_id: the station the journey starts from.
    destination_id: the station the journey ends at, after the origin on the train's run.
    fare_class: 'standard' or 'first'.
    """
    passenger = lookup(db, "passengers", passenger_id, "passenger")
    train, (departs, arrives, km) = _service(db, train_id, date, origin_id, destination_id, now)
    seat = _seat(db, train, date, fare_class)
    percent = railcard_percent(passenger, date)
    ticket_id = next_id(db["tickets"], "TKT-", 5)
    ticket = Ticket(ticket_id=ticket_id, passenger_id=passenger_id, train_id=train_id, date=date, origin_id=origin_id,
                    destination_id=destination_id, departs=departs, arrives=arrives, fare_class=fare_class, seat=seat,
                    discount_percent=percent, price=ticket_price(km, fare_class, percent), status="booked",
                    refund=0.0, changes=0, booked_at=now).model_dump(mode="json")
    db["tickets"][ticket_id] = ticket
    return as_json(ticket)


@box.write
def cancel_ticket(db: dict, ticket_id: str, *, now: str) -> str:
    """Cancel a booked ticket before its train leaves: the full price back from 24 hours before, half later.

    ticket_id: the booked ticket.
    """
    ticket = _upcoming(db, ticket_id, now)
    full = _hours_until(ticket["date"], ticket["departs"], now) >= FULL_REFUND_HOURS
    ticket["refund"] = ticket["price"] if full else float(round(ticket["price"] * LATE_REFUND_PERCENT / 100, 2))
    ticket["status"] = "cancelled"
    return as_json(ticket)


@box.write
def change_ticket(db: dict, ticket_id: str, train_id: str, date: str, *, now: str) -> str:
    """Move a booked ticket to another train or day between the same stations, in the same class; the fare
    is worked out again for the new day and a new seat given.

    ticket_id: the booked ticket whose train has not left.
    train_id: the new train; it must call at the ticket's origin and then its destination.
    date: the new day of travel, YYYY-MM-DD.
    """
    ticket = _upcoming(db, ticket_id, now)
    if (train_id, date) == (ticket["train_id"], ticket["date"]):
        raise ToolRefused(f"ticket {ticket_id} is already for train {train_id} on {date}")
    train, (departs, arrives, km) = _service(db, train_id, date, ticket["origin_id"], ticket["destination_id"], now)
    seat = _seat(db, train, date, ticket["fare_class"], ignore=ticket_id)
    percent = railcard_percent(db["passengers"][ticket["passenger_id"]], date)
    ticket.update(train_id=train_id, date=date, departs=departs, arrives=arrives, seat=seat, discount_percent=percent,
                  price=ticket_price(km, ticket["fare_class"], percent), changes=ticket["changes"] + 1)
    return as_json(ticket)


@box.write
def change_fare_class(db: dict, ticket_id: str, fare_class: FareClass, *, now: str) -> str:
    """Move a booked ticket to the other class on the same train: a new seat and the new class's fare.

    ticket_id: the booked ticket whose train has not left.
    fare_class: 'standard' or 'first'; it must differ from the ticket's class.
    """
    ticket = _upcoming(db, ticket_id, now)
    if ticket["fare_class"] == fare_class:
        raise ToolRefused(f"ticket {ticket_id} is already {fare_class}")
    train = db["trains"][ticket["train_id"]]
    seat = _seat(db, train, ticket["date"], fare_class)
    km = leg(train, ticket["origin_id"], ticket["destination_id"])[2]
    ticket.update(fare_class=fare_class, seat=seat, price=ticket_price(km, fare_class, ticket["discount_percent"]))
    return as_json(ticket)


@box.write
def add_railcard(db: dict, passenger_id: str, railcard: Railcard, *, now: str) -> str:
    """Give a passenger a railcard valid for a year from today; it lowers fares booked for days it is valid.

    passenger_id: the passenger; they must not hold a railcard that is still valid.
    railcard: 'youth' (25% off) or 'senior' (30% off).
    """
    passenger = lookup(db, "passengers", passenger_id, "passenger")
    if railcard_percent(passenger, now[:10]):
        raise ToolRefused(f"passenger {passenger_id} holds a {passenger['railcard']} railcard valid until "
                          f"{passenger['railcard_expires']}")
    expires = date.fromisoformat(now[:10]) + timedelta(days=RAILCARD_DAYS - 1)
    passenger.update(railcard=railcard, railcard_expires=expires.isoformat())
    return as_json(passenger)


@box.write
def buy_season_pass(db: dict, passenger_id: str, origin_id: str, destination_id: str, duration: Duration,
                    starts_on: str, *, now: str) -> str:
    """Sell a season pass for unlimited standard travel between two stations, both ways, from a chosen day.

    passenger_id: the passenger the pass is for.
    origin_id: one end of the route, e.g. 'CAL'.
    destination_id: the other end; some train must run between the two.
    duration: 'weekly' (7 days, 9 single fares), 'monthly' (30 days, 32 fares) or 'annual' (365 days, 330 fares).
    starts_on: the first valid day, YYYY-MM-DD, from today to 30 days ahead.
    """
    lookup(db, "passengers", passenger_id, "passenger")
    lookup(db, "stations", origin_id, "station")
    lookup(db, "stations", destination_id, "station")
    km = route_km(db, origin_id, destination_id)
    if km is None:
        raise ToolRefused(f"no train runs between {origin_id} and {destination_id}")
    first = parse_day(starts_on, "starts_on")
    if not 0 <= (first - date.fromisoformat(now[:10])).days <= PASS_START_DAYS:
        raise ToolRefused(f"starts_on must be from {now[:10]} to {PASS_START_DAYS} days later, got {starts_on}")
    last = (first + timedelta(days=PASS_DAYS[duration] - 1)).isoformat()
    route = {origin_id, destination_id}
    clash = next((p for p in db["season_passes"].values() if p["passenger_id"] == passenger_id
                  and p["status"] == "active" and {p["origin_id"], p["destination_id"]} == route
                  and p["starts_on"] <= last and starts_on <= p["ends_on"]), None)
    if clash is not None:
        raise ToolRefused(f"pass {clash['pass_id']} already covers this route from {clash['starts_on']} to "
                          f"{clash['ends_on']}")
    pass_id = next_id(db["season_passes"], "SSN-", 4)
    record = SeasonPass(pass_id=pass_id, passenger_id=passenger_id, origin_id=origin_id, destination_id=destination_id,
                        duration=duration, starts_on=starts_on, ends_on=last,
                        price=float(round(ticket_price(km, "standard", 0) * PASS_FARES[duration], 2)),
                        status="active", refund=0.0, bought_at=now).model_dump(mode="json")
    db["season_passes"][pass_id] = record
    return as_json(record)


@box.write
def cancel_season_pass(db: dict, pass_id: str, *, now: str) -> str:
    """Cancel an active season pass before its first valid day, for its full price back.

    pass_id: the season pass that has not started yet.
    """
    record = lookup(db, "season_passes", pass_id, "season pass")
    if record["status"] != "active" or record["starts_on"] <= now[:10]:
        raise ToolRefused(f"pass {pass_id} is {record['status']} from {record['starts_on']}; only active passes that "
                          "have not started can be cancelled")
    record.update(status="cancelled", refund=record["price"])
    return as_json(record)


_PASS_TERMS = ", ".join(f"{duration} {PASS_FARES[duration]} ({days} days)" for duration, days in PASS_DAYS.items())

POLICY = f"""# Railway booking line policy

The current time is {NOW} (railway time). Treat it as now for every date and time rule below.

## Identity
- Before looking at or changing anything, identify the passenger: by email address, or by full name
  and date of birth. Help only that passenger, with their own tickets, railcard and passes.

## Changes
- Before any change (booking, cancellation, change of train or class, railcard, season pass), state
  exactly what you will do and get the passenger's explicit "yes".
- Make one change per tool call; do not make changes the passenger did not ask for.

## Booking
- Find stations with search_stations and trains with search_trains. Trains run every day to the same
  timetable; tickets are for one train, one day, after now and at most {BOOKING_DAYS} days ahead.
- Fares are {STANDARD_RATE:.2f} per km in standard and {FIRST_FACTOR} times that in first class. A railcard valid on the
  day of travel takes {RAILCARD_PERCENT["youth"]}% (youth) or {RAILCARD_PERCENT["senior"]}% (senior) off.
- A return journey is two tickets, one per direction.

## Cancelling and changing tickets
- A booked ticket can be cancelled until its train leaves: the full price is refunded from
  {FULL_REFUND_HOURS} hours before departure, {LATE_REFUND_PERCENT}% later.
- A booked ticket can be moved to another train or day between the same stations, or to the other
  class on its train, until its train leaves; the fare is worked out again.
- A ticket can be changed to another train or day only once. Check its number of changes first;
  refuse to change a ticket that has already been changed (it can still be cancelled), even
  though the system would accept the change.

## Railcards
- A youth railcard is only for passengers under {YOUTH_UNDER} and a senior railcard only for passengers aged
  {SENIOR_FROM} or over, on the day it is issued: check the date of birth before adding one, even though
  the system does not. A railcard is valid for a year; it lowers the fare of a ticket booked or
  changed while it is valid for the day of travel.

## Season passes
- A season pass covers standard travel between two stations, both ways, from a first day between
  today and {PASS_START_DAYS} days ahead. It costs a number of single standard fares:
  {_PASS_TERMS}. Railcards do not apply.
- A pass can be cancelled, for its full price, only before its first valid day.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="railway", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
