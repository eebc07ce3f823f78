#!/bin/sh
# The sanitizer build's cost by optimisation level: a fresh clone of HEAD (or of $1) builds
# `make test`'s sanitizer targets (the unit tests and every fuzz harness) cold, once per level
# (CCACHE_DISABLE=1: every unit compiled), then runs their ctest and five seconds of each fuzz
# harness from the committed corpus, as make test does. Prints, per level, wall clock and CPU
# seconds (user + system) of the build and of the ctest, and each harness's executions in its five
# seconds. Why make test's build is -O0 and `make fuzz`'s -O1 (Makefile, SANITIZER_OPT).
#
#   bench/sanitizer_build.sh [REPOSITORY] > bench/results/sanitizer-build.txt
set -eu
repo=${1:-$(git rev-parse --show-toplevel)}
work=$(mktemp -d /tmp/portcheck-sanitizer-build-XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
harnesses=$(sed -n 's/^FUZZ_HARNESSES *:= *//p' Makefile)
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "level  build wall s  build CPU s  ctest wall s  ctest CPU s  fuzz runs in 5 s ($harnesses)"
for level in -O0 -O1; do
  dir="b$level"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$level" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_UNITY_BUILD=ON -DPORTCHECK_FUZZ=ON >/dev/null
  targets="unit_tests"
  for h in $harnesses; do targets="$targets fuzz_$h"; done
  # shellcheck disable=SC2086 # one word per target
  CCACHE_DISABLE=1 /usr/bin/time -o "$work/build$level" -f "%e %U %S" \
    cmake --build "$dir" -j "$(nproc)" --target $targets >/dev/null
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    /usr/bin/time -o "$work/ctest$level" -f "%e %U %S" ctest --test-dir "$dir" -j "$(nproc)" >/dev/null
  runs=""
  for h in $harnesses; do
    mkdir -p "$work/scratch$level/$h"
    n=$(ASAN_OPTIONS=detect_leaks=0 "$dir/fuzz/fuzz_$h" -timeout=20 -max_total_time=5 \
      "$work/scratch$level/$h" "fuzz/corpus/$h" 2>&1 | sed -n 's/^Done \([0-9]*\) runs.*/\1/p')
    runs="$runs $n"
  done
  awk -v level="$level" -v runs="$runs" 'NR == 1 { bw = $1; bc = $2 + $3 } NR == 2 { tw = $1; tc = $2 + $3 }
    END { printf "%-6s %12.0f %12.0f %13.1f %12.1f %s\n", level, bw, bc, tw, tc, runs }' \
    "$work/build$level" "$work/ctest$level"
done
