"""Compares the Triton kernels Inductor wrote into its cache folder with the rows `capture` made
of them: prints a markdown table and exits 1 when a kernel written was not captured.
Usage: inductor_kernels.py INDUCTOR_CACHE_DIR MANIFEST"""
import re
import sys
import tomllib
from pathlib import Path

KERNEL = re.compile(r"^@triton\.jit\ndef (triton_\w+)\(", re.M)


def written(cache):
    """{kernel name: number of files defining it}: each kernel module, and the output code that
    embeds the same source, define it."""
    names = {}
    for path in Path(cache).rglob("*.py"):
        for name in KERNEL.findall(path.read_text(errors="replace")):
            names[name] = names.get(name, 0) + 1
    return names


def captured(manifest):
    """{kernel name: rows}, by the function each row compiles (Inductor gives every benchmarked
    template the same name, `triton_mm`, each in its own file)."""
    rows = {}
    for kernel in tomllib.loads(Path(manifest).read_text()).get("kernel", []):
        name = kernel["target"].rsplit(":", 1)[1]
        rows[name] = rows.get(name, 0) + max(1, len(kernel.get("variant") or []))
    return rows


def main(cache, manifest):
    wrote, rows = written(cache), captured(manifest)
    print("| kernel Inductor wrote | captured rows |")
    print("|---|---|")
    for name in sorted(wrote):
        print(f"| `{name}` | {rows.get(name, 'MISSING')} |")
    missing = sorted(set(wrote) - set(rows))
    print(f"\n{len(wrote)} kernels written, {len(set(wrote) & set(rows))} captured "
          f"({sum(rows.values())} rows), {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
