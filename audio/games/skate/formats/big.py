"""EA ``.big`` archives: EB v3 (Skate 3) and the legacy ``BIGF`` / ``BIG4``; readers and writers.

EB v3 layout (big-endian; ``shared/specs/skate3-speech.md`` section 1.1): a 48-byte header, one entry
per file at +48 (16 or 20 bytes: offset >> shift, stored size, unpacked size), one compression byte per
entry at ``48 + align16(entry_size * count)`` (0 none, 1 RefPack, 2/3/4 chunkref), name records at
``index_size`` (u16 directory index + NUL-padded name), directory records after them.

Archives are read from one buffer (a ``bytes`` or an ``mmap`` of the file) through memoryviews:
a stored (uncompressed) entry is a zero-copy slice and a nested archive (``livingworldhdr.big`` inside
``livingworldspeech.big``) opens on that slice without temp files. Nesting is guarded: an entry that
spans its own archive (or an ancestor) and nesting deeper than :data:`MAX_DEPTH` raise FormatError.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from audio.containers import refpack
from audio.core.binary import Reader, align
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "BigEntry",
    "BigArchive",
    "MAX_DEPTH",
    "MAX_ENTRY_SIZE",
    "MAX_ENTRIES",
    "COMPRESSIONS",
    "write_big",
    "write_legacy_big",
    "chunkref_decode",
    "chunkref_encode",
    "compress",
    "decompress",
]

#: Deepest nesting of archives accepted.
MAX_DEPTH = 8
#: Largest unpacked entry accepted (bytes).
MAX_ENTRY_SIZE = 512 << 20
#: Most entries an archive may declare.
MAX_ENTRIES = 1 << 20
#: Writer compression names -> EB v3 compression byte. The three chunkref bytes follow the chunk
#: method numbers (2 RefPack, 3 zlib, 4 raw); which byte retail writes for which content is not
#: known, and readers treat 2/3/4 alike (the chunk descriptors say how each chunk is packed).
COMPRESSIONS = {"none": 0, "refpack": 1, "chunkref-refpack": 2, "chunkref-zlib": 3, "chunkref-raw": 4}
_CHUNK_METHOD = {"chunkref-raw": 0, "chunkref-refpack": 2, "chunkref-zlib": 3}
_EB_HEADER = 48


@dataclass(frozen=True)
class BigEntry:
    """One file of an archive; ``offset`` is absolute in the archive's buffer (bytes)."""

    index: int
    path: str
    offset: int
    stored_size: int
    unpacked_size: int
    compression: int  # EB v3 byte; legacy archives: 1 if the data has a RefPack header

    @property
    def name(self) -> str:
        """The file name without its directory."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        """The file name without directory and extension."""
        name = self.name
        dot = name.rfind(".")
        return name[:dot] if dot > 0 else name


# ---------------------------------------------------------------------------------------------
# compression


def chunkref_decode(
    data: bytes | memoryview, path: str, expected_size: int | None = None, limit: int = MAX_ENTRY_SIZE
) -> bytes:
    """Decode a ``chunkref`` container (raw / RefPack / zlib chunks) to its ``total size`` bytes."""
    r = Reader(data, path)
    r.magic(0, b"chunkref", "chunkref magic")
    version = r.u32(8, "chunkref version")
    if version != 2:
        raise UnsupportedError(path, 8, "chunkref version 2", version)
    total, chunk, count, alignment = (
        r.u32(12, "total size"),
        r.u32(16, "chunk size"),
        r.u32(20, "chunk count"),
        r.u32(24, "alignment"),
    )
    if expected_size is not None and total != expected_size:
        raise FormatError(path, 12, f"chunkref total size {expected_size}", total)
    if total > limit:
        raise FormatError(path, 12, f"chunkref total size at most {limit}", total)
    if alignment == 0 or alignment > 4096 or alignment & (alignment - 1):
        raise FormatError(path, 24, "chunkref alignment, a power of two <= 4096", alignment)
    if chunk == 0 and total:
        raise FormatError(path, 16, "a non-zero chunk size", chunk)
    want = -(-total // chunk) if chunk else 0
    if count != want:
        raise FormatError(path, 20, f"{want} chunks for {total} bytes of {chunk}", count)
    r.count(28, count, 8, "chunkref chunks")
    out = bytearray()
    cursor = 28
    for k in range(count):
        payload = align(cursor + 8, alignment)
        size, method = r.u32(payload - 8, "chunk packed size"), r.u32(payload - 4, "chunk method")
        r.need(payload, size, f"chunk {k} payload")
        packed = r.data[payload : payload + size]
        expect = min(chunk, total - len(out))
        where = f"{path} chunk {k}"
        if method in (0, 4):
            piece = bytes(packed)
        elif method == 2:
            piece = refpack.decode(packed, where, expect, limit)
        elif method == 3:
            piece = _inflate(packed, where, expect)
        else:
            raise UnsupportedError(path, payload - 4, "chunk method 0/4 raw, 2 RefPack or 3 zlib", method)
        if len(piece) != expect:
            raise FormatError(path, payload, f"chunk {k} of {expect} bytes", len(piece))
        out += piece
        cursor = payload + size
    return bytes(out)


def _inflate(packed: bytes | memoryview, path: str, expect: int) -> bytes:
    z = zlib.decompressobj()
    try:
        piece = z.decompress(packed, expect + 1)
    except zlib.error as exc:
        raise FormatError(path, 0, "a valid zlib stream", str(exc)) from None
    if len(piece) > expect or not z.eof:
        raise FormatError(
            path,
            0,
            f"a zlib stream of exactly {expect} bytes",
            "more data" if len(piece) > expect else "a truncated stream",
        )
    return piece


def chunkref_encode(
    data: bytes | memoryview, method: int = 2, chunk_size: int = 0x10000, alignment: int = 16
) -> bytes:
    """Pack ``data`` into a ``chunkref`` container; ``method`` 0/4 raw, 2 RefPack, 3 zlib."""
    if alignment <= 0 or alignment > 4096 or alignment & (alignment - 1):
        raise ValueError("alignment must be a power of two <= 4096")
    data = bytes(data)
    count = -(-len(data) // chunk_size)
    out = bytearray(b"chunkref" + struct.pack(">5I", 2, len(data), chunk_size, count, alignment))
    for k in range(count):
        piece = data[k * chunk_size : (k + 1) * chunk_size]
        if method == 2:
            packed = refpack.encode(piece)
        elif method == 3:
            packed = zlib.compress(piece, 9)
        elif method in (0, 4):
            packed = piece
        else:
            raise ValueError(f"unknown chunk method {method}")
        payload = align(len(out) + 8, alignment)
        out += bytes(payload - 8 - len(out))
        out += struct.pack(">II", len(packed), method)
        out += packed
    return bytes(out)


def decompress(
    raw: bytes | memoryview, compression: int, unpacked_size: int, path: str, limit: int = MAX_ENTRY_SIZE
) -> bytes | memoryview:
    """Unpack one entry's stored bytes (``raw`` itself when stored)."""
    if unpacked_size > limit:
        raise FormatError(path, 0, f"an unpacked size at most {limit}", unpacked_size)
    if compression == 0:
        if len(raw) != unpacked_size:
            raise FormatError(path, 0, f"stored size = unpacked size {unpacked_size}", len(raw))
        return raw
    if compression == 1:
        return refpack.decode(raw, path, unpacked_size, limit)
    if compression in (2, 3, 4):
        return chunkref_decode(raw, path, unpacked_size, limit)
    raise UnsupportedError(path, 0, "compression 0 (none), 1 (RefPack) or 2/3/4 (chunkref)", compression)


def compress(data: bytes | memoryview, compression: str) -> bytes:
    """Pack ``data`` with a :data:`COMPRESSIONS` name."""
    if compression == "none":
        return bytes(data)
    if compression == "refpack":
        return refpack.encode(data)
    if compression in _CHUNK_METHOD:
        return chunkref_encode(data, _CHUNK_METHOD[compression])
    raise ValueError(f"unknown compression {compression!r}; one of {sorted(COMPRESSIONS)}")


# ---------------------------------------------------------------------------------------------
# reading


class BigArchive:
    """An EB v3 / BIGF / BIG4 archive over one buffer.

    Use :meth:`open` for a file (memory-mapped) or :meth:`from_buffer` for bytes; nested archives
    come from :meth:`open_nested`.
    """

    def __init__(
        self,
        data: bytes | memoryview | mmap.mmap,
        path: str,
        *,
        base: int = 0,
        ancestors: tuple[tuple[int, int], ...] = (),
        limit: int = MAX_ENTRY_SIZE,
    ) -> None:
        self.data = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        self.path = path
        self.base = base  # offset of this buffer in the root file (stored nesting)
        self.ancestors = ancestors  # (base, size) of the enclosing archives
        self.limit = limit
        magic = bytes(self.data[:4])
        if magic in (b"BIGF", b"BIG4"):
            self.kind = magic.decode()
            self.entries = self._parse_legacy()
        else:
            self.kind = "EB3"
            self.entries = self._parse_eb3()
        self._by_path = {e.path: e for e in self.entries}

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | PathLike[str]) -> BigArchive:
        """Memory-map a file and parse it (the file stays mapped while the archive lives)."""
        p = Path(path)
        with open(p, "rb") as f:
            size = p.stat().st_size
            if size == 0:
                raise FormatError(p, 0, "an archive header", "an empty file")
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return cls(mapped, str(p))

    @classmethod
    def from_buffer(cls, data: bytes | memoryview, path: str = "<big>") -> BigArchive:
        """Parse an archive held in memory."""
        return cls(data, path)

    # -- parsing -------------------------------------------------------------------------------
    def _parse_eb3(self) -> list[BigEntry]:
        r = Reader(self.data, self.path)
        r.need(0, _EB_HEADER, "EB v3 header")
        if r.u16(0) != 0x4542:
            raise FormatError(
                self.path, 0, "archive magic 'EB' (EB v3), 'BIGF' or 'BIG4'", bytes(self.data[:4])
            )
        version = r.u16(2, "version")
        if version != 3:
            raise UnsupportedError(self.path, 2, "EB archive version 3", version)
        count = r.u32(4, "entry count")
        flags = r.u16(8, "flags")
        shift = r.u8(10, "alignment shift")
        index_size, names_size = r.u32(12, "index size"), r.u32(16, "names size")
        name_size, dir_size = r.u8(20, "name record size"), r.u8(21, "directory record size")
        entry_size = 20 if flags & 1 else 16
        if shift > 24:
            raise FormatError(self.path, 10, "alignment shift <= 24", shift)
        r.count(_EB_HEADER, count, entry_size, "entry table", MAX_ENTRIES)
        comp_at = _EB_HEADER + align(entry_size * count, 16)
        r.need(comp_at, count, "compression bytes")
        if count and name_size < 3:
            raise FormatError(self.path, 20, "name record size >= 3", name_size)
        r.count(index_size, count, name_size, "name records")
        dirs_at = index_size + align(name_size * count, 16)
        names_end = index_size + names_size
        r.need(index_size, names_size, "name and directory records")
        dirs: list[str] = []
        if dir_size:
            raw = bytes(self.data[dirs_at : max(dirs_at, names_end)])
            for k in range(len(raw) // dir_size):
                dirs.append(raw[k * dir_size : (k + 1) * dir_size].split(b"\0", 1)[0].decode("latin-1"))
        table = bytes(self.data[_EB_HEADER : _EB_HEADER + entry_size * count])
        comps = bytes(self.data[comp_at : comp_at + count])
        names = bytes(self.data[index_size : index_size + name_size * count])
        size = len(self.data)
        out: list[BigEntry] = []
        for k in range(count):
            at = k * entry_size
            off, stored, unpacked = struct.unpack_from(">III", table, at)
            off <<= shift
            unpacked = unpacked or stored
            stored = stored or unpacked
            rec = names[k * name_size : (k + 1) * name_size]
            d = (rec[0] << 8) | rec[1]
            name = rec[2:].split(b"\0", 1)[0].decode("latin-1")
            folder = dirs[d] if d < len(dirs) else ""
            full = name if folder in ("", ".") else f"{folder}/{name}"
            full = full.replace("\\", "/")
            if off + stored > size:
                raise FormatError(
                    self.path,
                    _EB_HEADER + at,
                    f"entry {k} ({full}) inside the archive ({size} bytes)",
                    f"offset {off} + size {stored}",
                )
            if unpacked > self.limit:
                raise FormatError(
                    self.path,
                    _EB_HEADER + at + 8,
                    f"entry {k} ({full}) unpacked size at most {self.limit}",
                    unpacked,
                )
            out.append(BigEntry(k, full, off, stored, unpacked, comps[k]))
        return out

    def _parse_legacy(self) -> list[BigEntry]:
        r = Reader(self.data, self.path)
        count, end = r.u32(8, "entry count"), r.u32(12, "header size")
        if end < 16 or end > len(self.data):
            raise FormatError(self.path, 12, f"header size within 16..{len(self.data)}", end)
        r.count(16, count, 9, "entry table", MAX_ENTRIES)
        table = bytes(self.data[:end])
        out: list[BigEntry] = []
        cursor = 16
        for k in range(count):
            if cursor + 8 > end:
                raise FormatError(self.path, cursor, f"entry {k} within the header ({end} bytes)")
            off, stored = struct.unpack_from(">II", table, cursor)
            stop = table.find(b"\0", cursor + 8)
            if stop < 0:
                raise FormatError(self.path, cursor + 8, f"NUL-terminated name of entry {k}")
            name = table[cursor + 8 : stop].decode("latin-1").replace("\\", "/")
            if off + stored > len(self.data):
                raise FormatError(
                    self.path,
                    cursor,
                    f"entry {k} ({name}) inside the archive",
                    f"offset {off} + size {stored}",
                )
            comp, unpacked = 0, stored
            head = self.data[off : off + min(stored, 10)]
            if refpack.is_refpack(head):
                try:
                    _, unpacked, _ = refpack.header_info(head, name)
                    comp = 1
                except FormatError:
                    comp, unpacked = 0, stored
            out.append(BigEntry(k, name, off, stored, unpacked, comp))
            cursor = stop + 1
        return out

    # -- access --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, path: str) -> bool:
        return path in self._by_path

    def entry(self, path: str | BigEntry) -> BigEntry:
        """The entry of a path (``dir/name``) or the entry itself."""
        if isinstance(path, BigEntry):
            return path
        try:
            return self._by_path[path]
        except KeyError:
            raise FormatError(self.path, None, f"an entry named {path!r}", "no such entry") from None

    def raw(self, entry: str | BigEntry) -> memoryview:
        """The stored bytes of an entry (zero-copy)."""
        e = self.entry(entry)
        return self.data[e.offset : e.offset + e.stored_size]

    def view(self, entry: str | BigEntry) -> memoryview:
        """The unpacked bytes of an entry: a zero-copy slice when stored, else decompressed."""
        e = self.entry(entry)
        out = decompress(self.raw(e), e.compression, e.unpacked_size, f"{self.path}+{e.path}", self.limit)
        return out if isinstance(out, memoryview) else memoryview(out)

    def read(self, entry: str | BigEntry) -> bytes:
        """The unpacked bytes of an entry (a copy)."""
        return bytes(self.view(entry))

    def open_nested(self, entry: str | BigEntry) -> BigArchive:
        """Open an archive stored in an entry, on a slice of this buffer (no temp files).

        Raises FormatError for an entry that spans this archive or an enclosing one (a cycle) and
        for nesting deeper than :data:`MAX_DEPTH`.
        """
        e = self.entry(entry)
        where = f"{self.path}+{e.path}"
        chain = self.ancestors + ((self.base, len(self.data)),)
        if len(chain) >= MAX_DEPTH:
            raise FormatError(where, e.offset, f"archive nesting at most {MAX_DEPTH} deep", len(chain) + 1)
        if e.compression == 0:
            span = (self.base + e.offset, e.stored_size)
            if span in chain:
                raise FormatError(
                    self.path,
                    e.offset,
                    f"nested archive {e.path!r} inside its parent, not the parent itself (cycle)",
                    f"span {span}",
                )
            return BigArchive(self.view(e), where, base=span[0], ancestors=chain, limit=self.limit)
        # unpacked bytes are a new buffer: give it a base outside every file span
        return BigArchive(self.view(e), where, base=-(len(chain) + 1), ancestors=chain, limit=self.limit)

    def close(self) -> None:
        """Release the buffer (entries' views must not be used afterwards)."""
        obj = self.data.obj
        self.data.release()
        if isinstance(obj, mmap.mmap) and not self.ancestors:
            try:
                obj.close()
            except BufferError:
                pass  # views still exported; the map closes when they are gone

    def __enter__(self) -> BigArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# writing


FileSpec = tuple[str, bytes] | tuple[str, bytes, str]


def _split(path: str) -> tuple[str, str]:
    path = path.replace("\\", "/")
    if "/" in path:
        folder, name = path.rsplit("/", 1)
        return folder, name
    return "", path


def _pack_entries(
    items: list[tuple[str, bytes, str]], cursor: int, shift: int, entry_size: int
) -> tuple[bytes, bytes, list[tuple[int, bytes]]]:
    """The entry table, the compression byte per entry and each file's packed data with its
    offset, the data laid out from ``cursor`` aligned to ``1 << shift`` bytes."""
    table, comps = bytearray(), bytearray()
    blobs: list[tuple[int, bytes]] = []
    for _path, data, comp in items:
        if not data:
            comp = "none"  # an unpacked size of 0 would read as "= stored size"
        packed = compress(data, comp)
        table += struct.pack(">III", cursor >> shift, len(packed), len(data)) + bytes(entry_size - 12)
        comps.append(COMPRESSIONS[comp])
        blobs.append((cursor, packed))
        cursor = align(cursor + len(packed), 1 << shift)
    return bytes(table), bytes(comps), blobs


def _name_table(split: list[tuple[str, str]], dirs: list[str], name_size: int, dir_size: int) -> bytes:
    """The names (directory index + name, ``name_size`` each, padded to 16) then the directories."""
    out = bytearray()
    for folder, name in split:
        out += struct.pack(">H", dirs.index(folder)) + name.encode("latin-1").ljust(name_size - 2, b"\0")
    out += bytes(align(len(out), 16) - len(out))
    for d in dirs:
        out += d.encode("latin-1").ljust(dir_size, b"\0")
    return bytes(out)


def write_big(
    files: Iterable[FileSpec],
    *,
    compression: str = "none",
    alignment_shift: int = 4,
    wide_entries: bool = False,
) -> bytes:
    """Build an EB v3 archive.

    Parameters
    ----------
    files:
        ``(path, data)`` or ``(path, data, compression)`` in archive order; ``path`` may hold one
        directory level (``dir/name``).
    compression:
        Default :data:`COMPRESSIONS` name for files that do not name their own.
    alignment_shift:
        Entry data is aligned to ``1 << alignment_shift`` bytes (offsets are stored shifted).
    wide_entries:
        Write 20-byte entries (flags bit0) instead of 16-byte ones.
    """
    items = [(f[0], bytes(f[1]), f[2] if len(f) > 2 else compression) for f in files]
    for _, _, c in items:
        if c not in COMPRESSIONS:
            raise ValueError(f"unknown compression {c!r}; one of {sorted(COMPRESSIONS)}")
    split = [_split(p) for p, _, _ in items]
    dirs: list[str] = []
    for folder, _ in split:
        if folder not in dirs:
            dirs.append(folder)
    if not dirs:
        dirs = [""]
    count = len(items)
    entry_size = 20 if wide_entries else 16
    name_size = max([len(n.encode("latin-1")) for _, n in split] + [1]) + 3
    name_size = align(name_size, 4)
    dir_size = align(max(len(d.encode("latin-1")) for d in dirs) + 1, 4)
    if name_size > 255 or dir_size > 255:
        raise ValueError("EB v3 names and directories are at most 252 bytes")
    comp_at = _EB_HEADER + align(entry_size * count, 16)
    index_size = align(comp_at + count, 16)
    names_size = align(name_size * count, 16) + dir_size * len(dirs)
    unit = 1 << alignment_shift
    cursor = align(index_size + names_size, unit)
    table, comps, blobs = _pack_entries(items, cursor, alignment_shift, entry_size)
    header = struct.pack(
        ">HHIHBBIIBB",
        0x4542,
        3,
        count,
        1 if wide_entries else 0,
        alignment_shift,
        0,
        index_size,
        names_size,
        name_size,
        dir_size,
    )
    out = bytearray(header.ljust(_EB_HEADER, b"\0"))
    out += table
    out += bytes(comp_at - len(out)) + comps
    out += bytes(index_size - len(out))
    out += _name_table(split, dirs, name_size, dir_size)
    for at, packed in blobs:
        out += bytes(at - len(out)) + packed
    out += bytes(align(len(out), unit) - len(out))
    return bytes(out)


def write_legacy_big(
    files: Sequence[FileSpec], *, magic: bytes = b"BIGF", compression: str = "none"
) -> bytes:
    """Build a legacy ``BIGF`` / ``BIG4`` archive.

    Header: magic, u32 archive size (little-endian, as EA writes it; not checked by the reader),
    u32 count and u32 header size (big-endian); then per entry u32 offset, u32 size, NUL-terminated
    name. ``compression`` may be ``"none"`` or ``"refpack"`` (RefPack entries are recognised by
    their header when read).
    """
    if magic not in (b"BIGF", b"BIG4"):
        raise ValueError("magic must be BIGF or BIG4")
    items = [(f[0], bytes(f[1]), f[2] if len(f) > 2 else compression) for f in files]
    packed = []
    for path, data, comp in items:
        if comp not in ("none", "refpack"):
            raise ValueError("legacy archives hold stored or RefPack entries")
        packed.append((path.replace("/", "\\").encode("latin-1"), compress(data, comp)))
    end = 16 + sum(8 + len(n) + 1 for n, _ in packed)
    cursor = end
    table = bytearray()
    for name, blob in packed:
        table += struct.pack(">II", cursor, len(blob)) + name + b"\0"
        cursor += len(blob)
    out = bytearray(magic + struct.pack("<I", cursor) + struct.pack(">II", len(packed), end))
    out += table
    for _, blob in packed:
        out += blob
    return bytes(out)
