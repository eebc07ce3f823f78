#!/usr/bin/env bash
# On the H200 machine (16 cores, its Triton 3.6.0): the library-sized case of bench/run at full
# width. flag_gems' rows captured live on that machine (bench/h200/results/flag_gems/fg-live.toml)
# and the demo kernels repeated (bench/static_scale.py) up to ROWS (2,000) rows, on TARGETS
# (default cuda:90,hip:gfx942; all nine did not finish in a 10-minute command), -j 16, no cache,
# interrupted after LIMIT seconds (480) so that what finished is still reported. The tool and
# libfmt in .device, flag_gems' wheels in .device/wheels. Writes the terminal report, its
# --expand form, the JSON (gzipped) and the timing to $OUT.
set -uo pipefail
repo=$(pwd)
export LD_LIBRARY_PATH=$repo/.device TRITON_PORTCHECK_SHARE=$repo TRITON_PORTCHECK_HOME=/tmp/pchome
bin=$repo/.device/triton-portcheck
python3 -m pip install --quiet --no-deps --no-index --target /tmp/fgpkgs \
  $repo/.device/wheels/flag_gems-*.whl $repo/.device/wheels/pyyaml-*.whl $repo/.device/wheels/sqlalchemy-*.whl \
  > $OUT/pip.log 2>&1
work=$(mktemp -d)
cp demo/kernels.py $work/
python3 - "$work" "${ROWS:-2000}" <<'PY'
import pathlib, re, sys
sys.path.insert(0, "bench")
import static_scale
work, rows = pathlib.Path(sys.argv[1]), int(sys.argv[2])
captured = pathlib.Path("bench/h200/results/flag_gems/fg-live.toml").read_text()
# Its [defaults] (the pythonpath it was captured with) joins the demo's.
defaults, kernels = re.split(r"(?m)^(?=\[\[kernel\]\])", captured, maxsplit=1)
pythonpath = re.search(r"(?m)^pythonpath\s*=.*$", defaults).group(0)
captured_rows = kernels.count("[[kernel]]") + kernels.count("[[kernel.variant]]")
demo = static_scale.manifest(max(rows - captured_rows, 0)).replace("[defaults]\n", "[defaults]\n" + pythonpath + "\n", 1)
(work / "large.toml").write_text(demo + "\n" + kernels)
PY
cd $work
start=$(date +%s%N)
timeout -s INT ${LIMIT:-480} $bin check --manifest large.toml --python python3 -j 16 --no-cache \
  -t ${TARGETS:-cuda:90,hip:gfx942} --json large.json > $OUT/large-check.txt 2> $OUT/large-check.stderr
echo "check exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/large-check.txt
$bin report large.json --expand > $OUT/large-expanded.txt 2>&1
gzip -c large.json > $OUT/large.json.gz
python3 - <<'PY' > $OUT/large-summary.txt
import json
d = json.load(open("large.json")); c = d["cells"]
s = sum(x["compile_s"] for x in c); m = max(x["compile_s"] for x in c)
floor = max(s / 16, m)
print(f"{'INTERRUPTED: ' if d.get('interrupted') else ''}{len(d['rows'])} rows, {len(c)} cells; wall {d['wall_s']:.1f} s; sum of compile times {s:.1f} s; "
      f"longest cell {m:.1f} s; floor {floor:.1f} s; wall/floor {d['wall_s'] / floor:.2f}; "
      f"static pre-checks {d['environment']['static']['seconds']:.2f} s")
PY
