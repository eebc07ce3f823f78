"""Hostile text in every output format (issue 14, item 8).

A compiler message, a row name or any string of a crafted JSON report is text an attacker may
control. Each class of injection is one string of tests/unit/data/hostile_strings.json (the unit
tests use the same file); here a real one-cell report is filled with them and rendered again with
`report` in every format. Nothing may act: no escape sequence on the terminal, no line a GitHub
runner takes for a workflow command, no active link, image, @mention or HTML in the Markdown (as
GitHub's own renderer, cmark-gfm, renders it), well-formed XML and JSON.
"""
import copy
import html
import json
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, axpy_manifest, require_binary, run_tool, tool_env, write_manifest

HOSTILE = {name: text for name, text in
           json.loads((REPO / "tests" / "unit" / "data" / "hostile_strings.json").read_text()).items()
           if not name.startswith("_")}


@pytest.fixture(scope="module")
def hostile_report(venv_python, tmp_path_factory):
    """A real report of one axpy cell, its cell copied once per hostile string: the string as its
    row name, message, stage, why, log and launch warning."""
    work = tmp_path_factory.mktemp("injection")
    write_manifest(work, axpy_manifest(["cuda:80"]))
    run = run_tool(["check", "--python", venv_python, "--json", work / "real.json"], cwd=work)
    assert run.returncode == 0, run.stderr
    report = json.loads((work / "real.json").read_text())
    [real] = report["cells"]
    report["cells"], report["rows"] = [], []
    for n, text in enumerate(HOSTILE.values()):
        cell = copy.deepcopy(real)
        cell.update(row=text, kernel=text, status="failed", kind="frontend-error", new=True, message=text,
                    stage=text, why=text, log=text, fingerprint=f"{0xabc000 + n:012x}")
        cell["launch"]["problems"] = [text]
        report["cells"].append(cell)
        report["rows"].append(text)
    path = work / "hostile.json"
    path.write_text(json.dumps(report))
    return work, path, report


def render(work, report_path, *flags, **env):
    """`report` with raw bytes back: the terminal output is what is checked, undecoded."""
    proc = subprocess.run([str(require_binary()), "report", str(report_path), *map(str, flags)], cwd=work,
                          env=tool_env(**env), capture_output=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # new failures, and nothing worse
    return proc.stdout, proc.stderr


def log_lines(raw):
    """Lines as the GitHub runner reads a step's output (.NET ReadLine: CR, LF and CRLF end one)."""
    return re.split(r"\r\n|\r|\n", raw.decode("utf-8", "replace"))


def assert_inert_on_a_terminal(raw):
    controls = [b for b in raw if (b < 0x20 and b != 0x0A) or b == 0x7F]
    assert not controls, f"control bytes reach the terminal: {sorted(set(controls))}"
    text = raw.decode("utf-8")  # valid UTF-8 throughout
    assert not re.search("[\x80-\x9f\u202a-\u202e\u2066-\u2069]", text)


def assert_no_workflow_command(raw, allowed=()):
    for line in log_lines(raw):
        if line in allowed:
            continue
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


def test_terminal_output_shows_controls_escaped_and_starts_no_workflow_command(hostile_report):
    work, path, _ = hostile_report
    out, err = render(work, path)
    assert_inert_on_a_terminal(out)
    assert_inert_on_a_terminal(err)
    assert_no_workflow_command(out)
    text = out.decode()
    assert "\\e[2J\\e]0;pwned\\x07\\e[31mred\\e[0m\\rover\\x08write\\x00nul" in text
    assert "\\::warning file=x.py,line=1::a name" in text  # a row name that starts a line
    # The whole report is there: a NUL in a message used to cut the output short.
    assert "Compile-only check" in text and f"{len(HOSTILE)} cells" in text


@pytest.mark.parametrize("flag", ["--junit", "--markdown", "--json", "--sarif", "--gitlab", "--html"])
def test_a_report_on_standard_output_starts_no_workflow_command(hostile_report, flag):
    # Issue 28: `report F --junit -` wrote compiler text with its newlines, so a line of the CI log
    # could begin with `::warning::`.
    work, path, _ = hostile_report
    out, _ = render(work, path, flag, "-")
    assert_no_workflow_command(out)
    if flag in ("--json", "--sarif", "--gitlab"):  # the same JSON as the file holds
        written = work / f"written{flag}"
        render(work, path, flag, written)
        assert json.loads(out) == json.loads(written.read_text())


def unescape_property(value):
    # The runner's UnescapeProperty, in its order.
    for token, escaped in (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25")):
        value = value.replace(escaped, token)
    return value


def unescape_data(value):
    for token, escaped in (("\r", "%0D"), ("\n", "%0A"), ("%", "%25")):
        value = value.replace(escaped, token)
    return value


def test_github_annotations_are_one_command_per_new_failure(hostile_report, tmp_path):
    work, path, report = hostile_report
    summary = tmp_path / "summary.md"
    out, err = render(work, path, "--github", GITHUB_STEP_SUMMARY=summary, GITHUB_WORKSPACE=work)
    commands = [line for line in log_lines(out) if line.lstrip().startswith("::")]
    # Exactly the annotations: the matrix printed before them starts no command of its own.
    assert len(commands) == len(report["cells"]), "\n".join(commands)
    assert_no_workflow_command(out, allowed=set(commands))
    assert_inert_on_a_terminal(out)
    messages = set()
    for command in commands:
        # As the runner parses it (ActionCommand.TryParseV2).
        assert command.startswith("::error ")
        end = command.index("::", 2)
        properties = dict(p.split("=", 1) for p in command[len("::error "):end].split(","))
        assert set(properties) <= {"file", "line", "title"}, properties
        title = unescape_property(properties["title"])
        assert " on cuda:80: frontend-error in " in title
        messages.add(unescape_data(command[end + 2:]))
    assert "100% done %0A::error::x, a:b" in messages
    assert "first\n::warning::injected\n  ::add-mask::secret\\r::error file=x::cr\n\u00a0::stop-commands::tok\n" \
           "old ##[error]v1" in messages


def test_markdown_has_no_active_link_image_mention_or_html(hostile_report, tmp_path):
    try:
        import cmarkgfm  # GitHub's own Markdown (cmark-gfm); in make test-venv's packages
    except ImportError:
        pytest.fail("cmarkgfm is missing: `make test-venv` installs it (pip install cmarkgfm)")
    work, path, report = hostile_report
    summary = tmp_path / "summary.md"
    render(work, path, "--markdown", tmp_path / "m.md", "--github", GITHUB_STEP_SUMMARY=summary,
           GITHUB_WORKSPACE=work)
    for markdown in ((tmp_path / "m.md").read_text(), summary.read_text()):
        assert_inert_on_a_terminal(markdown.encode())
        rendered = cmarkgfm.github_flavored_markdown_to_html(markdown)
        tags = set(re.findall(r"<([a-z0-9]+)", rendered))
        assert tags <= {"h3", "table", "thead", "tbody", "tr", "th", "td", "code", "p", "strong", "em", "ul",
                        "li", "br"}, tags
        # Text outside code: no @mention or bare URL for GitHub's own filters to link.
        prose = html.unescape(re.sub(r"<code>.*?</code>", "", rendered, flags=re.S))
        assert not re.search(r"@[A-Za-z0-9]", prose), prose
        assert not re.search(r"https?:/|www\.", prose), prose  # what GitHub would autolink
        # One table row per report row, each with its two columns, however many '|' a name has.
        rows = re.findall(r"<tr>(.*?)</tr>", rendered, flags=re.S)
        assert len(rows) == 1 + len(report["rows"])
        assert all(len(re.findall(r"<t[dh]", row)) == 2 for row in rows)
        # Each message is shown whole, verbatim, in code (newlines as spaces, controls escaped).
        codes = {html.unescape(c) for c in re.findall(r"<code>(.*?)</code>", rendered, flags=re.S)}
        assert HOSTILE["javascript_link"] in codes and HOSTILE["image"] in codes
        assert HOSTILE["backticks"] in codes


def test_xml_and_json_formats_stay_well_formed(hostile_report, tmp_path):
    work, path, report = hostile_report
    files = {name: tmp_path / f"r.{name}" for name in ("junit", "sarif", "gitlab", "html")}
    render(work, path, *[arg for name, file in files.items() for arg in (f"--{name}", file)])
    junit = ET.fromstring(files["junit"].read_bytes())
    assert len(junit.findall(".//failure")) == len(report["cells"])
    sarif = json.loads(files["sarif"].read_text())
    # SARIF and GitLab carry plain text (no Markdown field), JSON-escaped: the message stays whole.
    assert any(r["message"]["text"].endswith(HOSTILE["terminal"]) for r in sarif["runs"][0]["results"])
    assert len(json.loads(files["gitlab"].read_text())) == len(report["cells"])
    page = files["html"].read_text()
    assert "<script>alert" not in page and "<img src=x" not in page


def test_diff_output_shows_controls_escaped(hostile_report):
    work, path, _ = hostile_report
    proc = subprocess.run([str(require_binary()), "diff", str(work / "real.json"), str(path)], cwd=work,
                          env=tool_env(), capture_output=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert_inert_on_a_terminal(proc.stdout)
    assert_no_workflow_command(proc.stdout)
    assert b"\\e[2J" in proc.stdout  # the names are there, escaped


def test_an_error_is_one_printable_line(tmp_path):
    """An error quoting hostile text (here a file name) stays one line with no control byte."""
    name = "no\x1b[2Jsuch\n::warning::x.toml"
    proc = subprocess.run([str(require_binary()), "check", "-m", name], cwd=tmp_path, env=tool_env(),
                          capture_output=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count(b"\n") == 1, proc.stderr
    assert_inert_on_a_terminal(proc.stderr)
    assert b"no\\e[2Jsuch\\n::warning::x.toml" in proc.stderr
