"""FRAMES-like multi-hop questions over the world graph (2-4 hops), answerable only from the corpus.

Each template walks a chain of linking facts from an entity the question names (so the first search
can find it) to the answer. The task records, per hop, the fact sentence (`evidence`), the document
holding it (`support_doc_ids`) and a query a per-hop searcher would issue (`meta["hop_queries"]`:
the entity reached so far plus the relation), which `lab.world.build.retrieval_recall` uses.

Difficulty: 2 hops easy, 3 medium, 4 hard; year arithmetic moves a question one level up and adds
`code` to its needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from lab.world.corpus import Entity, WorldGraph
from lab.world.task import WorldTask

_LEVELS = ["easy", "medium", "hard"]


@dataclass
class Hop:
    entity: Entity
    relation: str
    query: str


@dataclass
class Draft:
    question: str
    answer: str | int
    hops: list[Hop]
    numeric: bool = False


def _step(g: WorldGraph, ent: Entity, relation: str, attr: str, query_words: str) -> tuple[Hop, Entity]:
    return Hop(ent, relation, f"{ent.name} {query_words}"), g.get(ent.attrs[attr])


def _birth_region(g: WorldGraph, p: Entity) -> Draft:
    h1, town = _step(g, p, "birthplace", "birthplace", "born in town")
    h2, region = _step(g, town, "region", "region", "town region")
    return Draft(f"In which region is the town where {p.name} was born?", region.name, [h1, h2])


def _employer_founder(g: WorldGraph, p: Entity) -> Draft:
    h1, org = _step(g, p, "employer", "employer", "worked for")
    h2, founder = _step(g, org, "founder", "founder", "founded by")
    return Draft(f"Who founded the organisation that {p.name} worked for?", founder.name, [h1, h2])


def _org_region(g: WorldGraph, o: Entity) -> Draft:
    h1, town = _step(g, o, "hq", "hq", "headquartered in")
    h2, region = _step(g, town, "region", "region", "town region")
    return Draft(f"In which region is the {o.name} headquartered?", region.name, [h1, h2])


def _event_founder(g: WorldGraph, e: Entity) -> Draft:
    h1, org = _step(g, e, "organiser", "organiser", "organised by")
    h2, founder = _step(g, org, "founder", "founder", "founded by")
    return Draft(f"Who founded the organisation that organised the {e.name}?", founder.name, [h1, h2])


def _founder_age(g: WorldGraph, o: Entity) -> Draft:
    h1, founder = _step(g, o, "founder", "founder", "founded by")
    h2 = Hop(founder, "birthplace", f"{founder.name} born")
    age = o.attrs["founded"] - founder.attrs["born"]
    return Draft(f"How many years after its founder's birth was the {o.name} founded?", age, [h1, h2], numeric=True)


def _birth_region_founder(g: WorldGraph, p: Entity) -> Draft:
    d = _birth_region(g, p)
    region = g.get(g.get(p.attrs["birthplace"]).attrs["region"])
    h3 = Hop(region, "founder", f"region of {region.name} founded by")
    return Draft(f"Who founded the region that contains the birthplace of {p.name}?",
                 g.get(region.attrs["founder"]).name, [*d.hops, h3])


def _event_region_year(g: WorldGraph, e: Entity) -> Draft:
    h1, town = _step(g, e, "place", "place", "held in")
    h2, region = _step(g, town, "region", "region", "town region")
    h3 = Hop(region, "founder", f"region of {region.name} founded in")
    return Draft(f"In what year was the region in which the {e.name} was held founded?",
                 region.attrs["founded"], [h1, h2, h3], numeric=True)


def _employer_founder_town(g: WorldGraph, p: Entity) -> Draft:
    h1, org = _step(g, p, "employer", "employer", "worked for")
    h2, founder = _step(g, org, "founder", "founder", "founded by")
    h3, town = _step(g, founder, "birthplace", "birthplace", "born in town")
    return Draft(f"In which town was the founder of the organisation that {p.name} worked for born?",
                 town.name, [h1, h2, h3])


def _mentor_employer_hq(g: WorldGraph, p: Entity) -> Draft | None:
    if not p.attrs["mentor"]:
        return None
    h1, mentor = _step(g, p, "mentor", "mentor", "apprentice under")
    h2, org = _step(g, mentor, "employer", "employer", "worked for")
    h3, town = _step(g, org, "hq", "hq", "headquartered in")
    return Draft(f"In which town is the organisation that {p.name}'s mentor worked for headquartered?",
                 town.name, [h1, h2, h3])


def _event_org_region_founder(g: WorldGraph, e: Entity) -> Draft:
    h1, org = _step(g, e, "organiser", "organiser", "organised by")
    h2, town = _step(g, org, "hq", "hq", "headquartered in")
    h3, region = _step(g, town, "region", "region", "town region")
    h4 = Hop(region, "founder", f"region of {region.name} founded by")
    return Draft(f"Who founded the region where the organiser of the {e.name} has its headquarters?",
                 g.get(region.attrs["founder"]).name, [h1, h2, h3, h4])


def _mentor_region_year(g: WorldGraph, p: Entity) -> Draft | None:
    if not p.attrs["mentor"]:
        return None
    h1, mentor = _step(g, p, "mentor", "mentor", "apprentice under")
    h2, town = _step(g, mentor, "birthplace", "birthplace", "born in town")
    h3, region = _step(g, town, "region", "region", "town region")
    h4 = Hop(region, "founder", f"region of {region.name} founded in")
    return Draft(f"In what year was the region containing the birthplace of {p.name}'s mentor founded?",
                 region.attrs["founded"], [h1, h2, h3, h4], numeric=True)


def _event_org_age(g: WorldGraph, e: Entity) -> Draft:
    h1, org = _step(g, e, "organiser", "organiser", "organised by")
    h2 = Hop(org, "founder", f"{org.name} founded in")
    gap = e.attrs["year"] - org.attrs["founded"]
    return Draft(f"How many years after the founding of its organiser was the {e.name} held?",
                 gap, [Hop(e, "place", f"{e.name} held in year"), h1, h2], numeric=True)


#: (start kind, template); the order is cycled so every template is used about equally often.
TEMPLATES: list[tuple[str, Callable[[WorldGraph, Entity], Draft | None]]] = [
    ("person", _birth_region), ("person", _employer_founder), ("org", _org_region), ("event", _event_founder),
    ("org", _founder_age), ("person", _birth_region_founder), ("event", _event_region_year),
    ("person", _employer_founder_town), ("person", _mentor_employer_hq), ("event", _event_org_region_founder),
    ("person", _mentor_region_year), ("event", _event_org_age),
]


def _difficulty(draft: Draft) -> str:
    level = min(len({h.entity.id for h in draft.hops}), 4) - 2 + (1 if draft.numeric else 0)
    return _LEVELS[max(0, min(level, 2))]


def make_multihop_tasks(graph: WorldGraph, n: int, rng: random.Random) -> list[WorldTask]:
    """`n` distinct questions, templates cycled, start entities drawn without replacement per kind."""
    pools = {k: rng.sample(graph.by_kind[k], len(graph.by_kind[k])) for k in ("person", "org", "event")}
    tasks: list[WorldTask] = []
    seen: set[str] = set()
    attempts = 0
    while len(tasks) < n and attempts < n * 20:
        kind, template = TEMPLATES[attempts % len(TEMPLATES)]
        attempts += 1
        if not pools[kind]:
            continue
        draft = template(graph, graph.get(pools[kind].pop()))
        if draft is None or draft.question in seen:
            continue
        seen.add(draft.question)
        tasks.append(_to_task(draft, len(tasks)))
    return tasks


def _to_task(draft: Draft, index: int) -> WorldTask:
    evidence = [h.entity.facts[h.relation] for h in draft.hops]
    doc_ids = list(dict.fromkeys(h.entity.id for h in draft.hops))
    return WorldTask(
        task_id=f"frames-{index:04d}",
        family="frames",
        domain="multihop",
        difficulty=_difficulty(draft),
        question=draft.question,
        answer=draft.answer,
        answer_type="numeric" if draft.numeric else "exact",
        evidence=evidence,
        support_doc_ids=doc_ids,
        needs=["retrieval", "code"] if draft.numeric else ["retrieval"],
        meta={"hops": len(doc_ids), "hop_queries": [h.query for h in draft.hops],
              "hop_doc_ids": [h.entity.id for h in draft.hops]},
    )
