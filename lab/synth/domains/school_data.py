"""The school domain's records and seeded data: two schools, their sections, bus routes, and the
families (guardians and students) with timetables, grades, attendance and fee invoices.

Why apart from the tools (`lab.synth.domains.school`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the enrolment, fee and payment
rules (`enrol`, `fee_invoice`, `add_payment`, `clash`, `seats_taken`) live here too because the
generator fills timetables and invoices by them, as the tools do.

A district family office serves a middle school (grades 6-8) and a high school (grades 9-12). Every
course runs in two sections that meet in different periods of the six; a core course is for one
grade, an elective for every grade of its school, and some electives carry a course fee. Each
household has one or two guardians and one to three children who share its address; most children
ride the one bus route of their school that stops in their home city (each school's four routes
split the district's twelve cities between them). Attendance holds only the exceptions (absences and
late arrivals) since the term began; grades are the first assessments of each enrolled section.
Dates are ISO days, times "HH:MM"; ids count up per table.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng
from lab.synth.people import Address

NOW = "2025-09-24T07:45:00"
TODAY = date(2025, 9, 24)
TERM_START, TERM_END = date(2025, 9, 2), date(2025, 12, 19)
PERIODS = 6
#: An absence can be reported from today to this many days ahead.
ABSENCE_NOTICE_DAYS = 14
#: An absence the school recorded can be excused up to this many days after it.
EXCUSE_DAYS = 14
#: A course fee is invoiced on enrolment and due this many days later.
FEE_DUE_DAYS = 14

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
AbsenceReason = Literal["illness", "medical_appointment", "family_emergency", "religious_observance", "bereavement"]
PaymentMethod = Literal["card", "bank_transfer"]


class School(Record):
    school_id: str
    name: str
    lowest_grade: int
    highest_grade: int


class Guardian(Record):
    guardian_id: str
    first_name: str
    last_name: str
    email: str
    phone: str


class Student(Record):
    student_id: str
    first_name: str
    last_name: str
    date_of_birth: Day
    school_id: str
    grade_level: Annotated[int, Field(ge=6, le=12)]
    guardian_ids: list[str]
    address: Address
    bus_route_id: str | None


class Section(Record):
    section_id: str
    school_id: str
    course: str
    kind: Literal["core", "elective"]
    grade_levels: list[int]
    teacher: str
    period: Annotated[int, Field(ge=1, le=PERIODS)]
    room: str
    capacity: Annotated[int, Field(ge=1)]
    fee: Money
    drop_deadline: Day


class Enrolment(Record):
    enrolment_id: str
    student_id: str
    section_id: str
    status: Literal["enrolled", "dropped"]
    enrolled_on: Day
    dropped_on: Day | None


class Grade(Record):
    grade_id: str
    enrolment_id: str
    assessment: str
    score: Money
    out_of: Annotated[float, Field(gt=0)]
    recorded_on: Day


class Attendance(Record):
    attendance_id: str
    student_id: str
    date: Day
    status: Literal["absent", "late"]
    excused: bool
    reason: AbsenceReason | None
    reported_by: Literal["school", "guardian"]
    recorded_at: str


class Invoice(Record):
    invoice_id: str
    student_id: str
    enrolment_id: str | None
    description: str
    amount: Annotated[float, Field(gt=0)]
    paid: Money
    status: Literal["open", "paid", "void"]
    issued_on: Day
    due_on: Day


class Payment(Record):
    payment_id: str
    invoice_id: str
    amount: Annotated[float, Field(gt=0)]
    method: PaymentMethod
    paid_at: str


class BusStop(Record):
    city: str
    time: Clock


class BusRoute(Record):
    route_id: str
    school_id: str
    name: str
    stops: list[BusStop]
    seats: Annotated[int, Field(ge=1)]


TABLES: dict[str, type[Record]] = {
    "schools": School, "guardians": Guardian, "students": Student, "sections": Section, "enrolments": Enrolment,
    "grades": Grade, "attendance": Attendance, "invoices": Invoice, "payments": Payment, "bus_routes": BusRoute}

# ---- timetable, seat and fee rules -----------------------------------------------------------------


def is_school_day(day: date) -> bool:
    """A weekday within the term (the lab's calendar has no holidays)."""
    return TERM_START <= day <= TERM_END and day.weekday() < 5


def seats_taken(db: dict, section_id: str) -> int:
    return sum(e["section_id"] == section_id and e["status"] == "enrolled" for e in db["enrolments"].values())


def riders(db: dict, route_id: str) -> int:
    return sum(s["bus_route_id"] == route_id for s in db["students"].values())


def current_enrolments(db: dict, student_id: str) -> list[dict]:
    """The student's enrolled (not dropped) enrolments, in id order."""
    return [e for e in db["enrolments"].values() if e["student_id"] == student_id and e["status"] == "enrolled"]


def clash(db: dict, student_id: str, section: dict, ignore: str | None = None) -> str | None:
    """Why the student cannot take `section` beside their timetable (same course, same period), else None.

    `ignore` is an enrolment that does not count (the one being moved to `section`).
    """
    for enrolment in current_enrolments(db, student_id):
        if enrolment["enrolment_id"] == ignore:
            continue
        other = db["sections"][enrolment["section_id"]]
        if other["course"] == section["course"]:
            return f"is already enrolled in {other['course']} ({other['section_id']})"
        if other["period"] == section["period"]:
            return f"already has {other['course']} ({other['section_id']}) in period {other['period']}"
    return None


def balance(invoice: dict) -> float:
    """What is still owed on an invoice: nothing once it is paid or void."""
    return float(round(invoice["amount"] - invoice["paid"], 2)) if invoice["status"] == "open" else 0.0


def enrol(db: dict, student_id: str, section_id: str, day: str) -> dict:
    """Add an enrolment record (the caller has checked seats and clashes) and return it."""
    enrolment_id = next_id(db["enrolments"], "ENR-", 5)
    record = Enrolment(enrolment_id=enrolment_id, student_id=student_id, section_id=section_id, status="enrolled",
                       enrolled_on=day, dropped_on=None).model_dump(mode="json")
    db["enrolments"][enrolment_id] = record
    return record


def fee_invoice(db: dict, enrolment: dict, day: str) -> dict | None:
    """Invoice the course fee of the enrolment's section on `day`; None for a course without a fee."""
    section = db["sections"][enrolment["section_id"]]
    if not section["fee"]:
        return None
    return add_invoice(db, enrolment["student_id"], enrolment["enrolment_id"], f"{section['course']} course fee",
                       section["fee"], date.fromisoformat(day))


def add_invoice(db: dict, student_id: str, enrolment_id: str | None, description: str, amount: float,
                issued: date) -> dict:
    """Add an open invoice, due `FEE_DUE_DAYS` after it is issued, and return it."""
    invoice_id = next_id(db["invoices"], "INV-", 5)
    record = Invoice(invoice_id=invoice_id, student_id=student_id, enrolment_id=enrolment_id, description=description,
                     amount=amount, paid=0.0, status="open", issued_on=issued.isoformat(),
                     due_on=(issued + timedelta(days=FEE_DUE_DAYS)).isoformat()).model_dump(mode="json")
    db["invoices"][invoice_id] = record
    return record


def add_payment(db: dict, invoice: dict, amount: float, method: str, paid_at: str) -> dict:
    """Record a payment (the caller has checked it is at most the balance) and mark the invoice paid when
    nothing is left."""
    payment_id = next_id(db["payments"], "PAY-", 5)
    record = Payment(payment_id=payment_id, invoice_id=invoice["invoice_id"], amount=amount, method=method,
                     paid_at=paid_at).model_dump(mode="json")
    db["payments"][payment_id] = record
    invoice["paid"] = float(round(invoice["paid"] + amount, 2))
    if invoice["paid"] == invoice["amount"]:
        invoice["status"] = "paid"
    return record


# ---- seeded data -----------------------------------------------------------------------------------

_SCHOOLS = (("SCH-1", "Alder Creek Middle School", 6, 8), ("SCH-2", "Heron Way High School", 9, 12))
_CORE = {
    "SCH-1": {grade: tuple(f"{subject} {grade}" for subject in ("Mathematics", "English", "Science", "Social Studies"))
              for grade in (6, 7, 8)},
    "SCH-2": {9: ("Algebra I", "English 9", "Biology"), 10: ("Geometry", "English 10", "Chemistry"),
              11: ("Algebra II", "English 11", "Physics"), 12: ("Precalculus", "English 12", "Environmental Science")},
}
#: (course, fee) per school; electives are open to every grade of their school.
_ELECTIVES = {
    "SCH-1": (("Art", 0.0), ("Band", 25.0), ("Robotics", 60.0), ("Spanish I", 0.0), ("Drama", 0.0),
              ("Ceramics", 35.0)),
    "SCH-2": (("Photography", 40.0), ("Robotics", 60.0), ("Spanish I", 0.0), ("French I", 0.0), ("Ceramics", 35.0),
              ("Computer Science", 0.0), ("Drama", 0.0), ("Band", 25.0)),
}
#: Core sections closed for drops after the second week; most electives stay open a little longer.
_CORE_DEADLINE = "2025-09-12"
_ELECTIVE_DEADLINES = ("2025-09-19", "2025-10-03", "2025-10-03", "2025-10-03")
_ACTIVITY_FEES = (("Field trip: Calder Science Museum", 18.0), ("Yearbook", 35.0),
                  ("Athletics participation fee", 50.0), ("Instrument rental", 80.0), ("Class photo package", 22.5))
_ASSESSMENTS = (("Quiz 1", 20.0, "2025-09-12"), ("Homework set 1", 10.0, "2025-09-19"))


def _sections(db: dict, rng: Any) -> None:
    for school_id, name, low, high in _SCHOOLS:
        db["schools"][school_id] = School(school_id=school_id, name=name, lowest_grade=low,
                                          highest_grade=high).model_dump(mode="json")
        courses = [(course, "core", [grade], 0.0, _CORE_DEADLINE)
                   for grade, names in _CORE[school_id].items() for course in names]
        courses += [(course, "elective", list(range(low, high + 1)), fee, rng.choice(_ELECTIVE_DEADLINES))
                    for course, fee in _ELECTIVES[school_id]]
        for course, kind, grades, fee, deadline in courses:
            for period in sorted(rng.sample(range(1, PERIODS + 1), 2)):
                section_id = next_id(db["sections"], "SEC-", 3)
                db["sections"][section_id] = Section(
                    section_id=section_id, school_id=school_id, course=course, kind=kind, grade_levels=grades,
                    teacher=f"{rng.choice(('Mr.', 'Ms.', 'Dr.'))} {rng.choice(people.LAST_NAMES)}", period=period,
                    room=f"{rng.choice('ABC')}{rng.randint(101, 128)}",
                    capacity=30 if kind == "core" else rng.choice((5, 6, 8, 10, 12)), fee=fee,
                    drop_deadline=deadline).model_dump(mode="json")


def _bus_routes(db: dict, rng: Any) -> None:
    """Four routes per school that share the twelve cities out between them, three stops each."""
    for school_id, *_ in _SCHOOLS:
        cities = sorted(people.CITIES)
        rng.shuffle(cities)
        for part in range(4):
            route_id = next_id(db["bus_routes"], "BUS-", 2)
            start = 6 * 60 + 45 + rng.randint(0, 6) * 5
            stops = [BusStop(city=city, time=f"{(start + 11 * k) // 60:02d}:{(start + 11 * k) % 60:02d}")
                     for k, city in enumerate(cities[3 * part:3 * part + 3])]
            db["bus_routes"][route_id] = BusRoute(route_id=route_id, school_id=school_id,
                                                  name=f"Route {int(route_id[4:])}", stops=stops,
                                                  seats=rng.choice((8, 10, 12))).model_dump(mode="json")


def route_for(db: dict, school_id: str, city: str) -> dict | None:
    """The school's bus route that stops in `city` (there is one per city and school)."""
    return next((r for r in db["bus_routes"].values()
                 if r["school_id"] == school_id and any(stop["city"] == city for stop in r["stops"])), None)


def _pay_some(db: dict, rng: Any, invoice: dict) -> None:
    """Settle a generated invoice in full, in part or not at all."""
    share = rng.choice((1.0, 1.0, 0.5, 0.0, 0.0))
    if share:
        paid_on = min(date.fromisoformat(invoice["issued_on"]) + timedelta(days=rng.randint(1, 10)), TODAY)
        add_payment(db, invoice, float(round(invoice["amount"] * share, 2)), rng.choice(("card", "bank_transfer")),
                    f"{paid_on.isoformat()}T18:30:00")


def _timetable(db: dict, rng: Any, student: dict) -> None:
    """Enrol the student in their grade's core courses and a few electives, one section per free period."""
    sections = [s for s in db["sections"].values()
                if s["school_id"] == student["school_id"] and student["grade_level"] in s["grade_levels"]]
    core = sorted({s["course"] for s in sections if s["kind"] == "core"})
    electives = sorted({s["course"] for s in sections if s["kind"] == "elective"})
    wanted = core + rng.sample(electives, rng.randint(1, 2) if student["grade_level"] <= 8 else rng.randint(2, 3))
    for course in wanted:
        options = [s for s in sections if s["course"] == course]
        rng.shuffle(options)
        section = next((s for s in options if s["capacity"] > seats_taken(db, s["section_id"])
                        and clash(db, student["student_id"], s) is None), None)
        if section is None:
            continue
        enrolment = enrol(db, student["student_id"], section["section_id"], "2025-08-25")
        invoice = fee_invoice(db, enrolment, "2025-08-25")
        if invoice is not None:
            _pay_some(db, rng, invoice)
        for assessment, out_of, day in _ASSESSMENTS[:rng.randint(1, 2)]:
            grade_id = next_id(db["grades"], "GRA-", 5)
            db["grades"][grade_id] = Grade(grade_id=grade_id, enrolment_id=enrolment["enrolment_id"],
                                           assessment=assessment, score=round(out_of * rng.uniform(0.5, 1.0) * 2) / 2,
                                           out_of=out_of, recorded_on=day).model_dump(mode="json")


def _attendance(db: dict, rng: Any, student_id: str, school_days: list[date]) -> None:
    for day in sorted(rng.sample(school_days, rng.choice((0, 0, 1, 1, 2, 3)))):
        kind = rng.choice(("unexcused", "unexcused", "excused", "late"))
        attendance_id = next_id(db["attendance"], "ATT-", 5)
        db["attendance"][attendance_id] = Attendance(
            attendance_id=attendance_id, student_id=student_id, date=day.isoformat(),
            status="late" if kind == "late" else "absent", excused=kind == "excused",
            reason=rng.choice(("illness", "medical_appointment")) if kind == "excused" else None,
            reported_by="guardian" if kind == "excused" else "school",
            recorded_at=f"{day.isoformat()}T{'07:30' if kind == 'excused' else '09:05'}:00").model_dump(mode="json")


def _birth_date(rng: Any, grade: int) -> str:
    """A birth date that puts a child in `grade` this school year (born Sept 2 to Sept 1)."""
    start = date(TODAY.year - grade - 6, 9, 2)
    return (start + timedelta(days=rng.randint(0, 364))).isoformat()


def generate(seed: int, size: int) -> dict[str, Any]:
    """The schools' sections and bus routes, and `size` households of guardians and their children."""
    rng = seeded_rng("school", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    _sections(db, rng)
    _bus_routes(db, rng)
    school_days = [d for d in (TERM_START + timedelta(days=k) for k in range((TODAY - TERM_START).days))
                   if is_school_day(d)]
    pool = people.unique_people(rng, 2 * size)
    used = set(pool)  # children take a guardian's family name, so their full names must avoid every guardian's
    phones: set[str] = set()
    for household in range(size):
        adults = pool[2 * household:2 * household + (2 if rng.random() < 0.6 else 1)]
        guardian_ids = []
        for first, last in adults:
            guardian_id = next_id(db["guardians"], "GDN-", 4)
            db["guardians"][guardian_id] = Guardian(
                guardian_id=guardian_id, first_name=first, last_name=last,
                email=people.email(first, last, "family.example"),
                phone=people.phone(rng, phones)).model_dump(mode="json")
            guardian_ids.append(guardian_id)
        home, family = people.address(rng), adults[0][1]
        for _ in range(rng.choices((1, 2, 3), weights=(45, 40, 15))[0]):
            free = [first for first in people.FIRST_NAMES if (first, family) not in used]
            first = rng.choice(free)
            used.add((first, family))
            grade = rng.randint(6, 12)
            school_id = next(s for s, _, low, high in _SCHOOLS if low <= grade <= high)
            route = route_for(db, school_id, home["city"])
            student_id = next_id(db["students"], "STU-", 4)
            on_bus = rng.random() < 0.75 and riders(db, route["route_id"]) < route["seats"]
            student = Student(student_id=student_id, first_name=first, last_name=family,
                              date_of_birth=_birth_date(rng, grade), school_id=school_id, grade_level=grade,
                              guardian_ids=guardian_ids, address=home,
                              bus_route_id=route["route_id"] if on_bus else None).model_dump(mode="json")
            db["students"][student_id] = student
            _timetable(db, rng, student)
            for description, amount in rng.sample(_ACTIVITY_FEES, rng.randint(0, 2)):
                issued = TERM_START + timedelta(days=rng.randint(0, 12))
                _pay_some(db, rng, add_invoice(db, student_id, None, description, amount, issued))
            _attendance(db, rng, student_id, school_days)
    return db
