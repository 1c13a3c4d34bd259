"""tau2-bench's checks of a retail trajectory (TOOLS.md §3), and how they combine into one outcome.

Why replay rather than read the live database: tau2 rebuilds the agent's end state by re-executing its
write calls on a fresh database, so a check cannot be fooled by state a tool left behind, and a gold
state comes from the golden actions the same way. The criteria are kept apart (`judge_retail`) because
reports must say which were judged: NL assertions need a judge model, and without one they are
"not judged" (None), never silently passed.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterable
from typing import Any

from lab.benchmarks.tau2_retail import TOOL_TYPES, call, canonical_hash, copy_db
from lab.errors import LabInputError


def replay_writes(initial_db: dict, calls: Iterable[dict[str, Any]]) -> dict:
    """The predicted environment (§3.2): a copy of `initial_db` after the WRITE calls, in order.

    `calls` are `{name, arguments}` from the whole trajectory (assistant and user); reads, unknown names
    and failing writes change nothing.
    """
    db = copy_db(initial_db)
    for tool_call in calls:
        name = tool_call.get("name")
        if isinstance(name, str) and TOOL_TYPES.get(name) == "write":
            call(db, name, tool_call.get("arguments"))
    return db


def gold_db(task: Any, initial_db: dict) -> dict:
    """The gold environment (§3.2): a copy of `initial_db` after every golden action, reads included.

    `task` is a tasks.json entry or a `BenchmarkTask` from `load_tau2` (whose answer is the actions).
    A failing golden action changes nothing, as in tau2.
    """
    if isinstance(task, dict):
        actions, initial_state = (task.get("evaluation_criteria") or {}).get("actions"), task.get("initial_state")
    else:
        actions, initial_state = task.answer, task.meta.get("initial_state")
    if initial_state is not None:
        raise LabInputError("tau2 retail: tasks with an initial_state are not supported (none exist locally)")
    db = copy_db(initial_db)
    for action in actions or []:
        call(db, action["name"], action.get("arguments") or {})
    return db


def db_matches(predicted: dict, gold: dict) -> bool:
    """tau2's DB check: the canonical hashes are equal (retail has no user database).

    Why the marshal shortcut: equal marshal dumps mean the same types, values, float bits and key
    order, hence the same canonical JSON and hash; they take a third of the time of the JSON text,
    and a replay that matches is the common case. Any other pair is decided by the hashes.
    """
    return _identical(predicted, gold) or canonical_hash(predicted) == canonical_hash(gold)


def _identical(first: dict, second: dict) -> bool:
    try:  # version 2 writes floats as their bits and, unlike 3+, no back-references to shared objects
        return marshal.dumps(first, 2) == marshal.dumps(second, 2)
    except ValueError:  # an object marshal cannot write; only the hashes can tell
        return False


def communicate_ok(infos: list[str] | None, assistant_texts: Iterable[str | None]) -> bool:
    """Each info string occurs, case-insensitively, in some non-blank assistant message (§3.3).

    Unlike tau2, commas are removed from both sides, not from the message only: tau2 can never match
    an expected string that contains a comma, here "1,234.56" matches "$1234.56" and "$1,234.56".
    """
    texts = [text.lower().replace(",", "") for text in assistant_texts if isinstance(text, str) and text.strip()]
    return all(any(info.lower().replace(",", "") in text for text in texts) for info in infos or [])


def _action_matches(gold: dict, tool_call: dict) -> bool:
    if tool_call.get("name") != gold["name"]:
        return False
    called, expected = tool_call.get("arguments") or {}, gold.get("arguments") or {}
    names = gold.get("compare_args")
    names = list(called) if names is None else names  # null: the called arguments' names (tau2's quirk)
    return {k: expected[k] for k in names if k in expected} == {k: called[k] for k in names if k in called}


def actions_ok(gold_actions: list[dict], calls: list[dict[str, Any]]) -> bool:
    """Every golden action is matched by some call, reuse allowed (§3.4); values compare with `==`."""
    return all(any(_action_matches(gold, tool_call) for tool_call in calls) for gold in gold_actions)


# ---- the combined verdict (§3.6) --------------------------------------------------------------------

#: tau2's reward-basis names -> the criterion each one multiplies in; a task without a basis uses DEFAULT_BASIS.
BASIS_CRITERION = {"DB": "db", "ENV_ASSERTION": "db", "COMMUNICATE": "communicate", "ACTION": "actions",
                   "NL_ASSERTION": "nl", "NL_ASSERTIONS": "nl"}
DEFAULT_BASIS = ("DB", "COMMUNICATE")


def judge_retail(task: Any, initial_db: dict, gold: dict, calls: list[dict[str, Any]],
                 agent_texts: list[str]) -> dict[str, bool | None]:
    """Every criterion of one trajectory: `{"db", "communicate", "actions", "nl"}`, each True, False or
    None (not judged). NL assertions need a judge model; none is configured here, so a task that has
    some gets None, and one with none gets True (tau2 scores an empty list 1.0 without a call)."""
    meta = task.meta if hasattr(task, "meta") else {}
    return {
        "db": db_matches(replay_writes(initial_db, calls), gold),
        "communicate": communicate_ok(meta.get("communicate_info"), agent_texts),
        "actions": actions_ok(list(task.answer or []), calls),
        "nl": None if meta.get("nl_assertions") else True,
    }


def outcome_of(criteria: dict[str, bool | None], reward_basis: list[str] | None) -> float:
    """1.0 when every judged criterion of the task's basis passed, else 0.0; criteria that were not
    judged (None) are left out here, and stay null in the stored `criteria_json`."""
    names = {BASIS_CRITERION[b] for b in (reward_basis or DEFAULT_BASIS) if b in BASIS_CRITERION}
    return float(all(criteria[name] for name in names if criteria.get(name) is not None))


# ---- NL assertions (§3.5), with a judge model ---------------------------------------------------------

_JUDGE_GUIDE = """You judge a customer-service conversation. For each expected outcome below, decide from the
conversation alone whether it was met. Reply with JSON only, in this form:
{"results": [{"expectedOutcome": "<the outcome>", "reasoning": "<one sentence>", "metExpectation": true}]}"""


async def judge_nl(tool: Any, assertions: list[str], conversation: list[dict[str, Any]]) -> tuple[bool | None, str | None]:
    """(verdict, problem) of an LLM judge on the task's NL assertions over the whole conversation,
    rendered as tau2 renders it (`role: content` lines). Unlike tau2, a reply that is not the asked
    JSON, or that judges fewer outcomes than asked (tau2 scores an empty list 1.0), is not judged:
    (None, what was wrong), so a broken judge never passes a task."""
    transcript = "\n".join(f"{m.get('role')}: {m.get('content')}" for m in conversation if m.get("role") != "system")
    outcomes = "\n".join(f"- {a}" for a in assertions)
    prompt = f"{_JUDGE_GUIDE}\n\nExpected outcomes:\n{outcomes}\n\nConversation:\n{transcript}"
    observation = await tool.execute({"prompt": prompt})
    if observation.error is not None:
        return None, f"judge failed: {observation.error}"
    text = observation.text
    try:
        results = json.loads(text[text.index("{"): text.rindex("}") + 1])["results"]
        met = [bool(r["metExpectation"]) for r in results]
    except (ValueError, KeyError, TypeError):
        return None, f"judge reply is not the asked JSON: {text[:200]!r}"
    if len(met) < len(assertions):
        return None, f"judge judged {len(met)} of {len(assertions)} outcomes"
    return all(met), None
