#!/usr/bin/env bash
# On the GPU machine (issue 51): the seed's user script, unedited (tensors made on "cuda", a
# launch and a print at module level), goes capture (live, on the GPU) -> check -> export, and the
# exported kernel is launched from plain C++ on the GPU and its result compared with x + y.
# Writes to $OUT: seed.txt (every command's output and exit status), portcheck.toml, r.json.
set -uo pipefail
repo=$(pwd)
source bench/h200/venv.sh
work=/tmp/seed && rm -rf $work && mkdir -p $work && cd $work
cp $repo/tests/fixtures/seed/add.py .  # the script as its user wrote it
cat > use.cpp <<'CPP'
// Launches the exported add_kernel on the GPU and compares out with x + y.
#include <cmath>
#include <cstdio>
#include <vector>

#include "launcher.h"

int main() {
  using portcheck_export::cuda_driver;
  const auto& d = cuda_driver();
  if (d.status != CUDA_SUCCESS) { std::fprintf(stderr, "no CUDA driver\n"); return 2; }
  CUdevice device; CUcontext context;
  if (d.cuDeviceGet(&device, 0) || d.cuDevicePrimaryCtxRetain(&context, device) || d.cuCtxSetCurrent(context)) return 2;
  const int n = 98432;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) { x[i] = 0.5f * i; y[i] = 1.0f - i; }
  CUdeviceptr dx, dy, dout;
  if (d.cuMemAlloc(&dx, n * 4) || d.cuMemAlloc(&dy, n * 4) || d.cuMemAlloc(&dout, n * 4)) return 2;
  d.cuMemcpyHtoD(dx, x.data(), n * 4); d.cuMemcpyHtoD(dy, y.data(), n * 4);
  portcheck_export::add_kernel_cuda_90 kernel;
  const CUresult launched = kernel.launch(nullptr, (n + 1023) / 1024, 1, 1, dx, dy, dout, n);
  if (launched != CUDA_SUCCESS || d.cuCtxSynchronize()) { std::fprintf(stderr, "launch: %d\n", launched); return 2; }
  d.cuMemcpyDtoH(out.data(), dout, n * 4);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += std::fabs(out[i] - (x[i] + y[i])) > 1e-3f;
  std::printf("%d of %d elements differ from x + y\n", wrong, n);
  return wrong == 0 ? 0 : 1;
}
CPP
step() { echo "\$ $*" >> $OUT/seed.txt; "$@" >> $OUT/seed.txt 2>&1; echo "exit $?" >> $OUT/seed.txt; }
step $bin capture --mode live -o portcheck.toml -- $py add.py
step $bin check --python $py -t cuda:90,hip:gfx942 --json r.json
step $bin export --python $py -t cuda:90 -o out
cuda_include=$(ls -d /usr/local/cuda*/include 2>/dev/null | head -1)
step g++ -std=c++17 -I$cuda_include -Iout/add_kernel/cuda_90 -o use use.cpp -ldl
step ./use
cp portcheck.toml r.json $OUT/ 2>/dev/null
cat $OUT/seed.txt
