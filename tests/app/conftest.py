"""Stores for the dashboard tests, built from records (no models, no world): a seeded one with two
evaluation runs with two samples per task, a training run with three logged steps and two evaluations
linked to it (`tests.helpers.dashboard.build_store`), and an empty one."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.store import Store
from tests.helpers.dashboard import Served, build_store


@pytest.fixture
def app_store(tmp_path, make_run, monkeypatch) -> Path:
    """A store with eval and training runs, and $ORCHESTRA_DB pointing the app at it."""
    path = build_store(tmp_path / "app.duckdb", make_run)
    monkeypatch.setenv("ORCHESTRA_DB", str(path))
    return path


@pytest.fixture
def empty_store(tmp_path, monkeypatch) -> Path:
    """A store with no run in it yet, and $ORCHESTRA_DB pointing the app at it."""
    path = tmp_path / "empty.duckdb"
    Store(path)
    monkeypatch.setenv("ORCHESTRA_DB", str(path))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory, make_run):
    """One server per test module (starting one costs seconds); the tests only read its store."""
    server = Served(build_store(tmp_path_factory.mktemp("served") / "served.duckdb", make_run))
    server.wait_ready()
    yield server
    server.stop()
