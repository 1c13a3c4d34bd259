"""The basketball domain's records and seeded data: teams, arenas with seat sections, players, a season
schedule, fans, tickets, merchandise and merchandise orders.

Why apart from the tools (`lab.synth.domains.basketball`): the schema and the generator are the
domain's "database schema + data" half (paper §3.3) and read on their own; the seat, price, refund
and standings rules (`taken_seats`, `ticket_price`, `refund_percent`, `standings`) live here too
because the generator sells its tickets by them, as the tools do.

Eight teams in two conferences, each with its own arena (courtside, lower and upper sections, a list
price per section), eight players with season averages, and five products in stock per size. The
schedule is a triple round robin, one round every three days, a month of it played (final scores)
and a month to come. Each fan holds zero to three purchases of one to three adjacent seats (past
games used, upcoming ones active, a few cancelled or already exchanged) and may have merchandise
orders; about a third hold a season ticket for their favourite team. A season ticket is a status
here, not a set of ticket records: it gives a discount on extra tickets and that team's merchandise,
free exchanges, and courtside access (policy). Times are "HH:MM", dates ISO days; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng
from lab.synth.people import Address

NOW = "2025-12-09T11:00:00"
TODAY = date(2025, 12, 9)
#: Refund of a cancelled ticket by hours to tip-off: (at least this many hours, percent back).
REFUND_SCALE = ((168, 100), (48, 50), (0, 0))
#: Exchanges close this many hours before the original game's tip-off.
EXCHANGE_CLOSE_HOURS = 48
EXCHANGE_FEE = 10.0  # per ticket, waived for season-ticket holders of the home team
MARQUEE_FACTOR = 1.3
HOLDER_TICKET_PERCENT = 15
HOLDER_MERCH_PERCENT = 10
MAX_TICKETS_PER_CALL = 8
#: Policy only: the most active tickets one fan may hold for one game.
POLICY_TICKET_LIMIT = 4
MAX_MERCH_QUANTITY = 5
#: Section tiers from cheapest to dearest; an upgrade moves up this order.
TIERS = ("upper", "lower", "courtside")

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]
Tier = Literal["upper", "lower", "courtside"]
CONFERENCES = ("East", "West")
Conference = Literal["East", "West"]


class Section(Record):
    code: str
    tier: Tier
    capacity: Annotated[int, Field(ge=1)]
    price: Money


class Arena(Record):
    arena_id: str
    name: str
    city: str
    sections: list[Section]


class Team(Record):
    team_id: str
    name: str
    city: str
    conference: Conference
    arena_id: str


class Player(Record):
    player_id: str
    team_id: str
    first_name: str
    last_name: str
    jersey_number: Annotated[int, Field(ge=0, le=99)]
    position: Literal["PG", "SG", "SF", "PF", "C"]
    games_played: Count
    points_per_game: Money
    rebounds_per_game: Money
    assists_per_game: Money


class Game(Record):
    game_id: str
    home_team_id: str
    away_team_id: str
    arena_id: str
    date: Day
    tip_off: Clock
    status: Literal["scheduled", "final"]
    home_score: Count | None
    away_score: Count | None
    price_level: Literal["regular", "marquee"]


class Fan(Record):
    fan_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    address: Address
    favorite_team_id: str
    season_ticket_team_id: str | None


class Ticket(Record):
    ticket_id: str
    fan_id: str
    game_id: str
    section: str
    seat: str
    price: Money
    status: Literal["active", "used", "cancelled"]
    refund: Money
    exchanges: Count
    fees: Money
    bought_at: str


class Product(Record):
    product_id: str
    team_id: str
    name: str
    category: Literal["jersey", "hoodie", "cap", "scarf"]
    price: Money
    stock: dict[str, Count]


class MerchOrder(Record):
    order_id: str
    fan_id: str
    product_id: str
    size: str
    quantity: Annotated[int, Field(ge=1)]
    unit_price: Money
    total: Money
    status: Literal["placed", "shipped", "delivered", "cancelled"]
    refund: Money
    ship_to: Address
    placed_at: str


TABLES: dict[str, type[Record]] = {"arenas": Arena, "teams": Team, "players": Player, "games": Game, "fans": Fan,
                                   "tickets": Ticket, "products": Product, "merch_orders": MerchOrder}

# ---- seats, prices, refunds and standings ----------------------------------------------------------


def hours_until(game: dict, now: str) -> float:
    """Hours from `now` until the game's tip-off (negative once it has started)."""
    days = (date.fromisoformat(game["date"]) - date.fromisoformat(now[:10])).days
    tip = int(game["tip_off"][:2]) * 60 + int(game["tip_off"][3:])
    return days * 24 + (tip - int(now[11:13]) * 60 - int(now[14:16])) / 60


def refund_percent(hours: float) -> int:
    """The share of the price a cancellation `hours` before tip-off gives back."""
    return next(percent for least, percent in REFUND_SCALE if hours >= least)


def section_of(arena: dict, code: str) -> dict | None:
    return next((s for s in arena["sections"] if s["code"] == code), None)


def is_holder(fan: dict, team_id: str) -> bool:
    return fan["season_ticket_team_id"] == team_id


def list_price(section: dict, game: dict) -> float:
    """A section's price for one game: its list price, times the marquee factor for marquee games."""
    return float(round(section["price"] * (MARQUEE_FACTOR if game["price_level"] == "marquee" else 1.0), 2))


def ticket_price(section: dict, game: dict, fan: dict) -> float:
    """What the fan pays for a seat in the section: the game's list price, less the season-ticket
    discount when the fan holds a season ticket for the home team, to the cent."""
    percent = HOLDER_TICKET_PERCENT if is_holder(fan, game["home_team_id"]) else 0
    return float(round(list_price(section, game) * (100 - percent) / 100, 2))


def merch_price(product: dict, fan: dict) -> float:
    """A product's price for the fan: less the season-ticket discount on their team's merchandise."""
    percent = HOLDER_MERCH_PERCENT if is_holder(fan, product["team_id"]) else 0
    return float(round(product["price"] * (100 - percent) / 100, 2))


def taken_seats(db: dict, game_id: str) -> set[str]:
    """The seats active tickets hold for the game, in every section."""
    return {t["seat"] for t in db["tickets"].values() if t["game_id"] == game_id and t["status"] == "active"}


def free_seats(section: dict, taken: set[str]) -> list[str]:
    """The section's seats not in `taken` (see `taken_seats`), lowest first, e.g. '104-07'."""
    labels = (f"{section['code']}-{n:02d}" for n in range(1, section["capacity"] + 1))
    return [label for label in labels if label not in taken]


def standings(db: dict, conference: str) -> list[dict]:
    """A conference's teams ranked by win share of their final games (then wins, then id), with the
    record as 'W-L' and games behind the leader."""
    rows = []
    for team in (t for t in db["teams"].values() if t["conference"] == conference):
        wins = losses = 0
        for game in db["games"].values():
            if game["status"] != "final" or team["team_id"] not in (game["home_team_id"], game["away_team_id"]):
                continue
            home_won = game["home_score"] > game["away_score"]
            won = home_won == (game["home_team_id"] == team["team_id"])
            wins, losses = wins + won, losses + (not won)
        rows.append({"team_id": team["team_id"], "name": team["name"], "wins": wins, "losses": losses})
    rows.sort(key=lambda r: (-r["wins"] / max(r["wins"] + r["losses"], 1), -r["wins"], r["team_id"]))
    leader = rows[0]
    return [{"rank": rank, **row, "record": f"{row['wins']}-{row['losses']}",
             "games_behind": ((leader["wins"] - row["wins"]) + (row["losses"] - leader["losses"])) / 2}
            for rank, row in enumerate(rows, start=1)]


# ---- seeded data -----------------------------------------------------------------------------------

#: (city, nickname, arena, conference); the cities are `people.CITIES`, so fans' addresses fit.
_TEAMS = (("Ashbury", "Comets", "Comet Dome", "East"), ("Brookhaven", "Herons", "Heron Pavilion", "East"),
          ("Calder", "Miners", "The Mineshaft", "East"), ("Dunmore", "Stags", "Stag Hall", "East"),
          ("Eastwick", "Tides", "Tidewater Center", "West"), ("Fairhollow", "Foxes", "Foxden Arena", "West"),
          ("Glenrock", "Summit", "Summit Fieldhouse", "West"), ("Harrowgate", "Hawks", "Hawk Garden", "West"))
_TIP_OFFS = ("19:00", "19:30", "20:00", "20:30")
_ROUND_DAYS = 3
_FIRST_ROUND = TODAY - timedelta(days=32)
#: (name, category, list price, sizes); one-size items have the single size 'one size'.
_PRODUCTS = (("Home Jersey", "jersey", 95.0, ("S", "M", "L", "XL", "XXL")),
             ("Away Jersey", "jersey", 95.0, ("S", "M", "L", "XL", "XXL")),
             ("Hoodie", "hoodie", 70.0, ("S", "M", "L", "XL")),
             ("Snapback Cap", "cap", 32.0, ("one size",)), ("Scarf", "scarf", 24.0, ("one size",)))
_POSITIONS = ("PG", "SG", "SF", "PF", "C", "PG", "SF", "C")


def _arena(rng: Any, arena_id: str, name: str, city: str) -> dict:
    sections = [Section(code=f"CS{k}", tier="courtside", capacity=rng.choice((8, 10)),
                        price=float(rng.randrange(300, 451, 25))) for k in range(1, rng.randint(1, 2) + 1)]
    for tier, first_code, capacities, (low, high, step) in (("lower", 101, (24, 30, 36), (80, 141, 5)),
                                                           ("upper", 201, (40, 50, 60), (28, 61, 2))):
        sections += [Section(code=str(first_code + k), tier=tier, capacity=rng.choice(capacities),
                             price=float(rng.randrange(low, high, step))) for k in range(rng.randint(3, 4))]
    return Arena(arena_id=arena_id, name=name, city=city, sections=sections).model_dump(mode="json")


def _pairings(team_ids: list[str]) -> list[list[tuple[str, str]]]:
    """Seven rounds in which every team meets every other once (the circle method), as (home, away)."""
    ids, rounds = list(team_ids), []
    for number in range(len(ids) - 1):
        pairs = [(ids[k], ids[-1 - k]) for k in range(len(ids) // 2)]
        rounds.append([(a, b) if (number + k) % 2 else (b, a) for k, (a, b) in enumerate(pairs)])
        ids = [ids[0], ids[-1], *ids[1:-1]]
    return rounds


def _schedule(db: dict, rng: Any) -> None:
    """Three passes of the round robin (the second with home and away swapped), one round every three days."""
    rounds = _pairings(sorted(db["teams"]))
    passes = [rounds, [[(b, a) for a, b in r] for r in rounds], [[p if rng.random() < 0.5 else p[::-1] for p in r]
                                                                 for r in rounds]]
    for number, pairs in enumerate(r for each in passes for r in each):
        for home, away in pairs:
            day = _FIRST_ROUND + timedelta(days=number * _ROUND_DAYS + rng.randint(0, 1))
            game = {"game_id": next_id(db["games"], "GM-", 4), "home_team_id": home, "away_team_id": away,
                    "arena_id": db["teams"][home]["arena_id"], "date": day.isoformat(),
                    "tip_off": rng.choice(_TIP_OFFS), "price_level": "marquee" if rng.random() < 0.25 else "regular"}
            played = f"{game['date']}T{game['tip_off']}" < NOW
            home_score, away_score = rng.randint(92, 128), rng.randint(88, 124)
            if home_score == away_score:
                home_score += rng.randint(1, 6)  # overtime
            db["games"][game["game_id"]] = Game(
                **game, status="final" if played else "scheduled", home_score=home_score if played else None,
                away_score=away_score if played else None).model_dump(mode="json")


def _player(db: dict, rng: Any, team_id: str, slot: int, name: tuple[str, str], number: int, played: int) -> None:
    position = _POSITIONS[slot]
    star = slot == 0
    points = rng.uniform(21, 30) if star else rng.uniform(3, 18)
    rebounds = rng.uniform(6, 13) if position in ("PF", "C") else rng.uniform(1.5, 6)
    assists = rng.uniform(5, 10) if position == "PG" else rng.uniform(0.5, 4)
    player_id = next_id(db["players"], "PL-", 3)
    db["players"][player_id] = Player(
        player_id=player_id, team_id=team_id, first_name=name[0], last_name=name[1], jersey_number=number,
        position=position, games_played=max(played - rng.choice((0, 0, 0, 1, 3)), 0),
        points_per_game=round(points, 1), rebounds_per_game=round(rebounds, 1),
        assists_per_game=round(assists, 1)).model_dump(mode="json")


def _purchase(db: dict, rng: Any, fan: dict) -> None:
    """One to three adjacent seats for one game, more often one to come: used if it was played, else
    active (a few cancelled)."""
    upcoming = rng.random() < 0.6
    game = db["games"][rng.choice(sorted(g for g, game in db["games"].items()
                                         if (game["status"] == "scheduled") == upcoming))]
    if any(t["fan_id"] == fan["fan_id"] and t["game_id"] == game["game_id"] for t in db["tickets"].values()):
        return
    arena = db["arenas"][game["arena_id"]]
    allowed = [s for s in arena["sections"] if s["tier"] != "courtside" or is_holder(fan, game["home_team_id"])]
    section = rng.choice(allowed)
    seats = free_seats(section, taken_seats(db, game["game_id"]))[:rng.choice((1, 2, 2, 3))]
    played = game["status"] == "final"
    status = "used" if played else rng.choice(("active",) * 5 + ("cancelled",))
    exchanged = status == "active" and rng.random() < 0.15
    bought = min(date.fromisoformat(game["date"]), TODAY) - timedelta(days=rng.randint(3, 20))
    for seat in seats:
        price = ticket_price(section, game, fan)
        ticket_id = next_id(db["tickets"], "TKT-", 5)
        db["tickets"][ticket_id] = Ticket(
            ticket_id=ticket_id, fan_id=fan["fan_id"], game_id=game["game_id"], section=section["code"], seat=seat,
            price=price, status=status, refund=price if status == "cancelled" else 0.0, exchanges=int(exchanged),
            fees=EXCHANGE_FEE if exchanged and not is_holder(fan, game["home_team_id"]) else 0.0,
            bought_at=f"{bought.isoformat()}T18:30:00").model_dump(mode="json")


def _merch_order(db: dict, rng: Any, fan: dict) -> None:
    product = db["products"][rng.choice(sorted(db["products"]))]
    size, quantity = rng.choice(sorted(product["stock"])), rng.choice((1, 1, 1, 2))
    age = rng.randint(0, 20)
    placed = TODAY - timedelta(days=age)
    status = "placed" if age < 5 else "shipped" if age < 10 else "delivered"
    unit = merch_price(product, fan)
    order_id = next_id(db["merch_orders"], "ORD-", 4)
    db["merch_orders"][order_id] = MerchOrder(
        order_id=order_id, fan_id=fan["fan_id"], product_id=product["product_id"], size=size, quantity=quantity,
        unit_price=unit, total=float(round(unit * quantity, 2)), status=status, refund=0.0, ship_to=fan["address"],
        placed_at=f"{placed.isoformat()}T12:15:00").model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """Teams, arenas, rosters, the schedule, merchandise and `size` fans with tickets and orders."""
    rng = seeded_rng("basketball", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    for number, (city, nickname, arena_name, conference) in enumerate(_TEAMS, start=1):
        team_id, arena_id = f"TM-{number:02d}", f"AR-{number:02d}"
        db["arenas"][arena_id] = _arena(rng, arena_id, arena_name, city)
        db["teams"][team_id] = Team(team_id=team_id, name=f"{city} {nickname}", city=city, conference=conference,
                                    arena_id=arena_id).model_dump(mode="json")
    _schedule(db, rng)
    roster_size = len(_POSITIONS)
    names = people.unique_people(rng, roster_size * len(_TEAMS) + size)
    for index, team_id in enumerate(sorted(db["teams"])):
        played = sum(g["status"] == "final" and team_id in (g["home_team_id"], g["away_team_id"])
                     for g in db["games"].values())
        numbers = rng.sample(range(0, 56), roster_size)
        for slot in range(roster_size):
            _player(db, rng, team_id, slot, names[index * roster_size + slot], numbers[slot], played)
        for name, category, price, sizes in _PRODUCTS:
            product_id = next_id(db["products"], "PRD-", 3)
            db["products"][product_id] = Product(
                product_id=product_id, team_id=team_id, name=f"{db['teams'][team_id]['name']} {name}",
                category=category, price=price,
                stock={s: rng.choice((0, 4, 9, 15, 22)) for s in sizes}).model_dump(mode="json")
    phones: set[str] = set()
    for index, (first, last) in enumerate(names[roster_size * len(_TEAMS):]):
        favorite = rng.choice(sorted(db["teams"]))
        fan = Fan(fan_id=f"FAN-{1001 + index}", first_name=first, last_name=last,
                  email=people.email(first, last, "hoops.example"), phone=people.phone(rng, phones),
                  address=people.address(rng), favorite_team_id=favorite,
                  season_ticket_team_id=favorite if rng.random() < 0.3 else None).model_dump(mode="json")
        db["fans"][fan["fan_id"]] = fan
        for _ in range(rng.randint(0, 3)):
            _purchase(db, rng, fan)
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            _merch_order(db, rng, fan)
    return db
