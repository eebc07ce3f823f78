#!/usr/bin/env bash
# Captures tests/fixtures/sample_pkg's own pytest suite in live, interpret and record mode with
# this machine's Triton and torch, compares the rows, and checks the live rows for cuda:90.
# Run from the repository root on a machine with an NVIDIA GPU:
#   OUT=results-dir [PORTCHECK_BIN=...] [PYTHON=python3] bench/h200/capture_modes.sh
set -uo pipefail
repo=$(pwd)
out=${OUT:?set OUT to a folder for the results}
bin=${PORTCHECK_BIN:-$repo/build/triton-portcheck}
py=${PYTHON:-python3}
mkdir -p "$out"
work=$(mktemp -d)
cp -r tests/fixtures/sample_pkg "$work/"
cd "$work/sample_pkg"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$py" -c 'import sys, triton, torch; print("python", sys.version.split()[0], "triton", triton.__version__, "torch", torch.__version__, "cuda available", torch.cuda.is_available())'
} > "$out/machine.txt" 2>&1
for mode in live interpret record; do
  start=$(date +%s%N)
  "$bin" capture --mode "$mode" -o "$mode.toml" -- "$py" -m pytest -q -p no:cacheprovider \
    > "$out/capture-$mode.log" 2>&1
  status=$?
  end=$(date +%s%N)
  echo "exit status $status, $(( (end - start) / 1000000 )) ms" >> "$out/capture-$mode.log"
  cp "$mode.toml" "$out/" 2>/dev/null
done
"$py" "$repo/bench/h200/compare_capture.py" live.toml interpret.toml record.toml \
  > "$out/comparison.md" 2>&1
echo "compare exit status $?" >> "$out/comparison.md"
"$bin" check -m live.toml --python "$py" --targets cuda:90 --no-cache \
  --json "$out/check-live.json" > "$out/check-live.txt" 2>&1
echo "check exit status $?" >> "$out/check-live.txt"
