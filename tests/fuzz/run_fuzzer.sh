#!/usr/bin/env bash
# One coverage-guided run of a libFuzzer harness for a bounded time:
#   run_fuzzer.sh HARNESS SECONDS WORKDIR SEED_DIR...
# New inputs go to WORKDIR/corpus (kept between runs), findings to WORKDIR/findings. Exits
# non-zero on a finding, saying how to replay it; either way it ends with the executions run
# and the coverage reached (libFuzzer's final statistics).
set -euo pipefail
harness=$1 seconds=$2 workdir=$3
shift 3
if [[ ! -x $harness ]]; then
  echo "run_fuzzer.sh: no harness at $harness (the fuzzing sub-build makes it: cmake --build build)" >&2
  exit 2
fi
mkdir -p "$workdir/corpus" "$workdir/findings"
# malloc_limit_mb (libFuzzer) makes one allocation of more than 2 GiB a finding; leaks are
# findings too.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
status=0
"$harness" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$workdir/findings/" "$workdir/corpus" "$@" \
  > "$workdir/log.txt" 2>&1 || status=$?
grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::number_of_executed_units|^stat::peak_rss" \
  "$workdir/log.txt" || true
if [[ $status -ne 0 ]]; then
  tail -n 60 "$workdir/log.txt"
  echo "$(basename "$harness"): a finding (exit $status), saved in $workdir/findings/;" \
       "replay it with $(basename "$harness") FILE, minimize it with -minimize_crash=1," \
       "and keep it under tests/fuzz/findings/ as a regression test" >&2
fi
exit "$status"
