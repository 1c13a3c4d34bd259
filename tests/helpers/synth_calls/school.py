"""Known-good calls for every tool of the school domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import date, timedelta

from lab.synth.domains import school_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    today = school_data.TODAY.isoformat()
    tomorrow = (school_data.TODAY + timedelta(days=1)).isoformat()
    g = db["guardians"]["GDN-0001"]
    s = db["students"]["STU-0001"]
    sections = sorted(db["sections"].values(), key=lambda x: x["section_id"])
    open_seat = [x for x in sections if school_data.seats_taken(db, x["section_id"]) < x["capacity"]]
    student, section = next((st, x) for st in sorted(db["students"].values(), key=lambda r: r["student_id"])
                            for x in open_seat if x["fee"] and x["drop_deadline"] >= today
                            and x["school_id"] == st["school_id"] and st["grade_level"] in x["grade_levels"]
                            and school_data.clash(db, st["student_id"], x) is None)
    droppable = first(db["enrolments"].values(), lambda e: e["status"] == "enrolled"
                      and db["sections"][e["section_id"]]["drop_deadline"] >= today)
    enrolment, other = next((e, x) for e in sorted(db["enrolments"].values(), key=lambda r: r["enrolment_id"])
                            for x in open_seat if e["status"] == "enrolled" and x["section_id"] != e["section_id"]
                            and x["course"] == db["sections"][e["section_id"]]["course"]
                            and x["school_id"] == db["sections"][e["section_id"]]["school_id"]
                            and school_data.clash(db, e["student_id"], x, ignore=e["enrolment_id"]) is None)
    absence = first(db["attendance"].values(), lambda a: a["status"] == "absent" and not a["excused"]
                    and (school_data.TODAY - date.fromisoformat(a["date"])).days
                    <= school_data.EXCUSE_DAYS)
    invoice = first(db["invoices"].values(), lambda i: i["status"] == "open")
    rider, route = next((st, r) for st in sorted(db["students"].values(), key=lambda r: r["student_id"])
                        for r in db["bus_routes"].values() if r["school_id"] == st["school_id"]
                        and r["route_id"] != st["bus_route_id"] and school_data.riders(db, r["route_id"]) < r["seats"])
    return {
        "find_guardian_by_email": [("find_guardian_by_email", {"email": g["email"].upper()})],
        "find_guardian_by_name_phone": [("find_guardian_by_name_phone", {
            "first_name": g["first_name"], "last_name": g["last_name"], "phone": g["phone"].replace("-", " ")})],
        "get_guardian_details": [("get_guardian_details", {"guardian_id": g["guardian_id"]})],
        "get_student_details": [("get_student_details", {"student_id": s["student_id"]})],
        "get_student_schedule": [("get_student_schedule", {"student_id": s["student_id"]})],
        "get_student_grades": [("get_student_grades", {"student_id": s["student_id"]})],
        "list_attendance": [("list_attendance", {"student_id": s["student_id"]})],
        "list_invoices": [("list_invoices", {"student_id": s["student_id"]})],
        "search_sections": [("search_sections", {"school_id": "SCH-1", "query": "ROBOTICS"})],
        "list_bus_routes": [("list_bus_routes", {"school_id": "SCH-2"})],
        "calculate": [("calculate", {"expression": "60 - 22.5"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Refund of a paid course fee."})],
        "report_absence": [("report_absence", {"student_id": s["student_id"], "date": tomorrow, "reason": "illness"})],
        "excuse_absence": [("excuse_absence", {"attendance_id": absence["attendance_id"],
                                               "reason": "medical_appointment"})],
        "enrol_in_section": [("enrol_in_section", {"student_id": student["student_id"],
                                                   "section_id": section["section_id"]})],
        "drop_section": [("drop_section", {"enrolment_id": droppable["enrolment_id"]})],
        "swap_section": [("swap_section", {"enrolment_id": enrolment["enrolment_id"],
                                           "section_id": other["section_id"]})],
        "pay_invoice": [("pay_invoice", {"invoice_id": invoice["invoice_id"], "amount": school_data.balance(invoice),
                                         "method": "card"})],
        "assign_bus_route": [("assign_bus_route", {"student_id": rider["student_id"], "route_id": route["route_id"]})],
        "update_student_address": [("update_student_address", {"student_id": s["student_id"],
                                                               "street": "12 Heron Way", "city": "Calder",
                                                               "zip": "30412"})],
    }
