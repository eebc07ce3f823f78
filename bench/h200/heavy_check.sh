#!/usr/bin/env bash
# On the H200 machine (16 cores, its Triton 3.6.0, torch and transformers): the heavy-library case
# of bench/run (bench/heavy_case.py --bench: the full case with fork, a sample of it with fork and
# with process isolation) at 16 jobs, with the real torch + transformers import
# (bench/heavy_library.py's heavydep imports both where installed). The wheel `make wheel` built,
# carried in .device/, is installed into a venv that sees the machine's packages.
#
#   FORK_LIMIT   seconds before the full case (25 modules x 40 rows x 2 targets) is interrupted (400)
#
# Writes to $OUT: heavy-bench.json (every figure and verdict), heavy-bench.txt (the same without
# the verdicts, and which targets were met), import.txt (what the import alone costs there).
set -uo pipefail
repo=$(pwd)
source bench/h200/venv.sh
scratch=$(mktemp -d)
python3 bench/heavy_library.py $scratch/probe --modules 1 --rows 1 > /dev/null
{ nproc; free -g | head -2; $py -c "import triton, torch, transformers; print('triton', triton.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)";
  for i in 1 2; do /usr/bin/time -f "import heavydep (torch + transformers + CPU to 3 s): %e s, %M KiB max RSS" \
      env PYTHONPATH=$scratch/probe/deps $py -c "import heavydep, threading; print(threading.active_count(), 'Python threads')"; done
} > $OUT/import.txt 2>&1
$py bench/heavy_case.py --bench --python $py --binary $bin --jobs 16 --limit ${FORK_LIMIT:-400} \
  --json $OUT/heavy-bench.json > $OUT/heavy-bench.txt 2>&1
tail -n 60 $OUT/import.txt $OUT/heavy-bench.txt
