#!/bin/sh
# The torch a production stack pins, as `current`: torch 2.6.0 (which requires Triton 3.2.0) in a
# fresh venv runs `capture --mode record` on the sample package, `check` on what it captured, and
# `export` of three of its rows, with the tool of this checkout (build/triton-portcheck). About
# 5 GiB of venv (torch's CUDA wheels), made once under $WORK (default /tmp/portcheck-torch26).
#
#   bench/old_torch.sh > bench/results/torch26-triton32.txt
set -eu
repo=$(git rev-parse --show-toplevel)
tool=$repo/build/triton-portcheck
work=${WORK:-/tmp/portcheck-torch26}
mkdir -p "$work"
[ -x "$work/venv/bin/python" ] || python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "torch==2.6.0" pytest numpy
"$work/venv/bin/python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
rm -rf "$work/pkg" && cp -r "$repo/tests/fixtures/sample_pkg" "$work/pkg" && cd "$work/pkg"
echo "\$ triton-portcheck capture --mode record -- python -m pytest -q"
"$tool" capture --mode record -- "$work/venv/bin/python" -m pytest -q -p no:cacheprovider 2>&1 | grep '^triton-portcheck'
echo "\$ triton-portcheck check -t cuda:80,cuda:90,hip:gfx942 --python venv/bin/python"
"$tool" check -t cuda:80,cuda:90,hip:gfx942 --python "$work/venv/bin/python" || [ $? -eq 1 ]
echo "\$ triton-portcheck export -t cuda:90,hip:gfx942 -o out softmax_kernel 'scale_kernel[stride=1]' 'bias_relu_kernel[bias_ptr=None]'"
"$tool" export -t cuda:90,hip:gfx942 -o out --python "$work/venv/bin/python" softmax_kernel 'scale_kernel[stride=1]' \
  'bias_relu_kernel[bias_ptr=None]' | grep -c '^wrote' | sed 's/$/ files written/'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("scale_kernel[stride=1] on cuda:90: triton", d["triton_version"], "params", [p["name"] for p in d["params"]], "folded", [f["name"] for f in d["folded"]])' out/scale_kernel-stride_1*/cuda_90/launch.json
