"""Known-good calls for every tool of the movie domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import timedelta

from lab.synth.domain import next_id
from lab.synth.domains import movie_data
from tests.helpers.synth_calls.common import Calls, first


def _free(db: dict, showtime: dict, count: int, ignore: str | None = None) -> list[str]:
    """The first `count` free seats of the showing, in map order."""
    taken = movie_data.taken_seats(db, showtime["showtime_id"], ignore)
    return [s for s in movie_data.seat_map(db["screens"][showtime["screen_id"]]) if s not in taken][:count]


def calls(db: dict) -> Calls:
    tomorrow = (movie_data.TODAY + timedelta(days=1)).isoformat()
    m = db["members"]["MEM-1001"]
    show = first(db["showtimes"].values(), lambda s: s["date"] == tomorrow)
    booked = first(db["bookings"].values(), lambda b: b["status"] == "booked" and b["voucher_id"] is None and
                   movie_data.minutes_until(db["showtimes"][b["showtime_id"]],
                                            movie_data.NOW) >= movie_data.CHANGE_CUTOFF_HOURS * 60)
    current = db["showtimes"][booked["showtime_id"]]
    same_film = first(db["showtimes"].values(), lambda s: s["film_id"] == current["film_id"]
                      and s["date"] > current["date"])
    voucher = first(db["vouchers"].values(), lambda v: v["status"] == "available"
                    and v["expires_on"] >= movie_data.TODAY.isoformat())
    new_booking = next_id(db["bookings"], "BKG-", 5)
    book_for_voucher = ("book_seats", {"member_id": voucher["member_id"], "showtime_id": show["showtime_id"],
                                       "seats": _free(db, show, 2)})
    return {
        "find_member_by_email": [("find_member_by_email", {"email": m["email"].upper()})],
        "find_member_by_name_dob": [("find_member_by_name_dob", {"first_name": m["first_name"],
                                     "last_name": m["last_name"], "date_of_birth": m["date_of_birth"]})],
        "get_member_details": [("get_member_details", {"member_id": m["member_id"]})],
        "search_cinemas": [("search_cinemas", {"query": "calder"})],
        "search_films": [("search_films", {"query": "drama"})],
        "get_film_details": [("get_film_details", {"film_id": "FLM-001"})],
        "search_showtimes": [("search_showtimes", {"cinema_id": "CIN-01", "date": tomorrow})],
        "get_showtime_seats": [("get_showtime_seats", {"showtime_id": booked["showtime_id"]})],
        "get_booking_details": [("get_booking_details", {"booking_id": booked["booking_id"]})],
        "get_voucher_details": [("get_voucher_details", {"voucher_id": voucher["voucher_id"]})],
        "list_concessions": [("list_concessions", {})],
        "calculate": [("calculate", {"expression": "2 * 14.5 * 0.9"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants to hire a screen."})],
        "book_seats": [("book_seats", {"member_id": m["member_id"], "showtime_id": show["showtime_id"],
                                       "seats": _free(db, show, 3)})],
        "cancel_booking": [("cancel_booking", {"booking_id": booked["booking_id"]})],
        "change_showtime": [("change_showtime", {"booking_id": booked["booking_id"],
                                                 "showtime_id": same_film["showtime_id"],
                                                 "seats": _free(db, same_film, len(booked["seats"]))})],
        "change_seats": [("change_seats", {"booking_id": booked["booking_id"],
                                           "seats": _free(db, current, len(booked["seats"]))})],
        "add_concessions": [("add_concessions", {"booking_id": booked["booking_id"], "item_id": "CON-02",
                                                 "quantity": 2})],
        "apply_voucher": [book_for_voucher, ("apply_voucher", {"booking_id": new_booking,
                                                               "voucher_id": voucher["voucher_id"]})],
    }
