#!/usr/bin/env bash
# torch.compile's Triton kernels, captured live and checked for every target (issue 16, item 3).
# Runs bench/h200/inductor_workloads.py under `capture --mode live` with a fresh Inductor cache,
# compares what Inductor wrote with the captured rows, then checks the rows on the nine default
# targets. Run from the repository root on a machine with an NVIDIA GPU:
#   OUT=results-dir [PORTCHECK_BIN=...] [PYTHON=python3] bench/h200/inductor_live.sh
set -uo pipefail
repo=$(pwd)
out=${OUT:?set OUT to a folder for the results}
bin=${PORTCHECK_BIN:-$repo/build/triton-portcheck}
py=${PYTHON:-python3}
mkdir -p "$out"
work=$(mktemp -d)
export TORCHINDUCTOR_CACHE_DIR=$work/inductor-cache TRITON_CACHE_DIR=$work/triton-cache
cd "$work"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$py" -c 'import os, sys, triton, torch; print("python", sys.version.split()[0], "triton", triton.__version__, "torch", torch.__version__, "cores", os.cpu_count())'
} > "$out/machine.txt" 2>&1
start=$(date +%s%N)
"$bin" capture --mode live -o inductor.toml -- "$py" "$repo/bench/h200/inductor_workloads.py" \
  > "$out/capture.log" 2>&1
echo "exit status $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/capture.log"
cp -r inductor.toml portcheck-generated "$out/" 2>/dev/null
"$py" "$repo/bench/h200/inductor_kernels.py" "$TORCHINDUCTOR_CACHE_DIR" inductor.toml > "$out/kernels.md" 2>&1
echo "compare exit status $?" >> "$out/kernels.md"
start=$(date +%s%N)
"$bin" check -m inductor.toml --python "$py" --no-cache --json "$out/check.json" > "$out/check.txt" 2>&1
echo "check exit status $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/check.txt"
