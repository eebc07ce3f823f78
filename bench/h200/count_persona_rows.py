"""Counts a `capture --as cuda:90,hip:gfx942` manifest's rows by the personas that launched them:
rows both launched alike, and rows one vendor's host code launched only (its own options, tiles
or configs), per kernel. Usage: count_persona_rows.py MANIFEST"""
import collections
import sys
import tomllib


def main(path):
    with open(path, "rb") as f:
        kernels = tomllib.load(f).get("kernel", [])
    table = collections.defaultdict(collections.Counter)
    for kernel in kernels:
        name = kernel["target"].rsplit(":", 1)[1]
        rows = kernel.get("variant") or [kernel]
        for row in rows:
            personas = tuple(row.get("captured_as", kernel.get("captured_as", [])))
            table[name][", ".join(personas) or "?"] += 1
    columns = ["cuda:90, hip:gfx942", "cuda:90", "hip:gfx942"]
    print("| kernel | rows of both | cuda:90 only | hip:gfx942 only |\n|---|---|---|---|")
    totals = collections.Counter()
    for name in sorted(table):
        print(f"| {name} | " + " | ".join(str(table[name][c]) for c in columns) + " |")
        totals.update(table[name])
    print("| **all** | " + " | ".join(str(totals[c]) for c in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
