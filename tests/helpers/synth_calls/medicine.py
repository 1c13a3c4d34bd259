"""Known-good calls for every tool of the medicine domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import timedelta

from lab.synth.domains import medicine_data
from tests.helpers.synth_calls.common import Calls, first


def _free_slot(db: dict, doctor: dict, patient_id: str, not_on: str = "") -> tuple[str, str]:
    """The first free (day, time) of the doctor in the coming weeks that the patient is free at."""
    for offset in range(1, 30):
        day = (medicine_data.TODAY + timedelta(days=offset)).isoformat()
        if day == not_on:
            continue
        for time in medicine_data.free_times(db, doctor, day, medicine_data.NOW):
            if medicine_data.patient_busy(db, patient_id, day, time) is None:
                return day, time
    raise AssertionError(f"no free slot for {doctor['doctor_id']}")


def calls(db: dict) -> Calls:
    p = db["patients"]["PAT-1001"]
    doctor = db["doctors"][p["primary_doctor_id"]]
    day, time = _free_slot(db, doctor, p["patient_id"])
    movable = first(db["appointments"].values(), lambda a: a["status"] == "scheduled" and medicine_data.hours_until(
        a["date"], a["time"], medicine_data.NOW) >= medicine_data.LATE_CANCEL_HOURS and a["referral_id"] is None)
    new_day, new_time = _free_slot(db, db["doctors"][movable["doctor_id"]], movable["patient_id"], movable["date"])
    refillable = first(db["prescriptions"].values(), lambda r: r["status"] == "active" and r["refills_remaining"] > 0)
    other_pharmacy = first(db["pharmacies"].values(), lambda ph: ph["pharmacy_id"] != refillable["pharmacy_id"])
    provider = "Evergreen Care" if (p["insurance"] or {}).get("provider") != "Evergreen Care" else "Cedar Assurance"
    return {
        "find_patient_by_name_dob": [("find_patient_by_name_dob", {"first_name": p["first_name"].upper(),
                                      "last_name": p["last_name"], "date_of_birth": p["date_of_birth"]})],
        "find_patient_by_phone": [("find_patient_by_phone", {"phone": p["phone"].replace("-", " "),
                                                             "date_of_birth": p["date_of_birth"]})],
        "get_patient_details": [("get_patient_details", {"patient_id": p["patient_id"]})],
        "search_doctors": [("search_doctors", {"query": "Cardiology"})],
        "get_doctor_details": [("get_doctor_details", {"doctor_id": doctor["doctor_id"]})],
        "find_available_slots": [("find_available_slots", {"doctor_id": doctor["doctor_id"], "date": day})],
        "get_appointment_details": [("get_appointment_details", {"appointment_id": movable["appointment_id"]})],
        "get_referral_details": [("get_referral_details", {"referral_id": "REF-0001"})],
        "get_prescription_details": [("get_prescription_details",
                                      {"prescription_id": refillable["prescription_id"]})],
        "search_pharmacies": [("search_pharmacies", {"query": "harbour"})],
        "get_lab_result": [("get_lab_result", {"lab_result_id": "LAB-00001"})],
        "calculate": [("calculate", {"expression": "2 * 40"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Asks for a billing dispute."})],
        "book_appointment": [("book_appointment", {"patient_id": p["patient_id"], "doctor_id": doctor["doctor_id"],
                                                   "date": day, "time": time})],
        "reschedule_appointment": [("reschedule_appointment", {"appointment_id": movable["appointment_id"],
                                                               "date": new_day, "time": new_time})],
        "cancel_appointment": [("cancel_appointment", {"appointment_id": movable["appointment_id"]})],
        "request_refill": [("request_refill", {"prescription_id": refillable["prescription_id"]})],
        "transfer_prescription": [("transfer_prescription", {"prescription_id": refillable["prescription_id"],
                                                             "pharmacy_id": other_pharmacy["pharmacy_id"]})],
        "update_insurance": [("update_insurance", {"patient_id": p["patient_id"], "provider": provider,
                                                   "member_id": f"{medicine_data.MEMBER_PREFIX[provider]}004217"})],
    }
