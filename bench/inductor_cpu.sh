#!/usr/bin/env bash
# torch.compile's kernels on a machine without a GPU (issue 16, item 3): captures
# tests/fixtures/inductor/compile_model.py (the workloads of bench/h200/inductor_workloads.py)
# with `capture --mode record --fake-gpu` as cuda:90 and as hip:gfx942, compares what Inductor
# wrote into its cache with the rows, and checks the rows on TARGETS.
#   OUT=results-dir [TARGETS=cuda:80,...] [PORTCHECK_BIN=...] [PYTHON=.venv/bin/python] bench/inductor_cpu.sh
set -uo pipefail
repo=$(pwd)
out=${OUT:?set OUT to a folder for the results}
bin=${PORTCHECK_BIN:-$repo/build/triton-portcheck}
py=${PYTHON:-$repo/.venv/bin/python}
targets=${TARGETS:-cuda:80,cuda:90,cuda:120,hip:gfx942,hip:gfx950}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TORCHINDUCTOR_CACHE_DIR=$work/inductor-cache TRITON_CACHE_DIR=$work/triton-cache
cp tests/fixtures/inductor/compile_model.py "$work/"
cd "$work"
"$py" -c 'import os, sys, triton, torch; print("python", sys.version.split()[0], "triton", triton.__version__, "torch", torch.__version__, "cores", os.cpu_count())' > "$out/machine.txt" 2>&1
start=$(date +%s%N)
"$bin" capture --mode record --fake-gpu --as cuda:90,hip:gfx942 -o inductor.toml -- "$py" compile_model.py \
  > "$out/capture.log" 2>&1
echo "exit status $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/capture.log"
cp inductor.toml "$out/"
"$py" "$repo/bench/h200/inductor_kernels.py" "$TORCHINDUCTOR_CACHE_DIR" inductor.toml > "$out/kernels.md" 2>&1
echo "compare exit status $?" >> "$out/kernels.md"
start=$(date +%s%N)
"$bin" check -m inductor.toml --python "$py" -t "$targets" --no-cache --json "$out/check.json" \
  > "$out/check.txt" 2>&1
echo "check exit status $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/check.txt"
