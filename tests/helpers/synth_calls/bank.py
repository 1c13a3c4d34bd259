"""Known-good calls for every tool of the bank domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import date

from lab.synth.domains import bank_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    today = bank_data.TODAY.isoformat()
    accounts = db["accounts"]
    pair = first(db["customers"].values(), lambda c: sum(
        a["customer_id"] == c["customer_id"] and a["status"] == "open" and a["balance"] > 10
        for a in accounts.values()) == 2)
    checking, savings = sorted(a for a, acc in accounts.items() if acc["customer_id"] == pair["customer_id"])
    card = first(db["cards"].values(), lambda c: c["status"] == "active" and c["daily_limit"] != 5000)
    fraud = first(db["cards"].values(), lambda c: c["block_reason"] == "suspected_fraud")
    purchase = first(db["transactions"].values(), lambda t: t["card_id"] and t["status"] == "posted" and (
        bank_data.TODAY - date.fromisoformat(t["posted_on"])).days <= bank_data.DISPUTE_DAYS)
    transfer = first(db["transfers"].values(), lambda t: t["status"] == "scheduled")
    loan = first(db["loans"].values(), lambda n: any(
        a["customer_id"] == n["customer_id"] and a["status"] == "open" and a["balance"] >= 1
        for a in accounts.values()))
    payer = first(accounts.values(), lambda a: a["customer_id"] == loan["customer_id"] and a["status"] == "open"
                   and a["balance"] >= 1)
    c = db["customers"]["CUS-1001"]
    assert purchase["posted_on"] <= today
    return {
        "find_customer_by_email": [("find_customer_by_email", {"email": c["email"].upper()})],
        "find_customer_by_name_dob": [("find_customer_by_name_dob", {"first_name": c["first_name"],
                                       "last_name": c["last_name"], "date_of_birth": c["date_of_birth"]})],
        "get_customer_details": [("get_customer_details", {"customer_id": c["customer_id"]})],
        "get_account_details": [("get_account_details", {"account_id": checking})],
        "list_account_transactions": [("list_account_transactions", {"account_id": checking})],
        "get_card_details": [("get_card_details", {"card_id": card["card_id"]})],
        "get_loan_details": [("get_loan_details", {"loan_id": loan["loan_id"]})],
        "get_transfer_details": [("get_transfer_details", {"transfer_id": transfer["transfer_id"]})],
        "calculate": [("calculate", {"expression": "(1200 - 350.5) / 3"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a mortgage quote."})],
        "transfer_funds": [("transfer_funds", {"from_account_id": checking, "to_account_id": savings, "amount": 10})],
        "cancel_scheduled_transfer": [("cancel_scheduled_transfer", {"transfer_id": transfer["transfer_id"]})],
        "block_card": [("block_card", {"card_id": card["card_id"], "reason": "stolen"})],
        "unblock_card": [("unblock_card", {"card_id": fraud["card_id"]})],
        "replace_card": [("block_card", {"card_id": card["card_id"], "reason": "damaged"}),
                         ("replace_card", {"card_id": card["card_id"]})],
        "set_card_daily_limit": [("set_card_daily_limit", {"card_id": card["card_id"], "daily_limit": 5000})],
        "dispute_transaction": [("dispute_transaction", {"transaction_id": purchase["transaction_id"],
                                                         "reason": "unrecognized"})],
        "make_loan_payment": [("make_loan_payment", {"loan_id": loan["loan_id"], "from_account_id": payer["account_id"],
                                                     "amount": 1.0})],
        "update_customer_address": [("update_customer_address", {"customer_id": c["customer_id"],
                                     "street": "1 Harbour Walk", "city": "Calder", "zip": "30111"})],
    }
