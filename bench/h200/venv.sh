# Sourced by the H200 scripts: a venv that sees the machine's packages, with the wheel `make
# wheel` built (carried in .device/) installed into it. Sets $bin and $py.
python3 -m venv --system-site-packages /tmp/pcvenv > $OUT/pip.log 2>&1
# python3 there is itself a venv's (/opt/torch/.venv): --system-site-packages reaches only the
# interpreter under it, so its packages (torch, Triton, transformers) are added by a .pth file.
python3 -c "import site; print(site.getsitepackages()[0])" \
  > $(/tmp/pcvenv/bin/python -c "import site; print(site.getsitepackages()[0])")/machine-packages.pth
/tmp/pcvenv/bin/pip install --no-index --no-deps $repo/.device/triton_portcheck-*.whl >> $OUT/pip.log 2>&1 || {
  tail -20 $OUT/pip.log; exit 1; }
bin=/tmp/pcvenv/bin/triton-portcheck
py=/tmp/pcvenv/bin/python
export TRITON_PORTCHECK_HOME=/tmp/pchome
