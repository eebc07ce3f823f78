"""The self-contained HTML report (`check --html`, `report X.json --html`), checked in a real
headless Chromium through Selenium: the DOM, the detail panel, the filters, a screenshot, and
hostile text (kernel names, messages, logs, paths) that must stay text.

Browser tests need the Debian packages `chromium` and `chromium-driver` and the Python package
`selenium` in the .venv; they are skipped, saying so, only when one of those is missing. The page's
script (src/report/assets/report.js) is linted with Debian's `eslint`, skipped likewise without it;
its style sheet is checked by Chromium's own CSS parser."""
import base64
import copy
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, cells_by_position, run_tool

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.access(p, os.X_OK)), None)
CHROMEDRIVER = "/usr/bin/chromedriver" if os.access("/usr/bin/chromedriver", os.X_OK) else None
HAVE_SELENIUM = importlib.util.find_spec("selenium") is not None
SCREENSHOT_COPY = Path("/tmp/portcheck-html-screenshot.png")

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=1</script>",
    '"><svg onload=window.__pwned=1>',
]

DATA_RE = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)


def missing_browser():
    missing = []
    if CHROMIUM is None:
        missing.append("chromium (apt-get install chromium)")
    if CHROMEDRIVER is None:
        missing.append("/usr/bin/chromedriver (apt-get install chromium-driver)")
    if not HAVE_SELENIUM:
        missing.append("selenium (pip install selenium)")
    return missing


needs_browser = pytest.mark.skipif(bool(missing_browser()),
                                   reason="browser tests need " + ", ".join(missing_browser()))


# ---------------------------------------------------------------- producing reports


def render(json_path, html_path, cwd):
    run = run_tool(["report", json_path, "--html", html_path], cwd=cwd, timeout=120)
    assert run.returncode in (0, 1), f"report --html failed ({run.returncode})\n{run.stdout}\n{run.stderr}"
    assert Path(html_path).is_file(), f"no HTML written\n{run.stdout}\n{run.stderr}"
    return Path(html_path)


def embedded(html_text):
    match = DATA_RE.search(html_text)
    assert match, "no <script type=application/json id=data> in the page"
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def demo_html(demo_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "demo.html"
    return render(demo_run.json_path, out, out.parent)


# ---------------------------------------------------------------- without a browser


@pytest.mark.slow
def test_check_html_matches_check_json(venv_python, demo_cache_home, tmp_path):
    """`check --html` and `--json` of one run carry the same report (the demo's cells from the
    demo run's cache: the pages are the subject, not the compiles)."""
    html, js = tmp_path / "demo.html", tmp_path / "demo.json"
    run = run_tool(["check", "--demo", "--python", venv_python, "--json", js, "--html", html],
                   cwd=tmp_path, timeout=900, TRITON_PORTCHECK_HOME=demo_cache_home)
    assert run.returncode == 1, run.stderr
    assert html.is_file(), f"check --html wrote nothing\n{run.stdout}\n{run.stderr}"
    data = embedded(html.read_text(encoding="utf-8"))
    assert data["report"] == json.loads(js.read_text())
    assert data["report"]["summary"]["from_cache"] == 81
    assert len(data["view"]["labels"]) == 81


@pytest.mark.slow
def test_page_is_self_contained_and_csp_names_the_script(demo_html, demo_run):
    text = demo_html.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>")
    assert embedded(text)["report"] == demo_run.report
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1 and text.count("<script") == 2
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text).group(1)
    assert "default-src 'none'" in csp
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp, "the CSP hash does not match the inline script"
    page = DATA_RE.sub("", text)
    for external in ("http://", "https://", " src=", " href=", "<link", "@import", "url("):
        assert external not in page, f"the page template names something to load: {external}"


# ---------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = missing_browser()
    if missing:
        pytest.skip("browser tests need " + ", ".join(missing))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1600,1000", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Chromium leaves a folder in TMPDIR per start; keep them inside pytest's own temporary tree.
    scratch = tmp_path_factory.mktemp("chromium")
    service = Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def open_page(driver, path):
    driver.get(Path(path).resolve().as_uri())
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if driver.execute_script("return document.body && document.body.getAttribute('data-ready')") is not None:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the page never finished drawing; browser log: {driver.get_log('browser')}")
    return driver


def browser_errors(driver):
    """Console messages at SEVERE level: script errors and CSP violations."""
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def td(driver, row, target):
    return driver.execute_script(
        "return [...document.querySelectorAll('#matrix td.cell')].find("
        "  td => td.parentElement.getAttribute('data-row') === arguments[0] &&"
        "        td.getAttribute('data-target') === arguments[1]) || null", row, target)


def rgb(value):
    nums = [int(x) for x in re.findall(r"\d+", value)[:3]]
    assert len(nums) == 3, value
    return nums


def terminal_labels(stdout, rows, targets):
    """(row, target) -> label, read off the terminal matrix `check` printed."""
    labels = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in rows and len(parts) == len(targets) + 1:
            labels.update({(parts[0], t): label for t, label in zip(targets, parts[1:])})
    return labels


@needs_browser
@pytest.mark.slow
def test_matrix_cells_labels_and_colours(browser, demo_html, demo_run):
    report = demo_run.report
    open_page(browser, demo_html)
    assert browser.execute_script("return document.body.getAttribute('data-ready')") == "81"
    cells = css(browser, "#matrix tbody td.cell")
    assert len(cells) == 81
    assert [th.text for th in css(browser, "#matrix thead th")][1:] == report["targets"]
    assert [tr.get_attribute("data-row") for tr in css(browser, "#matrix tbody tr")] == report["rows"]

    expected = terminal_labels(demo_run.stdout, set(report["rows"]), report["targets"])
    assert len(expected) == 81, "could not read the terminal matrix"
    by_pos = cells_by_position(report)
    got = browser.execute_script(
        "return [...document.querySelectorAll('#matrix tbody td.cell')].map(td => ["
        "  td.parentElement.getAttribute('data-row'), td.getAttribute('data-target'), td.textContent,"
        "  td.className, getComputedStyle(td).backgroundColor])")
    seen = {}
    for row, target, label, classes, background in got:
        assert label == expected[(row, target)], (row, target)
        status = by_pos[(row, target)]["status"]
        assert f"s-{status}" in classes.split(), (row, target, classes)
        seen.setdefault(status, set()).add(background)
    assert set(seen) == {"ok", "failed"}
    # One colour per status: green for ok, red for failed.
    assert len(seen["ok"]) == 1 and len(seen["failed"]) == 1
    r, g, b = rgb(next(iter(seen["ok"])))
    assert g > r and g > b, f"ok cells are not green: {seen['ok']}"
    r, g, b = rgb(next(iter(seen["failed"])))
    assert r > g and r > b, f"failed cells are not red: {seen['failed']}"

    summary = browser.execute_script("return document.getElementById('summary').textContent")
    assert summary.startswith("81 cells: 63 ok, 18 failed (18 new)")
    header = browser.execute_script("return document.getElementById('header').textContent")
    assert report["environment"]["triton"]["version"] in header and report["environment"]["host"] in header
    assert report["disclaimer"].startswith("Compile-only check, nothing was run on a GPU:") and report["disclaimer"] in header
    groups = [li.get_attribute("data-group") for li in css(browser, "#groups li.group")]
    assert groups == ["A", "B", "C", "D", "E"]
    assert not browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_clicking_a_failing_cell_shows_its_details(browser, demo_html, demo_run):
    cell = cells_by_position(demo_run.report)[("gamma_ratio", "hip:gfx942")]
    open_page(browser, demo_html)
    assert "Click a cell" in css(browser, "#detail")[0].text
    td(browser, "gamma_ratio", "hip:gfx942").click()
    panel = css(browser, "#detail")[0]
    assert css(browser, "#d-title")[0].text == "gamma_ratio on hip:gfx942"
    assert "failed" in css(browser, "#d-status")[0].text
    assert css(browser, "#d-message")[0].get_attribute("textContent") == cell["message"]
    assert css(browser, "#d-log")[0].get_attribute("textContent") == cell["log"]
    assert css(browser, "#d-log")[0].tag_name == "pre"
    text = panel.get_attribute("textContent")
    for fragment in (cell["fingerprint"], cell["kind"], cell["stage"], "compiled in this run",
                     f"{cell['error_source']['file']}:{cell['error_source']['line']}", cell["why"][:40]):
        assert fragment in text, fragment
    links = css(browser, "#d-link a")
    assert len(links) == 1 and links[0].get_attribute("href") == cell["link"]
    assert css(browser, "#d-stages tr")  # the per-stage times
    assert "selected" in td(browser, "gamma_ratio", "hip:gfx942").get_attribute("class").split()
    # The command that writes this cell's reproducer, for the run's manifest (here the demo).
    assert css(browser, "#d-repro")[0].get_attribute("textContent") == (
        "triton-portcheck repro gamma_ratio -t hip:gfx942 --demo")

    # An ok cell: metadata, sizes, resources, no log.
    ok = cells_by_position(demo_run.report)[("axpy", "cuda:90")]
    td(browser, "axpy", "cuda:90").click()
    assert css(browser, "#d-title")[0].text == "axpy on cuda:90"
    assert not css(browser, "#d-log") and not css(browser, "#d-message") and not css(browser, "#d-repro")
    assert ok["metadata"]["name"] in css(browser, "#d-metadata")[0].get_attribute("textContent")
    assert str(ok["sizes"]["cubin"]) in css(browser, "#d-sizes")[0].get_attribute("textContent")
    assert str(ok["resources"]["registers"]) in css(browser, "#d-resources")[0].get_attribute("textContent")
    assert [r.text.split()[0] for r in css(browser, "#d-stages tr")] == ["frontend", "ttir", "ttgir", "llir",
                                                                           "ptx", "cubin"]
    # The footnote's target buttons open the cell too.
    browser.execute_script("document.querySelector('#group-C button').click()")
    assert css(browser, "#d-title")[0].text == "scatter_rows on cuda:90"
    assert not browser_errors(browser)


def visible_rows(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#matrix tbody tr')]"
        "  .filter(tr => tr.offsetParent !== null).map(tr => tr.getAttribute('data-row'))")


@needs_browser
@pytest.mark.slow
def test_filters_hide_rows_columns_and_cells(browser, demo_html, demo_run):
    report = demo_run.report
    open_page(browser, demo_html)
    assert visible_rows(browser) == report["rows"]

    kernel = css(browser, "#f-kernel")[0]
    kernel.send_keys("DOT_small")
    assert visible_rows(browser) == ["dot_small[fp16]", "dot_small[int8]"]
    assert "showing 2 of 9 rows" in css(browser, "#f-shown")[0].text
    kernel.clear()
    browser.execute_script("document.getElementById('f-kernel').dispatchEvent(new Event('input'))")
    assert visible_rows(browser) == report["rows"]

    # Status: failures only. Rows without one disappear, ok cells are hidden.
    css(browser, "#f-status input[value=ok]")[0].click()
    failing = [r for r in report["rows"]
               if any(c["row"] == r and c["status"] == "failed" for c in report["cells"])]
    assert visible_rows(browser) == failing
    assert not td(browser, "gamma_ratio", "cuda:75").is_displayed()
    assert td(browser, "gamma_ratio", "hip:gfx942").is_displayed()

    # Target: only cuda:75 among the failures; its column alone stays.
    css(browser, "#f-targets button")[1].click()  # "none"
    css(browser, "#f-targets input[value='cuda:75']")[0].click()
    assert visible_rows(browser) == ["quantize_fp8", "dot_small[int8]", "rowsum_blockptr"]
    shown_heads = [th.text for th in css(browser, "#matrix thead th") if th.is_displayed()]
    assert shown_heads == ["kernel", "cuda:75"]
    assert not td(browser, "rowsum_blockptr", "cuda:80").is_displayed()
    assert not browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_failure_group_filter_shows_only_that_groups_cells(browser, demo_html, demo_run):
    from selenium.webdriver.support.ui import Select
    report = demo_run.report
    open_page(browser, demo_html)
    options = [o.get_attribute("value") for o in css(browser, "#f-group option")]
    letters = sorted({c["group"] for c in report["cells"] if c.get("group")})
    assert options == [""] + letters
    for letter in letters:
        Select(css(browser, "#f-group")[0]).select_by_value(letter)
        members = [c for c in report["cells"] if c.get("group") == letter]
        assert visible_rows(browser) == [r for r in report["rows"] if any(c["row"] == r for c in members)]
        shown = [(td.get_attribute("data-target"), td.find_element("xpath", "..").get_attribute("data-row"))
                 for td in css(browser, "#matrix tbody td.cell") if td.is_displayed()]
        assert sorted(shown) == sorted((c["target"], c["row"]) for c in members)
    Select(css(browser, "#f-group")[0]).select_by_value("")
    assert visible_rows(browser) == report["rows"]
    assert not browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_screenshot(browser, demo_html, tmp_path):
    open_page(browser, demo_html)
    td(browser, "dot_small[int8]", "cuda:75").click()
    shot = tmp_path / "portcheck-html.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, "screenshot missing or blank"
    shutil.copyfile(shot, SCREENSHOT_COPY)
    assert not browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_unknown_cell_fields_are_shown_generically(browser, demo_html, tmp_path):
    """Fields a later schema adds to a cell (say `predicted`, `launch`) appear as key/value tables."""
    text = demo_html.read_text(encoding="utf-8")
    data = embedded(text)
    index = next(i for i, c in enumerate(data["report"]["cells"]) if c["row"] == "axpy" and c["target"] == "cuda:80")
    data["report"]["cells"][index]["predicted"] = {"occupancy": 0.75, "limits": {"registers": 64, "by": "<b>x</b>"}}
    data["report"]["cells"][index]["launch"] = {"ok": True, "grid": [4, 1, 1]}
    blob = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    page = tmp_path / "extra.html"
    page.write_text(DATA_RE.sub(lambda _: f'<script type="application/json" id="data">{blob}</script>', text),
                    encoding="utf-8")
    open_page(browser, page)
    td(browser, "axpy", "cuda:80").click()
    extra = css(browser, "#d-extra")[0].get_attribute("textContent")
    for fragment in ("occupancy", "0.75", "limits", "registers", "64", "<b>x</b>", "grid", "4, 1, 1", "true"):
        assert fragment in extra, fragment
    extras = [h.get_attribute("data-extra") for h in css(browser, "#detail h3[data-extra]")]
    assert {"launch", "predicted"} <= set(extras), extras
    assert not css(browser, "#detail b")
    assert not browser_errors(browser)


def hostile_report(report):
    """The demo's report with every piece of compiler and user text replaced by markup."""
    report = copy.deepcopy(report)
    renames = {}
    for i, row in enumerate(["gamma_ratio", "quantize_fp8", "scatter_rows", "rowsum_blockptr"]):
        renames[row] = row + PAYLOADS[i]
    report["rows"] = [renames.get(r, r) for r in report["rows"]]
    report["targets"][0] = report["targets"][0] + PAYLOADS[3]
    for k, c in enumerate(report["cells"]):
        payload = PAYLOADS[k % len(PAYLOADS)]
        if c["row"] in renames:
            c["kernel"] = c["row"] = renames[c["row"]]
        if c["target"] == "cuda:75":
            c["target"] = report["targets"][0]
        c["source"] = {"file": f"/home/{payload}/kernels.py", "line": 7}
        c["metadata"] = {"name": payload, payload: {"nested": payload}}
        if c["status"] != "ok":
            c["message"] = "error: " + payload
            c["log"] = f"Traceback\n{payload}\n" + "\n".join(PAYLOADS) + "\n"
            c["why"] = "because " + payload
            c["link"] = "javascript:window.__pwned=1"
            c["error_source"] = {"file": f"/tmp/{payload}.py", "line": 3}
            c["pass"] = payload
    report["environment"]["host"] = PAYLOADS[0]
    report["environment"]["options"]["manifest"] = PAYLOADS[2]
    report["environment"]["triton"]["path"] = PAYLOADS[1]
    return report


@needs_browser
@pytest.mark.slow
def test_hostile_text_stays_text(browser, demo_run, tmp_path):
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(hostile_report(demo_run.report)))
    html = render(hostile, tmp_path / "hostile.html", tmp_path)
    raw = html.read_text(encoding="utf-8")
    assert raw.count("<script") == 2 and "<img" not in raw and "<svg" not in raw

    open_page(browser, html)
    time.sleep(0.3)  # an onerror/onload would have fired by now
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    assert browser.execute_script("return document.scripts.length") == 2
    assert len(css(browser, "#matrix tbody td.cell")) == 81

    rows = [tr.get_attribute("data-row") for tr in css(browser, "#matrix tbody tr")]
    for payload in PAYLOADS:
        assert any(r.endswith(payload) for r in rows), payload
    heads = [th.get_attribute("textContent") for th in css(browser, "#matrix thead th")]
    assert heads[1] == "cuda:75" + PAYLOADS[3]
    assert PAYLOADS[0] in css(browser, "#header")[0].get_attribute("textContent")
    assert PAYLOADS[2] in css(browser, "#header")[0].get_attribute("textContent")

    cells = browser.execute_script(
        "return [...document.querySelectorAll('#matrix td.cell[data-idx]')]"
        "  .filter(td => td.getAttribute('data-status') !== 'ok').map(td => Number(td.getAttribute('data-idx')))")
    assert len(cells) == 18
    report = json.loads(hostile.read_text())
    for index in cells:
        browser.execute_script(
            "document.querySelector('#matrix td.cell[data-idx=\"' + arguments[0] + '\"]').click()", index)
        cell = report["cells"][index]
        assert css(browser, "#d-title")[0].get_attribute("textContent") == f"{cell['row']} on {cell['target']}"
        assert css(browser, "#d-message")[0].get_attribute("textContent") == cell["message"]
        assert css(browser, "#d-log")[0].get_attribute("textContent") == cell["log"]
        assert css(browser, "#d-why")[0].get_attribute("textContent") == cell["why"]
        # Not https: shown, never a link.
        assert not css(browser, "#d-link a")
        assert css(browser, "#d-link")[0].get_attribute("textContent") == "javascript:window.__pwned=1"
        panel = css(browser, "#detail")[0].get_attribute("textContent")
        assert cell["error_source"]["file"] in panel and cell["source"]["file"] in panel
        # Visible on screen as the literal text, too.
        assert cell["message"] in css(browser, "#d-message")[0].text
    for payload in PAYLOADS:
        assert payload in css(browser, "#groups")[0].get_attribute("textContent")
    # The footnotes' links are not links either.
    assert not css(browser, "#groups a")
    time.sleep(0.2)
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    # No script error, and no CSP violation (which would mean markup got in and tried to run).
    assert not browser_errors(browser), browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_thousands_of_cells_draw_fast(browser, demo_run, tmp_path):
    report = copy.deepcopy(demo_run.report)
    copies = 25  # 225 rows x 9 targets
    base_cells = report["cells"]
    report["cells"], rows = [], []
    for k in range(copies):
        for row in demo_run.report["rows"]:
            rows.append(f"{row}#{k}")
        for c in base_cells:
            c = dict(c, row=f"{c['row']}#{k}", kernel=f"{c['kernel']}#{k}")
            report["cells"].append(c)
    report["rows"] = rows
    big = tmp_path / "big.json"
    big.write_text(json.dumps(report))
    html = render(big, tmp_path / "big.html", tmp_path)
    started = time.monotonic()
    open_page(browser, html)
    seconds = time.monotonic() - started
    assert browser.execute_script("return document.body.getAttribute('data-ready')") == str(len(report["cells"]))
    assert len(css(browser, "#matrix tbody td.cell")) == 2025
    assert seconds < 10, f"2025 cells took {seconds:.1f} s to load and draw"
    started = time.monotonic()
    css(browser, "#f-kernel")[0].send_keys("rowsum")
    assert len(visible_rows(browser)) == copies
    assert time.monotonic() - started < 5
    assert not browser_errors(browser)


@needs_browser
@pytest.mark.slow
def test_stylesheet_parses_in_chromium(browser, demo_html):
    """The style (src/report/assets/report.css) read by a real CSS parser: a rule with a selector
    Chromium cannot parse is dropped, a declaration it does not support is ignored, silently."""
    text = (REPO / "src" / "report" / "assets" / "report.css").read_text()
    blocks = re.findall(r"\{([^{}]*)\}", text)  # the innermost blocks: one per style rule
    declarations = [[part.strip() for part in d.split(":", 1)] for b in blocks for d in b.split(";") if d.strip()]
    open_page(browser, demo_html)
    unsupported = browser.execute_script(
        "return arguments[0].filter(([p, v]) => !CSS.supports(p, v)).map(d => d.join(': '))", declarations)
    assert not unsupported, f"declarations Chromium does not support: {unsupported}"
    parsed = browser.execute_script("""
        let n = 0;
        const walk = rules => { for (const r of rules) { if (r instanceof CSSStyleRule) ++n; if (r.cssRules) walk(r.cssRules); } };
        walk(document.styleSheets[0].cssRules);
        return n;""")
    assert parsed == len(blocks), f"Chromium kept {parsed} of the stylesheet's {len(blocks)} rules"


# ---------------------------------------------------------------- the page's script, linted

ASSETS = REPO / "src" / "report" / "assets"
ESLINT = shutil.which("eslint")
needs_eslint = pytest.mark.skipif(ESLINT is None, reason="the lint test needs eslint (apt-get install eslint)")


def eslint(path):
    """eslint with the script's own configuration only (no user's or editor's file joins in)."""
    # Debian's eslint and its modules are in /usr/share/nodejs, where Debian's node looks and a
    # node from elsewhere (NodeSource's, which also satisfies the package) does not.
    node_path = os.pathsep.join(p for p in (os.environ.get("NODE_PATH"), "/usr/share/nodejs") if p)
    # Run from the file's folder: eslint 6 throws on a path outside its working folder.
    return subprocess.run([ESLINT, "--no-eslintrc", "--config", ASSETS / ".eslintrc.json",
                           "--max-warnings", "0", "--format", "unix", Path(path).name],
                          cwd=Path(path).parent, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NODE_PATH": node_path})


@needs_eslint
def test_report_script_passes_eslint():
    run = eslint(ASSETS / "report.js")
    assert run.returncode == 0, f"eslint found problems in report.js:\n{run.stdout}{run.stderr}"


@needs_eslint
def test_eslint_fails_on_a_planted_finding(tmp_path):
    """The test above would pass if eslint read no rules at all: a copy with two findings fails."""
    planted = tmp_path / "report.js"
    planted.write_text((ASSETS / "report.js").read_text() + "function unused() { return undeclared; }\n")
    run = eslint(planted)
    assert run.returncode == 1, f"eslint passed a script with findings:\n{run.stdout}{run.stderr}"
    assert "'unused' is defined but never used" in run.stdout, run.stdout
    assert "'undeclared' is not defined" in run.stdout, run.stdout
