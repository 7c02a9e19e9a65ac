#!/bin/sh
# The AArch64 build of the runtime and the `loom` tool, for the tests that run it under
# qemu-aarch64 (check_aarch64_model.sh, check_aarch64_rpc.sh):
#   build_aarch64_runtime.sh SOURCE_DIR WORKDIR
# cross-builds libloom_runtime, libloom_rpc and `loom` (cmake/aarch64-linux-gnu.cmake,
# -DLOOM_RUNTIME_ONLY=ON) into WORKDIR/runtime, so the tool is WORKDIR/runtime/tools/loom/loom.
# The tests share one WORKDIR, so only the first one builds (about a minute on 2 cores) and the
# others find it up to date; they hold the same ctest RESOURCE_LOCK, so two never build at once.
# The build's output goes to WORKDIR.build.log and is printed only when it fails.
set -eu
source_dir=$1 workdir=$2
# Without the cross toolchain or the emulator the test cannot run here: a failure that says
# what to install, not a skip, so that a machine missing them is noticed.
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
