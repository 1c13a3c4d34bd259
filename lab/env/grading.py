"""Grading a trajectory by the state it leaves: tau2-bench's criteria, and the offline world's check.

tau2's criteria (TOOLS.md §3 of `shared/benchmarks/tau2/retail`) are kept apart because reports must
say which were judged: `db` (the replayed end state against the expected one), `communicate` (what the
user had to be told), `actions` (the golden actions), and `nl` (NL assertions, which need a judge
model; without one they are "not judged", None, never silently passed). `outcome_of` multiplies the
judged criteria of the task's reward basis.

The world's bookshop is graded more strictly (`state_check`): the live end state must equal the
expected one, and no write the golden plan does not make may have been attempted, even one the shop
refused (a forbidden cancel is a policy breach).
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterable
from typing import Any

from lab.env.replay import ExpectedStates, run_actions
from lab.env.state import Session, canonical_hash
from lab.task import Task

# ---- tau2's criteria (§3.2-§3.5) --------------------------------------------------------------------


def db_matches(predicted: dict, gold: dict) -> bool:
    """tau2's DB check: the canonical hashes are equal.

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


def criteria_of(task: Task, db_ok: bool, calls: list[dict[str, Any]], agent_texts: list[str]) -> dict[str, bool | None]:
    """Every criterion of one trajectory: `{"db", "communicate", "actions", "nl"}`, each True, False or
    None (not judged). `task` is a `BenchmarkTask` (its answer the golden actions, its meta the rest).
    NL assertions need a judge model; none is configured here, so a task that has some gets None, and
    one with none gets True (tau2 scores an empty list 1.0 without a call)."""
    meta = task.meta if hasattr(task, "meta") else {}
    return {
        "db": db_ok,
        "communicate": communicate_ok(meta.get("communicate_info"), agent_texts),
        "actions": actions_ok(list(task.answer or []), calls),
        "nl": None if meta.get("nl_assertions") else True,
    }


#: tau2's reward-basis names -> the criterion each one multiplies in; a task without a basis uses DEFAULT_BASIS.
BASIS_CRITERION = {"DB": "db", "ENV_ASSERTION": "db", "COMMUNICATE": "communicate", "ACTION": "actions",
                   "NL_ASSERTION": "nl", "NL_ASSERTIONS": "nl"}
DEFAULT_BASIS = ("DB", "COMMUNICATE")


def outcome_of(criteria: dict[str, bool | None], reward_basis: list[str] | None) -> float:
    """1.0 when every judged criterion of the task's basis passed, else 0.0; criteria that were not
    judged (None) are left out here, and stay null in the stored `criteria_json`."""
    names = {BASIS_CRITERION[b] for b in (reward_basis or DEFAULT_BASIS) if b in BASIS_CRITERION}
    return float(all(criteria[name] for name in names if criteria.get(name) is not None))


# ---- NL assertions (§3.5), with a judge model ---------------------------------------------------------

_JUDGE_GUIDE = """You judge a customer-service conversation. For each expected outcome below, decide from the
conversation alone whether it was met. Reply with JSON only, in this form:
{"results": [{"expectedOutcome": "<the outcome>", "reasoning": "<one sentence>", "metExpectation": true}]}"""


async def judge_nl(tool: Any, assertions: list[str],
                   conversation: list[dict[str, Any]]) -> tuple[bool | None, str | None]:
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


# ---- the world's stricter check --------------------------------------------------------------------

_EXPECTED = ExpectedStates()


def expected_state(task: Task, session: Session) -> dict[str, Any]:
    """The database a perfect agent leaves behind: the task's golden actions run on a fresh copy of the
    session's start state (once per task and start state; the entry keeps that state alive, so its
    `id` cannot be reused by another)."""
    initial = session.initial
    return _EXPECTED.get((task.task_id, id(initial)),
                         lambda: (initial, run_actions(session.env, initial, list(task.answer))))[1]


def state_check(task: Task, session: Session) -> tuple[bool, str]:
    """(passed, why): the session attempted no write the golden plan does not make, and its database
    equals the expected one (dict equality: key order is ignored)."""
    golden_writes = [(a.get("name"), a.get("arguments")) for a in task.answer if isinstance(a, dict)]
    for call in session.calls:
        if session.env.access(call["name"]) == "write" and (call["name"], call["arguments"]) not in golden_writes:
            return False, f"attempted a write the task does not call for: {call['name']}"
    want = expected_state(task, session)
    if want == session.db:
        return True, "final database matches the golden actions"
    return False, "final database differs: " + ", ".join(_differences(want, session.db))


def _differences(want: dict, got: dict) -> list[str]:
    """The first five `table/id` records that differ, tables in the expected database's order."""
    diffs = []
    for table in want:
        keys = sorted(set(want.get(table, {})) | set(got.get(table, {})))
        diffs += [f"{table}/{k}" for k in keys if want.get(table, {}).get(k) != got.get(table, {}).get(k)]
    return diffs[:5] or ["(structure)"]
