#!/usr/bin/env bash
# What capture adds to a test run: the sample package's suite under Triton's interpreter alone,
# then captured in interpret and in record mode, RUNS times each (wall seconds).
#   bench/capture_overhead.sh [RUNS]      (after `make test-venv build`)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
py=$repo/.venv/bin/python
bin=$repo/build/triton-portcheck
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/tests/fixtures/sample_pkg" "$work/"
cd "$work/sample_pkg"
seconds() { local start end; start=$(date +%s%N); "$@" > /dev/null 2>&1 || true; end=$(date +%s%N); echo "scale=2; ($end - $start) / 1000000000" | bc; }
for i in $(seq "$runs"); do
  echo "run $i: pytest under TRITON_INTERPRET=1 $(seconds env TRITON_INTERPRET=1 "$py" -m pytest -q -p no:cacheprovider) s," \
       "capture interpret $(seconds "$bin" capture -q --force -- "$py" -m pytest -q -p no:cacheprovider) s," \
       "capture record $(seconds "$bin" capture -q --force --mode record -- "$py" -m pytest -q -p no:cacheprovider) s"
done
