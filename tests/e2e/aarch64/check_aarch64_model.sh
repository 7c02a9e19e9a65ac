#!/bin/sh
# A model compiled for AArch64 on this machine, run by the AArch64 build of the runtime under
# qemu-aarch64, against ONNX Runtime here:
#   check_aarch64_model.sh SOURCE_DIR LOOM WORKDIR MODEL [MODEL_DIR]
# 1. cross-builds libloom_runtime and `loom` into WORKDIR/runtime (build_aarch64_runtime.sh;
#    incremental after the first time);
# 2. runs tests/e2e/models/check_model.py with --target aarch64-neon and that `loom` under
#    qemu-aarch64 as the runner; the generated model is cached in MODEL_DIR (default
#    WORKDIR/MODEL).
set -eu
source_dir=$1 loom=$2 workdir=$3 model=$4 model_dir=${5:-$3/$4}
"$source_dir/tests/e2e/aarch64/build_aarch64_runtime.sh" "$source_dir" "$workdir"
runtime="$workdir/runtime"
exec "$source_dir/.venv/bin/python3" "$source_dir/tests/e2e/models/check_model.py" \
  --loom "$loom" --model "$model" --workdir "$workdir/$model" --model-dir "$model_dir" \
  --target aarch64-neon \
  --runner "qemu-aarch64 -L /usr/aarch64-linux-gnu $runtime/tools/loom/loom"
