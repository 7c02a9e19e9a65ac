#!/bin/sh
# A model compiled for AArch64 on this machine, run by the AArch64 build of the runtime under
# qemu-aarch64, against ONNX Runtime here:
#   check_aarch64_model.sh SOURCE_DIR LOOM WORKDIR MODEL [MODEL_DIR]
# 1. cross-builds libloom_runtime and `loom` (cmake/aarch64-linux-gnu.cmake,
#    -DLOOM_RUNTIME_ONLY=ON) into WORKDIR/runtime (incremental after the first time);
# 2. runs tests/e2e/models/check_model.py with --target aarch64-neon and that `loom` under
#    qemu-aarch64 as the runner; the generated model is cached in MODEL_DIR (default
#    WORKDIR/MODEL).
set -eu
source_dir=$1 loom=$2 workdir=$3 model=$4 model_dir=${5:-$3/$4}
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" > /dev/null; then
    echo "FAIL: $tool not found; \`make deps\` installs g++-aarch64-linux-gnu and qemu-user"
    exit 1
  fi
done
runtime="$workdir/runtime"
if ! { cmake -S "$source_dir" -B "$runtime" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake" \
         -DLOOM_RUNTIME_ONLY=ON -DBUILD_TESTING=OFF \
       && cmake --build "$runtime"; } > "$workdir.build.log" 2>&1; then
  echo "FAIL: the AArch64 build of the runtime failed:"
  cat "$workdir.build.log"
  exit 1
fi
echo "AArch64 runtime: $(file -b "$runtime/tools/loom/loom" | cut -d, -f1-2)"
exec "$source_dir/.venv/bin/python3" "$source_dir/tests/e2e/models/check_model.py" \
  --loom "$loom" --model "$model" --workdir "$workdir/$model" --model-dir "$model_dir" \
  --target aarch64-neon \
  --runner "qemu-aarch64 -L /usr/aarch64-linux-gnu $runtime/tools/loom/loom"
