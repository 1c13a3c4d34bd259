"""`code_interpreter`: run orchestrator-written Python in a throw-away sandbox (paper §3.1, basic tools).

Why a real sandbox: during RL rollouts the code comes from a policy that is being optimised, so it will
sooner or later loop forever, allocate without bound, fork-bomb, or wander the filesystem. Each call runs
`python -I` (isolated mode) in a fresh process tree that cannot hurt the caller or leak its secrets.

Platform: Linux with util-linux `unshare` and a caller that is root (it creates namespaces and drops to an
unprivileged uid). Other platforms get the degraded `limits` mode described at the end.

Protections in `namespaces` mode (the default where available) and how each is enforced:

| Threat                         | Enforcement                                                                  |
|--------------------------------|------------------------------------------------------------------------------|
| endless loop / sleep           | wall-clock `timeout_s`; on expiry the whole pid namespace is SIGKILLed        |
| CPU burn                       | RLIMIT_CPU = `cpu_s` (SIGXCPU, then SIGKILL one second later)                |
| memory blow-up                 | RLIMIT_AS = `memory_mb` per process (Python raises MemoryError)              |
| fork bomb                      | RLIMIT_NPROC = `max_processes` for a uid used by this call alone; reported   |
|                                | as "process limit" from the EAGAIN text anywhere in stderr plus pid 1's      |
|                                | count of pids used, never from the (interleaved, cut) last line alone         |
| filling the disk               | /sandbox, /tmp and /dev/shm share one tmpfs of `disk_mb`; RLIMIT_FSIZE too   |
| writing outside the work dir   | the root is a tmpfs remounted read-only, every bind in it read-only; only    |
|                                | that scratch tmpfs is writable, and it is gone with the namespace             |
| reading the project / answers  | whitelist root (below): the checkout (found from `lab`'s location), the      |
| (checkout, `*.duckdb` stores,  | caller's cwd, stores, `$ORCHESTRA_CACHE` (~/.cache/orchestra-lab), `$HOME`,  |
| world cache, home, /tmp)       | host /tmp, /work, /data, /opt, /var... do not exist inside. One that lies    |
|                                | inside an exposed dir (a venv, /usr/src) is covered by an empty tmpfs/file   |
| `import lab` (trainer, app)    | ModuleNotFoundError: the checkout is absent, and a copy installed into       |
|                                | site-packages is covered by a stub `__init__` that raises it                 |
| leaving the root               | chroot before the uid drop; no capabilities, PR_SET_NO_NEW_PRIVS, so no      |
|                                | chroot(2) or setuid binary; pid 1 (root, in the same root) is not ptraceable  |
| reading the caller's env vars  | environment built from scratch (PATH, HOME, LANG...), nothing inherited      |
| network access                 | private network namespace: only a loopback device, and it is down (so even  |
|                                | 127.0.0.1 and DNS fail at once)                                              |
| signalling the caller          | private pid namespace + different uid; no setuid gains (PR_SET_NO_NEW_PRIVS) |
| leftovers                      | the pid namespace dies with the code; the temporary dir is removed afterwards |
| huge output                    | stdout/stderr read in chunks, only `max_output_chars` kept (plus a tail)     |

The sandbox's root holds only: read-only binds of /usr, /etc and whichever of /bin, /sbin, /lib, /lib32,
/lib64, /libx32 are real dirs (recreated as symlinks where they are links, e.g. /bin -> usr/bin); the
interpreter prefixes (`sys.prefix`, `sys.base_prefix`, the real executable's; pyenv's live under /root,
so /root holds just the path down to them); a minimal /dev (null, zero, full, random, urandom, fd links);
the pid namespace's own /proc; and the scratch tmpfs as /sandbox (cwd and HOME), /tmp and /dev/shm.

How a call runs: `unshare --mount --net --pid --ipc --uts --fork --mount-proc --kill-child` starts a small
root helper (`_INIT`) as pid 1 of the new namespaces. It makes mounts private, mounts an empty tmpfs over
the call's host work dir and builds that root in it from the plan the caller computed
(`lab.tools.sandbox_root.mount_plan`), chroots into it, remounts all but the scratch read-only, then forks the user's
process, which sets the rlimits, drops to its uid and execs `python -I -u -X utf8 main.py`. Pid 1 waits for it and
reports its exit status on a private pipe; when pid 1 exits the kernel kills whatever the code left running. On timeout
the caller SIGKILLs the `unshare` process group and `--kill-child` takes pid 1 (and so the namespace) with it.

Limits of the design: memory is capped per process, not per tree (at most about `max_processes` x
`memory_mb`), because cgroups are not assumed; CPU time is per process too. What the root exposes is
readable, read-only, by design: the interpreter's site-packages (numpy, sympy) and /etc (world-readable
files only, so not /etc/shadow). A secret put inside those (a store file under /usr or in the
interpreter's prefix) is covered only when it is one of the known locations above.

Degraded `limits` mode (`isolation="limits"`, or `"auto"` when namespaces are unavailable, with a warning):
rlimits, scrubbed environment, temporary work dir and process-group kill only. Code then runs as the
caller's uid, with the caller's network and filesystem, and it cannot hide files: the code can read the
checkout, stores and world cache, and `import lab`. Use it only for trusted code or on a dev laptop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lab.errors import LabInputError
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.tools.sandbox_root import mount_plan, secret_paths
from lab.toolspec import ToolSpec

log = logging.getLogger(__name__)

Isolation = Literal["auto", "namespaces", "limits"]

#: Sandbox uids are BASE + per-process block + slot: far above real accounts, systemd's dynamic range and
#: the usual subuid ranges, so a fork bomb's RLIMIT_NPROC count never includes anyone else's processes.
SANDBOX_UID_BASE = 2_000_000_000
_SLOTS_PER_PROCESS = 1024

DEFAULT_SPEC = ToolSpec(
    name="code_interpreter",
    description=(
        "Run a self-contained Python 3 program and return what it prints (stdout, then stderr). "
        "Use it for arithmetic, algebra, simulations and checking answers; print every result you need. "
        "Each call starts fresh: no state, files or variables survive between calls. No network and no "
        "input(); the standard library is available and numpy/sympy/scipy when installed. Limits: a few "
        "seconds of time, limited memory, and long output is truncated."
    ),
    category="basic",
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Complete Python program; use print()."}},
        "required": ["code"],
        "additionalProperties": False,
    },
)

#: Pid 1 of the sandbox's namespaces, run as its own script (see that file's docstring).
_INIT = str(Path(__file__).with_name("sandbox_init.py"))

#: -I: ignore PYTHON* env vars, user site and cwd on sys.path; -u: unbuffered, so what was printed before a
#: timeout kill still reaches the orchestrator; -X utf8: UTF-8 I/O whatever locales the host has.
_PYTHON_ARGV = ["-I", "-u", "-X", "utf8", "main.py"]
_UNSHARE = ["--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--mount-proc", "--kill-child"]

#: cwd and HOME inside the sandbox: a neutral name that says nothing about the host.
_WORKDIR = "/sandbox"
#: What a failed fork/clone (EAGAIN) or thread start prints; see `_hit_process_limit`.
_NPROC_SIGNS = (b"BlockingIOError", b"Resource temporarily unavailable", b"can't start new thread")


@dataclass
class _Capture:
    """Bounded copy of a stream: the first `limit` bytes plus the last `tail_limit`, and the total."""

    limit: int
    tail_limit: int = 4096
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail = (self.tail + chunk)[-self.tail_limit :]

    def text(self, tail: bool = False) -> str:
        """The kept head, or (with `tail`, once the head overflowed) the last bytes instead."""
        kept = self.tail if tail and self.total > len(self.head) else self.head
        return kept.decode("utf-8", errors="replace")

    def contains(self, needles: tuple[bytes, ...]) -> bool:
        return any(n in self.head or n in self.tail for n in needles)

    def last_line(self) -> str:
        lines = [ln.strip() for ln in self.tail.decode("utf-8", errors="replace").splitlines()]
        return next((ln for ln in reversed(lines) if ln), "")


@dataclass
class _Run:
    """What one sandboxed process did."""

    stdout: _Capture
    stderr: _Capture
    status: str = ""  # "exit N", "signal N", "setup-error ..." or "" when killed before reporting
    timed_out: bool = False
    pids: int = -1  # the last pid the sandbox's pid namespace handed out; -1 when unknown


class CodeInterpreter:
    """Run Python code in a sandbox; see the module docstring for every protection and how it works."""

    def __init__(
        self,
        spec: ToolSpec | None = None,
        timeout_s: float = 10,
        cpu_s: int = 10,
        memory_mb: int = 512,
        max_output_chars: int = 8000,
        max_processes: int = 32,
        disk_mb: int = 64,
        isolation: Isolation = "auto",
        python: str | None = None,
    ) -> None:
        for name, value, least in [("timeout_s", timeout_s, 0.1), ("cpu_s", cpu_s, 1), ("memory_mb", memory_mb, 64),
                                   ("max_output_chars", max_output_chars, 100), ("max_processes", max_processes, 1),
                                   ("disk_mb", disk_mb, 1)]:
            if not value >= least:
                raise LabInputError(f"CodeInterpreter: {name} must be at least {least}, got {value!r}")
        if isolation not in ("auto", "namespaces", "limits"):
            raise LabInputError(f"CodeInterpreter: isolation must be auto, namespaces or limits, got {isolation!r}")
        self.spec = spec or DEFAULT_SPEC
        self.timeout_s = timeout_s
        self.cpu_s = cpu_s
        self.memory_mb = memory_mb
        self.max_output_chars = max_output_chars
        self.max_processes = max_processes
        self.disk_mb = disk_mb
        self.isolation = isolation
        # The caller's own interpreter by default, so the sandbox sees the same numpy/sympy.
        self.python = os.path.realpath(python or sys.executable)

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem)
        mode = await self._mode()
        if mode is None:
            return Observation.failure(
                f"tool '{self.spec.name}': namespace sandbox unavailable ({_PROBE.get('reason')}); "
                "use isolation='limits' only for trusted code"
            )
        start = time.monotonic()
        run = await self._run(arguments["code"], mode)
        latency = time.monotonic() - start
        error = self._error(run)
        return Observation(
            text=self._text(run, error),
            error=error,
            latency_s=latency,
            # stdout alone is what the released expert protocol shows of a program (`lab.tools.experts`)
            meta={"isolation": mode, "status": run.status or "killed", "timed_out": run.timed_out,
                  "stdout": run.stdout.text(),
                  "truncated": run.stdout.total + run.stderr.total > self.max_output_chars},
        )

    async def _mode(self) -> str | None:
        """Which isolation this call gets: `namespaces`, `limits`, or None (required but unavailable)."""
        if self.isolation == "limits":
            return "limits"
        if await _namespaces_available():
            return "namespaces"
        if self.isolation == "namespaces":
            return None
        if not _PROBE.get("warned"):
            _PROBE["warned"] = True
            log.warning("code_interpreter: namespace sandbox unavailable (%s); running code with resource "
                        "limits only, as the caller's user and with network access", _PROBE.get("reason"))
        return "limits"

    async def _run(self, code: str, mode: str) -> _Run:
        """Start the sandbox, collect bounded output until exit or timeout, and clean up in all cases."""
        uid = _take_uid() if mode == "namespaces" else -1
        workdir = os.path.realpath(tempfile.mkdtemp(prefix="lab-ci-"))
        status_r, status_w = os.pipe()
        proc: asyncio.subprocess.Process | None = None
        collect: asyncio.Future[Any] | None = None
        head_bytes = self.max_output_chars * 4 + 4  # utf-8 worst case, so the char cut happens on text
        run = _Run(stdout=_Capture(head_bytes), stderr=_Capture(head_bytes))
        try:
            # surrogatepass: a lone surrogate in the JSON string becomes a SyntaxError, not a crash here
            with open(os.path.join(workdir, "main.py"), "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(code)
            if mode == "namespaces":
                env = _sandbox_env(_WORKDIR, "/tmp", self.python)
                cmd = self._namespace_command(workdir, uid, status_w, env)
                proc = await asyncio.create_subprocess_exec(
                    *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, env={"PATH": env["PATH"]}, start_new_session=True,
                    pass_fds=(status_w,))
            else:
                env = _sandbox_env(workdir, workdir, self.python)
                proc = await asyncio.create_subprocess_exec(
                    self.python, *_PYTHON_ARGV, cwd=workdir, env=env,
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, start_new_session=True, preexec_fn=self._set_rlimits)
            os.close(status_w)
            status_w = -1
            assert proc.stdout is not None and proc.stderr is not None
            collect = asyncio.ensure_future(asyncio.gather(
                _drain(proc.stdout, run.stdout), _drain(proc.stderr, run.stderr), proc.wait()))
            try:
                await asyncio.wait_for(asyncio.shield(collect), self.timeout_s)
            except TimeoutError:
                run.timed_out = True
                _kill_group(proc)
                await asyncio.wait_for(collect, 10)  # pipes close once the namespace is gone
            if mode == "namespaces":
                run.status, run.pids = _parse_status(_read_status(status_r))
            elif proc.returncode is not None and not run.timed_out:
                rc = proc.returncode
                run.status = f"signal {-rc}" if rc < 0 else f"exit {rc}"
            return run
        finally:
            if proc is not None and proc.returncode is None:
                _kill_group(proc)  # cancelled mid-run: never leave the code running
            if collect is not None and not collect.done():
                await asyncio.wait([collect], timeout=10)  # let the pipes close before the loop does
            for fd in (status_r, status_w):
                if fd >= 0:
                    os.close(fd)
            if uid >= 0:
                _UIDS_IN_USE.discard(uid)
            shutil.rmtree(workdir, ignore_errors=True)

    def _namespace_command(self, workdir: str, uid: int, status_fd: int, env: dict[str, str]) -> list[str]:
        links, mounts = mount_plan(self.python, secret_paths())
        cfg = {
            "status_fd": status_fd, "root": workdir, "workdir": _WORKDIR, "uid": uid, "python": self.python,
            "argv": _PYTHON_ARGV, "env": env, "links": links, "mounts": mounts, "disk_mb": self.disk_mb,
            "rlimits": self._rlimits(),
        }
        return [_PROBE["unshare"], *_UNSHARE, sys.executable, "-I", "-S", _INIT, json.dumps(cfg)]

    def _rlimits(self) -> dict[str, tuple[int, int]]:
        return {
            "RLIMIT_CPU": (self.cpu_s, self.cpu_s + 1),  # soft: SIGXCPU we can name; hard: SIGKILL
            "RLIMIT_AS": (self.memory_mb * 2**20,) * 2,
            "RLIMIT_NPROC": (self.max_processes,) * 2,
            "RLIMIT_FSIZE": (self.disk_mb * 2**20,) * 2,
            "RLIMIT_NOFILE": (256, 256),
            "RLIMIT_CORE": (0, 0),
        }

    def _set_rlimits(self) -> None:
        """preexec_fn of the `limits` mode (runs in the child between fork and exec)."""
        import resource

        for name, value in self._rlimits().items():
            resource.setrlimit(getattr(resource, name), value)

    def _error(self, run: _Run) -> str | None:
        """One clear sentence for the orchestrator, or None on exit 0."""
        last = run.stderr.last_line()
        if run.timed_out:
            return f"timed out after {self.timeout_s:g} s"
        if run.status.startswith("setup-error"):
            return f"sandbox failed to start: {run.status.removeprefix('setup-error ')}"
        if run.status == "exit 0":
            return None
        if run.status.startswith("signal "):
            sig = int(run.status.split()[1])
            if sig == signal.SIGXCPU:
                return f"CPU time limit exceeded ({self.cpu_s} s)"
            if sig == signal.SIGKILL:  # the hard CPU limit, or the kernel's OOM killer
                return f"killed by SIGKILL (CPU limit {self.cpu_s} s or memory exhausted)"
            return f"killed by signal {signal.Signals(sig).name}"
        if run.status.startswith("exit "):
            code = int(run.status.split()[1])
            if last.startswith("MemoryError"):
                return f"killed: memory limit {self.memory_mb} MB exceeded ({last})"
            if self._hit_process_limit(run):
                return f"process limit ({self.max_processes}) reached: a fork or thread start failed"
            return f"exit code {code}: {last}" if last else f"exit code {code}"
        return "killed before reporting an exit status"

    def _hit_process_limit(self, run: _Run) -> bool:
        """RLIMIT_NPROC made a fork or thread start fail. The last stderr line cannot tell: a dozen
        processes print their tracebacks at once, a write at a time, and the namespace is killed mid-way,
        so the tail may end in a bare "BlockingIOError". So: the EAGAIN wording anywhere in the kept
        stderr, and (where pid 1 could count) enough pids handed out for `max_processes` tasks to have run
        at once, which tells a process-limit hit from EAGAIN on a non-blocking pipe."""
        return run.stderr.contains(_NPROC_SIGNS) and (run.pids < 0 or run.pids > self.max_processes)

    def _text(self, run: _Run, error: str | None) -> str:
        """stdout then stderr, then the error line; cut to `max_output_chars` keeping stdout's head and
        stderr's tail (where the traceback is), with a note saying how much the code wrote."""
        out, err = run.stdout.text(), run.stderr.text(tail=True)
        budget = self.max_output_chars
        complete = run.stdout.total == len(run.stdout.head) and run.stderr.total == len(run.stderr.head)
        if complete and len(out) + len(err) <= budget:
            text = out + ("\n" if out and err and not out.endswith("\n") else "") + err
        else:
            err = err[-(budget // 2) :] if err else ""
            out = out[: budget - len(err)]
            total = run.stdout.total + run.stderr.total
            note = f"[output truncated to {budget} characters; the code wrote {total} bytes]"
            text = "\n".join(part for part in (out.rstrip("\n"), note, err) if part)
        if error:
            text = (text.rstrip("\n") + "\n" if text else "") + f"Error: {error}"
        return text or "(no output)"


def _sandbox_env(home: str, tmp: str, python: str) -> dict[str, str]:
    """A fresh environment: nothing from os.environ, so API keys and tokens never reach the code."""
    return {
        "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",  # ignored under -I; `-X utf8` is what sets it, kept for subprocesses
        # One thread per BLAS/OpenMP pool: threads count against RLIMIT_NPROC and reserve address space.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }


async def _drain(stream: asyncio.StreamReader, capture: _Capture) -> None:
    """Read to EOF in 64 KiB chunks, keeping only a bounded copy (a 10 GB print costs no memory)."""
    while chunk := await stream.read(65536):
        capture.add(chunk)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the sandbox's process group; in namespace mode `--kill-child` then takes pid 1 and all."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_STATUS = re.compile(r"((?:exit|signal) -?\d+) pids (-?\d+)")


def _parse_status(line: str) -> tuple[str, int]:
    """Pid 1's "exit N pids P" into ("exit N", P); "setup-error ..." and "" pass through with -1."""
    match = _STATUS.fullmatch(line)
    return (match[1], int(match[2])) if match else (line, -1)


def _read_status(fd: int) -> str:
    """Pid 1's one-line report; empty if it was killed first. Every writer is dead, so this cannot block."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 4096).decode(errors="replace").strip()
    except BlockingIOError:
        return ""


_UIDS_IN_USE: set[int] = set()


def _take_uid() -> int:
    """A uid no other running sandbox of this process has, so their RLIMIT_NPROC counts are separate."""
    first = SANDBOX_UID_BASE + (os.getpid() % 65536) * _SLOTS_PER_PROCESS  # this process's block
    uid = next((u for u in range(first, first + _SLOTS_PER_PROCESS) if u not in _UIDS_IN_USE), None)
    if uid is None:
        raise RuntimeError(f"more than {_SLOTS_PER_PROCESS} concurrent code_interpreter calls")
    _UIDS_IN_USE.add(uid)
    return uid


_PROBE: dict[str, Any] = {}


async def _namespaces_available() -> bool:
    """Probe once per process whether we can create the namespaces and switch uid (needs root)."""
    if "ok" not in _PROBE:
        _PROBE["ok"], _PROBE["reason"] = await _probe()
    return bool(_PROBE["ok"])


async def _probe() -> tuple[bool, str]:
    if sys.platform != "linux":
        return False, f"needs Linux, this is {sys.platform}"
    _PROBE["unshare"] = shutil.which("unshare")
    if _PROBE["unshare"] is None:
        return False, "util-linux 'unshare' not found"
    if os.geteuid() != 0:
        return False, "needs root to create namespaces and switch to a sandbox uid"
    proc = await asyncio.create_subprocess_exec(
        _PROBE["unshare"], *_UNSHARE, "true", stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    if proc.returncode != 0:
        return False, f"unshare failed: {err.decode(errors='replace').strip()[:200]}"
    return True, ""
