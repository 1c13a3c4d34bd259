"""A small corpus written by the tests that build indexes: four distinctive facts among look-alike filler."""

from __future__ import annotations

import json
import random
from pathlib import Path

FACTS = {  # doc id -> (title, text, query)
    "fact-lighthouse": ("Varnholm Lighthouse",
                        "The Varnholm lighthouse was painted crimson in 1874 by keeper Edda Lindqvist.",
                        "Who painted the Varnholm lighthouse crimson?"),
    "fact-volcano": ("Mount Teskari",
                     "Mount Teskari is a dormant volcano whose last eruption buried the village of Orum in 1612.",
                     "Which village did the Teskari volcano bury?"),
    "fact-bridge": ("Kolvik Bridge", "The Kolvik suspension bridge spans 1,420 metres and opened to traffic in 1967.",
                    "How long is the Kolvik suspension bridge?"),
    "fact-orchid": ("Blue orchid",
                    "The ghost-blue orchid blooms only once every seven years in the cloud forests of Tarapo.",
                    "How often does the ghost-blue orchid bloom?"),
}
_TOWNS = ["Ashford", "Belmar", "Corrin", "Dunmore", "Elsby", "Farrow", "Glenholt", "Harwick"]
_TEMPLATES = ["The weekly market in {t} sells {n} kinds of cheese to traders from nearby valleys.",
              "The primary school of {t} teaches {n} pupils and was rebuilt after a storm.",
              "The railway station at {t} opened with {n} platforms serving the coastal line.",
              "The public library in {t} keeps {n} books and a collection of old maps."]


def write_corpus(path: Path, n_filler: int = 32, seed: int = 3) -> int:
    """Write the corpus as JSONL (id, title, text per line); returns how many documents it holds."""
    rng = random.Random(seed)
    rows = [{"id": doc_id, "title": title, "text": text} for doc_id, (title, text, _) in FACTS.items()]
    rows += [{"id": f"doc-{i:03d}", "title": f"{rng.choice(_TOWNS)} notes",
              "text": rng.choice(_TEMPLATES).format(t=rng.choice(_TOWNS),
                                                    n=rng.randint(2, 900))} for i in range(n_filler)]
    rng.shuffle(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)
