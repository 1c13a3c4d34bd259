"""The task type of the offline world, shared by its generator, graders and simulated models.

Why tasks carry `evidence`: a simulated model's chance of answering correctly depends on whether the
facts it needs are in its prompt (paper: tools supply evidence that models lack). The generator lists
the key facts of each task; a simulated model checks for them in what the orchestrator sent it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from lab.tools.findings import NUMBER_FACT, standalone

Family = Literal["frames", "hle", "tau2"]
AnswerType = Literal["exact", "numeric", "multiple_choice", "actions"]


class WorldTask(BaseModel):
    """One offline-world task."""

    task_id: str = Field(description="Stable id, e.g. `frames-0042`.")
    family: Family = Field(description="Which paper benchmark it mirrors: frames (multi-hop), hle, tau2.")
    split: Literal["train", "validation", "test"] = "test"
    domain: str = Field(description="Discipline or tool domain (e.g. `physics`, `retail`, `multihop`).")
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    question: str
    answer: Any = Field(description="Reference answer: a string, a number, a choice letter, or golden actions.")
    answer_type: AnswerType = "exact"
    tolerance: float = Field(0.0, ge=0, description="Relative tolerance for numeric answers.")
    choices: list[str] = Field(default_factory=list, description="Options for multiple-choice questions.")
    evidence: list[str] = Field(
        default_factory=list,
        description="Key facts (verbatim strings) a model needs in its prompt to answer reliably.",
    )
    support_doc_ids: list[str] = Field(default_factory=list, description="Corpus documents holding the evidence.")
    reference_code: str | None = Field(None, description="Python that prints the answer (computational tasks).")
    needs: list[Literal["retrieval", "code", "reasoning", "actions"]] = Field(
        default_factory=list, description="What solving it takes; drives simulated success and the oracle."
    )
    meta: dict[str, Any] = Field(default_factory=dict)

    def evidence_present(self, prompt: str, findings: list[str] | None) -> bool:
        """True when the prompt holds every key fact and a tool found each one (see `evidence_found`)."""
        return evidence_found(self.evidence, prompt, findings, self.question)


def evidence_in(facts: list[str], text: str, question: str = "") -> bool:
    """True when every fact appears in `text` (case-insensitive) outside the question itself.

    The question does not count (a prompt always carries it, and a small numeric answer such as "3"
    can occur among its numbers), and a number must stand alone ("3" is not found in "1.35")."""
    low = _outside(text, question)
    return all(_contains(low, str(fact).lower()) for fact in facts)


def evidence_found(facts: list[str], prompt: str, findings: list[str] | None, question: str = "") -> bool:
    """The one evidence rule of the offline world (simulated models and calibration from logs).

    A model has a task's evidence when every fact is in its prompt (outside the question) *and* was
    found by a tool in this rollout (`findings`, see `lab.tools.findings.finding`): evidence the
    orchestrator invents or copies from the question does not count. `findings` None means nobody tracked
    what tools found (a model called directly, outside a rollout): then the prompt alone decides, as it would for a real
    model; every rollout tracks them, so a policy in training is always held to the full rule.

    A numeric fact (a computed answer) must be the one number a finding states (what a program that
    computes it prints), and the prompt must not also hold another number found that way: a program
    printing every candidate, or five programs printing five guesses all pasted into one prompt, give
    the model candidates and no evidence.
    """
    if not facts or not evidence_in(facts, prompt, question):
        return False
    if findings is None:
        return True
    low_findings = [_outside(f, question) for f in findings]
    stated = {n for f in low_findings if (n := _sole_number(f)) is not None}
    low_prompt = _outside(prompt, question)
    for fact in (str(f).lower() for f in facts):
        if NUMBER_FACT.fullmatch(fact):
            rivals = [n for n in stated if n != fact and _contains(low_prompt, n)]
            if fact not in stated or rivals:
                return False
        elif not any(fact in f for f in low_findings):
            return False
    return True


_NUMBER_TOKEN = re.compile(r"(?<![\w.])[-+]?\d[\d.,/]*(?![\w])")


def _outside(text: str, question: str) -> str:
    low = text.lower()
    return low.replace(question.lower(), " ") if question else low


def _sole_number(text: str) -> str | None:
    numbers = {n.rstrip(".,") for n in _NUMBER_TOKEN.findall(text)}
    return numbers.pop() if len(numbers) == 1 else None


def _contains(text: str, fact: str) -> bool:
    if NUMBER_FACT.fullmatch(fact):
        return standalone(fact).search(text) is not None
    return fact in text
