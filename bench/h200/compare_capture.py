#!/usr/bin/env python3
"""Compares the rows of manifests written by `capture` in different modes (docs/capture.md).

usage: compare_capture.py live.toml interpret.toml [record.toml ...]  -> Markdown on stdout
Rows are compared as `check` reads them (variant fields merged over the kernel's); the
`captured` provenance (test ids) is left out. Exit status 1 when any row differs.
"""
import sys
import tomllib
from pathlib import Path


def is_row_itself(kernel):
    """A [[kernel]] is a row when its own keys form a complete specialisation: when no variant
    names an argument it leaves out or brings a whole specialization it lacks (docs/manifest.md)."""
    if not kernel.get("variant") or "specialization" in kernel:
        return True
    own = set(kernel.get("signature", {})) | set(kernel.get("constants", {}))
    return not any("specialization" in v or (set(v.get("signature", {})) | set(v.get("constants", {}))) - own
                   for v in kernel["variant"])


def rows_of(path, provenance=False):
    """{display name: row} as `check` reads them; `captured` kept only with provenance=True."""
    skipped = ("variant", "name") if provenance else ("variant", "name", "captured")
    data = tomllib.loads(Path(path).read_text())
    rows = {}
    for kernel in data.get("kernel", []):
        base = {k: v for k, v in kernel.items() if k not in skipped}
        for variant in ([None] if is_row_itself(kernel) else []) + (kernel.get("variant") or []):
            row = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
            name = kernel["name"]
            if variant is not None:
                name += f"[{variant['name']}]"
                for key, value in variant.items():
                    if key in ("signature", "constants", "options"):
                        row[key] = {**row.get(key, {}), **value}
                    elif key not in skipped:
                        row[key] = value
            rows[name] = row
    return rows


def main(paths):
    manifests = [(Path(p).stem, rows_of(p)) for p in paths]
    reference_name, reference = manifests[0]
    names = sorted(set().union(*(rows for _, rows in manifests)))
    print(f"| row | {' | '.join(n for n, _ in manifests)} |")
    print(f"|---|{'---|' * len(manifests)}")
    differing = 0
    for name in names:
        cells = []
        for label, rows in manifests:
            if name not in rows:
                cells.append("missing")
            elif label == reference_name:
                cells.append("present")
            else:
                cells.append("equal" if rows[name] == reference.get(name) else "DIFFERENT")
        differing += any(c in ("missing", "DIFFERENT") for c in cells)
        print(f"| `{name}` | {' | '.join(cells)} |")
    print()
    print(f"{len(names)} rows; {len(names) - differing} identical in every manifest, "
          f"{differing} differing (reference: {reference_name})")
    for name in names:
        values = [(label, rows.get(name)) for label, rows in manifests]
        if len({repr(v) for _, v in values}) > 1:
            print(f"\n{name}:")
            for label, value in values:
                print(f"  {label}: {value}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
