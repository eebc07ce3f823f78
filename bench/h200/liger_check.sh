#!/usr/bin/env bash
# On the H200 machine: a real library of Triton kernels for LLM training (Liger-Kernel 0.8.5, its
# PyPI sdist carried in .device/, tests included), whose modules import torch and transformers.
# A few of its test files are captured live, then the captured rows are checked at 16 jobs on
# cuda:90 and hip:gfx942 with fork and with process isolation, each interrupted after LIMIT
# seconds (120) so that what finished in the same time can be compared.
#
# Writes to $OUT: liger-capture.log, liger.toml, liger-{fork,process}.json and .txt.
set -uo pipefail
repo=$(pwd)
source bench/h200/venv.sh
tar xzf $repo/.device/liger_kernel-*.tar.gz -C /tmp
src=$(echo /tmp/liger_kernel-*/)
cd $src
export PYTHONPATH=$src/src
tests=${TESTS:-"test/transformers/test_geglu.py test/transformers/test_layer_norm.py test/transformers/test_softmax.py test/transformers/test_rope.py"}
start=$(date +%s%N)
timeout -s INT 240 $bin capture --mode live -o $OUT/liger.toml -- python3 -m pytest $tests -q -p no:cacheprovider \
  > $OUT/liger-capture.log 2>&1
echo "capture exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/liger-capture.log
for iso in fork process; do
  start=$(date +%s%N)
  timeout -s INT ${LIMIT:-120} $bin check -m $OUT/liger.toml --python $py -j 16 --no-cache --isolation $iso \
    -t cuda:90,hip:gfx942 --json $OUT/liger-$iso.json > $OUT/liger-$iso.txt 2>&1
  echo "check exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/liger-$iso.txt
done
$py - $OUT <<'PY'
import json, statistics, sys
for iso in ("fork", "process"):
    try:
        d = json.load(open(f"{sys.argv[1]}/liger-{iso}.json"))
    except (OSError, ValueError) as e:
        print(iso, "no report:", e)
        continue
    c = d["cells"]
    s = sum(x["compile_s"] for x in c)
    out = [x["wall_s"] - x["compile_s"] - x.get("waited_s", 0) for x in c]
    print(f"{iso}: {'INTERRUPTED ' if d.get('interrupted') else ''}{len(c)} cells of {len(d['rows']) * 2} in "
          f"{d['wall_s']:.1f} s; sum of compile times {s:.1f} s; utilisation {s / (d['wall_s'] * 16):.0%}; "
          f"median outside compile {statistics.median(out) * 1000 if out else 0:.0f} ms; "
          f"resources {d['environment']['resources']}")
PY
tail -n 5 $OUT/liger-capture.log
