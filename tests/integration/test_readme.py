"""What the README promises about setting up: `make demo` builds only the tool, `make test` the
tool and the sanitizer build of every test, and the outputs
pasted into it (by scripts/update-readme-examples) hold no path of the machine that ran them."""
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO

BLOCKS = re.compile(r"<!-- BEGIN output: (\S+) -->\n(.*?)<!-- END output: \1 -->", re.S)


def paste_script():
    loader = importlib.machinery.SourceFileLoader("update_readme_examples",
                                                  str(REPO / "scripts" / "update-readme-examples"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def cmake_builds(goal, tmp_path):
    """The `cmake --build` commands `make GOAL` would run (make -n: printed, not run)."""
    dry = subprocess.run(["make", "-n", goal, f"BUILD={tmp_path / 'b'}", f"VENV={tmp_path / 'venv'}", "JOBS=2"],
                         cwd=REPO, capture_output=True, text=True, check=True)
    return [line.split() for line in dry.stdout.splitlines() if line.startswith("cmake --build")]


def test_make_demo_builds_the_tool_alone(tmp_path):
    build = str(tmp_path / "b")
    assert cmake_builds("demo", tmp_path) == [["cmake", "--build", build, "-j", "2", "--target", "triton-portcheck"]]
    # `make test` builds the tool there, and the unit tests and fuzzers in the sanitizer build.
    builds = cmake_builds("test", tmp_path)
    assert ["cmake", "--build", build, "-j", "2", "--target", "triton-portcheck"] in builds
    sanitizer = next(b for b in builds if b[2] == "build-asan")
    assert "unit_tests" in sanitizer and "fuzz_manifest" in sanitizer


@pytest.mark.parametrize("document, name", [(d, m.group(1)) for d in ("README.md", "docs/environments.md")
                                            for m in BLOCKS.finditer((REPO / d).read_text())])
def test_pasted_output_holds_no_build_machine_path(document, name):
    block = {m.group(1): m.group(2) for m in BLOCKS.finditer((REPO / document).read_text())}[name]
    assert block.strip(), f"{document}: the {name} block is empty: run scripts/update-readme-examples {name}"
    assert paste_script().absolute_paths(block) == []


def test_the_paste_script_makes_the_machines_paths_relative():
    script = paste_script()
    root, venv, home = Path("/srv/ci/checkout"), Path("/opt/envs/pc"), Path("/home/ci")
    output = ("triton 3.9.0 at /opt/envs/pc/lib/python3.11/site-packages/triton\n"
              "python 3.11.7 (/opt/envs/pc/bin/python)\n"
              "wrote /srv/ci/checkout/build/export/axpy/cuda_90/axpy.cubin\n"
              "created /home/ci/.cache/triton-portcheck/envs/3.8.0 (1.2 GiB)\n"
              "/srv/ci/checkout-other/x.py stays, and so does https://example.org/a/b\n")
    relative = script.relative_paths(output, root, venv, home)
    assert relative == ("triton 3.9.0 at .venv/lib/python3.11/site-packages/triton\n"
                        "python 3.11.7 (.venv/bin/python)\n"
                        "wrote build/export/axpy/cuda_90/axpy.cubin\n"
                        "created ~/.cache/triton-portcheck/envs/3.8.0 (1.2 GiB)\n"
                        "/srv/ci/checkout-other/x.py stays, and so does https://example.org/a/b\n")
    # What is left is caught before it is pasted.
    assert script.absolute_paths(relative) == ["/srv/ci/checkout-other/x.py"]


def test_the_faq_says_the_tool_is_not_an_official_triton_project():
    readme = (REPO / "README.md").read_text()
    faq = readme[readme.index("## FAQ"):]
    assert "**Is this an official Triton project?** No." in faq
    # Issue 42: the vendors whose GPUs it targets are named too, as the README's promise does.
    assert "not affiliated with, or endorsed\nby, the Triton project, OpenAI, NVIDIA or AMD" in faq


INSTALL_DOCUMENTS = ("README.md", "docs/install.md", "docs/ci.md")


def test_install_lines_use_one_marked_placeholder_defined_in_the_readme_and_no_release_tag():
    """A line a reader copies names what to replace (`<OWNER>`, defined once in the README), and
    no tag that no release process makes."""
    readme = (REPO / "README.md").read_text()
    assert readme.count("**`<OWNER>`** stands for") == 1
    for document in INSTALL_DOCUMENTS:
        text = (REPO / document).read_text()
        named = [line for line in text.splitlines()
                 if "github.com/" in line and "triton-portcheck" in line or "/triton-portcheck@" in line]
        assert named, f"{document} shows no install line"
        for line in named:
            assert "<OWNER>/triton-portcheck" in line, (document, line)
            assert not re.search(r"@v\d", line), (document, line)
        assert "your-org" not in text and "rev: v" not in text, document


@pytest.mark.compile  # it runs pytest with the .venv's python (which holds Triton), but none of the tests
def test_the_documented_quick_selection_needs_no_triton_and_takes_seconds(tmp_path):
    """CONTRIBUTING's `pytest -m "not compile"`: every test it selects runs with a python that has no
    Triton (a fresh venv), so none of them compiles, and together they take seconds, not minutes."""
    contributing = (REPO / "CONTRIBUTING.md").read_text()
    assert '-m "not compile"' in contributing
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PORTCHECK_PYTHON"))}
    env["PORTCHECK_PYTHON"] = str(bare / "bin" / "python")
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "pytest", str(REPO / "tests" / "integration"), "-m", "not compile",
                          "-q", "-p", "no:cacheprovider"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed, \d+ deselected", run.stdout), run.stdout[-500:]
    assert seconds < 180, f"{seconds:.0f} s"
