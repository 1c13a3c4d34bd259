"""Small local lists of names, streets and cities, and seeded helpers that draw unique people from them.

Why written out here: data generation must run offline and give the same database from the same seed
on every machine, so nothing is downloaded and nothing depends on an installed name package. The
lists are short on purpose; uniqueness (one person per full name, one email, one phone) matters more
than variety, because a task identifies its user by what the user can say.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Annotated

from pydantic import Field

from lab.synth.domain import Record

FIRST_NAMES = (
    "Amara", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko", "Lars",
    "Maya", "Nikolai", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wim", "Ximena",
    "Yara", "Zoltan", "Aiden", "Beatriz", "Cyrus", "Daria", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jana",
)
LAST_NAMES = (
    "Abara", "Brandt", "Castillo", "Dovzhenko", "Eriksen", "Fontaine", "Galvez", "Haddad", "Ibsen", "Jovanovic",
    "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Sato", "Tanaka",
    "Ulloa", "Varga", "Weber", "Xu", "Yilmaz", "Zapata", "Almeida", "Berg", "Costa", "Dahl",
)
STREETS = (
    "Alder Lane", "Birch Road", "Canal Street", "Dockside Walk", "Elm Avenue", "Foundry Row", "Granary Court",
    "Heron Way", "Iris Close", "Juniper Drive", "Kestrel Place", "Linden Street", "Millpond Road", "North Parade",
    "Orchard Rise", "Pebble Lane", "Quayside", "Rowan Terrace", "Station Road", "Tannery Yard",
)
#: City -> the first two digits of its zip codes, so an address looks consistent.
CITIES = {
    "Ashbury": "14", "Brookhaven": "21", "Calder": "30", "Dunmore": "37", "Eastwick": "42", "Fairhollow": "51",
    "Glenrock": "58", "Harrowgate": "63", "Ironbridge": "70", "Juniper Falls": "77", "Kingsmere": "84",
    "Lakeport": "92",
}


def unique_people(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """`count` distinct (first name, last name) pairs; the lists hold 1,080 of them."""
    pairs = [(first, last) for first in FIRST_NAMES for last in LAST_NAMES]
    if count > len(pairs):
        raise ValueError(f"asked for {count} people, the name lists hold {len(pairs)} distinct full names")
    return rng.sample(pairs, count)


class Address(Record):
    """A postal address as the domains store it (what `address` draws)."""

    street: str
    city: str
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]


def address(rng: random.Random) -> dict[str, str]:
    """A street address with a zip code that fits its city."""
    city = rng.choice(sorted(CITIES))
    return {"street": f"{rng.randint(1, 250)} {rng.choice(STREETS)}", "city": city,
            "zip": f"{CITIES[city]}{rng.randint(100, 999)}"}


def phone(rng: random.Random, used: set[str]) -> str:
    """A fictional (555) phone number not yet in `used`; it is added there."""
    while True:
        number = f"+1-555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
        if number not in used:
            used.add(number)
            return number


def email(first: str, last: str, host: str) -> str:
    """first.last@host, lower case; unique because full names are."""
    return f"{first}.{last}@{host}".lower()


def date_between(rng: random.Random, first_year: int, last_year: int) -> str:
    """An ISO date from the start of `first_year` to the end of `last_year` (a birth date, an opening)."""
    start = date(first_year, 1, 1)
    return (start + timedelta(days=rng.randint(0, (date(last_year, 12, 31) - start).days))).isoformat()
