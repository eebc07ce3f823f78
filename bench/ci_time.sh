#!/bin/sh
# CI's time, phase by phase: a fresh clone of the repository's HEAD (or of $1) runs the steps of
# `make test` in its order, each timed, then the total. What CI measures is `make test` itself;
# this splits the same steps so that the slow one shows.
#
#   bench/ci_time.sh [REPOSITORY] > bench/results/ci-time.txt
set -eu
repo=${1:-$(git rev-parse --show-toplevel)}
work=$(mktemp -d /tmp/portcheck-ci-time-XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
start=$(date +%s)
for step in "deps venv test-venv" tool unit-asan fuzz-smoke integration; do
  t0=$(date +%s)
  # shellcheck disable=SC2086  # the step names are words
  make $step >"$work/$(echo "$step" | tr ' ' _).log" 2>&1 || {
    echo "make $step failed:"; tail -40 "$work/$(echo "$step" | tr ' ' _).log"; exit 1; }
  printf '%-22s %5d s\n' "make $step" $(($(date +%s) - t0))
done
printf '%-22s %5d s\n' "total" $(($(date +%s) - start))
grep -E "passed|failed" "$work/integration.log" | tail -1
# Where the integration step's time went (pytest's slowest tests), before the log goes.
sed -n '/slowest .* durations/,/^(.*durations < /p' "$work/integration.log"
