#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in build-fuzz/ with clang, ASan and
# UBSan, and runs each for SECONDS (default 10), printing executions and
# findings per target. Exit 1 when any target found something (the inputs
# are left in build-fuzz/findings/), 0 otherwise.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 600 npy npz
#   FUZZ_RUNS=1000000 scripts/fuzz.sh 1800     stop each at a million executions
#   FUZZ_SEED=1 FUZZ_RUNS=20000 scripts/fuzz.sh 20   the same inputs every time
#                                              (`make fuzz-smoke`, which CI runs: a
#                                              smoke test must not be a lottery; the
#                                              random, long runs are `make fuzz`)
#
# New inputs go to build-fuzz/corpus/<target>/ (a working copy); the small
# committed seeds in fuzz/corpus/<target>/ are only read. To grow the seeds,
# minimize a working corpus with -merge=1 into fuzz/corpus/<target>/.
#
# Why clang 16: libFuzzer needs clang, and clang 14 (Debian's default) cannot
# compile libstdc++ 12's <expected>; clang 16 can, once __cpp_concepts says
# C++20 (libstdc++ 12 checks for 202002L, clang 16 still reports 201907L
# although it implements what <expected> uses).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
seconds=${1:-10}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(npy npz tensor_proto model weights_in_file run_config tolerance external_data string_tensor npz_directory)
  [ -f src/engine/torch/torch_dump.cc ] && targets+=(torch_manifest)
  [ -f src/engine/baseline/baseline_manifest.cc ] && targets+=(baseline_manifest)
  targets+=(worker_protocol)  # core/worker_protocol.cc: the entry list, every worker's requests and replies
fi
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-2}
runs=${FUZZ_RUNS:--1}
seed=()
[ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")

CLANG=${CLANG:-clang-16}
CLANGXX=${CLANGXX:-clang++-16}
if ! command -v "$CLANGXX" >/dev/null; then
  echo "fuzz: $CLANGXX not found (apt-get install clang-16 libclang-rt-16-dev)" >&2
  exit 2
fi
flags="-U__cpp_concepts -D__cpp_concepts=202002L -Wno-builtin-macro-redefined"
flags+=" -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=$CLANG CXX=$CLANGXX cmake -S . -B "$build" -DPARITY_FUZZ=ON -DPARITY_BUILD_TESTS=OFF \
    -DPARITY_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" >/dev/null
fi
cmake --build "$build" -j "$jobs" --target $(printf '%s_fuzz ' "${targets[@]}") >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; exit 2; }

# Scratch files (readers that take a path) on tmpfs when there is one: the
# tensor_proto round trip fsyncs through AtomicFile on every input.
[ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
command -v llvm-symbolizer >/dev/null && export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer)}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/findings"
status=0
printf '%-14s %12s %10s %8s  %s\n' target executions exec/s corpus findings
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  rm -rf "$build/findings/$t"  # findings of an earlier run are in its log
  mkdir -p "$work" "$build/findings/$t"
  log="$build/findings/$t.log"
  set +e
  # Inputs that once crashed a target (fuzz/crashes/<target>_*) are replayed
  # first: a regression fails the run whatever the fuzzing finds.
  crashes=(fuzz/crashes/"${t}"_*)
  if [ -e "${crashes[0]}" ] && ! "$build/fuzz/${t}_fuzz" "${crashes[@]}" >"$log" 2>&1; then
    cp "${crashes[@]}" "$build/findings/$t/"
    status=1
    printf '%-14s %12s %10s %8s  %s\n' "$t" - - - "a committed crash input fails again (see $log)"
    set -e
    continue
  fi
  "$build/fuzz/${t}_fuzz" "${seed[@]}" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$t/" "$work" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$work" -type f | wc -l)
  found=$(find "$build/findings/$t" -type f | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    printf '%-14s %12s %10s %8s  %s (rc %s; see %s)\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" \
      "$(ls "$build/findings/$t" | tr '\n' ' ')" "$rc" "$log"
  else
    printf '%-14s %12s %10s %8s  none\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus"
  fi
done
exit $status
