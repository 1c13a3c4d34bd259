"""The prompts of the LLM-driven ToolScale generator, one per stage of the paper's pipeline (§3.3).

Each prompt states the exact output contract its gate checks (`lab.synth.llm_generate`), so a
rejected answer can be retried with the gate's own words. What the LLM sees of earlier stages is
what it needs to stay consistent: the schema when writing models, the models and a sample of the
records when writing tools, the tool schemas and the records when writing tasks.
"""

from __future__ import annotations

import json
from typing import Any

#: One line per domain of the paper, so the ten names mean what the authors' domains mean.
DESCRIPTIONS = {
    "bank": "a retail bank's phone desk: customers, accounts, cards, transfers, loans",
    "basketball": "a basketball league's fan desk: teams, games, seats, tickets, merchandise",
    "ecommerce": "an online shop's support desk: customers, products and variants, orders, returns",
    "medicine": "a clinic network's patient line: patients, doctors, appointments, prescriptions",
    "movie": "a cinema chain's booking line: cinemas, films, showtimes, seats, bookings, members",
    "railway": "a rail operator's booking line: stations, trains, passengers, tickets, passes",
    "restaurant": "a restaurant group's line: restaurants, tables, reservations, menus, orders",
    "school": "a school district's family office: students, guardians, classes, enrolments, fees",
    "travel": "a travel agency's desk: customers, hotels, rooms, tours, bookings, insurance",
    "weather": "a weather service's subscriber desk: locations, forecasts, alerts, subscriptions",
}

FIELD_TYPES = "str, int, float, bool, list[str]"

SCHEMA = """You design the database of a customer-service domain for training tool-using agents.
Domain: {name} ({description}). Variation seed: {seed}.

Return one JSON object in a ```json block:
{{"tables": [{{"name": "<plural snake_case>", "id_field": "<first field>", \
"fields": [{{"name": "...", "type": "<{types}>", "description": "..."}}]}}],
  "policy": "<markdown: the rules a service agent must follow: how to identify the user, what needs the user's \
explicit confirmation, limits and deadlines, and at least one rule the tools themselves will not enforce>"}}
Rules: 3 to 6 tables; each table's first field is its id (type str); a field that refers to another
table is named exactly like that table's id field; every date or time is an ISO string (type str)."""

MODELS = """Write the pydantic v2 record models for this database schema:
{schema}

Return one ```python block. `Record` (a BaseModel that forbids unknown fields) is already defined:
subclass it, one class per table, fields in the schema's order with the schema's types, and end with
MODELS = {{"<table name>": <class>, ...}} naming every table. No imports other than typing, no I/O."""

RECORDS = """Write the initial data for this database (variation seed {seed}):
{schema}

Return one ```json block: {{"<table name>": [<record>, ...], ...}} with {count} records per table.
Every record has every field of its table with a value of the field's type; ids are unique, short
and readable (e.g. "CUS-1001"); every reference to another table's id exists there; names, emails,
amounts and dates are realistic and varied. Dates lie around {today}."""

TOOLKIT = """Write the agent's tools for this domain. The record models (already defined, with `Record`,
`ToolRefused` and `json` available) are:
```python
{models}
```
A sample of the data: {sample}
The policy: {policy}

Return one ```python block with {low} to {high} top-level functions and nothing that does I/O:
- each is `def name(db: dict, arg: <{types}>, ...) -> str`; `db` is {{table: {{id: record dict}}}};
- its docstring's first paragraph says what it does; then one line `arg: description` per argument;
- reads return JSON text (json.dumps) and never change db; writes check everything first, then change
  db (records are plain dicts) and return the changed record as JSON text or the new id;
- refuse with `raise ToolRefused("<what is wrong>")`; a tool that needs the current time takes a
  keyword-only `*, now: str` (an ISO time; never read the clock);
- at least {reads} reads (finding a user by identifying details, showing records) and at least {writes}
  writes (each a real change a customer would ask for);
- do not define calculate or transfer_to_human_agents (they exist already);
- end with TOOLS = {{"<name>": "read" | "write", ...}} for every tool and EXAMPLES = {{"<name>": {{<arguments>}}}}:
  for every tool, arguments that succeed on the sample data (each example runs on a fresh copy)."""

INTENTS = """Here is a customer-service domain (variation seed {seed}).
Policy: {policy}
Tools: {tools}
Data: {sample}

List {count} different things real users of this service call about, each about one specific user in the
data and needing the tools (at least one change to the database, or information only the database
holds). Mix easy, medium and hard requests, and include one or two the policy forbids.
Return one ```json block: [{{"user": "<who, as in the data>", "goal": "<what they want, one sentence>"}}, ...]"""

TASKS = """Turn each user request below into a task with the agent's golden tool calls, in this domain.
Policy: {policy}
Tools: {tools}
Data: {data}
Requests: {intents}

Return one ```json block: a list with one object per request:
{{"purpose": "<one line>", "reason_for_call": "<what the user says they want, in the second person>",
  "known_info": "<what the user knows: identifying details, no database ids unless users would know them>",
  "unknown_info": "<what the user does not know>",
  "actions": [{{"name": "<tool>", "arguments": {{...}}}}, ...],
  "communicate_info": ["<exact value the agent must tell the user, copied from a tool result>"]}}
The actions are what a careful agent following the policy calls, in order, starting from finding the
user; they must succeed on the data as given. A request the policy forbids has no writes."""

EVOLVE = """Make this task harder without making it ambiguous: add one constraint or complication (a second
request after the first, a condition the agent must check first, a detail that changes which record is
meant). Keep it solvable with these tools on the same data.
Tools: {tools}
Data: {data}
Task: {task}

Return one ```json block: the new task in the same shape (purpose, reason_for_call, known_info,
unknown_info, actions, communicate_info)."""

RETRY = """

Your previous answer failed this check: {problem}
Answer again in full, in the same format."""


def tool_lines(schemas: list[dict[str, Any]]) -> str:
    """The tools as one JSON line each: name, description, arguments with their types."""
    return "\n".join(json.dumps({"name": s["name"], "description": s["description"],
                                 "arguments": {k: v["type"] for k, v in s["parameters"]["properties"].items()}})
                     for s in schemas)
