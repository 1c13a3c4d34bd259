"""Data flows one way: no import cycles, and no module imports from a layer above its own (issue 33).

Every module of `lab`, `trainer`, `app` and `orchestra` is parsed with `ast` (nothing is imported, so the
check takes well under a second); its imports are read at module level *and* inside functions (a lazy
import is still an arrow), `from . import x` included, and each resolves to the module it names. Three
rules, each failure naming the importing module, its line and the import:

1. no cycle between modules;
2. no cycle between the units of the layer table (a package or module named in `LAYERS`), even where the
   modules involved form none;
3. no arrow up the table: a unit imports only from its own layer or the layers below.

The layer table is also written down, with where new things go, in `docs/architecture.md`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tests.conftest import REPO

ROOTS = ("lab", "trainer", "app", "orchestra")

#: Bottom -> top. A unit (a package or module, with everything below it) may import its own layer and the
#: layers below. Why some units sit where they do:
#: - `lab.store` is its own layer just above the base: it reads and writes records and needs nothing else,
#:   and synthesis and training log to it;
#: - `lab.env` (the stateful-domain core) sits just above `lab.tools`: its adapter is a tool
#:   (`lab.tools.base`), and the bookshop, tau2 retail and ToolScale build on it;
#: - `lab.judge` (and `lab.describe`) sit above `lab.tools`: both call model tools through their interface;
#: - `lab.sim` sits above `lab.world` and `lab.graders`: a simulated model grades its draw against the
#:   world's task (`lab.sim.model` -> `lab.world.task`, `lab.graders`), while the world only needs tools;
#: - `lab.toolkit` (the registry, formerly `lab.tools.registry`) is the composition root of tools,
#:   simulated models and the world's search index;
#: - `orchestra.demo` sits below `app`: the dashboard selects the demo's compared runs by default
#:   (`app.widgets` reads `orchestra.demo.plan.COMPARED`), and the demo never imports the app; the command
#:   (`orchestra.cli`), which serves the app, is the top.
LAYERS: list[tuple[str, ...]] = [
    ("lab.errors", "lab.output", "lab.pricing", "lab.providers", "lab.toolspec", "lab.records", "lab.preference",
     "lab.reward", "lab.filters", "lab.scoring", "lab.task", "lab.testing"),
    ("lab.store",),
    ("lab.tools",),
    ("lab.env",),
    ("lab.judge", "lab.describe"),
    ("lab.world", "lab.graders"),
    ("lab.sim",),
    ("lab.toolkit",),
    ("lab.rollout", "lab.policies"),
    ("lab.synth",),
    ("lab.benchmarks",),
    ("lab.rescoring", "lab.repricing", "lab.report"),
    ("lab.eval",),
    ("trainer",),
    ("orchestra.demo",),
    ("app",),
    ("orchestra.cli", "orchestra.__main__"),
]

#: The root packages' own `__init__`: a docstring and a version, importing nothing; the bottom layer.
ROOT_INITS = ("lab", "orchestra")

@dataclass(frozen=True)
class Arrow:
    """One import: `source` (a module) imports `target` (a module) at `line`, written as `text`."""

    source: str
    target: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}: `{self.text}`) -> {self.target}"


def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Module name -> file for every .py file under each package folder."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def arrows_of(module: str, path: Path, modules: dict[str, Path], packages: tuple[str, ...]) -> list[Arrow]:
    """Every import in the file (module level, in functions, under TYPE_CHECKING) of a module in `packages`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    arrows = []
    for node in _statements(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*above, *([node.module] if node.module else [])])
            # `from a import b` imports the module a.b where there is one, else a name from a
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for name in dict.fromkeys(names):
            target = _known(name, modules)
            if target and target.split(".")[0] in packages and target != module:
                arrows.append(Arrow(module, target, node.lineno, ast.unparse(node)))
    return arrows


def _statements(body: list[ast.AST]) -> Iterable[ast.AST]:
    """Every statement, nested ones included (imports are statements: expressions need no visit)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _statements(getattr(node, block, None) or [])


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that `name` is or is inside."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def unit_of(module: str, layers: list[tuple[str, ...]], root_inits: tuple[str, ...] = ()) -> str | None:
    """The longest table entry the module is or is inside; None when no layer names it."""
    if module in root_inits:
        return module
    entries = [u for layer in layers for u in layer if module == u or module.startswith(u + ".")]
    return max(entries, key=len, default=None)


def all_arrows(root: Path, packages: tuple[str, ...]) -> tuple[list[str], list[Arrow]]:
    """(every module, every import between them) under the package folders in `root`."""
    modules = find_modules(root, packages)
    return list(modules), [a for m, p in modules.items() for a in arrows_of(m, p, modules, packages)]


@lru_cache(maxsize=1)
def repo_arrows() -> tuple[list[str], list[Arrow]]:
    return all_arrows(REPO, ROOTS)


def problems(modules: list[str], arrows: list[Arrow], layers: list[tuple[str, ...]],
             root_inits: tuple[str, ...] = ()) -> list[str]:
    """Every broken rule, one line each: modules in no layer, cycles of modules and of units, upward arrows."""
    level = {unit: i for i, layer in enumerate(layers) for unit in layer} | dict.fromkeys(root_inits, 0)
    units = {m: unit_of(m, layers, root_inits) for m in modules}
    found = [f"{m} is in no layer: add its package to LAYERS" for m, u in units.items() if u is None]
    found += [f"import cycle: {' ; '.join(map(str, cycle))}" for cycle in cycles(arrows)]
    unit_arrows = [Arrow(units[a.source], units[a.target], a.line, str(a)) for a in arrows
                   if units[a.source] and units[a.target] and units[a.source] != units[a.target]]
    found += [f"import cycle between {' -> '.join([*(c.source for c in cycle), cycle[0].source])}: "
              f"{' ; '.join(c.text for c in cycle)}"
              for cycle in cycles(unit_arrows)]
    found += [f"upward import: {a} ({units[a.target]} is in a layer above {units[a.source]})" for a in arrows
              if units[a.source] and units[a.target] and level[units[a.target]] > level[units[a.source]]]
    return found


def cycles(arrows: list[Arrow]) -> list[list[Arrow]]:
    """Cycles, each as its arrows in order: the shortest through every node on one, skipping nodes that a
    cycle already found passes through (so a tangle of several is reported at least once)."""
    out: dict[str, list[Arrow]] = {}
    for a in arrows:
        out.setdefault(a.source, [])
        if all(b.target != a.target for b in out[a.source]):
            out[a.source].append(a)
    found, done = [], set()
    for start in sorted(out):
        if start in done:
            continue
        path = _path_back(start, out)
        if path:
            found.append(path)
            done.update(a.source for a in path)
    return found


def _path_back(start: str, out: dict[str, list[Arrow]]) -> list[Arrow] | None:
    """The shortest chain of arrows from `start` back to itself (breadth first), or None."""
    came: dict[str, Arrow] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for a in out.get(node, []):
                if a.target == start:
                    chain = [a]
                    while chain[0].source != start:
                        chain.insert(0, came[chain[0].source])
                    return chain
                if a.target not in came:
                    came[a.target] = a
                    nxt.append(a.target)
        frontier = nxt
    return None


def test_imports_flow_one_way():
    found = problems(*repo_arrows(), LAYERS, ROOT_INITS)
    assert not found, "\n".join(found)


def test_every_layer_entry_names_a_module():
    modules = repo_arrows()[0]
    empty = [u for layer in LAYERS for u in layer if not any(m == u or m.startswith(u + ".") for m in modules)]
    assert not empty, f"no such module or package, drop from LAYERS: {sorted(empty)}"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_names_an_upward_arrow_and_a_cycle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/core.py": "def f():\n    from pkg.high import view  # lazy, still an arrow\n    return view\n",
        "pkg/high.py": "from pkg.low import core\nview = 1\n",
        "pkg/mid/__init__.py": "from . import a\n",
        "pkg/mid/a.py": "import pkg.mid.b\n",
        "pkg/mid/b.py": "from .a import x\n",
    })
    layers = [("pkg.low",), ("pkg.mid",), ("pkg.high",)]
    found = problems(*all_arrows(tmp_path, ("pkg",)), layers, ("pkg",))
    assert ("upward import: pkg.low.core (line 2: `from pkg.high import view`) -> pkg.high "
            "(pkg.high is in a layer above pkg.low)") in found
    assert ("import cycle: pkg.mid.a (line 1: `import pkg.mid.b`) -> pkg.mid.b ; "
            "pkg.mid.b (line 1: `from .a import x`) -> pkg.mid.a") in found
    assert any(p.startswith("import cycle: pkg.high (line 1: `from pkg.low import core`) -> pkg.low.core")
               for p in found)
    assert any(p.startswith("import cycle between pkg.high -> pkg.low -> pkg.high: pkg.high (line 1") for p in found)
    assert len(found) == 4, found


def test_the_checker_asks_for_a_layer(tmp_path):
    _write(tmp_path,
           {"pkg/__init__.py": "", "pkg/low.py": "", "pkg/high.py": "from pkg import low\n", "pkg/new.py": ""})
    layers = [("pkg.low",), ("pkg.high",)]
    assert problems(*all_arrows(tmp_path, ("pkg",)), layers,
                    ("pkg",)) == ["pkg.new is in no layer: add its package to LAYERS"]
