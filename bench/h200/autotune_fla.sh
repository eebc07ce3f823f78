#!/usr/bin/env bash
# On a GPU machine (issue 49): flash-linear-attention (fla-core 0.6.0, PyPI) captured live on the
# GPU with Triton's own autotuning log (TRITON_PRINT_AUTOTUNING=1: the reference of what its
# autotuner skips on this device), then checked on the nine default targets twice: as captured
# (autotuned launches judged as launches) and with the `autotune` keys taken out (every config on
# its own, as before; served from the result cache). autotune_reference.py compares them. Wheels:
# the tool's in .device/, fla-core's and einops' in .device/wheels. Each step is time-boxed
# (SIGINT: an interrupted check still writes its report).
set -uo pipefail
repo=$(pwd)
source "$repo/bench/h200/venv.sh"
python3 -m pip install --quiet --no-deps --no-index --target /tmp/flapkgs $repo/.device/wheels/*.whl >> $OUT/pip.log 2>&1
export PYTHONPATH=/tmp/flapkgs
work=$(mktemp -d); cp $repo/bench/h200/fla_ops.py $work/; cd $work
start=$(date +%s)
FLA_OPS_SECONDS=${FLA_OPS_SECONDS:-150} TRITON_PRINT_AUTOTUNING=1 timeout -s INT 240 \
  $bin capture --mode live -o fla.toml -- python3 fla_ops.py > $OUT/capture.log 2>&1
echo "capture exit $?, $(( $(date +%s) - start )) s" >> $OUT/capture.log
cp fla.toml $OUT/
grep -v '^ *autotune *=' fla.toml > fla-before.toml
for run in after before; do
  manifest=$([ $run = after ] && echo fla.toml || echo fla-before.toml)
  start=$(date +%s)
  timeout -s INT ${CHECK_SECONDS:-200} $bin check -m $manifest --python $py -j 16 --json $OUT/$run.json \
    > $OUT/check-$run.txt 2>&1
  echo "check exit $?, $(( $(date +%s) - start )) s" >> $OUT/check-$run.txt
done
python3 $repo/bench/h200/autotune_reference.py $OUT/capture.log fla.toml $OUT/after.json $OUT/before.json \
  > $OUT/summary.md 2>&1
cat $OUT/summary.md
tail -5 $OUT/capture.log $OUT/check-after.txt $OUT/check-before.txt
