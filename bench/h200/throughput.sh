#!/usr/bin/env bash
# On the H200 machine (16 cores, its Triton 3.6.0, torch 2.11, transformers): issue 43's
# throughput figures, this tree's wheel (.device/triton_portcheck-*.whl) against the one before it
# (.device/old/triton_portcheck-*.whl), each in a venv that sees the machine's packages, 16 jobs,
# no cache, the nine default targets.
#
#   PHASE=liger   Liger-Kernel 0.8.5 (its sdist in .device/, tests included): the rows captured
#                 live from four of its test files (bench/h200/results/liger/liger.toml), checked
#                 by both, by this one with --reduce, and a sample (--shard 1/16) with
#                 --isolation process.
#   PHASE=heavy   bench/heavy_case.py's generated library (25 modules x 40 rows, its import torch +
#                 transformers + CPU to 3 s), and flag_gems 5.0.2 (.device/wheels) with the rows
#                 captured live from its tests (bench/h200/results/flag_gems/fg-live.toml), by
#                 both; the flag_gems sample with --isolation process. With WARM=1 (the default)
#                 each also with the result cache, cold and then warm (both import the driver-
#                 asking library: a warm rerun compiles nothing since issue 50). ONLY=fg or
#                 ONLY=heavy runs one of the two (one device command is at most 10 minutes).
# SAMPLE=0 leaves out the --isolation process samples (new = old on every cell is then the check).
#
# Writes to $OUT the JSON reports (gzipped), summary.json (bench/h200/throughput_summary.py) and
# runs.txt (each run's time and the end of its terminal output).
set -uo pipefail
repo=$(pwd)
source bench/h200/venv.sh
# Without the wheel before (.device/old/), the runs of this one only: its verdicts are compared
# with --isolation process's on the sample, and the old figures are an earlier session's.
old=
if ls $repo/.device/old/triton_portcheck-*.whl > /dev/null 2>&1; then
  python3 -m venv --system-site-packages /tmp/oldvenv >> $OUT/pip.log 2>&1
  cp $(/tmp/pcvenv/bin/python -c "import site; print(site.getsitepackages()[0])")/machine-packages.pth \
    $(/tmp/oldvenv/bin/python -c "import site; print(site.getsitepackages()[0])")/
  /tmp/oldvenv/bin/pip install --no-index --no-deps $repo/.device/old/triton_portcheck-*.whl >> $OUT/pip.log 2>&1 || exit 1
  old=/tmp/oldvenv/bin/triton-portcheck
fi
# Reports go straight to $OUT: what a run interrupted by the machine's loss had written comes back.
work=$OUT/reports
mkdir -p $work
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

check() {  # check NAME BINARY MANIFEST [flags...]: a cold run, its report in $work/NAME.json
  local name=$1 binary=$2 manifest=$3; shift 3
  rm -rf /tmp/pchome-$name
  local start=$(date +%s%N)
  TRITON_PORTCHECK_HOME=/tmp/pchome-$name timeout -s INT ${LIMIT:-280} $binary check -m $manifest --python $py \
    -j 16 --no-cache --json $work/$name.json "$@" > $work/$name.txt 2>&1
  echo "$name: exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/runs.txt
}

cached() {  # cached NAME MANIFEST [flags...]: a run with the result cache, cold then warm (issue 50)
  local name=$1 manifest=$2; shift 2
  rm -rf /tmp/pchome-$name
  for run in cold warm; do
    local start=$(date +%s%N)
    TRITON_PORTCHECK_HOME=/tmp/pchome-$name timeout -s INT ${LIMIT:-280} $bin check -m $manifest --python $py \
      -j 16 --json $work/$name-$run.json "$@" > $work/$name-$run.txt 2>&1
    echo "$name-$run: exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms, $(grep -o '[0-9,]* cells ([0-9,]* from cache)' $work/$name-$run.txt)" >> $OUT/runs.txt
  done
}

# The first run of a fresh machine reads torch, transformers and the library from disk (torch's
# import: 17 s cold, 12 s warm, measured with bench/fork_cost.py): each library is imported once
# before any timed run, so that neither wheel pays for the disk.
warm_page_cache() {  # warm_page_cache MODULE...
  $py -c "import sys, importlib, torch, triton
try:
    import transformers.models.llama.modeling_llama
except ImportError:
    pass
for name in sys.argv[1:]:
    importlib.import_module(name)" "$@" > /dev/null 2>&1
  echo "page cache warmed: $* ($?)" >> $OUT/runs.txt
}

if [ "${PHASE:-liger}" = liger ]; then
  tar xzf $repo/.device/liger_kernel-*.tar.gz -C /tmp
  m=$repo/bench/h200/results/liger/liger.toml
  (cd /tmp/liger_kernel-*/ && PYTHONPATH=src warm_page_cache liger_kernel.ops)
  check liger-new $bin $m
  names="new=$work/liger-new.json" pairs=
  # The wheel before issue 43 is the same from one session to the next: its report from an
  # earlier session on this machine (.device/old/liger-old.json.gz) stands in, unless OLD=1.
  if [ -f $repo/.device/old/liger-old.json.gz ] && [ "${OLD:-0}" != 1 ]; then
    gunzip -c $repo/.device/old/liger-old.json.gz > $work/liger-old.json; echo "liger-old: earlier report" >> $OUT/runs.txt
  elif [ -n "$old" ]; then check liger-old $old $m; fi
  [ -f $work/liger-old.json ] && { names="$names old=$work/liger-old.json"; pairs="$pairs --same new,old"; }
  [ "${SAMPLE:-1}" = 1 ] && check liger-process $bin $m --shard 1/16 --isolation process
  [ -f $work/liger-process.json ] && { names="$names process=$work/liger-process.json"; pairs="$pairs --same new,process"; }
  if [ "${REDUCE:-1}" = 1 ]; then
    check liger-reduce $bin $m --reduce
    names="$names reduce=$work/liger-reduce.json"; pairs="$pairs --reduced new,reduce"
  fi
else
  python3 -m pip install --quiet --no-deps --no-index --target /tmp/fgpkgs $repo/.device/wheels/*.whl >> $OUT/pip.log 2>&1
  export PYTHONPATH=/tmp/fgpkgs
  m=$repo/bench/h200/results/flag_gems/fg-live.toml
  names= pairs=
  add() {  # add NAME [OTHER]: a report to summarise, the same verdicts as OTHER's
    [ -f $work/$1.json ] && names="$names $1=$work/$1.json"
    [ -n "${2:-}" ] && [ -f $work/$1.json ] && [ -f $work/$2.json ] && pairs="$pairs --same $1,$2"
  }
  if [ "${ONLY:-fg}" = fg ]; then
    warm_page_cache flag_gems
    check fg-new $bin $m
    [ -n "$old" ] && check fg-old $old $m
    [ "${SAMPLE:-1}" = 1 ] && check fg-process $bin $m --shard 1/16 --isolation process
    [ "${WARM:-1}" = 1 ] && cached fg-cache $m
    add fg-new; add fg-old fg-new; add fg-process fg-new
  fi
  unset PYTHONPATH
  if [ "${ONLY:-heavy}" = heavy ]; then
    python3 bench/heavy_library.py /tmp/heavy --modules 25 --rows 40 > /dev/null
    export PYTHONPATH=/tmp/heavy/deps
    (cd /tmp/heavy/lib && warm_page_cache heavylib)
    check heavy-new $bin /tmp/heavy/lib/heavy.toml -t cuda:90,hip:gfx942
    [ -n "$old" ] && check heavy-old $old /tmp/heavy/lib/heavy.toml -t cuda:90,hip:gfx942
    [ "${SAMPLE:-1}" = 1 ] && check heavy-process $bin /tmp/heavy/lib/heavy.toml -t cuda:90,hip:gfx942 --shard 1/16 --isolation process
    [ "${WARM:-1}" = 1 ] && cached heavy-cache /tmp/heavy/lib/heavy.toml -t cuda:90,hip:gfx942
    unset PYTHONPATH
    add heavy-new; add heavy-old heavy-new; add heavy-process heavy-new
  fi
fi
$py bench/h200/throughput_summary.py --jobs 16 $names $pairs > $OUT/summary.json 2>> $OUT/runs.txt
gzip $work/*.json
tail -n 3 $work/*.txt >> $OUT/runs.txt 2>&1
# The device returns at most 8 files: the reports travel as one archive.
tar cf $OUT/reports.tar -C $work . && rm -rf $work
cat $OUT/runs.txt
$py - $OUT/summary.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for name, f in d.items():
    if isinstance(f, dict) and "wall_s" in f:
        print(name, {k: f[k] for k in ("cells", "compiled", "wall_s", "floor_s", "wall_over_floor", "inside_compile",
                                       "inside_compile_first_minute", "first_compile_at_s", "outside_compile_median_ms",
                                       "batches", "cells_left_by_batches", "cells_returned_by_batches")}, "ttir", f["ttir"]["cells_sharing_their_ttir"],
              "shared", f["ttir"]["shared_in_this_run"])
    else:
        print(name, json.dumps(f)[:400])
PY
