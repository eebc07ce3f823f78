#!/usr/bin/env python3
"""What a run could share exactly, and how `--reduce`'s guess compares (issue 43).

    bench/ttir_sharing.py FULL.json [--reduced REDUCED.json]

FULL.json: a check of a manifest with every cell compiled (no --reduce, no cache). Every compiled
cell reports `ttir_key`, its frontend's TTIR with the target and options the backend reads, hashed:
cells with equal keys compile to the same outcome. Prints how many cells share their key with
another of their target, how many of those the run shared (`shared_with`: the ones compiled in one
batch after the first of their key), and how much backend time sharing them all would save.

REDUCED.json: the same manifest checked with --reduce. Each cell it did not compile
(`represented_by`) took the verdict of a row that differs only in divisibility. Against FULL's
real verdicts: how many of those guesses were wrong (status, kind or fingerprint differ), and how
many represented cells have the TTIR of their representative (which only then is exact).
"""
import argparse
import collections
import json


def verdict(cell):
    return cell["status"], cell["kind"], cell["fingerprint"]


def sharing(report):
    cells = [c for c in report["cells"] if c.get("ttir_key")]
    groups = collections.defaultdict(list)
    for c in cells:
        groups[(c["target"], c["ttir_key"])].append(c)
    in_shared_groups = [c for g in groups.values() if len(g) > 1 for c in g]
    backend = {id(c): sum(t for s, t in c["stages"].items() if s != "frontend") for c in cells}
    # The backend time of every cell after the first of its key: what sharing them all saves.
    saving = sum(sum(backend[id(c)] for c in sorted(g, key=lambda c: -backend[id(c)])[1:])
                 for g in groups.values() if len(g) > 1)
    total_backend = sum(backend.values())
    return {
        "cells": len(report["cells"]),
        "compiled_to_ttir": len(cells),
        "distinct_ttir": len(groups),
        "cells_sharing_their_ttir": len(in_shared_groups),
        "share_of_cells": len(in_shared_groups) / len(cells) if cells else None,
        "shared_in_this_run": sum(1 for c in report["cells"] if c.get("shared_with")),
        "backend_s": total_backend,
        "backend_s_all_shared_would_save": saving,
    }


def reduce_against(full, reduced):
    real = {(c["row"], c["target"]): c for c in full["cells"]}
    represented = [c for c in reduced["cells"] if c.get("represented_by")]
    wrong, same_ttir = [], 0
    for c in represented:
        truth = real.get((c["row"], c["target"]))
        if truth is None:
            continue
        if verdict(truth) != verdict(c):
            wrong.append({"row": c["row"], "target": c["target"], "guessed": verdict(c), "real": verdict(truth)})
        rep = real.get((c["represented_by"], c["target"]))
        if rep is not None and rep.get("ttir_key") and rep.get("ttir_key") == truth.get("ttir_key"):
            same_ttir += 1
    return {"represented": len(represented), "verdict_wrong": len(wrong),
            "represented_with_the_ttir_of_their_representative": same_ttir, "wrong": wrong[:20]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("full")
    parser.add_argument("--reduced")
    args = parser.parse_args()
    with open(args.full) as f:
        full = json.load(f)
    out = {"sharing": sharing(full)}
    if args.reduced:
        with open(args.reduced) as f:
            out["reduce"] = reduce_against(full, json.load(f))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
