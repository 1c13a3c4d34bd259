"""The movie domain: a cinema chain's booking line, with cinemas, screens and their seat maps, films,
showtimes, members, bookings, snacks and vouchers, and 19 tools.

Why these records and rules: they are what a cinema's booking line handles (seats for a showing, a
later showing, better seats, popcorn added to a booking, a voucher, a cancellation), and each rule
gives a task a way to go wrong. The tools enforce the seat map, free seats, showings that have not
started, the change and cancellation cutoff and the voucher terms; one rule is policy only: a member
under 18 on the day of the showing may not book an R-rated film (the booking tool does not check an
age), so a task can test that the agent follows the policy and not just the tools' errors.

A seat's price is its showing's standard or premium price; a member's tier takes a percent off the
tickets, a voucher a percent off what the tickets then cost; snacks are added at menu prices. Every
amount is rounded to the cent. The records, the seeded data and the seat and price rules are in
`lab.synth.domains.movie_data`.
"""

from __future__ import annotations

from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, clock_day, id_by_email, lookup, next_id, parse_day
from lab.synth.domains.movie_data import (
    CHANGE_CUTOFF_HOURS,
    FORMAT_PRICES,
    MATINEE_DISCOUNT,
    MAX_SEATS,
    NOW,
    PREMIUM_SURCHARGE,
    R_MIN_AGE,
    TABLES,
    TIER_PERCENT,
    TRAILER_MINUTES,
    Booking,
    ConcessionLine,
    booking_total,
    capacity,
    generate,
    minutes_until,
    money,
    seat_map,
    seat_order,
    taken_seats,
    ticket_total,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()




def _upcoming_showtime(db: dict, showtime_id: str, now: str) -> dict:
    """The showtime, if it has not started yet; only those can be booked or moved to."""
    showtime = lookup(db, "showtimes", showtime_id, "showtime")
    if minutes_until(showtime, now) <= 0:
        raise ToolRefused(f"showtime {showtime_id} on {showtime['date']} at {showtime['start']} has already started")
    return showtime


def _open_booking(db: dict, booking_id: str, now: str, before_cutoff: bool) -> dict:
    """The booking, if it is booked and its showing starts later than now, or, with `before_cutoff`,
    at least the cutoff later (cancelling and moving close then)."""
    booking = lookup(db, "bookings", booking_id, "booking")
    showtime = db["showtimes"][booking["showtime_id"]]
    limit = CHANGE_CUTOFF_HOURS * 60 if before_cutoff else 1
    if booking["status"] != "booked" or minutes_until(showtime, now) < limit:
        when = f"{CHANGE_CUTOFF_HOURS} hours before the start" if before_cutoff else "the start"
        raise ToolRefused(f"booking {booking_id} is {booking['status']} for {showtime['date']} {showtime['start']}; "
                          f"only booked bookings can change, until {when}")
    return booking


def _free_seats(db: dict, showtime: dict, seats: list[str], ignore: str | None = None) -> list[str]:
    """`seats`, once checked: 1 to MAX_SEATS distinct seats on the screen's map, none held by another booking."""
    if not 1 <= len(seats) <= MAX_SEATS or len(set(seats)) != len(seats):
        raise ToolRefused(f"seats must be 1 to {MAX_SEATS} different seats, got {seats}")
    screen = db["screens"][showtime["screen_id"]]
    on_map = set(seat_map(screen))
    unknown = [s for s in seats if s not in on_map]
    if unknown:
        raise ToolRefused(f"{screen['name']} has rows {''.join(screen['rows'])} of seats 1-{screen['seats_per_row']}; "
                          f"no seat {unknown[0]!r}")
    taken = sorted(taken_seats(db, showtime["showtime_id"], ignore) & set(seats), key=seat_order)
    if taken:
        raise ToolRefused(f"seats {', '.join(taken)} are already taken for showtime {showtime['showtime_id']}")
    return seats


def _reprice(db: dict, booking: dict, showtime: dict) -> None:
    """The booking's ticket total, voucher discount and total, for its seats at `showtime`."""
    screen = db["screens"][showtime["screen_id"]]
    booking["ticket_total"] = ticket_total(showtime, screen, booking["seats"], booking["tier_discount_percent"])
    if booking["voucher_id"] is not None:
        percent = db["vouchers"][booking["voucher_id"]]["percent_off"]
        booking["voucher_discount"] = money(booking["ticket_total"] * percent / 100)
    booking["total"] = booking_total(booking)


@box.read
def find_member_by_email(db: dict, email: str) -> str:
    """Find a member's id from their email address.

    email: the member's email address, any letter case.
    """
    return id_by_email(db, "members", email, "member")


@box.read
def find_member_by_name_dob(db: dict, first_name: str, last_name: str, date_of_birth: str) -> str:
    """Find a member's id from their full name and date of birth.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    for member_id, m in db["members"].items():
        if (m["first_name"].lower(), m["last_name"].lower(), m["date_of_birth"]) == (
                first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip()):
            return member_id
    raise ToolRefused(f"no member named '{first_name} {last_name}' born on '{date_of_birth}'")


@box.read
def get_member_details(db: dict, member_id: str) -> str:
    """A member's contact details, date of birth and loyalty tier, with the ids of their bookings and vouchers.

    member_id: the member, e.g. 'MEM-1001'.
    """
    member = lookup(db, "members", member_id, "member")
    return as_json({**member,
                    "booking_ids": sorted(b for b, booking in db["bookings"].items()
                                          if booking["member_id"] == member_id),
                    "voucher_ids": sorted(v for v, voucher in db["vouchers"].items()
                                          if voucher["member_id"] == member_id)})


@box.read
def search_cinemas(db: dict, query: str) -> str:
    """Cinemas whose name or city contains the query: cinema id, name, city and street.

    query: part of a cinema's name or its city, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([c for c in db["cinemas"].values() if text in c["name"].lower() or text in c["city"].lower()])


@box.read
def search_films(db: dict, query: str) -> str:
    """Films whose title or genre contains the query: film id, title, genre, age rating and runtime.

    query: part of a film title or a genre such as 'drama', any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([f for f in db["films"].values() if text in f["title"].lower() or text in f["genre"].lower()])


@box.read
def get_film_details(db: dict, film_id: str) -> str:
    """A film's title, genre, age rating (G, PG, PG-13 or R), runtime in minutes and release date.

    film_id: the film, e.g. 'FLM-001'.
    """
    return as_json(lookup(db, "films", film_id, "film"))


@box.read
def search_showtimes(db: dict, cinema_id: str, date: str, *, now: str) -> str:
    """The showings at a cinema on a day that have not started yet: film, age rating, screen, format, start
    and end, standard and premium seat prices and free seats, earliest first.

    cinema_id: the cinema, e.g. 'CIN-01'.
    date: the day, YYYY-MM-DD, today or later.
    """
    lookup(db, "cinemas", cinema_id, "cinema")
    if parse_day(date, "date") < clock_day(now):
        raise ToolRefused(f"date must be {now[:10]} or later, got {date}")
    screens = {s: screen for s, screen in db["screens"].items() if screen["cinema_id"] == cinema_id}
    held: dict[str, int] = {}
    for booking in db["bookings"].values():
        if booking["status"] != "cancelled":
            held[booking["showtime_id"]] = held.get(booking["showtime_id"], 0) + len(booking["seats"])
    found = []
    for showtime in db["showtimes"].values():
        screen = screens.get(showtime["screen_id"])
        if screen is None or showtime["date"] != date or minutes_until(showtime, now) <= 0:
            continue
        film = db["films"][showtime["film_id"]]
        found.append({"showtime_id": showtime["showtime_id"], "film_id": film["film_id"], "film_title": film["title"],
                      "rating": film["rating"], "screen_id": screen["screen_id"], "screen_name": screen["name"],
                      "format": screen["format"], "start": showtime["start"], "ends": showtime["ends"],
                      "standard_price": showtime["standard_price"], "premium_price": showtime["premium_price"],
                      "free_seats": capacity(screen) - held.get(showtime["showtime_id"], 0)})
    return as_json(sorted(found, key=lambda s: (s["start"], s["screen_id"])))


@box.read
def get_showtime_seats(db: dict, showtime_id: str) -> str:
    """A showing's seat map: its film, day, start, screen, the rows front to back and seats per row, the
    premium rows, both seat prices, and the seats already taken.

    showtime_id: the showing, e.g. 'SHW-0001'.
    """
    showtime = lookup(db, "showtimes", showtime_id, "showtime")
    screen = db["screens"][showtime["screen_id"]]
    taken = sorted(taken_seats(db, showtime_id), key=seat_order)
    return as_json({**showtime, "film_title": db["films"][showtime["film_id"]]["title"],
                    "screen_name": screen["name"], "format": screen["format"], "rows": screen["rows"],
                    "seats_per_row": screen["seats_per_row"], "premium_rows": screen["premium_rows"],
                    "taken_seats": taken, "free_seats": capacity(screen) - len(taken)})


@box.read
def get_booking_details(db: dict, booking_id: str) -> str:
    """A booking's showing (film, cinema, screen, day, start and end), seats, prices, discounts, voucher,
    snacks, total, status and refund.

    booking_id: the booking, e.g. 'BKG-00001'.
    """
    booking = lookup(db, "bookings", booking_id, "booking")
    showtime = db["showtimes"][booking["showtime_id"]]
    screen = db["screens"][showtime["screen_id"]]
    return as_json({**booking, "film_id": showtime["film_id"], "film_title": db["films"][showtime["film_id"]]["title"],
                    "cinema_id": screen["cinema_id"], "cinema_name": db["cinemas"][screen["cinema_id"]]["name"],
                    "screen_name": screen["name"], "date": showtime["date"], "start": showtime["start"],
                    "ends": showtime["ends"]})


@box.read
def get_voucher_details(db: dict, voucher_id: str) -> str:
    """A voucher's percent off ticket prices, last valid day, status and the booking it was used on.

    voucher_id: the voucher, e.g. 'VCH-0001'.
    """
    return as_json(lookup(db, "vouchers", voucher_id, "voucher"))


@box.read
def list_concessions(db: dict) -> str:
    """The snack and drink menu, the same at every cinema: item id, name and price each."""
    return as_json(list(db["concessions"].values()))


add_generic_tools(box)


@box.write
def book_seats(db: dict, member_id: str, showtime_id: str, seats: list[str], *, now: str) -> str:
    """Book seats for a showing that has not started; the member's tier takes its percent off the tickets.

    member_id: the member booking; the booking is in their name.
    showtime_id: the showing, as search_showtimes lists it.
    seats: the seats wanted, row letter and number such as ['E7', 'E8'], all free.
    """
    member = lookup(db, "members", member_id, "member")
    showtime = _upcoming_showtime(db, showtime_id, now)
    seats = _free_seats(db, showtime, seats)
    percent = TIER_PERCENT[member["tier"]]
    booking_id = next_id(db["bookings"], "BKG-", 5)
    booking = Booking(booking_id=booking_id, member_id=member_id, showtime_id=showtime_id, seats=seats,
                      tier_discount_percent=percent,
                      ticket_total=ticket_total(showtime, db["screens"][showtime["screen_id"]], seats, percent),
                      voucher_id=None, voucher_discount=0.0, concessions=[], concessions_total=0.0, total=0.0,
                      status="booked", refund=0.0, booked_at=now).model_dump(mode="json")
    booking["total"] = booking_total(booking)
    db["bookings"][booking_id] = booking
    return as_json(booking)


@box.write
def cancel_booking(db: dict, booking_id: str, *, now: str) -> str:
    """Cancel a booking up to 2 hours before its showing starts, for everything paid back.

    booking_id: the booked booking; a voucher used on it stays used.
    """
    booking = _open_booking(db, booking_id, now, before_cutoff=True)
    booking.update(status="cancelled", refund=booking["total"])
    return as_json(booking)


@box.write
def change_showtime(db: dict, booking_id: str, showtime_id: str, seats: list[str], *, now: str) -> str:
    """Move a booking to another showing of the same film, up to 2 hours before its own showing starts;
    the tickets are priced again for the new showing, snacks and voucher stay on the booking.

    booking_id: the booked booking.
    showtime_id: the new showing of the same film; it must not have started.
    seats: the seats at the new showing, as many as the booking holds, all free.
    """
    booking = _open_booking(db, booking_id, now, before_cutoff=True)
    showtime = _upcoming_showtime(db, showtime_id, now)
    current = db["showtimes"][booking["showtime_id"]]
    if showtime_id == booking["showtime_id"] or showtime["film_id"] != current["film_id"]:
        raise ToolRefused(f"showtime {showtime_id} must be another showing of the booking's film {current['film_id']}")
    if len(seats) != len(booking["seats"]):
        raise ToolRefused(f"booking {booking_id} holds {len(booking['seats'])} seats, got {len(seats)}")
    booking["seats"] = _free_seats(db, showtime, seats)
    booking["showtime_id"] = showtime_id
    _reprice(db, booking, showtime)
    return as_json(booking)


@box.write
def change_seats(db: dict, booking_id: str, seats: list[str], *, now: str) -> str:
    """Move a booking to other seats at the same showing, up to 2 hours before it starts; the tickets are
    priced again (premium rows cost more).

    booking_id: the booked booking.
    seats: the new seats, as many as the booking holds, all free or the booking's own.
    """
    booking = _open_booking(db, booking_id, now, before_cutoff=True)
    if len(seats) != len(booking["seats"]):
        raise ToolRefused(f"booking {booking_id} holds {len(booking['seats'])} seats, got {len(seats)}")
    if set(seats) == set(booking["seats"]):
        raise ToolRefused(f"booking {booking_id} already holds seats {', '.join(booking['seats'])}")
    showtime = db["showtimes"][booking["showtime_id"]]
    booking["seats"] = _free_seats(db, showtime, seats, ignore=booking_id)
    _reprice(db, booking, showtime)
    return as_json(booking)


@box.write
def add_concessions(db: dict, booking_id: str, item_id: str, quantity: int, *, now: str) -> str:
    """Add snacks or drinks from the menu to a booking before its showing starts, at the menu price.

    booking_id: the booked booking.
    item_id: the menu item, as list_concessions lists it.
    quantity: how many, from 1 to 10; more of an item already on the booking adds to it.
    """
    booking = _open_booking(db, booking_id, now, before_cutoff=False)
    item = lookup(db, "concessions", item_id, "menu item")
    if not 1 <= quantity <= 10:
        raise ToolRefused(f"quantity must be from 1 to 10, got {quantity}")
    line = next((line for line in booking["concessions"] if line["item_id"] == item_id), None)
    if line is None:
        booking["concessions"].append(ConcessionLine(item_id=item_id, name=item["name"], quantity=quantity,
                                                     price=item["price"]).model_dump(mode="json"))
    else:
        line["quantity"] += quantity
    booking["concessions_total"] = money(sum(line["price"] * line["quantity"] for line in booking["concessions"]))
    booking["total"] = booking_total(booking)
    return as_json(booking)


@box.write
def apply_voucher(db: dict, booking_id: str, voucher_id: str, *, now: str) -> str:
    """Use one of the member's own valid vouchers on a booking before its showing starts: its percent comes
    off the ticket total. One voucher per booking; a used voucher is spent.

    booking_id: the booked booking, without a voucher yet.
    voucher_id: an available voucher of the booking's member, not past its last valid day.
    """
    booking = _open_booking(db, booking_id, now, before_cutoff=False)
    voucher = lookup(db, "vouchers", voucher_id, "voucher")
    if booking["voucher_id"] is not None:
        raise ToolRefused(f"booking {booking_id} already has voucher {booking['voucher_id']}")
    if voucher["member_id"] != booking["member_id"]:
        raise ToolRefused(f"voucher {voucher_id} does not belong to the member of booking {booking_id}")
    if voucher["status"] != "available" or date.fromisoformat(voucher["expires_on"]) < clock_day(now):
        raise ToolRefused(f"voucher {voucher_id} is {voucher['status']}, valid until {voucher['expires_on']}; only "
                          "available vouchers still valid can be used")
    booking.update(voucher_id=voucher_id,
                   voucher_discount=money(booking["ticket_total"] * voucher["percent_off"] / 100))
    booking["total"] = booking_total(booking)
    voucher.update(status="used", booking_id=booking_id)
    return as_json(booking)


_PRICES = ", ".join(f"{kind} {price:.2f}" for kind, price in FORMAT_PRICES.items())
_TIERS = ", ".join(f"{tier} {percent}%" for tier, percent in TIER_PERCENT.items())

POLICY = f"""# Cinema booking line policy

The current time is {NOW} (cinema time). Treat it as now for every date and time rule below.

## Identity
- Before looking at or changing anything, identify the member: by email address, or by full name
  and date of birth. Help only that member, with their own bookings and vouchers; a booking is in
  the name of the member who makes it.

## Changes
- Before any change (booking, cancellation, other showing or seats, snacks, voucher), state exactly
  what you will do and get the member's explicit "yes".
- Make one change per tool call; do not make changes the member did not ask for.

## Showings and seats
- Find cinemas with search_cinemas, showings with search_showtimes and free seats with
  get_showtime_seats. Each showing starts with {TRAILER_MINUTES} minutes of trailers; its end time includes them.
- Seats are a row letter and a number ('E7'); the back rows are premium. A booking holds 1 to
  {MAX_SEATS} seats for one showing that has not started; book exactly the seats the member asks for.
- A standard seat costs {_PRICES} by the screen's format, {MATINEE_DISCOUNT:.2f} less for showings starting before
  17:00; a premium seat costs {PREMIUM_SURCHARGE:.2f} more. The member's tier takes a percent off the tickets:
  {_TIERS}.

## Age ratings
- Films are rated G, PG, PG-13 or R. A member under {R_MIN_AGE} on the day of the showing must not be
  booked for an R-rated film: check the film's rating and the member's date of birth before booking,
  and refuse, even though the system would accept the booking.

## Changing and cancelling
- A booking can be cancelled, moved to another showing of the same film, or moved to other seats at
  its showing until {CHANGE_CUTOFF_HOURS} hours before its showing starts, not later. A cancellation pays back the
  whole total; the tickets of a moved booking are priced again.
- To see a different film, cancel the booking and make a new one.

## Snacks and vouchers
- Snacks and drinks from the menu (list_concessions) can be added to a booking until its showing starts.
- A voucher takes its percent off the ticket total of one booking of the member who holds it, until
  its last valid day. One voucher per booking; a used voucher is spent, even if the booking is
  later cancelled.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="movie", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
