#!/bin/sh
# What `make test-venv` installs (make print-test-packages: Triton, torch with its CUDA libraries,
# transformers, pytest and the rest), into a fresh venv each way, with a cold cache each
# (PIP_CACHE_DIR, UV_CACHE_DIR in a scratch folder): `pip install` as the Makefile did, and
# `uv pip install --compile-bytecode` as it does now. Wall clock and CPU seconds (user + system);
# both compile every module's bytecode, as the workers need (they run with PYTHONDONTWRITEBYTECODE).
#
#   bench/venv_install.sh > bench/results/venv-install.txt
set -eu
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/portcheck-venv-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
packages=$(make -s -C "$root" print-test-packages)
echo "commit $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "packages: $packages"
for how in pip uv; do
  python3 -m venv "$work/$how"
  "$work/$how/bin/python" -m pip install --quiet --upgrade pip uv
  if [ "$how" = pip ]; then
    install="$work/$how/bin/python -m pip install --quiet"
  else
    install="$work/$how/bin/uv pip install --quiet --python $work/$how/bin/python --compile-bytecode"
  fi
  # shellcheck disable=SC2086 # the install command and the packages are words
  eval PIP_CACHE_DIR="$work/cache-$how" UV_CACHE_DIR="$work/cache-$how" \
    /usr/bin/time -o "$work/time-$how" -f "'%e %U %S'" $install $packages
  awk -v how="$how" '{ printf "%-4s %6.0f s wall %6.0f s CPU\n", how, $1, $2 + $3 }' "$work/time-$how"
  rm -rf "$work/$how" "$work/cache-$how"
done
