#!/usr/bin/env bash
# On a GPU machine (issue 49), cuda:90 against Triton's own autotuner, in one device call:
# 1. bench/h200/autotune_skips.py (configs the autotuner skips for shared memory, threads and a
#    static assertion; one launch with nothing left) captured live under TRITON_PRINT_AUTOTUNING=1,
#    then checked for cuda:90 as captured (launches) and without its `autotune` keys (config by config);
# 2. flash-linear-attention's manifest captured live on a GPU earlier (results/issue49/fla.toml,
#    whose capture.log is the reference) checked the same two ways for cuda:90 where fla imports.
# autotune_reference.py compares each with the log. Wheels as for autotune_fla.sh.
set -uo pipefail
repo=$(pwd)
source "$repo/bench/h200/venv.sh"
python3 -m pip install --quiet --no-deps --no-index --target /tmp/flapkgs $repo/.device/wheels/*.whl >> $OUT/pip.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
work=$(mktemp -d); cp $repo/bench/h200/autotune_skips.py $work/; cd $work

check_both() {  # NAME MANIFEST: check as captured (after) and config by config (before), then compare
  grep -v '^ *autotune *=' $2 > $1-before.toml
  for run in after before; do
    manifest=$([ $run = after ] && echo $2 || echo $1-before.toml)
    start=$(date +%s)
    timeout -s INT ${CHECK_SECONDS:-150} $bin check -m $manifest --python $py -t cuda:90 -j 16 \
      --json $OUT/$1-$run.json > $OUT/$1-check-$run.txt 2>&1
    echo "check exit $?, $(( $(date +%s) - start )) s" >> $OUT/$1-check-$run.txt
  done
}

start=$(date +%s)
TRITON_PRINT_AUTOTUNING=1 timeout -s INT 120 $bin capture --mode live -o skips.toml -- \
  python3 autotune_skips.py > $OUT/skips-capture.log 2>&1
echo "capture exit $?, $(( $(date +%s) - start )) s" >> $OUT/skips-capture.log
cp skips.toml $OUT/
check_both skips skips.toml
python3 $repo/bench/h200/autotune_reference.py $OUT/skips-capture.log skips.toml $OUT/skips-after.json \
  $OUT/skips-before.json > $OUT/skips-summary.md 2>&1

export PYTHONPATH=/tmp/flapkgs
cp $repo/bench/h200/results/issue49/fla.toml fla.toml
check_both fla fla.toml
python3 $repo/bench/h200/autotune_reference.py $repo/bench/h200/results/issue49/capture.log fla.toml \
  $OUT/fla-after.json $OUT/fla-before.json > $OUT/fla-summary.md 2>&1
cat $OUT/gpu.txt $OUT/skips-summary.md $OUT/fla-summary.md
# The device returns at most 8 files: the rest travel in one archive.
(cd $OUT && tar czf details.tar.gz skips.toml skips-capture.log skips-check-*.txt skips-before.json fla-check-*.txt pip.log && rm -f skips-capture.log skips-check-*.txt skips-before.json fla-check-*.txt pip.log skips.toml)
tar xzf $OUT/details.tar.gz -O skips-capture.log | grep -E "^(matmul|scale|shift|negate):|capture exit"
