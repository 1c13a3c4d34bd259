"""Known-good calls for every tool of the weather domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import timedelta

from lab.synth.domain import next_id
from lab.synth.domains import weather_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    today = weather_data.TODAY
    s = db["subscribers"]["USR-1001"]
    live = first(db["subscriptions"].values(), lambda x: x["status"] == "active")
    texting = first(db["subscriptions"].values(), lambda x: x["status"] != "cancelled" and x["channel"] == "sms")
    roomy = first(db["subscribers"].values(), lambda x: len(weather_data.live_subscriptions(db, x["subscriber_id"]))
                  < weather_data.PLAN_LIMIT[x["plan"]])
    followed = {x["location_id"] for x in weather_data.live_subscriptions(db, roomy["subscriber_id"])}
    unfollowed = next(loc for loc in sorted(db["locations"]) if loc not in followed)
    free = first(db["subscribers"].values(), lambda x: x["plan"] == "free")
    other_severity = next(v for v in weather_data.SEVERITIES if v != live["min_severity"])
    order = {"subscriber_id": s["subscriber_id"], "location_id": "CAL", "start_date": "2024-01-01",
             "end_date": "2024-01-31", "format": "csv"}
    return {
        "find_subscriber_by_email": [("find_subscriber_by_email", {"email": s["email"].upper()})],
        "find_subscriber_by_name_phone": [("find_subscriber_by_name_phone", {
            "first_name": s["first_name"], "last_name": s["last_name"], "phone": s["phone"].replace("-", " ")})],
        "get_subscriber_details": [("get_subscriber_details", {"subscriber_id": s["subscriber_id"]})],
        "get_subscription_details": [("get_subscription_details", {"subscription_id": live["subscription_id"]})],
        "get_data_request_details": [("get_data_request_details", {"request_id": "DR-0001"})],
        "search_locations": [("search_locations", {"query": "harbour"})],
        "get_forecast": [("get_forecast", {"location_id": "CAL", "date": (today + timedelta(days=1)).isoformat()})],
        "get_observations": [("get_observations", {"location_id": "CAL",
                                                   "date": (today - timedelta(days=1)).isoformat()})],
        "list_alerts": [("list_alerts", {"location_id": db["alerts"]["ALR-0001"]["location_id"]})],
        "calculate": [("calculate", {"expression": "4.99 * 17 / 30"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a refund for a past year."})],
        "subscribe_location": [("subscribe_location", {"subscriber_id": roomy["subscriber_id"],
                                                       "location_id": unfollowed, "channel": "email",
                                                       "min_severity": "watch"})],
        "change_channel": [("change_channel", {"subscription_id": texting["subscription_id"], "channel": "email"})],
        "set_min_severity": [("set_min_severity", {"subscription_id": live["subscription_id"],
                                                   "min_severity": other_severity})],
        "set_threshold": [("set_threshold", {"subscription_id": live["subscription_id"], "measure": "wind_kph",
                                             "value": 95})],
        "pause_subscription": [("pause_subscription", {"subscription_id": live["subscription_id"],
                                                       "until": (today + timedelta(days=5)).isoformat()})],
        "unsubscribe": [("unsubscribe", {"subscription_id": live["subscription_id"]})],
        "change_plan": [("change_plan", {"subscriber_id": free["subscriber_id"], "plan": "plus"})],
        "request_historical_data": [("request_historical_data", order)],
        "cancel_data_request": [("request_historical_data", order),
                                ("cancel_data_request", {"request_id": next_id(db["data_requests"], "DR-", 4)})],
    }
