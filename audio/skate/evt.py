"""The speech library's event table (``<prefix>_Events.evt``): model, reader and writer.

All multi-byte values are big-endian. See ``shared/specs/skate3-speech.md`` section 1.4.
The model keeps every feature the library does not implement (external conditions,
flags2 pairing / follow-ups, locals, clip lookup modes, parameters) so the library can
fail closed with a reason instead of guessing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ClipRef", "EvtRecord", "EvtEvent", "EvtTable"]


@dataclass(frozen=True)
class ClipRef:
    """An 8-byte clip entry of a record: ``clip_id`` is the ``.hdr`` id."""

    clip_id: int
    byte2: int = 0
    lookup_mode: int = 0          # 0 = by id; anything else is unsupported
    param_count: int = 0          # i8; != 0 is unsupported
    rest: bytes = b"\0\0\0\0"     # bytes +4..+7 as stored (the port reads only +4 as i8)


@dataclass(frozen=True)
class EvtRecord:
    """One weighted record: its clips play in sequence when it is picked."""

    weight_code: int              # b: weight = [1,4,16,...,16384][b >> 5] * (b & 31)
    probability: int              # percent
    mode: int                     # low 2 bits of byte +2: 0/2 always, 1 flagged channel, 3 never
    locals: int                   # byte +3; != 0 is unsupported
    values: tuple[int, ...]       # nV field masks (0 = any)
    clips: tuple[ClipRef, ...]    # at most 12
    condition_bits: bytes = b""   # this record's external-condition bits (nC != 0 only)

    @property
    def weight(self) -> int:
        return (1, 4, 16, 64, 256, 1024, 4096, 16384)[self.weight_code >> 5] * (self.weight_code & 31)


@dataclass(frozen=True)
class EvtEvent:
    """One event: id, queue timeout (console frames), priority, records, fields."""

    id: int
    timeout: int                  # queue timeout in console frames (~30 fps)
    priority: int                 # .evt priority (500-550); the player uses the tuning's
    flags: int                    # byte +8 (high nibble = field count)
    probability: int              # percent
    flags2: int                   # bit3 record pairing, bit4 follow-up lists (unsupported)
    byte11: int                   # not interpreted, kept for the writer
    fields: tuple[int, ...]       # per field: the 1-based request word it reads (0 = packed word)
    records: tuple[EvtRecord, ...]
    conditions: tuple[bytes, ...] = ()   # nC 3-byte external-condition descriptors
    name: str = ""

    @property
    def condition_count(self) -> int:
        return len(self.conditions)


@dataclass
class EvtTable:
    """A whole ``.evt`` file."""

    bank: int                     # main cast 0, living world 1, announcer 3, cameraman 4
    sub_bank: int
    events: list[EvtEvent] = field(default_factory=list)
    path: str = "<evt>"

    def by_id(self) -> dict[int, EvtEvent]:
        return {e.id: e for e in self.events}

    def packed_word(self, event_id: int) -> int:
        """Request word 0: ``(id << 16) | (sub_bank << 8) | bank``."""
        return ((event_id & 0xFFFF) << 16) | ((self.sub_bank & 0xFF) << 8) | (self.bank & 0xFF)
