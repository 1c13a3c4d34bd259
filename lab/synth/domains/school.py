"""The school domain: a district family office for guardians, their children's timetables, grades,
attendance, fees and school buses, with 20 tools.

Why these records and rules: they are what a school district's family office handles on the phone
(a child off sick, an absence to excuse, an elective to add or drop, a section moved to another
period, a fee to pay, a new address and the bus that goes with it), and each rule gives a task a way
to go wrong. The tools enforce seats, timetable clashes, the add/drop deadline, the reporting and
excusing windows and invoice balances; two rules are policy only: only a guardian listed on a
student may see or change that student's records (the tools take any student id), and a student
rides only the bus route that stops in their home city (the bus tool checks the school and the
seats, not the address), so a task can test that the agent follows the policy and not just the
tools' errors.

Money is a float rounded to the cent. The records, the seeded data and the enrolment and fee rules
are in `lab.synth.domains.school_data`.
"""

from __future__ import annotations

import re
from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, id_by_email, lookup, next_id, parse_day
from lab.synth.domains.school_data import (
    ABSENCE_NOTICE_DAYS,
    EXCUSE_DAYS,
    FEE_DUE_DAYS,
    NOW,
    TABLES,
    AbsenceReason,
    Attendance,
    PaymentMethod,
    add_payment,
    balance,
    clash,
    current_enrolments,
    enrol,
    fee_invoice,
    generate,
    is_school_day,
    riders,
    seats_taken,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()



def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _section_view(db: dict, section: dict) -> dict:
    """A section as the tools show it: the record and its free seats."""
    return {**section, "free_seats": section["capacity"] - seats_taken(db, section["section_id"])}


def _enrolled(db: dict, enrolment_id: str) -> dict:
    enrolment = lookup(db, "enrolments", enrolment_id, "enrolment")
    if enrolment["status"] != "enrolled":
        raise ToolRefused(f"enrolment {enrolment_id} is {enrolment['status']}")
    return enrolment


def _seat(db: dict, section: dict) -> None:
    if seats_taken(db, section["section_id"]) >= section["capacity"]:
        raise ToolRefused(f"section {section['section_id']} ({section['course']}, period {section['period']}) is full")


@box.read
def find_guardian_by_email(db: dict, email: str) -> str:
    """Find a guardian's id from their email address.

    email: the guardian's email address, any letter case.
    """
    return id_by_email(db, "guardians", email, "guardian")


@box.read
def find_guardian_by_name_phone(db: dict, first_name: str, last_name: str, phone: str) -> str:
    """Find a guardian's id from their full name and phone number.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    phone: the phone number on file, e.g. '+1-555-234-5678'; only its digits are compared.
    """
    for guardian_id, g in db["guardians"].items():
        if (g["first_name"].lower(), g["last_name"].lower(), _digits(g["phone"])) == (
                first_name.strip().lower(), last_name.strip().lower(), _digits(phone)):
            return guardian_id
    raise ToolRefused(f"no guardian named '{first_name} {last_name}' with phone '{phone}'")


@box.read
def get_guardian_details(db: dict, guardian_id: str) -> str:
    """A guardian's contact details and the ids of the students they are a listed guardian of.

    guardian_id: the guardian, e.g. 'GDN-0001'.
    """
    guardian = lookup(db, "guardians", guardian_id, "guardian")
    return as_json({**guardian, "student_ids": sorted(s for s, student in db["students"].items()
                                                      if guardian_id in student["guardian_ids"])})


@box.read
def get_student_details(db: dict, student_id: str) -> str:
    """A student's name, date of birth, school, grade level, listed guardians, home address and bus route.

    student_id: the student, e.g. 'STU-0001'.
    """
    student = lookup(db, "students", student_id, "student")
    return as_json({**student, "school_name": db["schools"][student["school_id"]]["name"]})


@box.read
def get_student_schedule(db: dict, student_id: str) -> str:
    """A student's current timetable, by period: each enrolment with its section's course, teacher,
    room and add/drop deadline.

    student_id: the student whose timetable to show.
    """
    lookup(db, "students", student_id, "student")
    rows = [{"enrolment_id": e["enrolment_id"], **db["sections"][e["section_id"]]}
            for e in current_enrolments(db, student_id)]
    return as_json(sorted(rows, key=lambda row: row["period"]))


@box.read
def get_student_grades(db: dict, student_id: str) -> str:
    """A student's grades in each course they are enrolled in: every assessment's score and the
    course average as a percentage of the points so far.

    student_id: the student whose grades to show.
    """
    lookup(db, "students", student_id, "student")
    courses = []
    for enrolment in current_enrolments(db, student_id):
        marks = [{k: g[k] for k in ("assessment", "score", "out_of", "recorded_on")}
                 for g in db["grades"].values() if g["enrolment_id"] == enrolment["enrolment_id"]]
        points = sum(m["out_of"] for m in marks)
        courses.append({"course": db["sections"][enrolment["section_id"]]["course"],
                        "section_id": enrolment["section_id"], "assessments": marks,
                        "average_percent": round(100 * sum(m["score"] for m in marks) / points, 1) if points else None})
    return as_json(courses)


@box.read
def list_attendance(db: dict, student_id: str) -> str:
    """A student's attendance exceptions this term, newest first: absences and late arrivals, whether
    each is excused, its reason and who reported it. Days not listed were attended.

    student_id: the student whose attendance to show.
    """
    lookup(db, "students", student_id, "student")
    rows = [a for a in db["attendance"].values() if a["student_id"] == student_id]
    return as_json(sorted(rows, key=lambda a: (a["date"], a["attendance_id"]), reverse=True))


@box.read
def list_invoices(db: dict, student_id: str) -> str:
    """A student's fee invoices, each with what is still owed on it, and the total still owed.

    student_id: the student whose invoices to show.
    """
    lookup(db, "students", student_id, "student")
    rows = [{**i, "balance": balance(i)} for i in db["invoices"].values() if i["student_id"] == student_id]
    return as_json({"invoices": rows, "total_due": float(round(sum(i["balance"] for i in rows), 2))})


@box.read
def search_sections(db: dict, school_id: str, query: str) -> str:
    """The sections of a school whose course name contains the query: course, kind, grade levels,
    period, teacher, room, seats, course fee and add/drop deadline.

    school_id: the school, e.g. 'SCH-1' (a student's details name it).
    query: part of a course name, any letter case, e.g. 'robotics'.
    """
    lookup(db, "schools", school_id, "school")
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([_section_view(db, s) for s in db["sections"].values()
                    if s["school_id"] == school_id and text in s["course"].lower()])


@box.read
def list_bus_routes(db: dict, school_id: str) -> str:
    """A school's bus routes: the stops in order, with the city and pickup time of each, and free seats.

    school_id: the school, e.g. 'SCH-1'.
    """
    lookup(db, "schools", school_id, "school")
    return as_json([{**r, "free_seats": r["seats"] - riders(db, r["route_id"])}
                    for r in db["bus_routes"].values() if r["school_id"] == school_id])


add_generic_tools(box)


@box.write
def report_absence(db: dict, student_id: str, date: str, reason: AbsenceReason, *, now: str) -> str:
    """Report ahead that a student will be absent on a school day; a reported absence is excused.

    student_id: the student who will be absent.
    date: the school day, YYYY-MM-DD, from today to 14 days ahead.
    reason: 'illness', 'medical_appointment', 'family_emergency', 'religious_observance' or 'bereavement'.
    """
    lookup(db, "students", student_id, "student")
    day, today = parse_day(date, "date"), parse_day(now[:10], "now")
    if not 0 <= (day - today).days <= ABSENCE_NOTICE_DAYS or not is_school_day(day):
        raise ToolRefused(f"date must be a school day (a weekday in term) from {today} to {ABSENCE_NOTICE_DAYS} "
                          f"days later, got {date}")
    taken = next((a for a in db["attendance"].values() if (a["student_id"], a["date"]) == (student_id, date)), None)
    if taken is not None:
        raise ToolRefused(f"student {student_id} already has attendance record {taken['attendance_id']} for {date}")
    attendance_id = next_id(db["attendance"], "ATT-", 5)
    record = Attendance(attendance_id=attendance_id, student_id=student_id, date=date, status="absent", excused=True,
                        reason=reason, reported_by="guardian", recorded_at=now).model_dump(mode="json")
    db["attendance"][attendance_id] = record
    return as_json(record)


@box.write
def excuse_absence(db: dict, attendance_id: str, reason: AbsenceReason, *, now: str) -> str:
    """Excuse an absence the school recorded, with its reason, up to 14 days after the absence.

    attendance_id: the unexcused absence.
    reason: 'illness', 'medical_appointment', 'family_emergency', 'religious_observance' or 'bereavement'.
    """
    record = lookup(db, "attendance", attendance_id, "attendance record")
    if record["status"] != "absent" or record["excused"]:
        raise ToolRefused(f"attendance record {attendance_id} is {'an excused' if record['excused'] else 'a'} "
                          f"{record['status']}; only unexcused absences can be excused")
    if (date.fromisoformat(now[:10]) - date.fromisoformat(record["date"])).days > EXCUSE_DAYS:
        raise ToolRefused(f"the absence on {record['date']} is more than {EXCUSE_DAYS} days ago; it can no longer "
                          "be excused here")
    record.update(excused=True, reason=reason)
    return as_json(record)


@box.write
def enrol_in_section(db: dict, student_id: str, section_id: str, *, now: str) -> str:
    """Enrol a student in a section of their school and grade, before its add/drop deadline; a course
    with a fee is invoiced at once, due in 14 days. Returns the enrolment and the invoice (or null).

    student_id: the student to enrol.
    section_id: the section, as search_sections lists it; it must have a free seat and fit the
        student's timetable (no other section of the course, nothing else in its period).
    """
    student = lookup(db, "students", student_id, "student")
    section = lookup(db, "sections", section_id, "section")
    if section["school_id"] != student["school_id"] or student["grade_level"] not in section["grade_levels"]:
        raise ToolRefused(f"section {section_id} is for grades {section['grade_levels']} at {section['school_id']}; "
                          f"student {student_id} is in grade {student['grade_level']} at {student['school_id']}")
    if section["drop_deadline"] < now[:10]:
        raise ToolRefused(f"enrolment in section {section_id} closed on {section['drop_deadline']}")
    problem = clash(db, student_id, section)
    if problem is not None:
        raise ToolRefused(f"student {student_id} {problem}")
    _seat(db, section)
    enrolment = enrol(db, student_id, section_id, now[:10])
    return as_json({"enrolment": enrolment, "invoice": fee_invoice(db, enrolment, now[:10])})


@box.write
def drop_section(db: dict, enrolment_id: str, *, now: str) -> str:
    """Drop a student from a section until its add/drop deadline; an unpaid course fee invoice for it is
    voided. Returns the enrolment and the id of the voided invoice (or null).

    enrolment_id: the enrolment to drop, as get_student_schedule lists it.
    """
    enrolment = _enrolled(db, enrolment_id)
    section = db["sections"][enrolment["section_id"]]
    if section["drop_deadline"] < now[:10]:
        raise ToolRefused(f"the add/drop deadline of section {section['section_id']} ({section['course']}) was "
                          f"{section['drop_deadline']}")
    invoice = next((i for i in db["invoices"].values() if i["enrolment_id"] == enrolment_id
                    and i["status"] == "open" and i["paid"] == 0), None)
    enrolment.update(status="dropped", dropped_on=now[:10])
    if invoice is not None:
        invoice["status"] = "void"
    return as_json({"enrolment": enrolment, "voided_invoice_id": invoice["invoice_id"] if invoice else None})


@box.write
def swap_section(db: dict, enrolment_id: str, section_id: str) -> str:
    """Move an enrolment to another section of the same course (another period or teacher); grades and
    fees stay with the enrolment.

    enrolment_id: the enrolment to move.
    section_id: the new section of the same course; it must have a free seat and its period must be
        free in the student's timetable.
    """
    enrolment = _enrolled(db, enrolment_id)
    old, new = db["sections"][enrolment["section_id"]], lookup(db, "sections", section_id, "section")
    if new["section_id"] == old["section_id"] or (new["school_id"], new["course"]) != (old["school_id"], old["course"]):
        raise ToolRefused(f"section {section_id} must be another section of {old['course']} at {old['school_id']}")
    problem = clash(db, enrolment["student_id"], new, ignore=enrolment_id)
    if problem is not None:
        raise ToolRefused(f"student {enrolment['student_id']} {problem}")
    _seat(db, new)
    enrolment["section_id"] = section_id
    return as_json(enrolment)


@box.write
def pay_invoice(db: dict, invoice_id: str, amount: float, method: PaymentMethod, *, now: str) -> str:
    """Take a payment towards an open invoice, in full or in part; the invoice is paid once nothing is left.
    Returns the invoice and the payment.

    invoice_id: the open invoice.
    amount: dollars, more than 0, at most two decimals, at most what is still owed.
    method: 'card' or 'bank_transfer'.
    """
    invoice = lookup(db, "invoices", invoice_id, "invoice")
    if invoice["status"] != "open":
        raise ToolRefused(f"invoice {invoice_id} is {invoice['status']}")
    if amount <= 0 or round(amount, 2) != amount or amount > balance(invoice):
        raise ToolRefused(f"amount must be more than 0 with at most two decimals and at most the {balance(invoice)} "
                          f"still owed on {invoice_id}, got {amount}")
    payment = add_payment(db, invoice, amount, method, now)
    return as_json({"invoice": invoice, "payment": payment})


@box.write
def assign_bus_route(db: dict, student_id: str, route_id: str) -> str:
    """Put a student on a bus route of their school that has a free seat, in place of any route they had.

    student_id: the student.
    route_id: the route, as list_bus_routes lists it; not the student's current one.
    """
    student = lookup(db, "students", student_id, "student")
    route = lookup(db, "bus_routes", route_id, "bus route")
    if route["school_id"] != student["school_id"]:
        raise ToolRefused(f"route {route_id} serves {route['school_id']}; student {student_id} attends "
                          f"{student['school_id']}")
    if student["bus_route_id"] == route_id:
        raise ToolRefused(f"student {student_id} already rides route {route_id}")
    if riders(db, route_id) >= route["seats"]:
        raise ToolRefused(f"route {route_id} is full")
    student["bus_route_id"] = route_id
    return as_json(student)


@box.write
def update_student_address(db: dict, student_id: str, street: str, city: str, zip: str) -> str:  # noqa: A002
    """Change a student's home address.

    student_id: the student who moved.
    street: house number and street.
    city: city name.
    zip: 5-digit zip code.
    """
    student = lookup(db, "students", student_id, "student")
    if not street.strip() or not city.strip() or not re.fullmatch(r"[0-9]{5}", zip):
        raise ToolRefused(f"street and city must not be empty and zip must be 5 digits, got {zip!r}")
    student["address"] = {"street": street, "city": city, "zip": zip}
    return as_json(student)


POLICY = f"""# School district family office policy

The current time is {NOW} (district time). Treat it as now for every date rule below.

## Identity
- Before looking at or changing anything, identify the caller as a guardian: by email address, or
  by full name and phone number.
- Help a guardian only with students they are a listed guardian of: check that the student is among
  the guardian's students (get_guardian_details) before reading or changing any of the student's
  records. Refuse anything about another student, even if the caller knows that student's id, is a
  relative or says a guardian asked them to call; the system does not check who is asking.

## Changes
- Before any change (absence, excuse, enrolment, drop, section change, payment, bus route, address),
  state exactly what you will do and get the guardian's explicit "yes".
- Make one change per tool call; do not make changes the guardian did not ask for.

## Attendance
- A guardian may report an absence ahead, on a school day (a weekday in term) from today to
  {ABSENCE_NOTICE_DAYS} days ahead; a reported absence is excused with its reason.
- An absence the school recorded can be excused, with its reason, up to {EXCUSE_DAYS} days after it. Late
  arrivals cannot be excused.
- Reasons: illness, medical_appointment, family_emergency, religious_observance, bereavement; use
  the one that matches what the guardian says.

## Classes
- A student can be enrolled only in sections of their own school and grade, with a free seat, up to
  the section's add/drop deadline, and with no other section of the course and nothing else in the
  same period. A course with a fee is invoiced on enrolment, due in {FEE_DUE_DAYS} days.
- A section can be dropped until its add/drop deadline; an unpaid course fee is then voided.
  Refunds of fees already paid are handled by the finance office: transfer to a human agent.
- A student can be moved to another section of the same course at any time in term, if it has a
  free seat and its period is free.

## Fees
- Payments are by card or bank transfer, in full or in part, up to what is still owed. Payments are
  final.

## School buses
- A student may ride only the bus route of their school that stops in the city of their home
  address. Check the address before assigning a route and refuse any other route, even though the
  system would accept it. After a move, update the address first, then the route.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="school", tables=TABLES, generate=generate, default_size=24, tools=box.tools,
                policy=POLICY, now=NOW)
