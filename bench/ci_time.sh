#!/bin/sh
# CI's time: a fresh clone of the repository's HEAD (or of $1) runs `make test` as CI does
# (.ci/run), timed: wall clock and CPU seconds (user + system of everything it ran: on two cores
# it takes at least half of those) of the whole, then of each step. make runs every recipe line
# through bench/ci_step_shell.sh, which records its span and CPU; bench/ci_steps.py names the steps
# (they overlap: `make test` runs the sanitizer build beside the rest) and, from /proc/stat
# samples, says how many core-seconds the machine left idle during each and how many other users
# took during the run: on a shared machine the wall clock counts their load too, CPU seconds do
# not. Then ccache's hits (the tool is compiled once, pip's two builds of it in the tests hit),
# pytest's slowest tests, and the integration step by worker and group (bench/ci_timeline.py).
# CI_TIME_LOGS=DIR keeps the log and the records. CI_TIME_AFTER_DEMO=1 runs `make demo` in the
# clone first, untimed, as a developer has before their first `make test`: then only what
# `make test` adds is timed (the test packages, the sanitizer build, the tests).
#
#   bench/ci_time.sh [REPOSITORY] > bench/results/ci-time.txt
#   CI_TIME_AFTER_DEMO=1 bench/ci_time.sh > bench/results/ci-time-after-demo.txt
set -eu
repo=${1:-$(git rev-parse --show-toplevel)}
bench=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/portcheck-ci-time-XXXXXX)
sampler=
trap '[ -z "$sampler" ] || kill "$sampler"; rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
if [ -n "${CI_TIME_AFTER_DEMO:-}" ]; then
  make demo >"$work/demo.log" 2>&1 || { echo "make demo failed:"; tail -60 "$work/demo.log"; exit 1; }
  echo "after make demo (untimed)"
fi
# CPU seconds (user + system) of the shell's finished children so far, from `times`' second line
# in FILE: `times` runs in the shell itself (a subshell's children are not the shell's).
children_cpu() {
  sed -n 2p "$1" | awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } print int(n) }'
}
times >"$work/times-before"
cpu_before=$(children_cpu "$work/times-before")
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# The machine's busy and idle jiffies every 5 s (/proc/stat's first line: user nice system idle
# iowait irq softirq steal).
while :; do
  awk -v t="$(date +%s.%N)" '/^cpu / { print t, $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat
  sleep 5
done >"$work/procstat" &
sampler=$!
export PORTCHECK_CI_TIMELINE="$work/timeline.jsonl" CI_TIME_STEPS="$work/steps"
start=$(date +%s)
make test SHELL="$bench/ci_step_shell.sh" >"$work/test.log" 2>&1 || {
  echo "make test failed:"; tail -60 "$work/test.log"; exit 1; }
wall=$(($(date +%s) - start))
sleep 6  # a sample after the end
times >"$work/times"
cpu=$(($(children_cpu "$work/times") - cpu_before))
echo "make test: $wall s wall, $cpu s CPU; load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 "$bench/ci_steps.py" "$work/steps" "$work/procstat" "$cpu"
echo
echo "ccache (.ccache of the clone):"
CCACHE_DIR="$work/clone/.ccache" ccache -s | sed -n '/Cacheable/,/Misses/p'
echo
grep -E "passed|failed" "$work/test.log" | tail -1
# Where the integration step's time went (pytest's slowest tests), before the log goes.
sed -n '/slowest .* durations/,/^(.*durations < /p' "$work/test.log"
echo
echo "integration step by worker and group (bench/ci_timeline.py):"
.venv/bin/python bench/ci_timeline.py "$work/timeline.jsonl"
if [ -n "${CI_TIME_LOGS:-}" ]; then
  mkdir -p "$CI_TIME_LOGS" && cp "$work/test.log" "$work/steps" "$work/procstat" "$work/timeline.jsonl" "$CI_TIME_LOGS"/
fi
