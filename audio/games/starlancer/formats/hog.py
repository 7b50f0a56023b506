"""BIGF ``.hog`` archives (Starlancer): tolerant reader, writer, and the game's member-name rule.

Layout (spec 1.1, every integer big-endian): ``"BIGF"``, u32 total size (not validated), u32 entry
count, u32 data offset; then from offset 16 per entry u32 offset, u32 stored size and a
NUL-terminated name. Shipped ``msspeech.hog``/``pilots.hog`` count one entry more than they hold
(a record of ``0xCD`` bytes): the reader stops at the first implausible entry instead of trusting
the count (``tolerant=False`` raises instead). Members are packed back to back; names are flat,
case varies and may repeat.

Reading by the game's name (spec 1.2): cut at the first dot iff the next two characters are
lowercase ``ut``; keep what follows the last backslash; match case-insensitively (first of
duplicates, which is our choice: the game's pick is unknown); expand the member iff it starts
``10 FB`` (RefPack).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from audio.containers import refpack
from audio.core.errors import FormatError

__all__ = [
    "FILLER_BYTE",
    "MAGIC",
    "Hog",
    "HogEntry",
    "MissingMember",
    "expand",
    "member_name",
    "open_hog",
    "read_hog",
    "write_hog",
]

MAGIC = b"BIGF"
FILLER_BYTE = 0xCD
"""MSVC's uninitialised-memory pattern, the filler record's bytes."""
REFPACK_MAGIC = b"\x10\xfb"


class MissingMember(FormatError):
    """A member the game asks for is not in the archive (fatal in the game; one line here)."""


@dataclass(frozen=True)
class HogEntry:
    """One directory entry: name as stored, absolute offset and stored size (bytes)."""

    name: str
    offset: int
    size: int
    index: int


def member_name(game_name: str) -> str:
    """The member a game-side name refers to: ``ms_speech\\ms1_ban_001.ut`` -> ``ms1_ban_001``.

    Cut at the first dot iff the two characters after it are lowercase ``ut``; then keep what
    follows the last backslash (only ``\\`` separates folders). Matching is case-insensitive.
    """
    dot = game_name.find(".")
    if dot >= 0 and game_name[dot + 1 : dot + 3] == "ut":
        game_name = game_name[:dot]
    return game_name.rsplit("\\", 1)[-1]


def expand(data: bytes, path: str = "<member>") -> bytes:
    """RefPack-decode ``data`` iff it starts exactly ``10 FB``; anything else as stored."""
    if data[:2] == REFPACK_MAGIC:
        return refpack.decode(data, path)
    return data


@dataclass
class Hog:
    """A parsed archive. ``declared`` is the header's count, ``filler`` the entries it declared
    but the directory does not hold, ``duplicates`` the names (lower case) stored more than once."""

    data: bytes
    path: str
    entries: list[HogEntry]
    declared: int
    data_offset: int
    filler: int = 0
    duplicates: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_name: dict[str, HogEntry] = {}
        seen: set[str] = set()
        for e in self.entries:
            key = e.name.lower()
            if key in self._by_name:
                if key not in seen:
                    self.duplicates.append(key)
                    seen.add(key)
                continue
            self._by_name[key] = e

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def find(self, name: str) -> HogEntry | None:
        """The entry stored under ``name`` (case-insensitive; the first of duplicates)."""
        return self._by_name.get(name.lower())

    def __contains__(self, name: str) -> bool:
        return self.find(name) is not None

    def raw(self, entry: HogEntry) -> bytes:
        return self.data[entry.offset : entry.offset + entry.size]

    def read(self, name: str, *, game_name: bool = True) -> bytes:
        """A member by the game's name (``game_name``: apply :func:`member_name` first), expanded
        if RefPack'd; :class:`MissingMember` if absent."""
        key = member_name(name) if game_name else name
        e = self.find(key)
        if e is None:
            raise MissingMember(self.path, None, f"member {key!r} (asked as {name!r})", "no such member")
        return expand(self.raw(e), f"{self.path}:{e.name}")


def _entry_at(data: bytes, pos: int, data_offset: int) -> tuple[int, int, str, int] | str:
    """Parse one directory entry at ``pos``: ``(offset, size, name, next_pos)`` or why implausible."""
    if pos + 9 > data_offset:
        return "entry runs into the data area"
    off, size = struct.unpack_from(">II", data, pos)
    end = data.find(b"\0", pos + 8, data_offset)
    if end < 0:
        return "name without a NUL before the data offset"
    raw = data[pos + 8 : end]
    if not raw or any(b < 0x20 or b > 0x7E for b in raw):
        return f"name not printable ASCII ({raw[:16]!r})"
    if off < data_offset or off + size > len(data):
        return f"member 0x{off:X}+{size} outside 0x{data_offset:X}..0x{len(data):X}"
    return off, size, raw.decode("ascii"), end + 1


def read_hog(data: bytes | memoryview, path: str = "<hog>", *, tolerant: bool = True) -> Hog:
    """Parse a BIGF archive; ``tolerant`` stops at the first implausible entry (the filler record)."""
    data = bytes(data)
    if len(data) < 16 or data[:4] != MAGIC:
        raise FormatError(path, 0, "BIGF header (16 bytes)", data[:4])
    _total, count, data_offset = struct.unpack_from(">III", data, 4)
    if not 16 <= data_offset <= len(data):
        raise FormatError(path, 12, f"data offset within 16..{len(data)}", data_offset)
    entries: list[HogEntry] = []
    pos = 16
    for i in range(count):
        got = _entry_at(data, pos, data_offset)
        if isinstance(got, str):
            if not tolerant:
                raise FormatError(path, pos, f"directory entry {i} of {count}", got)
            break
        off, size, name, pos = got
        entries.append(HogEntry(name, off, size, i))
    return Hog(data, path, entries, count, data_offset, count - len(entries))


def open_hog(path: str | Path, *, tolerant: bool = True) -> Hog:
    """Read and parse an archive file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise FormatError(p, None, "a readable .hog file", exc.strerror) from None
    return read_hog(data, str(p), tolerant=tolerant)


def write_hog(members: list[tuple[str, bytes]], *, filler: bool = False, compress: bool = False) -> bytes:
    """Build a BIGF archive of ``(name, stored bytes)`` in order (duplicates allowed).

    ``compress`` RefPack-encodes every member (the way ``resource.hog`` stores them); ``filler``
    counts one entry more and writes a 12-byte ``0xCD`` record after the directory, as in the
    shipped ``msspeech.hog``.
    """
    blobs = [(n, refpack.encode(b) if compress else bytes(b)) for n, b in members]
    for n, _ in blobs:
        if not n or "\0" in n or any(not 0x20 <= ord(c) <= 0x7E for c in n):
            raise ValueError(f"member name must be printable ASCII without NUL, got {n!r}")
    dir_size = sum(8 + len(n) + 1 for n, _ in blobs) + (12 if filler else 0)
    data_offset = 16 + dir_size
    directory = bytearray()
    body = bytearray()
    for n, b in blobs:
        directory += struct.pack(">II", data_offset + len(body), len(b)) + n.encode("ascii") + b"\0"
        body += b
    if filler:
        directory += bytes([FILLER_BYTE]) * 12
    total = data_offset + len(body)
    head = MAGIC + struct.pack(">III", total, len(blobs) + (1 if filler else 0), data_offset)
    return head + bytes(directory) + bytes(body)
