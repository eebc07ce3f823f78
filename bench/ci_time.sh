#!/bin/sh
# CI's time, phase by phase: a fresh clone of the repository's HEAD (or of $1) runs the steps of
# `make test` in its order, each timed (wall clock, and the CPU seconds of everything it ran: on
# two cores a step takes at least half of those), then the total. What CI measures is `make test`
# itself; this splits the same steps so that the slow one shows. The integration step also records
# each test's worker, span and CPU (bench/ci_timeline.py): the workers' balance and each group's
# cost follow pytest's slowest tests. CI_TIME_LOGS=DIR keeps the steps' logs and that record.
#
#   bench/ci_time.sh [REPOSITORY] > bench/results/ci-time.txt
set -eu
repo=${1:-$(git rev-parse --show-toplevel)}
work=$(mktemp -d /tmp/portcheck-ci-time-XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# cpu=CPU seconds (user + system) of the shell's finished children so far: `times`' second line
# (`times` in the shell itself: a subshell's children are not the shell's).
children_cpu() {
  times >"$work/times"
  cpu=$(sed -n 2p "$work/times" | awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } print int(n) }')
}
export PORTCHECK_CI_TIMELINE="$work/timeline.jsonl"
start=$(date +%s)
printf '%-30s %6s %6s\n' "step" "wall s" "CPU s"
for step in "deps venv test-venv" tool unit-asan fuzz-smoke integration; do
  t0=$(date +%s); children_cpu; c0=$cpu
  # shellcheck disable=SC2086  # the step names are words
  make $step >"$work/$(echo "$step" | tr ' ' _).log" 2>&1 || {
    echo "make $step failed:"; tail -40 "$work/$(echo "$step" | tr ' ' _).log"; exit 1; }
  children_cpu
  printf '%-30s %6d %6d\n' "make $step" $(($(date +%s) - t0)) $((cpu - c0))
done
children_cpu
printf '%-30s %6d %6d\n' "total" $(($(date +%s) - start)) "$cpu"
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E "passed|failed" "$work/integration.log" | tail -1
# Where the integration step's time went (pytest's slowest tests), before the log goes.
sed -n '/slowest .* durations/,/^(.*durations < /p' "$work/integration.log"
echo
echo "integration step by worker and group (bench/ci_timeline.py):"
.venv/bin/python bench/ci_timeline.py "$work/timeline.jsonl"
if [ -n "${CI_TIME_LOGS:-}" ]; then
  mkdir -p "$CI_TIME_LOGS" && cp "$work"/*.log "$work/timeline.jsonl" "$CI_TIME_LOGS"/
fi
