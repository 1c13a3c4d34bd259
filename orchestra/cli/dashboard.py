"""`orchestra app`: serve the Streamlit dashboard (`app/`) on one store.

    orchestra app --db demo.duckdb            # http://127.0.0.1:8501
    orchestra app --port 8600 --host 0.0.0.0  # reachable from other machines: only on a trusted network

The app reads the store read-only through short-lived connections, so it can stay open while a run
writes. It binds to 127.0.0.1 unless told otherwise: the store holds prompts and answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import typer

from orchestra.cli.options import DbOption, console
from orchestra.cli.root import app


def app_command(port: int, host: str) -> list[str]:
    """The `streamlit run` command line for the dashboard (headless, no usage statistics)."""
    import app as dashboard  # the package beside lab/

    main = Path(dashboard.__file__).parent / "main.py"
    return [sys.executable, "-m", "streamlit", "run", str(main), "--server.headless", "true",
            "--server.address", host, "--server.port", str(port), "--browser.gatherUsageStats", "false",
            "--client.toolbarMode", "minimal"]


@app.command("app")
def serve(
    db: str | None = DbOption,
    port: int = typer.Option(8501, "--port", min=1, max=65535, help="Port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; 0.0.0.0 exposes the store to the network."),
) -> None:
    """Serve the dashboard: runs, rollouts, preference steering, tool use, Pareto, compare, training."""
    from lab.store.store import resolve_db_path

    path = resolve_db_path(db).resolve()
    if not path.is_file():
        console.print(f"[yellow]{path}: no store yet; the app will say so until a run writes one.[/yellow]")
    exec_dashboard(path, port, host)


def exec_dashboard(path: Path, port: int, host: str) -> None:
    """Replace this process by the dashboard server on the store at `path` (never returns)."""
    console.print(f"Orchestra Lab dashboard on {path}: http://{host}:{port}  (Ctrl-C stops it)",
                  soft_wrap=True, highlight=False)
    sys.stdout.flush()
    # exec, not a child process: a signal to this process (Ctrl-C, a supervisor's SIGTERM) reaches the
    # server itself, so stopping `orchestra app` can never leave a server behind.
    command = app_command(port, host)
    os.execve(command[0], command, {**os.environ, "ORCHESTRA_DB": str(path)})


def free_port() -> int:
    """A TCP port nothing listens on now (for a dashboard started by a script or a test)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 120.0) -> None:
    """Until the dashboard at `url` answers its health check; its process exiting or a timeout raises."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the dashboard process exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)  # polling a server that is starting, not synchronising with it
    raise RuntimeError(f"the dashboard at {url} was not ready within {timeout_s} s")
