"""Weather task templates: what a subscriber calls about, and the agent's golden chain for each.

Nine templates: easy single changes (alerts for a town by the other channel, alerts paused for a
holiday, a pending data order cancelled), medium requests found by description (a severity level or
a wind or rain threshold for a town's alerts, alerts for a new town, an order of a past month's data
whose price the subscriber wants to hear, a move to a bigger or smaller plan), two writes in one call
(a free subscriber's upgrade so that a town's alerts can come by text, done in that order; a move of
house: the old town's alerts stopped before the new town's are set up alike, so a one-town plan has
room), and a refusal: alerts paused while a warning is in force for the town, which the policy
forbids though the pause tool would accept it, where the right chain reads the alerts and tells the
subscriber until when the warning holds, and writes nothing. The evolution step adds a read-only
question (a day's forecast, what the station measured last week, the alerts in force in a town, the
balance on the next bill and its day) asked after the request is done.

Each chain identifies the subscriber as the policy demands, by email or by name and phone number,
whichever the scenario's known info gives, and finds locations, subscriptions and orders through the
tools; before pausing or stopping alerts it checks the town's alerts, and before a plan change the
subscriber's details, as the policy asks.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from lab.synth.domains.weather_data import (
    NOW,
    PLAN_LIMIT,
    SEVERITIES,
    SMS_PLANS,
    TODAY,
    cycle_start,
    in_force,
    live_subscriptions,
    warnings_in_force,
)
from lab.synth.tasks import Golden, Scenario, TaskRecipe

UNKNOWN = "You do not know your subscriber id or any subscription, request or location ids."
_CHANNEL = {"email": "email", "sms": "text message"}
_SEVERITY = {"advisory": "every alert, advisories included", "watch": "watches and warnings only",
             "warning": "warnings only"}
_MEASURE = {"wind_kph": ("the forecast wind reaches", "km/h", range(40, 105, 5)),
            "rain_mm": ("the forecast rain for a day reaches", "mm", range(10, 65, 5))}


def _identity(db: dict, subscriber_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    s = db["subscribers"][subscriber_id]
    if rng.random() < 0.5:
        return (f"You are {s['first_name']} {s['last_name']}. Your email is {s['email']}.",
                lambda g: g("find_subscriber_by_email", email=s["email"]))
    return (f"You are {s['first_name']} {s['last_name']}. Your phone number is {s['phone']}.",
            lambda g: g("find_subscriber_by_name_phone", first_name=s["first_name"], last_name=s["last_name"],
                        phone=s["phone"]))


def _city(db: dict, location_id: str) -> str:
    return db["locations"][location_id]["city"]


def _location(g: Golden, city: str) -> str:
    return next(loc["location_id"] for loc in g("search_locations", query=city) if loc["city"] == city)


def _find_subscription(g: Golden, subscriber_id: str, city: str) -> dict:
    """The subscriber's active or paused subscription for the city, as the agent finds it among theirs."""
    found = (g("get_subscription_details", subscription_id=s)
             for s in g("get_subscriber_details", subscriber_id=subscriber_id)["subscription_ids"])
    return next(s for s in found if s["city"] == city and s["status"] != "cancelled")


def _when(stamp: str) -> list[str]:
    """An alert's end as the agent would say it: the day and the clock time, e.g. ['2025-11-12', '23:00']."""
    return [stamp[:10], stamp[11:16]]


def _quiet(db: dict, subscription: dict) -> bool:
    """No warning is in force for the subscription's town, so the policy lets its alerts be paused or stopped."""
    return not warnings_in_force(db, subscription["location_id"], NOW)


def _unchanged_this_cycle(subscriber: dict) -> bool:
    """The plan was not changed in the current billing cycle (the subscriber knows), so it may change now."""
    return subscriber["plan_changed_on"] is None or subscriber["plan_changed_on"] < cycle_start(subscriber).isoformat()


def switch_channel(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    plan = db["subscribers"][subscriber_id]["plan"]
    subscriptions = [s for s in live_subscriptions(db, subscriber_id) if s["channel"] == "sms" or plan in SMS_PLANS]
    if not subscriptions:
        return None
    subscription = rng.choice(subscriptions)
    city, new = _city(db, subscription["location_id"]), "email" if subscription["channel"] == "sms" else "sms"
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_subscription(g, identify(g), city)
        g("change_channel", subscription_id=found["subscription_id"], channel=new)
        return []
    return Scenario(f"Send the subscriber's alerts for {city} by {_CHANNEL[new]} instead.",
                    f"You get your weather alerts for {city} by {_CHANNEL[subscription['channel']]} and want them "
                    f"by {_CHANNEL[new]} from now on.", known, UNKNOWN, chain, "easy")


def pause_alerts(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    subscriptions = [s for s in live_subscriptions(db, subscriber_id) if s["status"] == "active" and _quiet(db, s)]
    if not subscriptions:
        return None
    city = _city(db, rng.choice(subscriptions)["location_id"])
    until = (TODAY + timedelta(days=rng.randint(3, 21))).isoformat()
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_subscription(g, identify(g), city)
        g("list_alerts", location_id=found["location_id"])  # no warning in force: the policy allows the pause
        g("pause_subscription", subscription_id=found["subscription_id"], until=until)
        return []
    return Scenario(f"Pause the subscriber's alerts for {city} until {until}.",
                    f"You are away and want no weather alerts for {city} up to and including {until}; after that "
                    "they should start again.", known, UNKNOWN, chain, "easy")


def cancel_order(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    pending = sorted((r for r in db["data_requests"].values()
                      if r["subscriber_id"] == subscriber_id and r["status"] == "pending"),
                     key=lambda r: r["request_id"])
    if not pending:
        return None
    wanted = rng.choice(pending)
    city = _city(db, wanted["location_id"])
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        ids = g("get_subscriber_details", subscriber_id=identify(g))["data_request_ids"]
        found = next(r for r in (g("get_data_request_details", request_id=i) for i in ids)
                     if (r["city"], r["start_date"], r["end_date"], r["status"])
                     == (city, wanted["start_date"], wanted["end_date"], "pending"))
        g("cancel_data_request", request_id=found["request_id"])
        return []
    return Scenario("Cancel the pending historical data order the subscriber describes.",
                    f"You recently ordered the daily observations for {city} from {wanted['start_date']} to "
                    f"{wanted['end_date']} as a {wanted['format']} file. You no longer need them and want the "
                    "order cancelled.", known, UNKNOWN, chain, "easy")


def tune_alerts(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    subscriptions = live_subscriptions(db, subscriber_id)
    if not subscriptions:
        return None
    subscription = rng.choice(subscriptions)
    city = _city(db, subscription["location_id"])
    known, identify = _identity(db, subscriber_id, rng)
    if rng.random() < 0.5:
        severity = rng.choice([v for v in SEVERITIES if v != subscription["min_severity"]])

        def chain(g: Golden) -> list[str]:
            found = _find_subscription(g, identify(g), city)
            g("set_min_severity", subscription_id=found["subscription_id"], min_severity=severity)
            return []
        return Scenario(f"Set the lowest severity of the subscriber's {city} alerts to {severity}.",
                        f"For your weather alerts for {city} you want {_SEVERITY[severity]}.", known, UNKNOWN, chain,
                        "medium")
    measure = rng.choice(sorted(_MEASURE))
    what, unit, values = _MEASURE[measure]
    value = rng.choice([v for v in values if v != subscription[measure]])

    def chain(g: Golden) -> list[str]:
        found = _find_subscription(g, identify(g), city)
        g("set_threshold", subscription_id=found["subscription_id"], measure=measure, value=value)
        return []
    return Scenario(f"Set the {measure} threshold of the subscriber's {city} alerts to {value}.",
                    f"Besides the usual alerts for {city}, you want an alert whenever {what} {value} {unit}.",
                    known, UNKNOWN, chain, "medium")


def add_location(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    followed = {s["location_id"] for s in live_subscriptions(db, subscriber_id)}
    plan = db["subscribers"][subscriber_id]["plan"]
    if len(followed) >= PLAN_LIMIT[plan]:
        return None  # the subscriber knows their plan has no room for another town
    city = _city(db, rng.choice([loc for loc in sorted(db["locations"]) if loc not in followed]))
    channel = "sms" if plan in SMS_PLANS and rng.random() < 0.5 else "email"
    severity = rng.choice(SEVERITIES)
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        g("subscribe_location", subscriber_id=found, location_id=_location(g, city), channel=channel,
          min_severity=severity)
        return []
    return Scenario(f"Start {severity}-level alerts for {city} by {_CHANNEL[channel]}.",
                    f"You want weather alerts for {city} by {_CHANNEL[channel]}: {_SEVERITY[severity]}.",
                    known, UNKNOWN, chain, "medium")


def order_history(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    city = _city(db, rng.choice(sorted(db["locations"])))
    year, month = rng.choice([(2024, m) for m in range(1, 13)] + [(2025, m) for m in range(1, TODAY.month)])
    first, last = date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    data_format = rng.choice(("csv", "json"))
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        order = g("request_historical_data", subscriber_id=identify(g), location_id=_location(g, city),
                  start_date=first.isoformat(), end_date=last.isoformat(), format=data_format)
        return [str(g("get_data_request_details", request_id=order["request_id"])["price"])]
    return Scenario(f"Order {city}'s observations for {calendar.month_name[month]} {year} and tell the price.",
                    f"You want the daily weather observations for {city} for {calendar.month_name[month]} {year} "
                    f"({first.isoformat()} to {last.isoformat()}) as a {data_format} file, and you want to know "
                    "what the order costs.", known, UNKNOWN, chain, "medium")


def change_plan(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    subscriber = db["subscribers"][subscriber_id]
    if not _unchanged_this_cycle(subscriber):
        return None
    known, identify = _identity(db, subscriber_id, rng)
    emailed = [s for s in live_subscriptions(db, subscriber_id) if s["channel"] == "email"]
    if subscriber["plan"] == "free" and emailed:
        plan, city = rng.choice(SMS_PLANS), _city(db, emailed[0]["location_id"])

        def upgrade(g: Golden) -> list[str]:
            found = identify(g)
            g("get_subscriber_details", subscriber_id=found)  # not changed this cycle: the policy allows it
            g("change_plan", subscriber_id=found, plan=plan)
            texted = _find_subscription(g, found, city)
            g("change_channel", subscription_id=texted["subscription_id"], channel="sms")
            return []
        return Scenario(f"Upgrade the subscriber to {plan}, then send their {city} alerts by text message.",
                        f"You are on the free plan and want the {plan} plan, so that your weather alerts for {city} "
                        "come by text message instead of email; you want both done.", known, UNKNOWN, upgrade, "hard")
    plan = {"plus": "pro", "pro": "plus"}.get(subscriber["plan"])
    if plan is None or len(live_subscriptions(db, subscriber_id)) > PLAN_LIMIT[plan]:
        return None  # the subscriber knows how many towns they follow

    def move(g: Golden) -> list[str]:
        found = identify(g)
        g("get_subscriber_details", subscriber_id=found)  # not changed this cycle: the policy allows it
        g("change_plan", subscriber_id=found, plan=plan)
        return []
    size = "follow more towns" if plan == "pro" else "save money; you follow few enough towns"
    return Scenario(f"Move the subscriber from the {subscriber['plan']} plan to the {plan} plan.",
                    f"You are on the {subscriber['plan']} plan and want to move to the {plan} plan to {size}.",
                    known, UNKNOWN, move, "medium")


def move_alerts(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    subscriptions = [s for s in live_subscriptions(db, subscriber_id) if _quiet(db, s)]
    if not subscriptions:
        return None
    old = rng.choice(subscriptions)
    followed = {s["location_id"] for s in live_subscriptions(db, subscriber_id)}
    old_city = _city(db, old["location_id"])
    new_city = _city(db, rng.choice([loc for loc in sorted(db["locations"]) if loc not in followed]))
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        current = _find_subscription(g, found, old_city)
        g("list_alerts", location_id=current["location_id"])  # no warning in force: it may be stopped
        g("unsubscribe", subscription_id=current["subscription_id"])
        g("subscribe_location", subscriber_id=found, location_id=_location(g, new_city), channel=current["channel"],
          min_severity=current["min_severity"])
        return []
    return Scenario(f"Stop the subscriber's alerts for {old_city} and start the same ones for {new_city}.",
                    f"You are moving from {old_city} to {new_city}. You want your weather alerts for {old_city} "
                    f"stopped for good and the same alerts (same channel, same level) started for {new_city}.",
                    known, UNKNOWN, chain, "hard")


def refused_pause_in_warning(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    subscriptions = [s for s in live_subscriptions(db, subscriber_id) if s["status"] == "active" and not _quiet(db, s)]
    if not subscriptions:
        return None
    city = _city(db, rng.choice(subscriptions)["location_id"])
    until = (TODAY + timedelta(days=rng.randint(3, 14))).isoformat()
    known, identify = _identity(db, subscriber_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_subscription(g, identify(g), city)
        alerts = g("list_alerts", location_id=found["location_id"])  # a warning in force: the policy forbids it
        return _when(max(a["ends_at"] for a in alerts if a["in_force"] and a["severity"] == "warning"))
    return Scenario(f"Refuse to pause the {city} alerts while a warning is in force there (policy) and tell the "
                    "subscriber until when it is in force.",
                    f"You are going away and want your weather alerts for {city} paused until {until}. If the agent "
                    "will not pause them now, ask until when that is the case.", known, UNKNOWN, chain, "hard")


def _follow_up_identity(db: dict, subscriber_id: str) -> tuple[str, Callable[[Golden], str]]:
    email = db["subscribers"][subscriber_id]["email"]
    return f"Your email is {email}.", lambda g: g("find_subscriber_by_email", email=email)


def forecast_question(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    city = _city(db, rng.choice(sorted(db["locations"])))
    day = (TODAY + timedelta(days=rng.randint(1, 6))).isoformat()
    known, identify = _follow_up_identity(db, subscriber_id)

    def chain(g: Golden) -> list[str]:
        identify(g)
        forecast = g("get_forecast", location_id=_location(g, city), date=day)
        return [str(forecast["high_c"]), str(forecast["low_c"])]
    return Scenario(f"Tell the subscriber the forecast high and low for {city} on {day}.",
                    f"ask for the forecast high and low temperature in {city} on {day}.", known, UNKNOWN, chain,
                    "easy")


def observation_question(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    city = _city(db, rng.choice(sorted(db["locations"])))
    day = (TODAY - timedelta(days=rng.randint(1, 7))).isoformat()
    known, identify = _follow_up_identity(db, subscriber_id)

    def chain(g: Golden) -> list[str]:
        identify(g)
        observed = g("get_observations", location_id=_location(g, city), date=day)
        return [str(observed["precip_mm"]), str(observed["high_c"])]
    return Scenario(f"Tell the subscriber how much rain fell in {city} on {day} and how warm it got.",
                    f"ask how much rain {city}'s weather station measured on {day} and what the highest "
                    "temperature was.", known, UNKNOWN, chain, "easy")


def alert_question(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    stormy = sorted({a["location_id"] for a in db["alerts"].values() if in_force(a, NOW)})
    if not stormy:
        return None
    city = _city(db, rng.choice(stormy))
    known, identify = _follow_up_identity(db, subscriber_id)

    def chain(g: Golden) -> list[str]:
        identify(g)
        alerts = [a for a in g("list_alerts", location_id=_location(g, city)) if a["in_force"]]
        return [text for a in alerts for text in (a["severity"], *_when(a["ends_at"]))]
    return Scenario(f"Tell the subscriber which alerts are in force for {city}: their level and end.",
                    f"ask which weather alerts are in force for {city} right now, at what level, and until when.",
                    known, UNKNOWN, chain, "easy")


def balance_question(db: dict, subscriber_id: str, rng: random.Random) -> Scenario | None:
    known, identify = _follow_up_identity(db, subscriber_id)

    def chain(g: Golden) -> list[str]:
        details = g("get_subscriber_details", subscriber_id=identify(g))
        return [str(details["balance"]), details["plan_renews_on"]]
    return Scenario("Tell the subscriber the balance their next bill adds and the day it is billed.",
                    "ask what balance your account now shows for your next bill, and on which day that bill comes.",
                    known, UNKNOWN, chain, "easy")


def _subscribers(db: dict[str, Any]) -> list[str]:
    return sorted(db["subscribers"])


RECIPE = TaskRecipe(
    subjects=_subscribers,
    templates={"switch_channel": switch_channel, "pause_alerts": pause_alerts, "cancel_order": cancel_order,
               "tune_alerts": tune_alerts, "add_location": add_location, "order_history": order_history,
               "change_plan": change_plan, "move_alerts": move_alerts,
               "refused_pause_in_warning": refused_pause_in_warning},
    follow_ups={"forecast_question": forecast_question, "observation_question": observation_question,
                "alert_question": alert_question, "balance_question": balance_question},
)
