"""The railway domain's records and seeded data: stations, trains with timetables, passengers, tickets
and season passes.

Why apart from the tools (`lab.synth.domains.railway`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the fare, seat and timetable rules
(`leg`, `ticket_price`, `free_seat`, `route_km`) live here too because the generator books its tickets
by them, as the tools do.

Eleven stations on three lines; each line runs three to four trains a day in each direction, every
day, with the same timetable. Each passenger (some holding a youth or senior railcard, not all still
valid) has one to three tickets: past journeys travelled, upcoming ones booked (a few already
changed once, some leaving within a day), a few cancelled; about a third hold a season pass. A seat
is held for the whole run of its train on its day, whatever the leg (a simplification: no seat is
resold between stations). Times are "HH:MM", dates ISO days; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, clock_text, next_id, seeded_rng

NOW = "2025-09-03T08:15:00"
TODAY = date(2025, 9, 3)
BOOKING_DAYS = 60
PASS_START_DAYS = 30
FULL_REFUND_HOURS = 24
LATE_REFUND_PERCENT = 50
STANDARD_RATE = 0.16  # dollars per km
FIRST_FACTOR = 1.75
RAILCARD_PERCENT = {"youth": 25, "senior": 30}
RAILCARD_DAYS = 365
#: Policy only: the ages a railcard is for (youth: under 26, senior: 60 or over).
YOUTH_UNDER, SENIOR_FROM = 26, 60
#: A season pass costs this many single standard fares and runs this many days.
PASS_FARES = {"weekly": 9, "monthly": 32, "annual": 330}
PASS_DAYS = {"weekly": 7, "monthly": 30, "annual": 365}

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
FareClass = Literal["standard", "first"]
Railcard = Literal["youth", "senior"]
Duration = Literal["weekly", "monthly", "annual"]


class Station(Record):
    station_id: str
    name: str
    city: str


class Stop(Record):
    station_id: str
    time: Clock
    km: Annotated[int, Field(ge=0)]


class Train(Record):
    train_id: str
    line: str
    stops: list[Stop]
    standard_seats: Annotated[int, Field(ge=1)]
    first_seats: Annotated[int, Field(ge=1)]


class Passenger(Record):
    passenger_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: Day
    railcard: Railcard | None
    railcard_expires: Day | None


class Ticket(Record):
    ticket_id: str
    passenger_id: str
    train_id: str
    date: Day
    origin_id: str
    destination_id: str
    departs: Clock
    arrives: Clock
    fare_class: FareClass
    seat: str
    discount_percent: Annotated[int, Field(ge=0, le=100)]
    price: Money
    status: Literal["booked", "travelled", "cancelled"]
    refund: Money
    changes: Annotated[int, Field(ge=0)]
    booked_at: str


class SeasonPass(Record):
    pass_id: str
    passenger_id: str
    origin_id: str
    destination_id: str
    duration: Duration
    starts_on: Day
    ends_on: Day
    price: Money
    status: Literal["active", "expired", "cancelled"]
    refund: Money
    bought_at: str


TABLES: dict[str, type[Record]] = {"stations": Station, "trains": Train, "passengers": Passenger,
                                   "tickets": Ticket, "season_passes": SeasonPass}

# ---- fares, seats and legs -------------------------------------------------------------------------


def minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])



def leg(train: dict, origin_id: str, destination_id: str) -> tuple[str, str, int] | None:
    """(departs, arrives, km) if the train calls at the origin and later at the destination, else None."""
    calls = {stop["station_id"]: index for index, stop in enumerate(train["stops"])}
    if origin_id not in calls or destination_id not in calls or calls[origin_id] >= calls[destination_id]:
        return None
    start, end = train["stops"][calls[origin_id]], train["stops"][calls[destination_id]]
    return start["time"], end["time"], end["km"] - start["km"]


def route_km(db: dict, origin_id: str, destination_id: str) -> int | None:
    """The shortest distance between two stations on any train that runs between them, either way."""
    found = [found[2] for train in db["trains"].values()
             for found in (leg(train, origin_id, destination_id), leg(train, destination_id, origin_id)) if found]
    return min(found, default=None)


def ticket_price(km: int, fare_class: str, discount_percent: int) -> float:
    """The fare for `km` in the class, less the railcard discount, to the cent."""
    fare = km * STANDARD_RATE * (FIRST_FACTOR if fare_class == "first" else 1.0)
    return float(round(fare * (100 - discount_percent) / 100, 2))


def railcard_percent(passenger: dict, day: str) -> int:
    """The discount of the passenger's railcard if it is still valid on `day`, else 0."""
    if passenger["railcard"] is None or passenger["railcard_expires"] < day:
        return 0
    return RAILCARD_PERCENT[passenger["railcard"]]


def free_seat(db: dict, train: dict, day: str, fare_class: str, ignore: str | None = None) -> str | None:
    """The lowest free seat of the class on the train that day ('S12', 'F3'), or None when all are taken.

    Booked tickets hold their seats; `ignore` is a ticket whose own seat counts as free (it is moving).
    """
    taken = {t["seat"] for t in db["tickets"].values()
             if (t["train_id"], t["date"], t["fare_class"], t["status"])
             == (train["train_id"], day, fare_class, "booked")
             and t["ticket_id"] != ignore}
    prefix, count = ("F", train["first_seats"]) if fare_class == "first" else ("S", train["standard_seats"])
    return next((f"{prefix}{n}" for n in range(1, count + 1) if f"{prefix}{n}" not in taken), None)


# ---- seeded data -----------------------------------------------------------------------------------

_STATIONS = (("ASH", "Ashbury Central", "Ashbury"), ("BRK", "Brookhaven", "Brookhaven"),
             ("CAL", "Calder Junction", "Calder"), ("DUN", "Dunmore Parkway", "Dunmore"),
             ("EWK", "Eastwick", "Eastwick"), ("FHW", "Fairhollow", "Fairhollow"), ("GLR", "Glenrock", "Glenrock"),
             ("HRG", "Harrowgate Road", "Harrowgate"), ("IRB", "Ironbridge", "Ironbridge"),
             ("KGM", "Kingsmere Quay", "Kingsmere"), ("LKP", "Lakeport Harbour", "Lakeport"))
#: line -> (station, km from the line's first station).
_LINES = {"Coast Line": (("ASH", 0), ("CAL", 38), ("EWK", 71), ("KGM", 112), ("LKP", 150)),
          "Valley Line": (("BRK", 0), ("CAL", 27), ("DUN", 63), ("GLR", 95)),
          "Northern Line": (("IRB", 0), ("DUN", 31), ("HRG", 66), ("FHW", 98), ("ASH", 140))}
_DEPARTURES = ("06:10", "07:25", "08:40", "10:05", "12:20", "14:35", "16:50", "18:15", "20:30")


def _trains(db: dict, rng: Any) -> None:
    for number, (line, stations) in enumerate(_LINES.items(), start=1):
        starts = [(direction, start)
                  for direction in (stations, tuple((s, stations[-1][1] - km) for s, km in reversed(stations)))
                  for start in sorted(rng.sample(_DEPARTURES, rng.randint(3, 4)))]
        for run, (direction, start) in enumerate(starts, start=1):
            train_id = f"TRN-{number}{run:02d}"
            # ~0.6 minutes per km plus two minutes standing at each call
            stops = [Stop(station_id=s, time=clock_text(minutes(start) + round(km * 0.6) + 2 * k), km=km)
                     for k, (s, km) in enumerate(direction)]
            db["trains"][train_id] = Train(train_id=train_id, line=line, stops=stops,
                                           standard_seats=rng.choice((24, 32, 40)),
                                           first_seats=rng.choice((4, 6, 8))).model_dump(mode="json")


def _passenger(rng: Any, passenger_id: str, first: str, last: str, phones: set[str]) -> dict:
    born = people.date_between(rng, 1946, 2006)
    age = TODAY.year - int(born[:4])  # within a year is close enough for who holds a card
    card = "youth" if age < YOUTH_UNDER else "senior" if age >= SENIOR_FROM else None
    if card is not None and rng.random() < 0.5:
        card = None
    expires = (TODAY + timedelta(days=rng.randint(-60, 300))).isoformat() if card else None
    return Passenger(passenger_id=passenger_id, first_name=first, last_name=last,
                     email=people.email(first, last, "rail.example"), phone=people.phone(rng, phones),
                     date_of_birth=born, railcard=card, railcard_expires=expires).model_dump(mode="json")


def _ticket(db: dict, rng: Any, passenger: dict, day: date) -> None:
    train = db["trains"][rng.choice(sorted(db["trains"]))]
    first, second = sorted(rng.sample(range(len(train["stops"])), 2))
    origin, destination = train["stops"][first]["station_id"], train["stops"][second]["station_id"]
    departs, arrives, km = leg(train, origin, destination)
    fare_class = "first" if rng.random() < 0.2 else "standard"
    seat = free_seat(db, train, day.isoformat(), fare_class)
    if seat is None:
        return
    upcoming = f"{day.isoformat()}T{departs}" > NOW
    status = rng.choice(("booked", "booked", "booked", "cancelled")) if upcoming else "travelled"
    percent = railcard_percent(passenger, day.isoformat())
    price = ticket_price(km, fare_class, percent)
    ticket_id = next_id(db["tickets"], "TKT-", 5)
    db["tickets"][ticket_id] = Ticket(
        ticket_id=ticket_id, passenger_id=passenger["passenger_id"], train_id=train["train_id"], date=day.isoformat(),
        origin_id=origin, destination_id=destination, departs=departs, arrives=arrives, fare_class=fare_class,
        seat=seat, discount_percent=percent, price=price, status=status,
        refund=price if status == "cancelled" else 0.0,
        changes=1 if status == "booked" and rng.random() < 0.3 else 0,
        booked_at=f"{min(day, TODAY - timedelta(days=1)).isoformat()}T19:00:00").model_dump(mode="json")


def _season_pass(db: dict, rng: Any, passenger_id: str) -> None:
    line = _LINES[rng.choice(sorted(_LINES))]
    (origin, _), (destination, _) = sorted(rng.sample(line, 2), key=lambda stop: stop[1])
    duration = rng.choice(sorted(PASS_DAYS))
    starts = TODAY + timedelta(days=rng.randint(-PASS_DAYS[duration] - 10, 14))
    ends = starts + timedelta(days=PASS_DAYS[duration] - 1)
    pass_id = next_id(db["season_passes"], "SSN-", 4)
    km = route_km(db, origin, destination)
    db["season_passes"][pass_id] = SeasonPass(
        pass_id=pass_id, passenger_id=passenger_id, origin_id=origin, destination_id=destination, duration=duration,
        starts_on=starts.isoformat(), ends_on=ends.isoformat(),
        price=float(round(ticket_price(km, "standard", 0) * PASS_FARES[duration], 2)),
        status="active" if ends >= TODAY else "expired", refund=0.0,
        bought_at=f"{min(starts, TODAY) - timedelta(days=3)}T12:00:00").model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """Stations, the timetable and `size` passengers with past and upcoming tickets and some passes."""
    rng = seeded_rng("railway", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    for station_id, name, city in _STATIONS:
        db["stations"][station_id] = Station(station_id=station_id, name=name, city=city).model_dump(mode="json")
    _trains(db, rng)
    phones: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        passenger = _passenger(rng, f"PAX-{1001 + index}", first, last, phones)
        db["passengers"][passenger["passenger_id"]] = passenger
        for _ in range(rng.randint(1, 3)):
            past = rng.random() < 0.35
            _ticket(db, rng, passenger, TODAY + timedelta(days=rng.randint(-30, -1) if past else rng.randint(0, 20)))
        if rng.random() < 0.35:
            _season_pass(db, rng, passenger["passenger_id"])
    return db
