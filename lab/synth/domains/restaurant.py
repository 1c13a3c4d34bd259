"""The restaurant domain: restaurants, menus, tables, guests, reservations and takeaway orders, 18 tools.

Why these records and rules: a booking line handles tables (free for two hours per booking, seated
within opening hours), takeaway orders from the menu, and a loyalty scheme, and every rule gives a
task a way to go wrong. The tools enforce availability, opening hours and the two-hour cancellation
window; the party-size limit for phone bookings is policy only (the tables would seat the party), so
a task can test that the agent follows the policy and hands large parties to the events team.

Times are "HH:MM" on the half hour and dates ISO days; a booking holds its table from its time for
`SITTING_MINUTES`. Loyalty points buy discounts on placed orders: 100 points for $5.00. The records
and the seeded data are in `lab.synth.domains.restaurant_data`.
"""

from __future__ import annotations

import re
from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id
from lab.synth.domains.restaurant_data import (
    BOOKING_DAYS,
    CANCEL_HOURS,
    NOW,
    PHONE_PARTY_LIMIT,
    POINTS_PER_DOLLAR,
    SITTING_MINUTES,
    TABLES,
    Note,
    Order,
    OrderLine,
    Reservation,
    free_tables,
    generate,
    minutes,
    seating_times,
)
from lab.synth.generic import add_generic_tools

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CLOCK = re.compile(r"[0-9]{2}:[0-9]{2}")

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()


def _slot(db: dict, restaurant_id: str, day: str, time: str, party_size: int, now: str) -> dict:
    """The restaurant, once the booking slot is checked: a future half hour within the booking window
    and opening hours, and a party that some table of the restaurant seats."""
    restaurant = lookup(db, "restaurants", restaurant_id, "restaurant")
    try:
        when = date.fromisoformat(day) if _DAY.fullmatch(day) else None  # fromisoformat also takes 20250615
    except ValueError:
        when = None
    if when is None:
        raise ToolRefused(f"date must be a day as YYYY-MM-DD, got {day!r}")
    if time not in seating_times(restaurant):
        raise ToolRefused(f"{restaurant['name']} seats bookings on the half hour from {restaurant['opens']} to "
                          f"{seating_times(restaurant)[-1]}, got {time!r}")
    if f"{day}T{time}" <= now or (when - date.fromisoformat(now[:10])).days > BOOKING_DAYS:
        raise ToolRefused(f"bookings must be after {now} and within {BOOKING_DAYS} days, got {day} {time}")
    largest = max(t["seats"] for t in db["tables"].values() if t["restaurant_id"] == restaurant_id)
    if not 1 <= party_size <= largest:
        raise ToolRefused(f"party_size must be from 1 to {largest} at {restaurant['name']}, got {party_size}")
    return restaurant


def _confirmed(db: dict, reservation_id: str) -> dict:
    reservation = lookup(db, "reservations", reservation_id, "reservation")
    if reservation["status"] != "confirmed":
        raise ToolRefused(f"reservation {reservation_id} is {reservation['status']}; only confirmed ones can change")
    return reservation


@box.read
def find_guest_by_phone(db: dict, phone: str) -> str:
    """Find a guest's id from their phone number.

    phone: the number as the guest gives it, e.g. '+1-555-234-5678'.
    """
    digits = "".join(ch for ch in phone if ch.isdigit())
    for guest_id, guest in db["guests"].items():
        if "".join(ch for ch in guest["phone"] if ch.isdigit()) == digits:
            return guest_id
    raise ToolRefused(f"no guest with phone '{phone}'")


@box.read
def find_guest_by_email(db: dict, email: str) -> str:
    """Find a guest's id from their email address.

    email: the guest's email address, any letter case.
    """
    return id_by_email(db, "guests", email, "guest")


@box.read
def get_guest_details(db: dict, guest_id: str) -> str:
    """A guest's contact details and loyalty points, with the ids of their reservations and orders.

    guest_id: the guest, e.g. 'GST-1001'.
    """
    guest = lookup(db, "guests", guest_id, "guest")
    return as_json({**guest,
                    "reservation_ids": sorted(r for r, res in db["reservations"].items()
                                              if res["guest_id"] == guest_id),
                    "order_ids": sorted(o for o, order in db["orders"].items() if order["guest_id"] == guest_id)})


@box.read
def search_restaurants(db: dict, query: str) -> str:
    """Restaurants whose name, cuisine or city contains the query: id, name, cuisine and city.

    query: part of a name, a cuisine or a city, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([{key: r[key] for key in ("restaurant_id", "name", "cuisine", "city")}
                    for r in db["restaurants"].values()
                    if text in r["name"].lower() or text in r["cuisine"] or text in r["city"].lower()])


@box.read
def get_restaurant_details(db: dict, restaurant_id: str) -> str:
    """A restaurant's address, phone, opening hours and the times bookings may start.

    restaurant_id: the restaurant, e.g. 'RST-01'.
    """
    restaurant = lookup(db, "restaurants", restaurant_id, "restaurant")
    return as_json({**restaurant, "seating_times": seating_times(restaurant)})


@box.read
def get_menu(db: dict, restaurant_id: str) -> str:
    """A restaurant's menu: each item's id, name, category, price, availability and dietary tags.

    restaurant_id: the restaurant whose menu to show.
    """
    lookup(db, "restaurants", restaurant_id, "restaurant")
    return as_json([m for m in db["menu_items"].values() if m["restaurant_id"] == restaurant_id])


@box.read
def check_table_availability(db: dict, restaurant_id: str, date: str, time: str, party_size: int, *, now: str) -> str:
    """The tables free for a party at a date and time, smallest first (empty when fully booked).

    restaurant_id: the restaurant.
    date: the day, YYYY-MM-DD.
    time: the seating time, HH:MM on the half hour.
    party_size: number of guests.
    """
    _slot(db, restaurant_id, date, time, party_size, now)
    return as_json([{key: t[key] for key in ("table_id", "seats", "area")}
                    for t in free_tables(db, restaurant_id, date, time, party_size)])


@box.read
def get_reservation_details(db: dict, reservation_id: str) -> str:
    """A reservation's restaurant, table, date, time, party size, status and note.

    reservation_id: the reservation, e.g. 'RES-00001'.
    """
    return as_json(lookup(db, "reservations", reservation_id, "reservation"))


@box.read
def get_order_details(db: dict, order_id: str) -> str:
    """A takeaway order's items, prices, discount, total, pickup time and status.

    order_id: the order, e.g. 'ORD-00001'.
    """
    return as_json(lookup(db, "orders", order_id, "order"))


add_generic_tools(box)


@box.write
def create_reservation(db: dict, guest_id: str, restaurant_id: str, date: str, time: str, party_size: int,
                       *, now: str) -> str:
    """Book the smallest free table that seats the party.

    guest_id: the guest the booking is for.
    restaurant_id: the restaurant.
    date: the day, YYYY-MM-DD.
    time: the seating time, HH:MM on the half hour.
    party_size: number of guests.
    """
    lookup(db, "guests", guest_id, "guest")
    restaurant = _slot(db, restaurant_id, date, time, party_size, now)
    free = free_tables(db, restaurant_id, date, time, party_size)
    if not free:
        raise ToolRefused(f"{restaurant['name']} has no free table for {party_size} on {date} at {time}")
    reservation_id = next_id(db["reservations"], "RES-", 5)
    reservation = Reservation(reservation_id=reservation_id, restaurant_id=restaurant_id, guest_id=guest_id,
                              table_id=free[0]["table_id"], date=date, time=time, party_size=party_size,
                              status="confirmed", note=None, created_at=now).model_dump(mode="json")
    db["reservations"][reservation_id] = reservation
    return as_json(reservation)


@box.write
def modify_reservation(db: dict, reservation_id: str, date: str, time: str, party_size: int, *, now: str) -> str:
    """Move a confirmed reservation or change its party size; the table is kept if it still fits and is free.

    reservation_id: the confirmed reservation.
    date: the new (or same) day, YYYY-MM-DD.
    time: the new (or same) seating time, HH:MM on the half hour.
    party_size: the new (or same) number of guests.
    """
    reservation = _confirmed(db, reservation_id)
    restaurant = _slot(db, reservation["restaurant_id"], date, time, party_size, now)
    free = free_tables(db, reservation["restaurant_id"], date, time, party_size, ignore=reservation_id)
    if not free:
        raise ToolRefused(f"{restaurant['name']} has no free table for {party_size} on {date} at {time}")
    keep = any(t["table_id"] == reservation["table_id"] for t in free)
    reservation.update(date=date, time=time, party_size=party_size,
                       table_id=reservation["table_id"] if keep else free[0]["table_id"])
    return as_json(reservation)


@box.write
def cancel_reservation(db: dict, reservation_id: str, *, now: str) -> str:
    """Cancel a confirmed reservation, at least two hours before it starts.

    reservation_id: the reservation to cancel.
    """
    reservation = _confirmed(db, reservation_id)
    days_ahead = (date.fromisoformat(reservation["date"]) - date.fromisoformat(now[:10])).days
    starts = minutes(reservation["time"]) + 24 * 60 * days_ahead
    if starts - minutes(now[11:16]) < CANCEL_HOURS * 60:
        raise ToolRefused(f"reservation {reservation_id} starts at {reservation['date']} {reservation['time']}; "
                          f"cancelling needs at least {CANCEL_HOURS} hours' notice")
    reservation["status"] = "cancelled"
    return as_json(reservation)


@box.write
def set_reservation_note(db: dict, reservation_id: str, note: Note) -> str:
    """Attach a note for the staff to a confirmed reservation, replacing any earlier note.

    reservation_id: the confirmed reservation.
    note: 'birthday', 'anniversary', 'high_chair', 'wheelchair_access', 'window_seat' or 'quiet_table'.
    """
    reservation = _confirmed(db, reservation_id)
    reservation["note"] = note
    return as_json(reservation)


@box.write
def place_order(db: dict, guest_id: str, restaurant_id: str, item_ids: list[str], pickup_time: str, *, now: str) -> str:
    """Place a takeaway order for pickup later today; list an item id once per portion.

    guest_id: the guest ordering.
    restaurant_id: the restaurant cooking it.
    item_ids: menu item ids of that restaurant, repeated for more than one portion.
    pickup_time: HH:MM today, at least 30 minutes from now and before closing.
    """
    lookup(db, "guests", guest_id, "guest")
    restaurant = lookup(db, "restaurants", restaurant_id, "restaurant")
    if not item_ids:
        raise ToolRefused("item_ids must name at least one menu item")
    for item_id in item_ids:
        item = lookup(db, "menu_items", item_id, "menu item")
        if item["restaurant_id"] != restaurant_id or not item["available"]:
            raise ToolRefused(f"{item_id} ({item['name']}) is not available at {restaurant['name']}")
    if not _CLOCK.fullmatch(pickup_time) or not (max(minutes(now[11:16]) + 30, minutes(restaurant["opens"]))
                              <= minutes(pickup_time) <= minutes(restaurant["closes"])):
        raise ToolRefused(f"pickup_time must be HH:MM today from 30 minutes after {now[11:16]} and within opening "
                          f"hours {restaurant['opens']}-{restaurant['closes']}, got {pickup_time!r}")
    lines = [OrderLine(item_id=i, name=db["menu_items"][i]["name"], quantity=item_ids.count(i),
                       unit_price=db["menu_items"][i]["price"]) for i in sorted(set(item_ids))]
    subtotal = round(sum(line.quantity * line.unit_price for line in lines), 2)
    order_id = next_id(db["orders"], "ORD-", 5)
    order = Order(order_id=order_id, restaurant_id=restaurant_id, guest_id=guest_id, items=lines, subtotal=subtotal,
                  discount=0.0, total=subtotal, points_redeemed=0, pickup_date=now[:10], pickup_time=pickup_time,
                  status="placed", placed_at=now).model_dump(mode="json")
    db["orders"][order_id] = order
    return as_json(order)


@box.write
def cancel_order(db: dict, order_id: str) -> str:
    """Cancel a takeaway order the kitchen has not started; redeemed points go back to the guest.

    order_id: the placed order.
    """
    order = lookup(db, "orders", order_id, "order")
    if order["status"] != "placed":
        raise ToolRefused(f"order {order_id} is {order['status']}; only placed orders can be cancelled")
    db["guests"][order["guest_id"]]["loyalty_points"] += order["points_redeemed"]
    order["status"] = "cancelled"
    return as_json(order)


@box.write
def redeem_loyalty_points(db: dict, order_id: str, points: int) -> str:
    """Spend the guest's loyalty points on a placed order: every 100 points take $5.00 off its total.

    order_id: the placed order.
    points: a multiple of 100, at most the guest's points and worth at most the order's total.
    """
    order = lookup(db, "orders", order_id, "order")
    guest = db["guests"][order["guest_id"]]
    if order["status"] != "placed":
        raise ToolRefused(f"order {order_id} is {order['status']}; points apply to placed orders only")
    discount = points / POINTS_PER_DOLLAR
    if points <= 0 or points % 100 or points > guest["loyalty_points"] or discount > order["total"]:
        raise ToolRefused(f"points must be a positive multiple of 100, at most the guest's {guest['loyalty_points']} "
                          f"and worth at most the total {order['total']}, got {points}")
    guest["loyalty_points"] -= points
    order["points_redeemed"] += points
    order["discount"] = round(order["discount"] + discount, 2)
    order["total"] = round(order["subtotal"] - order["discount"], 2)
    return as_json(order)


POLICY = f"""# Restaurant booking line policy

The current time is {NOW} (local time). Treat it as now for every time rule below.

## Identity
- Before looking at or changing a guest's bookings or orders, identify the guest by phone number or
  email address. Help only that guest, with their own bookings and orders.

## Changes
- Before any change (booking, change, cancellation, note, order, points), state exactly what you will
  do and get the guest's explicit "yes". Do not make changes the guest did not ask for.

## Bookings
- Bookings start on the half hour, after now and at most {BOOKING_DAYS} days ahead, from opening time until
  {SITTING_MINUTES // 60} hours before closing; a booking holds its table for {SITTING_MINUTES // 60} hours.
  Check availability first; the system books the smallest free table that seats the party.
- Parties of more than {PHONE_PARTY_LIMIT} cannot be booked on this line, even if a table would seat them:
  do not book or change a booking to such a size; transfer the guest to a human agent (the events team).
- A booking can be cancelled up to {CANCEL_HOURS} hours before it starts, not later.
- Notes are one of: birthday, anniversary, high_chair, wheelchair_access, window_seat, quiet_table.

## Takeaway orders
- Orders are for pickup today, at least 30 minutes from now and within opening hours, from items
  that are available. List an item id once per portion.
- An order can be cancelled only while its status is placed (before the kitchen starts it).
- Loyalty points: every 100 points take $5.00 off a placed order; redeem multiples of 100, at most
  the guest's points and at most the order's total.
"""

DOMAIN = Domain(name="restaurant", tables=TABLES, generate=generate, default_size=60, tools=box.tools,
                policy=POLICY, now=NOW)
