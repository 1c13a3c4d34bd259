"""The sandbox's root filesystem, planned on the caller's side: a whitelist of what Python needs.

Why a whitelist: code run by `code_interpreter` comes from a policy being optimised, and the reward is
an adversary. A root that holds only the system dirs and the interpreter's prefixes (read-only) has no
project checkout, no store file, no world cache and no home to read the reference answers from,
wherever those live. What a bind would still expose (a checkout under /usr/src, a store inside a
venv) is covered, and the project's packages get a stub that refuses the import. `sandbox_init.py`
(pid 1 of the sandbox) builds the root from `mount_plan`.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pwd
import sys
import sysconfig
import tempfile
from pathlib import Path

#: Host dirs the sandbox's root gets, read-only, when they exist: what Python and its C libraries load.
#: Symlinks among them (/bin -> usr/bin on merged-/usr systems) are recreated as symlinks.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: The project's own packages: they can rebuild the offline world with every reference answer.
PROJECT_PACKAGES = ("lab", "trainer", "app")


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _inside(path: str, parent: str) -> bool:
    return path != parent and _under(path, parent)


def project_paths(lab_dir: Path) -> tuple[str | None, list[str]]:
    """The checkout holding the `lab` package (its parent, when that has a pyproject.toml) and the
    project's package dirs, wherever they are installed: beside `lab` or where the import system finds
    them (an editable install maps them into the checkout, a wheel puts them in site-packages)."""
    root = lab_dir.resolve().parent
    checkout = str(root) if (root / "pyproject.toml").is_file() else None
    dirs = {str(root / name) for name in PROJECT_PACKAGES if (root / name / "__init__.py").is_file()}
    for name in PROJECT_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)  # locates without importing
        except (ImportError, ValueError):
            continue
        if spec is not None:
            dirs.update(os.path.realpath(p) for p in spec.submodule_search_locations or [])
    return checkout, sorted(dirs)


@functools.lru_cache(maxsize=1)
def _project() -> tuple[str | None, list[str], str]:
    """This process's checkout, package dirs and passwd home; found once, they do not move."""
    checkout, packages = project_paths(Path(__file__).resolve().parents[1])
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = ""
    return checkout, packages, home


def secret_paths() -> list[str]:
    """Host paths the code must never see (see the module docstring); read per call, as the cwd and the
    environment may change between calls."""
    checkout, _, passwd_home = _project()
    home = os.path.expanduser("~")
    try:
        cwd = os.getcwd()
    except FileNotFoundError:  # the caller's cwd was deleted: nothing left there to hide
        cwd = ""
    paths = [checkout, cwd, home, passwd_home, os.environ.get("ORCHESTRA_DB"), tempfile.gettempdir(), "/var/tmp",
             os.environ.get("ORCHESTRA_CACHE") or os.path.join(home, ".cache", "orchestra-lab")]
    return sorted({os.path.realpath(p) for p in paths if p})


@functools.lru_cache(maxsize=8)
def _host_layout(python: str) -> tuple[list[tuple[str, str]], list[str], list[str], list[str]]:
    """What the sandbox root is built from, found once per interpreter: top-level symlinks to recreate,
    dirs to bind read-only (system dirs, then interpreter prefixes that no system dir holds), all the
    prefixes, and the files Python cannot start without (a hide must never take those away)."""
    links = [(d, os.readlink(d)) for d in SYSTEM_DIRS if os.path.islink(d)]
    binds: list[str] = []
    prefixes = sorted({os.path.realpath(p) for p in (os.path.dirname(os.path.dirname(python)), sys.prefix,
                                                     sys.base_prefix)}, key=len)
    for path in [*(os.path.realpath(d) for d in SYSTEM_DIRS if os.path.exists(d)), *prefixes]:
        if path != "/" and not any(_under(path, b) for b in binds):
            binds.append(path)
    paths = sysconfig.get_paths()
    essential = {python, os.path.dirname(os.__file__), paths["purelib"], paths["platlib"]}
    try:  # and the dirs of every shared library this process mapped (libc, ld.so, libpython, numpy's...)
        with open("/proc/self/maps") as f:  # address perms offset dev inode [path]
            mapped = [fields[5].strip() for fields in (ln.split(None, 5) for ln in f) if len(fields) == 6]
        essential.update(os.path.dirname(m) for m in mapped if m.startswith("/"))
    except OSError:
        pass
    return links, binds, prefixes, sorted({os.path.realpath(p) for p in essential})


def mount_plan(python: str, secrets: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Symlinks and mounts (parents first) for pid 1 to build the sandbox's root from.

    The root is a whitelist: only the binds exist inside, so a secret outside them needs nothing. A secret
    inside a bind (a checkout under /usr/src, a store in a venv) is covered by an empty tmpfs (a file by an
    empty file); prefixes under that cover are bound back on top, and the project's packages still
    visible get a stub `__init__` that raises ModuleNotFoundError."""
    links, binds, prefixes, essential = _host_layout(python)

    def visible(path: str, ops: list[tuple[str, str, str]]) -> bool:  # the deepest mount above decides
        above = [(p, op) for op, p, _ in ops if _under(path, p)]
        return bool(above) and max(above, key=lambda a: len(a[0]))[1] == "bind"

    def spared(secret: str, e: str) -> bool:  # `e` survives covering `secret`: a prefix inside brings it back
        return not _under(e, secret) or any(_inside(p, secret) and _under(e, p) for p in prefixes)

    ops = [("bind", b, "") for b in binds]
    hides = [s for s in sorted(secrets, key=len) if s not in binds and os.path.lexists(s) and visible(s, ops)
             and all(spared(s, e) for e in essential)]
    ops += [("hide", h, "") for h in hides if not any(_inside(h, o) for o in hides)]
    ops += [("bind", p, "") for p in prefixes if any(_inside(p, h) for h in hides)]
    _, packages, _ = _project()
    ops += [("stub", d, f"the {os.path.basename(d)!r} package is not importable inside the code_interpreter "
             "sandbox") for d in packages if os.path.isdir(d) and visible(d, ops)]
    return links, ops
