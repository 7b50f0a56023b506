"""The speech library's event table (``<prefix>_Events.evt``): model, reader and writer.

All multi-byte values are big-endian. See ``shared/specs/skate3-speech.md`` section 1.4.
The model keeps every feature the library does not implement (external conditions,
flags2 pairing / follow-ups, locals, clip lookup modes, parameters) so the library can
fail closed with a reason instead of guessing.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from audio.core.binary import Reader, align
from audio.core.errors import FormatError

__all__ = [
    "ClipRef",
    "EvtRecord",
    "EvtEvent",
    "EvtTable",
    "BANK_STRIDE",
    "event_id",
    "parse_evt",
    "write_evt",
]

#: Event ids are ``bank * BANK_STRIDE + n``.
BANK_STRIDE = 0x2000


def event_id(bank: int, n: int) -> int:
    """The id of event ``n`` of ``bank`` (living world bank 1: 8192 + n)."""
    return bank * BANK_STRIDE + n


@dataclass(frozen=True)
class ClipRef:
    """An 8-byte clip entry of a record: ``clip_id`` is the ``.hdr`` id."""

    clip_id: int
    byte2: int = 0
    lookup_mode: int = 0  # 0 = by id; anything else is unsupported
    param_count: int = 0  # i8; != 0 is unsupported
    rest: bytes = b"\0\0\0\0"  # bytes +4..+7 as stored (the port reads only +4 as i8)


@dataclass(frozen=True)
class EvtRecord:
    """One weighted record: its clips play in sequence when it is picked."""

    weight_code: int  # b: weight = [1,4,16,...,16384][b >> 5] * (b & 31)
    probability: int  # percent
    mode: int  # low 2 bits of byte +2: 0/2 always, 1 flagged channel, 3 never
    locals: int  # byte +3; != 0 is unsupported
    values: tuple[int, ...]  # nV field masks (0 = any)
    clips: tuple[ClipRef, ...]  # at most 12
    condition_bits: bytes = b""  # this record's external-condition bits (nC != 0 only)

    @property
    def weight(self) -> int:
        return (1, 4, 16, 64, 256, 1024, 4096, 16384)[self.weight_code >> 5] * (self.weight_code & 31)

    def unsupported(self) -> list[str]:
        """Reasons the library must skip this record (empty if none)."""
        why = []
        if self.locals:
            why.append(f"locals {self.locals}")
        if len(self.clips) > 12:
            why.append(f"{len(self.clips)} clips (at most 12)")
        for c in self.clips:
            if c.lookup_mode or c.param_count:
                why.append(f"clip {c.clip_id}: lookup mode {c.lookup_mode}, {c.param_count} parameters")
        return why


@dataclass(frozen=True)
class EvtEvent:
    """One event: id, queue timeout (console frames), priority, records, fields."""

    id: int
    timeout: int  # queue timeout in console frames (~30 fps)
    priority: int  # .evt priority (500-550); the player uses the tuning's
    flags: int  # byte +8 (high nibble = field count)
    probability: int  # percent
    flags2: int  # bit3 record pairing, bit4 follow-up lists (unsupported)
    byte11: int  # not interpreted, kept for the writer
    fields: tuple[int, ...]  # per field: the 1-based request word it reads (0 = packed word)
    records: tuple[EvtRecord, ...]
    conditions: tuple[bytes, ...] = ()  # nC 3-byte external-condition descriptors
    name: str = ""
    field_descriptors: tuple[bytes, ...] = ()  # raw 3-byte descriptors when any is not FF <word> 04

    def unsupported(self) -> list[str]:
        """Reasons the library must not play this event (empty if none)."""
        why = []
        if self.conditions:
            why.append(f"{len(self.conditions)} external conditions")
        if self.flags2 & 0x18:
            why.append(f"flags2 0x{self.flags2:02X} (record pairing / follow-up lists)")
        if self.field_descriptors:
            why.append("field descriptors other than FF <word> 04")
        return why

    @property
    def condition_count(self) -> int:
        return len(self.conditions)


@dataclass
class EvtTable:
    """A whole ``.evt`` file."""

    bank: int  # main cast 0, living world 1, announcer 3, cameraman 4
    sub_bank: int
    events: list[EvtEvent] = field(default_factory=list)
    path: str = "<evt>"

    def by_id(self) -> dict[int, EvtEvent]:
        return {e.id: e for e in self.events}

    def packed_word(self, event_id: int) -> int:
        """Request word 0: ``(id << 16) | (sub_bank << 8) | bank``."""
        return ((event_id & 0xFFFF) << 16) | ((self.sub_bank & 0xFF) << 8) | (self.bank & 0xFF)


# ---------------------------------------------------------------------------------------------
# reader


def _fields_at(o: int, n_records: int, n_cond: int) -> tuple[int, int, int]:
    """(condition bits, condition descriptors, field descriptors) offsets of the event at ``o``."""
    bits = o + 12 + align(2 * n_records, 4)
    descs = bits + align((n_cond + 7) // 8 * n_records * 2, 4)
    return bits, descs, descs + align(3 * n_cond, 4)


def _parse_record(r: Reader, at: int, n_cond: int, bits: bytes, k: int) -> EvtRecord:
    byte2 = r.u8(at + 2, "record clip count")
    n_clips = byte2 >> 2
    n_values = r.u8(at + 4, "record value count")
    values_at = at + 8 + align(n_clips, 4)
    r.need(values_at, 4 * n_values, "record field values")
    values = struct.unpack_from(f">{n_values}I", r.data, values_at)
    clips = []
    for c in range(n_clips):
        entry = at + 4 * r.u8(at + 8 + c, "clip entry offset")
        raw = r.bytes(entry, 8, "8-byte clip entry")
        rest = raw[4:8]
        clips.append(
            ClipRef((raw[0] << 8) | raw[1], raw[2], raw[3], rest[0] - 256 if rest[0] > 127 else rest[0], rest)
        )
    per = (n_cond + 7) // 8 * 2
    return EvtRecord(
        weight_code=r.u8(at),
        probability=r.u8(at + 1),
        mode=byte2 & 3,
        locals=r.u8(at + 3),
        values=tuple(values),
        clips=tuple(clips),
        condition_bits=bits[k * per : (k + 1) * per],
    )


def _parse_event(r: Reader, o: int, name: str) -> EvtEvent:
    r.need(o, 12, "event header")
    ev_id, timeout, priority = struct.unpack_from(">HHH", r.data, o)
    n_records, n_cond, flags, prob, flags2, byte11 = (r.u8(o + k) for k in range(6, 12))
    n_fields = flags >> 4
    bits_at, descs_at, fields_at = _fields_at(o, n_records, n_cond)
    r.need(o + 12, 2 * n_records, "record offsets")
    offsets = struct.unpack_from(f">{n_records}H", r.data, o + 12)
    bits = r.bytes(bits_at, (n_cond + 7) // 8 * n_records * 2, "condition bits")
    conditions = tuple(r.bytes(descs_at + 3 * c, 3, "condition descriptor") for c in range(n_cond))
    descs = [r.bytes(fields_at + 3 * k, 3, "field descriptor FF <word> 04") for k in range(n_fields)]
    fields = tuple(d[1] for d in descs)
    standard = all(d[0] == 0xFF and d[2] == 0x04 for d in descs)
    records = tuple(_parse_record(r, o + 4 * off, n_cond, bits, k) for k, off in enumerate(offsets))
    return EvtEvent(
        id=ev_id,
        timeout=timeout,
        priority=priority,
        flags=flags,
        probability=prob,
        flags2=flags2,
        byte11=byte11,
        fields=fields,
        records=records,
        conditions=conditions,
        name=name,
        field_descriptors=() if standard else tuple(descs),
    )


def parse_evt(data: bytes | memoryview, path: str = "<evt>") -> EvtTable:
    """Read a whole ``.evt`` file; every bad offset or count raises :class:`FormatError`."""
    r = Reader(data, str(path))
    names_at = r.u32(4, "name table offset")
    bank, sub_bank = r.u8(8, "bank"), r.u8(9, "sub-bank")
    count = r.u16(0x10, "event count")
    r.count(0x18, count, 2, "event offsets")
    r.count(names_at, count, 32, "name table rows")
    strings = names_at + 32 * count
    events = []
    for i in range(count):
        o = 4 * r.u16(0x18 + 2 * i)
        name_off = r.u32(names_at + 32 * i, "event name offset")
        name = r.cstring(strings + name_off, f"name of event {i}", 256)
        try:
            events.append(_parse_event(r, o, name))
        except FormatError as exc:
            raise FormatError(
                exc.path, exc.offset, f"{exc.expected} (event {i} {name!r} at {o})", exc.found
            ) from None
    return EvtTable(bank=bank, sub_bank=sub_bank, events=events, path=str(path))


# ---------------------------------------------------------------------------------------------
# writer


def _record_bytes(rec: EvtRecord) -> bytes:
    n_clips = len(rec.clips)
    if n_clips > 63 or not 0 <= rec.mode <= 3:
        raise ValueError("a record holds at most 63 clips and a mode 0..3")
    values_at = 8 + align(n_clips, 4)
    entries_at = values_at + 4 * len(rec.values)
    if entries_at + 8 * n_clips > 4 * 255:
        raise ValueError("a record's clip entries must lie within 1020 bytes of it")
    out = bytearray(
        struct.pack(
            ">BBBBB3x", rec.weight_code, rec.probability, n_clips << 2 | rec.mode, rec.locals, len(rec.values)
        )
    )
    out += bytes((entries_at + 8 * c) // 4 for c in range(n_clips))
    out += bytes(values_at - len(out))
    out += struct.pack(f">{len(rec.values)}I", *rec.values)
    for c in rec.clips:
        rest = bytes(c.rest[:4]).ljust(4, b"\0")
        out += struct.pack(">HBB", c.clip_id, c.byte2, c.lookup_mode)
        out += bytes((c.param_count & 0xFF,)) + rest[1:]
    return bytes(out)


def _event_bytes(ev: EvtEvent) -> bytes:
    n_rec, n_cond, n_fields = len(ev.records), len(ev.conditions), len(ev.fields)
    if n_rec > 255 or n_cond > 255 or n_fields > 15:
        raise ValueError(f"event {ev.id}: at most 255 records, 255 conditions and 15 fields")
    bits_at, descs_at, fields_at = _fields_at(0, n_rec, n_cond)
    per = (n_cond + 7) // 8 * 2
    body = bytearray(bytes(fields_at))
    for k, rec in enumerate(ev.records):
        if len(rec.condition_bits) != per:
            raise ValueError(f"event {ev.id} record {k}: {per} condition-bit bytes expected")
        body[bits_at + k * per : bits_at + (k + 1) * per] = rec.condition_bits
    for c, d in enumerate(ev.conditions):
        if len(d) != 3:
            raise ValueError(f"event {ev.id}: condition descriptors are 3 bytes")
        body[descs_at + 3 * c : descs_at + 3 * c + 3] = d
    descs = ev.field_descriptors or tuple(bytes((0xFF, f, 0x04)) for f in ev.fields)
    if len(descs) != n_fields or any(len(d) != 3 or d[1] != f for d, f in zip(descs, ev.fields)):
        raise ValueError(f"event {ev.id}: one 3-byte descriptor per field, naming its word")
    for d in descs:
        body += d
    body += bytes(align(len(body), 4) - len(body))
    offsets = []
    for rec in ev.records:
        offsets.append(len(body) // 4)
        body += _record_bytes(rec)
        body += bytes(align(len(body), 4) - len(body))
    if offsets and offsets[-1] > 0xFFFF:
        raise ValueError(f"event {ev.id}: records past 256 KB of the event")
    struct.pack_into(
        ">HHHBBBBBB",
        body,
        0,
        ev.id,
        ev.timeout,
        ev.priority,
        n_rec,
        n_cond,
        (ev.flags & 0x0F) | n_fields << 4,
        ev.probability,
        ev.flags2,
        ev.byte11,
    )
    struct.pack_into(f">{n_rec}H", body, 12, *offsets)
    return bytes(body)


def write_evt(table: EvtTable) -> bytes:
    """Lay out ``table`` as an ``.evt`` file that :func:`parse_evt` reads back to an equal model."""
    count = len(table.events)
    out = bytearray(align(0x18 + 2 * count, 16))
    offsets = []
    for ev in table.events:
        offsets.append(len(out) // 4)
        out += _event_bytes(ev)
        out += bytes(align(len(out), 16) - len(out))
    if offsets and offsets[-1] > 0xFFFF:
        raise ValueError("events must start within the first 256 KB of an .evt file")
    names_at = len(out)
    strings = bytearray()
    rows = bytearray()
    for ev in table.events:
        rows += struct.pack(">I", len(strings)) + bytes(28)
        strings += ev.name.encode("latin-1") + b"\0"
    out += rows + strings
    out += bytes(align(len(out), 16) - len(out))
    struct.pack_into(">IBB", out, 4, names_at, table.bank, table.sub_bank)
    struct.pack_into(">H", out, 0x10, count)
    struct.pack_into(f">{count}H", out, 0x18, *offsets)
    return bytes(out)
