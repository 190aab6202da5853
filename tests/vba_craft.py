"""Craft VBA projects (``vbaProject.bin``) for the VBA-policy tests: a small Compound File Binary writer
([MS-CFB] version 3) and MS-OVBA compression, used to put a chosen module into a real Excel-made project.

:func:`project_with_module` takes a project saved by Excel (``tests/data/excel-made/macro01.xlsm``), renames its
standard module and replaces its source, and writes a new OLE file that oletools reads like any other project.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
from pathlib import Path

import olefile
from oletools.olevba import decompress_stream

END, FREE, FATSECT = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
NOSTREAM = 0xFFFFFFFF


def compress(data: bytes) -> bytes:
    """MS-OVBA 2.4.1 CompressedContainer: full 4096-byte chunks raw, the last one as literal tokens."""
    out = bytearray(b"\x01")
    for i in range(0, len(data), 4096):
        chunk = data[i:i + 4096]
        if len(chunk) == 4096 or len(chunk) > 3640:
            out += struct.pack("<H", 0x3000 | 4095) + chunk  # raw chunk: flag 0, signature 0b011
            continue
        body = bytearray()
        for j in range(0, len(chunk), 8):
            body.append(0)  # eight literal tokens follow
            body += chunk[j:j + 8]
        out += struct.pack("<H", 0x8000 | 0x3000 | (len(body) + 2 - 3)) + body
    return bytes(out)


def _cfb_key(name: str) -> tuple[int, str]:
    return (len(name), name.upper())


def write_cfb(streams: dict[tuple[str, ...], bytes]) -> bytes:
    """An OLE file holding ``streams`` (path tuple → bytes); storages are created from the paths."""
    storages: dict[tuple[str, ...], list[str]] = {(): []}
    for path in streams:
        for k in range(1, len(path)):
            storages.setdefault(path[:k], [])
    for path in list(storages) + list(streams):
        if path:
            storages[path[:-1]].append(path[-1]) if path[-1] not in storages[path[:-1]] else None
    order: list[tuple[str, ...]] = [()]
    order += sorted(p for p in storages if p) + sorted(streams)
    ids = {p: i for i, p in enumerate(order)}

    mini = bytearray()
    mini_fat: list[int] = []
    starts: dict[tuple[str, ...], int] = {}
    big: list[tuple[tuple[str, ...], bytes]] = []
    for p in sorted(streams):
        data = streams[p]
        if len(data) < 4096:
            first = len(mini) // 64
            n = max(1, math.ceil(len(data) / 64))
            mini += data + b"\0" * (n * 64 - len(data))
            mini_fat += [first + k + 1 for k in range(n - 1)] + [END]
            starts[p] = first
        else:
            big.append((p, data))
    n_dir = math.ceil(len(order) * 128 / 512)
    n_minifat = math.ceil(len(mini_fat) * 4 / 512) if mini_fat else 0
    n_mini = math.ceil(len(mini) / 512)
    n_big = [math.ceil(len(d) / 512) for _p, d in big]
    n_fat = 1
    while n_fat * 128 < n_fat + n_dir + n_minifat + n_mini + sum(n_big):
        n_fat += 1
    fat = [FREE] * (n_fat * 128)
    pos = 0

    def chain(count: int) -> int:
        nonlocal pos
        if count == 0:
            return END
        first = pos
        for k in range(count):
            fat[pos + k] = pos + k + 1 if k < count - 1 else END
        pos += count
        return first

    for k in range(n_fat):
        fat[k] = FATSECT
    pos = n_fat
    dir_start = chain(n_dir)
    minifat_start = chain(n_minifat)
    mini_start = chain(n_mini)
    for (p, _d), n in zip(big, n_big):
        starts[p] = chain(n)

    def entry(path: tuple[str, ...]) -> bytes:
        name = path[-1] if path else "Root Entry"
        kind = 5 if not path else 1 if path in storages else 2
        kids = sorted(storages.get(path, []), key=_cfb_key)
        child = ids[path + (kids[0],)] if kids else NOSTREAM
        siblings = sorted(storages[path[:-1]], key=_cfb_key) if path else []
        right = NOSTREAM
        if path:
            i = siblings.index(path[-1])
            right = ids[path[:-1] + (siblings[i + 1],)] if i + 1 < len(siblings) else NOSTREAM
        if not path:
            start, size = (mini_start if mini else END), len(mini)
        elif kind == 2:
            start, size = starts[path], len(streams[path])
        else:
            start, size = 0, 0
        raw = name.encode("utf-16le")
        return (raw + b"\0" * (64 - len(raw)) + struct.pack("<HBBIII", len(raw) + 2, kind, 1, NOSTREAM, right, child)
                + b"\0" * 16 + struct.pack("<I", 0) + b"\0" * 16 + struct.pack("<IQ", start, size))

    directory = b"".join(entry(p) for p in order)
    empty = b"\0" * 64 + struct.pack("<HBBIII", 0, 0, 0, NOSTREAM, NOSTREAM, NOSTREAM) + b"\0" * 44
    directory += empty * (n_dir * 4 - len(order))
    difat = list(range(n_fat)) + [FREE] * (109 - n_fat)
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + b"\0" * 6 + struct.pack("<IIIIIIIII", 0, n_fat, dir_start, 0, 4096,
                                        minifat_start if n_minifat else END, n_minifat, END, 0)
              + struct.pack("<109I", *difat))

    def pad(b: bytes) -> bytes:
        return b + b"\0" * (-len(b) % 512)

    body = struct.pack(f"<{len(fat)}I", *fat) + pad(directory)
    if n_minifat:
        body += _minifat_pad(mini_fat)
    body += pad(bytes(mini))
    for _p, d in big:
        body += pad(d)
    return header + body


def _minifat_pad(entries: list[int]) -> bytes:
    raw = struct.pack(f"<{len(entries)}I", *entries)
    return raw + struct.pack("<I", FREE) * ((-len(raw) % 512) // 4)


def project_with_module(source_xlsm: Path, module: str, code: str) -> bytes:
    """The VBA project of ``source_xlsm`` (saved by Excel, with one standard module ``Module1``) with that module
    renamed to ``module`` and its source replaced by ``code`` (no compiled p-code)."""
    ole = olefile.OleFileIO(io.BytesIO(zipfile.ZipFile(source_xlsm).read("xl/vbaProject.bin")))
    streams = {tuple(p): ole.openstream(p).read() for p in ole.listdir(streams=True, storages=False)}
    old = "Module1"
    d = bytearray(decompress_stream(bytearray(streams[("VBA", "dir")])))
    name_rec = b"\x19\x00" + struct.pack("<I", len(old)) + old.encode()
    at = d.index(name_rec)
    d[at:at + len(name_rec)] = b"\x19\x00" + struct.pack("<I", len(module)) + module.encode()
    uni = b"\x47\x00" + struct.pack("<I", 2 * len(old)) + old.encode("utf-16le")
    if uni in d:
        u = d.index(uni)
        d[u:u + len(uni)] = b"\x47\x00" + struct.pack("<I", 2 * len(module)) + module.encode("utf-16le")
    off = d.index(b"\x31\x00\x04\x00\x00\x00", at)
    d[off + 6:off + 10] = struct.pack("<I", 0)
    streams[("VBA", "dir")] = compress(bytes(d))
    streams[("VBA", old)] = compress(code.replace("\n", "\r\n").encode("latin-1"))
    streams[("PROJECT",)] = streams[("PROJECT",)].replace(f"Module={old}".encode(), f"Module={module}".encode())
    return write_cfb(streams)
