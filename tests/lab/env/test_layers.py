"""The environment layer sits below the domains: data flows one way, with no import cycle.

Read from the source (every import statement, the ones inside functions too), so a late import
cannot hide a cycle that only shows when that function runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3] / "lab"


def _imports(package: str) -> set[tuple[str, str]]:
    """(module file, imported module) for every import under `lab/<package>` (or the file `lab/<package>.py`)."""
    found = set()
    folder = ROOT / package
    for file in sorted(folder.rglob("*.py")) if folder.is_dir() else [ROOT / f"{package}.py"]:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add((file.name, node.module))
            elif isinstance(node, ast.Import):
                found.update((file.name, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize(("package", "forbidden"), [
    ("env", ("lab.world", "lab.synth", "lab.benchmarks", "lab.eval", "lab.rollout", "lab.graders")),
    ("synth", ("lab.benchmarks",)),
    ("graders", ("lab.world",)),
])
def test_a_lower_layer_imports_nothing_above_it(package: str, forbidden: tuple[str, ...]) -> None:
    bad = sorted((file, module) for file, module in _imports(package) if module.startswith(forbidden))
    assert not bad, f"lab.{package} imports {bad}"
