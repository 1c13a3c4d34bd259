"""All offline-world tasks from one seed: FRAMES-like, HLE-like and tau2-like, with stable splits.

Why one random stream per family: adding a template to one family must not reshuffle the others, so
each family draws from its own `random.Random` derived from the world seed and the family name.
Splits are a stable hash of the question text (70 % train), so they survive renumbering.
"""

from __future__ import annotations

import hashlib
import random

from pydantic import BaseModel, ConfigDict, Field

from lab.world.bookshop_tasks import make_bookshop_tasks
from lab.world.corpus import WorldGraph
from lab.world.hle_like import make_hle_like_tasks
from lab.world.multihop import make_multihop_tasks
from lab.world.names import NameForge
from lab.world.task import WorldTask

FAMILIES = ("frames", "hle", "tau2")


class WorldSize(BaseModel):
    """How big a world to build; tests use `small()`, everything else the full default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_docs: int = Field(3000, ge=50, description="Corpus documents (one per entity).")
    n_frames: int = Field(250, ge=1, description="Multi-hop questions over the corpus.")
    n_hle: int = Field(250, ge=1, description="HLE-like questions across eight disciplines.")
    n_tau2: int = Field(120, ge=1, description="Bookshop function-calling tasks.")
    train_share: float = Field(0.7, gt=0, lt=1, description="Share of tasks in the train split.")
    validation_share: float = Field(0.2, ge=0, lt=1, description=(
        "Share of the training tasks carved off, by a second hash, as the validation split: recipe choices "
        "are made on it, so the test split is read only for reported figures."))

    @classmethod
    def small(cls) -> WorldSize:
        """A world that builds in about a second without an index: for tests."""
        return cls(n_docs=300, n_frames=36, n_hle=48, n_tau2=21)

    @property
    def n_customers(self) -> int:
        return 2 * self.n_tau2 + 20  # spare customers: some templates need order mixes not all have

    def tag(self) -> str:
        """Cache-directory suffix; empty for the default size so the default path stays short."""
        if self == WorldSize():
            return ""
        return (f"-d{self.n_docs}f{self.n_frames}h{self.n_hle}t{self.n_tau2}s{round(self.train_share * 100)}"
                f"v{round(self.validation_share * 100)}")


def family_rng(seed: int, family: str) -> random.Random:
    """A random stream for one family, independent of the others."""
    digest = hashlib.sha256(f"{seed}:{family}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


#: The world's task splits: `validation` is carved from the training tasks, `test` is never trained or tuned on.
SPLITS = ("train", "validation", "test")


def _bucket(salt: str, text: str) -> int:
    """A stable number in [0, 10,000) from the text, independent for each salt."""
    return int.from_bytes(hashlib.sha256(f"{salt}{text}".encode()).digest()[:4], "big") % 10_000


def split_of(task: WorldTask, train_share: float = 0.7, validation_share: float = 0.2) -> str:
    """Stable split from the question text: test by one hash (as before validation existed, so test
    figures stay comparable), then `validation_share` of the training tasks by a second, salted hash."""
    if _bucket("", task.question) >= train_share * 10_000:
        return "test"
    return "validation" if _bucket("validation:", task.question) < validation_share * 10_000 else "train"


def make_tasks(graph: WorldGraph, db: dict, size: WorldSize, seed: int, forge: NameForge) -> list[WorldTask]:
    """Every task of the world, split assigned, in family order."""
    tasks = [
        *make_multihop_tasks(graph, size.n_frames, family_rng(seed, "frames")),
        *make_hle_like_tasks(size.n_hle, family_rng(seed, "hle")),
        *make_bookshop_tasks(db, size.n_tau2, family_rng(seed, "tau2"), forge),
    ]
    return [t.model_copy(update={"split": split_of(t, size.train_share, size.validation_share)}) for t in tasks]
