"""`capture --as`: host code that picks launch options by vendor is run once per device persona,
and `check` gives each target the rows its own vendor's host code launches (docs/capture.md)."""
import json
import shutil
from pathlib import Path
import textwrap
import xml.etree.ElementTree as ET

import pytest

from conftest import run_tool
from test_capture import capture, copy_sample, rows_of
import test_html
from test_html import browser_errors, css, needs_browser, open_page, td

browser = test_html.browser  # its Chromium fixture, shared by this module's browser test

BOTH = "cuda:90,hip:gfx942"


@pytest.fixture(scope="module")
def persona_capture(tmp_path_factory, venv_python):
    pkg = copy_sample(tmp_path_factory.mktemp("personas"))
    run = capture(pkg, venv_python, "--mode", "record", "--as", BOTH)
    assert run.returncode == 0, run.stderr
    return pkg, run


def test_each_persona_gets_the_options_its_host_code_picks(persona_capture):
    pkg, run = persona_capture
    assert "capturing (record mode, as cuda:90)" in run.stderr
    assert "capturing (record mode, as hip:gfx942)" in run.stderr
    assert "38 distinct launch(es) in 2 runs (as cuda:90, hip:gfx942) of 7 kernel(s) -> 20 row(s)" in run.stderr
    rows = rows_of(pkg / "portcheck.toml")
    # sample_pkg.kernels.row_scale: 32 warps and 2048-wide tiles on NVIDIA (asked of Triton's
    # active driver and torch.version.hip), 16 warps and 1024 on AMD's 64-wide wavefronts.
    nvidia = rows["row_scale_kernel[BLOCK_N=2048]"]
    amd = rows["row_scale_kernel[BLOCK_N=1024]"]
    assert (nvidia["options"], nvidia["captured_as"]) == ({"num_warps": 32}, ["cuda:90"])
    assert (amd["options"], amd["captured_as"]) == ({"num_warps": 16}, ["hip:gfx942"])
    # Every other launch was the same under both: one row, shared, saying so.
    shared = {name: row["captured_as"] for name, row in rows.items() if not name.startswith("row_scale")}
    assert len(shared) == 18
    assert set(map(tuple, shared.values())) == {("cuda:90", "hip:gfx942")}


def test_check_compiles_each_row_for_its_own_vendor_and_nothing_fails(persona_capture, venv_python):
    pkg, _ = persona_capture
    run = run_tool(["check", "--python", venv_python, "-t", "cuda:90,hip:gfx942,cuda:80", "--json",
                    "report.json", "--no-cache"], cwd=pkg, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    cells = run.json(pkg / "report.json")["cells"]
    where = {(c["row"], c["target"]) for c in cells}
    assert ("row_scale_kernel[BLOCK_N=2048]", "cuda:90") in where
    assert ("row_scale_kernel[BLOCK_N=2048]", "cuda:80") in where
    assert ("row_scale_kernel[BLOCK_N=1024]", "hip:gfx942") in where
    assert ("row_scale_kernel[BLOCK_N=2048]", "hip:gfx942") not in where
    assert ("row_scale_kernel[BLOCK_N=1024]", "cuda:90") not in where
    assert len(cells) == 18 * 3 + 2 + 1
    assert {c["status"] for c in cells} == {"ok"}
    assert all(c["host_choices_of"] == [] for c in cells)
    assert "- : not checked on that target" in run.stdout


@pytest.fixture(scope="module")
def one_vendor_check(tmp_path_factory, venv_python):
    """Captured as cuda:90 only (the default), row_scale, checked for both vendors in every format."""
    pkg = copy_sample(tmp_path_factory.mktemp("one-vendor"))
    run = capture(pkg, venv_python, "--mode", "record", pytest_args=["-k", "row_scale"])
    assert run.returncode == 0, run.stderr
    assert rows_of(pkg / "portcheck.toml")["row_scale_kernel"]["captured_as"] == ["cuda:90"]
    run = run_tool(["check", "--python", venv_python, "-t", BOTH, "--json", "r.json", "--junit", "j.xml",
                    "--sarif", "s.sarif", "--markdown", "m.md", "--html", "h.html", "--gitlab", "g.json"],
                   cwd=pkg, timeout=600)
    return pkg, run


def test_one_vendors_choices_on_the_other_are_marked_in_every_format(one_vendor_check):
    """row_scale's 32 warps need 2,048 threads on hip:gfx942: reported, but as another vendor's
    host choices, never as a new failure."""
    pkg, run = one_vendor_check
    assert run.returncode == 0, run.stdout + run.stderr  # not new: the run passes
    cells = {c["target"]: c for c in run.json(pkg / "r.json")["cells"]}
    amd = cells["hip:gfx942"]
    assert (amd["status"], amd["kind"], amd["new"]) == ("launch", "launch-limit", False)
    assert amd["host_choices_of"] == ["cuda:90"]
    assert "needs 2048 threads per block" in amd["message"]
    assert (cells["cuda:90"]["status"], cells["cuda:90"]["host_choices_of"]) == ("ok", [])

    note = "these options are what cuda:90's host code chose"
    assert "launch?" in run.stdout and note in run.stdout.replace("\n", " ").replace("  ", " ")
    assert "0 new" in run.stdout
    case = next(c for c in ET.parse(pkg / "j.xml").iter("testcase") if "hip:gfx942" in c.get("name"))
    skipped = case.find("skipped")
    assert skipped is not None and note in skipped.get("message")
    results = json.loads((pkg / "s.sarif").read_text())["runs"][0]["results"]
    assert [(r["level"], note in r["message"]["text"]) for r in results] == [("note", True)]
    markdown = (pkg / "m.md").read_text()
    assert "⭕ launch?" in markdown and "cuda\\:⁠90\\'s host code chose" in markdown
    gitlab = json.loads((pkg / "g.json").read_text())
    assert [(i["severity"], note in i["description"]) for i in gitlab] == [("minor", True)]
    assert '"host_choices_of":["cuda:90"]' in (pkg / "h.html").read_text()


@needs_browser
def test_the_html_detail_says_whose_choices_they_are(browser, one_vendor_check):
    pkg, _ = one_vendor_check
    open_page(browser, pkg / "h.html")
    assert td(browser, "row_scale_kernel", "hip:gfx942").text.startswith("launch?")
    td(browser, "row_scale_kernel", "hip:gfx942").click()
    status = css(browser, "#d-fields")[0].get_attribute("textContent")
    assert "not new: these options are what cuda:90\u2019s host code chose" in status, status
    assert "records what hip:gfx942 is launched with" in status
    assert not browser_errors(browser)


PROBE = textwrap.dedent('''\
    """Asks what host code asks, writes the answers, then launches a kernel."""
    import json, sys
    import torch, triton, triton.language as tl
    from triton.runtime import driver

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    target = driver.active.get_current_target()
    props = torch.cuda.get_device_properties(0)
    answers = {
        "target": [target.backend, target.arch, target.warp_size],
        "triton": driver.active.utils.get_device_properties(0),
        "torch_device": str(driver.active.get_active_torch_device()),
        "capability": list(torch.cuda.get_device_capability()),
        "name": torch.cuda.get_device_name(),
        "props": [props.name, props.multi_processor_count, props.warp_size, props.gcnArchName,
                  props.shared_memory_per_block_optin],
        "hip": torch.version.hip, "cuda": torch.version.cuda,
        "available": torch.cuda.is_available(), "count": torch.cuda.device_count(),
    }
    with open(f"{sys.argv[1]}/{target.backend}.json", "w") as f:
        json.dump(answers, f)
    k[(1, )](torch.empty(64), BLOCK=64)
    ''')


@pytest.mark.parametrize("mode", ["record", "interpret"])
def test_what_host_code_is_told_under_each_persona(tmp_path, venv_python, mode):
    (tmp_path / "probe.py").write_text(PROBE)
    run = run_tool(["capture", "--mode", mode, "--as", "cuda:80,hip:gfx942", "--", venv_python, "probe.py",
                    str(tmp_path)], cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    nvidia = json.loads((tmp_path / "cuda.json").read_text())
    amd = json.loads((tmp_path / "hip.json").read_text())
    assert nvidia["target"] == ["cuda", 80, 32] and amd["target"] == ["hip", "gfx942", 64]
    assert nvidia["capability"] == [8, 0] and amd["capability"] == [9, 4]
    assert nvidia["name"] == "NVIDIA A100-SXM4-80GB" and amd["name"] == "AMD Instinct MI300X"
    assert nvidia["props"] == ["NVIDIA A100-SXM4-80GB", 108, 32, "NVIDIA CUDA GPU", 166912]
    assert amd["props"] == ["AMD Instinct MI300X", 304, 64, "gfx942:sramecc+:xnack-", 65536]
    assert nvidia["triton"]["multiprocessor_count"] == 108 and amd["triton"]["warpSize"] == 64
    assert amd["triton"]["arch"] == "gfx942:sramecc+:xnack-"
    assert (nvidia["hip"], amd["cuda"]) == (None, None) and amd["hip"] and nvidia["cuda"]
    # The tensors of a run without a GPU are on the CPU, and torch still knows there is no GPU.
    for answers in (nvidia, amd):
        assert answers["torch_device"] == "cpu"
        assert (answers["available"], answers["count"]) == (False, 0)
    rows = rows_of(tmp_path / "portcheck.toml")
    assert rows["k"]["captured_as"] == ["cuda:80", "hip:gfx942"]


@pytest.mark.parametrize("args, message", [
    (["--as", "hip:gfx1250"], "--as hip:gfx1250: no device of this target is described"),
    (["--as", "cuda:90,cuda:90"], "--as: cuda:90 is named twice"),
    (["--as", "cuda:9x"], "--as cuda:9x: 'cuda:9x'"),
    (["--mode", "live", "--as", "cuda:90"], "--as: live mode records what the real device launches"),
    (["--append", "--as", "hip:gfx942"], "--append keeps existing rows as written and cannot add --as"),
])
def test_bad_personas_are_refused_before_the_command_runs(tmp_path, args, message):
    run = run_tool(["capture", *args, "--", "touch", "ran"], cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert not (tmp_path / "ran").exists()




def gpus_of_this_machine():
    """Counted as the tool must: device nodes, no runtime started (the H200 has one)."""
    nodes = [p for p in Path("/dev").glob("nvidia*") if p.name[6:].isdigit()]
    return len(nodes)


def test_vendor_libraries_and_tools_answer_as_the_persona(tmp_path, venv_python):
    """torch's ROCm branches under an AMD persona once ended in `NameError: name 'amdsmi' is not
    defined`, and flag_gems found the machine's vendor by its tools whatever the persona."""
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "personas" / "vendor_probe.py", tmp_path / "probe.py")
    run = run_tool(["capture", "--mode", "record", "--as", BOTH, "--", venv_python, "probe.py", str(tmp_path)],
                   cwd=tmp_path, timeout=300)
    assert "launched no Triton kernel" in run.stderr, run.stderr
    nvidia = json.loads((tmp_path / "pynvml.json").read_text())
    amd = json.loads((tmp_path / "amdsmi.json").read_text())
    gpus = gpus_of_this_machine()
    listed = max(1, gpus)  # the persona's device, once for each GPU (once without one)
    for answers in (nvidia, amd):
        # torch's own count stays the machine's: nothing is allocated on a device not there.
        assert answers["device_count"] == gpus, answers
        assert (answers["available"], answers["tensor"]) == ((True, "cuda:0") if gpus else (False, None))
        assert answers["torch"] == {"memory_usage": 0, "utilization": 0, "temperature": 35,
                                 "power_draw": 70000 if answers is nvidia else 140,
                                 "clock_rate": 1980 if answers is nvidia else 2100,
                                 "device_memory_used": 0}, answers
    assert (nvidia["name"], amd["name"]) == ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X")
    assert nvidia["library"] == [listed, "NVIDIA H100 80GB HBM3", 80 << 30]
    assert amd["library"] == [listed, "AMD Instinct MI300X", 192 << 30]
    assert (nvidia["vendors"], amd["vendors"]) == (["nvidia"], ["amd"])
    status, text = nvidia["nvidia-smi -L"]
    assert status == 0 and text.startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-") and text.count("\n") == listed
    assert nvidia["nvsmi"] == [0, "NVIDIA H100 80GB HBM3, 81920, 1980\n" * listed]
    assert nvidia["rocm-smi"][0] == 1 and nvidia["amd-smi"][0] == 1
    assert amd["nvidia-smi -L"] == [9, ""] and amd["nvsmi"][0] == 9
    status, text = amd["rocm-smi"]
    assert status == 0 and json.loads(text)["card0"]["Card Series"] == "AMD Instinct MI300X"
    assert json.loads(text)["card0"]["GFX Version"] == "gfx942"
    status, text = amd["amd-smi"]
    assert status == 0 and json.loads(text)[0]["asic"]["target_graphics_version"] == "gfx942"
    assert len(json.loads(text)) == listed
