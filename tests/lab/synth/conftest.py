"""Shared builds and known-good tool calls for the synthetic domains' tests.

`valid_calls[name](db)` gives, for every tool of a domain, a list of calls whose last one is that
tool's call and whose earlier ones set it up (a card must be blocked before it is replaced), each
chosen from the generated records so that it succeeds. Each domain's set lives in
`tests/helpers/synth_calls/<name>.py`, so that a new domain brings its own.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import pytest

from lab.synth import DOMAINS, build_domain

SEED = 0
N_TASKS = 30


@functools.cache
def built(name: str, seed: int = SEED, n_tasks: int = N_TASKS) -> tuple[Any, dict, list[dict], dict[str, int]]:
    """build_domain once per process; callers must not mutate what it returns."""
    return build_domain(name, n_tasks, seed)


@pytest.fixture
def valid_calls() -> dict[str, Any]:
    """Domain name -> the function giving its known-good calls for a database."""
    return {name: importlib.import_module(f"tests.helpers.synth_calls.{name}").calls for name in DOMAINS}


@pytest.fixture
def build() -> Any:
    """`built(name, seed, n_tasks)`, cached across tests."""
    return built
