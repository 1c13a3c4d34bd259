"""Known-good calls for every tool of the railway domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import date, timedelta

from lab.synth.domains import railway_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    tomorrow = (railway_data.TODAY + timedelta(days=1)).isoformat()
    p = db["passengers"]["PAX-1001"]
    train = db["trains"]["TRN-101"]
    origin, destination = train["stops"][0]["station_id"], train["stops"][1]["station_id"]
    booked = first(db["tickets"].values(), lambda t: t["status"] == "booked" and t["fare_class"] == "standard"
                    and f"{t['date']}T{t['departs']}" > railway_data.NOW)
    later = (date.fromisoformat(booked["date"]) + timedelta(days=1)).isoformat()
    no_card = first(db["passengers"].values(),
                    lambda q: railway_data.railcard_percent(q, railway_data.TODAY.isoformat()) == 0)
    no_pass = first(db["passengers"].values(), lambda q: not any(
        s["passenger_id"] == q["passenger_id"] for s in db["season_passes"].values()))
    future = first(db["season_passes"].values(), lambda s: s["status"] == "active"
                    and s["starts_on"] > railway_data.NOW[:10])
    return {
        "find_passenger_by_email": [("find_passenger_by_email", {"email": p["email"].upper()})],
        "find_passenger_by_name_dob": [("find_passenger_by_name_dob", {"first_name": p["first_name"],
                                        "last_name": p["last_name"], "date_of_birth": p["date_of_birth"]})],
        "get_passenger_details": [("get_passenger_details", {"passenger_id": p["passenger_id"]})],
        "search_stations": [("search_stations", {"query": "junction"})],
        "search_trains": [("search_trains", {"origin_id": origin, "destination_id": destination, "date": tomorrow})],
        "get_train_details": [("get_train_details", {"train_id": "TRN-101"})],
        "get_ticket_details": [("get_ticket_details", {"ticket_id": booked["ticket_id"]})],
        "get_season_pass_details": [("get_season_pass_details", {"pass_id": future["pass_id"]})],
        "calculate": [("calculate", {"expression": "32 * 6.08"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Group booking for 20."})],
        "book_ticket": [("book_ticket", {"passenger_id": p["passenger_id"], "train_id": "TRN-101", "date": tomorrow,
                                         "origin_id": origin, "destination_id": destination,
                                         "fare_class": "standard"})],
        "cancel_ticket": [("cancel_ticket", {"ticket_id": booked["ticket_id"]})],
        "change_ticket": [("change_ticket", {"ticket_id": booked["ticket_id"], "train_id": booked["train_id"],
                                             "date": later})],
        "change_fare_class": [("change_fare_class", {"ticket_id": booked["ticket_id"], "fare_class": "first"})],
        "add_railcard": [("add_railcard", {"passenger_id": no_card["passenger_id"], "railcard": "youth"})],
        "buy_season_pass": [("buy_season_pass", {"passenger_id": no_pass["passenger_id"], "origin_id": "ASH",
                                                 "destination_id": "CAL", "duration": "weekly",
                                                 "starts_on": tomorrow})],
        "cancel_season_pass": [("cancel_season_pass", {"pass_id": future["pass_id"]})],
    }
