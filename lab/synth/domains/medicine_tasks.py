"""Medicine task templates: what a patient calls the clinic line about, and the agent's golden chain for each.

Nine templates: easy single writes (cancel an appointment, refill a prescription), medium requests
found by description (the first free time with one's own doctor on a day, a specialist on an active
referral, an appointment moved to the first free time on another day), two writes in one call (a
prescription moved to another pharmacy and refilled there; new insurance on file, then a visit
booked), and two refusals the policy demands though the tools would comply: an early refill of a
controlled substance, where the right chain reads the day the supply ends, which the patient asks
for, and writes nothing; and a controlled substance moved to another pharmacy, where it reads the
phone number of the pharmacy that holds it. The evolution step adds a read-only question (the next
appointment, a lab result's value, a prescription's pharmacy phone) asked after the request is done.

Each chain identifies the patient as the policy demands, by full name or phone number, each with the
date of birth, whichever the scenario's known info gives, and finds doctors, free times,
appointments, referrals, prescriptions and pharmacies through the tools. Where the patient asks for
"the first free time" on a day, the template picks a day on which the doctor has one, so the chain
can take it from find_available_slots.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from lab.synth.domains.medicine_data import (
    CONTROLLED_REFILL_DAYS,
    LATE_CANCEL_HOURS,
    MEMBER_PREFIX,
    NOW,
    TODAY,
    free_times,
    hours_until,
    supply_ends_on,
)
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your patient id or any doctor, appointment, referral, prescription or pharmacy ids."


def _own(db: dict, table: str, patient_id: str, **match: Any) -> list[dict]:
    return records_of(db, table, "patient_id", patient_id, **match)


def _identity(db: dict, patient_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    p = db["patients"][patient_id]
    if rng.random() < 0.5:
        return (f"You are {p['first_name']} {p['last_name']}. You were born on {p['date_of_birth']}.",
                lambda g: g("find_patient_by_name_dob", first_name=p["first_name"], last_name=p["last_name"],
                            date_of_birth=p["date_of_birth"]))
    return (f"You are {p['first_name']} {p['last_name']}. {_phone_sentence(p)} You were born on {p['date_of_birth']}.",
            lambda g: g("find_patient_by_phone", phone=p["phone"], date_of_birth=p["date_of_birth"]))


def _phone_sentence(patient: dict) -> str:
    """How a follow-up question identifies the caller: it is asked after a base request, whose known
    info has given the date of birth the phone lookup needs too."""
    return f"Your phone number is {patient['phone']}."


def _dr(db: dict, doctor_id: str) -> str:
    doctor = db["doctors"][doctor_id]
    return f"Dr. {doctor['first_name']} {doctor['last_name']}"


def _open_day(db: dict, doctor: dict, rng: random.Random, last: str | None = None,
              skip: str | None = None) -> str | None:
    """A day in the next two weeks (not `skip`, not after `last`) on which the doctor has a free time."""
    days = [day for d in range(1, 15) if (day := (TODAY + timedelta(days=d)).isoformat()) != skip
            and (last is None or day <= last) and free_times(db, doctor, day, NOW)]
    return rng.choice(days) if days else None


def _book_first_free(g: Golden, patient_id: str, doctor_id: str, day: str) -> None:
    time = g("find_available_slots", doctor_id=doctor_id, date=day)["free_times"][0]
    g("book_appointment", patient_id=patient_id, doctor_id=doctor_id, date=day, time=time)


def _upcoming(db: dict, patient_id: str) -> list[dict]:
    return [a for a in _own(db, "appointments", patient_id, status="scheduled") if f"{a['date']}T{a['time']}" > NOW]


def _find_appointment(g: Golden, patient_id: str, wanted: dict) -> dict:
    """The scheduled appointment the patient described by day and time, as the agent finds it."""
    ids = g("get_patient_details", patient_id=patient_id)["appointment_ids"]
    return next(a for a in (g("get_appointment_details", appointment_id=i) for i in ids)
                if (a["date"], a["time"], a["status"]) == (wanted["date"], wanted["time"], "scheduled"))


def _find_prescription(g: Golden, patient_id: str, medication: str) -> dict:
    """The patient's active prescription for the medication, as the agent finds it."""
    ids = g("get_patient_details", patient_id=patient_id)["prescription_ids"]
    return next(p for p in (g("get_prescription_details", prescription_id=i) for i in ids)
                if (p["medication"], p["status"]) == (medication, "active"))


def _prescriptions(db: dict, patient_id: str, controlled: bool) -> list[dict]:
    return [p for p in _own(db, "prescriptions", patient_id, status="active") if p["controlled"] is controlled]


def _early(prescription: dict) -> bool:
    """Whether the policy still holds back a refill of this controlled substance."""
    return supply_ends_on(prescription) > (TODAY + timedelta(days=CONTROLLED_REFILL_DAYS)).isoformat()


def _label(prescription: dict) -> str:
    return f"your {prescription['medication']} {prescription['dose']} prescription"


def _other_pharmacy(db: dict, prescription: dict, rng: random.Random) -> dict:
    return db["pharmacies"][rng.choice(sorted(p for p in db["pharmacies"] if p != prescription["pharmacy_id"]))]


def own_doctor_visit(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    doctor = db["doctors"][db["patients"][patient_id]["primary_doctor_id"]]
    day = _open_day(db, doctor, rng)
    if day is None:
        return None
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        _book_first_free(g, found, g("get_patient_details", patient_id=found)["primary_doctor_id"], day)
        return []
    return Scenario("Book the first free time with the patient's primary doctor on the day they ask for.",
                    f"You want an appointment with your regular doctor, {_dr(db, doctor['doctor_id'])}, at the first "
                    f"free time on {day}.", known, UNKNOWN, chain, "medium")


def specialist_visit(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    referrals = _own(db, "referrals", patient_id, status="active")
    if not referrals:
        return None
    referral = rng.choice(referrals)
    specialists = sorted(d for d, doc in db["doctors"].items() if doc["specialty"] == referral["specialty"])
    doctor = db["doctors"][rng.choice(specialists)]
    day = _open_day(db, doctor, rng, last=referral["expires_on"])
    if day is None:
        return None
    clinic = db["clinics"][doctor["clinic_id"]]["name"]
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        ids = g("get_patient_details", patient_id=found)["referral_ids"]
        next(r for r in (g("get_referral_details", referral_id=i) for i in ids)
             if (r["specialty"], r["status"]) == (referral["specialty"], "active"))  # the referral the visit needs
        match = next(d for d in g("search_doctors", query=referral["specialty"])
                     if (d["first_name"], d["last_name"], d["clinic_name"]) == (doctor["first_name"],
                                                                                doctor["last_name"], clinic))
        _book_first_free(g, found, match["doctor_id"], day)
        return []
    return Scenario(f"Book the first free time on the day asked with a specialist in {referral['specialty']}, on "
                    "the patient's active referral.",
                    f"Your doctor referred you to {referral['specialty']}. You want an appointment with "
                    f"{_dr(db, doctor['doctor_id'])} at {clinic}, at the first free time on {day}.",
                    known, UNKNOWN, chain, "medium")


def cancel_visit(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    appointments = _upcoming(db, patient_id)
    if not appointments:
        return None
    appointment = rng.choice(appointments)
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        g("cancel_appointment", appointment_id=_find_appointment(g, identify(g), appointment)["appointment_id"])
        return []
    return Scenario("Cancel the appointment the patient describes, after telling them of any late-cancel fee.",
                    f"You want to cancel your appointment with {_dr(db, appointment['doctor_id'])} on "
                    f"{appointment['date']} at {appointment['time']}. You accept a late-cancel fee if there is one.",
                    known, UNKNOWN, chain, "easy")


def move_visit(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    appointments = [a for a in _upcoming(db, patient_id)
                    if hours_until(a["date"], a["time"], NOW) >= LATE_CANCEL_HOURS]  # the patient knows it is not soon
    if not appointments:
        return None
    appointment = rng.choice(appointments)
    day = _open_day(db, db["doctors"][appointment["doctor_id"]], rng, skip=appointment["date"])
    if day is None:
        return None
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_appointment(g, identify(g), appointment)
        time = g("find_available_slots", doctor_id=found["doctor_id"], date=day)["free_times"][0]
        g("reschedule_appointment", appointment_id=found["appointment_id"], date=day, time=time)
        return []
    return Scenario("Move an appointment to the doctor's first free time on another day.",
                    f"You want to move your appointment with {_dr(db, appointment['doctor_id'])} on "
                    f"{appointment['date']} at {appointment['time']} to the first free time that doctor has on {day}.",
                    known, UNKNOWN, chain, "medium")


def refill(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    allowed = _prescriptions(db, patient_id, False) + [p for p in _prescriptions(db, patient_id, True) if not _early(p)]
    if not allowed:
        return None
    prescription = rng.choice(allowed)
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_prescription(g, identify(g), prescription["medication"])
        g("request_refill", prescription_id=found["prescription_id"])
        return []
    return Scenario("Send a refill of the prescription the patient names to its pharmacy.",
                    f"You are running low and want a refill of {_label(prescription)}.", known, UNKNOWN, chain, "easy")


def transfer_and_refill(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    prescriptions = _prescriptions(db, patient_id, False)
    if not prescriptions:
        return None
    prescription = rng.choice(prescriptions)
    pharmacy = _other_pharmacy(db, prescription, rng)
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_prescription(g, identify(g), prescription["medication"])
        target = next(p for p in g("search_pharmacies", query=pharmacy["name"]) if p["name"] == pharmacy["name"])
        g("transfer_prescription", prescription_id=found["prescription_id"], pharmacy_id=target["pharmacy_id"])
        g("request_refill", prescription_id=found["prescription_id"])
        return []
    return Scenario("Move a prescription to the pharmacy the patient names, then send a refill there.",
                    f"You want {_label(prescription)} moved to {pharmacy['name']} in {pharmacy['city']}, and a "
                    "refill sent there.", known, UNKNOWN, chain, "hard")


def insurance_then_visit(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    patient = db["patients"][patient_id]
    doctor = db["doctors"][patient["primary_doctor_id"]]
    day = _open_day(db, doctor, rng)
    if day is None:
        return None
    provider = rng.choice(sorted(p for p in MEMBER_PREFIX if p != (patient["insurance"] or {}).get("provider")))
    member_id = f"{MEMBER_PREFIX[provider]}{rng.randint(0, 999_999):06d}"
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = identify(g)
        g("update_insurance", patient_id=found, provider=provider, member_id=member_id)
        _book_first_free(g, found, g("get_patient_details", patient_id=found)["primary_doctor_id"], day)
        return []
    return Scenario("Put the patient's new insurance on file, then book the first free time with their primary "
                    "doctor on the day asked.",
                    f"You have new insurance with {provider}, member id {member_id}, and want it on file. Then you "
                    f"want an appointment with your regular doctor, {_dr(db, doctor['doctor_id'])}, at the first "
                    f"free time on {day}.", known, UNKNOWN, chain, "hard")


def refused_early_refill(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    early = [p for p in _prescriptions(db, patient_id, True) if _early(p)]
    if not early:
        return None
    prescription = rng.choice(early)
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_prescription(g, identify(g), prescription["medication"])  # controlled, supply not ending yet
        return [found["supply_ends_on"]]
    return Scenario("Refuse an early refill of a controlled substance (policy) and tell the patient the day their "
                    "current supply ends.",
                    f"You want {_label(prescription)} refilled today, and you want to know on which day your "
                    "current supply runs out.", known, UNKNOWN, chain, "hard")


def refused_controlled_transfer(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    controlled = _prescriptions(db, patient_id, True)
    if not controlled:
        return None
    prescription = rng.choice(controlled)
    pharmacy = _other_pharmacy(db, prescription, rng)
    known, identify = _identity(db, patient_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _find_prescription(g, identify(g), prescription["medication"])  # controlled: it stays where it is
        return [found["pharmacy"]["phone"]]
    return Scenario("Refuse to move a controlled-substance prescription to another pharmacy (policy) and give the "
                    "phone number of the pharmacy that holds it.",
                    f"You want {_label(prescription)} moved to {pharmacy['name']}, and you want the phone number "
                    "of the pharmacy that holds it now.", known, UNKNOWN, chain, "hard")


def next_visit_question(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    if len(_upcoming(db, patient_id)) < 2:  # one may be cancelled by the request before
        return None
    patient = db["patients"][patient_id]

    def chain(g: Golden) -> list[str]:
        found = g("find_patient_by_phone", phone=patient["phone"], date_of_birth=patient["date_of_birth"])
        ids = g("get_patient_details", patient_id=found)["appointment_ids"]
        scheduled = [a for a in (g("get_appointment_details", appointment_id=i) for i in ids)
                     if a["status"] == "scheduled"]
        nearest = min(scheduled, key=lambda a: (a["date"], a["time"]))
        return [nearest["date"], nearest["time"]]
    return Scenario("Tell the patient the day and time of their next appointment.",
                    "ask on which day and at what time your next appointment is.", _phone_sentence(patient),
                    UNKNOWN, chain, "easy")


def lab_value_question(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    results = _own(db, "lab_results", patient_id, status="final")
    if not results:
        return None
    test = rng.choice(results)["test"]
    patient = db["patients"][patient_id]

    def chain(g: Golden) -> list[str]:
        found = g("find_patient_by_phone", phone=patient["phone"], date_of_birth=patient["date_of_birth"])
        ids = g("get_patient_details", patient_id=found)["lab_result_ids"]
        result = next(r for r in (g("get_lab_result", lab_result_id=i) for i in ids)
                      if (r["test"], r["status"]) == (test, "final"))
        return [str(result["value"])]
    return Scenario(f"Read back the value of the patient's {test} result, without interpreting it.",
                    f"ask for the value of your most recent {test} result.", _phone_sentence(patient),
                    UNKNOWN, chain, "easy")


def pharmacy_phone_question(db: dict, patient_id: str, rng: random.Random) -> Scenario | None:
    prescriptions = _own(db, "prescriptions", patient_id, status="active")
    if not prescriptions:
        return None
    prescription = rng.choice(prescriptions)
    patient = db["patients"][patient_id]

    def chain(g: Golden) -> list[str]:
        found = _find_prescription(g, g("find_patient_by_phone", phone=patient["phone"],
                                        date_of_birth=patient["date_of_birth"]), prescription["medication"])
        return [found["pharmacy"]["phone"]]
    return Scenario("Give the phone number of the pharmacy that holds one of the patient's prescriptions.",
                    f"ask for the phone number of the pharmacy that holds {_label(prescription)}.",
                    _phone_sentence(patient), UNKNOWN, chain, "easy")


def _patients(db: dict[str, Any]) -> list[str]:
    return sorted(db["patients"])


RECIPE = TaskRecipe(
    subjects=_patients,
    templates={"own_doctor_visit": own_doctor_visit, "specialist_visit": specialist_visit,
               "cancel_visit": cancel_visit, "move_visit": move_visit, "refill": refill,
               "transfer_and_refill": transfer_and_refill, "insurance_then_visit": insurance_then_visit,
               "refused_early_refill": refused_early_refill,
               "refused_controlled_transfer": refused_controlled_transfer},
    follow_ups={"next_visit_question": next_visit_question, "lab_value_question": lab_value_question,
                "pharmacy_phone_question": pharmacy_phone_question},
)
