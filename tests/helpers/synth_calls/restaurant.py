"""Known-good calls for every tool of the restaurant domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

import json
from datetime import timedelta

from lab.synth.domain import next_id
from lab.synth.domains import restaurant, restaurant_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    tomorrow = (restaurant_data.TODAY + timedelta(days=1)).isoformat()
    place = db["restaurants"]["RST-01"]
    guest = first(db["guests"].values(), lambda g: g["loyalty_points"] >= 100)
    later = first(db["reservations"].values(),
                   lambda r: r["status"] == "confirmed" and r["date"] > restaurant_data.NOW[:10])
    placed = first(db["orders"].values(), lambda o: o["status"] == "placed")
    dish = first(db["menu_items"].values(), lambda m: m["restaurant_id"] == "RST-01" and m["available"])
    slot = next(t for t in restaurant_data.seating_times(place) if json.loads(restaurant.DOMAIN.call(
        db, "check_table_availability", {"restaurant_id": "RST-01", "date": tomorrow, "time": t, "party_size": 2})[0]))
    pickup = restaurant_data.seating_times(place)[-1]
    order = {"guest_id": guest["guest_id"], "restaurant_id": "RST-01", "item_ids": [dish["item_id"]] * 4,
             "pickup_time": pickup}
    booking = {"restaurant_id": "RST-01", "date": tomorrow, "time": slot, "party_size": 2}
    other_note = "quiet_table" if later["note"] != "quiet_table" else "birthday"
    return {
        "find_guest_by_phone": [("find_guest_by_phone", {"phone": guest["phone"].replace("-", " ")})],
        "find_guest_by_email": [("find_guest_by_email", {"email": guest["email"]})],
        "get_guest_details": [("get_guest_details", {"guest_id": guest["guest_id"]})],
        "search_restaurants": [("search_restaurants", {"query": place["name"].upper()})],
        "get_restaurant_details": [("get_restaurant_details", {"restaurant_id": "RST-01"})],
        "get_menu": [("get_menu", {"restaurant_id": "RST-01"})],
        "check_table_availability": [("check_table_availability", booking)],
        "get_reservation_details": [("get_reservation_details", {"reservation_id": later["reservation_id"]})],
        "get_order_details": [("get_order_details", {"order_id": placed["order_id"]})],
        "calculate": [("calculate", {"expression": "4 * 13.5"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Party of 9."})],
        "create_reservation": [("create_reservation", {"guest_id": guest["guest_id"], **booking})],
        "modify_reservation": [("modify_reservation", {"reservation_id": later["reservation_id"], "date": later["date"],
                                                       "time": later["time"],
                                                       "party_size": 1 if later["party_size"] > 1 else 2})],
        "cancel_reservation": [("cancel_reservation", {"reservation_id": later["reservation_id"]})],
        "set_reservation_note": [("set_reservation_note",
                                  {"reservation_id": later["reservation_id"], "note": other_note})],
        "place_order": [("place_order", order)],
        "cancel_order": [("cancel_order", {"order_id": placed["order_id"]})],
        "redeem_loyalty_points": [("place_order", order),
                                  ("redeem_loyalty_points",
                                   {"order_id": next_id(db["orders"], "ORD-", 5), "points": 100})],
    }
