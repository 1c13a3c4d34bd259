"""The task type of the offline world, shared by its generator, graders and simulated models.

Why tasks carry `evidence`: a simulated model's chance of answering correctly depends on whether the
facts it needs are in its prompt (paper: tools supply evidence that models lack). The generator lists
the key facts of each task; a simulated model checks for them in what the orchestrator sent it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

Family = Literal["frames", "hle", "tau2"]
AnswerType = Literal["exact", "numeric", "multiple_choice", "actions"]


class WorldTask(BaseModel):
    """One offline-world task."""

    task_id: str = Field(description="Stable id, e.g. `frames-0042`.")
    family: Family = Field(description="Which paper benchmark it mirrors: frames (multi-hop), hle, tau2.")
    split: Literal["train", "test"] = "test"
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

    def evidence_present(self, text: str) -> bool:
        """True when every key fact appears in `text` outside the question (see `evidence_in`)."""
        return evidence_in(self.evidence, text, self.question)


def evidence_in(facts: list[str], text: str, question: str = "") -> bool:
    """True when every fact appears in `text` (case-insensitive) outside the question itself.

    The question does not count (a prompt always carries it, and a small numeric answer such as "3"
    can occur among its numbers), and a number must stand alone ("3" is not found in "1.35").
    Shared by simulated models and by calibration from logged runs, so both judge evidence alike."""
    low = text.lower().replace(question.lower(), " ") if question else text.lower()
    return all(_contains(low, str(fact).lower()) for fact in facts)


_NUMBER_FACT = re.compile(r"[-+]?[\d.,/]+")


def _contains(text: str, fact: str) -> bool:
    if _NUMBER_FACT.fullmatch(fact):
        return re.search(rf"(?<![\d.]){re.escape(fact)}(?!\.?\d)", text) is not None
    return fact in text
