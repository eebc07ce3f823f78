"""What a launch record holds that every backend's JIT shares (a row captured as an AMD device is
the same row as one captured as an NVIDIA device with the same choices), in JSON's types.
"""
import hashlib
import json

# The AMD backend's attribute for a tensor within 2 GiB (buffer ops). The manifest's rows carry
# what every backend's JIT shares.
_BACKEND_ONLY_ATTRIBUTES = ("tt.pointer_range", )


def shared_attributes(spec):
    """The specialisation without the attributes only one backend's JIT adds (see
    _BACKEND_ONLY_ATTRIBUTES). Each argument keeps its entry, empty if need be, as an NVIDIA JIT
    records one for a pointer that is not divisible by 16."""
    spec["attrs_vals"] = [[a for a in attrs
                           if not (isinstance(a, list) and a and a[0] in _BACKEND_ONLY_ATTRIBUTES)]
                          for attrs in spec["attrs_vals"]]
    return spec


def portable_options(explicit, config_only):
    """The launch's options without those an autotune Config passes on every launch at a value
    that changes nothing (`config_only`, the release adapter's): Triton 3.2's and 3.3's pass
    num_buffers_warp_spec=0 and three more, which later releases do not know, so a row captured
    with them could not be checked with 3.9. What the caller or a Config really set is kept."""
    return {k: v for k, v in explicit.items() if k not in config_only or config_only[k] != v}


def jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def launch_identity(module, qualname, spec, explicit, autotune):
    """The key of a distinct launch: kernel, specialisation, the caller's options and the
    autotune config; a launch made again with the same key is recorded once. 16 hex digits of
    its SHA-1, the same in every process of a capture (an autotuned launch's record names its
    configs by it, whichever process wrote their launch records)."""
    text = json.dumps([module, qualname, spec["signature"], spec["constant_keys"], spec["constant_vals"],
                       spec["attrs_keys"], spec["attrs_vals"], explicit, autotune and autotune.get("index")],
                      sort_keys=True, default=str)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
