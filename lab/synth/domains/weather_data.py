"""The weather domain's records and seeded data: locations with their stations, a week of forecasts and a
week of observations, severe-weather alerts, subscribers, their alert subscriptions and their orders of
historical observations.

Why apart from the tools (`lab.synth.domains.weather`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the alert scale, the plan terms, the
proration and the data price (`alert_levels`, `proration`, `data_price`, `in_force`, ...) live here too
because the generator issues its alerts and bills its subscribers by them, as the tools do.

Twelve locations, one weather station each. Every location has a forecast for today and the six days
after and an observation for each of the seven days before; storms, rain, snow, frost and fog are
dropped into that fortnight at random, and a third of the locations have a warning in force now. An
alert is issued for each forecast day whose numbers reach the alert scale, in force from the evening
before until some time the day after. Each subscriber is on a plan (free, plus or pro, billed per
30-day cycle; some changed plan during the current one) and follows as many locations as the plan
allows (a few alerts paused, a few cancelled); almost half have ordered historical data, a few of
those orders still pending. A subscriber's balance is what the current cycle has added to their next
bill. Ids count up per table, except forecasts and observations, which are named `<location>-<day>`.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng

NOW = "2025-11-12T07:45:00"
TODAY = date(2025, 11, 12)
FORECAST_DAYS = 7  # today and the six days after
OBSERVED_DAYS = 7  # the seven days before today
CYCLE_DAYS = 30
PLAN_PRICE = {"free": 0.0, "plus": 4.99, "pro": 9.99}
#: The most locations a plan follows at once (active and paused subscriptions count).
PLAN_LIMIT = {"free": 1, "plus": 3, "pro": 10}
SMS_PLANS = ("plus", "pro")
DATA_DAY_PRICE = 0.15  # dollars per location-day of historical observations
PRO_DATA_PERCENT = 50  # the pro plan's discount on historical data
ARCHIVE_START = date(2000, 1, 1)
MAX_REQUEST_DAYS = 366
READY_DAYS = 2
PAUSE_MAX_DAYS = 30
THRESHOLD_RANGE = {"wind_kph": (20, 150), "rain_mm": (5, 200)}
SEVERITIES = ("advisory", "watch", "warning")

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Stamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Celsius = Annotated[float, Field(ge=-40, le=45)]
Millimetres = Annotated[float, Field(ge=0)]
Condition = Literal["sunny", "partly cloudy", "cloudy", "fog", "rain", "heavy rain", "snow", "windy"]
AlertKind = Literal["wind", "heavy_rain", "snow", "frost", "fog"]
Severity = Literal["advisory", "watch", "warning"]
Plan = Literal["free", "plus", "pro"]
Channel = Literal["email", "sms"]
Measure = Literal["wind_kph", "rain_mm"]
DataFormat = Literal["csv", "json"]


class Location(Record):
    location_id: str
    city: str
    station_name: str
    elevation_m: Annotated[int, Field(ge=0)]
    coastal: bool


class Forecast(Record):
    forecast_id: str
    location_id: str
    date: Day
    condition: Condition
    high_c: Celsius
    low_c: Celsius
    precip_chance: Annotated[int, Field(ge=0, le=100)]
    precip_mm: Millimetres
    wind_kph: Annotated[int, Field(ge=0)]


class Observation(Record):
    observation_id: str
    location_id: str
    date: Day
    condition: Condition
    high_c: Celsius
    low_c: Celsius
    precip_mm: Millimetres
    wind_kph: Annotated[int, Field(ge=0)]


class Alert(Record):
    alert_id: str
    location_id: str
    kind: AlertKind
    severity: Severity
    headline: str
    starts_at: Stamp
    ends_at: Stamp


class Subscriber(Record):
    subscriber_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    plan: Plan
    plan_renews_on: Day
    plan_changed_on: Day | None
    balance: float
    joined_on: Day


class Subscription(Record):
    subscription_id: str
    subscriber_id: str
    location_id: str
    channel: Channel
    min_severity: Severity
    wind_kph: Annotated[int, Field(ge=1)] | None
    rain_mm: Annotated[int, Field(ge=1)] | None
    status: Literal["active", "paused", "cancelled"]
    paused_until: Day | None
    created_at: Stamp


class DataRequest(Record):
    request_id: str
    subscriber_id: str
    location_id: str
    start_date: Day
    end_date: Day
    format: DataFormat
    days: Annotated[int, Field(ge=1)]
    price: Money
    status: Literal["pending", "delivered", "cancelled"]
    requested_at: Stamp
    ready_by: Day


TABLES: dict[str, type[Record]] = {"locations": Location, "forecasts": Forecast, "observations": Observation,
                                   "alerts": Alert, "subscribers": Subscriber, "subscriptions": Subscription,
                                   "data_requests": DataRequest}

# ---- alerts, plans and prices ----------------------------------------------------------------------


def alert_levels(weather: dict) -> list[tuple[str, str, str]]:
    """(kind, severity, what) for each alert a day's forecast calls for, on the service's alert scale."""
    found = []
    wind, rain, high, low = weather["wind_kph"], weather["precip_mm"], weather["high_c"], weather["low_c"]
    if wind >= 60:
        found.append(("wind", "warning" if wind >= 90 else "watch" if wind >= 75 else "advisory",
                      f"winds to {wind} km/h"))
    if high <= 1 and rain >= 5:
        found.append(("snow", "warning" if rain >= 25 else "watch" if rain >= 15 else "advisory",
                      f"{rain} mm of precipitation falling as snow"))
    elif rain >= 20:
        found.append(("heavy_rain", "warning" if rain >= 50 else "watch" if rain >= 35 else "advisory",
                      f"up to {rain} mm of rain"))
    if low <= -2:
        found.append(("frost", "warning" if low <= -8 else "watch" if low <= -5 else "advisory",
                      f"a low of {low} degrees C"))
    if weather["condition"] == "fog":
        found.append(("fog", "advisory", "dense fog, visibility under 200 m"))
    return found


def in_force(alert: dict, now: str) -> bool:
    return alert["starts_at"] <= now < alert["ends_at"]


def warnings_in_force(db: dict, location_id: str, now: str) -> list[dict]:
    """The warnings (the top severity) in force now for a location: while one is, the policy keeps its alerts on."""
    return [a for a in db["alerts"].values()
            if a["location_id"] == location_id and a["severity"] == "warning" and in_force(a, now)]


def cycle_start(subscriber: dict) -> date:
    """The first day of the subscriber's current 30-day billing cycle."""
    return date.fromisoformat(subscriber["plan_renews_on"]) - timedelta(days=CYCLE_DAYS)


def live_subscriptions(db: dict, subscriber_id: str) -> list[dict]:
    """The subscriber's active and paused subscriptions: those count towards the plan's limit."""
    return sorted((s for s in db["subscriptions"].values()
                   if s["subscriber_id"] == subscriber_id and s["status"] != "cancelled"),
                  key=lambda s: s["subscription_id"])


def proration(old_plan: str, new_plan: str, renews_on: str, today: date) -> float:
    """What a plan change adds to the next bill (negative: a credit): the price difference for the days
    left in the cycle, to the cent."""
    days_left = (date.fromisoformat(renews_on) - today).days
    return float(round((PLAN_PRICE[new_plan] - PLAN_PRICE[old_plan]) * days_left / CYCLE_DAYS, 2))


def data_price(days: int, plan: str) -> float:
    """The price of `days` location-days of historical observations on the plan, to the cent."""
    percent = PRO_DATA_PERCENT if plan == "pro" else 0
    return float(round(days * DATA_DAY_PRICE * (100 - percent) / 100, 2))


# ---- seeded data -----------------------------------------------------------------------------------

#: (location id, city, station, elevation in metres, coastal); the cities are `people.CITIES`.
_LOCATIONS = (("ASH", "Ashbury", "Ashbury Airfield", 48, False),
              ("BRK", "Brookhaven", "Brookhaven Reservoir", 112, False),
              ("CAL", "Calder", "Calder Junction", 95, False), ("DUN", "Dunmore", "Dunmore Heights", 410, False),
              ("EWK", "Eastwick", "Eastwick Pier", 6, True), ("FHW", "Fairhollow", "Fairhollow Fields", 160, False),
              ("GLR", "Glenrock", "Glenrock Summit", 780, False), ("HRG", "Harrowgate", "Harrowgate Park", 130, False),
              ("IRB", "Ironbridge", "Ironbridge Works", 70, False),
              ("JNF", "Juniper Falls", "Juniper Falls Gorge", 520, False),
              ("KGM", "Kingsmere", "Kingsmere Quay", 4, True), ("LKP", "Lakeport", "Lakeport Harbour", 12, True))
#: Which storms a location gets: snow and frost in the hills, wind and rain on the coast.
_HILL_EVENTS = ("snow", "frost", "wind")
_COAST_EVENTS = ("wind", "heavy_rain")
_PLAIN_EVENTS = ("heavy_rain", "frost", "fog", "wind")
EVENT_SHARE = 0.12  # the chance that a location-day gets an event
TODAY_WARNINGS = 4  # locations with a warning in force now


def _base_weather(rng: Any, location: dict, offset: int) -> dict:
    """An ordinary November day: the hills colder, the coast milder and windier, cooling as the month goes on."""
    high = 12.0 - location["elevation_m"] / 150 + (1.5 if location["coastal"] else 0.0) - 0.1 * offset
    high += rng.gauss(0, 2.5)
    low = high - rng.uniform(4, 9) - (0.0 if location["coastal"] else 1.5)
    rain = rng.uniform(0.2, 12) if rng.random() < 0.4 else 0.0
    wind = rng.randint(8, 40) + (10 if location["coastal"] else 0)
    return {"high_c": high, "low_c": low, "precip_mm": rain, "wind_kph": wind, "fog": False}


def _storm(rng: Any, weather: dict, kind: str, warning: bool) -> None:
    """Turn the day into an event of `kind`, at warning strength when `warning`."""
    if kind == "wind":
        weather["wind_kph"] = rng.randint(90, 110) if warning else rng.randint(62, 95)
    elif kind == "heavy_rain":
        weather["precip_mm"] = rng.uniform(50, 75) if warning else rng.uniform(22, 60)
        weather["high_c"] = max(weather["high_c"], 3.0)
    elif kind == "snow":
        weather["high_c"] = rng.uniform(-3, 1)
        weather["low_c"] = weather["high_c"] - rng.uniform(3, 6)
        weather["precip_mm"] = rng.uniform(25, 40) if warning else rng.uniform(6, 30)
    elif kind == "frost":
        weather["low_c"] = rng.uniform(-13, -8) if warning else rng.uniform(-9, -2.5)
        weather["high_c"] = weather["low_c"] + rng.uniform(4, 8)
        weather["precip_mm"] = 0.0
    else:  # fog: still air and no rain
        weather.update(fog=True, wind_kph=rng.randint(3, 10), precip_mm=0.0)


def _finish(rng: Any, weather: dict) -> dict:
    """Round the numbers and name the day's condition from them."""
    high, low = round(weather["high_c"], 1), round(min(weather["low_c"], weather["high_c"] - 1), 1)
    rain, wind = round(weather["precip_mm"], 1), weather["wind_kph"]
    if weather["fog"]:
        condition = "fog"
    elif high <= 1 and rain >= 1:
        condition = "snow"
    elif rain >= 20:
        condition = "heavy rain"
    elif rain >= 1:
        condition = "rain"
    elif wind >= 60:
        condition = "windy"
    else:
        condition = "cloudy" if rain > 0 else rng.choice(("sunny", "partly cloudy", "cloudy"))
    return {"condition": condition, "high_c": high, "low_c": low, "precip_mm": rain, "wind_kph": wind}


def _shifted(stamp: str, hours: int) -> str:
    """`stamp` ("YYYY-MM-DDTHH:MM:SS") moved on by whole `hours`."""
    moved = date.fromisoformat(stamp[:10]) + timedelta(days=(int(stamp[11:13]) + hours) // 24)
    return f"{moved.isoformat()}T{(int(stamp[11:13]) + hours) % 24:02d}{stamp[13:]}"


def _alerts(db: dict, rng: Any, location: dict, forecast: dict) -> None:
    day = date.fromisoformat(forecast["date"])
    midnight = f"{day.isoformat()}T00:00:00"
    for kind, severity, what in alert_levels(forecast):
        starts = _shifted(midnight, -rng.randint(6, 14))
        ends = _shifted(midnight, rng.randint(16, 30))
        alert_id = next_id(db["alerts"], "ALR-", 4)
        db["alerts"][alert_id] = Alert(
            alert_id=alert_id, location_id=location["location_id"], kind=kind, severity=severity,
            headline=f"{severity.capitalize()} for {location['city']}: {what} on {day.isoformat()}",
            starts_at=starts, ends_at=ends).model_dump(mode="json")


def _weather(db: dict, rng: Any) -> None:
    """Locations, the fortnight of weather around today, and the alerts the forecast days call for."""
    for location_id, city, station, elevation, coastal in _LOCATIONS:
        db["locations"][location_id] = Location(location_id=location_id, city=city, station_name=station,
                                                elevation_m=elevation, coastal=coastal).model_dump(mode="json")
    stormy_today = set(rng.sample(sorted(db["locations"]), TODAY_WARNINGS))
    for location in db["locations"].values():
        events = (_HILL_EVENTS if location["elevation_m"] > 400 else _COAST_EVENTS if location["coastal"]
                  else _PLAIN_EVENTS)
        for offset in range(-OBSERVED_DAYS, FORECAST_DAYS):
            day = (TODAY + timedelta(days=offset)).isoformat()
            weather = _base_weather(rng, location, offset)
            if offset == 0 and location["location_id"] in stormy_today:
                _storm(rng, weather, rng.choice([e for e in events if e != "fog"]), warning=True)
            elif rng.random() < EVENT_SHARE:
                _storm(rng, weather, rng.choice(events), warning=False)
            day_id = f"{location['location_id']}-{day}"
            if offset < 0:
                db["observations"][day_id] = Observation(observation_id=day_id, location_id=location["location_id"],
                                                         date=day, **_finish(rng, weather)).model_dump(mode="json")
                continue
            numbers = _finish(rng, weather)
            chance = rng.randint(35, 95) if numbers["precip_mm"] > 0 else rng.randint(0, 25)
            forecast = Forecast(forecast_id=day_id, location_id=location["location_id"], date=day,
                                condition=numbers["condition"], high_c=numbers["high_c"], low_c=numbers["low_c"],
                                precip_chance=chance, precip_mm=numbers["precip_mm"],
                                wind_kph=numbers["wind_kph"]).model_dump(mode="json")
            db["forecasts"][day_id] = forecast
            _alerts(db, rng, location, forecast)


def _subscriber(rng: Any, subscriber_id: str, first: str, last: str, phones: set[str]) -> dict:
    plan = rng.choices(("free", "plus", "pro"), weights=(40, 35, 25))[0]
    renews = TODAY + timedelta(days=rng.randint(1, CYCLE_DAYS))
    start = renews - timedelta(days=CYCLE_DAYS)
    joined = TODAY - timedelta(days=rng.randint(90, 2000))
    draw = rng.random()
    if draw < 0.4:
        changed = None
    elif draw < 0.75:  # in an earlier cycle
        changed = (joined + timedelta(days=rng.randint(0, (start - joined).days - 1))).isoformat()
    else:  # in this one: the policy allows no further change before the renewal
        changed = (start + timedelta(days=rng.randint(0, (TODAY - start).days))).isoformat()
    return Subscriber(subscriber_id=subscriber_id, first_name=first, last_name=last,
                      email=people.email(first, last, "skywatch.example"), phone=people.phone(rng, phones), plan=plan,
                      plan_renews_on=renews.isoformat(), plan_changed_on=changed, balance=0.0,
                      joined_on=joined.isoformat()).model_dump(mode="json")


def _subscriptions(db: dict, rng: Any, subscriber: dict) -> None:
    count = {"free": 1, "plus": rng.randint(1, 3), "pro": rng.randint(2, 5)}[subscriber["plan"]]
    cancelled = rng.random() < 0.15
    picked = rng.sample(sorted(db["locations"]), count + cancelled)
    joined = date.fromisoformat(subscriber["joined_on"])
    for index, location_id in enumerate(picked):
        status = "cancelled" if index == count else "paused" if rng.random() < 0.15 else "active"
        wind, rain = rng.choice((None, None, 50, 60, 70, 80)), rng.choice((None, None, None, 15, 25, 40))
        subscription_id = next_id(db["subscriptions"], "SUB-", 5)
        created = joined + timedelta(days=rng.randint(0, (TODAY - joined).days - 1))
        db["subscriptions"][subscription_id] = Subscription(
            subscription_id=subscription_id, subscriber_id=subscriber["subscriber_id"], location_id=location_id,
            channel="email" if subscriber["plan"] == "free" else rng.choice(("email", "sms")),
            min_severity=rng.choice(SEVERITIES), wind_kph=wind, rain_mm=rain, status=status,
            paused_until=(TODAY + timedelta(days=rng.randint(2, 20))).isoformat() if status == "paused" else None,
            created_at=f"{created.isoformat()}T10:00:00").model_dump(mode="json")


def _data_request(db: dict, rng: Any, subscriber: dict) -> None:
    joined = date.fromisoformat(subscriber["joined_on"])
    pending = rng.random() < 0.35
    back = rng.randint(0, 1) if pending else rng.randint(3, min(120, (TODAY - joined).days))
    requested = TODAY - timedelta(days=back)
    first = date(2015, 1, 1)
    start = first + timedelta(days=rng.randint(0, (requested - timedelta(days=8) - first).days))
    end = min(start + timedelta(days=rng.randint(6, 91)), requested - timedelta(days=1))
    days = (end - start).days + 1
    request_id = next_id(db["data_requests"], "DR-", 4)
    db["data_requests"][request_id] = DataRequest(
        request_id=request_id, subscriber_id=subscriber["subscriber_id"],
        location_id=rng.choice(sorted(db["locations"])),
        start_date=start.isoformat(), end_date=end.isoformat(), format=rng.choice(("csv", "json")), days=days,
        price=data_price(days, subscriber["plan"]), status="pending" if pending else "delivered",
        requested_at=f"{requested.isoformat()}T06:30:00",
        ready_by=(requested + timedelta(days=READY_DAYS)).isoformat()).model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """The locations and their fortnight of weather and alerts, and `size` subscribers with their
    subscriptions and data orders; each balance is the price of the orders made this cycle."""
    rng = seeded_rng("weather", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    _weather(db, rng)
    phones: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        subscriber = _subscriber(rng, f"USR-{1001 + index}", first, last, phones)
        db["subscribers"][subscriber["subscriber_id"]] = subscriber
        _subscriptions(db, rng, subscriber)
        if rng.random() < 0.45:
            for _ in range(rng.randint(1, 2)):
                _data_request(db, rng, subscriber)
        this_cycle = [r["price"] for r in db["data_requests"].values()
                      if r["subscriber_id"] == subscriber["subscriber_id"]
                      and r["requested_at"][:10] >= cycle_start(subscriber).isoformat()]
        subscriber["balance"] = float(round(sum(this_cycle), 2))
    return db
