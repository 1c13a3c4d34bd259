"""Known-good calls for every tool of the basketball domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from lab.synth.domains import basketball_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    now = basketball_data.NOW
    fan = db["fans"]["FAN-1001"]
    games = db["games"]

    def upcoming(game: dict, hours: float = 0) -> bool:
        return game["status"] == "scheduled" and basketball_data.hours_until(game, now) > hours

    def other_home_game(game: dict) -> dict | None:
        return next((g for g in sorted(games.values(), key=lambda g: g["game_id"]) if upcoming(g)
                     and g["home_team_id"] == game["home_team_id"] and g["game_id"] != game["game_id"]), None)

    game = first(games.values(), upcoming)
    upper = first(db["arenas"][game["arena_id"]]["sections"], lambda s: s["tier"] == "upper")
    active = first(db["tickets"].values(), lambda t: t["status"] == "active" and upcoming(games[t["game_id"]]))
    movable = first(db["tickets"].values(), lambda t: t["status"] == "active"
                    and upcoming(games[t["game_id"]], basketball_data.EXCHANGE_CLOSE_HOURS)
                    and other_home_game(games[t["game_id"]]) is not None)
    courtside = first(db["arenas"][games[active["game_id"]]["arena_id"]]["sections"],
                      lambda s: s["tier"] == "courtside")
    product = first(db["products"].values(), lambda p: any(p["stock"].values()))
    size = next(s for s, count in product["stock"].items() if count)
    placed = first(db["merch_orders"].values(), lambda o: o["status"] == "placed")
    assert active["section"] != courtside["code"]
    return {
        "find_fan_by_email": [("find_fan_by_email", {"email": fan["email"].upper()})],
        "find_fan_by_name_phone": [("find_fan_by_name_phone", {"first_name": fan["first_name"],
                                    "last_name": fan["last_name"], "phone": fan["phone"]})],
        "get_fan_details": [("get_fan_details", {"fan_id": fan["fan_id"]})],
        "search_teams": [("search_teams", {"query": "hawks"})],
        "get_team_schedule": [("get_team_schedule", {"team_id": "TM-01"})],
        "get_game_details": [("get_game_details", {"game_id": game["game_id"]})],
        "get_standings": [("get_standings", {"conference": "East"})],
        "get_team_roster": [("get_team_roster", {"team_id": "TM-01"})],
        "get_player_stats": [("get_player_stats", {"player_id": "PL-001"})],
        "get_ticket_details": [("get_ticket_details", {"ticket_id": active["ticket_id"]})],
        "list_team_merchandise": [("list_team_merchandise", {"team_id": "TM-01"})],
        "get_merch_order_details": [("get_merch_order_details", {"order_id": placed["order_id"]})],
        "calculate": [("calculate", {"expression": "2 * 95 * 0.9"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a suite for a corporate party."})],
        "buy_tickets": [("buy_tickets", {"fan_id": fan["fan_id"], "game_id": game["game_id"], "section": upper["code"],
                                         "quantity": 2})],
        "exchange_ticket": [("exchange_ticket", {"ticket_id": movable["ticket_id"],
                                                 "game_id": other_home_game(games[movable["game_id"]])["game_id"]})],
        "upgrade_ticket": [("upgrade_ticket", {"ticket_id": active["ticket_id"], "section": courtside["code"]})],
        "cancel_ticket": [("cancel_ticket", {"ticket_id": active["ticket_id"]})],
        "place_merch_order": [("place_merch_order", {"fan_id": fan["fan_id"], "product_id": product["product_id"],
                                                     "size": size, "quantity": 1})],
        "cancel_merch_order": [("cancel_merch_order", {"order_id": placed["order_id"]})],
    }
