"""What the per-domain call sets share: `Calls`, and `first`, the first record (by id) that passes a test."""

from __future__ import annotations

from typing import Any

Calls = dict[str, list[tuple[str, dict[str, Any]]]]


def first(rows: Any, test: Any) -> dict:
    return next(row for row in sorted(rows, key=lambda r: next(iter(r.values()))) if test(row))
