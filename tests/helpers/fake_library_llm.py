"""A fake LLM for the LLM-driven ToolScale generator: a small library domain, answered stage by stage.

It stands behind the real OpenAI-compatible test server (`lab.testing.OpenAICompatServer`'s
`responder`), so the generator is exercised over real HTTP. Each stage's answer is what a capable
model would write; `LibraryLLM(broken={"models"})` answers a stage wrongly until the prompt carries
the gate's complaint, to show the retry loop; `always_broken` never gets it right.
"""

from __future__ import annotations

import json
import re

MODELS_CODE = '''\
class Member(Record):
    member_id: str
    name: str
    email: str
    max_loans: int


class Book(Record):
    book_id: str
    title: str
    author: str
    copies_available: int


class Loan(Record):
    loan_id: str
    member_id: str
    book_id: str
    due_on: str
    status: str


MODELS = {"members": Member, "books": Book, "loans": Loan}
'''

TOOLS_CODE = '''\
def _member(db, member_id):
    if member_id not in db["members"]:
        raise ToolRefused(f"member {member_id!r} not found")
    return db["members"][member_id]


def find_member_by_email(db: dict, email: str) -> str:
    """Find a member's id from their email address.

    email: the member's email, any case.
    """
    for member in db["members"].values():
        if member["email"].lower() == email.strip().lower():
            return member["member_id"]
    raise ToolRefused(f"no member with email {email!r}")


def get_member_details(db: dict, member_id: str) -> str:
    """Show a member's record and their open loans.

    member_id: the member's id, e.g. 'M-1'.
    """
    member = _member(db, member_id)
    loans = [l for l in db["loans"].values() if l["member_id"] == member_id and l["status"] == "open"]
    return json.dumps({**member, "open_loans": loans})


def search_books(db: dict, query: str) -> str:
    """Find books whose title or author contains the query.

    query: part of a title or an author's name, any case.
    """
    found = [b for b in db["books"].values() if query.lower() in (b["title"] + " " + b["author"]).lower()]
    return json.dumps(found)


def get_book_details(db: dict, book_id: str) -> str:
    """Show one book's record.

    book_id: the book's id, e.g. 'B-1'.
    """
    if book_id not in db["books"]:
        raise ToolRefused(f"book {book_id!r} not found")
    return json.dumps(db["books"][book_id])


def get_loan_details(db: dict, loan_id: str) -> str:
    """Show one loan's record.

    loan_id: the loan's id, e.g. 'L-1'.
    """
    if loan_id not in db["loans"]:
        raise ToolRefused(f"loan {loan_id!r} not found")
    return json.dumps(db["loans"][loan_id])


def borrow_book(db: dict, member_id: str, book_id: str, *, now: str) -> str:
    """Lend a book to a member for 14 days.

    member_id: the borrowing member's id.
    book_id: the book's id.
    """
    member = _member(db, member_id)
    book = db["books"].get(book_id)
    if book is None:
        raise ToolRefused(f"book {book_id!r} not found")
    if book["copies_available"] < 1:
        raise ToolRefused(f"no copy of {book_id} is available")
    open_loans = sum(l["member_id"] == member_id and l["status"] == "open" for l in db["loans"].values())
    if open_loans >= member["max_loans"]:
        raise ToolRefused(f"member {member_id} already has {open_loans} loans")
    loan_id = f"L-{len(db['loans']) + 1}"
    day = int(now[8:10]) + 14
    db["loans"][loan_id] = {"loan_id": loan_id, "member_id": member_id, "book_id": book_id,
                            "due_on": f"{now[:8]}{day:02d}", "status": "open"}
    book["copies_available"] -= 1
    return loan_id


def return_book(db: dict, loan_id: str) -> str:
    """Mark a loan returned and put the copy back on the shelf.

    loan_id: the loan's id.
    """
    loan = db["loans"].get(loan_id)
    if loan is None or loan["status"] != "open":
        raise ToolRefused(f"loan {loan_id!r} is not open")
    loan["status"] = "returned"
    db["books"][loan["book_id"]]["copies_available"] += 1
    return json.dumps(loan)


def renew_loan(db: dict, loan_id: str) -> str:
    """Extend an open loan by 7 days.

    loan_id: the loan's id.
    """
    loan = db["loans"].get(loan_id)
    if loan is None or loan["status"] != "open":
        raise ToolRefused(f"loan {loan_id!r} is not open")
    day = int(loan["due_on"][8:10]) + 7
    loan["due_on"] = f"{loan['due_on'][:8]}{day:02d}"
    return json.dumps(loan)


def update_member_email(db: dict, member_id: str, email: str) -> str:
    """Change a member's email address.

    member_id: the member's id.
    email: the new email address.
    """
    member = _member(db, member_id)
    if "@" not in email:
        raise ToolRefused(f"{email!r} is not an email address")
    member["email"] = email
    return json.dumps(member)


def set_loan_limit(db: dict, member_id: str, max_loans: int) -> str:
    """Set how many books a member may hold at once (1 to 10).

    member_id: the member's id.
    max_loans: the new limit.
    """
    member = _member(db, member_id)
    if not 1 <= max_loans <= 10:
        raise ToolRefused("max_loans must be 1 to 10")
    member["max_loans"] = max_loans
    return json.dumps(member)


TOOLS = {"find_member_by_email": "read", "get_member_details": "read", "search_books": "read",
         "get_book_details": "read", "get_loan_details": "read", "borrow_book": "write", "return_book": "write",
         "renew_loan": "write", "update_member_email": "write", "set_loan_limit": "write"}
EXAMPLES = {"find_member_by_email": {"email": "ada@example.org"}, "get_member_details": {"member_id": "M-1"},
            "search_books": {"query": "dune"}, "get_book_details": {"book_id": "B-1"},
            "get_loan_details": {"loan_id": "L-1"}, "borrow_book": {"member_id": "M-1", "book_id": "B-1"},
            "return_book": {"loan_id": "L-1"}, "renew_loan": {"loan_id": "L-1"},
            "update_member_email": {"member_id": "M-1", "email": "ada@new.example"},
            "set_loan_limit": {"member_id": "M-1", "max_loans": 5}}
'''

SCHEMA = {
    "tables": [
        {"name": "members", "id_field": "member_id", "fields": [
            {"name": "member_id", "type": "str", "description": "id"},
            {"name": "name", "type": "str", "description": "full name"},
            {"name": "email", "type": "str", "description": "email"},
            {"name": "max_loans", "type": "int", "description": "limit"}]},
        {"name": "books", "id_field": "book_id", "fields": [
            {"name": "book_id", "type": "str", "description": "id"},
            {"name": "title", "type": "str", "description": "title"},
            {"name": "author", "type": "str", "description": "author"},
            {"name": "copies_available", "type": "int", "description": "copies on the shelf"}]},
        {"name": "loans", "id_field": "loan_id", "fields": [
            {"name": "loan_id", "type": "str", "description": "id"},
            {"name": "member_id", "type": "str", "description": "who"},
            {"name": "book_id", "type": "str", "description": "what"},
            {"name": "due_on", "type": "str", "description": "ISO day"},
            {"name": "status", "type": "str", "description": "open or returned"}]},
    ],
    "policy": "# Library desk\n- Identify the member by email first.\n- Confirm every change with the member.\n"
              "- Never raise a loan limit above 5 (the tool allows 10).",
}

RECORDS = {
    "members": [{"member_id": "M-1", "name": "Ada Byron", "email": "ada@example.org", "max_loans": 2},
                {"member_id": "M-2", "name": "Ben Okri", "email": "ben@example.org", "max_loans": 3},
                {"member_id": "M-3", "name": "Cara Diaz", "email": "cara@example.org", "max_loans": 2},
                {"member_id": "M-4", "name": "Dan Wu", "email": "dan@example.org", "max_loans": 1}],
    "books": [{"book_id": "B-1", "title": "Dune", "author": "Frank Herbert", "copies_available": 2},
              {"book_id": "B-2", "title": "Emma", "author": "Jane Austen", "copies_available": 0},
              {"book_id": "B-3", "title": "Ulysses", "author": "James Joyce", "copies_available": 1},
              {"book_id": "B-4", "title": "Beloved", "author": "Toni Morrison", "copies_available": 3}],
    "loans": [{"loan_id": "L-1", "member_id": "M-2", "book_id": "B-2", "due_on": "2025-06-05", "status": "open"},
              {"loan_id": "L-2", "member_id": "M-3", "book_id": "B-4", "due_on": "2025-06-09", "status": "open"},
              {"loan_id": "L-3", "member_id": "M-1", "book_id": "B-3", "due_on": "2025-05-20", "status": "returned"}],
}


def _find(email: str) -> dict:
    return {"name": "find_member_by_email", "arguments": {"email": email}}


def _task(purpose: str, reason: str, known: str, actions: list, info: list | None = None) -> dict:
    return {"purpose": purpose, "reason_for_call": reason, "known_info": known,
            "unknown_info": "You do not know any ids.", "actions": actions, "communicate_info": info or []}


TASKS = {  # goal -> the task a model would write for it; the 2nd and 4th fail a build filter
    "Ada wants to borrow Dune": _task(
        "Lend Dune to Ada.", "You want to borrow Dune.", "You are Ada Byron, ada@example.org.",
        [_find("ada@example.org"), {"name": "search_books", "arguments": {"query": "Dune"}},
         {"name": "borrow_book", "arguments": {"member_id": "M-1", "book_id": "B-1"}}]),
    "Ben wants to borrow Emma": _task(  # no copy on the shelf: the golden call fails, the filter drops it
        "Lend Emma to Ben.", "You want to borrow Emma.", "You are Ben Okri, ben@example.org.",
        [_find("ben@example.org"), {"name": "borrow_book", "arguments": {"member_id": "M-2", "book_id": "B-2"}}]),
    "Ben wants his loan renewed and its new due day": _task(
        "Renew Ben's loan, tell the new due day.", "You want to renew your book and know the new due date.",
        "You are Ben Okri, ben@example.org.",
        [_find("ben@example.org"), {"name": "get_member_details", "arguments": {"member_id": "M-2"}},
         {"name": "renew_loan", "arguments": {"loan_id": "L-1"}},
         {"name": "get_loan_details", "arguments": {"loan_id": "L-1"}}],
        ["2025-06-12"]),
    "Cara asks what two plus two is": _task(  # no tool needed: dropped as solvable without tools
        "Arithmetic.", "You want to know 2 + 2.", "You are Cara Diaz.",
        [{"name": "calculate", "arguments": {"expression": "2 + 2"}}]),
    "Cara returns Beloved": _task(
        "Return Cara's book.", "You want to return Beloved.", "You are Cara Diaz, cara@example.org.",
        [_find("cara@example.org"), {"name": "get_member_details", "arguments": {"member_id": "M-3"}},
         {"name": "return_book", "arguments": {"loan_id": "L-2"}}]),
    "Dan changes his email": _task(
        "Update Dan's email.", "You want your email changed to dan.wu@example.net.", "You are Dan Wu, dan@example.org.",
        [_find("dan@example.org"),
         {"name": "update_member_email", "arguments": {"member_id": "M-4", "email": "dan.wu@example.net"}}]),
    "Ada wants her loan limit raised": _task(
        "Raise Ada's limit to 4.", "You want to hold up to 4 books.", "You are Ada Byron, ada@example.org.",
        [_find("ada@example.org"), {"name": "set_loan_limit", "arguments": {"member_id": "M-1", "max_loans": 4}}]),
    "Dan wants to borrow Beloved": _task(
        "Lend Beloved to Dan.", "You want to borrow Beloved.", "You are Dan Wu, dan@example.org.",
        [_find("dan@example.org"), {"name": "search_books", "arguments": {"query": "beloved"}},
         {"name": "borrow_book", "arguments": {"member_id": "M-4", "book_id": "B-4"}}]),
}

EVOLVED = _task(
    "Lend Ulysses to Ada and tell her the due day.", "You want to borrow Ulysses and know when it is due.",
    "You are Ada Byron, ada@example.org.",
    [_find("ada@example.org"), {"name": "search_books", "arguments": {"query": "Ulysses"}},
     {"name": "borrow_book", "arguments": {"member_id": "M-1", "book_id": "B-3"}},
     {"name": "get_loan_details", "arguments": {"loan_id": "L-4"}}],
    ["2025-06-16"])

#: What a confused model writes for each stage (no tables, a syntax error, no records, no tools).
WRONG = {"schema": '```json\n{"tables": []}\n```', "models": "```python\nclass Member(Record)\n```",
         "records": '```json\n{"members": []}\n```', "toolkit": "```python\nTOOLS = {}\n```"}

STAGE_OF = (("You design the database", "schema"), ("Write the pydantic", "models"),
            ("Write the initial data", "records"),
            ("Write the agent's tools", "toolkit"), ("real users of this service call about", "intents"),
            ("Turn each user request", "tasks"), ("Make this task harder", "evolution"))


def _fenced(value: object, language: str = "json") -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return f"Here it is.\n```{language}\n{text}\n```"


class LibraryLLM:
    """`respond(prompt)`: the answer to one prompt; `prompts` keeps every prompt seen, per stage."""

    def __init__(self, broken: tuple = (), always_broken: tuple = ()) -> None:
        self.broken, self.always_broken = set(broken), set(always_broken)
        self.prompts: dict[str, list[str]] = {}

    def respond(self, prompt: str) -> str:
        stage = next(name for marker, name in STAGE_OF if marker in prompt)
        self.prompts.setdefault(stage, []).append(prompt)
        retry = "failed this check" in prompt
        if stage in self.always_broken or (stage in self.broken and not retry):
            return WRONG[stage]
        answers = {"schema": SCHEMA, "models": MODELS_CODE, "records": RECORDS, "toolkit": TOOLS_CODE,
                   "evolution": EVOLVED}
        if stage == "intents":
            return _fenced([{"user": goal.split()[0], "goal": goal} for goal in TASKS])
        if stage == "tasks":
            asked = json.loads(re.search(r"Requests: (\[.*\])", prompt).group(1))
            return _fenced([TASKS[item["goal"]] for item in asked])
        return _fenced(answers[stage], "python" if stage in ("models", "toolkit") else "json")
