"""The movie domain's records and seeded data: cinemas, screens with seat maps, films, showtimes,
members, the concession menu, bookings and member vouchers.

Why apart from the tools (`lab.synth.domains.movie`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the seat, price and age rules
(`taken_seats`, `seat_price`, `ticket_total`, `age_on`, ...) live here too because the generator
books its seats and prices its tickets by them, as the tools do.

Three cinemas of three screens each; every screen plays one film for the whole programme, three or
four showings a day from yesterday to five days ahead, each starting with trailers. Each member
(about one in six under 18) has one to three bookings: past ones attended, upcoming ones booked
(some with snacks, a few cancelled); almost half hold a voucher, some already used, some expired.
A seat is `<row letter><number>` ('E7'); the back rows of a screen are premium. Dates are ISO days,
times "HH:MM"; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, clock_text, next_id, seeded_rng

NOW = "2025-10-17T11:40:00"
TODAY = date(2025, 10, 17)
PAST_DAYS = 1
PROGRAMME_DAYS = 6  # today and the five days after it
TRAILER_MINUTES = 20
#: Cancelling, and moving a booking to other seats or another showing, closes this long before the start.
CHANGE_CUTOFF_HOURS = 2
MAX_SEATS = 10
FORMAT_PRICES = {"2D": 12.0, "3D": 14.5, "IMAX": 17.5}
MATINEE_DISCOUNT = 3.0  # off showings that start before 17:00
PREMIUM_SURCHARGE = 4.0
TIER_PERCENT = {"standard": 0, "silver": 10, "gold": 20}  # off ticket prices
#: Policy only: R-rated films are for members this old or older on the day of the showing.
R_MIN_AGE = 18

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Rating = Literal["G", "PG", "PG-13", "R"]
Tier = Literal["standard", "silver", "gold"]
ScreenFormat = Literal["2D", "3D", "IMAX"]


class Cinema(Record):
    cinema_id: str
    name: str
    city: str
    street: str


class Screen(Record):
    screen_id: str
    cinema_id: str
    name: str
    format: ScreenFormat
    rows: list[str]
    seats_per_row: Annotated[int, Field(ge=1, le=99)]
    premium_rows: list[str]


class Film(Record):
    film_id: str
    title: str
    genre: str
    rating: Rating
    runtime_minutes: Annotated[int, Field(ge=1)]
    released_on: Day


class Showtime(Record):
    showtime_id: str
    film_id: str
    screen_id: str
    date: Day
    start: Clock
    ends: Clock
    standard_price: Money
    premium_price: Money


class Member(Record):
    member_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: Day
    tier: Tier
    member_since: Day


class ConcessionItem(Record):
    item_id: str
    name: str
    price: Money


class ConcessionLine(Record):
    item_id: str
    name: str
    quantity: Annotated[int, Field(ge=1)]
    price: Money  # each


class Booking(Record):
    booking_id: str
    member_id: str
    showtime_id: str
    seats: list[str]
    tier_discount_percent: Annotated[int, Field(ge=0, le=100)]
    ticket_total: Money
    voucher_id: str | None
    voucher_discount: Money
    concessions: list[ConcessionLine]
    concessions_total: Money
    total: Money
    status: Literal["booked", "attended", "cancelled"]
    refund: Money
    booked_at: str


class Voucher(Record):
    voucher_id: str
    member_id: str
    percent_off: Annotated[int, Field(ge=1, le=100)]
    expires_on: Day
    status: Literal["available", "used", "expired"]
    booking_id: str | None


TABLES: dict[str, type[Record]] = {"cinemas": Cinema, "screens": Screen, "films": Film, "showtimes": Showtime,
                                   "members": Member, "concessions": ConcessionItem, "bookings": Booking,
                                   "vouchers": Voucher}

# ---- clocks, seats, prices and ages ----------------------------------------------------------------


def minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:5])



def money(amount: float) -> float:
    """An amount to the cent, always a float (an int would hash differently)."""
    return float(round(amount, 2))


def minutes_until(showtime: dict, now: str) -> int:
    """Minutes from `now` until the showing starts (zero or less once it has started)."""
    days = (date.fromisoformat(showtime["date"]) - date.fromisoformat(now[:10])).days
    return days * 1440 + minutes(showtime["start"]) - minutes(now[11:16])


def capacity(screen: dict) -> int:
    return len(screen["rows"]) * screen["seats_per_row"]


def seat_map(screen: dict) -> list[str]:
    """Every seat of the screen, row by row from the front: 'A1', 'A2', ..."""
    return [f"{row}{n}" for row in screen["rows"] for n in range(1, screen["seats_per_row"] + 1)]


def seat_order(seat: str) -> tuple[str, int]:
    """Sort key of a seat label on the map: by row, then by number (so 'E9' comes before 'E10')."""
    return seat[0], int(seat[1:])


def taken_seats(db: dict, showtime_id: str, ignore: str | None = None) -> set[str]:
    """The seats held for a showing by bookings not cancelled; `ignore` is a booking whose own seats
    count as free (it is moving)."""
    return {seat for b in db["bookings"].values()
            if b["showtime_id"] == showtime_id and b["status"] != "cancelled" and b["booking_id"] != ignore
            for seat in b["seats"]}


def seat_price(showtime: dict, screen: dict, seat: str) -> float:
    return showtime["premium_price"] if seat[0] in screen["premium_rows"] else showtime["standard_price"]


def ticket_total(showtime: dict, screen: dict, seats: list[str], percent: int) -> float:
    """The seats' prices, less the member tier's percent, to the cent."""
    return money(sum(seat_price(showtime, screen, s) for s in seats) * (100 - percent) / 100)


def booking_total(booking: dict) -> float:
    """What a booking costs: its tickets, less its voucher, plus its concessions."""
    return money(booking["ticket_total"] - booking["voucher_discount"] + booking["concessions_total"])


def age_on(date_of_birth: str, day: str) -> int:
    """Age in whole years on `day` (ISO dates; the birthday itself counts)."""
    born, then = date.fromisoformat(date_of_birth), date.fromisoformat(day)
    return then.year - born.year - ((then.month, then.day) < (born.month, born.day))


def may_watch(member: dict, film: dict, day: str) -> bool:
    """The policy's age rule: an R-rated film only for members at least `R_MIN_AGE` on the day."""
    return film["rating"] != "R" or age_on(member["date_of_birth"], day) >= R_MIN_AGE


# ---- seeded data -----------------------------------------------------------------------------------

#: (name, city, big screen's format)
_CINEMAS = (("Lumen Picturehouse", "Ashbury", "IMAX"), ("Harbour Lights Cinema", "Lakeport", "3D"),
            ("Grand Regent", "Calder", "3D"))
_ROW_LETTERS = "ABCDEFGHJKLM"  # no I: it reads like a 1
#: (title, genre, rating, runtime minutes, released)
_FILMS = (("The Lighthouse Keeper's Daughter", "drama", "PG-13", 124, "2025-09-26"),
          ("Midnight at the Foundry", "thriller", "R", 112, "2025-10-03"),
          ("Paper Kites", "animation", "G", 94, "2025-09-19"),
          ("Orbit Nine", "science fiction", "PG-13", 138, "2025-10-10"),
          ("Salt and Ember", "drama", "R", 131, "2025-09-12"),
          ("The Quiet Harbour", "mystery", "PG", 106, "2025-10-03"),
          ("Wildwood Rangers", "animation", "PG", 98, "2025-10-10"),
          ("Iron Meridian", "action", "R", 146, "2025-10-17"),
          ("A Summer in Glenrock", "romance", "PG-13", 117, "2025-09-26"),
          ("Nightjar", "horror", "R", 101, "2025-10-10"),
          ("The Clockmaker's Race", "adventure", "PG", 121, "2025-10-03"),
          ("Glass Mountains", "documentary", "G", 88, "2025-09-19"))
_CONCESSIONS = (("Small popcorn", 5.5), ("Large popcorn", 7.5), ("Nachos with cheese", 6.75),
                ("Hot dog", 6.0), ("Soft drink", 4.25), ("Bottled water", 2.5), ("Ice cream tub", 4.75),
                ("Popcorn and drink combo", 10.5))
_FIRST_STARTS = ("12:00", "12:30", "13:00", "13:15", "14:00")
_LAST_START, _LAST_END = minutes("21:30"), minutes("23:50")
_CLEANING_MINUTES = 25


def _cinemas(db: dict, rng: Any) -> None:
    for name, city, big_format in _CINEMAS:
        cinema_id = next_id(db["cinemas"], "CIN-", 2)
        street = people.address(rng)["street"]
        db["cinemas"][cinema_id] = Cinema(cinema_id=cinema_id, name=name, city=city,
                                          street=street).model_dump(mode="json")
        for number in (1, 2, 3):
            rows = list(_ROW_LETTERS[:12 if number == 1 else rng.choice((8, 9, 10))])
            screen_id = next_id(db["screens"], "SCR-", 3)
            db["screens"][screen_id] = Screen(
                screen_id=screen_id, cinema_id=cinema_id, name=f"Screen {number}",
                format=big_format if number == 1 else "2D", rows=rows,
                seats_per_row=18 if number == 1 else rng.choice((12, 14)), premium_rows=rows[-2:],
            ).model_dump(mode="json")


def _starts(rng: Any, runtime: int) -> list[str]:
    """A screen's daily start times: one after another, with the screen cleaned in between."""
    starts, start = [], minutes(rng.choice(_FIRST_STARTS))
    while len(starts) < 4 and start <= _LAST_START and start + TRAILER_MINUTES + runtime <= _LAST_END:
        starts.append(start)
        start = -(-(start + TRAILER_MINUTES + runtime + _CLEANING_MINUTES) // 5) * 5  # up to the next 5 minutes
    return [clock_text(s) for s in starts]


def _programme(db: dict, rng: Any) -> None:
    films = rng.sample(sorted(db["films"]), len(db["screens"]))
    for screen_id, film_id in zip(sorted(db["screens"]), films):
        screen, runtime = db["screens"][screen_id], db["films"][film_id]["runtime_minutes"]
        starts = _starts(rng, runtime)
        for offset in range(-PAST_DAYS, PROGRAMME_DAYS):
            day = (TODAY + timedelta(days=offset)).isoformat()
            for start in starts:
                standard = FORMAT_PRICES[screen["format"]] - (MATINEE_DISCOUNT if start < "17:00" else 0.0)
                showtime_id = next_id(db["showtimes"], "SHW-", 4)
                db["showtimes"][showtime_id] = Showtime(
                    showtime_id=showtime_id, film_id=film_id, screen_id=screen_id, date=day, start=start,
                    ends=clock_text(minutes(start) + TRAILER_MINUTES + runtime), standard_price=standard,
                    premium_price=standard + PREMIUM_SURCHARGE).model_dump(mode="json")


def _member(rng: Any, member_id: str, first: str, last: str, phones: set[str]) -> dict:
    born = people.date_between(rng, 2008, 2012) if rng.random() < 0.17 else people.date_between(rng, 1950, 2006)
    return Member(member_id=member_id, first_name=first, last_name=last,
                  email=people.email(first, last, "movies.example"), phone=people.phone(rng, phones),
                  date_of_birth=born, tier=rng.choice(("standard", "standard", "silver", "silver", "gold")),
                  member_since=people.date_between(rng, 2016, 2024)).model_dump(mode="json")


def _booking(db: dict, rng: Any, member: dict, showtime: dict) -> None:
    screen = db["screens"][showtime["screen_id"]]
    count = rng.choice((1, 2, 2, 2, 3, 4))
    row = rng.choice(screen["rows"])
    first = rng.randint(1, screen["seats_per_row"] - count + 1)
    seats = [f"{row}{n}" for n in range(first, first + count)]
    if taken_seats(db, showtime["showtime_id"]) & set(seats):
        return
    upcoming = f"{showtime['date']}T{showtime['start']}" > NOW
    status = rng.choice(("booked", "booked", "booked", "cancelled")) if upcoming else "attended"
    lines = []
    for name, price in rng.sample(_CONCESSIONS, rng.choice((0, 0, 0, 1, 2))):
        item_id = next(i for i, item in db["concessions"].items() if item["name"] == name)
        lines.append(ConcessionLine(item_id=item_id, name=name, quantity=rng.randint(1, 2), price=price))
    percent = TIER_PERCENT[member["tier"]]
    tickets = ticket_total(showtime, screen, seats, percent)
    snacks = money(sum(line.price * line.quantity for line in lines))
    booked_on = min(date.fromisoformat(showtime["date"]), TODAY) - timedelta(days=rng.randint(1, 6))
    booking_id = next_id(db["bookings"], "BKG-", 5)
    db["bookings"][booking_id] = Booking(
        booking_id=booking_id, member_id=member["member_id"], showtime_id=showtime["showtime_id"], seats=seats,
        tier_discount_percent=percent, ticket_total=tickets, voucher_id=None, voucher_discount=0.0, concessions=lines,
        concessions_total=snacks, total=money(tickets + snacks), status=status,
        refund=money(tickets + snacks) if status == "cancelled" else 0.0, booked_at=f"{booked_on}T20:15:00",
    ).model_dump(mode="json")


def _vouchers(db: dict, rng: Any, member_id: str) -> None:
    """One or two vouchers; an unexpired one is sometimes already spent on a booking not cancelled."""
    for _ in range(rng.choice((1, 1, 2))):
        expires = TODAY + timedelta(days=rng.randint(-30, 90))
        voucher_id = next_id(db["vouchers"], "VCH-", 4)
        voucher = Voucher(voucher_id=voucher_id, member_id=member_id, percent_off=rng.choice((10, 25, 50)),
                          expires_on=expires.isoformat(), status="available" if expires >= TODAY else "expired",
                          booking_id=None).model_dump(mode="json")
        spendable = [b for b in db["bookings"].values() if b["member_id"] == member_id
                     and b["status"] != "cancelled" and b["voucher_id"] is None]
        if voucher["status"] == "available" and spendable and rng.random() < 0.3:
            booking = rng.choice(spendable)
            booking.update(voucher_id=voucher_id,
                           voucher_discount=money(booking["ticket_total"] * voucher["percent_off"] / 100))
            booking["total"] = booking_total(booking)
            voucher.update(status="used", booking_id=booking["booking_id"])
        db["vouchers"][voucher_id] = voucher


def generate(seed: int, size: int) -> dict[str, Any]:
    """Cinemas, films, the programme, the menu and `size` members with bookings and some vouchers."""
    rng = seeded_rng("movie", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    _cinemas(db, rng)
    for title, genre, rating, runtime, released in _FILMS:
        film_id = next_id(db["films"], "FLM-", 3)
        db["films"][film_id] = Film(film_id=film_id, title=title, genre=genre, rating=rating, runtime_minutes=runtime,
                                    released_on=released).model_dump(mode="json")
    for name, price in _CONCESSIONS:
        item_id = next_id(db["concessions"], "CON-", 2)
        db["concessions"][item_id] = ConcessionItem(item_id=item_id, name=name, price=price).model_dump(mode="json")
    _programme(db, rng)
    showtimes = sorted(db["showtimes"])
    phones: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        member = _member(rng, f"MEM-{1001 + index}", first, last, phones)
        db["members"][member["member_id"]] = member
        for showtime_id in rng.sample(showtimes, rng.randint(1, 3)):
            showtime = db["showtimes"][showtime_id]
            if may_watch(member, db["films"][showtime["film_id"]], showtime["date"]):
                _booking(db, rng, member, showtime)
        if rng.random() < 0.45:
            _vouchers(db, rng, member["member_id"])
    return db
