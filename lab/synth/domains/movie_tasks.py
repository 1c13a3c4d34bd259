"""Movie task templates: what a member calls about, and the agent's golden chain for each.

Nine templates: easy changes to a booking the member describes (cancel it, add snacks, move to
premium seats), medium requests found by description (seats for a showing the member names, a
voucher of a given percent used on a booking, a later showing of the same film), two writes in one
call (seats and then snacks on the new booking; a booking cancelled for another film that day), and
a refusal: a member under 18 asking for seats at an R-rated film, which the policy forbids though
the booking tool would accept it, where the right chain reads the date of birth and the film and
only tells the member the runtime they ask for. The evolution step adds a read-only question (the
screen and total of the next booking, when a showing ends, what a snack costs) asked after the
request is done.

Each chain identifies the member as the policy demands, by email or by name and date of birth,
whichever the scenario's known info gives, and finds cinemas, showings, bookings, vouchers and menu
items through the tools. The seats a member asks for are free ones, as they would have seen them on
the cinema's seat map.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from lab.synth.domains.movie_data import CHANGE_CUTOFF_HOURS, NOW, TODAY, may_watch, minutes_until, taken_seats
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your member id or any booking, showtime, film, cinema, voucher or menu item ids."
CUTOFF_MINUTES = CHANGE_CUTOFF_HOURS * 60


def _own(db: dict, table: str, member_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "member_id", member_id, **match)


def _identity(db: dict, member_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    m = db["members"][member_id]
    if rng.random() < 0.5:
        return (f"You are {m['first_name']} {m['last_name']}. Your email is {m['email']}.",
                lambda g: g("find_member_by_email", email=m["email"]))
    return (f"You are {m['first_name']} {m['last_name']}. You were born on {m['date_of_birth']}.",
            lambda g: g("find_member_by_name_dob", first_name=m["first_name"], last_name=m["last_name"],
                        date_of_birth=m["date_of_birth"]))


def _where(db: dict, showtime: dict) -> tuple[str, str, str, str]:
    """(film title, cinema name, day, start): how a member names a showing."""
    cinema_id = db["screens"][showtime["screen_id"]]["cinema_id"]
    return (db["films"][showtime["film_id"]]["title"], db["cinemas"][cinema_id]["name"], showtime["date"],
            showtime["start"])


def _showing(db: dict, showtime: dict) -> str:
    title, cinema, day, start = _where(db, showtime)
    return f"'{title}' at {cinema} on {day}, the showing at {start}"


def _booked(db: dict, booking: dict) -> str:
    title, cinema, day, start = _where(db, db["showtimes"][booking["showtime_id"]])
    return f"'{title}' at {cinema} on {day} at {start}"


def _describe(db: dict, booking: dict) -> str:
    return f"your booking for {_booked(db, booking)}"


def _seats(seats: list[str]) -> str:
    return f"seat {seats[0]}" if len(seats) == 1 else f"seats {', '.join(seats)}"


def _bookings(db: dict, member_id: str, after: int = 0) -> list[dict]:
    """The member's booked bookings whose showing starts more than `after` minutes from now."""
    return [b for b in _own(db, "bookings", member_id, status="booked")
            if minutes_until(db["showtimes"][b["showtime_id"]], NOW) > after]


def _showtimes(db: dict, member: dict, test: Callable[[dict], bool] = lambda s: True) -> list[dict]:
    """Showings starting more than an hour from now, of films the member may watch, that pass `test`."""
    return [s for s in db["showtimes"].values() if minutes_until(s, NOW) > 60 and test(s)
            and may_watch(member, db["films"][s["film_id"]], s["date"])]


def _free_block(db: dict, showtime: dict, count: int, rng: random.Random, premium: bool | None = None) -> list[str]:
    """`count` free seats side by side in one row (premium rows only, none, or either); [] if none are."""
    screen = db["screens"][showtime["screen_id"]]
    taken = taken_seats(db, showtime["showtime_id"])
    rows = [r for r in screen["rows"] if premium is None or (r in screen["premium_rows"]) == premium]
    blocks = [seats for row in rows for first in range(1, screen["seats_per_row"] - count + 2)
              if not taken & set(seats := [f"{row}{n}" for n in range(first, first + count)])]
    return rng.choice(blocks) if blocks else []


def _find_booking(g: Golden, booking_ids: list[str], where: tuple[str, str, str, str]) -> dict:
    """The booked booking the member described, as the agent finds it among theirs."""
    found = (g("get_booking_details", booking_id=b) for b in booking_ids)
    return next(b for b in found
                if b["status"] == "booked" and (b["film_title"], b["cinema_name"], b["date"], b["start"]) == where)


def _booking_ids(g: Golden, member_id: str) -> list[str]:
    return g("get_member_details", member_id=member_id)["booking_ids"]


def _find_showtime(g: Golden, where: tuple[str, str, str, str]) -> dict:
    """The showing the member named, through the cinema and that day's programme."""
    title, cinema, day, start = where
    cinema_id = next(c["cinema_id"] for c in g("search_cinemas", query=cinema) if c["name"] == cinema)
    return next(s for s in g("search_showtimes", cinema_id=cinema_id, date=day) if (s["film_title"], s["start"])
                == (title, start))


def _menu_item(g: Golden, name: str) -> str:
    return next(item["item_id"] for item in g("list_concessions") if item["name"] == name)


def _snack(db: dict, rng: random.Random) -> tuple[str, int]:
    return db["concessions"][rng.choice(sorted(db["concessions"]))]["name"], rng.randint(1, 3)


def book_show(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    shows = _showtimes(db, db["members"][member_id])
    showtime = rng.choice(shows)
    seats = _free_block(db, showtime, rng.choice((1, 2, 2, 3, 4)), rng)
    if not seats:
        return None
    where = _where(db, showtime)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        show = _find_showtime(g, where)
        g("get_showtime_seats", showtime_id=show["showtime_id"])
        g("book_seats", member_id=found, showtime_id=show["showtime_id"], seats=seats)
        return []
    return Scenario("Book the seats the member asks for.",
                    f"You want {_seats(seats)} for {_showing(db, showtime)}.", known, UNKNOWN, chain,
                    "medium")


def cancel_booking(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    bookings = _bookings(db, member_id, after=CUTOFF_MINUTES)
    if not bookings:
        return None
    booking = rng.choice(bookings)
    where = _where(db, db["showtimes"][booking["showtime_id"]])
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        g("cancel_booking", booking_id=_find_booking(g, _booking_ids(g, identify(g)), where)["booking_id"])
        return []
    return Scenario("Cancel the booking the member describes.", f"You want to cancel {_describe(db, booking)}.",
                    known, UNKNOWN, chain, "easy")


def add_snacks(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    bookings = _bookings(db, member_id)
    if not bookings:
        return None
    booking = rng.choice(bookings)
    where = _where(db, db["showtimes"][booking["showtime_id"]])
    name, quantity = _snack(db, rng)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_booking(g, _booking_ids(g, identify(g)), where)
        g("add_concessions", booking_id=found["booking_id"], item_id=_menu_item(g, name), quantity=quantity)
        return []
    return Scenario("Add the snacks the member asks for to their booking.",
                    f"You want {quantity} x {name} added to {_describe(db, booking)}.", known, UNKNOWN, chain,
                    "easy")


def premium_upgrade(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    standard = [b for b in _bookings(db, member_id, after=CUTOFF_MINUTES)
                if not {s[0] for s in b["seats"]} & set(db["screens"][db["showtimes"][b["showtime_id"]]["screen_id"]]
                                                        ["premium_rows"])]
    if not standard:
        return None
    booking = rng.choice(standard)
    seats = _free_block(db, db["showtimes"][booking["showtime_id"]], len(booking["seats"]), rng, premium=True)
    if not seats:
        return None
    where = _where(db, db["showtimes"][booking["showtime_id"]])
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_booking(g, _booking_ids(g, identify(g)), where)
        g("get_showtime_seats", showtime_id=found["showtime_id"])
        g("change_seats", booking_id=found["booking_id"], seats=seats)
        return []
    return Scenario("Move a booking to the premium seats the member asks for at the same showing.",
                    f"You want {_describe(db, booking)} moved to the premium {_seats(seats)}.",
                    known, UNKNOWN, chain, "easy")


def use_voucher(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    valid = [v for v in _own(db, "vouchers", member_id, status="available") if v["expires_on"] >= TODAY.isoformat()]
    percents = [v["percent_off"] for v in valid]
    bookings = [b for b in _bookings(db, member_id) if b["voucher_id"] is None]
    unique = [p for p in percents if percents.count(p) == 1]  # the member names the voucher by its percent
    if not unique or not bookings:
        return None
    percent, booking = rng.choice(unique), rng.choice(bookings)
    where = _where(db, db["showtimes"][booking["showtime_id"]])
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        details = g("get_member_details", member_id=identify(g))
        vouchers = (g("get_voucher_details", voucher_id=v) for v in details["voucher_ids"])
        voucher = next(v for v in vouchers if (v["status"], v["percent_off"]) == ("available", percent)
                       and v["expires_on"] >= NOW[:10])
        found = _find_booking(g, details["booking_ids"], where)
        g("apply_voucher", booking_id=found["booking_id"], voucher_id=voucher["voucher_id"])
        return []
    return Scenario(f"Use the member's {percent}% voucher on the booking they describe.",
                    f"You have a {percent}% off voucher and want it used on {_describe(db, booking)}.",
                    known, UNKNOWN, chain, "medium")


def later_show(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    bookings = _bookings(db, member_id, after=CUTOFF_MINUTES)
    if not bookings:
        return None
    booking = rng.choice(bookings)
    current = db["showtimes"][booking["showtime_id"]]
    cinema_id = db["screens"][current["screen_id"]]["cinema_id"]
    others = _showtimes(db, db["members"][member_id], lambda s: s["film_id"] == current["film_id"]
                        and s["showtime_id"] != current["showtime_id"]
                        and db["screens"][s["screen_id"]]["cinema_id"] == cinema_id
                        and (s["date"], s["start"]) > (current["date"], current["start"]))
    if not others:
        return None
    showtime = rng.choice(others[:6])  # the same day or the day after, as a later showing usually is
    seats = _free_block(db, showtime, len(booking["seats"]), rng)
    if not seats:
        return None
    where = _where(db, current)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_booking(g, _booking_ids(g, identify(g)), where)
        show = next(s for s in g("search_showtimes", cinema_id=found["cinema_id"], date=showtime["date"])
                    if (s["film_id"], s["start"]) == (found["film_id"], showtime["start"]))
        g("get_showtime_seats", showtime_id=show["showtime_id"])
        g("change_showtime", booking_id=found["booking_id"], showtime_id=show["showtime_id"], seats=seats)
        return []
    return Scenario("Move a booking to a later showing of the same film, at the seats the member asks for.",
                    f"You want to move {_describe(db, booking)} to the showing at {showtime['start']} on "
                    f"{showtime['date']}, {_seats(seats)}.", known, UNKNOWN, chain, "medium")


def book_with_snacks(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    showtime = rng.choice(_showtimes(db, db["members"][member_id]))
    seats = _free_block(db, showtime, rng.choice((2, 2, 3, 4)), rng)
    if not seats:
        return None
    where, (name, quantity) = _where(db, showtime), _snack(db, rng)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        show = _find_showtime(g, where)
        g("get_showtime_seats", showtime_id=show["showtime_id"])
        booking = g("book_seats", member_id=found, showtime_id=show["showtime_id"], seats=seats)
        g("add_concessions", booking_id=booking["booking_id"], item_id=_menu_item(g, name), quantity=quantity)
        return []
    return Scenario("Book the seats the member asks for, then add their snacks to the new booking.",
                    f"You want {_seats(seats)} for {_showing(db, showtime)}, with {quantity} x {name} "
                    "added to the booking.", known, UNKNOWN, chain, "hard")


def swap_film(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    bookings = _bookings(db, member_id, after=CUTOFF_MINUTES)
    if not bookings:
        return None
    booking = rng.choice(bookings)
    current = db["showtimes"][booking["showtime_id"]]
    cinema_id = db["screens"][current["screen_id"]]["cinema_id"]
    others = _showtimes(db, db["members"][member_id], lambda s: s["date"] == current["date"]
                        and s["film_id"] != current["film_id"]
                        and db["screens"][s["screen_id"]]["cinema_id"] == cinema_id)
    if not others:
        return None
    showtime = rng.choice(others)
    seats = _free_block(db, showtime, len(booking["seats"]), rng)
    if not seats:
        return None
    old, (title, _, _, start) = _where(db, current), _where(db, showtime)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        held = _find_booking(g, _booking_ids(g, found), old)
        g("cancel_booking", booking_id=held["booking_id"])
        show = next(s for s in g("search_showtimes", cinema_id=held["cinema_id"], date=held["date"])
                    if (s["film_title"], s["start"]) == (title, start))
        g("get_showtime_seats", showtime_id=show["showtime_id"])
        g("book_seats", member_id=found, showtime_id=show["showtime_id"], seats=seats)
        return []
    return Scenario("Cancel the booking the member describes and book another film at that cinema that day.",
                    f"You no longer want to see {_booked(db, booking)}; you want that booking cancelled and "
                    f"{_seats(seats)} booked instead for '{title}' at the same cinema that day, the showing at "
                    f"{start}.", known, UNKNOWN, chain, "hard")


def refused_r_rated(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    member = db["members"][member_id]
    shows = [s for s in db["showtimes"].values() if minutes_until(s, NOW) > 60
             and db["films"][s["film_id"]]["rating"] == "R" and not may_watch(member, db["films"][s["film_id"]],
                                                                              s["date"])]
    if not shows:
        return None
    showtime = rng.choice(sorted(shows, key=lambda s: s["showtime_id"]))
    seats = _free_block(db, showtime, rng.choice((1, 2)), rng)
    if not seats:
        return None
    where = _where(db, showtime)
    known, identify = _identity(db, member_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        g("get_member_details", member_id=found)  # the date of birth: under 18 on the day of the showing
        film = g("get_film_details", film_id=_find_showtime(g, where)["film_id"])  # rated R
        return [str(film["runtime_minutes"])]
    return Scenario("Refuse to book an R-rated film for a member under 18 (policy) and tell them the film's "
                    "runtime.",
                    f"You want {_seats(seats)} for {_showing(db, showtime)}. You also want to know how "
                    "many minutes the film runs.", known, UNKNOWN, chain, "hard")


def next_booking_question(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    if len(_bookings(db, member_id)) < 2:  # one may be cancelled by the request before
        return None
    email = db["members"][member_id]["email"]

    def chain(g: Golden) -> list[str]:
        ids = _booking_ids(g, g("find_member_by_email", email=email))
        booked = [b for b in (g("get_booking_details", booking_id=i) for i in ids)
                  if b["status"] == "booked" and f"{b['date']}T{b['start']}" > NOW]
        first = min(booked, key=lambda b: (b["date"], b["start"]))
        return [first["screen_name"], str(first["total"])]
    return Scenario("Tell the member the screen and total of their next booking.",
                    "ask which screen your next booked showing is in and what that booking costs in total.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def finish_time_question(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    showtime = rng.choice(_showtimes(db, db["members"][member_id]))
    where, email = _where(db, showtime), db["members"][member_id]["email"]

    def chain(g: Golden) -> list[str]:
        g("find_member_by_email", email=email)
        return [_find_showtime(g, where)["ends"]]
    return Scenario("Tell the member when a showing ends.",
                    f"ask what time {_showing(db, showtime)} finishes.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def snack_price_question(db: dict, member_id: str, rng: random.Random) -> Scenario | None:
    name, email = _snack(db, rng)[0], db["members"][member_id]["email"]

    def chain(g: Golden) -> list[str]:
        g("find_member_by_email", email=email)
        return [next(str(item["price"]) for item in g("list_concessions") if item["name"] == name)]
    return Scenario("Tell the member what a snack costs.", f"ask what one {name} costs.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def _members(db: dict[str, Any]) -> list[str]:
    return sorted(db["members"])


RECIPE = TaskRecipe(
    subjects=_members,
    templates={"book_show": book_show, "cancel_booking": cancel_booking, "add_snacks": add_snacks,
               "premium_upgrade": premium_upgrade, "use_voucher": use_voucher, "later_show": later_show,
               "book_with_snacks": book_with_snacks, "swap_film": swap_film, "refused_r_rated": refused_r_rated},
    follow_ups={"next_booking_question": next_booking_question, "finish_time_question": finish_time_question,
                "snack_price_question": snack_price_question},
)
