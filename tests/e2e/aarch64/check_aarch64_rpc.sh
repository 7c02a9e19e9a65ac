#!/bin/sh
# A model compiled for AArch64 on this machine and run on a remote device: the AArch64 build of
# `loom rpc server` under qemu-aarch64 on loopback, driven by this machine's `loom`:
#   check_aarch64_rpc.sh SOURCE_DIR LOOM WORKDIR MODEL [MODEL_DIR]
# 1. cross-builds libloom_runtime, libloom_rpc and `loom` into WORKDIR/runtime
#    (build_aarch64_runtime.sh, shared with check_aarch64_model.sh);
# 2. starts that `loom rpc server --port 0` under qemu-aarch64 and reads its port from the line
#    it prints; the server is stopped however this script ends;
# 3. checks that `loom rpc info` reports an aarch64 device;
# 4. runs tests/e2e/models/check_model.py with --target aarch64-neon and `loom run --rpc`: the
#    model is uploaded, run on the server, and its outputs compared with ONNX Runtime here; the
#    generated model is cached in MODEL_DIR (default WORKDIR/MODEL);
# 5. runs `loom bench --rpc` on that artifact once (timings under emulation mean nothing: the
#    path is what is tested);
# 6. compiles the model for this machine (--target llvm, seconds) and checks that `loom run
#    --rpc` refuses it with a one-line error naming both architectures.
# Exit status: 0 pass, 1 fail, 77 skipped (check_model.py's: the Python environment lacks a
# package).
set -eu
source_dir=$1 loom=$2 workdir=$3 model=$4 model_dir=${5:-$3/$4}
"$source_dir/tests/e2e/aarch64/build_aarch64_runtime.sh" "$source_dir" "$workdir"
aarch64_loom="$workdir/runtime/tools/loom/loom"
# Its own folder: check_aarch64_model.sh's WORKDIR/MODEL may hold the same model's artifact.
check_dir="$workdir/${model}_rpc"
mkdir -p "$check_dir"
server_out="$check_dir/server.out" server_log="$check_dir/server.log"

server_pid=
# SIGTERM ends the server cleanly (its sessions ended, their folders removed); the wait keeps
# this script from exiting before it has.
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2> /dev/null || true
    wait "$server_pid" 2> /dev/null || true
    server_pid=
  fi
}
trap stop_server EXIT
# A signal (ctest's timeout, ^C) exits through the EXIT trap above.
trap 'exit 1' HUP INT TERM

fail() {
  echo "FAIL: $*"
  echo "--- the AArch64 server's log ($server_log):"
  cat "$server_log"
  exit 1
}

# 2. The session folders go under check_dir rather than the temp dir, so anything a killed
# server leaves behind stays in the build tree.
qemu-aarch64 -L /usr/aarch64-linux-gnu "$aarch64_loom" rpc server --port 0 \
  --work-dir "$check_dir" > "$server_out" 2> "$server_log" &
server_pid=$!
port=
waited=0
while :; do
  port=$(sed -n 's/^loom rpc server: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' \
         "$server_out")
  [ -z "$port" ] || break
  # It prints the line within a second under qemu; a minute means it never will.
  if ! kill -0 "$server_pid" 2> /dev/null || [ "$waited" -ge 60 ]; then
    cat "$server_out"
    fail "the AArch64 \`loom rpc server\` did not say which port it listens on"
  fi
  sleep 1
  waited=$((waited + 1))
done
server="127.0.0.1:$port"

# 3.
info=$("$loom" rpc info --rpc "$server" 2>&1) || fail "loom rpc info --rpc $server: $info"
echo "loom rpc info: $info"
case $info in
  *": aarch64"*) ;;
  *) fail "loom rpc info --rpc $server does not report an aarch64 device" ;;
esac

# 4. --keep: step 5 benchmarks the artifact; this script removes it when all passes.
rc=0
"$source_dir/.venv/bin/python3" "$source_dir/tests/e2e/models/check_model.py" \
  --loom "$loom" --model "$model" --workdir "$check_dir" --model-dir "$model_dir" \
  --target aarch64-neon --run-args "--rpc $server" --keep || rc=$?
if [ "$rc" -ne 0 ]; then
  # 77 (skipped) passes through as it is; a failure shows what the server said.
  [ "$rc" -eq 77 ] || fail "check_model.py exited with $rc"
  exit "$rc"
fi
artifact="$check_dir/$model.so"

# 5.
bench=$("$loom" bench "$artifact" --rpc "$server" --repeat 2 --warmup 0 2>&1) ||
  fail "loom bench --rpc $server: $bench"
echo "$bench"
echo "$bench" | grep -q '^median_ms=' || fail "loom bench --rpc printed no median_ms= line"

# 6. The client reads the library's architecture before it uploads anything, so this costs
# only the compile.
host_artifact="$check_dir/${model}_host.so"
compiled=$("$loom" compile "$model_dir/$model.onnx" -o "$host_artifact" --target llvm 2>&1) ||
  fail "loom compile --target llvm: $compiled"
if refused=$("$loom" run "$host_artifact" --rpc "$server" 2>&1); then
  fail "the server accepted $host_artifact, compiled for $(uname -m): $refused"
fi
echo "$(uname -m) artifact refused: $refused"
[ "$(echo "$refused" | wc -l)" -eq 1 ] || fail "the refusal is not one line"
case $refused in
  *"was compiled for $(uname -m), and the device at $server is aarch64"*) ;;
  *) fail "the refusal does not name both architectures" ;;
esac

# As check_model.py does after a pass: the artifacts and arrays would fill a machine's disk.
rm -rf "$artifact" "$host_artifact" "$check_dir/inputs" "$check_dir/outputs"
echo "$model over RPC: PASS"
