"""The bank domain's records and seeded data: customers, accounts, cards, transactions, transfers, loans.

Why apart from the tools (`lab.synth.domains.bank`): the schema and the generator are the domain's
"database schema + data" half (paper §3.3) and read on their own; the tools only use the models to
build new records in canonical form.

Each customer has a checking account with a physical card (some also a virtual one, about one card
in ten blocked for suspected fraud) and 4-9 recent transactions; three in four also save, some of
those with a transfer to savings scheduled, and almost half have a loan. Balances are drawn
independently of the transaction history (a simplification: the history is recent activity, not a
ledger the balance is summed from). Ids count up per table (`ACC-000001`, `CRD-00001`, ...).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from lab.env.errors import ToolRefused
from lab.synth import people
from lab.synth.domain import Record, next_id, seeded_rng
from lab.synth.people import Address

NOW = "2025-06-16T09:30:00"
TODAY = date(2025, 6, 16)
DISPUTE_DAYS = 60
EXTERNAL_TRANSFER_LIMIT = 1000.0

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Money = Annotated[float, Field(ge=0)]
BlockReason = Literal["lost", "stolen", "damaged", "suspected_fraud"]
DisputeReason = Literal["unrecognized", "duplicate", "wrong_amount", "not_received"]


class Customer(Record):
    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: Day
    address: Address


class Account(Record):
    account_id: str
    customer_id: str
    kind: Literal["checking", "savings"]
    balance: Money
    status: Literal["open", "frozen"]
    opened_on: Day


class Card(Record):
    card_id: str
    account_id: str
    kind: Literal["physical", "virtual"]
    last_four: Annotated[str, Field(pattern=r"^\d{4}$")]
    status: Literal["active", "blocked"]
    block_reason: BlockReason | None
    daily_limit: Annotated[int, Field(ge=100, le=5000)]
    expires: Annotated[str, Field(pattern=r"^\d{4}-\d{2}$")]
    replaced_by: str | None


class Transaction(Record):
    transaction_id: str
    account_id: str
    card_id: str | None
    posted_on: Day
    description: str
    amount: float
    status: Literal["pending", "posted", "disputed"]
    dispute_reason: DisputeReason | None


class Transfer(Record):
    transfer_id: str
    from_account_id: str
    to_account_id: str
    amount: Annotated[float, Field(gt=0)]
    status: Literal["scheduled", "completed", "cancelled"]
    scheduled_for: Day
    created_at: str


class Loan(Record):
    loan_id: str
    customer_id: str
    kind: Literal["personal", "auto", "mortgage"]
    principal: Money
    outstanding: Money
    annual_rate: float
    monthly_payment: Money
    next_due_on: Day
    status: Literal["active", "paid_off"]


TABLES: dict[str, type[Record]] = {"customers": Customer, "accounts": Account, "cards": Card,
                                   "transactions": Transaction, "transfers": Transfer, "loans": Loan}

# ---- seeded data -----------------------------------------------------------------------------------

_PURCHASES = (("Corner Grocer", 12, 95), ("Fuel Stop", 30, 80), ("Riverside Pharmacy", 6, 60),
              ("Lumen Electronics", 40, 600), ("Cafe Aurora", 3, 18), ("Metro Transit", 2, 45),
              ("Northwind Books", 9, 70), ("Harbor Hardware", 15, 240), ("Streamly Subscription", 8, 20))
_LOAN_TERMS = {"personal": (3000, 25000, 0.089), "auto": (8000, 40000, 0.059), "mortgage": (90000, 400000, 0.041)}


def _money(rng: Any, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def _card(db: dict, rng: Any, account_id: str, kind: str, used: set[str]) -> None:
    card_id = next_id(db["cards"], "CRD-", 5)
    fraud = rng.random() < 0.1
    db["cards"][card_id] = Card(
        card_id=card_id, account_id=account_id, kind=kind, last_four=last_four(rng.randrange(10_000), used),
        status="blocked" if fraud else "active", block_reason="suspected_fraud" if fraud else None,
        daily_limit=rng.choice((500, 1000, 1500, 2000, 2500)),
        expires=f"{rng.randint(2026, 2029)}-{rng.randint(1, 12):02d}",
        replaced_by=None).model_dump(mode="json")


def last_four(start: int, used: set[str]) -> str:
    """The first unused four digits from `start` on, so a card's last four name it within the bank."""
    for step in range(10_000):
        digits = f"{(start + step) % 10_000:04d}"
        if digits not in used:
            used.add(digits)
            return digits
    raise ToolRefused("no card numbers left")


def _transactions(db: dict, rng: Any, account: dict, card_ids: list[str]) -> None:
    rows = []
    for _ in range(rng.randint(4, 9)):
        day = TODAY - timedelta(days=rng.randint(0, 89))
        if account["kind"] == "checking" and card_ids and rng.random() < 0.8:
            merchant, low, high = rng.choice(_PURCHASES)
            rows.append((day, rng.choice(card_ids), merchant, -_money(rng, low, high)))
        elif account["kind"] == "checking":
            rows.append((day, None, "Payroll deposit", _money(rng, 900, 3200)))
        else:
            rows.append((day, None, "Interest payment", _money(rng, 1, 40)))
    for day, card_id, description, amount in sorted(rows, key=lambda row: row[0]):  # stable: draw order breaks ties
        transaction_id = next_id(db["transactions"], "TXN-", 6)
        db["transactions"][transaction_id] = Transaction(
            transaction_id=transaction_id, account_id=account["account_id"], card_id=card_id,
            posted_on=day.isoformat(), description=description, amount=amount,
            status="pending" if (TODAY - day).days < 2 else "posted", dispute_reason=None).model_dump(mode="json")


def generate(seed: int, size: int) -> dict[str, Any]:
    """`size` customers, each with a checking account (card and history), maybe savings and a loan."""
    rng = seeded_rng("bank", "data", seed)
    db: dict[str, dict] = {table: {} for table in TABLES}
    phones: set[str] = set()
    last_fours: set[str] = set()
    for index, (first, last) in enumerate(people.unique_people(rng, size)):
        customer_id = f"CUS-{1001 + index}"
        db["customers"][customer_id] = Customer(
            customer_id=customer_id, first_name=first, last_name=last, email=people.email(first, last, "mail.example"),
            phone=people.phone(rng, phones), date_of_birth=people.date_between(rng, 1950, 2003),
            address=people.address(rng)).model_dump(mode="json")
        kinds = ["checking", "savings"] if rng.random() < 0.75 else ["checking"]
        for kind in kinds:
            account_id = next_id(db["accounts"], "ACC-", 6)
            account = Account(account_id=account_id, customer_id=customer_id, kind=kind,
                              balance=_money(rng, 150, 6000) if kind == "checking" else _money(rng, 500, 30000),
                              status="frozen" if rng.random() < 0.05 else "open",
                              opened_on=people.date_between(rng, 2012, 2024)).model_dump(mode="json")
            db["accounts"][account_id] = account
            if kind == "checking":
                _card(db, rng, account_id, "physical", last_fours)
                if rng.random() < 0.4:
                    _card(db, rng, account_id, "virtual", last_fours)
            _transactions(db, rng, account, [c for c, card in db["cards"].items() if card["account_id"] == account_id])
        if len(kinds) == 2 and rng.random() < 0.35:
            checking, savings = sorted(a for a, acc in db["accounts"].items() if acc["customer_id"] == customer_id)
            transfer_id = next_id(db["transfers"], "TRF-", 5)
            db["transfers"][transfer_id] = Transfer(
                transfer_id=transfer_id, from_account_id=checking, to_account_id=savings,
                amount=float(rng.randrange(50, 800, 25)), status="scheduled",
                scheduled_for=(TODAY + timedelta(days=rng.randint(1, 20))).isoformat(),
                created_at="2025-06-01T08:00:00").model_dump(mode="json")
        if rng.random() < 0.45:
            kind = rng.choice(sorted(_LOAN_TERMS))
            low, high, rate = _LOAN_TERMS[kind]
            principal = float(rng.randrange(low, high, 500))
            loan_id = next_id(db["loans"], "LN-", 4)
            db["loans"][loan_id] = Loan(
                loan_id=loan_id, customer_id=customer_id, kind=kind, principal=principal,
                outstanding=round(principal * rng.uniform(0.2, 0.95), 2), annual_rate=rate,
                monthly_payment=round(principal / rng.choice((36, 60, 240)), 2),
                next_due_on=date(2025, 7, rng.randint(1, 28)).isoformat(), status="active").model_dump(mode="json")
    return db
