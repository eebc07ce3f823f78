"""A kernel's resource counts read from its cubin (an ELF file), as `cuobjdump -res-usage` prints
them, without running cuobjdump: that process cost 3.7 ms of every CUDA cell, a fifth of a small
cell's life. Where the cubin is not laid out as expected the caller falls back to cuobjdump.

Layout (checked against cuobjdump on sm_75..sm_120 cubins, spilling ones included: see
tests/integration/test_cubin_resources.py): the file-wide `.nv.info` section is a list of
attributes `u8 format, u8 attribute, ...`; format 4 carries `u16 size` and that many bytes, here
`u32 symbol, u32 value`. Attribute 0x2f is the register count, 0x12 the minimum stack size
(cuobjdump's STACK). The kernel's symbol is the low 24 bits of its `.text.NAME` section's
sh_info; `.nv.shared.NAME` is its static shared memory, `.nv.local.NAME` its local memory.
"""
import struct

_REGCOUNT = 0x2F
_MIN_STACK_SIZE = 0x12
_FORMAT_SIZED = 4
_FORMAT_HALF = 3
_FORMAT_BYTES = 2
_FORMAT_NONE = 1


class Unreadable(ValueError):
    """Not a cubin of the layout this module knows."""


def _sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit ELF only
        raise Unreadable("not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entry_size) for i in range(count)]
    names = headers[names_index][4]

    def name(offset):
        start = names + offset
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    # name -> (offset, size, info)
    return {name(h[0]): (h[4], h[5], h[7]) for h in headers}


def _attributes(blob):
    """(attribute, u32 words) of each sized attribute in an .nv.info section."""
    at = 0
    while at + 2 <= len(blob):
        fmt, attribute = blob[at], blob[at + 1]
        if fmt == _FORMAT_SIZED:
            size, = struct.unpack_from("<H", blob, at + 2)
            words = blob[at + 4:at + 4 + size]
            yield attribute, struct.unpack(f"<{len(words) // 4}I", words[:len(words) // 4 * 4])
            at += 4 + size
        elif fmt in (_FORMAT_HALF, _FORMAT_BYTES):
            at += 4
        elif fmt == _FORMAT_NONE:
            at += 2
        else:
            raise Unreadable(f"unknown .nv.info attribute format {fmt}")


def resources(data, kernel):
    """{"registers", "stack_bytes", "local_bytes", "static_shared_bytes"} of `kernel`."""
    try:
        sections = _sections(data)
        text = sections.get(f".text.{kernel}")
        if text is None or ".nv.info" not in sections:
            raise Unreadable(f"no .text.{kernel} or .nv.info section")
        symbol = text[2] & 0xFFFFFF
        offset, size, _ = sections[".nv.info"]
        values = {a: w[1] for a, w in _attributes(data[offset:offset + size]) if len(w) == 2 and w[0] == symbol}
    except Unreadable:
        raise
    except (struct.error, IndexError, ValueError) as e:  # ValueError: a name without its end
        raise Unreadable(f"truncated: {e}") from e
    if _REGCOUNT not in values:
        raise Unreadable(f"no register count for {kernel}")
    return {"registers": values[_REGCOUNT], "stack_bytes": values.get(_MIN_STACK_SIZE, 0),
            "local_bytes": sections.get(f".nv.local.{kernel}", (0, 0, 0))[1],
            "static_shared_bytes": sections.get(f".nv.shared.{kernel}", (0, 0, 0))[1]}
