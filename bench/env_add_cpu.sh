#!/bin/sh
# What `env add VERSION` costs: wall clock and CPU seconds (user + system of the tool and everything
# it ran: the venv, pip's download and install, the import check), into a new home each time, the
# wheel from pip's cache after the first (so the network is not what is timed). Median of three.
# BIN: the tool to time (default build/triton-portcheck; an older commit's build to compare).
#
#   [BIN=...] bench/env_add_cpu.sh [VERSION] [PYTHON] >> bench/results/env-add-cpu.txt
set -eu
root=$(git rev-parse --show-toplevel)
version=${1:-3.1.0}
python=${2:-$root/.venv/bin/python}
bin=${BIN:-$root/build/triton-portcheck}
work=$(mktemp -d /tmp/portcheck-env-add-XXXXXX)
trap 'rm -rf "$work"' EXIT
TRITON_PORTCHECK_HOME="$work/warm" "$bin" env add "$version" --python "$python" >/dev/null
for i in 1 2 3; do
  TRITON_PORTCHECK_HOME="$work/home$i" /usr/bin/time -o "$work/time$i" -f "%e %U %S" \
    "$bin" env add "$version" --python "$python" >/dev/null
done
commit=$(git -C "$(dirname "$bin")/.." rev-parse --short HEAD 2>/dev/null || echo "?")
wall=$(cat "$work"/time1 "$work"/time2 "$work"/time3 | awk '{ print $1 }' | sort -n | sed -n 2p)
cpu=$(cat "$work"/time1 "$work"/time2 "$work"/time3 | awk '{ print $2 + $3 }' | sort -n | sed -n 2p)
echo "env add $version, tool of $commit: median wall $wall s, median CPU $cpu s (of 3)"
