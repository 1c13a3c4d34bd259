"""Bank task templates: what a customer calls about, and the agent's golden chain for each.

Eight templates: an easy cancel and an easy unblock, medium lookups by description (a transfer
between own accounts, a disputed charge found in the history, a loan instalment whose amount is read
from the loan), two writes in one call (lost card: block then replace; new address and card limit),
and a refusal: a transfer to another customer above the policy's limit, where the right chain reads
the balance the customer asks for and writes nothing. The evolution step adds a read-only question
(an account's balance, a loan's next due date) asked after the request is done.

Each chain identifies the customer as the policy demands, by email or by name and date of birth,
whichever the scenario's known info gives, and finds accounts and cards through the tools.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from lab.synth import people
from lab.synth.domains.bank_data import EXTERNAL_TRANSFER_LIMIT
from lab.synth.tasks import Golden, Scenario, TaskRecipe, records_of

UNKNOWN = "You do not know your customer id, account numbers or card ids."
_DISPUTES = {"unrecognized": "you do not recognise it", "wrong_amount": "the amount is more than you agreed to pay",
             "not_received": "you never received what you paid for"}


def _owned(db: dict, table: str, key: str, value: str) -> list[dict]:
    return records_of(db, table, key, value)


def _accounts(db: dict, customer_id: str) -> dict[str, dict]:
    return {a["kind"]: a for a in _owned(db, "accounts", "customer_id", customer_id)}


def _identity(db: dict, customer_id: str, rng: random.Random) -> tuple[str, Callable[[Golden], str]]:
    """(what the user says about who they are, the chain step that finds their id)."""
    c = db["customers"][customer_id]
    if rng.random() < 0.5:
        return (f"You are {c['first_name']} {c['last_name']}. Your email is {c['email']}.",
                lambda g: g("find_customer_by_email", email=c["email"]))
    return (f"You are {c['first_name']} {c['last_name']}. You were born on {c['date_of_birth']}.",
            lambda g: g("find_customer_by_name_dob", first_name=c["first_name"], last_name=c["last_name"],
                        date_of_birth=c["date_of_birth"]))


def _look_up_accounts(g: Golden, customer_id: str) -> dict[str, dict]:
    """The customer's accounts by kind, as the agent reads them."""
    account_ids = g("get_customer_details", customer_id=customer_id)["account_ids"]
    found = [g("get_account_details", account_id=a) for a in account_ids]
    return {a["kind"]: a for a in found}


def _look_up_card(g: Golden, account: dict, last_four: str) -> dict:
    return next(card for card in (g("get_card_details", card_id=c) for c in account["card_ids"])
                if card["last_four"] == last_four)


def _dollars(amount: float) -> str:
    return f"${amount:,.2f}"


def own_transfer(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    accounts = _accounts(db, customer_id)
    if len(accounts) < 2:
        return None
    source, target = rng.sample(["checking", "savings"], 2)
    amount = float(rng.randrange(100, 3000, 50))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        found = _look_up_accounts(g, identify(g))
        g("transfer_funds", from_account_id=found[source]["account_id"], to_account_id=found[target]["account_id"],
          amount=amount)
        return []
    return Scenario(f"Move {_dollars(amount)} from the customer's {source} to their {target} account.",
                    f"You want to move {_dollars(amount)} from your {source} account to your {target} account.",
                    known, UNKNOWN, chain, "medium")


def lost_card(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    checking = _accounts(db, customer_id)["checking"]
    cards = [c for c in _owned(db, "cards", "account_id", checking["account_id"]) if c["kind"] == "physical"]
    if not cards:
        return None
    last_four, reason = cards[0]["last_four"], rng.choice(["lost", "stolen"])
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        card = _look_up_card(g, _look_up_accounts(g, identify(g))["checking"], last_four)
        g("block_card", card_id=card["card_id"], reason=reason)
        g("replace_card", card_id=card["card_id"])
        return []
    return Scenario(f"Block the customer's {reason} card and issue a replacement.",
                    f"Your debit card ending in {last_four} was {reason}. You want it blocked and a new card sent.",
                    known, UNKNOWN, chain, "hard")


def dispute_charge(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    checking = _accounts(db, customer_id)["checking"]
    purchases = [t for t in _owned(db, "transactions", "account_id", checking["account_id"]) if t["card_id"]]
    if not purchases:
        return None
    charge, reason = rng.choice(purchases), rng.choice(sorted(_DISPUTES))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        account = _look_up_accounts(g, identify(g))["checking"]
        history = g("list_account_transactions", account_id=account["account_id"])
        match = next(t for t in history if (t["posted_on"], t["description"], t["amount"])
                     == (charge["posted_on"], charge["description"], charge["amount"]))
        g("dispute_transaction", transaction_id=match["transaction_id"], reason=reason)
        return []
    return Scenario("Dispute a card purchase the customer describes.",
                    f"On {charge['posted_on']} your checking account was charged {_dollars(-charge['amount'])} at "
                    f"{charge['description']}, and {_DISPUTES[reason]}. You want to dispute the charge.",
                    known, UNKNOWN, chain, "medium")


def loan_instalment(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    loans = _owned(db, "loans", "customer_id", customer_id)
    if not loans:
        return None
    kind = rng.choice(loans)["kind"]
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        customer_id = identify(g)
        details = g("get_customer_details", customer_id=customer_id)
        loans = (g("get_loan_details", loan_id=n) for n in details["loan_ids"])
        loan = next(loan for loan in loans if loan["kind"] == kind)
        account = _look_up_accounts(g, customer_id)["checking"]
        g("make_loan_payment", loan_id=loan["loan_id"], from_account_id=account["account_id"],
          amount=loan["monthly_payment"])
        return []
    return Scenario(f"Pay the monthly payment of the customer's {kind} loan from checking.",
                    f"You want to pay this month's instalment of your {kind} loan from your checking account. "
                    "You do not remember the amount; the agent can look it up.", known, UNKNOWN, chain, "medium")


def move_and_limit(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    checking = _accounts(db, customer_id)["checking"]
    cards = _owned(db, "cards", "account_id", checking["account_id"])
    card, new = rng.choice(cards), people.address(rng)
    limit = rng.choice([n for n in range(500, 3500, 500) if n != card["daily_limit"]])  # the user knows the old one
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        customer_id = identify(g)
        g("update_customer_address", customer_id=customer_id, **new)
        found = _look_up_card(g, _look_up_accounts(g, customer_id)["checking"], card["last_four"])
        g("set_card_daily_limit", card_id=found["card_id"], daily_limit=limit)
        return []
    return Scenario("Update the customer's address and a card's daily limit.",
                    f"You moved to {new['street']}, {new['city']} {new['zip']} and want your address updated. You "
                    f"also want the daily limit of your {card['kind']} card ending in {card['last_four']} set to "
                    f"{_dollars(limit)}.", known, UNKNOWN, chain, "hard")


def cancel_scheduled(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    checking = _accounts(db, customer_id)["checking"]
    planned = [t for t in _owned(db, "transfers", "from_account_id",
                                 checking["account_id"]) if t["status"] == "scheduled"]
    if not planned:
        return None
    transfer = rng.choice(planned)
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        account = _look_up_accounts(g, identify(g))["checking"]
        match = next(t for t in (g("get_transfer_details", transfer_id=n) for n in account["scheduled_transfer_ids"])
                     if (t["amount"], t["scheduled_for"]) == (transfer["amount"], transfer["scheduled_for"]))
        g("cancel_scheduled_transfer", transfer_id=match["transfer_id"])
        return []
    return Scenario("Cancel a scheduled transfer the customer describes.",
                    f"You scheduled a transfer of {_dollars(transfer['amount'])} from your checking account to your "
                    f"savings for {transfer['scheduled_for']} and want to cancel it.", known, UNKNOWN, chain, "easy")


def unblock_card(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    checking = _accounts(db, customer_id)["checking"]
    blocked = [c for c in _owned(db, "cards", "account_id", checking["account_id"]) if c["status"] == "blocked"]
    if not blocked:
        return None
    last_four = blocked[0]["last_four"]
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        card = _look_up_card(g, _look_up_accounts(g, identify(g))["checking"], last_four)
        g("unblock_card", card_id=card["card_id"])
        return []
    return Scenario("Unblock a card held for suspected fraud after the customer confirms the charges.",
                    f"Your card ending in {last_four} stopped working; you think it was blocked for suspected "
                    "fraud. The recent charges were all yours, and you want the card unblocked.",
                    known, UNKNOWN, chain, "easy")


def refused_external_transfer(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    others = [a for a in db["accounts"].values() if a["customer_id"] != customer_id and a["kind"] == "checking"]
    friend_account = rng.choice(others)
    friend = db["customers"][friend_account["customer_id"]]
    amount = float(rng.randrange(int(EXTERNAL_TRANSFER_LIMIT) + 200, 4000, 100))
    known, identify = _identity(db, customer_id, rng)

    def chain(g: Golden) -> list[str]:
        checking = _look_up_accounts(g, identify(g))["checking"]
        return [str(checking["balance"])]  # policy: no transfer to another customer above the limit
    return Scenario(f"Refuse a {_dollars(amount)} transfer to another customer (over the policy limit) and give "
                    "the checking balance.",
                    f"You want to send {_dollars(amount)} from your checking account to your friend "
                    f"{friend['first_name']} {friend['last_name']}, account {friend_account['account_id']}, and "
                    "you want to know your checking balance.", known, UNKNOWN, chain, "hard")


def balance_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    kind = rng.choice(sorted(_accounts(db, customer_id)))

    def chain(g: Golden) -> list[str]:
        return [str(_look_up_accounts(g, g("find_customer_by_email", email=email))[kind]["balance"])]
    email = db["customers"][customer_id]["email"]
    return Scenario(f"Tell the customer their {kind} balance.", f"ask for the current balance of your {kind} account.",
                    f"Your email is {email}.", UNKNOWN, chain, "easy")


def due_date_question(db: dict, customer_id: str, rng: random.Random) -> Scenario | None:
    loans = _owned(db, "loans", "customer_id", customer_id)
    if not loans:
        return None
    kind = loans[0]["kind"]
    email = db["customers"][customer_id]["email"]

    def chain(g: Golden) -> list[str]:
        details = g("get_customer_details", customer_id=g("find_customer_by_email", email=email))
        loans = [g("get_loan_details", loan_id=n) for n in details["loan_ids"]]
        return [next(loan["next_due_on"] for loan in loans if loan["kind"] == kind)]
    return Scenario(f"Tell the customer when their {kind} loan is next due.",
                    f"ask when the next payment of your {kind} loan is due.", f"Your email is {email}.",
                    UNKNOWN, chain, "easy")


def _customers(db: dict[str, Any]) -> list[str]:
    return sorted(db["customers"])


RECIPE = TaskRecipe(
    subjects=_customers,
    templates={"own_transfer": own_transfer, "lost_card": lost_card, "dispute_charge": dispute_charge,
               "loan_instalment": loan_instalment, "move_and_limit": move_and_limit,
               "cancel_scheduled": cancel_scheduled, "unblock_card": unblock_card,
               "refused_external_transfer": refused_external_transfer},
    follow_ups={"balance_question": balance_question, "due_date_question": due_date_question},
)
