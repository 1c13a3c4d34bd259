"""School task templates: what a guardian calls the family office about, and the agent's golden chain
for each.

Nine templates: easy single writes (an absence reported ahead, an elective dropped), medium requests
found by description (an absence the school recorded, excused; the rest of a fee paid, found by what
the invoice is for; a course moved to the section in another period), two writes in one call (an
elective with a fee, enrolled in and paid at once from the invoice the enrolment returns; a move,
with the new address entered before the bus route that stops there), and two refusals, one per
policy-only rule, where the right chain reads what the guardian also asks and writes nothing: an
absence for a child the caller is not a listed guardian of (the caller even knows the student id),
and a bus route that does not stop in the child's home city. The evolution step adds a read-only
question (a course average, what is still owed in fees, the bus pickup time) asked after the
request is done.

Each chain identifies the guardian as the policy demands, by email or by name and phone, whichever
the scenario's known info gives, finds the child among the guardian's own students, and finds
enrolments, sections, invoices, absences and routes through the tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from lab.synth import people
from lab.synth.domains.school_data import TODAY, balance, clash, current_enrolments, is_school_day, route_for
from lab.synth.tasks import Golden, Scenario, TaskRecipe

UNKNOWN = "You do not know your guardian id or any student, enrolment, section, invoice, attendance or route ids."
_REASONS = {"illness": "of illness", "medical_appointment": "of a medical appointment",
            "family_emergency": "of a family emergency", "religious_observance": "of a religious holiday",
            "bereavement": "of a death in the family"}
_METHODS = {"card": "card", "bank_transfer": "bank transfer"}


def _children(db: dict, guardian_id: str) -> list[dict]:
    return sorted((s for s in db["students"].values() if guardian_id in s["guardian_ids"]),
                  key=lambda s: s["student_id"])


def _identity(db: dict, guardian_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    p = db["guardians"][guardian_id]
    if rng.random() < 0.5:
        return (f"You are {p['first_name']} {p['last_name']}. Your email is {p['email']}.",
                lambda g: g("find_guardian_by_email", email=p["email"]))
    return (f"You are {p['first_name']} {p['last_name']}. Your phone number is {p['phone']}.",
            lambda g: g("find_guardian_by_name_phone", first_name=p["first_name"], last_name=p["last_name"],
                        phone=p["phone"]))


def _find_child(g: Golden, guardian_id: str, first_name: str) -> dict:
    """The child's details, as the agent finds them among the guardian's own students."""
    ids = g("get_guardian_details", guardian_id=guardian_id)["student_ids"]
    return next(s for s in (g("get_student_details", student_id=i) for i in ids) if s["first_name"] == first_name)


def _class(g: Golden, student_id: str, course: str) -> dict:
    """The student's timetable entry for a course."""
    return next(row for row in g("get_student_schedule", student_id=student_id) if row["course"] == course)


def _section(g: Golden, school_id: str, course: str, period: int) -> dict:
    return next(s for s in g("search_sections", school_id=school_id, query=course)
                if (s["course"], s["period"]) == (course, period))


def _courses(db: dict, student: dict, kind: str | None = None) -> list[tuple[dict, dict]]:
    """(enrolment, section) of the student's current classes, of one kind if given."""
    pairs = [(e, db["sections"][e["section_id"]]) for e in current_enrolments(db, student["student_id"])]
    return [(e, s) for e, s in pairs if kind is None or s["kind"] == kind]


def report_absence(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    child = rng.choice(_children(db, guardian_id))
    days = [d for d in (TODAY + timedelta(days=k) for k in range(1, 8)) if is_school_day(d)]
    day, reason = rng.choice(days).isoformat(), rng.choice(sorted(_REASONS))
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        g("report_absence", student_id=student["student_id"], date=day, reason=reason)
        return []
    return Scenario("Report the absence the guardian announces for their child.",
                    f"Your child {child['first_name']} {child['last_name']} will miss school on {day} because "
                    f"{_REASONS[reason]}. You want to report the absence.", known, UNKNOWN, chain, "easy")


def excuse_absence(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    missed = [(child, a) for child in _children(db, guardian_id) for a in db["attendance"].values()
              if a["student_id"] == child["student_id"] and a["status"] == "absent" and not a["excused"]]
    if not missed:
        return None
    child, absence = rng.choice(missed)
    reason = rng.choice(sorted(_REASONS))
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        record = next(a for a in g("list_attendance", student_id=student["student_id"])
                      if (a["date"], a["status"]) == (absence["date"], "absent"))
        g("excuse_absence", attendance_id=record["attendance_id"], reason=reason)
        return []
    return Scenario("Excuse an absence the school recorded for the guardian's child.",
                    f"The school marked your child {child['first_name']} absent on {absence['date']} without an "
                    f"excuse; {child['first_name']} was away because {_REASONS[reason]}. You want the absence excused.",
                    known, UNKNOWN, chain, "medium")


def pay_fee(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    owed = [(child, i) for child in _children(db, guardian_id) for i in db["invoices"].values()
            if i["student_id"] == child["student_id"] and i["status"] == "open"]
    if not owed:
        return None
    child, invoice = rng.choice(owed)
    method = rng.choice(sorted(_METHODS))
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        found = next(i for i in g("list_invoices", student_id=student["student_id"])["invoices"]
                     if (i["description"], i["status"]) == (invoice["description"], "open"))
        g("pay_invoice", invoice_id=found["invoice_id"], amount=found["balance"], method=method)
        return []
    return Scenario("Take payment, by the method the guardian names, of what is still owed on an invoice.",
                    f"You want to pay what is still owed on the invoice for \"{invoice['description']}\" for your "
                    f"child {child['first_name']}, by {_METHODS[method]}. You do not remember the amount; the agent "
                    "can look it up.", known, UNKNOWN, chain, "medium")


def drop_elective(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    taken = [(child, s["course"]) for child in _children(db, guardian_id) for _, s in _courses(db, child, "elective")]
    if not taken:
        return None
    child, course = rng.choice(taken)
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        g("drop_section", enrolment_id=_class(g, student["student_id"], course)["enrolment_id"])
        return []
    return Scenario(f"Drop the guardian's child from their {course} elective.",
                    f"Your child {child['first_name']} no longer wants to take {course}; you want them dropped "
                    "from it.",
                    known, UNKNOWN, chain, "easy")


def change_period(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    """Another section of a course the child takes, in a period that is free in their timetable."""
    moves = [(child, section, other) for child in _children(db, guardian_id)
             for enrolment, section in _courses(db, child) for other in db["sections"].values()
             if other["section_id"] != section["section_id"] and other["course"] == section["course"]
             and other["school_id"] == section["school_id"]
             and clash(db, child["student_id"], other, ignore=enrolment["enrolment_id"]) is None]
    if not moves:
        return None
    child, section, other = rng.choice(moves)
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        enrolment = _class(g, student["student_id"], section["course"])
        target = _section(g, student["school_id"], section["course"], other["period"])
        g("swap_section", enrolment_id=enrolment["enrolment_id"], section_id=target["section_id"])
        return []
    return Scenario("Move the child's class to the section of the same course in the period the guardian names.",
                    f"Your child {child['first_name']} takes {section['course']} in period {section['period']}; you "
                    f"want it moved to the {section['course']} section in period {other['period']}, which is free in "
                    f"{child['first_name']}'s timetable.", known, UNKNOWN, chain, "medium")


def enrol_and_pay(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    """An elective with a fee that the child does not take, in a period that is free for them."""
    options = [(child, s) for child in _children(db, guardian_id) for s in db["sections"].values()
               if s["fee"] and s["school_id"] == child["school_id"] and child["grade_level"] in s["grade_levels"]
               and clash(db, child["student_id"], s) is None]
    if not options:
        return None
    child, section = rng.choice(options)
    method = rng.choice(sorted(_METHODS))
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        target = _section(g, student["school_id"], section["course"], section["period"])
        invoice = g("enrol_in_section", student_id=student["student_id"], section_id=target["section_id"])["invoice"]
        g("pay_invoice", invoice_id=invoice["invoice_id"], amount=invoice["amount"], method=method)
        return []
    return Scenario(f"Enrol the child in the {section['course']} section they ask for, then take payment of its "
                    "course fee.",
                    f"You want your child {child['first_name']} enrolled in {section['course']} in period "
                    f"{section['period']}, and you want to pay its course fee straight away by {_METHODS[method]}.",
                    known, UNKNOWN, chain, "hard")


def move_and_bus(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    children = _children(db, guardian_id)
    if len(children) != 1:
        return None
    child, new = children[0], people.address(rng)
    route = route_for(db, child["school_id"], new["city"])
    if new["city"] == child["address"]["city"] or route["route_id"] == child["bus_route_id"]:
        return None
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])
        g("update_student_address", student_id=student["student_id"], **new)
        routes = g("list_bus_routes", school_id=student["school_id"])
        found = next(r for r in routes if any(stop["city"] == new["city"] for stop in r["stops"]))
        g("assign_bus_route", student_id=student["student_id"], route_id=found["route_id"])
        return []
    return Scenario("Update the child's home address, then put them on the bus route that stops in the new city.",
                    f"Your family moved to {new['street']}, {new['city']} {new['zip']}. You want your child "
                    f"{child['first_name']}'s address updated and {child['first_name']} put on the school bus that "
                    f"stops in {new['city']}.", known, UNKNOWN, chain, "hard")


def refused_other_student(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    children = _children(db, guardian_id)
    owing = [c for c in children
             if any(balance(i) for i in db["invoices"].values() if i["student_id"] == c["student_id"])]
    if not owing:
        return None
    child = rng.choice(owing)
    other = rng.choice([s for s in db["students"].values() if guardian_id not in s["guardian_ids"]])
    tomorrow = (TODAY + timedelta(days=1)).isoformat()
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])  # the other child is not among the caller's
        return [str(g("list_invoices", student_id=student["student_id"])["total_due"])]
    return Scenario("Refuse to report an absence for a student the caller is not a listed guardian of (policy) and "
                    "tell them what is still owed in fees for their own child.",
                    f"Your sister's child {other['first_name']} {other['last_name']} (student id "
                    f"{other['student_id']}) is ill, and your sister asked you to report {other['first_name']} absent "
                    f"for tomorrow, {tomorrow}. You are {other['first_name']}'s aunt or uncle, not a listed guardian. "
                    "You also want to know how much you still owe in school fees for your child "
                    f"{child['first_name']}.",
                    known, UNKNOWN, chain, "hard")


def refused_other_route(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    child = rng.choice(_children(db, guardian_id))
    home = child["address"]["city"]
    home_route = route_for(db, child["school_id"], home)
    route, city = rng.choice([(r, stop["city"]) for r in db["bus_routes"].values()
                              if r["school_id"] == child["school_id"] and r["route_id"] != home_route["route_id"]
                              for stop in r["stops"]])
    known, identify = _identity(db, guardian_id, rng)

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, identify(g), child["first_name"])  # the home city is not on the route asked for
        routes = g("list_bus_routes", school_id=student["school_id"])
        return [next(stop["time"] for r in routes for stop in r["stops"] if stop["city"] == home)]
    return Scenario("Refuse a bus route that does not stop in the child's home city (policy) and tell the guardian "
                    "when the bus for their home city picks up.",
                    f"Your child {child['first_name']}'s grandparents live in {city}, and you want "
                    f"{child['first_name']} to ride {route['name']}, which stops there. You also want to know at "
                    f"what time the school bus picks up in {home}, where you live.", known, UNKNOWN, chain, "medium")


def average_question(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    graded = [(child, s["course"]) for child in _children(db, guardian_id) for e, s in _courses(db, child, "core")
              if any(g["enrolment_id"] == e["enrolment_id"] for g in db["grades"].values())]
    if not graded:
        return None
    child, course = rng.choice(graded)
    email = db["guardians"][guardian_id]["email"]

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, g("find_guardian_by_email", email=email), child["first_name"])
        grades = g("get_student_grades", student_id=student["student_id"])
        return [str(next(c["average_percent"] for c in grades if c["course"] == course))]
    return Scenario(f"Tell the guardian their child's current average in {course}.",
                    f"ask what {child['first_name']}'s current average in {course} is.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def balance_question(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    child = rng.choice(_children(db, guardian_id))
    email = db["guardians"][guardian_id]["email"]

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, g("find_guardian_by_email", email=email), child["first_name"])
        return [str(g("list_invoices", student_id=student["student_id"])["total_due"])]
    return Scenario("Tell the guardian what is still owed in fees for their child.",
                    f"ask how much you still owe in school fees for {child['first_name']}.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def pickup_question(db: dict, guardian_id: str, rng: random.Random) -> Scenario | None:
    riding = [c for c in _children(db, guardian_id) if c["bus_route_id"]]
    if not riding:
        return None
    child = rng.choice(riding)
    email = db["guardians"][guardian_id]["email"]

    def chain(g: Golden) -> list[str]:
        student = _find_child(g, g("find_guardian_by_email", email=email), child["first_name"])
        route = next(r for r in g("list_bus_routes", school_id=student["school_id"])
                     if r["route_id"] == student["bus_route_id"])
        return [next(stop["time"] for stop in route["stops"] if stop["city"] == student["address"]["city"])]
    return Scenario("Tell the guardian at what time their child's school bus picks them up.",
                    f"ask at what time the school bus picks {child['first_name']} up.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def _guardians(db: dict[str, Any]) -> list[str]:
    return sorted(db["guardians"])


RECIPE = TaskRecipe(
    subjects=_guardians,
    templates={"report_absence": report_absence, "excuse_absence": excuse_absence, "pay_fee": pay_fee,
               "drop_elective": drop_elective, "change_period": change_period, "enrol_and_pay": enrol_and_pay,
               "move_and_bus": move_and_bus, "refused_other_student": refused_other_student,
               "refused_other_route": refused_other_route},
    follow_ups={"average_question": average_question, "balance_question": balance_question,
                "pickup_question": pickup_question},
)
