"""Known-good calls for every tool of the travel domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import date, timedelta

from lab.synth.domains import travel_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    today = travel_data.TODAY
    c = db["customers"]["CUS-1001"]
    hotel = db["hotels"]["HTL-101"]
    room = hotel["room_types"][0]["room_type"]
    check_in, check_out = (today + timedelta(days=100)).isoformat(), (today + timedelta(days=103)).isoformat()
    stay = first(db["stays"].values(), lambda s: s["status"] == "booked" and s["insurance"] == "none"
                 and s["check_in"] > today.isoformat() and s["points_redeemed"] == 0)
    roomy = first(db["stays"].values(), lambda s: s["status"] == "booked" and s["check_in"] > today.isoformat()
                  and len(s["travellers"]) < travel_data.ROOM_CAPACITY[s["room_type"]])
    payer = db["customers"][stay["customer_id"]]
    points = min(payer["loyalty_points"], int(stay["room_price"] * 50)) // 100 * 100
    moved_in = (date.fromisoformat(stay["check_in"]) + timedelta(days=60)).isoformat()
    moved_out = (date.fromisoformat(stay["check_out"]) + timedelta(days=60)).isoformat()
    tour = first(db["tours"].values(), lambda t: t["date"] > today.isoformat() and travel_data.seats_left(db, t) >= 3)
    booked = first(db["tour_bookings"].values(), lambda b: b["status"] == "booked"
                   and travel_data.seats_left(db, db["tours"][b["tour_id"]]) >= 1)
    assert points >= 100
    return {
        "find_customer_by_email": [("find_customer_by_email", {"email": c["email"].upper()})],
        "find_customer_by_name_dob": [("find_customer_by_name_dob", {"first_name": c["first_name"],
                                       "last_name": c["last_name"], "date_of_birth": c["date_of_birth"]})],
        "get_customer_details": [("get_customer_details", {"customer_id": c["customer_id"]})],
        "search_hotels": [("search_hotels", {"city": "lakeport"})],
        "check_availability": [("check_availability", {"hotel_id": "HTL-101", "check_in": check_in,
                                                       "check_out": check_out})],
        "search_tours": [("search_tours", {"city": tour["city"]})],
        "get_stay_details": [("get_stay_details", {"stay_id": stay["stay_id"]})],
        "get_tour_booking_details": [("get_tour_booking_details", {"booking_id": booked["booking_id"]})],
        "calculate": [("calculate", {"expression": "3 * 148 * 0.95"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a group rate for 30 rooms."})],
        "book_hotel_stay": [("book_hotel_stay", {"customer_id": c["customer_id"], "hotel_id": "HTL-101",
                                                 "room_type": room, "check_in": check_in, "check_out": check_out,
                                                 "companions": []})],
        "change_stay_dates": [("change_stay_dates", {"stay_id": stay["stay_id"], "check_in": moved_in,
                                                     "check_out": moved_out})],
        "add_stay_guest": [("add_stay_guest", {"stay_id": roomy["stay_id"], "full_name": "Ana  de Souza"})],
        "cancel_stay": [("redeem_loyalty_points", {"stay_id": stay["stay_id"], "points": points}),
                        ("cancel_stay", {"stay_id": stay["stay_id"]})],
        "add_stay_insurance": [("add_stay_insurance", {"stay_id": stay["stay_id"], "plan": "basic"}),
                               ("add_stay_insurance", {"stay_id": stay["stay_id"], "plan": "premium"})],
        "redeem_loyalty_points": [("redeem_loyalty_points", {"stay_id": stay["stay_id"], "points": points})],
        "book_tour": [("book_tour", {"customer_id": c["customer_id"], "tour_id": tour["tour_id"],
                                     "companions": ["Ana de Souza", "Li Wei"]})],
        "add_tour_traveller": [("add_tour_traveller", {"booking_id": booked["booking_id"], "full_name": "Li Wei"})],
        "cancel_tour_booking": [("cancel_tour_booking", {"booking_id": booked["booking_id"]})],
    }
