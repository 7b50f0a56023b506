"""``IPFB`` archives: ``X.pak`` (header + table of contents) with parts ``X.p00``, ``X.p01``...

Layout (big-endian, ``shared/specs/sylpheed-chatter.md`` section 1)::

    +0    "IPFB"
    +4    u32 entry count N
    +8    u32 alignment (0x800)
    +0xC  u32 part size (0x10000000)
    +0x10 N x {u32 id, u32 loc, u32 stored size}, sorted by id; an id of 0 ends the list
          part = loc >> 28, offset in the part = loc & 0x0FFFFFFF (2048-aligned)

An entry starting with ``Z1`` is compressed: ``"Z1"``, u32 inflated size, 4 bytes readers
ignore (our writer stores the zlib stream length there), then a zlib stream (raw deflate
from byte 12). Entries are keyed by :func:`~audio.games.sylpheed.formats.hashes.name_hash` of the inner
path; install paths are written ``pak+inner`` (``dat\\tables.pak+eng\\sounds.tbl``).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from audio.core.binary import Reader, align
from audio.core.errors import FormatError
from audio.games.sylpheed.formats.hashes import name_hash

__all__ = [
    "PakEntry",
    "PakArchive",
    "build_pak",
    "write_pak",
    "rewrite_pak",
    "write_pak_files",
    "inflate_z1",
    "deflate_z1",
    "split_install_path",
    "read_install_path",
    "MAX_INFLATED",
]

ALIGNMENT = 0x800
PART_SIZE = 0x10000000
MAX_INFLATED = 64 << 20
"""Largest inflated entry the reader accepts (bytes): guards against zlib bombs."""


@dataclass(frozen=True)
class PakEntry:
    """One TOC row: ``id`` (name hash), ``part`` file index, byte ``offset`` in it, ``size`` stored."""

    id: int
    part: int
    offset: int
    size: int


def inflate_z1(data: bytes, path: str = "<z1>") -> bytes:
    """Inflate a ``Z1`` entry; raw data (no ``Z1`` magic) is returned unchanged."""
    if not data.startswith(b"Z1"):
        return data
    r = Reader(data, path)
    size = r.u32(2, "Z1 inflated size")
    if size > MAX_INFLATED:
        raise FormatError(path, 2, f"a Z1 inflated size of at most {MAX_INFLATED} bytes", size)
    r.need(12, 0, "Z1 deflate stream")
    dec = zlib.decompressobj(-15)
    try:
        out = dec.decompress(data[12:], size + 1)
    except zlib.error as exc:
        raise FormatError(path, 12, "a valid raw deflate stream", str(exc)) from None
    if len(out) != size:
        raise FormatError(path, 2, f"{size} inflated bytes", len(out))
    return out


def deflate_z1(data: bytes) -> bytes:
    """Compress ``data`` as a ``Z1`` entry (zlib stream, deterministic level 9)."""
    stream = zlib.compress(data, 9)
    return b"Z1" + struct.pack(">II", len(data), len(stream)) + stream


class PakArchive:
    """Read entries of an IPFB archive by id or inner path.

    Parameters
    ----------
    toc:
        The bytes of ``X.pak``.
    parts:
        The part files' bytes in order (``X.p00`` first).
    path:
        Name for error messages.
    """

    def __init__(self, toc: bytes, parts: list[bytes], path: str = "<pak>") -> None:
        self.path = path
        self.parts = parts
        r = Reader(toc, path)
        r.magic(0, b"IPFB", "IPFB magic")
        n = r.u32(4, "entry count")
        self.alignment = r.u32(8, "alignment")
        self.part_size = r.u32(12, "part size")
        r.count(16, n, 12, "TOC entries")
        entries: list[PakEntry] = []
        for i in range(n):
            off = 16 + 12 * i
            eid, loc, size = r.u32(off), r.u32(off + 4), r.u32(off + 8)
            if eid == 0:
                break
            if entries and eid <= entries[-1].id:
                raise FormatError(
                    path, off, f"TOC ids sorted ascending (after 0x{entries[-1].id:08X})", f"0x{eid:08X}"
                )
            entries.append(PakEntry(eid, loc >> 28, loc & 0x0FFFFFFF, size))
        self.entries: tuple[PakEntry, ...] = tuple(entries)
        self._by_id = {e.id: e for e in entries}

    @classmethod
    def open(cls, pak_path: str | Path) -> PakArchive:
        """Open ``X.pak`` and its sibling parts ``X.p00``, ``X.p01``... from disk."""
        p = Path(pak_path)
        try:
            toc = p.read_bytes()
        except OSError as exc:
            raise FormatError(p, None, "a readable .pak file", str(exc)) from None
        parts = []
        k = 0
        while (part := p.with_suffix(f".p{k:02d}")).exists():
            parts.append(part.read_bytes())
            k += 1
        return cls(toc, parts, str(p))

    def __contains__(self, key: int | str) -> bool:
        return self._id(key) in self._by_id

    @staticmethod
    def _id(key: int | str) -> int:
        return name_hash(key) if isinstance(key, str) else int(key)

    def entry(self, key: int | str) -> PakEntry | None:
        """The TOC row of ``key`` (id or inner path), or None."""
        return self._by_id.get(self._id(key))

    def stored(self, key: int | str) -> bytes:
        """The stored (possibly ``Z1``-compressed) bytes of ``key``."""
        e = self.entry(key)
        if e is None:
            name = key if isinstance(key, str) else f"0x{key:08X}"
            raise FormatError(self.path, None, f"an entry for {name}")
        where = f"{self.path}.p{e.part:02d}"
        if e.part >= len(self.parts):
            raise FormatError(where, None, f"part file {e.part} (have {len(self.parts)})")
        Reader(self.parts[e.part], where).need(e.offset, e.size, f"entry 0x{e.id:08X}")
        return bytes(self.parts[e.part][e.offset : e.offset + e.size])

    def read(self, key: int | str) -> bytes:
        """The (inflated) bytes of ``key``."""
        name = key if isinstance(key, str) else f"0x{int(key):08X}"
        return inflate_z1(self.stored(key), f"{self.path}+{name}")


def build_pak(
    entries: Mapping[str | int, bytes],
    *,
    compress: bool | Iterable[str | int] = True,
    part_size: int = PART_SIZE,
) -> tuple[bytes, list[bytes]]:
    """Build an archive: ``(toc_bytes, [part bytes...])``.

    ``entries`` maps inner paths (hashed) or ids to data; ``compress`` is True (all),
    False (none) or the keys to compress (data that itself starts with ``Z1`` is always
    compressed, or readers would take it for a Z1 entry). Entries are laid out in id order,
    2048-aligned.
    """
    rows: dict[int, bytes] = {}
    pick = None if isinstance(compress, bool) else set(compress)
    for key, data in entries.items():
        eid = name_hash(key) if isinstance(key, str) else int(key)
        if eid == 0 or eid in rows:
            raise ValueError(f"entry id 0x{eid:08X} of {key!r} is 0 or collides")
        z = (compress if pick is None else key in pick) or data.startswith(b"Z1")
        rows[eid] = deflate_z1(data) if z else bytes(data)
    parts: list[bytearray] = [bytearray()]
    toc = bytearray(b"IPFB" + struct.pack(">III", len(rows), ALIGNMENT, part_size))
    for eid in sorted(rows):
        blob = rows[eid]
        if len(blob) > part_size:
            raise ValueError(f"entry 0x{eid:08X} is larger than a part ({len(blob)} bytes)")
        if align(len(parts[-1]), ALIGNMENT) + len(blob) > part_size:
            parts.append(bytearray())
        cur = parts[-1]
        cur.extend(b"\0" * (align(len(cur), ALIGNMENT) - len(cur)))
        toc += struct.pack(">III", eid, ((len(parts) - 1) << 28) | len(cur), len(blob))
        cur.extend(blob)
    for cur in parts:
        cur.extend(b"\0" * (align(len(cur), ALIGNMENT) - len(cur)))
    return bytes(toc), [bytes(p) for p in parts]


def write_pak(
    pak_path: str | Path, entries: Mapping[str | int, bytes], *, compress: bool | Iterable[str | int] = True
) -> list[Path]:
    """Write ``X.pak`` and its parts; returns the files written."""
    p = Path(pak_path)
    p.parent.mkdir(parents=True, exist_ok=True)
    toc, parts = build_pak(entries, compress=compress)
    p.write_bytes(toc)
    out = [p]
    for k, blob in enumerate(parts):
        q = p.with_suffix(f".p{k:02d}")
        q.write_bytes(blob)
        out.append(q)
    return out


def rewrite_pak(arc: PakArchive, replace: Mapping[str | int, bytes]) -> tuple[bytes, list[bytes]]:
    """A copy of ``arc`` with some entries' data replaced: ``(toc_bytes, [part bytes...])``.

    ``replace`` maps inner paths (hashed) or ids of entries the archive has to their new
    (inflated) data; a replaced entry keeps its storage form (``Z1``-compressed if it was,
    and always when the new data itself starts with ``Z1``). Every other entry's stored
    bytes are copied verbatim. The archive's alignment and part size are kept and entries
    are laid out in id order, as :func:`build_pak` does, so rewriting an archive it wrote
    changes only the replaced entry and the offsets after it.

    Raises
    ------
    FormatError
        An entry to replace is not in the archive, or a stored entry is unreadable.
    """
    new: dict[int, bytes] = {}
    for key, data in replace.items():
        e = arc.entry(key)
        if e is None:
            name = key if isinstance(key, str) else f"0x{int(key):08X}"
            raise FormatError(arc.path, None, f"an entry for {name} to replace")
        was_z1 = arc.stored(e.id).startswith(b"Z1")
        new[e.id] = deflate_z1(data) if was_z1 or data.startswith(b"Z1") else bytes(data)
    if not 0 < arc.alignment <= arc.part_size <= PART_SIZE:
        raise FormatError(
            arc.path,
            8,
            f"an alignment and part size with 0 < alignment <= part size <= 0x{PART_SIZE:X}",
            (arc.alignment, arc.part_size),
        )
    parts: list[bytearray] = [bytearray()]
    toc = bytearray(b"IPFB" + struct.pack(">III", len(arc.entries), arc.alignment, arc.part_size))
    for e in sorted(arc.entries, key=lambda e: e.id):
        blob = new.get(e.id)
        if blob is None:
            blob = arc.stored(e.id)
        if len(blob) > arc.part_size:
            raise FormatError(arc.path, None, f"entry 0x{e.id:08X} no larger than a part", len(blob))
        if align(len(parts[-1]), arc.alignment) + len(blob) > arc.part_size:
            if len(parts) == 16:
                raise FormatError(arc.path, None, "entries that fit in 16 parts (a 4-bit part index)")
            parts.append(bytearray())
        cur = parts[-1]
        cur.extend(b"\0" * (align(len(cur), arc.alignment) - len(cur)))
        toc += struct.pack(">III", e.id, ((len(parts) - 1) << 28) | len(cur), len(blob))
        cur.extend(blob)
    for cur in parts:
        cur.extend(b"\0" * (align(len(cur), arc.alignment) - len(cur)))
    return bytes(toc), [bytes(p) for p in parts]


def write_pak_files(pak_path: str | Path, toc: bytes, parts: list[bytes]) -> list[Path]:
    """Write ``X.pak`` and its parts ``X.p00``... atomically (temp names, then renamed).

    Refuses (``FileExistsError``) when any of the files exists already, so an archive is
    never written over another one or over its own input.
    """
    p = Path(pak_path)
    files = [p] + [p.with_suffix(f".p{k:02d}") for k in range(len(parts))]
    taken = [f for f in files if f.exists() or f.is_symlink()]
    if taken:
        raise FileExistsError(f"{taken[0]}: exists already; give a new archive name")
    p.parent.mkdir(parents=True, exist_ok=True)
    temps = [f.with_name(f.name + ".partial") for f in files]
    try:
        for tmp, blob in zip(temps, [toc, *parts]):
            tmp.write_bytes(blob)
        for tmp, f in zip(temps, files):
            tmp.replace(f)
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
    return files


def split_install_path(path: str) -> tuple[str, str]:
    """``"dat\\tables.pak+eng\\sounds.tbl"`` -> ``("dat\\tables.pak", "eng\\sounds.tbl")``."""
    pak, sep, inner = path.partition("+")
    if not sep or not pak or not inner:
        raise FormatError(path, None, "a 'pak+inner' path such as dat\\tables.pak+eng\\sounds.tbl")
    return pak, inner


def read_install_path(root: str | Path, path: str, cache: dict[str, PakArchive] | None = None) -> bytes:
    """Read ``pak+inner`` below the install ``root`` (pak path relative, backslashes allowed)."""
    pak, inner = split_install_path(path)
    arc = None if cache is None else cache.get(pak.lower())
    if arc is None:
        arc = PakArchive.open(Path(root).joinpath(*pak.replace("\\", "/").split("/")))
        if cache is not None:
            cache[pak.lower()] = arc
    return arc.read(inner)
