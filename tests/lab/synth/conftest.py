"""Shared builds and known-good tool calls for the synthetic domains' tests.

`valid_calls(name, db)` gives, for every tool of a domain, a list of calls whose last one is that
tool's call and whose earlier ones set it up (a card must be blocked before it is replaced), each
chosen from the generated records so that it succeeds.
"""

from __future__ import annotations

import functools
import json
from datetime import date, timedelta
from typing import Any

import pytest

from lab.synth import build_domain
from lab.synth.domain import next_id
from lab.synth.domains import bank_data, ecommerce_data, railway_data, restaurant, restaurant_data

SEED = 0
N_TASKS = 30
Calls = dict[str, list[tuple[str, dict[str, Any]]]]


@functools.cache
def built(name: str, seed: int = SEED, n_tasks: int = N_TASKS) -> tuple[Any, dict, list[dict], dict[str, int]]:
    """build_domain once per process; callers must not mutate what it returns."""
    return build_domain(name, n_tasks, seed)


def _first(rows: Any, test: Any) -> dict:
    return next(row for row in sorted(rows, key=lambda r: next(iter(r.values()))) if test(row))


def bank_calls(db: dict) -> Calls:
    today = bank_data.TODAY.isoformat()
    accounts = db["accounts"]
    pair = _first(db["customers"].values(), lambda c: sum(
        a["customer_id"] == c["customer_id"] and a["status"] == "open" and a["balance"] > 10
        for a in accounts.values()) == 2)
    checking, savings = sorted(a for a, acc in accounts.items() if acc["customer_id"] == pair["customer_id"])
    card = _first(db["cards"].values(), lambda c: c["status"] == "active" and c["daily_limit"] != 5000)
    fraud = _first(db["cards"].values(), lambda c: c["block_reason"] == "suspected_fraud")
    purchase = _first(db["transactions"].values(), lambda t: t["card_id"] and t["status"] == "posted" and (
        bank_data.TODAY - date.fromisoformat(t["posted_on"])).days <= bank_data.DISPUTE_DAYS)
    transfer = _first(db["transfers"].values(), lambda t: t["status"] == "scheduled")
    loan = _first(db["loans"].values(), lambda n: any(
        a["customer_id"] == n["customer_id"] and a["status"] == "open" and a["balance"] >= 1 for a in accounts.values()))
    payer = _first(accounts.values(), lambda a: a["customer_id"] == loan["customer_id"] and a["status"] == "open"
                   and a["balance"] >= 1)
    c = db["customers"]["CUS-1001"]
    assert purchase["posted_on"] <= today
    return {
        "find_customer_by_email": [("find_customer_by_email", {"email": c["email"].upper()})],
        "find_customer_by_name_dob": [("find_customer_by_name_dob", {"first_name": c["first_name"],
                                       "last_name": c["last_name"], "date_of_birth": c["date_of_birth"]})],
        "get_customer_details": [("get_customer_details", {"customer_id": c["customer_id"]})],
        "get_account_details": [("get_account_details", {"account_id": checking})],
        "list_account_transactions": [("list_account_transactions", {"account_id": checking})],
        "get_card_details": [("get_card_details", {"card_id": card["card_id"]})],
        "get_loan_details": [("get_loan_details", {"loan_id": loan["loan_id"]})],
        "get_transfer_details": [("get_transfer_details", {"transfer_id": transfer["transfer_id"]})],
        "calculate": [("calculate", {"expression": "(1200 - 350.5) / 3"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a mortgage quote."})],
        "transfer_funds": [("transfer_funds", {"from_account_id": checking, "to_account_id": savings, "amount": 10})],
        "cancel_scheduled_transfer": [("cancel_scheduled_transfer", {"transfer_id": transfer["transfer_id"]})],
        "block_card": [("block_card", {"card_id": card["card_id"], "reason": "stolen"})],
        "unblock_card": [("unblock_card", {"card_id": fraud["card_id"]})],
        "replace_card": [("block_card", {"card_id": card["card_id"], "reason": "damaged"}),
                         ("replace_card", {"card_id": card["card_id"]})],
        "set_card_daily_limit": [("set_card_daily_limit", {"card_id": card["card_id"], "daily_limit": 5000})],
        "dispute_transaction": [("dispute_transaction", {"transaction_id": purchase["transaction_id"],
                                                         "reason": "unrecognized"})],
        "make_loan_payment": [("make_loan_payment", {"loan_id": loan["loan_id"], "from_account_id": payer["account_id"],
                                                     "amount": 1.0})],
        "update_customer_address": [("update_customer_address", {"customer_id": c["customer_id"],
                                     "street": "1 Harbour Walk", "city": "Calder", "zip": "30111"})],
    }


def restaurant_calls(db: dict) -> Calls:
    tomorrow = (restaurant_data.TODAY + timedelta(days=1)).isoformat()
    place = db["restaurants"]["RST-01"]
    guest = _first(db["guests"].values(), lambda g: g["loyalty_points"] >= 100)
    later = _first(db["reservations"].values(),
                   lambda r: r["status"] == "confirmed" and r["date"] > restaurant_data.NOW[:10])
    placed = _first(db["orders"].values(), lambda o: o["status"] == "placed")
    dish = _first(db["menu_items"].values(), lambda m: m["restaurant_id"] == "RST-01" and m["available"])
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
                                                       "time": later["time"], "party_size": 1 if later["party_size"] > 1 else 2})],
        "cancel_reservation": [("cancel_reservation", {"reservation_id": later["reservation_id"]})],
        "set_reservation_note": [("set_reservation_note", {"reservation_id": later["reservation_id"], "note": other_note})],
        "place_order": [("place_order", order)],
        "cancel_order": [("cancel_order", {"order_id": placed["order_id"]})],
        "redeem_loyalty_points": [("place_order", order),
                                  ("redeem_loyalty_points", {"order_id": next_id(db["orders"], "ORD-", 5), "points": 100})],
    }


def ecommerce_calls(db: dict) -> Calls:
    today = ecommerce_data.TODAY
    c = db["customers"]["CUS-2001"]
    card = _first(db["payment_methods"].values(), lambda m: m["customer_id"] == c["customer_id"] and m["kind"] == "card")
    stocked = _first(db["variants"].values(), lambda v: v["stock"] >= 2)
    open_orders = [o for o in db["orders"].values() if o["status"] in ("pending", "processing")
                   and db["payment_methods"][o["payment_method_id"]]["kind"] != "gift_card"]
    rushable = _first(open_orders, lambda o: o["shipping_speed"] == "standard")
    couponable = _first(open_orders, lambda o: o["coupon_code"] is None
                        and o["customer_id"] not in db["coupons"]["WELCOME15"]["used_by"])

    def swaps(order: dict) -> list[tuple[str, str]]:
        held = {line["variant_id"] for line in order["items"]}
        return [(line["variant_id"], v["variant_id"]) for line in order["items"] for v in db["variants"].values()
                if v["product_id"] == db["variants"][line["variant_id"]]["product_id"] and v["variant_id"] not in held
                and v["stock"] >= line["quantity"]]
    swappable = _first(open_orders, swaps)
    old, new = swaps(swappable)[0]
    delivered = _first(db["orders"].values(), lambda o: o["status"] == "delivered"
                       and (today - date.fromisoformat(o["delivered_on"])).days <= ecommerce_data.RETURN_DAYS
                       and not any(r["order_id"] == o["order_id"] for r in db["returns"].values()))
    shipment, refund = _first(db["shipments"].values(), bool), _first(db["returns"].values(), bool)
    return {
        "find_customer_by_email": [("find_customer_by_email", {"email": c["email"].upper()})],
        "find_customer_by_name_zip": [("find_customer_by_name_zip", {"first_name": c["first_name"],
                                       "last_name": c["last_name"], "zip": c["address"]["zip"]})],
        "get_customer_details": [("get_customer_details", {"customer_id": c["customer_id"]})],
        "list_payment_methods": [("list_payment_methods", {"customer_id": c["customer_id"]})],
        "search_products": [("search_products", {"query": "SHOES"})],
        "get_product_details": [("get_product_details", {"product_id": stocked["product_id"]})],
        "get_order_details": [("get_order_details", {"order_id": delivered["order_id"]})],
        "get_shipment_details": [("get_shipment_details", {"shipment_id": shipment["shipment_id"]})],
        "get_return_details": [("get_return_details", {"return_id": refund["return_id"]})],
        "get_coupon_details": [("get_coupon_details", {"code": "summer10"})],
        "calculate": [("calculate", {"expression": "2 * 54.5 - 10"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a bulk order quote."})],
        "place_order": [("place_order", {"customer_id": c["customer_id"], "variant_ids": [stocked["variant_id"]] * 2,
                                         "payment_method_id": card["method_id"]})],
        "cancel_order": [("cancel_order", {"order_id": rushable["order_id"], "reason": "found_cheaper"})],
        "modify_order_address": [("modify_order_address", {"order_id": rushable["order_id"], "street": "1 Harbour Walk",
                                                           "city": "Calder", "zip": "30111"})],
        "change_order_item": [("change_order_item", {"order_id": swappable["order_id"], "variant_id": old,
                                                     "new_variant_id": new})],
        "apply_coupon": [("apply_coupon", {"order_id": couponable["order_id"], "code": "welcome15"})],
        "set_shipping_speed": [("set_shipping_speed", {"order_id": rushable["order_id"], "speed": "express"})],
        "request_return": [("request_return", {"order_id": delivered["order_id"],
                                               "variant_id": delivered["items"][0]["variant_id"], "quantity": 1,
                                               "reason": "defective"})],
    }


def railway_calls(db: dict) -> Calls:
    tomorrow = (railway_data.TODAY + timedelta(days=1)).isoformat()
    p = db["passengers"]["PAX-1001"]
    train = db["trains"]["TRN-101"]
    origin, destination = train["stops"][0]["station_id"], train["stops"][1]["station_id"]
    booked = _first(db["tickets"].values(), lambda t: t["status"] == "booked" and t["fare_class"] == "standard"
                    and f"{t['date']}T{t['departs']}" > railway_data.NOW)
    later = (date.fromisoformat(booked["date"]) + timedelta(days=1)).isoformat()
    no_card = _first(db["passengers"].values(), lambda q: railway_data.railcard_percent(q, railway_data.TODAY.isoformat()) == 0)
    no_pass = _first(db["passengers"].values(), lambda q: not any(
        s["passenger_id"] == q["passenger_id"] for s in db["season_passes"].values()))
    future = _first(db["season_passes"].values(), lambda s: s["status"] == "active"
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
                                         "origin_id": origin, "destination_id": destination, "fare_class": "standard"})],
        "cancel_ticket": [("cancel_ticket", {"ticket_id": booked["ticket_id"]})],
        "change_ticket": [("change_ticket", {"ticket_id": booked["ticket_id"], "train_id": booked["train_id"],
                                             "date": later})],
        "change_fare_class": [("change_fare_class", {"ticket_id": booked["ticket_id"], "fare_class": "first"})],
        "add_railcard": [("add_railcard", {"passenger_id": no_card["passenger_id"], "railcard": "youth"})],
        "buy_season_pass": [("buy_season_pass", {"passenger_id": no_pass["passenger_id"], "origin_id": "ASH",
                                                 "destination_id": "CAL", "duration": "weekly", "starts_on": tomorrow})],
        "cancel_season_pass": [("cancel_season_pass", {"pass_id": future["pass_id"]})],
    }


@pytest.fixture
def valid_calls() -> dict[str, Any]:
    """Domain name -> the function giving its known-good calls for a database."""
    return {"bank": bank_calls, "restaurant": restaurant_calls, "ecommerce": ecommerce_calls,
            "railway": railway_calls}


@pytest.fixture
def build() -> Any:
    """`built(name, seed, n_tasks)`, cached across tests."""
    return built
