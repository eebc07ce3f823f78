"""Compares two checkouts' Python workers on the same work (issue 33: the worker reorganised into
packages must behave as before): `check --demo` on two targets, each cell's verdict, stage,
fingerprint, message and metadata; and the sample package's own tests captured by each worker's
hook in record and interpret mode, the launch records themselves. Prints what differs, exit 1
if anything does.

    python bench/compare_workers.py OLD_CHECKOUT NEW_CHECKOUT [--python PY] [--bin TOOL]

The tool binary (default: NEW_CHECKOUT/build/triton-portcheck) runs both: the protocol between
binary and worker is unchanged. The hook is started as each worker's own sitecustomize would.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

CELL_FIELDS = ("row", "target", "status", "kind", "stage", "fingerprint", "message", "metadata",
               "resources", "launch")
# Each worker's sitecustomize line: the old flat module or the new package.
HOOKS = {"flat": "from portcheck_worker import capture as c\nc.run_sitecustomize()\n",
         "packages": "from portcheck_worker.capture import hook as c\nc.run_sitecustomize()\n"}


def check_demo(tool, share, python, out):
    env = dict(os.environ, TRITON_PORTCHECK_SHARE=str(share), TRITON_PORTCHECK_HOME=str(out / "home"))
    subprocess.run([tool, "check", "--demo", "-t", "cuda:90,hip:gfx942", "--no-cache", "--python", python,
                    "--json", out / "report.json", "-q"], env=env, capture_output=True, timeout=1800)
    cells = json.loads((out / "report.json").read_text())["cells"]
    return {(c["row"], c["target"]): {k: c.get(k) for k in CELL_FIELDS} for c in cells}


def capture_records(share, python, mode, out):
    worker = share / "python"
    layout = "packages" if (worker / "portcheck_worker" / "capture").is_dir() else "flat"
    hook = out / "hook"
    hook.mkdir(parents=True)
    (hook / "sitecustomize.py").write_text(HOOKS[layout])
    records = out / "records"
    records.mkdir()
    sample = out / "sample_pkg"
    shutil.copytree(pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sample_pkg", sample)
    env = dict(os.environ, PYTHONPATH=f"{hook}:{worker}", PORTCHECK_CAPTURE_DIR=str(records),
               PORTCHECK_CAPTURE_MODE=mode, PORTCHECK_CAPTURE_HOOK_DIR=str(hook))
    if mode == "interpret":
        env["TRITON_INTERPRET"] = "1"
    subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=sample, env=env,
                   capture_output=True, timeout=1800)
    lines = []
    for path in sorted(records.glob("launches-*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            record.get("kernel", {}).pop("file", None)
            record.pop("site", None)
            # the copy's own folder, which differs between the two runs
            lines.append(json.dumps(record, sort_keys=True).replace(str(sample), "<sample_pkg>"))
    return sorted(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old", type=pathlib.Path)
    parser.add_argument("new", type=pathlib.Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--bin")
    args = parser.parse_args()
    tool = args.bin or str(args.new / "build" / "triton-portcheck")
    work = pathlib.Path(tempfile.mkdtemp(prefix="compare-workers-"))
    differences = 0
    demo = {}
    for name, share in (("old", args.old), ("new", args.new)):
        (work / name / "demo").mkdir(parents=True)
        demo[name] = check_demo(tool, share.resolve(), args.python, work / name / "demo")
    same = sum(demo["old"][k] == demo["new"].get(k) for k in demo["old"])
    print(f"check --demo, cuda:90 and hip:gfx942: {len(demo['old'])} cells old, {len(demo['new'])} new, "
          f"{same} identical")
    for key in sorted(set(demo["old"]) | set(demo["new"])):
        if demo["old"].get(key) != demo["new"].get(key):
            differences += 1
            print(f"  differs: {key}: {demo['old'].get(key)} != {demo['new'].get(key)}")
    for mode in ("record", "interpret"):
        records = {name: capture_records(share.resolve(), args.python, mode, work / name / mode)
                   for name, share in (("old", args.old), ("new", args.new))}
        equal = records["old"] == records["new"]
        differences += not equal
        print(f"capture of the sample package's tests, {mode} mode: {len(records['old'])} records old, "
              f"{len(records['new'])} new, {'identical' if equal else 'DIFFERENT'}")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
