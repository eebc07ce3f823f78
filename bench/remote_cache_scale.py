#!/usr/bin/env python3
"""Scale-out through the shared remote cache (issue 19), on this machine: a real redis-server and
a real nginx with WebDAV (bench/remote_servers.py), started on loopback and stopped after.

For each store and N = 1, 2, 4 concurrent "runners" (each its own empty TRITON_PORTCHECK_HOME,
no shared local cache, `--shard K/N`) over the 648-cell synthetic manifest of bench/run:
  round 1: an empty store: every cell is compiled once, by one runner, and stored;
  round 2: new empty homes, the same shards: every cell must come from the store (0 compiled).
Then one runner whose store is killed (SIGKILL) or hung (SIGSTOP) halfway through a cold run, and
the cost of a lookup that misses or hits, locally and remotely, from the tool's own counters (the
report's environment.remote_cache block). Writes bench/results/remote-cache.md and the same text
into BENCHMARKS.md between its markers.

    bench/remote_cache_scale.py [--python .venv/bin/python] [--cores N]
"""
import argparse
import datetime
import importlib.machinery
import importlib.util
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = ROOT / "build" / "triton-portcheck"
sys.path.insert(0, str(ROOT / "bench"))
from remote_servers import RedisServer, WebDavServer  # noqa: E402

BEGIN, END = "<!-- BEGIN remote-cache -->", "<!-- END remote-cache -->"
TIMEOUT_S = 2.0  # the tool's default --cache-timeout


def synthetic_manifest(directory):
    """The 648-cell manifest of bench/run (one definition, imported, not copied)."""
    loader = importlib.machinery.SourceFileLoader("bench_run", str(ROOT / "bench" / "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module.synthetic_manifest(directory)


class Runner:
    """One `check` in its own empty home, started now, read when it ends."""

    def __init__(self, work, name, manifest, url, python, jobs, shard=None):
        self.home = work / f"home-{name}"
        self.json = work / f"{name}.json"
        cmd = [str(BINARY), "check", "-m", str(manifest), "--python", python, "-q", "-j", str(jobs),
               "--json", str(self.json), "--cache-url", url]
        if shard:
            cmd += ["--shard", shard]
        env = dict(os.environ, TRITON_PORTCHECK_HOME=str(self.home))
        self.started = time.monotonic()
        self.process = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def finish(self):
        _, stderr = self.process.communicate()
        wall = time.monotonic() - self.started
        if self.process.returncode not in (0, 1):
            raise RuntimeError(f"check failed ({self.process.returncode}): {stderr}")
        report = json.loads(self.json.read_text())
        return {"wall": wall, "cells": len(report["cells"]), "remote": report["environment"]["remote_cache"],
                "stderr": stderr, "verdicts": {(c["row"], c["target"]): (c["status"], c.get("fingerprint"))
                                               for c in report["cells"]}}


def empty(server):
    if isinstance(server, RedisServer):
        server.cli("FLUSHALL")
    else:
        for path in server.store.iterdir():
            path.unlink()


def run_round(work, tag, manifest, server, n, python, cores):
    jobs = max(1, cores // n)
    runners = [Runner(work, f"{tag}-{k}of{n}", manifest, server.url, python, jobs, f"{k}/{n}" if n > 1 else None)
               for k in range(1, n + 1)]
    results = [r.finish() for r in runners]
    total = lambda key: sum(r["remote"][key] for r in results)  # noqa: E731
    lookups = total("remote_hits") + total("local_hits") + total("misses")
    verdicts = {}
    for r in results:
        verdicts.update(r["verdicts"])
    return {"n": n, "jobs": jobs, "wall": max(r["wall"] for r in results), "cells": sum(r["cells"] for r in results),
            "compiled": total("misses"), "remote_hits": total("remote_hits"),
            "hit_rate": total("remote_hits") / lookups if lookups else 0.0, "bytes_stored": total("bytes_stored"),
            "bytes_fetched": total("bytes_fetched"), "remote_read_s": total("remote_read_seconds"),
            "local_read_s": total("local_read_seconds"), "local_write_s": total("local_write_seconds"), "errors": total("remote_errors"), "verdicts": verdicts}


def run_interrupted(work, tag, manifest, server, python, cores, how):
    """One cold runner; the store is killed or hung once half the cells are stored there."""
    empty(server)
    runner = Runner(work, tag, manifest, server.url, python, cores)
    while runner.process.poll() is None and server.stored_count() < 324:
        time.sleep(0.2)
    at = time.monotonic() - runner.started
    (server.kill if how == "killed" else server.pause)()
    return dict(runner.finish(), at=at)


def measure_store(kind, server_class, manifest, python, cores, work):
    rows, checks = [], []
    with server_class(work) as server:
        for n in (1, 2, 4):
            empty(server)
            cold = run_round(work, f"{kind}-cold", manifest, server, n, python, cores)
            stored = server.stored_bytes()
            warm = run_round(work, f"{kind}-warm", manifest, server, n, python, cores)
            rows.append((n, cold, warm, stored))
            if n == 1:  # the same home again: every lookup a local hit
                local = run_round(work, f"{kind}-warm", manifest, server, n, python, cores)
                checks.append((f"{kind}: a third run in a home of round 2 asks the store nothing",
                               local["compiled"] == 0 and local["remote_hits"] == 0 and local["remote_read_s"] == 0))
            checks.append((f"{kind}, N={n}: round 1 compiles each of the {cold['cells']} cells once",
                           cold["compiled"] == cold["cells"] == 648))
            checks.append((f"{kind}, N={n}: round 2 (empty homes) compiles 0 cells", warm["compiled"] == 0))
            checks.append((f"{kind}, N={n}: round 2's verdicts are round 1's", warm["verdicts"] == cold["verdicts"]))
    stops = {}
    for how in ("killed", "hung"):
        with server_class(work) as server:
            stops[how] = run_interrupted(work, f"{kind}-{how}", manifest, server, python, cores, how)
    return rows, checks, stops, local


def table(kind, rows):
    out = ["| store | N | jobs each | round | wall (s) | cells compiled | remote hit rate | stored there "
           "| fetched |", "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for n, cold, warm, stored in rows:
        for name, r in (("1: empty store", cold), ("2: empty homes", warm)):
            out.append(f"| {kind} | {n} | {r['jobs']} | {name} | {r['wall']:.2f} | {r['compiled']} | "
                       f"{100 * r['hit_rate']:.0f}% | {stored[0]} entries, {stored[1] / 1024:.0f} KiB "
                       f"| {r['bytes_fetched'] / 1024:.0f} KiB |")
    return out


def stop_lines(kind, stops, baseline_wall):
    out = []
    for how, r in stops.items():
        remote = r["remote"]
        waited = remote["remote_read_seconds"] + remote["remote_write_seconds"]
        out.append(f"| {kind} | {how} at {r['at']:.1f} s | {r['wall']:.2f} | {baseline_wall:.2f} | "
                   f"{r['cells']} of 648 | {remote['stored']} | {remote['remote_stored']} | "
                   f"{remote['remote_errors']} | {waited:.2f} |")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    args = parser.parse_args()
    # A SIGTERM unwinds like Ctrl-C, so the servers' `with` blocks stop them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    lines, checks, stop_rows, costs = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="portcheck-remote-bench-") as tmp:
        work = pathlib.Path(tmp)
        manifest = synthetic_manifest(work)
        for kind, cls in (("redis", RedisServer), ("http", WebDavServer)):
            rows, kind_checks, stops, local = measure_store(kind, cls, manifest, args.python, args.cores, work)
            lines += table(kind, rows)[2 if lines else 0:]
            checks += kind_checks
            cold1, warm1 = rows[0][1], rows[0][2]
            stop_rows += stop_lines(kind, stops, cold1["wall"])
            for how, r in stops.items():
                checks.append((f"{kind}, store {how} halfway: every cell compiled, all {r['cells']} results in the "
                               "local cache, one failed request", r["cells"] == 648 and r["remote"]["stored"] == 648
                               and r["remote"]["remote_errors"] == 1))
                waited = r["remote"]["remote_read_seconds"] + r["remote"]["remote_write_seconds"]
                checks.append((f"{kind}, store {how} halfway: time spent waiting on it at most the timeout "
                               f"({TIMEOUT_S:.0f} s) plus the requests before: {waited:.2f} s", waited <= TIMEOUT_S + 0.5))
            costs.append((kind, cold1, warm1, local))
    text = render(lines, stop_rows, costs, checks, args, time.monotonic() - started)
    print(text)
    (ROOT / "bench" / "results" / "remote-cache.md").write_text(text + "\n")
    merge_into_benchmarks(text)
    return 0 if all(ok for _, ok in checks) else 1


def render(lines, stop_rows, costs, checks, args, seconds):
    today = datetime.date.today().isoformat()
    out = [BEGIN, "## Shared remote cache: scale-out (issue 19)", "",
           f"Produced by `bench/remote_cache_scale.py` on {today} ({args.cores} cores, {seconds:.0f} s in all): "
           "redis-server and nginx (WebDAV) from Debian on loopback; the 648-cell synthetic manifest; every "
           "runner in its own empty home. Do not edit by hand.", ""]
    out += lines + ["", "A store stopped halfway through a cold run (N = 1):", "",
                    "| store | what happened | wall (s) | wall, store up (s) | cells | stored locally "
                    "| stored there | failed requests | waited on the store (s) |",
                    "|---|---|---:|---:|---:|---:|---:|---:|---:|"] + stop_rows
    out += ["", "The cost of a lookup per cell (the tool's own counters, N = 1): a miss in round 1, a remote hit in "
            "round 2 (fetching, checking, copying into the local cache and reading it back), a local hit in a third "
            "run in round 2's home:", "",
            "| store | local miss | a remote miss adds | local hit | remote hit | wall, all 648 from the store (s) "
            "| wall, all 648 local (s) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, cold, warm, local in costs:
        per = lambda seconds, count: f"{1e6 * seconds / count:.0f} µs" if count else "-"  # noqa: E731
        remote_hit = warm["remote_read_s"] + warm["local_write_s"] + warm["local_read_s"]
        out.append(f"| {kind} | {per(cold['local_read_s'], cold['compiled'])} | "
                   f"{per(cold['remote_read_s'], cold['compiled'])} | "
                   f"{per(local['local_read_s'], local['cells'])} | "
                   f"{per(remote_hit, warm['remote_hits'])} | {warm['wall']:.2f} | {local['wall']:.2f} |")
    out += ["", "Checks:", ""] + [f"- {'met' if ok else 'NOT MET'}: {what}" for what, ok in checks]
    out += ["", "Notes:", "",
            "- All runners share this machine's cores (each gets cores / N jobs), so round 1's wall does not fall "
            "with N here; on CI, where each runner brings its own cores, a runner's wall is its shard's compile "
            "time. What the store changes is round 2: every runner after the first pays no compile at all.",
            "- A remote lookup is one batched request per run (Redis MGET in batches of 256 keys; HTTP GETs 8 at a "
            "time): the per-cell figures are the batch's time divided by its keys.",
            "- Killed: the server process gets SIGKILL (connections reset at once). Hung: SIGSTOP, the server "
            "accepts and never answers, and the first request waits the whole timeout.", END]
    return "\n".join(out)


def merge_into_benchmarks(text):
    path = ROOT / "BENCHMARKS.md"
    current = path.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    merged = pattern.sub(lambda _: text, current) if pattern.search(current) else current.rstrip() + "\n\n" + text + "\n"
    path.write_text(merged)


if __name__ == "__main__":
    sys.exit(main())
