#!/usr/bin/env bash
# On a GPU machine: flag_gems 5.0.2 (PyPI wheel, no tests inside) captured live from its own
# tests (the tests/ folder of github.com/flagos-ai/FlagGems, passed as FLAGGEMS_TESTS), then every
# captured row checked for the nine default targets. Wheels for flag_gems and its dependencies
# in .device/wheels, the tool in .device (docs/capture.md has the results). The tests folder
# must be named tests/.
set -uo pipefail
repo=$(pwd)
export LD_LIBRARY_PATH=$repo/.device TRITON_PORTCHECK_SHARE=$repo TRITON_PORTCHECK_HOME=/tmp/pchome
bin=$repo/.device/triton-portcheck
python3 -m pip install --quiet --no-deps --no-index --target /tmp/fgpkgs $repo/.device/wheels/*.whl > $OUT/pip.log 2>&1
export PYTHONPATH=/tmp/fgpkgs
python3 -c "import flag_gems, triton, torch; print('flag_gems', flag_gems.__version__, 'triton', triton.__version__, 'torch', torch.__version__)" > $OUT/versions.txt 2>&1
work=$(mktemp -d); cp -r ${FLAGGEMS_TESTS:?set FLAGGEMS_TESTS to FlagGems tests/ folder} $work/; cd $work
start=$(date +%s%N)
$bin capture --mode live -o fg-live.toml -- python3 -m pytest tests --quick -q -W ignore -k "not large_innerdim and not shape_a2" -p no:cacheprovider > $OUT/capture-live.log 2>&1
echo "capture exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/capture-live.log
cp fg-live.toml $OUT/
start=$(date +%s%N)
$bin check -m fg-live.toml --python python3 -j 16 --json $OUT/fg-check.json > $OUT/fg-check.txt 2>&1
echo "check exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> $OUT/fg-check.txt
