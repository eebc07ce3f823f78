#!/bin/bash
# Reproducers written here (`triton-portcheck repro`, Triton 3.9.0) run on the H200 machine, which
# has a GPU, CUDA and its own Triton (3.6.0): each file needs only Triton, uses its stand-in driver
# whatever GPU is present, and says whether its failure reproduces with that release. Run there
# from the checkout with the files in h200-repro/ (untracked, so they travel):
#
#   mkdir -p h200-repro && cp build/repro_*.py h200-repro/    # here
#   bash bench/h200/repro_files.sh                           # there (the `run` tool)
set -u
cd "${1:-h200-repro}"
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
for f in *.py; do
  echo "== $f"
  python3 -c "import torch; torch.zeros(1, device='cuda')" &&
    timeout 300 python3 "$f" 2>/dev/null | grep -E "^(reproduces|no longer|fails differently)|needs"
  echo "exit ${PIPESTATUS[0]}"
done
