#!/usr/bin/env bash
# On the H200 (issue 34, items 2 and 3): personas on a machine with a real NVIDIA GPU.
#  1. tests/fixtures/personas/vendor_probe.py and the persona probe of test_personas.py under
#     `--as cuda:90,hip:gfx942` in record mode: what torch, pynvml/amdsmi and the three tools
#     answer where torch sees the H200.
#  2. flag_gems 5.0.2 (its wheel and dependencies in .device/wheels) driven by
#     bench/h200/flag_gems_ops.py under both personas: which vendor it picks by its tools and
#     which rows differ between the two (its vendor tables), counted by count_persona_rows.py;
#     and as hip:gfx942 with the machine's own tools on PATH, the control.
# The stripped tool and libfmt in .device/. Run from the repository root:
#   OUT=results-dir bench/h200/flag_gems_personas.sh
set -uo pipefail
repo=$(pwd)
out=${OUT:?set OUT to a folder for the results}
mkdir -p "$out"
export LD_LIBRARY_PATH=$repo/.device TRITON_PORTCHECK_SHARE=$repo TRITON_PORTCHECK_HOME=/tmp/pchome
bin=$repo/.device/triton-portcheck
python3 -m pip install --quiet --no-deps --no-index --target /tmp/fgpkgs "$repo"/.device/wheels/*.whl > "$out/pip.log" 2>&1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import sys, triton, torch; print("python", sys.version.split()[0], "triton", triton.__version__, "torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())'
  python3 -c 'import pynvml; print("pynvml", pynvml.__file__)' 2>&1 | tail -1
  ls /dev/nvidia*
} > "$out/machine.txt" 2>&1

work=$(mktemp -d)
cp tests/fixtures/personas/vendor_probe.py "$work/"
(cd "$work" && "$bin" capture --mode record --as cuda:90,hip:gfx942 -o probe.toml -- python3 vendor_probe.py "$work" \
   > "$out/vendor-probe.log" 2>&1; echo "exit $?" >> "$out/vendor-probe.log")
cp "$work"/pynvml.json "$out/vendor-nvidia.json" 2>/dev/null
cp "$work"/amdsmi.json "$out/vendor-amd.json" 2>/dev/null

cp bench/h200/flag_gems_ops.py "$work/"
cd "$work"
for persona in cuda:90 hip:gfx942; do
  PYTHONPATH=/tmp/fgpkgs "$bin" capture --mode record --as "$persona" -o "fg-${persona/:/-}.toml" -- \
    python3 flag_gems_ops.py > "$out/fg-${persona/:/-}.log" 2>&1
  echo "exit $?" >> "$out/fg-${persona/:/-}.log"
done
PYTHONPATH=/tmp/fgpkgs "$bin" capture --mode record --as cuda:90,hip:gfx942 -o fg-both.toml -- \
  python3 flag_gems_ops.py > "$out/fg-both.log" 2>&1
echo "exit $?" >> "$out/fg-both.log"
# The control: as hip:gfx942 with the machine's own PATH (no stand-in tools), as before them.
machine_path=$PATH
PYTHONPATH=/tmp/fgpkgs "$bin" capture --mode record --as hip:gfx942 -o fg-hip-machine-tools.toml -- \
  env PATH="$machine_path" python3 flag_gems_ops.py > "$out/fg-hip-machine-tools.log" 2>&1
echo "exit $?" >> "$out/fg-hip-machine-tools.log"
cp fg-*.toml "$out/" 2>/dev/null
python3 "$repo/bench/h200/count_persona_rows.py" fg-both.toml > "$out/fg-rows.md" 2>&1
