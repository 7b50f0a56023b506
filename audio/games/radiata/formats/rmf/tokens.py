"""The RMF token stream [4]: glyph words and command records, their sizes, a safe walker, and the
token encoders (record, glyph word, End, Space, Newline).

A word with low byte ``b0 >= 0x10`` is a glyph (``index = (b0 - 0x10) + (b1 & 0x3F) * 240``,
``b1 & 0x80`` = the file's own tile, ``b1 & 0x40`` unknown); otherwise a command record of
``2 + 2 * (b1 >> 4)`` bytes, except Proper (CTalk entry 0x26), whose payload is ``2 * b1`` bytes.
The spec writes that record ``0F 6x``; its own dispatch rule (``0F xN`` -> entry ``0x20 + N``, from
the engine's ``b1 & 0x0F``) and ProhibitSkip's one-word ``0F 3x`` show that the digit written first
is the sub-command nibble, so Proper is read as ``b0 == 0x0F and b1 & 0x0F == 6`` (and Jump, the
prologue record ``0F 7x``, as sub 7).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Glyph:
    """A glyph word at file ``offset``."""

    offset: int
    b0: int
    b1: int

    @property
    def index(self) -> int:
        return (self.b0 - 0x10) + (self.b1 & 0x3F) * 240

    @property
    def tile(self) -> bool:
        """``b1 & 0x80``: draw the file's own tile ``index``."""
        return bool(self.b1 & 0x80)

    @property
    def attr40(self) -> bool:
        """``b1 & 0x40``: meaning unknown [4]."""
        return bool(self.b1 & 0x40)


def entry_of(b0: int, b1: int) -> int:
    """The CTalk table entry of a command record: ``b0``, ``0x10 + sub`` (0E) or ``0x20 + sub`` (0F)."""
    if b0 == 0x0E:
        return 0x10 + (b1 & 0x0F)
    if b0 == 0x0F:
        return 0x20 + (b1 & 0x0F)
    return b0


def record_size(b0: int, b1: int) -> int:
    """Bytes of the command record ``b0 b1`` (the size rule and the Proper exception) [4]."""
    if entry_of(b0, b1) == 0x26:
        return 2 + 2 * b1
    return 2 + 2 * (b1 >> 4)


_NAMES = {
    0x00: "End",
    0x01: "Space",
    0x02: "Color",
    0x03: "Dimensions",
    0x04: "Position",
    0x05: "TextStyle",
    0x06: "Signal",
    0x07: "TextSpeed",
    0x08: "Inert08",
    0x09: "StyleSave",
    0x0A: "Newline",
    0x0B: "Inert0B",
    0x0C: "Inert0C",
    0x0D: "Inert0D",
    0x10: "Speaker",
    0x11: "BupVisible",
    0x12: "BupDirection",
    0x13: "BupPosition",
    0x14: "Face",
    0x15: "Speak",
    0x16: "SpeakingCycle",
    0x17: "Emotion",
    0x1A: "EyeMove",
    0x1C: "EyeNumber",
    0x1D: "BupReleaseCount",
    0x1E: "NameWindow",
    0x20: "WaitTime",
    0x22: "WaitSelect",
    0x23: "ProhibitSkip",
    0x24: "WaitSelect2",
    0x25: "Sentence",
    0x26: "Proper",
    0x27: "Jump",
    0x28: "PlaySe",
}


@dataclass(frozen=True)
class Command:
    """A command record at file ``offset``: ``b0 b1`` and its payload bytes."""

    offset: int
    b0: int
    b1: int
    payload: bytes

    @property
    def entry(self) -> int:
        return entry_of(self.b0, self.b1)

    @property
    def sub(self) -> int:
        return self.b1 & 0x0F

    @property
    def name(self) -> str:
        if self.b0 == 0x09 and self.sub == 1:
            return "StyleRestore"
        return _NAMES.get(self.entry, f"ErrorTrap{self.entry:02X}")

    def u8(self, at: int) -> int:
        """Byte at record offset ``at`` (>= 2); 0 past the record's end."""
        i = at - 2
        return self.payload[i] if 0 <= i < len(self.payload) else 0

    def u16(self, at: int) -> int:
        return self.u8(at) | self.u8(at + 1) << 8

    def s16(self, at: int) -> int:
        v = self.u16(at)
        return v - 0x10000 if v & 0x8000 else v

    def has(self, at: int, size: int = 2) -> bool:
        return at - 2 + size <= len(self.payload)


Token = Glyph | Command


def walk_tokens(stream: bytes, base: int = 0, issues: list[str] | None = None) -> Iterator[Token]:
    """Every token of ``stream`` (file offset ``base``) to its end; a record cut by the end, or an odd
    trailing byte, stops the walk with an issue (never an exception)."""
    i, n = 0, len(stream)
    while i + 2 <= n:
        b0, b1 = stream[i], stream[i + 1]
        if b0 >= 0x10:
            yield Glyph(base + i, b0, b1)
            i += 2
            continue
        size = record_size(b0, b1)
        if i + size > n:
            if issues is not None:
                issues.append(
                    f"record {b0:02X} {b1:02X} at 0x{base + i:X} ({size} bytes) runs past the "
                    f"packet end 0x{base + n:X}"
                )
            return
        yield Command(base + i, b0, b1, bytes(stream[i + 2 : i + size]))
        i += size
    if i < n and issues is not None:
        issues.append(f"odd trailing byte at 0x{base + i:X}")


def record(b0: int, sub: int, *words: int) -> bytes:
    """A command record ``b0`` with sub-command ``sub`` and payload ``words`` (u16 each)."""
    if not 0 <= b0 < 0x10 or not 0 <= sub < 0x10 or len(words) > 15:
        raise ValueError(f"bad record {b0:#x} sub {sub} with {len(words)} words")
    if b0 == 0x0F and sub == 6:
        raise ValueError("0F x6 is Proper, sized by the whole b1: write it with proper()")
    return bytes((b0, len(words) << 4 | sub)) + struct.pack(f"<{len(words)}H", *(w & 0xFFFF for w in words))


def glyph_word(index: int, tile: bool = False, attr40: bool = False) -> bytes:
    """The word of glyph ``index`` (0..15359)."""
    if not 0 <= index < 64 * 240:
        raise ValueError(f"glyph index {index} outside 0..15359")
    page, slot = divmod(index, 240)
    return bytes((0x10 + slot, page | (0x80 if tile else 0) | (0x40 if attr40 else 0)))


def end() -> bytes:
    return b"\x00\x00"


def space() -> bytes:
    return b"\x01\x00"


def newline() -> bytes:
    return b"\x0a\x00"
