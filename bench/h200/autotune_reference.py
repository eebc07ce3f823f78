"""Issue 49's figures from one GPU run (bench/h200/autotune_fla.sh): how many red cells of an
autotuned library were configs its autotuner skips, config by config (before) and as launches
(after), and whether the configs `check` skips on cuda:90 are exactly those Triton's own autotuner
skipped on the GPU (TRITON_PRINT_AUTOTUNING=1: "Autotuning kernel K with config C", then
"Autotuning failed with E" for a config it skipped).

usage: autotune_reference.py AUTOTUNING_LOG MANIFEST AFTER_JSON BEFORE_JSON
(AUTOTUNING_LOG: the output of the live capture run with TRITON_PRINT_AUTOTUNING=1)
"""
import collections
import json
import re
import sys
import tomllib
from pathlib import Path

RED = ("failed", "launch")
OPTIONS = ("num_warps", "num_stages", "num_ctas")


def config_of(text):
    """{"BT": "64", "num_warps": "4", ...} of a Config's str(), its None-valued fields left out."""
    fields = dict(part.split(": ", 1) for part in text.split(", ") if ": " in part)
    return {k: v for k, v in fields.items() if v != "None" and k != "maxnreg"}


def skipped_on_gpu(log_text):
    """({(kernel, config items)} the autotuner skipped while others of the launch remained,
    {(kernel, config items)} of launches it skipped every config of (the launch then raises),
    how many configs it benchmarked). One launch's benchmarks are consecutive lines of one kernel."""
    launches, benchmarked = [], 0
    for line in log_text.splitlines():
        started = re.match(r"Autotuning kernel (\S+) with config (.*)$", line)
        if started:
            benchmarked += 1
            config = (started.group(1), frozenset(config_of(started.group(2)).items()))
            if not launches or launches[-1][0] != started.group(1) or config in launches[-1][1]:
                launches.append((started.group(1), {}))
            launches[-1][1][config] = False
            current = config
        elif line.startswith("Autotuning failed with") and launches:
            launches[-1][1][current] = True
    skipped, nothing_left = set(), set()
    for _, configs in launches:
        failed = {config for config, did_fail in configs.items() if did_fail}
        (nothing_left if failed == set(configs) else skipped).update(failed)
    return skipped, nothing_left, benchmarked


def rows_of(manifest):
    """{display name: (function, {constant or option: value as text}, autotune)}."""
    rows = {}
    for kernel in tomllib.loads(Path(manifest).read_text()).get("kernel", []):
        function = kernel["target"].rsplit(":", 1)[1]
        for variant in kernel.get("variant") or [{}]:
            values = {**kernel.get("constants", {}), **variant.get("constants", {}),
                      **kernel.get("options", {}), **variant.get("options", {})}
            name = kernel["name"] + (f"[{variant['name']}]" if variant else "")
            rows[name] = (function, {k: str(v) for k, v in values.items()},
                          variant.get("autotune", kernel.get("autotune")))
    return rows


def matches(config, values):
    return all(values.get(k) == v for k, v in config if k in values or k not in OPTIONS)


def main(log_path, manifest, after_path, before_path):
    gpu_skipped, gpu_nothing_left, benchmarked = skipped_on_gpu(Path(log_path).read_text())
    rows = rows_of(manifest)
    after = json.loads(Path(after_path).read_text())["cells"]
    before = {(c["row"], c["target"]): c["status"] for c in json.loads(Path(before_path).read_text())["cells"]}
    tuned = {name for name, (_, _, launch) in rows.items() if launch}
    launches = {(rows[n][0], str(rows[n][2])) for n in tuned}
    print(f"{len(rows)} rows, {len(tuned)} of them configs of {len(launches)} autotuned launches; "
          f"{len(after)} cells")
    print()
    print("| target | red before (config by config) | red after (as launches) | skipped after |")
    print("|---|---|---|---|")
    by_target = collections.defaultdict(lambda: [0, 0, 0])
    for c in after:
        counts = by_target[c["target"]]
        counts[0] += before.get((c["row"], c["target"])) in RED
        counts[1] += c["status"] in RED
        counts[2] += c["status"] == "skipped"
    for target, (red_before, red_after, skipped) in by_target.items():
        print(f"| {target} | {red_before} | {red_after} | {skipped} |")
    totals = [sum(v[i] for v in by_target.values()) for i in range(3)]
    print(f"| all | {totals[0]} | {totals[1]} | {totals[2]} |")
    print()
    ours = {c["row"] for c in after if c["target"] == "cuda:90" and c["status"] == "skipped"}
    found = {cfg for cfg in gpu_skipped
             if any(rows[r][0] == cfg[0] and matches(cfg[1], rows[r][1]) for r in ours)}
    extra = sorted(r for r in ours
                   if not any(rows[r][0] == k and matches(cfg, rows[r][1]) for k, cfg in gpu_skipped))
    print(f"cuda:90 against the GPU's own autotuner (TRITON_PRINT_AUTOTUNING=1): it benchmarked "
          f"{benchmarked} configs and skipped {len(gpu_skipped)} distinct ones; `check` skips "
          f"{len(ours)} cells on cuda:90; {len(found)} of the GPU's skipped configs are skipped "
          f"cells, {len(gpu_skipped) - len(found)} are not; {len(extra)} skipped cells are no "
          "config the GPU skipped")
    for kernel, cfg in sorted(gpu_skipped - found):
        print(f"  skipped on the GPU, not by check: {kernel} {dict(sorted(cfg))}")
    for row in extra:
        print(f"  skipped by check, not on the GPU: {row}")
    red = {c["row"] for c in after if c["target"] == "cuda:90" and c["status"] in RED}
    red_found = {cfg for cfg in gpu_nothing_left
                 if any(rows[r][0] == cfg[0] and matches(cfg[1], rows[r][1]) for r in red)}
    print(f"launches with no config left on the GPU (the autotuner skipped each, then the launch "
          f"raised): {len(gpu_nothing_left)} configs; {len(red_found)} of them are red cells on "
          f"cuda:90, {len(gpu_nothing_left) - len(red_found)} are not")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
