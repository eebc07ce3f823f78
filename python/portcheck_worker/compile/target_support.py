"""Which architectures the installed Triton can compile for, read from what it bundles: the
`--gpu-name` values of the ptxas Triton picks for a CUDA capability, and the AMD GPU processors of
Triton's LLVM that its AMD backend lowers to (it refuses older ones LLVM knows). Nothing here is a copied list, so an older or newer Triton gives its own answer.

A backend accepts any arch it can parse: without this check `cuda:999` compiles up to ptxas and
fails in every cell as if the kernels were broken. Where a Triton offers no way to tell (an older
release without these functions), nothing is refused here and the cells say what happens."""
import difflib
import os
import re
import subprocess

from . import releases

NEAREST = 5


def problem(backend, arch):
    """None when `arch` can be compiled for (or this Triton gives no way to tell), else
    {"reason": "unknown" | "unsupported", "message": ..., "valid": [...], "nearest": [...]}."""
    check = {"cuda": _cuda_problem, "hip": _hip_problem}.get(backend)
    try:
        return check(arch) if check else None
    except Exception:  # a Triton laid out differently: its cells will tell
        return None


def known_archs(backend):
    """The architectures of `backend` this Triton can compile for, or [] when it cannot tell."""
    try:
        return {"cuda": _cuda_archs, "hip": _hip_archs}[backend]()
    except Exception:
        return []


def _result(reason, message, arch, valid):
    # Nearest first by the longest common start ("gfx1" -> gfx10xx), then by similarity.
    def rank(name):
        common = len(os.path.commonprefix([arch, name]))
        return (-common, -difflib.SequenceMatcher(None, arch, name).ratio(), name)
    nearest = sorted(valid, key=rank)[:NEAREST]
    return {"reason": reason, "message": message, "valid": valid, "nearest": nearest}


# ---- CUDA: the ptxas Triton picks for the capability must know its sm_ name.


def _sm_name(capability):
    return releases.current().sm_name(capability)


def ptxas_for(capability):
    """The path of the ptxas Triton uses for this capability, whichever release."""
    return releases.current().ptxas_for(capability)


def _bundled_ptxas():
    release = releases.current()
    paths = []
    for name in ("ptxas", "ptxas_blackwell"):
        if name not in release.nvidia_tool_names():
            continue
        try:
            path = release.nvidia_tool(name)
        except Exception:  # a tool this install lacks
            continue
        if path not in paths:
            paths.append(path)
    return paths


_GPU_NAMES = {}


def _gpu_names(ptxas):
    """The `sm_` values ptxas's --gpu-name accepts, read from its --help. Every bundled ptxas is
    asked at once, in parallel: each answer costs ~0.09 s, paid by every run's probe."""
    if ptxas not in _GPU_NAMES:
        paths = [p for p in dict.fromkeys(_bundled_ptxas() + [ptxas]) if p not in _GPU_NAMES]
        running = [(p, subprocess.Popen([p, "--help"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)) for p in paths]
        for path, proc in running:
            out, _ = proc.communicate(timeout=30)
            _GPU_NAMES[path] = frozenset(re.findall(r"'(sm_\d+[a-z]?)'", out))
    return _GPU_NAMES[ptxas]


def _cuda_archs():
    capabilities = set()
    for ptxas in _bundled_ptxas():
        capabilities |= {int(m) for m in re.findall(r"sm_(\d+)", " ".join(_gpu_names(ptxas)))}
    return [str(c) for c in sorted(capabilities) if _sm_name(c) in _gpu_names(ptxas_for(c))]


def _cuda_problem(arch):
    capability = int(arch)
    ptxas = ptxas_for(capability)
    names = _gpu_names(ptxas)
    if not names:  # a ptxas that does not list its architectures: nothing to compare against
        return None
    sm = _sm_name(capability)
    if sm in names:
        return None
    valid = _cuda_archs()
    everywhere = set().union(*(_gpu_names(p) for p in _bundled_ptxas()))
    if f"sm_{capability}" in everywhere or sm in everywhere:
        message = (f"it assembles capability {capability} with its {ptxas.rsplit('/', 1)[-1]}, "
                   f"which does not know {sm}")
        return _result("unsupported", message, arch, valid)
    message = f"{sm} is not an architecture any of its bundled ptxas knows"
    return _result("unknown", message, arch, valid)


# ---- HIP: Triton's LLVM must know the processor, and Triton's AMD backend must map it to an ISA
# family it generates code for (gfx803, gfx900, gfx1030 on 3.9.0 are LLVM processors it refuses).


def _target_triple():
    return releases.current().target_triple()


def _llvm_hip_archs():
    triple = _target_triple()
    if triple is None:
        return []
    known = []
    # LLVM's AMDGPU processors are gfx<major><minor><stepping>, major 6 to 12, the stepping a hex
    # digit: ask LLVM about each such name rather than keep a list of them.
    for major in range(6, 13):
        for minor in "0123456789":
            for stepping in "0123456789abcdef":
                name = f"gfx{major}{minor}{stepping}"
                try:
                    triple(name)
                    known.append(name)
                except Exception:
                    continue
    return known


_REFUSALS = {}


def _backend_refusal(arch):
    """Triton's own reason for refusing `arch`, or None when it lowers to LLVM for it. The pass
    that decides in a real compile (ConvertTritonAMDGPUToLLVM: "unsupported target") is run on an
    empty module, ~6 ms; its diagnostic goes to fd 2, so fd 2 is borrowed for the run."""
    if arch not in _REFUSALS:
        try:
            _REFUSALS[arch] = _run_lowering(arch)
        except Exception:  # a release laid out differently: its cells will tell
            _REFUSALS[arch] = None
    return _REFUSALS[arch]


_CONTEXT = []


def _mlir_context():
    # One for every target asked about: creating it and loading the dialects is most of the cost.
    if not _CONTEXT:
        from triton._C.libtriton import amd, ir
        context = ir.context()
        ir.load_dialects(context)
        amd.load_dialects(context)
        _CONTEXT.append(context)
    return _CONTEXT[0]


def _run_lowering(arch):
    import tempfile
    from triton._C.libtriton import amd, ir
    add_to_llvmir = amd.passes.ttgpuir.add_to_llvmir
    context = _mlir_context()
    warp = 32 if arch.startswith("gfx1") else 64
    ttg = releases.current().ttgir_prefix
    text = (f'module attributes {{"{ttg}.num-ctas" = 1 : i32, "{ttg}.num-warps" = 4 : i32, '
            f'{ttg}.target = "hip:{arch}", "{ttg}.threads-per-warp" = {warp} : i32}} {{}}\n')
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "probe.ttgir")
        with open(path, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        manager = ir.pass_manager(context)
        add_to_llvmir(manager, arch, True)
        with open(os.path.join(scratch, "stderr"), "w+") as err:
            saved = os.dup(2)
            try:
                os.dup2(err.fileno(), 2)
                releases.current().run_passes(manager, module)
                return None
            except RuntimeError:
                err.seek(0)
                said = re.search(r"error: (unsupported target: '[^']*')", err.read())
                if said is None:  # failed for another reason: let the cells tell
                    return None
                return said.group(1)
            finally:
                os.dup2(saved, 2)
                os.close(saved)


def _hip_archs():
    return [a for a in _llvm_hip_archs() if _backend_refusal(a) is None]


def _hip_problem(arch):
    triple = _target_triple()
    if triple is not None:
        try:
            triple(arch)
        except Exception:
            message = f"{arch} is not an AMD GPU processor its LLVM knows"
            return _result("unknown", message, arch, _hip_archs())
    refusal = _backend_refusal(arch)
    if refusal is None:
        return None
    if triple is None:  # a release that cannot say whether its LLVM knows the name
        return _result("refused", f"its AMD backend refuses it ({refusal})", arch, [])
    # An LLVM processor (checked above) its AMD backend generates no code for.
    return _result("unsupported", f"its AMD backend refuses it ({refusal})", arch, _hip_archs())
