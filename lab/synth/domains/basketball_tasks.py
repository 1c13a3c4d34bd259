"""Basketball task templates: what a fan calls the league's desk about, and the agent's golden chain for each.

Nine templates: easy requests on what the fan holds (cancel their tickets for a game, upgrade them to
a better section, cancel a merchandise order that has not shipped), medium requests found by
description (seats in a named section for a game found through the team's schedule, tickets moved
to another home game, a team product in a size), two writes per ticket in one call (moved to another
home game, then upgraded there), and two refusals the policy demands though the tools would accept:
courtside seats for a fan without a season ticket for the home team (the right chain reads the
fan's seats, which the fan also asks for) and more than four tickets for one game (the chain reads
the section's price, which the fan also asks for). The evolution step adds a read-only question
(the seats for the fan's next game, read after the request is done; a player's scoring average;
the favourite team's record) asked after the request.

Each chain identifies the fan as the policy demands, by email or by full name and phone number,
whichever the scenario's known info gives, and finds teams, games, sections, tickets, products and
orders through the tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from lab.synth.domains.basketball_data import (
    EXCHANGE_CLOSE_HOURS,
    NOW,
    POLICY_TICKET_LIMIT,
    TIERS,
    hours_until,
    is_holder,
)
from lab.synth.tasks import Golden, Scenario, TaskRecipe

UNKNOWN = "You do not know your fan id or any ticket, game, team, player, product or order ids."


def _identity(db: dict, fan_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    fan = db["fans"][fan_id]
    if rng.random() < 0.5:
        return (f"You are {fan['first_name']} {fan['last_name']}. Your email is {fan['email']}.",
                lambda g: g("find_fan_by_email", email=fan["email"]))
    return (f"You are {fan['first_name']} {fan['last_name']}. Your phone number is {fan['phone']}.",
            lambda g: g("find_fan_by_name_phone", first_name=fan["first_name"], last_name=fan["last_name"],
                        phone=fan["phone"]))


def _team_name(db: dict, team_id: str) -> str:
    return db["teams"][team_id]["name"]


def _game_text(db: dict, game: dict) -> str:
    return (f"the {_team_name(db, game['home_team_id'])} home game against the {_team_name(db, game['away_team_id'])} "
            f"on {game['date']}")


def _upcoming(db: dict, hours: float = 0) -> list[dict]:
    """Scheduled games tipping off more than `hours` from now, by id."""
    return [g for _, g in sorted(db["games"].items()) if g["status"] == "scheduled" and hours_until(g, NOW) > hours]


def _held(db: dict, fan_id: str) -> dict[str, list[dict]]:
    """Game id -> the fan's active tickets for it, for games still to come, by ticket id."""
    upcoming = {g["game_id"] for g in _upcoming(db)}
    held: dict[str, list[dict]] = {}
    for _, ticket in sorted(db["tickets"].items()):
        if ticket["fan_id"] == fan_id and ticket["status"] == "active" and ticket["game_id"] in upcoming:
            held.setdefault(ticket["game_id"], []).append(ticket)
    return held


def _seats_text(tickets: list[dict]) -> str:
    return "your ticket" if len(tickets) == 1 else f"your {len(tickets)} tickets"


def _team(g: Golden, name: str) -> str:
    return next(t["team_id"] for t in g("search_teams", query=name) if t["name"] == name)


def _find_game(g: Golden, home_team_id: str, game: dict, away: str) -> dict:
    """The game on the home team's schedule with the date and opponent the fan named."""
    return next(s for s in g("get_team_schedule", team_id=home_team_id)
                if (s["date"], s["home_team_id"], s["away_team"]) == (game["date"], home_team_id, away))


def _find_tickets(g: Golden, fan_id: str, game: dict, home: str, away: str) -> list[dict]:
    """The fan's active tickets for the game they described, as the agent finds them among theirs."""
    found = [g("get_ticket_details", ticket_id=t) for t in g("get_fan_details", fan_id=fan_id)["ticket_ids"]]
    return [t for t in found if t["status"] == "active"
            and (t["game"]["date"], t["game"]["home_team"], t["game"]["away_team"]) == (game["date"], home, away)]


def _sections(db: dict, game: dict, fan: dict, above: str | None = None) -> list[dict]:
    """The game's sections the policy lets the fan sit in (courtside only for holders of the home team),
    of a higher tier than `above` when given."""
    floor = -1 if above is None else TIERS.index(above)
    return [s for s in db["arenas"][game["arena_id"]]["sections"] if TIERS.index(s["tier"]) > floor
            and (s["tier"] != "courtside" or is_holder(fan, game["home_team_id"]))]


def _tier(db: dict, game: dict, code: str) -> str:
    return next(s["tier"] for s in db["arenas"][game["arena_id"]]["sections"] if s["code"] == code)


def _free_games(db: dict, fan_id: str, hours: float = 0) -> list[dict]:
    """Games to come for which the fan holds no ticket, so a purchase stays within the policy's limit."""
    held = _held(db, fan_id)
    return [g for g in _upcoming(db, hours) if g["game_id"] not in held]


def buy_tickets(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan, games = db["fans"][fan_id], _free_games(db, fan_id)
    if not games:
        return None
    game = rng.choice(games)
    section = rng.choice(_sections(db, game, fan))["code"]
    quantity = rng.randint(1, POLICY_TICKET_LIMIT)
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        listed = _find_game(g, _team(g, home), game, away)
        g("get_game_details", game_id=listed["game_id"])
        g("buy_tickets", fan_id=found, game_id=listed["game_id"], section=section, quantity=quantity)
        return []
    return Scenario("Sell the fan the seats they ask for.",
                    f"You want {quantity} seat{'s' if quantity > 1 else ''} together in section {section} for "
                    f"{_game_text(db, game)}.", known, UNKNOWN, chain, "medium")


def cancel_tickets(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    held = _held(db, fan_id)
    if not held:
        return None
    game = db["games"][rng.choice(sorted(held))]
    tickets = held[game["game_id"]]
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        for ticket in _find_tickets(g, identify(g), game, home, away):
            g("cancel_ticket", ticket_id=ticket["ticket_id"])
        return []
    return Scenario("Cancel every ticket the fan holds for the game they name.",
                    f"You can no longer go to {_game_text(db, game)} and want {_seats_text(tickets)} for it "
                    "cancelled.", known, UNKNOWN, chain, "easy")


def _exchange_plan(db: dict, fan_id: str, rng: random.Random) -> tuple[dict, list[dict], dict] | None:
    """(a game the fan holds tickets for, those tickets, another home game of its home team to move them
    to), with the original game far enough ahead that exchanges are open."""
    held, free = _held(db, fan_id), _free_games(db, fan_id)
    plans = [(db["games"][game_id], other) for game_id in sorted(held)
             if hours_until(db["games"][game_id], NOW) >= EXCHANGE_CLOSE_HOURS
             for other in free if other["home_team_id"] == db["games"][game_id]["home_team_id"]]
    if not plans:
        return None
    game, other = rng.choice(plans)
    return game, held[game["game_id"]], other


def _exchange_chain(g: Golden, fan_id: str, db: dict, game: dict, other: dict) -> list[dict]:
    """Find the fan's tickets and the new game, and exchange each ticket; the new game's details read."""
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    tickets = _find_tickets(g, fan_id, game, home, away)
    listed = _find_game(g, tickets[0]["game"]["home_team_id"], other, _team_name(db, other["away_team_id"]))
    g("get_game_details", game_id=listed["game_id"])
    for ticket in tickets:
        g("exchange_ticket", ticket_id=ticket["ticket_id"], game_id=listed["game_id"])
    return tickets


def exchange_game(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    plan = _exchange_plan(db, fan_id, rng)
    if plan is None:
        return None
    game, tickets, other = plan
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        _exchange_chain(g, identify(g), db, game, other)
        return []
    return Scenario("Exchange the fan's tickets for another home game of the same team.",
                    f"You want {_seats_text(tickets)} for {_game_text(db, game)} exchanged for their home game "
                    f"against the {_team_name(db, other['away_team_id'])} on {other['date']}, in the same section.",
                    known, UNKNOWN, chain, "medium")


def upgrade_section(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan, held = db["fans"][fan_id], _held(db, fan_id)
    options = []
    for game_id, tickets in sorted(held.items()):
        game = db["games"][game_id]
        options += [(game_id, s["code"]) for s in _sections(db, game, fan, _tier(db, game, tickets[0]["section"]))]
    if not options:
        return None
    game_id, section = rng.choice(options)
    game, tickets = db["games"][game_id], held[game_id]
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_tickets(g, identify(g), game, home, away)
        g("get_game_details", game_id=found[0]["game_id"])
        for ticket in found:
            g("upgrade_ticket", ticket_id=ticket["ticket_id"], section=section)
        return []
    return Scenario("Upgrade the fan's tickets for a game to the section they name.",
                    f"You want {_seats_text(tickets)} for {_game_text(db, game)} moved up to section {section}.",
                    known, UNKNOWN, chain, "easy")


def exchange_and_upgrade(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan, plan = db["fans"][fan_id], _exchange_plan(db, fan_id, rng)
    if plan is None:
        return None
    game, tickets, other = plan
    sections = _sections(db, other, fan, _tier(db, game, tickets[0]["section"]))
    if not sections:
        return None
    section = rng.choice(sections)["code"]
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        for ticket in _exchange_chain(g, identify(g), db, game, other):
            g("upgrade_ticket", ticket_id=ticket["ticket_id"], section=section)
        return []
    return Scenario("Exchange the fan's tickets for another home game of the same team, then upgrade them there.",
                    f"You want {_seats_text(tickets)} for {_game_text(db, game)} exchanged for their home game "
                    f"against the {_team_name(db, other['away_team_id'])} on {other['date']}, and there moved up "
                    f"to section {section}.", known, UNKNOWN, chain, "hard")


def _product_text(product: dict, size: str, quantity: int) -> str:
    sized = "" if size == "one size" else f" in size {size}"
    return f"the {product['name']}{sized}{'' if quantity == 1 else f', quantity {quantity}'}"


def buy_merch(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan = db["fans"][fan_id]
    team_id = fan["favorite_team_id"] if rng.random() < 0.7 else rng.choice(sorted(db["teams"]))
    product = rng.choice([p for _, p in sorted(db["products"].items()) if p["team_id"] == team_id])
    size, quantity = rng.choice(sorted(product["stock"])), rng.choice((1, 1, 2))
    team = _team_name(db, team_id)
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        listed = next(p for p in g("list_team_merchandise", team_id=_team(g, team)) if p["name"] == product["name"])
        g("place_merch_order", fan_id=found, product_id=listed["product_id"], size=size, quantity=quantity)
        return []
    return Scenario("Order the team merchandise the fan asks for.",
                    f"You want to order {_product_text(product, size, quantity)}, shipped to your address on file.",
                    known, UNKNOWN, chain, "medium")


def cancel_merch(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    placed = [o for _, o in sorted(db["merch_orders"].items()) if o["fan_id"] == fan_id and o["status"] == "placed"]
    if not placed:
        return None
    order = rng.choice(placed)
    product = db["products"][order["product_id"]]
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        ids = g("get_fan_details", fan_id=identify(g))["merch_order_ids"]
        found = next(o for o in (g("get_merch_order_details", order_id=i) for i in ids)
                     if (o["product_name"], o["size"], o["placed_at"][:10], o["status"])
                     == (product["name"], order["size"], order["placed_at"][:10], "placed"))
        g("cancel_merch_order", order_id=found["order_id"])
        return []
    return Scenario("Cancel the merchandise order the fan describes, which has not shipped.",
                    f"On {order['placed_at'][:10]} you ordered "
                    f"{_product_text(product, order['size'], order['quantity'])}; you no longer want it and want "
                    "that order cancelled.", known, UNKNOWN, chain, "easy")


def refused_courtside(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan, held = db["fans"][fan_id], _held(db, fan_id)
    options = [game_id for game_id, tickets in sorted(held.items())
               if not is_holder(fan, db["games"][game_id]["home_team_id"])
               and _tier(db, db["games"][game_id], tickets[0]["section"]) != "courtside"]
    if not options:
        return None
    game = db["games"][rng.choice(options)]
    tickets = held[game["game_id"]]
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_tickets(g, identify(g), game, home, away)  # no season ticket for the home team: no courtside
        return sorted(t["seat"] for t in found)
    return Scenario("Refuse to upgrade the fan's tickets to courtside (policy: season-ticket holders of the home "
                    "team only) and tell the fan their current seats.",
                    f"You want {_seats_text(tickets)} for {_game_text(db, game)} moved to courtside section CS1. "
                    "You also want to know your current seat numbers.", known, UNKNOWN, chain, "hard")


def refused_group_limit(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan = db["fans"][fan_id]
    games = [g for g in _free_games(db, fan_id) if not is_holder(fan, g["home_team_id"])]
    if not games:
        return None
    game = rng.choice(games)
    section = rng.choice(_sections(db, game, fan))["code"]
    quantity = rng.randint(POLICY_TICKET_LIMIT + 1, POLICY_TICKET_LIMIT + 3)
    home, away = _team_name(db, game["home_team_id"]), _team_name(db, game["away_team_id"])
    known, identify = _identity(db, fan_id, rng)

    def chain(g: Golden) -> list[str]:
        identify(g)
        details = g("get_game_details", game_id=_find_game(g, _team(g, home), game, away)["game_id"])
        return [str(next(s["price"] for s in details["sections"] if s["code"] == section))]
    return Scenario(f"Refuse to sell {quantity} tickets for one game (policy: at most {POLICY_TICKET_LIMIT} per fan) "
                    "and tell the fan the section's price per seat.",
                    f"You want {quantity} seats together in section {section} for {_game_text(db, game)}, for a "
                    "group of friends; fewer seats are no use to you. You also want to know what one seat in that "
                    "section costs for that game.", known, UNKNOWN, chain, "medium")


def next_game_seats_question(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    if len(_held(db, fan_id)) < 2:  # the request before may cancel the tickets for one game
        return None
    email = db["fans"][fan_id]["email"]

    def chain(g: Golden) -> list[str]:
        ids = g("get_fan_details", fan_id=g("find_fan_by_email", email=email))["ticket_ids"]
        active = [t for t in (g("get_ticket_details", ticket_id=i) for i in ids) if t["status"] == "active"
                  and t["game"]["status"] == "scheduled"]
        first = min((t["game"]["date"], t["game"]["tip_off"], t["game_id"]) for t in active)
        return sorted(t["seat"] for t in active if t["game_id"] == first[2])
    return Scenario("Tell the fan their seats for the next game they hold tickets for.",
                    "ask which seats you have for the next game you hold tickets for.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def player_points_question(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan = db["fans"][fan_id]
    team = _team_name(db, fan["favorite_team_id"])
    player = rng.choice([p for _, p in sorted(db["players"].items()) if p["team_id"] == fan["favorite_team_id"]])
    name = (player["first_name"], player["last_name"])

    def chain(g: Golden) -> list[str]:
        g("find_fan_by_email", email=fan["email"])
        roster = g("get_team_roster", team_id=_team(g, team))
        found = next(p for p in roster if (p["first_name"], p["last_name"]) == name)
        return [str(g("get_player_stats", player_id=found["player_id"])["points_per_game"])]
    return Scenario("Tell the fan a player's points per game this season.",
                    f"ask how many points per game {name[0]} {name[1]} of the {team} averages this season.",
                    f"Your email is {fan['email']}.", UNKNOWN, chain, "easy")


def standings_question(db: dict, fan_id: str, rng: random.Random) -> Scenario | None:
    fan = db["fans"][fan_id]
    team = db["teams"][fan["favorite_team_id"]]

    def chain(g: Golden) -> list[str]:
        g("find_fan_by_email", email=fan["email"])
        rows = g("get_standings", conference=team["conference"])
        return [next(r["record"] for r in rows if r["name"] == team["name"])]
    return Scenario("Tell the fan their favourite team's win-loss record.",
                    f"ask what win-loss record the {team['name']} have in the {team['conference']} Conference "
                    "standings.", f"Your email is {fan['email']}.", UNKNOWN, chain, "easy")


def _fans(db: dict[str, Any]) -> list[str]:
    return sorted(db["fans"])


RECIPE = TaskRecipe(
    subjects=_fans,
    templates={"buy_tickets": buy_tickets, "cancel_tickets": cancel_tickets, "exchange_game": exchange_game,
               "upgrade_section": upgrade_section, "buy_merch": buy_merch, "cancel_merch": cancel_merch,
               "exchange_and_upgrade": exchange_and_upgrade, "refused_courtside": refused_courtside,
               "refused_group_limit": refused_group_limit},
    follow_ups={"next_game_seats_question": next_game_seats_question, "player_points_question": player_points_question,
                "standings_question": standings_question},
)
