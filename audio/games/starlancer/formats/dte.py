"""Starlancer ``.DTE`` missions: directory, sections, triggers and subjects, parts, routines.

Directory (spec 2.1): 128 slots of 8 bytes (``u16 count, u8 unused, u8 flags, u32 offset``;
offset ``0xFFFF`` = unused); the engine reads the first 27; the first section starts at 0x400.
Little-endian throughout. A section's records are ``count x stride`` bytes, except the string pool
(section 0: NUL-terminated names referenced by byte offset; we read it up to the next section)
and the script (section 6: count in halfwords).

Script layout (spec 3.1): routines tile section 6; a routine is a block (``u16 length`` counting
itself and the padding, code, stale padding to 4 bytes) and its constant table (u32 values, the
table rounded up to 8 bytes). A trigger's block is at ``script + link x 2``, a part's at
``script + start x 2``.

Only the fields the spec names are decoded; every record keeps its raw bytes so writing a parsed
mission back gives the same record bytes. Our own assumption (documented, not the game's): a
global's display name is the pool offset in its first u16 (``GLOBAL_NAME_AT``); it is shown only
when that offset yields a printable name.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

from audio.core.binary import align
from audio.core.errors import FormatError
from audio.games.starlancer.formats.hog import expand

__all__ = [
    "DIR_SIZE",
    "GLOBAL_NAME_AT",
    "NONE16",
    "SLOTS",
    "SLOTS_READ",
    "Dte",
    "FlightGroup",
    "Global",
    "ObjectEntry",
    "Part",
    "Routine",
    "Ship",
    "Slot",
    "Squad",
    "SquadMember",
    "Trigger",
    "load_mission",
    "read_dte",
    "read_routine",
    "write_dte",
    "write_routine",
]

SLOTS = 128
SLOTS_READ = 27
DIR_SIZE = SLOTS * 8
NONE16 = 0xFFFF
GLOBAL_NAME_AT = 0
"""Byte offset of the u16 pool offset we take as a global's name (OUR assumption, see module doc)."""
SIZE_SLOT = 27


@dataclass
class Slot:
    """One directory slot."""

    count: int = 0
    unused: int = 0
    flags: int = 15
    offset: int = NONE16

    @property
    def used(self) -> bool:
        return self.offset != NONE16


@dataclass
class _Record:
    """A fixed-stride record: named fields at fixed offsets, over the record's raw bytes."""

    LAYOUT: ClassVar[tuple[tuple[str, int, str], ...]] = ()
    STRIDE: ClassVar[int] = 0
    raw: bytes = field(default=b"", repr=False)

    @classmethod
    def unpack(cls, buf: bytes, off: int) -> _Record:
        raw = buf[off : off + cls.STRIDE]
        vals = {n: struct.unpack_from("<" + f, raw, o)[0] for n, o, f in cls.LAYOUT}
        if any(f.name == "operands" for f in fields(cls)):
            vals["operands"] = struct.unpack_from("<5I", raw, 0x1C)
        return cls(raw=raw, **vals)

    def pack(self) -> bytes:
        out = bytearray(self.raw.ljust(self.STRIDE, b"\0")[: self.STRIDE])
        for n, o, f in self.LAYOUT:
            struct.pack_into("<" + f, out, o, getattr(self, n))
        if hasattr(self, "operands"):
            struct.pack_into("<5I", out, 0x1C, *tuple(self.operands)[:5])
        return bytes(out)


@dataclass
class Global(_Record):
    """Section 2 (0x0C): ``push_global n`` reads the u32 at ``+4``."""

    LAYOUT = (("name", GLOBAL_NAME_AT, "H"), ("value", 4, "I"))
    STRIDE = 0x0C
    name: int = NONE16
    value: int = 0


@dataclass
class Ship(_Record):
    """Section 3 (0x4C)."""

    LAYOUT = (
        ("object_id", 0, "I"),
        ("name", 4, "H"),
        ("flight_group", 0x14, "B"),
        ("pilot", 0x15, "B"),
        ("kind", 0x18, "H"),
    )
    STRIDE = 0x4C
    object_id: int = 0
    name: int = NONE16
    flight_group: int = 0xFF
    pilot: int = 0xFF
    kind: int = 0


@dataclass
class FlightGroup(_Record):
    """Section 4 (0x14)."""

    LAYOUT = (("object_id", 0, "H"), ("name", 4, "H"), ("wing", 8, "B"))
    STRIDE = 0x14
    object_id: int = 0
    name: int = NONE16
    wing: int = 0


@dataclass
class Trigger(_Record):
    """Section 5 (0x30). ``repeat``: 0 once, 1 always, 2 counted; ``link`` in halfwords into the
    script (``0xFFFF`` none); ``deferred`` (+0x16): 0 = run the thread inside the event."""

    LAYOUT = (
        ("condition", 0, "B"),
        ("repeat", 1, "B"),
        ("link", 2, "H"),
        ("armed", 0x14, "B"),
        ("qualifier", 0x15, "B"),
        ("deferred", 0x16, "B"),
        ("count_a", 0x19, "B"),
        ("count_b", 0x1A, "B"),
    )
    STRIDE = 0x30
    condition: int = 0
    repeat: int = 0
    link: int = NONE16
    armed: int = 1
    qualifier: int = 0xFF
    deferred: int = 0
    count_a: int = 0
    count_b: int = 0
    operands: tuple[int, ...] = (0, 0, 0, 0, 0)


@dataclass
class ObjectEntry(_Record):
    """Section 7 (8), indexed by object ID: ``kind`` 0 ship, 1 flight group, 2 squad; its slice of
    the trigger table."""

    LAYOUT = (("kind", 0, "B"), ("trigger_count", 1, "B"), ("first_trigger", 2, "H"), ("unknown", 4, "I"))
    STRIDE = 8
    kind: int = 0
    trigger_count: int = 0
    first_trigger: int = 0
    unknown: int = 0


@dataclass
class Part(_Record):
    """Section 8 (0x1C): a named routine; ``start``/``extent`` in halfwords; flags bit 0 = start part."""

    LAYOUT = (
        ("name", 0, "H"),
        ("start", 0x0A, "H"),
        ("flags", 0x0C, "B"),
        ("argc", 0x0D, "B"),
        ("extent", 0x10, "H"),
    )
    STRIDE = 0x1C
    name: int = NONE16
    start: int = NONE16
    flags: int = 0
    argc: int = 0
    extent: int = 0


@dataclass
class Squad(_Record):
    """Section 12 (0x0C): ``+8`` first member record."""

    LAYOUT = (("first_member", 8, "I"),)
    STRIDE = 0x0C
    first_member: int = 0


@dataclass
class SquadMember(_Record):
    """Section 13 (0x0C): object ID, squad, component (0xFF none)."""

    LAYOUT = (("object_id", 0, "I"), ("squad", 4, "I"), ("component", 8, "B"))
    STRIDE = 0x0C
    object_id: int = 0
    squad: int = 0
    component: int = 0xFF


_TABLES: dict[int, tuple[str, type[_Record]]] = {
    2: ("globals", Global),
    3: ("ships", Ship),
    4: ("flight_groups", FlightGroup),
    5: ("triggers", Trigger),
    7: ("objects", ObjectEntry),
    8: ("parts", Part),
    12: ("squads", Squad),
    13: ("squad_members", SquadMember),
}
_STRIDES = {1: 2, 10: 1, 14: 8, 15: 0x10, 16: 0x44, 19: 0x0C, 22: 2, 24: 2, 26: 2}


@dataclass
class Routine:
    """A block and its constant table. Offsets are bytes from the script start; ``ip`` values of a
    disassembly are bytes from ``block``."""

    kind: str
    index: int
    name: str
    block: int
    length: int
    end: int
    constants: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return (
            f"trigger {self.index}"
            if self.kind == "trigger"
            else (f"part {self.name}" if self.kind == "part" else self.name)
        )


@dataclass
class Dte:
    """A parsed mission (see the module docstring). ``extra`` holds other sections' raw bytes."""

    path: str = "<dte>"
    slots: list[Slot] = field(default_factory=lambda: [Slot() for _ in range(SLOTS)])
    pool: bytes = b""
    script: bytes = b""
    globals: list[Global] = field(default_factory=list)
    ships: list[Ship] = field(default_factory=list)
    flight_groups: list[FlightGroup] = field(default_factory=list)
    triggers: list[Trigger] = field(default_factory=list)
    objects: list[ObjectEntry] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    squads: list[Squad] = field(default_factory=list)
    squad_members: list[SquadMember] = field(default_factory=list)
    extra: dict[int, bytes] = field(default_factory=dict)

    # -- names ---------------------------------------------------------------------------
    def string(self, offset: int) -> str | None:
        """The pool string at byte ``offset`` (None if out of range or unterminated)."""
        if not 0 <= offset < len(self.pool):
            return None
        end = self.pool.find(b"\0", offset)
        return None if end < 0 else self.pool[offset:end].decode("latin-1")

    def _name(self, rec: _Record) -> str | None:
        s = self.string(getattr(rec, "name", NONE16))
        return s if s and s.isprintable() else None

    def ship_name(self, n: int) -> str | None:
        return self._name(self.ships[n]) if 0 <= n < len(self.ships) else None

    def flight_group_name(self, n: int) -> str | None:
        return self._name(self.flight_groups[n]) if 0 <= n < len(self.flight_groups) else None

    def global_name(self, n: int) -> str | None:
        return self._name(self.globals[n]) if 0 <= n < len(self.globals) else None

    def part_name(self, n: int) -> str:
        got = self._name(self.parts[n]) if 0 <= n < len(self.parts) else None
        return got or f"part{n}"

    def part_index(self, name: str) -> int | None:
        for i in range(len(self.parts)):
            if self.part_name(i).lower() == name.lower():
                return i
        return None

    # -- triggers and subjects -------------------------------------------------------------
    def trigger_subject(self, index: int) -> int | None:
        """Object ID whose section-7 slice holds trigger ``index`` (None: in no slice, never fires)."""
        for oid, o in enumerate(self.objects):
            if o.first_trigger <= index < o.first_trigger + o.trigger_count:
                return oid
        return None

    def object_name(self, oid: int) -> str:
        """A display name for object ``oid``: its ship / flight group name, else ``object(n)``."""
        kind = self.objects[oid].kind if 0 <= oid < len(self.objects) else None
        if kind == 0:
            for i, s in enumerate(self.ships):
                if s.object_id == oid:
                    return self.ship_name(i) or f"ship({i})"
        if kind == 1:
            for i, g in enumerate(self.flight_groups):
                if g.object_id == oid:
                    return self.flight_group_name(i) or f"flight_group({i})"
        return f"object({oid})"

    def start_parts(self) -> list[int]:
        """Parts with flags bit 0 (run at mission start); shipped missions have exactly one."""
        return [i for i, p in enumerate(self.parts) if p.flags & 1 and p.start != NONE16]

    # -- routines --------------------------------------------------------------------------
    def routines(self, errors: list[str] | None = None) -> list[Routine]:
        """Every trigger block (link != 0xFFFF) and part, each with its constant table; a block
        shared by several triggers is listed once (under the first). A bad block raises, or with
        ``errors`` given is left out and its message appended."""
        heads: list[tuple[int, str, int, str]] = []
        for i, t in enumerate(self.triggers):
            if t.link != NONE16:
                heads.append((t.link * 2, "trigger", i, f"trigger {i}"))
        for i, p in enumerate(self.parts):
            if p.start != NONE16:
                heads.append((p.start * 2, "part", i, self.part_name(i)))
        starts = sorted({h[0] for h in heads} | {len(self.script)})
        out: list[Routine] = []
        seen: set[int] = set()
        for block, kind, i, name in heads:
            if block in seen:
                continue
            seen.add(block)
            nxt = next((s for s in starts if s > block), len(self.script))
            try:
                out.append(read_routine(self.script, block, nxt, f"{self.path}:script", kind, i, name))
            except FormatError as exc:
                if errors is None:
                    raise
                errors.append(str(exc))
        return out

    def routine_of(self, kind: str, index: int) -> Routine:
        block = (self.triggers[index].link if kind == "trigger" else self.parts[index].start) * 2
        starts = sorted(
            {t.link * 2 for t in self.triggers if t.link != NONE16}
            | {p.start * 2 for p in self.parts if p.start != NONE16}
        )
        nxt = next((s for s in starts if s > block), len(self.script))
        name = f"trigger {index}" if kind == "trigger" else self.part_name(index)
        return read_routine(self.script, block, nxt, f"{self.path}:script", kind, index, name)


def read_routine(
    script: bytes,
    block: int,
    end: int,
    path: str = "<script>",
    kind: str = "raw",
    index: int = 0,
    name: str = "raw",
) -> Routine:
    """The routine at ``block`` whose constant table runs to ``end`` (bytes)."""
    if not 0 <= block <= len(script) - 2:
        raise FormatError(path, block, f"a routine block inside the {len(script)}-byte script")
    length = struct.unpack_from("<H", script, block)[0]
    end = min(max(end, block), len(script))
    if length < 2 or block + length > end:
        raise FormatError(path, block, f"block length 2..{end - block} (counts its own two bytes)", length)
    n = (end - block - length) // 4
    consts = struct.unpack_from(f"<{n}I", script, block + length) if n else ()
    return Routine(kind, index, name, block, length, end, tuple(consts))


def write_routine(
    code: bytes,
    constants: list[int] | tuple[int, ...] = (),
    *,
    pad: bytes = b"\0",
    filler: bytes = b"\0\0\0\0",
) -> bytes:
    """A routine: ``u16 length`` + ``code`` + padding to 4 bytes (``pad`` cycled: stale bytes), then
    the constants (u32 LE), the table rounded up to 8 bytes with ``filler``."""
    body = 2 + len(code)
    length = align(body, 4)
    if length > 0xFFFF:
        raise ValueError(f"block of {length} bytes does not fit its u16 length")
    padding = (pad * (length - body + 1))[: length - body] if pad else b"\0" * (length - body)
    table = b"".join(struct.pack("<I", c & 0xFFFFFFFF) for c in constants)
    table += (filler * 2)[: align(len(table), 8) - len(table)]
    return struct.pack("<H", length) + bytes(code) + padding + table


def _section_sizes(slots: list[Slot], size: int) -> dict[int, tuple[int, int]]:
    """Section index -> (offset, byte size) for the slots the engine reads."""
    used = sorted({s.offset for s in slots[:SLOTS_READ] if s.used and s.offset <= size} | {size})
    out: dict[int, tuple[int, int]] = {}
    for i, s in enumerate(slots[:SLOTS_READ]):
        if not s.used or i == SIZE_SLOT:
            continue
        if i in _TABLES:
            n = s.count * _TABLES[i][1].STRIDE
        elif i == 6:
            n = 2 * s.count
        elif i in _STRIDES:
            n = s.count * _STRIDES[i]
        else:  # the pool and unknown sections: up to the next section
            n = next((o for o in used if o > s.offset), size) - s.offset
        out[i] = (s.offset, n)
    return out


def read_dte(data: bytes | memoryview, path: str = "<dte>") -> Dte:
    """Parse an expanded mission (see :func:`load_mission` for RefPack'd files)."""
    data = bytes(data)
    if len(data) < DIR_SIZE:
        raise FormatError(path, 0, f"a {DIR_SIZE}-byte section directory", f"{len(data)} bytes")
    slots = [Slot(*struct.unpack_from("<HBBI", data, 8 * i)) for i in range(SLOTS)]
    dte = Dte(path=path, slots=slots)
    for i, (off, n) in _section_sizes(slots, len(data)).items():
        if off < DIR_SIZE or off + n > len(data):
            raise FormatError(
                path,
                8 * i,
                f"section {i} ({n} bytes at 0x{off:X}) inside the {len(data)}-byte file after the directory",
                off,
            )
        raw = data[off : off + n]
        if i in _TABLES:
            attr, cls = _TABLES[i]
            setattr(dte, attr, [cls.unpack(raw, k * cls.STRIDE) for k in range(slots[i].count)])
        elif i == 0:
            dte.pool = raw
        elif i == 6:
            dte.script = raw
        else:
            dte.extra[i] = raw
    return dte


def load_mission(data: bytes | memoryview, path: str = "<dte>") -> Dte:
    """A mission as stored (RefPack'd iff it starts ``10 FB``, spec 1.3) -> :class:`Dte`."""
    return read_dte(expand(bytes(data), path), path)


def write_dte(dte: Dte) -> bytes:
    """Serialise a mission: the 128-slot directory, then every section in index order from 0x400
    (each 4-byte aligned); slot 27 holds the file size; unused slots read ``0xFFFF``."""
    if len(dte.script) % 2:
        raise ValueError("the script section is counted in halfwords: its length must be even")
    secs: dict[int, tuple[int, bytes]] = {}
    if dte.pool:
        pool = dte.pool + b"\0" * (align(len(dte.pool), 4) - len(dte.pool))
        secs[0] = (min(len(pool), 0xFFFF), pool)
    for i, (attr, _cls) in _TABLES.items():
        recs = getattr(dte, attr)
        if recs:
            secs[i] = (len(recs), b"".join(r.pack() for r in recs))
    if dte.script:
        secs[6] = (len(dte.script) // 2, dte.script)
    for i, raw in dte.extra.items():
        secs[i] = (len(raw) // _STRIDES.get(i, 1) if i in _STRIDES else min(len(raw), 0xFFFF), raw)
    slots = [replace(s) if k >= SLOTS_READ else Slot(flags=s.flags) for k, s in enumerate(dte.slots)]
    body = bytearray()
    for i in sorted(secs):
        count, raw = secs[i]
        off = DIR_SIZE + len(body)
        slots[i] = Slot(count & 0xFFFF, 0, slots[i].flags, off)
        body += raw + b"\0" * (align(len(raw), 4) - len(raw))
    size = DIR_SIZE + len(body)
    slots[SIZE_SLOT] = Slot(0, 0, slots[SIZE_SLOT].flags, size)
    head = b"".join(struct.pack("<HBBI", s.count, s.unused, s.flags, s.offset) for s in slots)
    return head + bytes(body)
