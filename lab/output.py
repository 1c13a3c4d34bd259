"""What reaches a user's screen: the lab's own progress displays and tables, not its libraries' chatter.

Why one switch: transformers, datasets, TRL and the Hugging Face hub each draw their own tqdm bars
("Loading weights", "Map", "Tokenizing train dataset", the Trainer's step bar), the Trainer prints its
raw log dicts, and dependencies warn about their own deprecations. Interleaved with the lab's rich
progress, a long command's output stops reading like a report. By default (`quiet_libraries`) those
bars are switched off through the libraries' own environment variables, set before any of them is
imported, and warnings raised inside libraries are silenced: they tell a user nothing they can act
on. Warnings the lab itself raises still show. `orchestra --verbose ...` (or `ORCHESTRA_VERBOSE=1`)
brings everything back, for debugging a library.
"""

from __future__ import annotations

import os
import warnings

VERBOSE_ENV = "ORCHESTRA_VERBOSE"

#: The libraries' own switches for their progress bars and log chatter (read when they are imported).
LIBRARY_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub, and transformers' bars ("Loading weights", GGUF conversion)
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",  # datasets' map / filter bars (TRL's "Tokenizing train dataset")
    "TQDM_DISABLE": "1",  # every other tqdm bar, the Trainer's step bar included
    "TRANSFORMERS_VERBOSITY": "error",
    "DATASETS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}

#: Modules whose warnings are the lab's own, and so are shown.
OWN_MODULES = r"(lab|trainer|app)(\..*)?$"


def verbose() -> bool:
    """Whether libraries may speak (`--verbose` or `ORCHESTRA_VERBOSE=1`)."""
    return os.environ.get(VERBOSE_ENV) == "1"


def quiet_libraries(verbose_requested: bool = False) -> None:
    """Switch off library progress bars, log chatter and warnings, unless verbose; call before the
    libraries are imported. Child processes (a dashboard, a worker) inherit the same choice."""
    if verbose_requested:
        os.environ[VERBOSE_ENV] = "1"
    if verbose():
        return
    for name, value in LIBRARY_QUIET_ENV.items():
        os.environ.setdefault(name, value)
    warnings.filterwarnings("ignore")
    warnings.filterwarnings("default", module=OWN_MODULES)
