"""Tests for lab.tools.code_interpreter.

CodeInterpreter runs hostile code in real sandboxed processes; each attack must end in a clear error
observation while the test process (the caller) and its own children carry on unharmed.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

import lab
from lab.errors import LabInputError
from lab.tools import CodeInterpreter, Observation, Tool, sandbox_root
from lab.tools.code_interpreter import SANDBOX_UID_BASE, _Capture, _Run
from lab.tools.sandbox_root import project_paths

CAN_SANDBOX = sys.platform == "linux" and os.geteuid() == 0 and shutil.which("unshare") is not None
sandboxed = pytest.mark.skipif(not CAN_SANDBOX, reason="namespace sandbox needs Linux, root and unshare")


def run(code: str, **kwargs) -> Observation:
    kwargs.setdefault("timeout_s", 3)
    kwargs.setdefault("isolation", "namespaces")
    return asyncio.run(CodeInterpreter(**kwargs).execute({"code": code}))


def sandbox_processes() -> list[int]:
    """Pids of processes running as a sandbox uid of this test process, anywhere on the machine."""
    first = SANDBOX_UID_BASE + (os.getpid() % 65536) * 1024  # the uid block _UidPool gives this process
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uid_line = next(ln for ln in status.read_text().splitlines() if ln.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # the process exited while we looked
        if first <= int(uid_line.split()[1]) < first + 1024:
            pids.append(int(status.parent.name))
    return pids


def assert_no_leftovers(deadline_s: float = 5) -> None:
    """Nothing the sandbox started may survive the call (polled: the kernel reaps asynchronously)."""
    deadline = time.monotonic() + deadline_s
    while (left := sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []


def probe(dirs: list, files: list, modules: list[str]) -> str:
    """Code that, inside the sandbox, lists each dir, reads each file and imports each module, printing
    LISTED/READ/IMPORTED when it can and `hidden`/`noimport` (with the exception) when it cannot."""
    return (
        "import importlib, os\n"
        f"for path in {[str(d) for d in dirs]!r}:\n"
        "    try:\n"
        "        print('LISTED', path, sorted(os.listdir(path)))\n"
        "    except OSError as exc:\n"
        "        print('hidden', path, type(exc).__name__)\n"
        f"for path in {[str(f) for f in files]!r}:\n"
        "    try:\n"
        "        print('READ', path, repr(open(path).read()))\n"
        "    except OSError as exc:\n"
        "        print('hidden', path, type(exc).__name__)\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        print('IMPORTED', name)\n"
        "    except ImportError as exc:\n"
        "        print('noimport', name, type(exc).__name__, exc)\n"
    )


def assert_caller_fine() -> None:
    """The caller can still fork and run a child process."""
    out = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "42"


def test_default_spec_is_a_basic_tool_taking_only_code() -> None:
    tool = CodeInterpreter()
    assert isinstance(tool, Tool)
    assert tool.spec.name == "code_interpreter" and tool.spec.category == "basic"
    assert tool.spec.parameters["required"] == ["code"]
    assert tool.spec.cost(1000, 1000) == 0.0


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [({}, "missing required argument 'code'"), ({"code": 3}, "'code' must be string"),
     ({"code": "print(1)", "lang": "py"}, "unknown argument 'lang'")],
)
def test_bad_arguments_are_error_observations(arguments: dict, expected: str) -> None:
    obs = asyncio.run(CodeInterpreter().execute(arguments))
    assert obs.error is not None and expected in obs.error
    assert obs.text.startswith("Error:")


@pytest.mark.parametrize(("option", "value"), [("timeout_s", 0), ("memory_mb", 8), ("isolation", "docker")])
def test_bad_limits_are_rejected_with_one_line(option: str, value: object) -> None:
    with pytest.raises(LabInputError, match=f"CodeInterpreter: {option} must be"):
        CodeInterpreter(**{option: value})


@sandboxed
def test_normal_code_prints_results() -> None:
    obs = run("import math\nprint(sum(range(10)), math.factorial(5))\nprint('é ok')")
    assert obs.error is None
    assert obs.text == "45 120\né ok\n"
    assert obs.meta["isolation"] == "namespaces" and obs.latency_s > 0


@sandboxed
def test_numpy_is_importable_when_installed() -> None:
    pytest.importorskip("numpy")
    obs = run("import numpy as np\nprint(int(np.arange(5).sum()))")
    assert obs.error is None and obs.text.strip() == "10"


@sandboxed
def test_failing_code_reports_exit_code_and_last_traceback_line() -> None:
    obs = run("print('before')\n1 / 0")
    assert obs.error == "exit code 1: ZeroDivisionError: division by zero"
    assert obs.text.startswith("before\n") and "Traceback" in obs.text


@sandboxed
def test_infinite_loop_times_out_and_leaves_nothing_running() -> None:
    start = time.monotonic()
    obs = run("print('started')\nwhile True:\n    pass", timeout_s=1.5, cpu_s=30)
    assert obs.error == "timed out after 1.5 s"
    assert "started" in obs.text  # output printed before the kill is kept
    assert time.monotonic() - start < 5
    assert_no_leftovers()
    assert_caller_fine()


@sandboxed
def test_sleeping_background_process_dies_with_the_call() -> None:
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')"
    obs = run(code)
    assert obs.error is None and "parent done" in obs.text
    assert_no_leftovers()


@sandboxed
def test_cpu_limit_stops_busy_code() -> None:
    obs = run("while True:\n    pass", timeout_s=10, cpu_s=1)
    assert obs.error == "CPU time limit exceeded (1 s)"


@sandboxed
@pytest.mark.parametrize(
    "code", ["b' ' * 10**10", "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))"]
)
def test_huge_allocation_hits_memory_limit(code: str) -> None:
    obs = run(code, memory_mb=256)
    assert obs.error is not None and obs.error.startswith("killed: memory limit 256 MB exceeded")
    assert_caller_fine()


@pytest.mark.parametrize(
    ("stderr", "pids", "expected"),
    [  # a dozen processes write their tracebacks at once and the namespace dies mid-way
        (b"Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n    os.fork()\n"
         b"BlockingIOError: [Errno 11] Resource temporarily unavailable\nTraceback (most recent call last):\n"
         b"BlockingIOError", 40, "process limit (16) reached"),
        (b"BlockingIOError: [Errno 11] Resource temporarily unavailable\n" + b"Traceback\n" * 500, 900,
         "process limit (16) reached"),  # the sign survives only in the kept head
        (b"Traceback (most recent call last):\nRuntimeError: can't start new thread\n", 17,
         "process limit (16) reached"),
        (b"BlockingIOError: [Errno 11] Resource temporarily unavailable\n", 3,  # EAGAIN on a pipe, 2 tasks
         "exit code 1: BlockingIOError: [Errno 11] Resource temporarily unavailable"),
    ],
)
def test_process_limit_is_told_apart_however_tracebacks_were_cut(stderr: bytes, pids: int, expected: str) -> None:
    capture = _Capture(limit=200, tail_limit=100)
    capture.add(stderr)
    result = _Run(stdout=_Capture(200), stderr=capture, status="exit 1", pids=pids)
    assert CodeInterpreter(max_processes=16)._error(result).startswith(expected)


@sandboxed
def test_fork_bomb_is_contained() -> None:
    obs = run("import os\nwhile True:\n    os.fork()", max_processes=16, timeout_s=3)
    assert obs.error is not None
    assert obs.error.startswith("process limit (16) reached") or obs.error.startswith("timed out")
    assert_no_leftovers()
    assert_caller_fine()


@sandboxed
def test_fork_bomb_does_not_starve_a_concurrent_call() -> None:
    async def both() -> list[Observation]:
        bomb = CodeInterpreter(timeout_s=3, max_processes=16, isolation="namespaces")
        calm = CodeInterpreter(timeout_s=10, isolation="namespaces")
        return await asyncio.gather(
            bomb.execute({"code": "import os\nwhile True:\n    os.fork()"}),
            calm.execute({"code": "import subprocess, sys\n"
                                  "print(subprocess.run([sys.executable, '-c', 'print(7)'], "
                                  "capture_output=True, text=True).stdout)"}),
        )

    bomb_obs, calm_obs = asyncio.run(both())
    assert bomb_obs.error is not None
    assert bomb_obs.error.startswith(("process limit (16) reached", "timed out"))
    assert calm_obs.error is None and calm_obs.text.strip() == "7"
    assert_no_leftovers()


@sandboxed
def test_writes_outside_the_work_dir_fail(tmp_path: Path) -> None:
    name = f"escape-{uuid.uuid4().hex}"
    targets = [tmp_path / "escape.txt", Path.home() / name, Path("/usr/local/lib") / name, Path("/") / name,
               Path("/etc") / name, Path(sys.prefix) / name]
    private = [Path("/tmp") / name, Path("/dev/shm") / name]  # tmpfs of the sandbox: writable, not the host's
    code = (
        f"for path in {[str(t) for t in targets]!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('pwned')\n"
        "        print('WROTE', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', type(exc).__name__)\n"
        f"for path in {[str(p) for p in private]!r}:\n"
        "    open(path, 'w').write('private')\n"
        "open('inside.txt', 'w').write('ok')\n"
        "print('inside', open('inside.txt').read())\n"
    )
    obs = run(code)
    assert obs.error is None
    assert "WROTE" not in obs.text and obs.text.count("refused") == len(targets)
    assert "inside ok" in obs.text  # the work dir itself is writable
    assert not any(t.exists() for t in [*targets, *private])


@sandboxed
def test_work_dir_is_neutral_and_removed_afterwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the host side of the call lives
    obs = run("import os, tempfile\nopen('scratch.bin', 'wb').write(b'x' * 1000)\n"
              "print(os.getcwd(), os.environ['HOME'], tempfile.gettempdir())")
    assert obs.error is None
    assert obs.text.split() == ["/sandbox", "/sandbox", "/tmp"]
    assert list(tmp_path.iterdir()) == []


@sandboxed
def test_caller_secrets_stay_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"sk-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    secret_file = tmp_path / "key.txt"
    secret_file.write_text(secret)
    secret_file.chmod(0o600)
    code = (
        "import os\n"
        "print(dict(os.environ))\n"
        f"for path in [{str(secret_file)!r}, '/proc/{os.getpid()}/environ', '/etc/shadow']:\n"
        "    try:\n"
        "        print(open(path).read())\n"
        "    except OSError as exc:\n"
        "        print('refused', type(exc).__name__)\n"
    )
    obs = run(code)
    assert obs.error is None
    assert secret not in obs.text and "OPENAI_API_KEY" not in obs.text
    assert obs.text.count("refused") == 3


@sandboxed
def test_project_store_cache_cwd_and_home_are_invisible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    secret = f"reference-answer-{uuid.uuid4().hex}"
    checkout = Path(lab.__file__).resolve().parents[1]
    cwd, cache, home = tmp_path / "cwd", tmp_path / "cache", tmp_path / "home"
    for folder in (cwd, cache / "world", home):
        folder.mkdir(parents=True)
    files = [cwd / "orchestra.duckdb", tmp_path / "runs.duckdb", cache / "world" / "tasks.json", home / "notes.txt"]
    for file in files:
        file.write_text(secret)
    files += [checkout / "README.md", checkout / "pyproject.toml", Path(lab.__file__)]
    dirs = [checkout, os.getcwd(), cwd, cache, home, tmp_path, "/work", "/data", "/home", "/opt", "/srv", "/mnt",
            "/var", "/run", "/boot"]
    monkeypatch.setenv("ORCHESTRA_CACHE", str(cache))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    modules = ["lab", "lab.world", "trainer", "app"]
    dirs = [d for d in dirs if os.path.realpath(d) != "/"]  # a test run from / has nothing to hide there
    obs = run(probe(dirs, files, modules) + "import numpy as np\nprint('numpy', int(np.arange(10).sum()))",
              timeout_s=20)
    assert obs.error is None, obs.text
    assert secret not in obs.text
    verdicts = [line.split()[:3] for line in obs.text.splitlines()]
    assert verdicts == ([["hidden", str(d), "FileNotFoundError"] for d in [*dirs, *files]]
                        + [["noimport", m, "ModuleNotFoundError"] for m in modules] + [["numpy", "45"]])


@sandboxed
def test_root_holds_only_what_python_needs() -> None:
    home = os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir)
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix,
                                              os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))}
    # a prefix outside the system dirs (pyenv under /root) appears with the bare dirs leading to it
    leading = {p.split("/")[1] for p in prefixes}
    toward_home = {p[len(home) + 1:].split("/")[0] for p in prefixes if p.startswith(home + "/")}
    code = ("import json, os\n"
            f"print(json.dumps([sorted(os.listdir(d)) if os.path.isdir(d) else [] for d in ['/', '/dev', {home!r}]]))")
    obs = run(code)
    assert obs.error is None, obs.text
    root, dev, home_inside = json.loads(obs.text)
    system = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "tmp", "sandbox"}
    assert set(root) <= system | leading and "main.py" not in root
    assert set(dev) <= {"null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout", "stderr", "shm"}
    assert set(home_inside) <= toward_home


@sandboxed
def test_secrets_inside_exposed_dirs_are_covered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project installed as a wheel, a cache and a store all inside the interpreter's own prefix (a venv,
    bound read-only): the package gets a stub that refuses the import, the rest empty covers."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--copies", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    secret = f"reference-answer-{uuid.uuid4().hex}"
    package = Path(site) / "lab"
    package.mkdir()
    (package / "__init__.py").write_text(f"ANSWERS = {secret!r}\nprint(ANSWERS)\n")
    outside = subprocess.run([python, "-I", "-c", "import lab"], capture_output=True, text=True, timeout=30)
    assert outside.stdout.strip() == secret  # without the sandbox this install gives the answers away
    cache, store = venv / "cache", venv / "store.duckdb"
    cache.mkdir()
    (cache / "tasks.json").write_text(secret)
    store.write_text(secret)
    monkeypatch.setenv("ORCHESTRA_CACHE", str(cache))
    monkeypatch.setenv("ORCHESTRA_DB", str(store))
    monkeypatch.setattr(sandbox_root, "_project", lambda: (None, [str(package)], ""))
    obs = run(probe([cache], [cache / "tasks.json", store], ["lab"]), python=python, timeout_s=20)
    assert obs.error is None, obs.text
    assert secret not in obs.text
    assert f"LISTED {cache} []" in obs.text and f"hidden {cache / 'tasks.json'} FileNotFoundError" in obs.text
    assert f"READ {store} ''" in obs.text
    assert "noimport lab ModuleNotFoundError the 'lab' package is not importable inside the code_interpreter" \
        in obs.text


def test_project_paths_find_the_checkout_or_the_installed_packages(tmp_path: Path) -> None:
    names = ("lab", "trainer", "app")
    for layout in ("checkout", "site-packages"):
        for name in names:
            (tmp_path / layout / name).mkdir(parents=True)
            (tmp_path / layout / name / "__init__.py").touch()
    (tmp_path / "checkout" / "pyproject.toml").touch()
    checkout, packages = project_paths(tmp_path / "checkout" / "lab")
    assert checkout == str(tmp_path / "checkout")
    assert {str(tmp_path / "checkout" / n) for n in names} <= set(packages)
    checkout, packages = project_paths(tmp_path / "site-packages" / "lab")
    assert checkout is None and {str(tmp_path / "site-packages" / n) for n in names} <= set(packages)


def test_mount_plan_covers_secrets_inside_exposed_dirs_but_never_python(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout under a system dir with its venv inside, a wheel's package in that venv, and a cwd that
    holds the libraries Python loads: only what can be covered without breaking Python is."""
    usr = tmp_path / "usr"
    checkout, libs = usr / "src" / "proj", usr / "lib"
    venv, site = checkout / ".venv", checkout / ".venv" / "lib" / "site-packages"
    for folder in (checkout / "lab", site / "app", libs):
        folder.mkdir(parents=True)
    layout = ([], [str(usr)], [str(venv)], [str(site), str(libs)])  # links, binds, prefixes, essential
    monkeypatch.setattr(sandbox_root, "_host_layout", lambda python: layout)
    monkeypatch.setattr(sandbox_root, "_project", lambda: (str(checkout), [str(checkout / "lab"),
                                                                               str(site / "app")], ""))
    _, ops = sandbox_root.mount_plan("python", [str(checkout), str(libs), str(tmp_path / "elsewhere")])
    assert [(op, path) for op, path, _ in ops] == [
        ("bind", str(usr)), ("hide", str(checkout)), ("bind", str(venv)), ("stub", str(site / "app"))]


@sandboxed
def test_network_is_unreachable_even_on_loopback() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            f"for address in [('127.0.0.1', {port}), ('pypi.org', 443)]:\n"
            "    try:\n"
            "        socket.create_connection(address, timeout=5).close()\n"
            "        print('CONNECTED', address)\n"
            "    except OSError as exc:\n"
            "        print('refused', type(exc).__name__)\n"
        )
        obs = run(code)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody knocked
    assert obs.error is None
    assert "CONNECTED" not in obs.text and obs.text.count("refused") == 2
    assert obs.latency_s < 3  # fails at once, no waiting on a DNS or connect timeout


@sandboxed
def test_cannot_signal_the_caller_or_its_children() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        code = (
            "import os, signal\n"
            f"for target in [os.getppid(), {os.getpid()}, {child.pid}, -1]:\n"
            "    try:\n"
            "        os.kill(target, signal.SIGKILL)\n"
            "        print('sent', target)\n"
            "    except OSError as exc:\n"
            "        print('refused', type(exc).__name__)\n"
        )
        obs = run(code)
        assert child.poll() is None  # the caller's own child still runs
        assert obs.text.count("refused") >= 3 and f"sent {child.pid}" not in obs.text
    finally:
        child.kill()
        child.wait()
    assert_caller_fine()


@sandboxed
def test_huge_output_is_truncated_without_buffering_it() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    code = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 10**6)\nraise ValueError('at the end')"
    obs = run(code, max_output_chars=1000, timeout_s=20)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50  # 200 MB went through the pipe
    assert obs.meta["truncated"] is True
    assert "[output truncated to 1000 characters; the code wrote 2000" in obs.text
    assert obs.text.rstrip().endswith("Error: exit code 1: ValueError: at the end")
    assert len(obs.text) < 1300


@sandboxed
def test_four_concurrent_calls_each_get_their_own_output() -> None:
    async def four() -> list[Observation]:
        tool = CodeInterpreter(timeout_s=10, isolation="namespaces")
        return await asyncio.gather(*(tool.execute({"code": f"print({i} ** 2)"}) for i in range(4)))

    results = asyncio.run(four())
    assert [obs.text.strip() for obs in results] == ["0", "1", "4", "9"]
    assert all(obs.error is None for obs in results)


def test_limits_mode_still_scrubs_env_and_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits-secret")
    obs = run("import os\nprint(sorted(os.environ))\nwhile True:\n    pass", isolation="limits", timeout_s=1.5)
    assert obs.meta["isolation"] == "limits"
    assert obs.error == "timed out after 1.5 s"
    assert "'HOME'" in obs.text and "OPENAI_API_KEY" not in obs.text


@sandboxed
def test_cancelled_call_leaves_nothing_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # so we can see where the work dir went

    async def cancel_midway() -> None:
        tool = CodeInterpreter(timeout_s=30, isolation="namespaces")
        where = await tool.execute({"code": "import os\nprint(os.getcwd())"})
        assert where.text == "/sandbox\n" and list(tmp_path.iterdir()) == []
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(tool.execute({"code": "import time\ntime.sleep(60)"}), 1)

    asyncio.run(cancel_midway())
    assert_no_leftovers()
    assert list(tmp_path.iterdir()) == []
