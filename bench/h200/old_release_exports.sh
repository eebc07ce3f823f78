#!/bin/sh
# On the H200: the export example (examples/export) built and run against kernels exported here
# by each Triton release, so that the parameter list each release's binary really has (no scratch
# pointer before 3.3, global_scratch in 3.3 and 3.4, profile_scratch too from 3.5) is proved by a
# launch that computes the right result, not only by counting .param lines.
#
# Here (no GPU): export each release into bench/h200/old-exports/<version> (the environments from
#   `env add`, e.g. TRITON_PORTCHECK_HOME=/tmp/matrix-home):
#     for v in 3.0.0 3.2.0 3.3.1 3.4.0; do build/triton-portcheck export \
#       --manifest examples/export/portcheck.toml -t cuda:90 -o bench/h200/old-exports/$v \
#       --python $TRITON_PORTCHECK_HOME/envs/$v/bin/python; done
# There: bench/h200/old_release_exports.sh (writes $OUT/old-release-exports.txt)
set -u
out=${OUT:-/tmp}/old-release-exports.txt
: >"$out"
status=0
for dir in bench/h200/old-exports/*/; do
  version=$(basename "$dir")
  build=/tmp/export-example-$version
  {
    echo "== exported by Triton $version: $(grep -h 'num_params' "$dir"axpy/cuda_90/launcher.h | sed 's/^ *//')"
    cmake -S examples/export -B "$build" -DEXPORT_DIR="$PWD/$dir" >/dev/null &&
      cmake --build "$build" >/dev/null &&
      "$build/export_example"
  } >>"$out" 2>&1 || { echo "FAILED: Triton $version" >>"$out"; status=1; }
done
cat "$out"
exit $status
