"""Invented names from seeded syllable generators, so no model can know the world's facts in advance.

Why syllables and a uniqueness registry: every entity name must be unique across the whole world (a
question names one entity and must have one answer), pronounceable (so prose reads naturally) and
absent from any real-world corpus (so retrieval is genuinely needed).
"""

from __future__ import annotations

import random

_ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "q", "r", "s", "st",
           "t", "th", "tr", "v", "w", "z", "sk", "sh", "ph", "kr"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ia", "ou", "ei", "y"]
_CODAS = ["", "", "", "n", "r", "l", "s", "th", "m", "nd", "rk", "x", "v"]
_TOWN_ENDS = ["ford", "mere", "brook", "holt", "wick", "stead", "mouth", "haven", "fell", "by", "dale", "gate"]
_REGION_ENDS = ["ia", "land", "mark", "ora", "eth", "ane"]


class NameForge:
    """Makes unique invented names; one instance per world so names never collide across kinds."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _word(self, syllables: int) -> str:
        parts = [self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(syllables)]
        parts[-1] += self.rng.choice(_CODAS)
        return "".join(parts).capitalize()

    def _unique(self, make) -> str:
        # Collisions are rare; the loop bound only guards against an exhausted generator.
        for _ in range(1000):
            name = make()
            if name.lower() not in self.used and len(name) >= 4:
                self.used.add(name.lower())
                return name
        raise RuntimeError("name generator exhausted")

    def person(self) -> str:
        return self._unique(lambda: f"{self._word(self.rng.randint(2, 3))} {self._word(self.rng.randint(2, 3))}")

    def town(self) -> str:
        return self._unique(lambda: self._word(self.rng.randint(1, 2)) + self.rng.choice(_TOWN_ENDS))

    def region(self) -> str:
        return self._unique(lambda: self._word(self.rng.randint(1, 2)) + self.rng.choice(_REGION_ENDS))

    def river(self) -> str:
        return self._unique(lambda: self._word(2))

    def organisation(self, kind: str) -> str:
        return self._unique(lambda: f"{self._word(self.rng.randint(2, 3))} {kind}")

    def event(self, kind: str) -> str:
        return self._unique(lambda: f"{self._word(self.rng.randint(2, 3))} {kind}")
