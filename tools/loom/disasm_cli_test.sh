#!/usr/bin/env bash
# End-to-end test of `loom vta disasm`: output for a hand-encoded stream, and the error line
# and exit status for malformed input. Usage: disasm_cli_test.sh LOOM_BINARY DEFAULT_CONFIG
set -u
loom=$1
default_config=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_output NAME EXPECTED_STDOUT ARGS...: exit 0 and exactly that output.
expect_output() {
  local name=$1 expected=$2
  shift 2
  local actual
  actual=$("$loom" "$@" 2>"$dir/stderr")
  local status=$?
  [[ $status -eq 0 ]] || fail "$name: exit $status, stderr: $(cat "$dir/stderr")"
  [[ "$actual" == "$expected" ]] || fail "$name: got
$actual
expected
$expected"
}

# expect_error NAME MESSAGE ARGS...: exit 1, one stderr line "loom: error: ..." containing MESSAGE.
expect_error() {
  local name=$1 message=$2
  shift 2
  "$loom" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local status=$?
  [[ $status -eq 1 ]] || fail "$name: exit status $status, expected 1"
  local first_line
  first_line=$(head -n 1 "$dir/stderr")
  [[ "$first_line" == "loom: error: "*"$message"* ]] || fail "$name: stderr was: $first_line"
  [[ ! -s "$dir/stdout" ]] || fail "$name: printed to stdout: $(cat "$dir/stdout")"
}

# LOAD INP sram=5 dram=0x100 y=2 x=16 stride=32 pad=(1,2,3,4) [pop next, push next]:
# words 0x0000000400001550, 0x4321002000100002 (see tests/unit/vta/isa_test.cc), then
# FINISH [pop next] = 0x13.
printf '\x50\x15\x00\x00\x04\x00\x00\x00\x02\x00\x10\x00\x20\x00\x21\x43' >"$dir/program.bin"
printf '\x13\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' >>"$dir/program.bin"
listing="  0: LOAD INP sram=0x0005 dram=0x00000100 y=2 x=16 stride=32 pad=(1,2,3,4)  [pop next, push next]
  1: FINISH  [pop next]"
expect_output "default config" "$listing" vta disasm "$dir/program.bin"
expect_output "bundled config" "$listing" vta disasm "$dir/program.bin" --config "$default_config"

# Micro-ops dst=5 src=0x7FF wgt=0x3FF (0xFFFFF805) and dst=3 src=2 wgt=1 (0x00401003).
printf '\x05\xf8\xff\xff\x03\x10\x40\x00' >"$dir/uops.bin"
expect_output "micro-ops" "  0: dst=5 src=2047 wgt=1023
  1: dst=3 src=2 wgt=1" vta disasm --uops "$dir/uops.bin"

head -c 17 "$dir/program.bin" >"$dir/ragged.bin"
expect_error "ragged file" "size 17 is not a multiple of 16" vta disasm "$dir/ragged.bin"

cp "$dir/program.bin" "$dir/bad_opcode.bin"
printf '\x07' | dd of="$dir/bad_opcode.bin" bs=1 seek=16 conv=notrunc status=none
expect_error "unknown opcode" "instruction 1: unknown VTA opcode 7" vta disasm "$dir/bad_opcode.bin"

expect_error "missing file" "cannot be opened" vta disasm "$dir/no_such_file.bin"
expect_error "a device" "instruction file '/dev/zero' is not a regular file" vta disasm /dev/zero
expect_error "a folder" "is not a regular file" vta disasm "$dir"
expect_error "a device as config" "VTA config '/dev/zero' is not a regular file" \
  vta disasm "$dir/program.bin" --config /dev/zero
echo '{"LOG_INP_WIDTH": 3}' >"$dir/bad_config.json"
expect_error "bad config" "missing parameter \"LOG_WGT_WIDTH\"" \
  vta disasm "$dir/program.bin" --config "$dir/bad_config.json"
expect_error "no file argument" "file is required" vta disasm

"$loom" vta disasm --help >"$dir/help" 2>&1 || fail "--help exited non-zero"
grep -q "16 bytes" "$dir/help" || fail "--help does not document the file format"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all loom vta disasm checks passed"
