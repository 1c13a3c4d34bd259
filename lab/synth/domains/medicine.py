"""The medicine domain: a clinic network's patient line, with clinics, doctors and their weekly hours,
patients, appointments, referrals, pharmacies, prescriptions and lab results, and 19 tools.

Why these records and rules: they are what a clinic's phone line handles (a visit with one's own
doctor, a specialist on referral, a visit moved or cancelled, a refill, a prescription sent to
another pharmacy, a new insurance card, a lab result read back), and each rule gives a task a way to
go wrong. The tools enforce the weekly hours and free slots, the booking window, the referral a
specialist needs, the 24-hour window for moving a visit and the late-cancel fee after it, and the
refills left. Two rules are policy only: a controlled substance may not be refilled early, nor moved
to another pharmacy (the refill and transfer tools would do both), so a task can test that the agent
follows the policy and not just the tools' errors. The agent reads records back and never gives
medical advice.

The records, the seeded data and the slot and supply rules are in `lab.synth.domains.medicine_data`.
"""

from __future__ import annotations

import re

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, clock_day, lookup, next_id, parse_day
from lab.synth.domains.medicine_data import (
    BOOKING_DAYS,
    CONTROLLED_REFILL_DAYS,
    LATE_CANCEL_FEE,
    LATE_CANCEL_HOURS,
    MEMBER_PREFIX,
    NOW,
    SLOT_MINUTES,
    TABLES,
    WEEKDAYS,
    Appointment,
    Insurance,
    Provider,
    free_times,
    generate,
    hours_until,
    patient_busy,
    slot_times,
    supply_ends_on,
)
from lab.synth.generic import add_generic_tools

_MEMBER_ID = re.compile(r"[A-Z]{3}[0-9]{6}")

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()




def _doctor_name(doctor: dict) -> str:
    return f"Dr. {doctor['first_name']} {doctor['last_name']}"


def _bookable(db: dict, doctor: dict, day: str, time: str, now: str) -> None:
    """Raise unless `time` on `day` is a free slot of the doctor, after now and within the booking window."""
    when = parse_day(day, "date")
    if not 0 <= (when - clock_day(now)).days <= BOOKING_DAYS:
        raise ToolRefused(f"date must be from {now[:10]} to {BOOKING_DAYS} days later, got {day}")
    slots = slot_times(doctor, when)
    if time not in slots:
        days = ", ".join(f"{s['weekday']} {s['start']}-{s['end']}" for s in doctor["hours"])
        raise ToolRefused(f"{_doctor_name(doctor)} sees patients in {SLOT_MINUTES}-minute slots on {days}; "
                          f"{time!r} on {day} is not one of them")
    if time not in free_times(db, doctor, day, now):
        raise ToolRefused(f"{day} {time} with {_doctor_name(doctor)} is taken or already past")


def _free_for_patient(db: dict, patient_id: str, day: str, time: str) -> None:
    clash = patient_busy(db, patient_id, day, time)
    if clash is not None:
        raise ToolRefused(f"patient {patient_id} already has appointment {clash} on {day} at {time}")


def _scheduled(db: dict, appointment_id: str, now: str) -> dict:
    """The appointment, if it is scheduled and has not started yet; only those can change."""
    appointment = lookup(db, "appointments", appointment_id, "appointment")
    if appointment["status"] != "scheduled" or hours_until(appointment["date"], appointment["time"], now) <= 0:
        raise ToolRefused(f"appointment {appointment_id} is {appointment['status']} for {appointment['date']} "
                          f"{appointment['time']}; only scheduled appointments that have not started can change")
    return appointment


def _active_prescription(db: dict, prescription_id: str) -> dict:
    prescription = lookup(db, "prescriptions", prescription_id, "prescription")
    if prescription["status"] != "active":
        raise ToolRefused(f"prescription {prescription_id} is {prescription['status']}; the patient needs a new "
                          "prescription from their doctor")
    return prescription


def _prescription_view(db: dict, prescription: dict) -> dict:
    """A prescription as the tools show it: with the day its supply ends and its pharmacy."""
    return {**prescription, "supply_ends_on": supply_ends_on(prescription),
            "pharmacy": db["pharmacies"][prescription["pharmacy_id"]]}


def _own_ids(db: dict, table: str, patient_id: str) -> list[str]:
    return sorted(key for key, record in db[table].items() if record["patient_id"] == patient_id)


@box.read
def find_patient_by_name_dob(db: dict, first_name: str, last_name: str, date_of_birth: str) -> str:
    """Find a patient's id from their full name and date of birth.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    for patient_id, p in db["patients"].items():
        if (p["first_name"].lower(), p["last_name"].lower(), p["date_of_birth"]) == (
                first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip()):
            return patient_id
    raise ToolRefused(f"no patient named '{first_name} {last_name}' born on '{date_of_birth}'")


@box.read
def find_patient_by_phone(db: dict, phone: str, date_of_birth: str) -> str:
    """Find a patient's id from their phone number and date of birth; both must match.

    phone: the number as the patient gives it, e.g. '+1-555-234-5678'; only its digits are compared.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    digits = "".join(ch for ch in phone if ch.isdigit())
    for patient_id, p in db["patients"].items():
        if "".join(ch for ch in p["phone"] if ch.isdigit()) == digits and p["date_of_birth"] == date_of_birth.strip():
            return patient_id
    raise ToolRefused(f"no patient with phone '{phone}' born on '{date_of_birth}'")


@box.read
def get_patient_details(db: dict, patient_id: str) -> str:
    """A patient's contact details, date of birth, primary doctor and insurance on file, with the ids of
    their appointments, referrals, prescriptions and lab results.

    patient_id: the patient, e.g. 'PAT-1001'.
    """
    patient = lookup(db, "patients", patient_id, "patient")
    return as_json({**patient, "appointment_ids": _own_ids(db, "appointments", patient_id),
                    "referral_ids": _own_ids(db, "referrals", patient_id),
                    "prescription_ids": _own_ids(db, "prescriptions", patient_id),
                    "lab_result_ids": _own_ids(db, "lab_results", patient_id)})


@box.read
def search_doctors(db: dict, query: str) -> str:
    """The network's doctors whose name, specialty, clinic or city contains the query: id, name,
    specialty, clinic, city and weekly hours.

    query: part of a name, a specialty ('general practice', 'cardiology', 'dermatology', 'endocrinology',
        'neurology', 'orthopedics'), a clinic name or a city, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    found = []
    for doctor in db["doctors"].values():
        clinic = db["clinics"][doctor["clinic_id"]]
        fields = (f"dr. {doctor['first_name']} {doctor['last_name']}", doctor["specialty"].replace("_", " "),
                  clinic["name"], clinic["city"])
        if any(text in field.lower() for field in fields):
            found.append({**doctor, "clinic_name": clinic["name"], "city": clinic["city"]})
    return as_json(found)


@box.read
def get_doctor_details(db: dict, doctor_id: str) -> str:
    """A doctor's name, specialty and weekly hours, with their clinic's name, address and phone.

    doctor_id: the doctor, e.g. 'DOC-001'.
    """
    doctor = lookup(db, "doctors", doctor_id, "doctor")
    return as_json({**doctor, "clinic": db["clinics"][doctor["clinic_id"]]})


@box.read
def find_available_slots(db: dict, doctor_id: str, date: str, *, now: str) -> str:
    """The free 30-minute appointment times of a doctor on one day, earliest first; a doctor sees
    patients only in their weekly hours.

    doctor_id: the doctor.
    date: the day, YYYY-MM-DD, from today to 60 days ahead.
    """
    doctor = lookup(db, "doctors", doctor_id, "doctor")
    when = parse_day(date, "date")
    if not 0 <= (when - clock_day(now)).days <= BOOKING_DAYS:
        raise ToolRefused(f"date must be from {now[:10]} to {BOOKING_DAYS} days later, got {date}")
    if not slot_times(doctor, when):
        days = ", ".join(session["weekday"] for session in doctor["hours"])
        raise ToolRefused(f"{_doctor_name(doctor)} does not see patients on {when.strftime('%A').lower()}, "
                          f"only on {days}")
    return as_json({"doctor_id": doctor_id, "date": date, "free_times": free_times(db, doctor, date, now)})


@box.read
def get_appointment_details(db: dict, appointment_id: str) -> str:
    """An appointment's patient, doctor, day, time, status, referral and any late-cancel fee.

    appointment_id: the appointment, e.g. 'APT-00001'.
    """
    return as_json(lookup(db, "appointments", appointment_id, "appointment"))


@box.read
def get_referral_details(db: dict, referral_id: str) -> str:
    """A referral's specialty, referring doctor, issue and expiry days and status (active, used or expired).

    referral_id: the referral, e.g. 'REF-0001'.
    """
    return as_json(lookup(db, "referrals", referral_id, "referral"))


@box.read
def get_prescription_details(db: dict, prescription_id: str) -> str:
    """A prescription's medication, dose, directions, whether it is a controlled substance, last fill,
    the day that supply ends, refills remaining, expiry, status and pharmacy.

    prescription_id: the prescription, e.g. 'RX-00001'.
    """
    return as_json(_prescription_view(db, lookup(db, "prescriptions", prescription_id, "prescription")))


@box.read
def search_pharmacies(db: dict, query: str) -> str:
    """The network's pharmacies whose name or city contains the query: id, name, address and phone.

    query: part of a pharmacy name or a city, any letter case.
    """
    text = query.strip().lower()
    if not text:
        raise ToolRefused("query must not be empty")
    return as_json([p for p in db["pharmacies"].values() if text in p["name"].lower() or text in p["city"].lower()])


@box.read
def get_lab_result(db: dict, lab_result_id: str) -> str:
    """A lab result's test, collection day, status, and once final its value, unit, reference range and flag.

    lab_result_id: the lab result, e.g. 'LAB-00001'.
    """
    return as_json(lookup(db, "lab_results", lab_result_id, "lab result"))


add_generic_tools(box)


@box.write
def book_appointment(db: dict, patient_id: str, doctor_id: str, date: str, time: str, *, now: str) -> str:
    """Book a 30-minute appointment at a free time of a doctor; a specialist needs the patient's active
    referral for that specialty, valid on the day, which the booking uses up.

    patient_id: the patient.
    doctor_id: the doctor.
    date: the day, YYYY-MM-DD, from today to 60 days ahead.
    time: a free start time, 'HH:MM', as find_available_slots lists it.
    """
    lookup(db, "patients", patient_id, "patient")
    doctor = lookup(db, "doctors", doctor_id, "doctor")
    _bookable(db, doctor, date, time, now)
    _free_for_patient(db, patient_id, date, time)
    referral = None
    if doctor["specialty"] != "general_practice":
        wanted = (patient_id, doctor["specialty"], "active")
        referral = next((r for r in sorted(db["referrals"].values(), key=lambda r: r["expires_on"])
                         if (r["patient_id"], r["specialty"], r["status"]) == wanted and r["expires_on"] >= date), None)
        if referral is None:
            raise ToolRefused(f"patient {patient_id} has no active {doctor['specialty']} referral valid on {date}; "
                              "a specialist appointment needs one")
        referral["status"] = "used"
    appointment_id = next_id(db["appointments"], "APT-", 5)
    appointment = Appointment(appointment_id=appointment_id, patient_id=patient_id, doctor_id=doctor_id, date=date,
                              time=time, status="scheduled",
                              referral_id=referral["referral_id"] if referral else None,
                              cancellation_fee=0.0, booked_at=now).model_dump(mode="json")
    db["appointments"][appointment_id] = appointment
    return as_json(appointment)


@box.write
def reschedule_appointment(db: dict, appointment_id: str, date: str, time: str, *, now: str) -> str:
    """Move a scheduled appointment to another free time with the same doctor; only until 24 hours
    before it starts.

    appointment_id: the scheduled appointment.
    date: the new day, YYYY-MM-DD.
    time: the new start time, 'HH:MM', free with the same doctor.
    """
    appointment = _scheduled(db, appointment_id, now)
    if hours_until(appointment["date"], appointment["time"], now) < LATE_CANCEL_HOURS:
        raise ToolRefused(f"appointment {appointment_id} starts within {LATE_CANCEL_HOURS} hours and can no longer "
                          "be moved, only cancelled")
    if (date, time) == (appointment["date"], appointment["time"]):
        raise ToolRefused(f"appointment {appointment_id} is already on {date} at {time}")
    _bookable(db, db["doctors"][appointment["doctor_id"]], date, time, now)
    _free_for_patient(db, appointment["patient_id"], date, time)
    referral = db["referrals"].get(appointment["referral_id"])
    if referral is not None and referral["expires_on"] < date:
        raise ToolRefused(f"referral {referral['referral_id']} expires on {referral['expires_on']}, before {date}")
    appointment.update(date=date, time=time)
    return as_json(appointment)


@box.write
def cancel_appointment(db: dict, appointment_id: str, *, now: str) -> str:
    """Cancel a scheduled appointment: free until 24 hours before it starts, later with the 40.00
    late-cancel fee; a referral it used becomes active again.

    appointment_id: the scheduled appointment.
    """
    appointment = _scheduled(db, appointment_id, now)
    late = hours_until(appointment["date"], appointment["time"], now) < LATE_CANCEL_HOURS
    appointment.update(status="cancelled", cancellation_fee=LATE_CANCEL_FEE if late else 0.0)
    referral = db["referrals"].get(appointment["referral_id"])
    if referral is not None and referral["status"] == "used" and referral["expires_on"] >= now[:10]:
        referral["status"] = "active"
    return as_json(appointment)


@box.write
def request_refill(db: dict, prescription_id: str, *, now: str) -> str:
    """Send a refill of an active prescription with refills remaining to its pharmacy today; it uses one refill.

    prescription_id: the prescription to refill.
    """
    prescription = _active_prescription(db, prescription_id)
    if prescription["refills_remaining"] < 1:
        raise ToolRefused(f"prescription {prescription_id} has no refills left; the prescriber must renew it")
    if prescription["last_filled_on"] >= now[:10]:
        raise ToolRefused(f"prescription {prescription_id} was already filled on {prescription['last_filled_on']}")
    prescription.update(refills_remaining=prescription["refills_remaining"] - 1, last_filled_on=now[:10])
    return as_json(_prescription_view(db, prescription))


@box.write
def transfer_prescription(db: dict, prescription_id: str, pharmacy_id: str) -> str:
    """Move an active prescription, with its remaining refills, to another pharmacy of the network.

    prescription_id: the prescription to move.
    pharmacy_id: the pharmacy it should go to, e.g. 'PHM-01'.
    """
    prescription = _active_prescription(db, prescription_id)
    lookup(db, "pharmacies", pharmacy_id, "pharmacy")
    if prescription["pharmacy_id"] == pharmacy_id:
        raise ToolRefused(f"prescription {prescription_id} is already at {pharmacy_id}")
    prescription["pharmacy_id"] = pharmacy_id
    return as_json(_prescription_view(db, prescription))


@box.write
def update_insurance(db: dict, patient_id: str, provider: Provider, member_id: str) -> str:
    """Put a patient's insurance on file: the provider and the member id from their card.

    patient_id: the patient.
    provider: 'Northstar Health', 'Bluewater Mutual', 'Cedar Assurance' or 'Evergreen Care'.
    member_id: the provider's three letters and six digits, e.g. 'NSH012345'.
    """
    patient = lookup(db, "patients", patient_id, "patient")
    if not _MEMBER_ID.fullmatch(member_id) or not member_id.startswith(MEMBER_PREFIX[provider]):
        raise ToolRefused(f"a {provider} member id is '{MEMBER_PREFIX[provider]}' and six digits, got {member_id!r}")
    insurance = Insurance(provider=provider, member_id=member_id).model_dump(mode="json")
    if patient["insurance"] == insurance:
        raise ToolRefused(f"patient {patient_id} already has this insurance on file")
    patient["insurance"] = insurance
    return as_json(patient)


_WEEK = f"{WEEKDAYS[0].capitalize()} to {WEEKDAYS[-1].capitalize()}"
_PROVIDERS = ", ".join(f"{name} ({prefix})" for name, prefix in MEMBER_PREFIX.items())

POLICY = f"""# Clinic network patient line policy

The current time is {NOW} (clinic time). Treat it as now for every date and time rule below.

## Identity
- Before looking at or changing anything, identify the patient: by full name and date of birth, or
  by phone number and date of birth. Help only that patient, with their own appointments,
  referrals, prescriptions, insurance and results; never discuss another patient's records.

## Changes
- Before any change (booking, moving or cancelling an appointment, refill, pharmacy transfer,
  insurance), state exactly what you will do and get the patient's explicit "yes".
- Make one change per tool call; do not make changes the patient did not ask for.

## No medical advice
- You are not a clinician: do not diagnose, interpret results, or advise on medicines, doses or
  treatment. Offer an appointment with a doctor instead. In an emergency, tell the patient to call 911.

## Appointments
- Appointments are {SLOT_MINUTES} minutes, in a doctor's weekly hours ({_WEEK}), from now to {BOOKING_DAYS}
  days ahead; find free times with find_available_slots. A patient cannot hold two appointments at
  the same time.
- A general practice appointment is with the patient's primary doctor unless they ask for another.
- A specialist appointment needs an active referral for that specialty that is still valid on the
  appointment day; booking uses the referral up, and cancelling the appointment returns it.
- An appointment can be moved to another free time with the same doctor until {LATE_CANCEL_HOURS} hours before
  it starts; after that it can only be cancelled.
- Cancelling is free until {LATE_CANCEL_HOURS} hours before the start; a later cancellation costs a
  {LATE_CANCEL_FEE:.2f} late-cancel fee. Tell the patient about the fee before they confirm.

## Prescriptions
- A refill needs an active prescription with refills remaining; it is sent to the prescription's
  pharmacy. An expired, discontinued or used-up prescription needs a new one from the doctor: offer
  an appointment.
- Controlled substances (controlled: true) may be refilled only from {CONTROLLED_REFILL_DAYS} days before the current
  supply ends (supply_ends_on). Refuse an earlier refill, even though the system would accept it.
- A prescription can be moved to another pharmacy of the network, except a controlled substance:
  refuse to transfer one, even though the system would accept it; the prescriber can write a new
  prescription for another pharmacy.

## Insurance
- Put the provider and the member id from the patient's card on file. Accepted providers, with the
  three letters their member ids start with before six digits:
  {_PROVIDERS}.

## Lab results
- Read a final result's value, unit, reference range and flag back as recorded, without saying what
  it means; a pending result is not ready yet. Questions about a result go to the doctor.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="medicine", tables=TABLES, generate=generate, default_size=50, tools=box.tools,
                policy=POLICY, now=NOW)
