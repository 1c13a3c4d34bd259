"""The medicine domain's records and seeded data: clinics, doctors with weekly hours, patients,
appointments, referrals, pharmacies, prescriptions and lab results.

Why apart from the tools (`lab.synth.domains.medicine`): the schema and the generator are the
domain's "database schema + data" half (paper §3.3) and read on their own; the scheduling and supply
rules (`slot_times`, `free_times`, `patient_busy`, `hours_until`, `supply_ends_on`) live here too
because the generator books its appointments by them, as the tools do.

Five clinics, each with two general practitioners and two specialists (every specialty twice), who
see patients on three or four weekdays, one session a day, in 30-minute slots. Each patient has a
primary doctor (a GP), usually insurance on file, one or two upcoming appointments (some within a
day, a few cancelled) and up to two past ones, one to three prescriptions (some for controlled
substances, some expired or out of refills) at one of eight pharmacies, one to three lab results
(the newest may still be pending), and about half a referral to a specialist (active, used by an
upcoming specialist appointment, or expired). Times are "HH:MM", dates ISO days; ids count up per table.
"""

from __future__ import annotations

import typing
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.synth import people
from lab.synth.domain import Record, clock_text, next_id, seeded_rng
from lab.synth.people import Address

NOW = "2025-10-07T09:00:00"
TODAY = date(2025, 10, 7)
BOOKING_DAYS = 60
SLOT_MINUTES = 30
LATE_CANCEL_HOURS = 24
LATE_CANCEL_FEE = 40.0
REFERRAL_DAYS = 90
PRESCRIPTION_DAYS = 365
#: Policy only: a controlled substance may be refilled from this many days before its supply ends.
CONTROLLED_REFILL_DAYS = 2

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Clock = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$")]
Money = Annotated[float, Field(ge=0)]
Specialty = Literal["general_practice", "cardiology", "dermatology", "endocrinology", "neurology", "orthopedics"]
SPECIALISTS: tuple[str, ...] = typing.get_args(Specialty)[1:]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday"]
WEEKDAYS: tuple[str, ...] = typing.get_args(Weekday)
Provider = Literal["Northstar Health", "Bluewater Mutual", "Cedar Assurance", "Evergreen Care"]
#: A member id is the provider's three letters and six digits, as printed on the insurance card.
MEMBER_PREFIX = {"Northstar Health": "NSH", "Bluewater Mutual": "BWM", "Cedar Assurance": "CDA",
                 "Evergreen Care": "EVC"}


class Clinic(Record):
    clinic_id: str
    name: str
    street: str
    city: str
    phone: str


class Session(Record):
    weekday: Weekday
    start: Clock
    end: Clock


class Doctor(Record):
    doctor_id: str
    first_name: str
    last_name: str
    specialty: Specialty
    clinic_id: str
    hours: list[Session]


class Insurance(Record):
    provider: Provider
    member_id: Annotated[str, Field(pattern=r"^[A-Z]{3}[0-9]{6}$")]


class Patient(Record):
    patient_id: str
    first_name: str
    last_name: str
    date_of_birth: Day
    phone: str
    email: str
    address: Address
    primary_doctor_id: str
    insurance: Insurance | None


class Appointment(Record):
    appointment_id: str
    patient_id: str
    doctor_id: str
    date: Day
    time: Clock
    status: Literal["scheduled", "completed", "no_show", "cancelled"]
    referral_id: str | None
    cancellation_fee: Money
    booked_at: str


class Referral(Record):
    referral_id: str
    patient_id: str
    specialty: Specialty
    referred_by: str
    issued_on: Day
    expires_on: Day
    status: Literal["active", "used", "expired"]


class Pharmacy(Record):
    pharmacy_id: str
    name: str
    street: str
    city: str
    phone: str


class Prescription(Record):
    prescription_id: str
    patient_id: str
    prescriber_id: str
    medication: str
    dose: str
    directions: str
    controlled: bool
    days_supply: Annotated[int, Field(ge=1)]
    written_on: Day
    expires_on: Day
    last_filled_on: Day
    refills_remaining: Annotated[int, Field(ge=0)]
    pharmacy_id: str
    status: Literal["active", "expired", "discontinued"]


class LabResult(Record):
    lab_result_id: str
    patient_id: str
    ordered_by: str
    test: str
    collected_on: Day
    status: Literal["final", "pending"]
    value: float | None
    unit: str
    reference_range: str
    flag: Literal["normal", "low", "high"] | None


TABLES: dict[str, type[Record]] = {"clinics": Clinic, "doctors": Doctor, "patients": Patient,
                                   "appointments": Appointment, "referrals": Referral, "pharmacies": Pharmacy,
                                   "prescriptions": Prescription, "lab_results": LabResult}

# ---- slots, clashes and supply ---------------------------------------------------------------------


def minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])



def hours_until(day: str, clock: str, now: str) -> float:
    """Hours from `now` until `clock` on `day` (negative once it has passed)."""
    days = (date.fromisoformat(day) - date.fromisoformat(now[:10])).days
    return days * 24 + (minutes(clock) - minutes(now[11:16])) / 60


def slot_times(doctor: dict, day: date) -> list[str]:
    """The start times of the doctor's 30-minute slots on that day's weekday; none on a day off."""
    weekday = WEEKDAYS[day.weekday()] if day.weekday() < len(WEEKDAYS) else None
    for session in doctor["hours"]:
        if session["weekday"] == weekday:
            return [clock_text(t) for t in range(minutes(session["start"]), minutes(session["end"]), SLOT_MINUTES)]
    return []


def free_times(db: dict, doctor: dict, day: str, after: str) -> list[str]:
    """The doctor's slot times on `day` that start after `after` (an ISO time, '' for any) and that no
    appointment holds; a cancelled appointment frees its slot."""
    taken = {a["time"] for a in db["appointments"].values()
             if (a["doctor_id"], a["date"]) == (doctor["doctor_id"], day) and a["status"] != "cancelled"}
    return [t for t in slot_times(doctor, date.fromisoformat(day)) if t not in taken and f"{day}T{t}" > after]


def patient_busy(db: dict, patient_id: str, day: str, time: str) -> str | None:
    """The id of the patient's scheduled appointment at that day and time, if any: one at a time."""
    return next((a["appointment_id"] for a in db["appointments"].values()
                 if (a["patient_id"], a["date"], a["time"], a["status"]) == (patient_id, day, time, "scheduled")), None)


def supply_ends_on(prescription: dict) -> str:
    """The day the supply from the last fill runs out."""
    last_fill = date.fromisoformat(prescription["last_filled_on"])
    return (last_fill + timedelta(days=prescription["days_supply"])).isoformat()


# ---- seeded data -----------------------------------------------------------------------------------

_CLINICS = (("CLN-01", "Ashbury Family Health", "Ashbury"), ("CLN-02", "Brookhaven Medical Center", "Brookhaven"),
            ("CLN-03", "Calder Valley Clinic", "Calder"), ("CLN-04", "Kingsmere Health Partners", "Kingsmere"),
            ("CLN-05", "Lakeport Community Clinic", "Lakeport"))
_PHARMACIES = (("PHM-01", "Ashbury Corner Pharmacy", "Ashbury"), ("PHM-02", "Brookhaven Apothecary", "Brookhaven"),
               ("PHM-03", "Calder Drug & Wellness", "Calder"), ("PHM-04", "Dunmore Family Pharmacy", "Dunmore"),
               ("PHM-05", "Eastwick Health Mart", "Eastwick"), ("PHM-06", "Kingsmere Quay Pharmacy", "Kingsmere"),
               ("PHM-07", "Lakeport Harbour Pharmacy", "Lakeport"), ("PHM-08", "Glenrock Chemist", "Glenrock"))
_SESSIONS = (("08:30", "12:00"), ("09:00", "13:00"), ("13:00", "16:30"), ("14:00", "18:00"))
#: (medication, dose, directions, controlled substance, days of supply per fill)
_MEDICATIONS = (
    ("Lisinopril", "10 mg", "one tablet daily", False, 30),
    ("Metformin", "500 mg", "one tablet twice daily with meals", False, 30),
    ("Atorvastatin", "20 mg", "one tablet at bedtime", False, 90),
    ("Levothyroxine", "50 mcg", "one tablet before breakfast", False, 90),
    ("Sertraline", "50 mg", "one tablet daily", False, 30),
    ("Amlodipine", "5 mg", "one tablet daily", False, 30),
    ("Omeprazole", "20 mg", "one capsule before breakfast", False, 30),
    ("Albuterol inhaler", "90 mcg", "two puffs as needed", False, 30),
    ("Zolpidem", "10 mg", "one tablet at bedtime", True, 30),
    ("Methylphenidate", "10 mg", "one tablet twice daily", True, 30),
    ("Alprazolam", "0.5 mg", "one tablet up to twice daily", True, 30),
    ("Tramadol", "50 mg", "one tablet every six hours as needed", True, 15),
)
#: (test, unit, reference range as printed, range low, range high, values drawn from, to)
_TESTS = (
    ("HbA1c", "%", "4.0-5.6", 4.0, 5.6, 4.2, 8.5),
    ("LDL cholesterol", "mg/dL", "0-99", 0.0, 99.0, 60.0, 190.0),
    ("TSH", "mIU/L", "0.4-4.0", 0.4, 4.0, 0.2, 7.5),
    ("Hemoglobin", "g/dL", "12.0-17.5", 12.0, 17.5, 10.5, 17.0),
    ("Fasting glucose", "mg/dL", "70-99", 70.0, 99.0, 75.0, 160.0),
    ("Potassium", "mmol/L", "3.5-5.1", 3.5, 5.1, 3.2, 5.6),
    ("Vitamin D", "ng/mL", "30-100", 30.0, 100.0, 12.0, 70.0),
)


def _doctors(db: dict, rng: Any, names: list[tuple[str, str]]) -> None:
    """Two GPs and two specialists per clinic, every specialty at two clinics."""
    specialties = list(SPECIALISTS) * 2
    rng.shuffle(specialties)
    for number, (clinic_id, _, _) in enumerate(_CLINICS):
        for specialty in ("general_practice", "general_practice", *specialties[2 * number:2 * number + 2]):
            doctor_id = next_id(db["doctors"], "DOC-", 3)
            first, last = names[len(db["doctors"])]
            hours = [Session(weekday=WEEKDAYS[day], start=start, end=end)
                     for day in sorted(rng.sample(range(len(WEEKDAYS)), rng.randint(3, 4)))
                     for start, end in [rng.choice(_SESSIONS)]]
            db["doctors"][doctor_id] = Doctor(doctor_id=doctor_id, first_name=first, last_name=last,
                                              specialty=specialty, clinic_id=clinic_id,
                                              hours=hours).model_dump(mode="json")


def _appointment(db: dict, rng: Any, patient_id: str, doctor: dict, days: range, status: str,
                 referral_id: str | None = None) -> bool:
    """Book a free slot of the doctor on one of `days` (offsets from today) with that status; False if
    the drawn day has no free slot or the drawn slot clashes with another of the patient's appointments."""
    worked = {WEEKDAYS.index(session["weekday"]) for session in doctor["hours"]}
    workdays = [TODAY + timedelta(days=d) for d in days if (TODAY + timedelta(days=d)).weekday() in worked]
    if not workdays:
        return False
    day = rng.choice(workdays)
    times = free_times(db, doctor, day.isoformat(), NOW if day >= TODAY else "")
    time = rng.choice(times) if times else None
    if time is None or patient_busy(db, patient_id, day.isoformat(), time) is not None:
        return False
    appointment_id = next_id(db["appointments"], "APT-", 5)
    db["appointments"][appointment_id] = Appointment(
        appointment_id=appointment_id, patient_id=patient_id, doctor_id=doctor["doctor_id"], date=day.isoformat(),
        time=time, status=status, referral_id=referral_id, cancellation_fee=0.0,
        booked_at=f"{(min(day, TODAY) - timedelta(days=rng.randint(1, 20))).isoformat()}T11:00:00",
    ).model_dump(mode="json")
    return True


def _referral(db: dict, rng: Any, patient: dict) -> None:
    """A referral from the primary doctor: active, used by an upcoming specialist appointment, or expired."""
    specialty = rng.choice(SPECIALISTS)
    kind = rng.choice(("active", "active", "used", "expired"))
    issued = TODAY - timedelta(days=rng.randint(100, 150) if kind == "expired" else rng.randint(3, 40))
    expires = issued + timedelta(days=REFERRAL_DAYS)
    referral_id = next_id(db["referrals"], "REF-", 4)
    if kind == "used":
        specialist = db["doctors"][rng.choice(sorted(d for d, doc in db["doctors"].items()
                                                     if doc["specialty"] == specialty))]
        if not _appointment(db, rng, patient["patient_id"], specialist, range(1, (expires - TODAY).days + 1),
                            "scheduled", referral_id):
            kind = "active"
    db["referrals"][referral_id] = Referral(
        referral_id=referral_id, patient_id=patient["patient_id"], specialty=specialty,
        referred_by=patient["primary_doctor_id"], issued_on=issued.isoformat(), expires_on=expires.isoformat(),
        status=kind).model_dump(mode="json")


def _prescription(db: dict, rng: Any, patient: dict, medication: tuple) -> None:
    name, dose, directions, controlled, supply = medication
    written = TODAY - timedelta(days=rng.randint(20, 420))
    expires = written + timedelta(days=PRESCRIPTION_DAYS)
    status = "expired" if expires < TODAY else "discontinued" if rng.random() < 0.08 else "active"
    latest = min(TODAY - timedelta(days=1), expires)
    prescription_id = next_id(db["prescriptions"], "RX-", 5)
    db["prescriptions"][prescription_id] = Prescription(
        prescription_id=prescription_id, patient_id=patient["patient_id"], prescriber_id=patient["primary_doctor_id"],
        medication=name, dose=dose, directions=directions, controlled=controlled, days_supply=supply,
        written_on=written.isoformat(), expires_on=expires.isoformat(),
        last_filled_on=max(written, latest - timedelta(days=rng.randint(0, supply + 5))).isoformat(),
        refills_remaining=rng.randint(0, 2) if controlled else rng.randint(0, 5),
        pharmacy_id=rng.choice(sorted(db["pharmacies"])), status=status).model_dump(mode="json")


def _lab_results(db: dict, rng: Any, patient: dict) -> None:
    for test, unit, printed, low, high, draw_low, draw_high in rng.sample(_TESTS, rng.randint(1, 3)):
        collected = TODAY - timedelta(days=rng.randint(0, 120))
        value = None if (TODAY - collected).days < 2 else round(rng.uniform(draw_low, draw_high), 1)
        flag = None if value is None else "low" if value < low else "high" if value > high else "normal"
        lab_result_id = next_id(db["lab_results"], "LAB-", 5)
        db["lab_results"][lab_result_id] = LabResult(
            lab_result_id=lab_result_id, patient_id=patient["patient_id"], ordered_by=patient["primary_doctor_id"],
            test=test, collected_on=collected.isoformat(), status="pending" if value is None else "final",
            value=value, unit=unit, reference_range=printed, flag=flag).model_dump(mode="json")


def _patient(db: dict, rng: Any, patient_id: str, first: str, last: str, phones: set[str]) -> dict:
    provider = rng.choice(sorted(MEMBER_PREFIX))
    insurance = (Insurance(provider=provider, member_id=f"{MEMBER_PREFIX[provider]}{rng.randint(0, 999_999):06d}")
                 if rng.random() < 0.9 else None)
    return Patient(patient_id=patient_id, first_name=first, last_name=last,
                   date_of_birth=people.date_between(rng, 1940, 2005), phone=people.phone(rng, phones),
                   email=people.email(first, last, "mail.example"), address=people.address(rng),
                   primary_doctor_id=rng.choice(sorted(d for d, doc in db["doctors"].items()
                                                       if doc["specialty"] == "general_practice")),
                   insurance=insurance).model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """Clinics, doctors and pharmacies, and `size` patients with appointments, referrals,
    prescriptions and lab results."""
    rng = seeded_rng("medicine", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    phones: set[str] = set()
    for table, rows, model, key in (("clinics", _CLINICS, Clinic, "clinic_id"),
                                    ("pharmacies", _PHARMACIES, Pharmacy, "pharmacy_id")):
        for record_id, name, city in rows:
            db[table][record_id] = model(**{key: record_id}, name=name, street=people.address(rng)["street"],
                                         city=city, phone=people.phone(rng, phones)).model_dump(mode="json")
    names = people.unique_people(rng, size + 4 * len(_CLINICS))
    _doctors(db, rng, names)
    for index, (first, last) in enumerate(names[len(db["doctors"]):]):
        patient = _patient(db, rng, f"PAT-{1001 + index}", first, last, phones)
        db["patients"][patient["patient_id"]] = patient
        primary = db["doctors"][patient["primary_doctor_id"]]
        for _ in range(rng.randint(0, 2)):
            _appointment(db, rng, patient["patient_id"], primary, range(-90, 0),
                         rng.choice(("completed", "completed", "completed", "no_show")))
        for _ in range(rng.randint(1, 2)):
            days = range(0, 1) if rng.random() < 0.15 else range(1, 22)
            _appointment(db, rng, patient["patient_id"], primary, days,
                         "cancelled" if rng.random() < 0.15 else "scheduled")
        if rng.random() < 0.5:
            _referral(db, rng, patient)
        for medication in rng.sample(_MEDICATIONS, rng.randint(1, 3)):
            _prescription(db, rng, patient, medication)
        _lab_results(db, rng, patient)
    return db
