"""The basketball domain: a league's fan and ticketing desk (teams, players, the season schedule,
arenas with seat sections, fans and season-ticket holders, tickets, merchandise orders), with 20 tools.

Why these records and rules: they are what a league's fan line handles (seats for a game, a ticket
moved to another home game, an upgrade to a better section, a cancellation and its refund, a jersey
order, the standings or a player's averages), and each rule gives a task a way to go wrong. The
tools enforce the schedule, seats, the exchange cut-off and the refund scale; two rules are policy
only: courtside seats are for season-ticket holders of the home team (the ticket tools sell and
upgrade to courtside for anyone) and a fan holds at most four tickets for one game (the purchase
tool sells up to eight per call and does not count the fan's other tickets), so a task can test that
the agent follows the policy and not just the tools' errors.

Prices are a section's list price, times 1.3 for marquee games, less 15% for a season-ticket holder
of the home team, rounded to the cent. The records, the seeded data and the seat, price, refund and
standings rules are in `lab.synth.domains.basketball_data`.
"""

from __future__ import annotations

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id
from lab.synth.domains.basketball_data import (
    CONFERENCES,
    EXCHANGE_CLOSE_HOURS,
    EXCHANGE_FEE,
    HOLDER_MERCH_PERCENT,
    HOLDER_TICKET_PERCENT,
    MARQUEE_FACTOR,
    MAX_MERCH_QUANTITY,
    MAX_TICKETS_PER_CALL,
    NOW,
    POLICY_TICKET_LIMIT,
    REFUND_SCALE,
    TABLES,
    TIERS,
    MerchOrder,
    Ticket,
    free_seats,
    generate,
    hours_until,
    is_holder,
    list_price,
    merch_price,
    refund_percent,
    section_of,
    standings,
    taken_seats,
    ticket_price,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()


def _team_name(db: dict, team_id: str) -> str:
    return db["teams"][team_id]["name"]


def _game_summary(db: dict, game: dict) -> dict:
    """A game as a fan reads it in a list: who plays whom, when, where it stands."""
    return {"game_id": game["game_id"], "date": game["date"], "tip_off": game["tip_off"],
            "home_team_id": game["home_team_id"], "home_team": _team_name(db, game["home_team_id"]),
            "away_team_id": game["away_team_id"], "away_team": _team_name(db, game["away_team_id"]),
            "status": game["status"], "home_score": game["home_score"], "away_score": game["away_score"]}


def _upcoming_game(db: dict, game_id: str, now: str) -> dict:
    """The game, if it is scheduled and has not tipped off; only those sell or take tickets."""
    game = lookup(db, "games", game_id, "game")
    if game["status"] != "scheduled" or hours_until(game, now) <= 0:
        raise ToolRefused(f"game {game_id} is {game['status']} ({game['date']} {game['tip_off']}); only games that "
                          "have not tipped off take tickets")
    return game


def _active_ticket(db: dict, ticket_id: str, now: str) -> tuple[dict, dict]:
    """The ticket and its game, if the ticket is active and its game has not tipped off."""
    ticket = lookup(db, "tickets", ticket_id, "ticket")
    game = db["games"][ticket["game_id"]]
    if ticket["status"] != "active" or hours_until(game, now) <= 0:
        raise ToolRefused(f"ticket {ticket_id} is {ticket['status']} for a game on {game['date']} {game['tip_off']}; "
                          "only active tickets for games that have not tipped off can change")
    return ticket, game


def _section(db: dict, game: dict, code: str) -> dict:
    arena = db["arenas"][game["arena_id"]]
    section = section_of(arena, code)
    if section is None:
        raise ToolRefused(f"{arena['name']} has no section '{code}' (it has "
                          f"{', '.join(s['code'] for s in arena['sections'])})")
    return section


def _seats(db: dict, game: dict, section: dict, count: int) -> list[str]:
    seats = free_seats(section, taken_seats(db, game["game_id"]))
    if len(seats) < count:
        raise ToolRefused(f"section {section['code']} has {len(seats)} free seats for game {game['game_id']}, "
                          f"{count} asked for")
    return seats[:count]


@box.read
def find_fan_by_email(db: dict, email: str) -> str:
    """Find a fan's id from their email address.

    email: the fan's email address, any letter case.
    """
    return id_by_email(db, "fans", email, "fan")


@box.read
def find_fan_by_name_phone(db: dict, first_name: str, last_name: str, phone: str) -> str:
    """Find a fan's id from their full name and phone number.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    phone: phone number as on file, e.g. '+1-555-854-1687'.
    """
    for fan_id, fan in db["fans"].items():
        if (fan["first_name"].lower(), fan["last_name"].lower(), fan["phone"]) == (
                first_name.strip().lower(), last_name.strip().lower(), phone.strip()):
            return fan_id
    raise ToolRefused(f"no fan named '{first_name} {last_name}' with phone '{phone}'")


@box.read
def get_fan_details(db: dict, fan_id: str) -> str:
    """A fan's contact details, address, favourite team and season ticket (a team id or null), with the
    ids of their tickets and merchandise orders.

    fan_id: the fan, e.g. 'FAN-1001'.
    """
    fan = lookup(db, "fans", fan_id, "fan")
    return as_json({**fan,
                    "ticket_ids": sorted(t for t, ticket in db["tickets"].items() if ticket["fan_id"] == fan_id),
                    "merch_order_ids": sorted(o for o, order in db["merch_orders"].items()
                                              if order["fan_id"] == fan_id)})


@box.read
def search_teams(db: dict, query: str) -> str:
    """Teams whose name or city contains the query: team id, name, city, conference and arena.

    query: part of a team name or a city, any letter case, e.g. 'hawks'.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([{**team, "arena": db["arenas"][team["arena_id"]]["name"]} for team in db["teams"].values()
                    if text in team["name"].lower() or text in team["city"].lower()])


@box.read
def get_team_schedule(db: dict, team_id: str) -> str:
    """Every game of a team this season, earliest first: date, tip-off, home and away teams, status and
    the score of games played.

    team_id: the team, e.g. 'TM-01'.
    """
    lookup(db, "teams", team_id, "team")
    games = [g for g in db["games"].values() if team_id in (g["home_team_id"], g["away_team_id"])]
    return as_json([_game_summary(db, g) for g in sorted(games, key=lambda g: (g["date"], g["tip_off"], g["game_id"]))])


@box.read
def get_game_details(db: dict, game_id: str) -> str:
    """A game's teams, date, tip-off, status, score, arena and price level, with each seat section's tier,
    price for this game (before any season-ticket discount) and free seats.

    game_id: the game, e.g. 'GM-0001'.
    """
    game = lookup(db, "games", game_id, "game")
    arena, taken = db["arenas"][game["arena_id"]], taken_seats(db, game_id)
    sections = [{"code": s["code"], "tier": s["tier"], "price": list_price(s, game),
                 "free_seats": len(free_seats(s, taken))} for s in arena["sections"]]
    return as_json({**_game_summary(db, game), "arena": arena["name"], "price_level": game["price_level"],
                    "sections": sections})


@box.read
def get_standings(db: dict, conference: str) -> str:
    """A conference's standings from the games played: rank, team, wins, losses, record and games behind.

    conference: 'East' or 'West', any letter case.
    """
    name = conference.strip().capitalize()
    if name not in CONFERENCES:
        raise ToolRefused(f"conference must be one of {list(CONFERENCES)}, got {conference!r}")
    return as_json(standings(db, name))


@box.read
def get_team_roster(db: dict, team_id: str) -> str:
    """A team's players: player id, name, jersey number and position.

    team_id: the team, e.g. 'TM-01'.
    """
    lookup(db, "teams", team_id, "team")
    return as_json([{key: p[key] for key in ("player_id", "first_name", "last_name", "jersey_number", "position")}
                    for p in db["players"].values() if p["team_id"] == team_id])


@box.read
def get_player_stats(db: dict, player_id: str) -> str:
    """A player's team, number, position, games played and season averages (points, rebounds, assists per game).

    player_id: the player, e.g. 'PL-001'.
    """
    return as_json(lookup(db, "players", player_id, "player"))


@box.read
def get_ticket_details(db: dict, ticket_id: str) -> str:
    """A ticket's game (teams, date, tip-off), section, seat, price, status, refund, exchanges and fees paid.

    ticket_id: the ticket, e.g. 'TKT-00001'.
    """
    ticket = lookup(db, "tickets", ticket_id, "ticket")
    return as_json({**ticket, "game": _game_summary(db, db["games"][ticket["game_id"]])})


@box.read
def list_team_merchandise(db: dict, team_id: str) -> str:
    """A team's merchandise: product id, name, category, list price and stock per size.

    team_id: the team, e.g. 'TM-01'.
    """
    lookup(db, "teams", team_id, "team")
    return as_json([p for p in db["products"].values() if p["team_id"] == team_id])


@box.read
def get_merch_order_details(db: dict, order_id: str) -> str:
    """A merchandise order's product, size, quantity, prices, status, refund and shipping address.

    order_id: the order, e.g. 'ORD-0001'.
    """
    order = lookup(db, "merch_orders", order_id, "merchandise order")
    return as_json({**order, "product_name": db["products"][order["product_id"]]["name"]})


add_generic_tools(box)


@box.write
def buy_tickets(db: dict, fan_id: str, game_id: str, section: str, quantity: int, *, now: str) -> str:
    """Sell a fan adjacent seats in one section for a game that has not tipped off; a season-ticket
    holder of the home team pays 15% less.

    fan_id: the fan buying.
    game_id: the game, as get_team_schedule lists it.
    section: the section code, e.g. '104', as get_game_details lists it.
    quantity: how many seats, 1 to 8.
    """
    fan = lookup(db, "fans", fan_id, "fan")
    game = _upcoming_game(db, game_id, now)
    found = _section(db, game, section)
    if not 1 <= quantity <= MAX_TICKETS_PER_CALL:
        raise ToolRefused(f"quantity must be from 1 to {MAX_TICKETS_PER_CALL}, got {quantity}")
    sold = []
    for seat in _seats(db, game, found, quantity):
        ticket_id = next_id(db["tickets"], "TKT-", 5)
        db["tickets"][ticket_id] = Ticket(
            ticket_id=ticket_id, fan_id=fan_id, game_id=game_id, section=section, seat=seat,
            price=ticket_price(found, game, fan), status="active", refund=0.0, exchanges=0, fees=0.0,
            bought_at=now).model_dump(mode="json")
        sold.append(db["tickets"][ticket_id])
    return as_json(sold)


@box.write
def exchange_ticket(db: dict, ticket_id: str, game_id: str, *, now: str) -> str:
    """Move an active ticket to another home game of the same team, in the same section: a new seat and
    the new game's price; a 10.00 fee unless the fan holds a season ticket for the home team. Closes
    48 hours before the original game's tip-off.

    ticket_id: the active ticket.
    game_id: the new game; the ticket's home team must host it and it must not have tipped off.
    """
    ticket, game = _active_ticket(db, ticket_id, now)
    if hours_until(game, now) < EXCHANGE_CLOSE_HOURS:
        raise ToolRefused(f"exchanges close {EXCHANGE_CLOSE_HOURS} hours before tip-off; game {game['game_id']} "
                          f"tips off {game['date']} {game['tip_off']}")
    new = _upcoming_game(db, game_id, now)
    if new["game_id"] == game["game_id"] or new["home_team_id"] != game["home_team_id"]:
        raise ToolRefused(f"the new game must be another home game of {_team_name(db, game['home_team_id'])}, "
                          f"got {game_id}")
    section = _section(db, new, ticket["section"])
    (seat,) = _seats(db, new, section, 1)
    fan = db["fans"][ticket["fan_id"]]
    fee = 0.0 if is_holder(fan, new["home_team_id"]) else EXCHANGE_FEE
    ticket.update(game_id=game_id, seat=seat, price=ticket_price(section, new, fan), exchanges=ticket["exchanges"] + 1,
                  fees=float(round(ticket["fees"] + fee, 2)))
    return as_json(ticket)


@box.write
def upgrade_ticket(db: dict, ticket_id: str, section: str, *, now: str) -> str:
    """Move an active ticket to a section of a higher tier (upper, lower, courtside) for the same game:
    a new seat and that section's price.

    ticket_id: the active ticket whose game has not tipped off.
    section: the new section's code, of a higher tier than the ticket's.
    """
    ticket, game = _active_ticket(db, ticket_id, now)
    current, target = _section(db, game, ticket["section"]), _section(db, game, section)
    if TIERS.index(target["tier"]) <= TIERS.index(current["tier"]):
        raise ToolRefused(f"section {section} is {target['tier']}; an upgrade from {current['tier']} section "
                          f"{current['code']} must go to a higher tier")
    (seat,) = _seats(db, game, target, 1)
    ticket.update(section=section, seat=seat, price=ticket_price(target, game, db["fans"][ticket["fan_id"]]))
    return as_json(ticket)


@box.write
def cancel_ticket(db: dict, ticket_id: str, *, now: str) -> str:
    """Cancel an active ticket before tip-off: the full price back from 7 days before, half from 48 hours
    before, nothing later; the seat goes back on sale.

    ticket_id: the active ticket.
    """
    ticket, game = _active_ticket(db, ticket_id, now)
    percent = refund_percent(hours_until(game, now))
    ticket.update(status="cancelled", refund=float(round(ticket["price"] * percent / 100, 2)))
    return as_json(ticket)


@box.write
def place_merch_order(db: dict, fan_id: str, product_id: str, size: str, quantity: int, *, now: str) -> str:
    """Order merchandise for a fan, shipped to their address on file; a season-ticket holder pays 10% less
    for their team's products.

    fan_id: the fan ordering.
    product_id: the product, as list_team_merchandise lists it.
    size: one of the product's sizes, e.g. 'M', or 'one size'.
    quantity: how many, 1 to 5, at most the stock of that size.
    """
    fan = lookup(db, "fans", fan_id, "fan")
    product = lookup(db, "products", product_id, "product")
    if size not in product["stock"]:
        raise ToolRefused(f"{product['name']} comes in {', '.join(product['stock'])}, not {size!r}")
    if not 1 <= quantity <= MAX_MERCH_QUANTITY:
        raise ToolRefused(f"quantity must be from 1 to {MAX_MERCH_QUANTITY}, got {quantity}")
    if quantity > product["stock"][size]:
        raise ToolRefused(f"{product['name']} size {size} has {product['stock'][size]} in stock, {quantity} asked for")
    unit = merch_price(product, fan)
    order_id = next_id(db["merch_orders"], "ORD-", 4)
    order = MerchOrder(order_id=order_id, fan_id=fan_id, product_id=product_id, size=size, quantity=quantity,
                       unit_price=unit, total=float(round(unit * quantity, 2)), status="placed", refund=0.0,
                       ship_to=fan["address"], placed_at=now).model_dump(mode="json")
    product["stock"][size] -= quantity
    db["merch_orders"][order_id] = order
    return as_json(order)


@box.write
def cancel_merch_order(db: dict, order_id: str) -> str:
    """Cancel a merchandise order that has not shipped, for its full total back; the items go back in stock.

    order_id: the order, still placed (not shipped or delivered).
    """
    order = lookup(db, "merch_orders", order_id, "merchandise order")
    if order["status"] != "placed":
        raise ToolRefused(f"order {order_id} is {order['status']}; only placed orders that have not shipped can be "
                          "cancelled")
    db["products"][order["product_id"]]["stock"][order["size"]] += order["quantity"]
    order.update(status="cancelled", refund=order["total"])
    return as_json(order)


_REFUNDS = "; ".join(f"{percent}% from {hours} hours before tip-off" if hours else f"{percent}% later"
                     for hours, percent in REFUND_SCALE)

POLICY = f"""# League fan desk policy

The current time is {NOW} (league time). Treat it as now for every date and time rule below.

## Identity
- Before looking at or changing anything, identify the fan: by email address, or by full name and
  phone number. Help only that fan, with their own tickets and orders.
- Schedules, scores, standings, rosters, player averages and merchandise are public: share them freely.

## Changes
- Before any change (a purchase, exchange, upgrade, cancellation or merchandise order), state exactly
  what you will do and what it costs, and get the fan's explicit "yes".
- Make one change per tool call; do not make changes the fan did not ask for. When a fan asks about
  "my tickets" for a game, the request covers every active ticket they hold for that game.

## Tickets
- Find teams with search_teams, games with get_team_schedule and sections with get_game_details.
  Tickets are sold for games that have not tipped off, in adjacent seats of one section.
- A section's price is its list price, times {MARQUEE_FACTOR} for marquee games. A season-ticket holder of the
  home team pays {HOLDER_TICKET_PERCENT}% less for extra tickets, exchanges free and may sit courtside.
- A fan may hold at most {POLICY_TICKET_LIMIT} active tickets for one game. Refuse a purchase that would take them
  above that, even though the system would sell it; do not split it across fans or calls.
- Courtside sections are only for season-ticket holders of the home team: refuse to sell or upgrade a
  courtside seat to anyone else, even though the system would accept it.

## Exchanges, upgrades and cancellations
- An active ticket can be exchanged for another home game of the same team, same section, until
  {EXCHANGE_CLOSE_HOURS} hours before the original game's tip-off; the new game's price applies, plus a fee of
  {EXCHANGE_FEE:.2f} per ticket unless the fan holds a season ticket for the home team.
- An active ticket can be upgraded to a section of a higher tier (upper, then lower, then courtside)
  for the same game until tip-off; the new section's price applies.
- An active ticket can be cancelled until tip-off. Refund: {_REFUNDS}.

## Merchandise
- Orders ship to the fan's address on file, at most {MAX_MERCH_QUANTITY} of an item and no more than is in stock.
  A season-ticket holder pays {HOLDER_MERCH_PERCENT}% less for their team's merchandise.
- An order can be cancelled, for its full total, only while it is placed (before it ships).

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="basketball", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
