"""The bank domain: customers, accounts, cards, transactions, transfers and loans, with 19 tools.

Why these records and rules: they are what a bank's phone agent handles (money between accounts,
lost cards, disputed charges, loan instalments, a new address), and each rule gives a task a way to
go wrong. Some rules are enforced by the tools (a frozen account sends nothing, a lost card stays
blocked); one is policy only (a transfer to another customer above 1000.00 must be refused), so a
task can test that the agent follows the policy and not just the tools' errors.

Money is a float rounded to the cent after every operation; an amount leaving an account is negative
in its transactions. The records and the seeded data are in `lab.synth.domains.bank_data`.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date

from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox
from lab.synth.domain import Domain, as_json, clock_day, id_by_email, lookup, next_id
from lab.synth.domains.bank_data import (
    DISPUTE_DAYS,
    EXTERNAL_TRANSFER_LIMIT,
    NOW,
    TABLES,
    BlockReason,
    Card,
    DisputeReason,
    Transaction,
    Transfer,
    generate,
    last_four,
)
from lab.synth.generic import add_generic_tools

# ---- tools -----------------------------------------------------------------------------------------

box = Toolbox()



def _amount(amount: float) -> float:
    if amount <= 0 or round(amount, 2) != amount:
        raise ToolRefused(f"amount must be more than 0 with at most two decimals, got {amount}")
    return amount


def _open_account(db: dict, account_id: str) -> dict:
    account = lookup(db, "accounts", account_id, "account")
    if account["status"] != "open":
        raise ToolRefused(f"account {account_id} is {account['status']}; it can neither send nor receive money")
    return account


def _post(db: dict, account_id: str, amount: float, description: str, now: str) -> None:
    """Add a posted transaction of `amount` (negative: money out) to the account and its balance."""
    account = db["accounts"][account_id]
    account["balance"] = round(account["balance"] + amount, 2)
    transaction_id = next_id(db["transactions"], "TXN-", 6)
    db["transactions"][transaction_id] = Transaction(
        transaction_id=transaction_id, account_id=account_id, card_id=None, posted_on=now[:10],
        description=description, amount=amount, status="posted", dispute_reason=None).model_dump(mode="json")


@box.read
def find_customer_by_email(db: dict, email: str) -> str:
    """Find a customer's id from their email address.

    email: the customer's email address, any letter case.
    """
    return id_by_email(db, "customers", email, "customer")


@box.read
def find_customer_by_name_dob(db: dict, first_name: str, last_name: str, date_of_birth: str) -> str:
    """Find a customer's id from their full name and date of birth.

    first_name: given name, any letter case.
    last_name: family name, any letter case.
    date_of_birth: date of birth as YYYY-MM-DD.
    """
    for cid, c in db["customers"].items():
        if (c["first_name"].lower(), c["last_name"].lower(), c["date_of_birth"]) == (
                first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip()):
            return cid
    raise ToolRefused(f"no customer named '{first_name} {last_name}' born on '{date_of_birth}'")


@box.read
def get_customer_details(db: dict, customer_id: str) -> str:
    """A customer's contact details and address, with the ids of their accounts and loans.

    customer_id: the customer, e.g. 'CUS-1001'.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    return as_json({**customer,
                    "account_ids": sorted(a for a, acc in db["accounts"].items() if acc["customer_id"] == customer_id),
                    "loan_ids": sorted(n for n, loan in db["loans"].items() if loan["customer_id"] == customer_id)})


@box.read
def get_account_details(db: dict, account_id: str) -> str:
    """An account's kind, balance and status, with its cards and its scheduled outgoing transfers.

    account_id: the account, e.g. 'ACC-000001'.
    """
    account = lookup(db, "accounts", account_id, "account")
    return as_json({**account,
                    "card_ids": sorted(c for c, card in db["cards"].items() if card["account_id"] == account_id),
                    "scheduled_transfer_ids": sorted(t for t, tr in db["transfers"].items()
                                                     if tr["from_account_id"] == account_id
                                                     and tr["status"] == "scheduled")})


@box.read
def list_account_transactions(db: dict, account_id: str) -> str:
    """Every transaction of an account, newest first: date, description, amount (negative = out), status.

    account_id: the account whose transactions to list.
    """
    lookup(db, "accounts", account_id, "account")
    rows = [t for t in db["transactions"].values() if t["account_id"] == account_id]
    return as_json(sorted(rows, key=lambda t: (t["posted_on"], t["transaction_id"]), reverse=True))


@box.read
def get_card_details(db: dict, card_id: str) -> str:
    """A card's kind, last four digits, status, block reason, daily limit and expiry.

    card_id: the card, e.g. 'CRD-00001'.
    """
    return as_json(lookup(db, "cards", card_id, "card"))


@box.read
def get_loan_details(db: dict, loan_id: str) -> str:
    """A loan's kind, outstanding amount, monthly payment, rate and next due date.

    loan_id: the loan, e.g. 'LN-0001'.
    """
    return as_json(lookup(db, "loans", loan_id, "loan"))


@box.read
def get_transfer_details(db: dict, transfer_id: str) -> str:
    """A transfer's accounts, amount, status and date.

    transfer_id: the transfer, e.g. 'TRF-00001'.
    """
    return as_json(lookup(db, "transfers", transfer_id, "transfer"))


add_generic_tools(box)


@box.write
def transfer_funds(db: dict, from_account_id: str, to_account_id: str, amount: float, *, now: str) -> str:
    """Move money now from one account to another account of the bank; both accounts must be open.

    from_account_id: the account the money leaves.
    to_account_id: the account the money goes to.
    amount: dollars, more than 0, at most two decimals, at most the source balance.
    """
    if from_account_id == to_account_id:
        raise ToolRefused("the two accounts must differ")
    source, _ = _open_account(db, from_account_id), _open_account(db, to_account_id)
    if _amount(amount) > source["balance"]:
        raise ToolRefused(f"amount {amount} exceeds the balance of {from_account_id}")
    transfer_id = next_id(db["transfers"], "TRF-", 5)
    transfer = Transfer(transfer_id=transfer_id, from_account_id=from_account_id, to_account_id=to_account_id,
                        amount=amount, status="completed",
                        scheduled_for=now[:10], created_at=now).model_dump(mode="json")
    db["transfers"][transfer_id] = transfer
    _post(db, from_account_id, -amount, f"Transfer to {to_account_id}", now)
    _post(db, to_account_id, amount, f"Transfer from {from_account_id}", now)
    return as_json(transfer)


@box.write
def cancel_scheduled_transfer(db: dict, transfer_id: str, *, now: str) -> str:
    """Cancel a transfer that is scheduled for a later day.

    transfer_id: the scheduled transfer.
    """
    transfer = lookup(db, "transfers", transfer_id, "transfer")
    if transfer["status"] != "scheduled" or transfer["scheduled_for"] <= now[:10]:
        raise ToolRefused(f"transfer {transfer_id} is {transfer['status']} for {transfer['scheduled_for']}; "
                          "only transfers scheduled for a later day can be cancelled")
    transfer["status"] = "cancelled"
    return as_json(transfer)


@box.write
def block_card(db: dict, card_id: str, reason: BlockReason) -> str:
    """Block an active card at once; lost, stolen and damaged blocks are permanent.

    card_id: the card to block.
    reason: why: 'lost', 'stolen', 'damaged' or 'suspected_fraud'.
    """
    card = lookup(db, "cards", card_id, "card")
    if card["status"] != "active":
        raise ToolRefused(f"card {card_id} is already {card['status']} ({card['block_reason']})")
    card["status"], card["block_reason"] = "blocked", reason
    return as_json(card)


@box.write
def unblock_card(db: dict, card_id: str) -> str:
    """Unblock a card that was blocked for suspected fraud.

    card_id: the blocked card.
    """
    card = lookup(db, "cards", card_id, "card")
    if card["status"] != "blocked" or card["block_reason"] != "suspected_fraud":
        raise ToolRefused(f"card {card_id} is {card['status']} ({card['block_reason']}); only cards blocked for "
                          "suspected fraud can be unblocked")
    card["status"], card["block_reason"] = "active", None
    return as_json(card)


@box.write
def replace_card(db: dict, card_id: str, *, now: str) -> str:
    """Issue a new physical card for a card blocked as lost, stolen or damaged; returns the new card.

    card_id: the blocked card to replace.
    """
    card = lookup(db, "cards", card_id, "card")
    if card["block_reason"] not in ("lost", "stolen", "damaged") or card["replaced_by"] is not None:
        raise ToolRefused(f"card {card_id} is {card['status']} ({card['block_reason']}, replaced by "
                          f"{card['replaced_by']}); only unreplaced lost, stolen or damaged cards can be replaced")
    new_id = next_id(db["cards"], "CRD-", 5)
    start = int.from_bytes(hashlib.sha256(new_id.encode()).digest()[:4], "big") % 10_000
    new = Card(card_id=new_id, account_id=card["account_id"], kind="physical",
               last_four=last_four(start, {c["last_four"] for c in db["cards"].values()}), status="active",
               block_reason=None, daily_limit=card["daily_limit"], expires=f"{int(now[:4]) + 4}{now[4:7]}",
               replaced_by=None).model_dump(mode="json")
    db["cards"][new_id] = new
    card["replaced_by"] = new_id
    return as_json(new)


@box.write
def set_card_daily_limit(db: dict, card_id: str, daily_limit: int) -> str:
    """Set an active card's daily spending limit.

    card_id: the active card.
    daily_limit: dollars per day, a multiple of 100 from 100 to 5000.
    """
    card = lookup(db, "cards", card_id, "card")
    if card["status"] != "active":
        raise ToolRefused(f"card {card_id} is {card['status']}; only active cards have a limit to change")
    if not 100 <= daily_limit <= 5000 or daily_limit % 100:
        raise ToolRefused(f"daily_limit must be a multiple of 100 from 100 to 5000, got {daily_limit}")
    card["daily_limit"] = daily_limit
    return as_json(card)


@box.write
def dispute_transaction(db: dict, transaction_id: str, reason: DisputeReason, *, now: str) -> str:
    """Open a dispute on a posted card purchase from the last 60 days.

    transaction_id: the card purchase to dispute.
    reason: 'unrecognized', 'duplicate', 'wrong_amount' or 'not_received'.
    """
    transaction = lookup(db, "transactions", transaction_id, "transaction")
    if transaction["card_id"] is None or transaction["amount"] >= 0 or transaction["status"] != "posted":
        raise ToolRefused(f"transaction {transaction_id} is a {transaction['status']} "
                          f"{'card purchase' if transaction['card_id'] else 'non-card entry'}; only posted card "
                          "purchases can be disputed")
    if (clock_day(now) - date.fromisoformat(transaction["posted_on"])).days > DISPUTE_DAYS:
        raise ToolRefused(f"transaction {transaction_id} was posted on {transaction['posted_on']}, more than "
                          f"{DISPUTE_DAYS} days ago; it can no longer be disputed")
    transaction["status"], transaction["dispute_reason"] = "disputed", reason
    return as_json(transaction)


@box.write
def make_loan_payment(db: dict, loan_id: str, from_account_id: str, amount: float, *, now: str) -> str:
    """Pay towards an active loan from one of the borrower's own open accounts.

    loan_id: the loan to pay.
    from_account_id: the borrower's account the payment leaves.
    amount: dollars, at most the outstanding amount and the account balance; paying at least the
        monthly payment moves the next due date on by a month.
    """
    loan = lookup(db, "loans", loan_id, "loan")
    account = _open_account(db, from_account_id)
    if loan["status"] != "active":
        raise ToolRefused(f"loan {loan_id} is {loan['status']}")
    if account["customer_id"] != loan["customer_id"]:
        raise ToolRefused(f"account {from_account_id} does not belong to the borrower of {loan_id}")
    if _amount(amount) > loan["outstanding"] or amount > account["balance"]:
        raise ToolRefused(f"amount {amount} exceeds the outstanding amount of {loan_id} or the balance of "
                          f"{from_account_id}")
    _post(db, from_account_id, -amount, f"Loan payment {loan_id}", now)
    loan["outstanding"] = round(loan["outstanding"] - amount, 2)
    if amount >= loan["monthly_payment"]:
        due = date.fromisoformat(loan["next_due_on"])
        loan["next_due_on"] = due.replace(year=due.year + due.month // 12, month=due.month % 12 + 1).isoformat()
    if loan["outstanding"] == 0:
        loan["status"] = "paid_off"
    return as_json(loan)


@box.write
def update_customer_address(db: dict, customer_id: str, street: str, city: str, zip: str) -> str:  # noqa: A002
    """Change a customer's postal address.

    customer_id: the customer who moved.
    street: house number and street.
    city: city name.
    zip: 5-digit zip code.
    """
    customer = lookup(db, "customers", customer_id, "customer")
    if not street.strip() or not city.strip() or not re.fullmatch(r"[0-9]{5}", zip):
        raise ToolRefused(f"street and city must not be empty and zip must be 5 digits, got {zip!r}")
    customer["address"] = {"street": street, "city": city, "zip": zip}
    return as_json(customer)


POLICY = f"""# Bank agent policy

The current time is {NOW} (bank time). Treat it as now for every date rule below.

## Identity
- Before looking at or changing anything, identify the customer: by email address, or by full name
  and date of birth. Help only that customer, with their own accounts, cards and loans.
- Never tell a customer anything about an account that is not theirs beyond whether it can receive money.

## Changes
- Before any change (transfer, card, dispute, loan payment, address), state exactly what you will do
  and get the customer's explicit "yes".
- Make one change per tool call; do not make changes the customer did not ask for.

## Transfers
- Amounts are in dollars, more than 0 with at most two decimals, and at most the source balance.
  Both accounts must be open; frozen accounts can neither send nor receive.
- A transfer to an account of another customer may be at most {EXTERNAL_TRANSFER_LIMIT:.2f}. Refuse a larger
  one and tell the customer it must be made in a branch; do not split it into smaller transfers.
- A scheduled transfer can be cancelled only before the day it is scheduled for.

## Cards
- A lost, stolen or damaged card is blocked with that reason; such a block is permanent. Offer a
  replacement, which is a new physical card on the same account.
- A card blocked for suspected fraud may be unblocked once the customer confirms the charges were theirs.
- Daily limits are multiples of 100 from 100 to 5000 and apply to active cards only.

## Disputes
- Only posted card purchases from the last {DISPUTE_DAYS} days can be disputed. Reasons: unrecognized,
  duplicate, wrong_amount, not_received; use the one that matches what the customer says.

## Loans
- Payments come from the borrower's own open account, at most the outstanding amount and the balance.
  A payment of at least the monthly payment moves the next due date on by one month.

## Anything else
- Transfer to a human agent only for a request these rules and tools cannot handle.
"""

DOMAIN = Domain(name="bank", tables=TABLES, generate=generate, default_size=60, tools=box.tools,
                policy=POLICY, now=NOW)
