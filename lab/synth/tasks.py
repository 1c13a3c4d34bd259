"""Seeded task generation in tau2's task format, with golden actions found by running them.

Why run the chain instead of writing the actions down: the paper keeps a generated task only if its
golden actions execute and reach the intended state (§3.3). A template here says what the user knows
and wants (`Scenario`) and gives the agent's chain as code that calls the tools through `Golden` on a
private copy of the database: lookups first, then writes whose arguments come from what the lookups
returned. The chain returns the values the agent must tell the user (`communicate_info`), read from
tool results, never from the template's own view of the database.

A template only checks what its user would know (they have a savings account, a loan, a booking);
what the agent finds out (the balance is too low, the charge is too old) is left to the tools, so
some candidates fail and `lab.synth.verify` drops them, as the paper's filter does.

Difficulty evolution (the paper evolves seed tasks into harder ones): with probability
`TaskRecipe.evolve_share` a candidate gets a second, read-only request from the domain's
`follow_ups`, asked after the first is done, whose answer must be read after the writes. Refusal
templates (a request the policy forbids, so the golden chain has no write) live in each domain.

    task = make_task(bank.DOMAIN, bank_tasks.RECIPE, db, seed=7, index=0)  # a tasks.json entry or None
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lab.env.state import clone
from lab.synth.domain import Domain, seeded_rng

PERSONAS = (
    "You are polite and to the point.",
    "You are in a hurry and a little impatient.",
    "You are friendly and chatty, but you stay on topic.",
    "You are careful and like numbers repeated back to you.",
)
TASK_INSTRUCTIONS = ("Give the agent only what it asks for, from your known info. Say yes when the agent asks "
                     "you to confirm exactly what you asked for. If the agent refuses a request, accept it and "
                     "end the call.")
DIFFICULTIES = ("easy", "medium", "hard")


class GoldenFailed(Exception):
    """A golden call returned an error; the task keeps its actions so verification can count it."""


class Golden:
    """Runs a golden chain on a private copy of the database and records every call as an action."""

    def __init__(self, domain: Domain, db: dict[str, Any]) -> None:
        self.domain = domain
        self.db = clone(db)
        self.actions: list[dict[str, Any]] = []

    def __call__(self, name: str, **arguments: Any) -> Any:
        """The tool's result, parsed when it is JSON (an id comes back as the plain string)."""
        text, is_error = self.domain.call(self.db, name, arguments)
        self.actions.append({"name": name, "arguments": arguments})
        if is_error:
            raise GoldenFailed(text)
        try:
            return json.loads(text)
        except ValueError:
            return text


Chain = Callable[[Golden], list[str]]


@dataclass(frozen=True)
class Scenario:
    """One request: what the simulated user is told, and the agent's golden chain for it."""

    purpose: str
    reason_for_call: str
    known_info: str
    unknown_info: str
    chain: Chain
    difficulty: str


#: (db, subject id, rng) -> a scenario, or None when the subject does not fit the template.
Template = Callable[[dict[str, Any], str, random.Random], Scenario | None]


@dataclass(frozen=True)
class TaskRecipe:
    """How a domain's tasks are made: who they are about, the templates, and the evolution step."""

    subjects: Callable[[dict[str, Any]], list[str]]
    templates: dict[str, Template]
    follow_ups: dict[str, Template] = field(default_factory=dict)
    evolve_share: float = 0.3


@dataclass(frozen=True)
class Candidate:
    """A generated task with the facts the tasks.json entry does not hold as fields."""

    task: dict[str, Any]
    template: str
    difficulty: str


def evolve(base: Scenario, follow_up: Scenario) -> Scenario:
    """The base request plus a read-only second one, asked after it; one step harder."""
    def chain(golden: Golden) -> list[str]:
        return base.chain(golden) + follow_up.chain(golden)

    # Follow-ups state one sentence of identity ("Your email is ..."); the base may have said it already.
    known = base.known_info if follow_up.known_info in base.known_info else f"{base.known_info} {follow_up.known_info}"
    harder = DIFFICULTIES[min(DIFFICULTIES.index(base.difficulty) + 1, len(DIFFICULTIES) - 1)]
    return replace(base, purpose=f"{base.purpose} Then: {follow_up.purpose}",
                   reason_for_call=f"{base.reason_for_call} Once that is done, {follow_up.reason_for_call}",
                   known_info=known, chain=chain, difficulty=harder)


def make_task(domain: Domain, recipe: TaskRecipe, db: dict[str, Any], seed: int, index: int) -> Candidate | None:
    """Candidate number `index`: its template is the index-th in turn, its subject the first, in a
    seeded order, that fits. None when no subject fits. Each candidate has its own random stream, so
    candidate `index` is the same however many are made."""
    rng = seeded_rng(domain.name, "task", seed, index)
    names = list(recipe.templates)
    name = names[index % len(names)]
    subjects = recipe.subjects(db)
    for subject in rng.sample(subjects, len(subjects)):
        scenario = recipe.templates[name](db, subject, rng)
        if scenario is not None:
            break
    else:
        return None
    if recipe.follow_ups and rng.random() < recipe.evolve_share:
        follow_name = rng.choice(list(recipe.follow_ups))
        follow_up = recipe.follow_ups[follow_name](db, subject, rng)
        if follow_up is not None:
            scenario, name = evolve(scenario, follow_up), f"{name}+{follow_name}"
    golden = Golden(domain, db)
    try:
        communicate = scenario.chain(golden)
    except GoldenFailed:
        communicate = []  # the failing action stays last; verification drops the task
    task = tau2_task(str(index), domain, scenario, golden.actions, communicate, rng.choice(PERSONAS))
    return Candidate(task=task, template=name, difficulty=scenario.difficulty)


def tau2_task(task_id: str, domain: Domain, scenario: Scenario, actions: list[dict[str, Any]],
              communicate: list[str], persona: str) -> dict[str, Any]:
    """A tasks.json entry as tau2 writes one (`reward_basis` sits in `evaluation_criteria`, as there).

    `compare_args` names every argument, except for generic tools (a free-text summary or expression
    is not compared), so an action check never hits tau2's null quirk (TOOLS.md §3.4).
    """
    gold = [{"action_id": f"{task_id}_{k}", "name": action["name"], "arguments": action["arguments"],
             "compare_args": [] if domain.access(action["name"]) == "generic" else list(action["arguments"])}
            for k, action in enumerate(actions)]
    return {
        "id": task_id,
        "description": {"purpose": scenario.purpose, "relevant_policies": None,
                        "notes": f"Synthetic {domain.name} task, difficulty {scenario.difficulty}."},
        "user_scenario": {"persona": persona, "instructions": {
            "domain": domain.name, "reason_for_call": scenario.reason_for_call, "known_info": scenario.known_info,
            "unknown_info": scenario.unknown_info, "task_instructions": TASK_INSTRUCTIONS}},
        "initial_state": None,
        "evaluation_criteria": {"actions": gold, "env_assertions": None, "communicate_info": communicate,
                                "nl_assertions": None,
                                "reward_basis": ["DB", "COMMUNICATE"] if communicate else ["DB"]},
    }


def records_of(db: dict[str, Any], table: str, owner_field: str, owner_id: str, **match: Any) -> list[dict[str, Any]]:
    """The records of `table` whose `owner_field` is `owner_id` and whose fields equal `match`, by id:
    what a template looks through to find a subject's booking, ticket or order."""
    rows = (r for r in db[table].values() if r[owner_field] == owner_id and all(r[k] == v for k, v in match.items()))
    return sorted(rows, key=lambda r: next(iter(r.values())))


def user_visible_text(task: dict[str, Any]) -> str:
    """Everything the simulated user (and so the agent, through the user) can know without tools."""
    visible = {"description": task["description"], "user_scenario": task["user_scenario"]}
    return json.dumps(visible, ensure_ascii=False)
