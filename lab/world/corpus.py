"""The offline world's corpus: short documents about invented people, towns, regions, organisations
and events whose facts link across documents (the FRAMES-like setting of paper §4).

How it is made: `make_graph` draws a seeded entity graph (person born in a town, town in a region,
region founded by a person, organisation founded by a person and headquartered in a town, event held
in a town and organised by an organisation); `render_corpus` writes one ~60-120 word document per
entity. Every linking fact is one sentence that names both ends in full, so the same sentence is the
`evidence` string of the questions built on it (`lab.world.multihop`). Distractor sentences mention
other invented names, places and years so that a document is not just its facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from lab.world.names import NameForge

#: Share of documents per entity kind (people dominate, as in an encyclopedia).
KIND_SHARES = {"region": 0.015, "town": 0.15, "person": 0.47, "org": 0.2, "event": 0.165}

_PROFESSIONS = ["cartographer", "glassblower", "astronomer", "shipwright", "botanist", "archivist", "composer",
                "engineer", "physician", "weaver", "merchant", "poet", "surveyor", "clockmaker", "geologist"]
_ORG_KINDS = ["Guild", "Society", "Institute", "Company", "Foundry", "Academy", "Trading House", "Observatory"]
_ORG_FIELDS = ["shipbuilding", "optics", "textile", "printing", "river trade", "mapmaking", "medicine",
               "metalwork", "seed banking", "instrument making"]
_EVENT_KINDS = ["Fair", "Accord", "Exhibition", "Regatta", "Congress", "Festival", "Tournament", "Summit"]
_TERRAINS = ["hilly", "coastal", "forested", "marshy", "mountainous", "lowland", "lake-strewn"]
_TRADES = ["salt", "wool", "copper", "timber", "cider", "pottery", "ropes", "lace", "barley", "slate"]


class Document(BaseModel):
    """One corpus document, as written to `corpus.jsonl` and indexed by local search."""

    id: str = Field(description="Stable id `<kind>-<nnnn>`; equals the entity id it describes.")
    title: str = Field(description="The entity's name.")
    text: str = Field(description="Prose paragraph, ~60-120 words.")
    kind: str = Field(description="Entity kind: region, town, person, org or event.")


@dataclass
class Entity:
    """A node of the world graph; `attrs` holds years and links (ids of other entities)."""

    id: str
    kind: str
    name: str
    attrs: dict = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # relation -> verbatim fact sentence (no period)


@dataclass
class WorldGraph:
    entities: dict[str, Entity]
    by_kind: dict[str, list[str]]

    def of(self, kind: str) -> list[Entity]:
        return [self.entities[i] for i in self.by_kind[kind]]

    def get(self, entity_id: str) -> Entity:
        return self.entities[entity_id]


def kind_counts(n_docs: int) -> dict[str, int]:
    """Documents per kind for a corpus of `n_docs` (at least 2 regions so regions can differ)."""
    counts = {k: max(2, round(n_docs * share)) for k, share in KIND_SHARES.items()}
    counts["person"] += n_docs - sum(counts.values())  # rounding remainder goes to people
    return counts


def make_graph(n_docs: int, rng: random.Random, forge: NameForge) -> WorldGraph:
    """Draw the entity graph. Years are consistent: founders are adults when they found things."""
    counts = kind_counts(n_docs)
    entities: dict[str, Entity] = {}
    by_kind: dict[str, list[str]] = {k: [] for k in counts}

    def add(kind: str, name: str, **attrs) -> Entity:
        ent = Entity(id=f"{kind}-{len(by_kind[kind]):04d}", kind=kind, name=name, attrs=attrs)
        entities[ent.id] = ent
        by_kind[kind].append(ent.id)
        return ent

    for _ in range(counts["person"]):
        born = rng.randint(1620, 1900)
        add("person", forge.person(), born=born, died=born + rng.randint(38, 92),
            profession=rng.choice(_PROFESSIONS))
    people = by_kind["person"]
    for _ in range(counts["region"]):
        founder = entities[rng.choice(people)]
        add("region", forge.region(), founder=founder.id, founded=founder.attrs["born"] + rng.randint(28, 60),
            terrain=rng.choice(_TERRAINS))
    regions = by_kind["region"]
    for i in range(counts["town"]):
        region = regions[i % len(regions)] if i < len(regions) else rng.choice(regions)  # every region has a town
        add("town", forge.town(), region=region, founded=rng.randint(1100, 1800),
            population=rng.randint(800, 90000), river=forge.river(), trade=rng.choice(_TRADES))
    towns = by_kind["town"]
    for rid in regions:  # the capital is one of the region's own towns
        entities[rid].attrs["capital"] = rng.choice([t for t in towns if entities[t].attrs["region"] == rid])
    for _ in range(counts["org"]):
        founder = entities[rng.choice(people)]
        kind = rng.choice(_ORG_KINDS)
        add("org", forge.organisation(kind), founder=founder.id, founded=founder.attrs["born"] + rng.randint(24, 58),
            hq=rng.choice(towns), field=rng.choice(_ORG_FIELDS), staff=rng.randint(12, 4000))
    orgs = by_kind["org"]
    for pid in people:
        person = entities[pid]
        person.attrs["birthplace"] = rng.choice(towns)
        person.attrs["employer"] = rng.choice(orgs)
        older = [p for p in rng.sample(people, min(12, len(people)))
                 if 15 <= person.attrs["born"] - entities[p].attrs["born"] <= 45]
        person.attrs["mentor"] = older[0] if older else None
    for _ in range(counts["event"]):
        org = entities[rng.choice(orgs)]
        add("event", forge.event(rng.choice(_EVENT_KINDS)), organiser=org.id, place=rng.choice(towns),
            year=org.attrs["founded"] + rng.randint(1, 90), attendance=rng.randint(40, 20000))
    graph = WorldGraph(entities=entities, by_kind=by_kind)
    for ent in entities.values():
        ent.facts = _facts(ent, graph)
    return graph


def _facts(ent: Entity, g: WorldGraph) -> dict[str, str]:
    """The linking facts of one entity, each a self-contained sentence naming both ends."""
    a, n = ent.attrs, ent.name
    name = lambda key: g.get(a[key]).name  # noqa: E731 - tiny local reader
    if ent.kind == "person":
        facts = {"birthplace": f"{n} was born in {a['born']} in the town of {name('birthplace')}",
                 "employer": f"{n} worked for the {name('employer')} for most of a long career"}
        if a["mentor"]:
            facts["mentor"] = f"{n} trained as an apprentice under {name('mentor')}"
        return facts
    if ent.kind == "town":
        return {"region": f"{n} is a town in the region of {name('region')}",
                "founded": f"{n} was founded in {a['founded']}"}
    if ent.kind == "region":
        return {"founder": f"The region of {n} was founded in {a['founded']} by {name('founder')}",
                "capital": f"The capital of {n} is {name('capital')}"}
    if ent.kind == "org":
        return {"founder": f"The {n} was founded in {a['founded']} by {name('founder')}",
                "hq": f"The {n} is headquartered in {name('hq')}"}
    return {"place": f"The {n} was held in {name('place')} in {a['year']}",
            "organiser": f"The {n} was organised by the {name('organiser')}"}


def _distractors(ent: Entity, g: WorldGraph, rng: random.Random, forge: NameForge) -> list[str]:
    """Sentences that mention other names, places and years without linking facts questions rely on."""
    other_town = g.get(rng.choice(g.by_kind["town"])).name
    year = rng.randint(1600, 1950)
    a, n = ent.attrs, ent.name
    # Lambdas so only the entity's own kind is rendered (the attributes differ per kind).
    pool = {
        "person": lambda: [
            f"A cousin, {forge.person()}, settled in {other_town} in {year}.",
            f"Contemporaries described {n} as patient, exacting and fond of long walks.",
            f"{n} died in {a['died']}, and a small archive of letters survives.",
        ],
        "town": lambda: [
            f"{n} lies on the {a['river']} river and is known for its {a['trade']}.",
            f"Its population was recorded as {a['population']:,} at the last census.",
            f"Travellers sometimes confuse it with {other_town}, a smaller place further north.",
        ],
        "region": lambda: [
            f"Much of {n} is {a['terrain']} country crossed by old drove roads.",
            f"A boundary dispute with the people of {other_town} was settled in {year}.",
            f"Its council meets each spring, a custom said to date from {year}.",
        ],
        "org": lambda: [
            f"It specialises in {a['field']} and employs about {a['staff']:,} people.",
            f"A short-lived rival, the {forge.organisation('Circle')}, closed in {year}.",
            "Its founding charter is kept in a locked cabinet and shown to visitors once a year.",
        ],
        "event": lambda: [
            f"About {a['attendance']:,} people attended.",
            f"A smaller gathering in {other_town} in {year} is sometimes mistaken for it.",
            "Accounts of the proceedings were printed in several local newsletters.",
        ],
    }[ent.kind]()
    return pool


def _intro(ent: Entity, g: WorldGraph) -> str:
    a, n = ent.attrs, ent.name
    if ent.kind == "person":
        return f"{n} ({a['born']}-{a['died']}) was a {a['profession']}."
    if ent.kind == "town":
        return f"{n} is a market town with a long history."
    if ent.kind == "region":
        return f"{n} is a {a['terrain']} region."
    if ent.kind == "org":
        return f"The {n} is an organisation devoted to {a['field']}."
    return f"The {n} is remembered as a notable gathering."


def render_corpus(graph: WorldGraph, rng: random.Random, forge: NameForge) -> list[Document]:
    """One document per entity: intro, then facts and distractors in a seeded shuffled order."""
    docs = []
    for ent in graph.entities.values():
        body = [f + "." for f in ent.facts.values()] + _distractors(ent, graph, rng, forge)
        rng.shuffle(body)
        docs.append(Document(id=ent.id, title=ent.name, text=" ".join([_intro(ent, graph), *body]), kind=ent.kind))
    docs.sort(key=lambda d: d.id)
    return docs
