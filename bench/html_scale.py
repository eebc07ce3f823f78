#!/usr/bin/env python3
"""The reports at library size (issue 15): a real report's cells cloned to about CELLS cells, then
rendered by `triton-portcheck report` as HTML, JSON, SARIF and the terminal matrix. Times the HTML
in the real Chromium the tests use (headless, through chromedriver): load and draw, then a kernel
search, a target filter and a failure-group filter; prints the sizes of each format and saves a
screenshot.

    bench/html_scale.py --report demo.json [--cells 20000] [--screenshot out.png]

The cells are the report's own (messages, logs, stage times, metadata), each row copied as more
variants of its kernel ("axpy[v#17]"), so the page holds what a real run of that size would.
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def scaled_report(report, cells_wanted):
    """Each row copied as more variants of its own kernel ("axpy[v#17]"), a kernel's rows
    together, as a captured library's manifest has them."""
    copies = max(1, -(-cells_wanted // max(1, len(report["cells"]))))
    out = copy.deepcopy(report)
    out["cells"], out["rows"] = [], []
    cells_of = {}
    for c in report["cells"]:
        cells_of.setdefault(c["row"], []).append(c)
    for row in report["rows"]:
        for k in range(copies):
            for c in cells_of.get(row, []):
                variant = f"{c.get('variant') or 'v'}#{k}"
                out["cells"].append(dict(c, variant=variant, row=f"{c['kernel']}[{variant}]"))
            first = cells_of.get(row, [{"kernel": row}])[0]
            out["rows"].append(f"{first['kernel']}[{first.get('variant') or 'v'}#{k}]")
    return out


def render(binary, report_path, folder):
    """Every format from `report`, and the seconds it took; the terminal matrix as printed."""
    outputs = {"html": folder / "r.html", "json": folder / "r.json", "sarif": folder / "r.sarif"}
    started = time.perf_counter()
    run = subprocess.run([str(binary), "report", str(report_path), "--html", str(outputs["html"]),
                          "--json", str(outputs["json"]), "--sarif", str(outputs["sarif"])],
                         capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    seconds = time.perf_counter() - started
    if run.returncode not in (0, 1):
        sys.exit(f"report exited {run.returncode}: {run.stderr[-2000:]}")
    return outputs, run.stdout, seconds


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1600,1000"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def timed_filter(driver, script):
    """Runs `script` (which changes a filter) and returns the milliseconds until the page's filter
    pass is done: the script dispatches the event synchronously, so the time includes it."""
    return driver.execute_script("const t0 = performance.now();" + script + "; return performance.now() - t0;")


def measure_html(html_path, screenshot):
    driver = browser()
    try:
        started = time.perf_counter()
        driver.get(html_path.resolve().as_uri())
        while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") is None:
            if time.perf_counter() - started > 120:
                sys.exit("the page never finished drawing")
            time.sleep(0.02)
        load = time.perf_counter() - started
        # What the page itself measured from navigation start to the end of its drawing.
        drawn_ms = driver.execute_script("return performance.now()")
        search = timed_filter(driver, "const k = document.getElementById('f-kernel'); k.value = 'dot_small[int8#1]';"
                                      "k.dispatchEvent(new Event('input'))")
        clear = timed_filter(driver, "const k = document.getElementById('f-kernel'); k.value = '';"
                                     "k.dispatchEvent(new Event('input'))")
        target = timed_filter(driver, "document.querySelector('#f-targets input').click()")
        group_value = driver.execute_script(
            "const o = document.querySelectorAll('#f-group option'); return o.length > 1 ? o[1].value : ''")
        group = timed_filter(driver, f"const s = document.getElementById('f-group'); s.value = {json.dumps(group_value)};"
                                     "s.dispatchEvent(new Event('change', {bubbles: true}))")
        shown = driver.execute_script("return document.getElementById('f-shown').textContent")
        if screenshot:
            driver.save_screenshot(str(screenshot))
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        return {"load_s": load, "page_ms": drawn_ms, "search_ms": search, "clear_ms": clear,
                "target_ms": target, "group_ms": group, "group": group_value, "shown": shown, "errors": errors}
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", required=True, help="a JSON report of a real run (the demo's, say)")
    parser.add_argument("--cells", type=int, default=20000)
    parser.add_argument("--binary", default=str(ROOT / "build" / "triton-portcheck"))
    parser.add_argument("--screenshot", help="where to save the page after the group filter")
    args = parser.parse_args()
    for needed in (CHROMIUM, CHROMEDRIVER):
        if not os.access(needed, os.X_OK):
            sys.exit(f"{needed} is missing: apt-get install chromium chromium-driver")
    report = scaled_report(json.loads(Path(args.report).read_text()), args.cells)
    with tempfile.TemporaryDirectory(prefix="portcheck-html-scale-") as tmp:
        folder = Path(tmp)
        source = folder / "scaled.json"
        source.write_text(json.dumps(report))
        outputs, terminal, render_s = render(args.binary, source, folder)
        html = measure_html(outputs["html"], Path(args.screenshot) if args.screenshot else None)
        sizes = {name: path.stat().st_size for name, path in outputs.items()}
    mib = lambda b: f"{b / (1 << 20):.1f} MiB"  # noqa: E731
    print(f"{len(report['cells'])} cells, {len(report['rows'])} rows, {len(report['targets'])} targets")
    print(f"report (HTML + JSON + SARIF + terminal): {render_s:.2f} s; sizes: HTML {mib(sizes['html'])}, "
          f"JSON {mib(sizes['json'])}, SARIF {mib(sizes['sarif'])}; terminal matrix {len(terminal.splitlines())} lines")
    print(f"Chromium: loaded and drawn in {html['load_s']:.2f} s ({html['page_ms']:.0f} ms by the page's clock); "
          f"kernel search {html['search_ms']:.0f} ms, clearing it {html['clear_ms']:.0f} ms, "
          f"one target off {html['target_ms']:.0f} ms, failure group [{html['group']}] {html['group_ms']:.0f} ms "
          f"({html['shown']}); console errors: {len(html['errors'])}")
    if html["errors"]:
        sys.exit(f"browser errors: {html['errors'][:3]}")


if __name__ == "__main__":
    main()
