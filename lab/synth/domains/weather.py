"""The weather domain: a weather service's subscriber desk, with locations, a week of forecasts and of
observations, severe-weather alerts, subscribers on plans, their alert subscriptions and their orders
of historical observations, with 20 tools.

Why these records and rules: they are what a forecast service's help line handles (what tomorrow
brings, whether a warning is out, alerts for a new town, by text instead of email, only the serious
ones, paused for a holiday, a better plan, last winter's data), and each rule gives a task a way to
go wrong. The tools enforce the plans' limits (how many locations, text messages only on a paid
plan), the forecast and archive windows, the pause window and the proration; two rules are policy
only: alerts for a location may not be paused or cancelled while a warning is in force there (the
tools would do it), and a plan may be changed once per billing cycle (the plan tool would change it
again), so a task can test that the agent follows the policy and not just the tools' errors.

Money is in dollars, rounded to the cent after every operation; a subscriber's balance is what the
current cycle adds to their next bill (negative: a credit). The records, the seeded data and the
alert, plan and price rules are in `lab.synth.domains.weather_data`.
"""

from __future__ import annotations

from datetime import date, timedelta

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id, parse_day
from lab.synth.domains.weather_data import (
    ARCHIVE_START,
    CYCLE_DAYS,
    DATA_DAY_PRICE,
    FORECAST_DAYS,
    MAX_REQUEST_DAYS,
    NOW,
    OBSERVED_DAYS,
    PAUSE_MAX_DAYS,
    PLAN_LIMIT,
    PLAN_PRICE,
    PRO_DATA_PERCENT,
    READY_DAYS,
    SEVERITIES,
    SMS_PLANS,
    TABLES,
    THRESHOLD_RANGE,
    Channel,
    DataFormat,
    DataRequest,
    Measure,
    Plan,
    Severity,
    Subscription,
    cycle_start,
    data_price,
    generate,
    in_force,
    live_subscriptions,
    proration,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()



def _within(text: str, what: str, first: date, last: date) -> date:
    """The day `text`, checked to lie from `first` to `last`."""
    day = parse_day(text, what)
    if not first <= day <= last:
        raise ToolRefused(f"{what} must be from {first.isoformat()} to {last.isoformat()}, got {text}")
    return day


def _digits(text: str) -> str:
    """The ASCII digits of a phone number, without the +1 country code."""
    digits = "".join(c for c in text if c in "0123456789")
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def _live(db: dict, subscription_id: str) -> dict:
    """The subscription, if it is active or paused; a cancelled one cannot change."""
    subscription = lookup(db, "subscriptions", subscription_id, "subscription")
    if subscription["status"] == "cancelled":
        raise ToolRefused(f"subscription {subscription_id} is cancelled; only active or paused ones can change")
    return subscription


def _sms_allowed(subscriber: dict, channel: str) -> None:
    if channel == "sms" and subscriber["plan"] not in SMS_PLANS:
        raise ToolRefused(f"subscriber {subscriber['subscriber_id']} is on the {subscriber['plan']} plan; text "
                          f"message alerts need one of {list(SMS_PLANS)}")


def _with_city(db: dict, record: dict) -> dict:
    return {**record, "city": db["locations"][record["location_id"]]["city"]}


@box.read
def find_subscriber_by_email(db: dict, email: str) -> str:
    """Find a subscriber's id from their email address.

    email: the subscriber's email address, any letter case.
    """
    return id_by_email(db, "subscribers", email, "subscriber")


@box.read
def find_subscriber_by_name_phone(db: dict, first_name: str, last_name: str, phone: str) -> str:
    """Find a subscriber's id from their full name and phone number.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    phone: the phone number on the account, e.g. '+1-555-234-5678' (spaces, dashes and the +1 may be left out).
    """
    name, digits = (first_name.strip().lower(), last_name.strip().lower()), _digits(phone)
    for sid, s in db["subscribers"].items():
        if (s["first_name"].lower(), s["last_name"].lower()) == name and _digits(s["phone"]) == digits:
            return sid
    raise ToolRefused(f"no subscriber named '{first_name} {last_name}' with phone '{phone}'")


@box.read
def get_subscriber_details(db: dict, subscriber_id: str) -> str:
    """A subscriber's contact details, plan, renewal day, first day of the current billing cycle, last plan
    change and balance, with the ids of their alert subscriptions and historical data requests.

    subscriber_id: the subscriber, e.g. 'USR-1001'.
    """
    subscriber = lookup(db, "subscribers", subscriber_id, "subscriber")
    return as_json({**subscriber, "cycle_started_on": cycle_start(subscriber).isoformat(),
                    "subscription_ids": sorted(s for s, sub in db["subscriptions"].items()
                                               if sub["subscriber_id"] == subscriber_id),
                    "data_request_ids": sorted(r for r, req in db["data_requests"].items()
                                               if req["subscriber_id"] == subscriber_id)})


@box.read
def get_subscription_details(db: dict, subscription_id: str) -> str:
    """An alert subscription's location and city, channel, lowest severity alerted, wind and rain thresholds,
    status and the day a pause ends.

    subscription_id: the subscription, e.g. 'SUB-00001'.
    """
    return as_json(_with_city(db, lookup(db, "subscriptions", subscription_id, "subscription")))


@box.read
def get_data_request_details(db: dict, request_id: str) -> str:
    """A historical data request's location and city, first and last day, format, number of days, price,
    status and the day it is ready by.

    request_id: the request, e.g. 'DR-0001'.
    """
    return as_json(_with_city(db, lookup(db, "data_requests", request_id, "data request")))


@box.read
def search_locations(db: dict, query: str) -> str:
    """Locations whose city or weather station name contains the query: location id, city, station,
    elevation and whether it is on the coast.

    query: part of a city or station name, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([loc for loc in db["locations"].values()
                    if text in loc["city"].lower() or text in loc["station_name"].lower()])


@box.read
def get_forecast(db: dict, location_id: str, date: str, *, now: str) -> str:
    """A location's forecast for one day from today to six days ahead: condition, high and low in °C,
    chance of precipitation in %, expected precipitation in mm and wind in km/h.

    location_id: the location, e.g. 'CAL'.
    date: the day, YYYY-MM-DD.
    """
    lookup(db, "locations", location_id, "location")
    today = parse_day(now[:10], "now")
    _within(date, "date", today, today + timedelta(days=FORECAST_DAYS - 1))
    return as_json(db["forecasts"][f"{location_id}-{date}"])


@box.read
def get_observations(db: dict, location_id: str, date: str, *, now: str) -> str:
    """What a location's weather station measured on one of the seven days before today: condition, high
    and low in °C, precipitation in mm and wind in km/h.

    location_id: the location, e.g. 'CAL'.
    date: the day, YYYY-MM-DD; older days are sold as historical data.
    """
    lookup(db, "locations", location_id, "location")
    today = parse_day(now[:10], "now")
    _within(date, "date", today - timedelta(days=OBSERVED_DAYS), today - timedelta(days=1))
    return as_json(db["observations"][f"{location_id}-{date}"])


@box.read
def list_alerts(db: dict, location_id: str, *, now: str) -> str:
    """The severe-weather alerts for a location that have not ended: kind, severity, headline, start and
    end, and whether each is in force now; earliest first.

    location_id: the location, e.g. 'CAL'.
    """
    lookup(db, "locations", location_id, "location")
    found = [{**a, "in_force": in_force(a, now)} for a in db["alerts"].values()
             if a["location_id"] == location_id and a["ends_at"] > now]
    return as_json(sorted(found, key=lambda a: (a["starts_at"], a["alert_id"])))


add_generic_tools(box)


@box.write
def subscribe_location(db: dict, subscriber_id: str, location_id: str, channel: Channel, min_severity: Severity,
                       *, now: str) -> str:
    """Start severe-weather alerts for a location, by email or text message, from a lowest severity on.

    subscriber_id: the subscriber.
    location_id: the location to follow; the subscriber must not follow it already.
    channel: 'email' or 'sms' (text messages need the plus or pro plan).
    min_severity: the lowest severity alerted: 'advisory', 'watch' or 'warning'.
    """
    subscriber = lookup(db, "subscribers", subscriber_id, "subscriber")
    lookup(db, "locations", location_id, "location")
    live = live_subscriptions(db, subscriber_id)
    same = next((s for s in live if s["location_id"] == location_id), None)
    if same is not None:
        raise ToolRefused(f"subscriber {subscriber_id} already follows {location_id} ({same['subscription_id']}, "
                          f"{same['status']})")
    if len(live) >= PLAN_LIMIT[subscriber["plan"]]:
        raise ToolRefused(f"the {subscriber['plan']} plan follows at most {PLAN_LIMIT[subscriber['plan']]} "
                          f"location(s) and subscriber {subscriber_id} follows {len(live)}")
    _sms_allowed(subscriber, channel)
    subscription_id = next_id(db["subscriptions"], "SUB-", 5)
    record = Subscription(subscription_id=subscription_id, subscriber_id=subscriber_id, location_id=location_id,
                          channel=channel, min_severity=min_severity, wind_kph=None, rain_mm=None, status="active",
                          paused_until=None, created_at=now).model_dump(mode="json")
    db["subscriptions"][subscription_id] = record
    return as_json(record)


@box.write
def change_channel(db: dict, subscription_id: str, channel: Channel) -> str:
    """Send a subscription's alerts by email or by text message from now on.

    subscription_id: the active or paused subscription.
    channel: 'email' or 'sms' (text messages need the plus or pro plan); it must differ from the current one.
    """
    subscription = _live(db, subscription_id)
    if subscription["channel"] == channel:
        raise ToolRefused(f"subscription {subscription_id} already alerts by {channel}")
    _sms_allowed(db["subscribers"][subscription["subscriber_id"]], channel)
    subscription["channel"] = channel
    return as_json(subscription)


@box.write
def set_min_severity(db: dict, subscription_id: str, min_severity: Severity) -> str:
    """Set the lowest severity a subscription alerts for: advisories and up, watches and up, or warnings only.

    subscription_id: the active or paused subscription.
    min_severity: 'advisory', 'watch' or 'warning'; it must differ from the current one.
    """
    subscription = _live(db, subscription_id)
    if subscription["min_severity"] == min_severity:
        raise ToolRefused(f"subscription {subscription_id} already alerts from {min_severity} on")
    subscription["min_severity"] = min_severity
    return as_json(subscription)


@box.write
def set_threshold(db: dict, subscription_id: str, measure: Measure, value: int) -> str:
    """Also alert when the location's forecast reaches a wind speed or a day's rainfall, whatever the alerts.

    subscription_id: the active or paused subscription.
    measure: 'wind_kph' (wind in km/h, 20 to 150) or 'rain_mm' (rain in a day in mm, 5 to 200).
    value: the threshold, a whole number in the measure's range, different from the current one.
    """
    subscription = _live(db, subscription_id)
    low, high = THRESHOLD_RANGE[measure]
    if not low <= value <= high:
        raise ToolRefused(f"{measure} must be from {low} to {high}, got {value}")
    if subscription[measure] == value:
        raise ToolRefused(f"subscription {subscription_id} already has {measure} {value}")
    subscription[measure] = value
    return as_json(subscription)


@box.write
def pause_subscription(db: dict, subscription_id: str, until: str, *, now: str) -> str:
    """Stop a subscription's alerts until a day, when they start again by themselves.

    subscription_id: the active subscription.
    until: the last day without alerts, YYYY-MM-DD, from tomorrow to 30 days ahead.
    """
    subscription = lookup(db, "subscriptions", subscription_id, "subscription")
    if subscription["status"] != "active":
        raise ToolRefused(f"subscription {subscription_id} is {subscription['status']}; only active ones can pause")
    today = parse_day(now[:10], "now")
    _within(until, "until", today + timedelta(days=1), today + timedelta(days=PAUSE_MAX_DAYS))
    subscription.update(status="paused", paused_until=until)
    return as_json(subscription)


@box.write
def unsubscribe(db: dict, subscription_id: str) -> str:
    """Stop a subscription's alerts for good; the location no longer counts towards the plan's limit.

    subscription_id: the active or paused subscription.
    """
    subscription = _live(db, subscription_id)
    subscription.update(status="cancelled", paused_until=None)
    return as_json(subscription)


@box.write
def change_plan(db: dict, subscriber_id: str, plan: Plan, *, now: str) -> str:
    """Move a subscriber to another plan at once; the price difference for the days left in the billing
    cycle is added to the balance (an upgrade) or taken off it (a downgrade).

    subscriber_id: the subscriber.
    plan: 'free', 'plus' or 'pro'; it must differ from the current plan, and a smaller plan must allow the
        locations followed (and text messages, if any alert by them).
    """
    subscriber = lookup(db, "subscribers", subscriber_id, "subscriber")
    if subscriber["plan"] == plan:
        raise ToolRefused(f"subscriber {subscriber_id} is already on the {plan} plan")
    live = live_subscriptions(db, subscriber_id)
    if len(live) > PLAN_LIMIT[plan]:
        raise ToolRefused(f"the {plan} plan follows at most {PLAN_LIMIT[plan]} location(s); subscriber "
                          f"{subscriber_id} follows {len(live)}, unsubscribe some first")
    texting = [s["subscription_id"] for s in live if s["channel"] == "sms"]
    if texting and plan not in SMS_PLANS:
        raise ToolRefused(f"the {plan} plan has no text message alerts; move {', '.join(texting)} to email first")
    amount = proration(subscriber["plan"], plan, subscriber["plan_renews_on"], parse_day(now[:10], "now"))
    subscriber.update(plan=plan, plan_changed_on=now[:10], balance=float(round(subscriber["balance"] + amount, 2)))
    return as_json({**subscriber, "proration": amount})


@box.write
def request_historical_data(db: dict, subscriber_id: str, location_id: str, start_date: str, end_date: str,
                            format: DataFormat, *, now: str) -> str:  # noqa: A002
    """Order a location's daily observations for a range of past days as a file, ready in two days; the
    price is added to the subscriber's balance.

    subscriber_id: the subscriber ordering.
    location_id: the location whose station's records are wanted.
    start_date: the first day, YYYY-MM-DD, from 2000-01-01.
    end_date: the last day, YYYY-MM-DD, at most yesterday and at most 366 days after start_date.
    format: 'csv' or 'json'.
    """
    subscriber = lookup(db, "subscribers", subscriber_id, "subscriber")
    lookup(db, "locations", location_id, "location")
    today = parse_day(now[:10], "now")
    first = _within(start_date, "start_date", ARCHIVE_START, today - timedelta(days=1))
    last = _within(end_date, "end_date", first, today - timedelta(days=1))
    days = (last - first).days + 1
    if days > MAX_REQUEST_DAYS:
        raise ToolRefused(f"a request covers at most {MAX_REQUEST_DAYS} days, got {days}")
    request_id = next_id(db["data_requests"], "DR-", 4)
    record = DataRequest(request_id=request_id, subscriber_id=subscriber_id, location_id=location_id,
                         start_date=start_date, end_date=end_date, format=format, days=days,
                         price=data_price(days, subscriber["plan"]), status="pending", requested_at=now,
                         ready_by=(today + timedelta(days=READY_DAYS)).isoformat()).model_dump(mode="json")
    db["data_requests"][request_id] = record
    subscriber["balance"] = float(round(subscriber["balance"] + record["price"], 2))
    return as_json(record)


@box.write
def cancel_data_request(db: dict, request_id: str) -> str:
    """Cancel a historical data request that is still pending; its price is taken off the balance.

    request_id: the pending request.
    """
    request = lookup(db, "data_requests", request_id, "data request")
    if request["status"] != "pending":
        raise ToolRefused(f"data request {request_id} is {request['status']}; only pending ones can be cancelled")
    subscriber = db["subscribers"][request["subscriber_id"]]
    request["status"] = "cancelled"
    subscriber["balance"] = float(round(subscriber["balance"] - request["price"], 2))
    return as_json(request)


_PLANS = "; ".join(f"{plan}: {PLAN_PRICE[plan]:.2f} per cycle, up to {PLAN_LIMIT[plan]} location(s), "
                   f"{'email or text messages' if plan in SMS_PLANS else 'email only'}" for plan in PLAN_PRICE)

POLICY = f"""# Weather service subscriber desk policy

The current time is {NOW} (service time). Treat it as now for every date and time rule below.

## Identity
- Before looking at or changing anything in an account, identify the subscriber: by email address, or
  by full name and phone number. Help only that subscriber, with their own subscriptions and requests.
- Forecasts, observations and alerts are public: once the caller is identified, answer questions about
  any location.

## Changes
- Before any change (subscription, channel, severity, threshold, pause, plan, data request), state
  exactly what you will do, with any price, and get the subscriber's explicit "yes".
- Make one change per tool call; do not make changes the subscriber did not ask for.

## Weather information
- Find locations with search_locations. Forecasts cover today and the next {FORECAST_DAYS - 1} days; observations
  cover the {OBSERVED_DAYS} days before today. Older observations are sold as historical data requests.
- Give numbers as the tools show them: temperatures in °C, precipitation in mm, wind in km/h.

## Alert subscriptions
- Alert severities, lowest first: {", ".join(SEVERITIES)}. A subscription alerts for its lowest severity and
  up, and optionally also when the forecast reaches a wind speed or a day's rainfall (thresholds).
- A subscriber follows each location at most once. Active and paused subscriptions count towards the
  plan's limit; cancelled ones do not.
- A subscription can be paused until a day from tomorrow to {PAUSE_MAX_DAYS} days ahead; it restarts by itself.
- While a warning (the top severity) is in force for a location, do not pause or cancel a subscriber's
  alerts for it, even though the system would accept it: check list_alerts first, refuse, and tell
  the subscriber until when the warning is in force. Upcoming warnings and lower alerts do not block this.

## Plans
- Plans, billed per {CYCLE_DAYS}-day cycle: {_PLANS}.
- A plan change takes effect at once. The price difference for the days left until the renewal day is
  added to the balance for an upgrade and taken off it for a downgrade. A smaller plan must allow the
  locations followed and the channels used; unsubscribe or move alerts to email first.
- A plan can be changed only once per billing cycle. Check plan_changed_on against cycle_started_on in
  the subscriber's details; if the plan was already changed in the current cycle, refuse another change
  until the renewal day, even though the system would accept it.

## Historical data
- A request covers one location's daily observations from {ARCHIVE_START.isoformat()} to yesterday, at most
  {MAX_REQUEST_DAYS} days per request, as csv or json, ready in {READY_DAYS} days. It costs {DATA_DAY_PRICE:.2f} per day
  ({PRO_DATA_PERCENT}% off on the pro plan), added to the balance.
- A request can be cancelled, for its price back, only while it is pending.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="weather", tables=TABLES, generate=generate, default_size=40, tools=box.tools,
                policy=POLICY, now=NOW)
