"""RMF1 message files (the decompressed payload): reader, token walker, message extraction, writer.

Facts from ``shared/specs/radiata-rmf.md`` (sections in brackets). All values little-endian.

Container [2]: ``RMF1``, version (0xCE), ``glyph_data_size`` (0x08), ``packet_data_size`` (0x0C),
``packet_count`` (0x10), on English files ``glyph_data_end`` (0x14), then the packet offset table
(EN at 0x18, JP at 0x14; ``0xFFFFFFFF`` = absent). After the packets: 32 x 32 4-bpp glyph tiles
(512 bytes each), then on EN files one advance byte per tile rounded up to 4 bytes.

Region detection [2]: a candidate layout fits when its first present table entry is
``table_offset + 4 * count`` (or, when packet 0 is absent, every present entry lies between the
table's end and ``packet_data_size``, 4-aligned); EN also needs ``[0x14] == [0x0C] + [0x08]``.
Both or neither fitting is a :class:`FormatError` unless ``region=`` forces one.

Packets [3]: ``glyph_budget`` u32, ``speaker_count`` u32, ``{u16 character_id, u16 variant}`` per
speaker, then the token stream. A packet extends to the next packet offset or
``packet_data_size``, whichever comes first; the walker never reads past it [8.5].

Token stream [4]: a word with low byte ``b0 >= 0x10`` is a glyph (``index = (b0 - 0x10) +
(b1 & 0x3F) * 240``, ``b1 & 0x80`` = the file's own tile, ``b1 & 0x40`` unknown); otherwise a
command record of ``2 + 2 * (b1 >> 4)`` bytes, except Proper (CTalk entry 0x26), whose payload
is ``2 * b1`` bytes. The spec writes that record ``0F 6x``; its own dispatch rule
(``0F xN`` -> entry ``0x20 + N``, from the engine's ``b1 & 0x0F``) and ProhibitSkip's one-word
``0F 3x`` show that the digit written first is the sub-command nibble, so Proper is read as
``b0 == 0x0F and b1 & 0x0F == 6`` (and Jump, the prologue record ``0F 7x``, as sub 7).

Extraction [8] gives per message: speaker (index -> character id, bustup mode), voice clips
(``0F 28``: channel raw and signed, sound id), speed, signals with the glyphs revealed before
them, the wait, the choices (``count & 0x7F`` options each ending ``00 00``: an option
terminator, not the End), the decoded text and the reveal time in frames.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from audio.core.binary import Reader, align
from audio.core.errors import FormatError

__all__ = [
    "ABSENT",
    "ACTIVE_CHARACTER",
    "EN",
    "JP",
    "MAGIC",
    "PARTY_IDS",
    "TILE_BYTES",
    "VERSION",
    "Choice",
    "ChoiceWait",
    "Command",
    "Glyph",
    "Jump",
    "Message",
    "Option",
    "Other",
    "Packet",
    "PacketScript",
    "ProhibitSkip",
    "RmfFile",
    "RmfHeader",
    "Signal",
    "Speaker",
    "SpeakerSet",
    "Speed",
    "Step",
    "Text",
    "Token",
    "Typewriter",
    "VoiceClip",
    "Wait",
    "build_message",
    "ceil_frames",
    "color",
    "decode_glyph",
    "detect_region",
    "encode_text",
    "end",
    "entry_of",
    "glyph_char",
    "glyph_word",
    "jump",
    "message_record",
    "name_window",
    "newline",
    "play_se",
    "position",
    "proper",
    "read_rmf",
    "read_script",
    "record",
    "record_size",
    "reveal_frames",
    "sentence",
    "signal",
    "space",
    "speaker",
    "text_speed",
    "wait_select2",
    "wait_time",
    "walk_tokens",
    "write_packet",
    "write_rmf",
]

MAGIC = b"RMF1"
VERSION = 0xCE
ABSENT = 0xFFFFFFFF
TILE_BYTES = 512
EN, JP = "EN", "JP"
ACTIVE_CHARACTER = 9900
PARTY_IDS = range(9901, 9906)
"""Character ids resolved late [3]: 9900 the active character, 9901..9905 party slots 1..5."""
_TABLE_AT = {EN: 0x18, JP: 0x14}


# --------------------------------------------------------------------------------------------------
# Container
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RmfHeader:
    """The header fields (byte sizes and offsets from the file start)."""

    region: str
    version: int
    glyph_data_size: int
    packet_data_size: int
    packet_count: int
    glyph_data_end: int | None
    """EN only: ``packet_data_size + glyph_data_size`` (start of the width table)."""

    @property
    def table_offset(self) -> int:
        return _TABLE_AT[self.region]

    @property
    def table_end(self) -> int:
        return self.table_offset + 4 * self.packet_count


@dataclass(frozen=True)
class Speaker:
    """One speaker-table entry; commands name it by 1-based index."""

    character_id: int
    variant: int = 0


@dataclass(frozen=True)
class Packet:
    """A present packet: ``offset`` .. ``end`` (exclusive) in the file; ``stream`` its tokens."""

    index: int
    offset: int
    end: int
    glyph_budget: int
    speakers: tuple[Speaker, ...]
    stream_offset: int
    raw: bytes

    @property
    def stream(self) -> bytes:
        return self.raw[self.stream_offset - self.offset :]


@dataclass
class RmfFile:
    """A parsed RMF1 file. ``packets[i]`` is None for an absent packet."""

    path: str
    header: RmfHeader
    packets: list[Packet | None]
    tiles: bytes
    widths: bytes | None
    issues: list[str] = field(default_factory=list)

    @property
    def region(self) -> str:
        return self.header.region

    def packet(self, index: int) -> Packet:
        """Packet ``index``; FormatError if out of range or absent."""
        if not 0 <= index < len(self.packets):
            raise FormatError(self.path, None, f"a packet index 0..{len(self.packets) - 1}", index)
        p = self.packets[index]
        if p is None:
            raise FormatError(
                self.path,
                self.header.table_offset + 4 * index,
                f"packet {index} present",
                "absent (0xFFFFFFFF)",
            )
        return p

    def script(self, index: int) -> PacketScript:
        """The messages of packet ``index`` (see :func:`read_script`)."""
        return read_script(self.packet(index), self.region, self.path)

    def to_bytes(self) -> bytes:
        """Write the file back (the packets' own bytes, the tiles and the width table)."""
        return write_rmf(
            [p.raw if p else None for p in self.packets],
            self.region,
            version=self.header.version,
            tiles=self.tiles,
            widths=self.widths,
        )


def _fits(r: Reader, region: str) -> bool:
    """Does the ``region`` table layout fit the header [2]?"""
    count, pds = r.u32(0x10), r.u32(0x0C)
    t = _TABLE_AT[region]
    end = t + 4 * count
    if end > len(r) or end > pds:
        return False
    if region == EN and r.u32(0x14) != (r.u32(0x0C) + r.u32(0x08)) & 0xFFFFFFFF:
        return False
    entries = [r.u32(t + 4 * i) for i in range(count)]
    present = [e for e in entries if e != ABSENT]
    if not present:
        return pds == end
    if present[0] == end:
        return True
    return entries[0] == ABSENT and all(end <= e < pds and e % 4 == 0 for e in present)


def detect_region(data: bytes, path: str = "<buffer>") -> str:
    """``"EN"`` or ``"JP"`` from the header layout; FormatError if both or neither fit."""
    r = Reader(data, path, big=False)
    r.magic(0, MAGIC, "RMF1 magic")
    r.need(0, 0x18, "RMF1 header")
    fits = [reg for reg in (EN, JP) if _fits(r, reg)]
    if len(fits) != 1:
        raise FormatError(
            path,
            0x14,
            "a header that fits exactly one of the EN (table at 0x18) and JP "
            "(table at 0x14) layouts; force one with region=",
            fits or "neither",
        )
    return fits[0]


def read_rmf(data: bytes, path: str = "<buffer>", region: str = "auto") -> RmfFile:
    """Parse an RMF1 payload. ``region``: ``"auto"`` (detect), ``"EN"`` or ``"JP"``."""
    data = bytes(data)
    r = Reader(data, path, big=False)
    r.magic(0, MAGIC, "RMF1 magic")
    r.need(0, 0x18, "RMF1 header")
    if region == "auto":
        region = detect_region(data, path)
    if region not in _TABLE_AT:
        raise FormatError(path, None, 'region "auto", "EN" or "JP"', region)
    count = r.u32(0x10, "packet_count")
    t = _TABLE_AT[region]
    r.count(t, count, 4, "packet offset table")
    hdr = RmfHeader(region, r.u32(4), r.u32(8), r.u32(0x0C), count, r.u32(0x14) if region == EN else None)
    issues: list[str] = []
    pds = hdr.packet_data_size
    if not hdr.table_end <= pds <= len(data):
        raise FormatError(
            path,
            0x0C,
            f"packet_data_size between the table end {hdr.table_end} and the file size {len(data)}",
            pds,
        )
    entries = [r.u32(t + 4 * i) for i in range(count)]
    packets = _read_packets(r, hdr, entries, issues)
    tiles, widths = _trailer(r, hdr, issues)
    return RmfFile(path, hdr, packets, tiles, widths, issues)


def _read_packets(r: Reader, hdr: RmfHeader, entries: list[int], issues: list[str]) -> list[Packet | None]:
    pds = hdr.packet_data_size
    starts = sorted({e for e in entries if e != ABSENT})
    out: list[Packet | None] = []
    for i, off in enumerate(entries):
        if off == ABSENT:
            out.append(None)
            continue
        if not hdr.table_end <= off < pds:
            raise FormatError(
                r.path,
                hdr.table_offset + 4 * i,
                f"packet {i} offset in {hdr.table_end}..{pds - 1} or 0xFFFFFFFF",
                off,
            )
        if off % 4:
            issues.append(f"packet {i} at 0x{off:X} is not 4-aligned")
        nxt = next((s for s in starts if s > off), pds)
        out.append(_read_packet(r, i, off, nxt))
    return out


def _read_packet(r: Reader, index: int, off: int, end: int) -> Packet:
    box = Reader(r.data[:end], r.path, big=False)
    budget = box.u32(off, f"packet {index} glyph_budget")
    n = box.count(off + 8, box.u32(off + 4, f"packet {index} speaker_count"), 4, f"packet {index} speakers")
    speakers = tuple(Speaker(box.u16(off + 8 + 4 * k), box.u16(off + 10 + 4 * k)) for k in range(n))
    return Packet(index, off, end, budget, speakers, off + 8 + 4 * n, bytes(r.data[off:end]))


def _trailer(r: Reader, hdr: RmfHeader, issues: list[str]) -> tuple[bytes, bytes | None]:
    size, pds = hdr.glyph_data_size, hdr.packet_data_size
    if size % TILE_BYTES:
        issues.append(f"glyph_data_size {size} is not a multiple of {TILE_BYTES}")
    if pds + size > len(r):
        issues.append(f"glyph tiles ({size} bytes at 0x{pds:X}) run past the end of the file")
        return bytes(r.data[pds:]), None
    tiles = bytes(r.data[pds : pds + size])
    if hdr.region != EN:
        return tiles, None
    if hdr.glyph_data_end != pds + size:
        issues.append(f"glyph_data_end 0x{hdr.glyph_data_end or 0:X} != packet_data_size + glyph_data_size")
    n = size // TILE_BYTES
    if n == 0:
        return tiles, None
    want = align(n, 4)
    start = pds + size
    if start + want > len(r):
        issues.append(f"width table ({want} bytes for {n} tiles) runs past the end of the file")
        return tiles, None
    return tiles, bytes(r.data[start : start + want])


# --------------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------------
# Glyph text (English table, partial) [6]
# --------------------------------------------------------------------------------------------------
_EN: dict[int, str] = {2: ",", 3: ".", 7: "?", 8: "!", 17: "'"}
_EN.update({83 + k: chr(ord("A") + k) for k in range(26)})
_EN.update({109 + k: chr(ord("a") + k) for k in range(26)})
_EN_REV = {c: i for i, c in _EN.items()}


def decode_glyph(index: int, region: str = EN, tile: bool = False) -> str:
    """The character of glyph ``index``: EN letters and five marks; else ``[g:N]`` / ``[tile:N]``."""
    if tile:
        return f"[tile:{index}]"
    if region == EN and index in _EN:
        return _EN[index]
    return f"[g:{index}]"


def glyph_char(g: Glyph, region: str = EN) -> str:
    return decode_glyph(g.index, region, g.tile)


_ESCAPE = re.compile(r"\[(g|tile):(\d+)\]")


def encode_text(text: str) -> bytes:
    """Tokens for ``text`` (EN table): letters, ``, . ? ! '``, space (``01 00``), newline (``0A 00``),
    and ``[g:N]`` / ``[tile:N]`` escapes. ValueError for a character the table lacks."""
    out = bytearray()
    i = 0
    while i < len(text):
        m = _ESCAPE.match(text, i)
        if m:
            out += glyph_word(int(m.group(2)), tile=m.group(1) == "tile")
            i = m.end()
            continue
        c = text[i]
        if c == " ":
            out += space()
        elif c == "\n":
            out += newline()
        elif c in _EN_REV:
            out += glyph_word(_EN_REV[c])
        else:
            raise ValueError(f"no EN glyph known for {c!r} (write [g:N])")
        i += 1
    return bytes(out)


def _text_glyphs(text: str) -> int:
    return sum(1 for t in walk_tokens(encode_text(text)) if isinstance(t, Glyph))


# --------------------------------------------------------------------------------------------------
# Message steps (what the sequencer plays, in stream order)
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    """Text: a visible glyph (costs 0x100 of reveal budget), or a free space / newline."""

    offset: int
    char: str
    glyph: bool = True


@dataclass(frozen=True)
class Speed:
    """``07 1x``: typewriter rate in U8.8 glyphs per frame."""

    offset: int
    word: int

    @property
    def value(self) -> float:
        return self.word / 256.0


@dataclass(frozen=True)
class VoiceClip:
    """``0F 28``: a voice clip on ``channel_raw``; ``after_glyphs`` visible glyphs precede it."""

    offset: int
    channel_raw: int
    sound_id: int
    after_glyphs: int = 0

    @property
    def channel(self) -> int:
        """Signed: raw >= 0x10 reads as ``raw - 0x20`` (0x1F = -1)."""
        return self.channel_raw - 0x20 if self.channel_raw >= 0x10 else self.channel_raw

    @property
    def auto(self) -> bool:
        """0x1F: allocate a channel automatically."""
        return self.channel_raw == 0x1F

    @property
    def lip_sync(self) -> bool:
        """0x1F also binds the handle to the current bustup's lip-sync."""
        return self.channel_raw == 0x1F


@dataclass(frozen=True)
class Signal:
    """``06 1x``: a value for the event script, posted after ``after_glyphs`` visible glyphs."""

    offset: int
    value: int
    after_glyphs: int = 0


@dataclass(frozen=True)
class Wait:
    """``0F 20``: ``duration`` frames (0xFFFF infinite) and the flags as written."""

    offset: int
    duration: int
    flags: int

    @property
    def infinite(self) -> bool:
        return self.duration == 0xFFFF

    @property
    def stored_flags(self) -> int:
        """What the engine keeps: ``flags & 0xFD``."""
        return self.flags & 0xFD

    @property
    def cursor(self) -> bool:
        """Bit 0: the blinking continue cursor (a press-to-continue box)."""
        return bool(self.flags & 1)


@dataclass(frozen=True)
class Option:
    """One choice option: its text and visible glyphs."""

    offset: int
    text: str
    glyphs: int


@dataclass(frozen=True)
class Choice:
    """``0F 22`` / ``0F 24``: options follow, each ending ``00 00``."""

    offset: int
    entry: int
    time_limit_raw: int
    count_raw: int
    options: tuple[Option, ...] = ()

    @property
    def time_limit(self) -> int | None:
        """Frames, or None: 0 is rewritten to 0xFFFF = no limit."""
        return None if self.time_limit_raw in (0, 0xFFFF) else self.time_limit_raw

    @property
    def count(self) -> int:
        return self.count_raw & 0x7F


@dataclass(frozen=True)
class ChoiceWait:
    """After the last option: the box waits for a choice."""

    offset: int
    choice: Choice


@dataclass(frozen=True)
class SpeakerSet:
    """``0E 20``: the speaker (1-based index, resolved id or None) and bustup mode (bits 0-1)."""

    offset: int
    index: int
    mode: int
    character_id: int | None


@dataclass(frozen=True)
class ProhibitSkip:
    """``0F x3``: non-zero forbids skipping and finishes the current text at once."""

    offset: int
    value: int


@dataclass(frozen=True)
class Jump:
    """``0F x7``: u8 at +2 and up to six words from +4; leading ones are the packet prologue."""

    offset: int
    arg: int
    words: tuple[int, ...]


@dataclass(frozen=True)
class Other:
    """Any other record (renderer style, bustup, face, name plate, Proper, inert, traps)."""

    command: Command


Step = (
    Text | Speed | VoiceClip | Signal | Wait | Choice | ChoiceWait | SpeakerSet | ProhibitSkip | Jump | Other
)


@dataclass
class Message:
    """One message (a Sentence record, or a packet's bare text)."""

    packet: int
    index: int
    offset: int
    sentence: bool = True
    flags: int = 0
    glyph_count: int | None = None
    speaker_index: int = 0
    character_id: int | None = None
    bustup_mode: int | None = None
    steps: list[Step] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    def _of(self, kind: type) -> list:
        return [s for s in self.steps if isinstance(s, kind)]

    @property
    def voices(self) -> list[VoiceClip]:
        return self._of(VoiceClip)

    @property
    def signals(self) -> list[Signal]:
        return self._of(Signal)

    @property
    def wait(self) -> Wait | None:
        w = self._of(Wait)
        return w[-1] if w else None

    @property
    def choice(self) -> Choice | None:
        c = self._of(Choice)
        return c[-1] if c else None

    @property
    def speed(self) -> float | None:
        """The last ``07 1x`` of the message (U8.8 as a float), or None."""
        s = self._of(Speed)
        return s[-1].value if s else None

    @property
    def text(self) -> str:
        """The decoded text outside the choice options."""
        out, in_options = [], False
        for s in self.steps:
            if isinstance(s, Choice):
                in_options = True
            elif isinstance(s, ChoiceWait):
                in_options = False
            elif isinstance(s, Text) and not in_options:
                out.append(s.char)
        return "".join(out)

    @property
    def visible_glyphs(self) -> int:
        """Glyphs drawn (choice options included; spaces and newlines are not glyphs)."""
        return sum(1 for s in self.steps if isinstance(s, Text) and s.glyph)

    def reveal_frames(self, default_speed: float | None = None) -> int | None:
        """Frames the typewriter needs for the whole message (waits take none); None if the
        message sets no speed and ``default_speed`` is None."""
        return reveal_frames(self.steps, default_speed)

    def has_content(self) -> bool:
        return any(isinstance(s, (Text, VoiceClip, Signal, Wait, Choice)) for s in self.steps)


@dataclass
class PacketScript:
    """A packet's prologue and messages, whether an End closed it, and what did not add up."""

    packet: int
    budget: int
    speakers: tuple[Speaker, ...]
    prologue: list[Jump] = field(default_factory=list)
    preamble: list[Step] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    ended: bool = False
    issues: list[str] = field(default_factory=list)

    def mismatches(self) -> list[str]:
        """Declared vs counted glyphs per message, and the budget vs the declared sum [8.4]."""
        out = []
        declared = [m.glyph_count for m in self.messages if m.glyph_count is not None]
        for m in self.messages:
            if m.glyph_count is not None and m.glyph_count != m.visible_glyphs:
                out.append(
                    f"packet {self.packet} message {m.index}: declares {m.glyph_count} glyphs, "
                    f"draws {m.visible_glyphs}"
                )
        if declared and sum(declared) != self.budget:
            out.append(
                f"packet {self.packet}: glyph_budget {self.budget} != sum of declared counts {sum(declared)}"
            )
        return out


# --------------------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------------------
class _Builder:
    """Walks a packet's tokens into a :class:`PacketScript`."""

    def __init__(self, packet: Packet, region: str) -> None:
        self.p, self.region = packet, region
        self.script = PacketScript(packet.index, packet.glyph_budget, packet.speakers)
        self.cur: Message | None = None
        self.glyphs = 0
        self.in_prologue = True

    def resolve(self, index: int, where: int) -> int | None:
        if index == 0:
            return None
        if index > len(self.p.speakers):
            self._issue(f"speaker index {index} at 0x{where:X} is beyond the table of {len(self.p.speakers)}")
            return None
        return self.p.speakers[index - 1].character_id

    def _issue(self, text: str) -> None:
        (self.cur.issues if self.cur is not None else self.script.issues).append(text)

    def message(self, offset: int, sentence: bool, flags: int = 0, count: int | None = None) -> Message:
        self.close()
        m = Message(self.p.index, len(self.script.messages), offset, sentence, flags, count)
        self.cur, self.glyphs = m, 0
        return m

    def close(self) -> None:
        m, self.cur = self.cur, None
        if m is None:
            return
        if m.sentence or m.has_content():
            m.index = len(self.script.messages)
            self.script.messages.append(m)
        else:
            self.script.preamble.extend(m.steps)

    def add(self, step: Step) -> None:
        if self.cur is None:
            self.message(getattr(step, "offset", 0), sentence=False)
        assert self.cur is not None
        self.cur.steps.append(step)
        if isinstance(step, Text) and step.glyph:
            self.glyphs += 1


def read_script(packet: Packet, region: str = EN, path: str = "<buffer>") -> PacketScript:
    """Extract a packet's prologue and messages [8]. Never raises on stream content: problems are
    listed in ``issues`` (the walk stops at the End, the packet end or a cut record)."""
    b = _Builder(packet, region)
    tokens = walk_tokens(packet.stream, packet.stream_offset, b.script.issues)
    for tok in tokens:
        if isinstance(tok, Glyph):
            b.in_prologue = False
            b.add(Text(tok.offset, glyph_char(tok, region)))
            continue
        if tok.entry == 0x27 and b.in_prologue:
            b.script.prologue.append(_jump(tok))
            continue
        b.in_prologue = False
        if tok.entry == 0x00:
            b.script.ended = True
            break
        if tok.entry == 0x25:
            b.message(tok.offset, True, tok.u16(2), tok.u16(4))
        elif tok.entry in (0x22, 0x24):
            if not _choice(b, tok, tokens):
                break
        else:
            _command(b, tok)
    else:
        b.script.issues.append(f"packet {packet.index} has no End before its boundary 0x{packet.end:X}")
    b.close()
    return b.script


def _jump(c: Command) -> Jump:
    words = tuple(c.u16(at) for at in range(4, 16, 2) if c.has(at))
    return Jump(c.offset, c.u8(2), words)


def _command(b: _Builder, c: Command) -> None:
    e = c.entry
    if e == 0x01:
        b.add(Text(c.offset, " ", glyph=False))
    elif e == 0x0A:
        b.add(Text(c.offset, "\n", glyph=False))
    elif e == 0x07:
        b.add(Speed(c.offset, c.u16(2)))
    elif e == 0x06:
        b.add(Signal(c.offset, c.u16(2), b.glyphs))
    elif e == 0x28:
        b.add(VoiceClip(c.offset, c.u8(2), c.u16(4), b.glyphs))
    elif e == 0x20:
        b.add(Wait(c.offset, c.u16(2), c.u16(4)))
    elif e == 0x23:
        b.add(ProhibitSkip(c.offset, c.u8(2)))
    elif e == 0x27:
        b.add(_jump(c))
    elif e == 0x10:
        _speaker(b, c)
    elif e == 0x26:
        b.add(Other(c))
        b.add(Text(c.offset, "[proper]", glyph=False))
    else:
        b.add(Other(c))


def _speaker(b: _Builder, c: Command) -> None:
    idx, mode = c.u16(2), c.u16(4) & 3
    step = SpeakerSet(c.offset, idx, mode, b.resolve(idx, c.offset))
    b.add(step)
    m = b.cur
    assert m is not None
    m.speaker_index, m.character_id, m.bustup_mode = idx, step.character_id, mode


def _choice(b: _Builder, c: Command, tokens: Iterator[Token]) -> bool:
    """Read the ``count & 0x7F`` options after a WaitSelect record; False if the stream ended."""
    head = Choice(c.offset, c.entry, c.u16(2), c.u16(4))
    options: list[Option] = []
    steps: list[Step] = []
    for k in range(head.count):
        start, chars, glyphs = None, [], 0
        for tok in tokens:
            start = tok.offset if start is None else start
            if isinstance(tok, Command) and tok.entry == 0x00:
                break
            if isinstance(tok, Glyph):
                chars.append(glyph_char(tok, b.region))
                glyphs += 1
                steps.append(Text(tok.offset, chars[-1]))
            elif tok.entry in (0x01, 0x0A):
                chars.append(" " if tok.entry == 0x01 else "\n")
                steps.append(Text(tok.offset, chars[-1], glyph=False))
            else:
                steps.append(Other(tok))
        else:
            b._issue(
                f"choice at 0x{c.offset:X}: option {k} of {head.count} not terminated before the packet end"
            )
            b.add(Choice(head.offset, head.entry, head.time_limit_raw, head.count_raw, tuple(options)))
            for s in steps:
                b.add(s)
            return False
        options.append(Option(start if start is not None else c.offset, "".join(chars), glyphs))
    full = Choice(head.offset, head.entry, head.time_limit_raw, head.count_raw, tuple(options))
    b.add(full)
    for s in steps:
        b.add(s)
    b.add(ChoiceWait(c.offset, full))
    return True


# --------------------------------------------------------------------------------------------------
# The typewriter [5]
# --------------------------------------------------------------------------------------------------
class Typewriter:
    """Reveals a message's steps frame by frame, the way the renderer spends its budget.

    Each frame after the first adds the speed word (U8.8) to an accumulator; a visible glyph costs
    0x100, spaces and newlines nothing; every other step runs when the walk reaches it. Speed 0, or
    a non-zero ProhibitSkip, shows the rest at once. The walk stops at a :class:`Wait` or
    :class:`ChoiceWait` (``blocked``) until :meth:`resume`. With the speed ``k`` glyphs take
    ``ceil(k * 256 / v)`` frames.
    """

    def __init__(self, steps: Sequence[Step], default_speed: float | None = 3.0) -> None:
        self.steps = list(steps)
        self.pos = 0
        self.acc = 0
        self.word = None if default_speed is None else round(default_speed * 256)
        self.instant = False
        self.blocked: Wait | ChoiceWait | None = None
        self.saved: tuple[int, int | None] | None = None

    @property
    def done(self) -> bool:
        return self.pos >= len(self.steps)

    def run(self, first: bool) -> list[Step]:
        """Advance one frame (``first``: the message's first frame, no budget added); returns the
        steps executed, in order."""
        if self.blocked is not None:
            return []
        if not first and self.word is not None:
            self.acc += self.word
        out: list[Step] = []
        while self.pos < len(self.steps):
            s = self.steps[self.pos]
            if isinstance(s, Text) and s.glyph and not self.instant:
                if self.word is None:
                    raise ValueError("a glyph before any speed and no default speed")
                if self.word != 0:
                    if self.acc < 0x100:
                        break
                    self.acc -= 0x100
            self.pos += 1
            out.append(s)
            if isinstance(s, Speed):
                self.word = s.word
            elif isinstance(s, ProhibitSkip) and s.value:
                self.instant = True
            elif isinstance(s, Other) and s.command.b0 == 0x09:
                self._style(s.command)
            elif isinstance(s, (Wait, ChoiceWait)):
                self.blocked = s
                break
        return out

    def _style(self, c: Command) -> None:
        """StyleSave (sub 0) keeps the speed when its mask has 0x80; StyleRestore (sub 1) puts it back."""
        if c.sub == 0:
            self.saved = (c.u16(2), self.word)
        elif c.sub == 1 and self.saved is not None:
            mask, word = self.saved
            if mask & 0x80 and word is not None:
                self.word = word
            self.saved = None

    def resume(self) -> None:
        """Continue after a wait or a choice (the accumulator starts again from 0)."""
        self.blocked, self.acc = None, 0

    def finish(self) -> list[Step]:
        """Show everything up to the next wait at once (a skip); returns the steps executed."""
        keep, self.instant = self.instant, True
        out = self.run(first=True)
        self.instant = keep
        return out


def reveal_frames(steps: Sequence[Step], default_speed: float | None = None) -> int | None:
    """Frames to reveal ``steps`` (waits and choices take none); None without any speed."""
    glyphs = [s for s in steps if isinstance(s, Text) and s.glyph]
    if not glyphs:
        return 0
    has_speed = any(isinstance(s, Speed) for s in steps)
    if not has_speed and default_speed is None:
        return None
    first_speed = next((i for i, s in enumerate(steps) if isinstance(s, Speed)), len(steps))
    first_glyph = next(i for i, s in enumerate(steps) if isinstance(s, Text) and s.glyph)
    if default_speed is None and first_glyph < first_speed:
        return None
    tw = Typewriter(steps, default_speed)
    frames, limit = 0, 256 * len(steps) + 2
    tw.run(first=True)
    while not tw.done and frames < limit:
        if tw.blocked is not None:
            tw.resume()
            tw.run(first=True)
            continue
        frames += 1
        tw.run(first=False)
    return frames if tw.done else None


# --------------------------------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------------------------------
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


def sentence(glyph_count: int, flags: int = 0) -> bytes:
    return record(0x0F, 5, flags, glyph_count)


def speaker(index: int, mode: int = 0) -> bytes:
    return record(0x0E, 0, index, mode)


def text_speed(glyphs_per_frame: float) -> bytes:
    return record(0x07, 0, round(glyphs_per_frame * 256))


def signal(value: int) -> bytes:
    return record(0x06, 0, value)


def wait_time(duration: int, flags: int) -> bytes:
    """``duration`` frames (0xFFFF infinite); flags 3 press to continue, 2 timed."""
    return record(0x0F, 0, duration, flags)


def play_se(channel_raw: int, sound_id: int) -> bytes:
    """A voice clip: channel byte (0x1F auto + lip-sync, 0..15 explicit) and sound id."""
    return record(0x0F, 8, channel_raw & 0xFF, sound_id)


def name_window(index: int, mode: int = 1, y_offset: int = 118, name_id: int = 0) -> bytes:
    return record(0x0E, 0x0E, index, mode, y_offset, name_id)


def wait_select2(count: int, time_limit: int = 0) -> bytes:
    return record(0x0F, 4, time_limit, count)


def jump(arg: int, *words: int) -> bytes:
    """A Jump (``0F x7``): u8 ``arg`` at +2 and up to six words from +4."""
    if len(words) > 6:
        raise ValueError("a Jump holds at most six words")
    return record(0x0F, 7, arg & 0xFF, *words)


def color(r: int, g: int, b: int, a: int = 0x80, shadow: bool = False) -> bytes:
    return record(0x02, 1 if shadow else 0, r | g << 8, b | a << 8)


def position(x: int, y: int, relative: bool = False) -> bytes:
    return record(0x04, 1 if relative else 0, x, y)


def proper(payload: bytes, sub_high: int = 0) -> bytes:
    """A Proper record: ``0F`` with ``b1 = len(payload) // 2`` (sub nibble must be 6)."""
    b1 = len(payload) // 2
    if len(payload) % 2 or b1 & 0x0F != 6 or b1 > 0xFF:
        raise ValueError("a Proper payload is 2 * b1 bytes with b1 & 0x0F == 6")
    return bytes((0x0F, b1)) + payload


def build_message(
    speaker_index: int,
    text: str,
    *,
    mode: int = 0,
    speed: float | None = 3.0,
    voice: tuple[int, int] | None = None,
    signals: Sequence[tuple[int, int]] = (),
    wait: tuple[int, int] | None = (60, 3),
    choices: Sequence[str] | None = None,
    name_plate: bool = True,
) -> bytes:
    """One dialogue (or choice) message in the seed's shape [4.3], with its glyph count.

    ``voice`` = (channel byte, sound id); ``signals`` = (value, after how many visible glyphs);
    ``choices`` makes a choice prompt (``text`` is then usually empty) with no wait record.
    """
    body = _text_with_signals(text, signals)
    count = _text_glyphs(text)
    head = speaker(speaker_index, mode)
    if speed is not None:
        head += text_speed(speed)
    if voice is not None:
        head += play_se(*voice)
    if name_plate:
        head += name_window(speaker_index)
    tail = b""
    if choices is not None:
        tail += wait_select2(len(choices))
        for c in choices:
            tail += encode_text(c) + end()
            count += _text_glyphs(c)
    elif wait is not None:
        tail += wait_time(*wait)
    return sentence(count) + head + bytes(body) + tail


def _text_with_signals(text: str, signals: Sequence[tuple[int, int]]) -> bytes:
    """``text`` with each signal (value, k) written after its k-th visible glyph."""
    out = bytearray(b"".join(signal(v) for v, k in signals if k == 0))
    seen = 0
    for m in re.finditer(r"\[(?:g|tile):\d+\]|.", text, re.DOTALL):
        out += encode_text(m.group(0))
        if m.group(0) not in (" ", "\n"):
            seen += 1
            out += b"".join(signal(v) for v, k in signals if k == seen)
    if any(not 0 <= k <= seen for _, k in signals):
        raise ValueError(f"a signal after more glyphs than the text's {seen}")
    return bytes(out)


def write_packet(
    speakers: Sequence[Speaker | tuple[int, int] | int],
    stream: bytes,
    glyph_budget: int | None = None,
    end_token: bool = True,
) -> bytes:
    """A packet: budget (default: the sum of its Sentence counts), speakers, ``stream``, then the
    End, 4-byte padding and slack (``end_token=False`` leaves the End and padding out)."""
    sp = [
        s if isinstance(s, Speaker) else Speaker(*s) if isinstance(s, tuple) else Speaker(s) for s in speakers
    ]
    if glyph_budget is None:
        glyph_budget = sum(
            t.u16(4) for t in walk_tokens(stream) if isinstance(t, Command) and t.entry == 0x25
        )
    head = struct.pack("<II", glyph_budget, len(sp)) + b"".join(
        struct.pack("<HH", s.character_id, s.variant) for s in sp
    )
    body = head + stream
    if not end_token:
        return body
    return body + bytes(align(len(body), 4) - len(body)) + bytes(4)


def write_rmf(
    packets: Sequence[bytes | None],
    region: str = EN,
    *,
    version: int = VERSION,
    tiles: bytes = b"",
    widths: bytes | None = None,
) -> bytes:
    """An RMF1 file: header, offset table (None -> absent), packets, tiles, EN width table.

    Packets follow the table directly, each 4-aligned. ``widths`` (EN only) defaults to 30 per
    tile, padded to 4 bytes, when there are tiles.
    """
    if region not in _TABLE_AT:
        raise ValueError(f"region must be EN or JP, got {region!r}")
    if len(tiles) % TILE_BYTES:
        raise ValueError(f"tiles must be a multiple of {TILE_BYTES} bytes")
    t = _TABLE_AT[region]
    pos = t + 4 * len(packets)
    table, blobs = [], []
    for p in packets:
        if p is None:
            table.append(ABSENT)
            continue
        blob = bytes(p) + bytes(align(len(p), 4) - len(p))
        table.append(pos)
        blobs.append(blob)
        pos += len(blob)
    pds = pos
    head = MAGIC + struct.pack("<IIII", version, len(tiles), pds, len(packets))
    if region == EN:
        head += struct.pack("<I", pds + len(tiles))
    out = head + struct.pack(f"<{len(table)}I", *table) + b"".join(blobs) + tiles
    if region == EN and tiles:
        n = len(tiles) // TILE_BYTES
        w = widths if widths is not None else bytes([30] * n)
        out += w + bytes(align(len(w), 4) - len(w))
    return out


def ceil_frames(glyphs: int, speed_word: int) -> int:
    """``ceil(glyphs * 256 / speed_word)``: the spec's reveal estimate [5] (0 at speed 0)."""
    return 0 if speed_word == 0 or glyphs == 0 else math.ceil(glyphs * 256 / speed_word)


def message_record(m: Message, default_speed: float | None = None) -> dict[str, object]:
    """The spec's extraction record of a message [8.4] (JSON-ready). ``voice`` is the first clip;
    ``wait.flags`` is the value written (the engine stores ``flags & 0xFD``)."""
    v = m.voices[0] if m.voices else None
    w = m.wait
    c = m.choice
    return {
        "packet": m.packet,
        "index": m.index,
        "speaker_index": m.speaker_index,
        "character_id": m.character_id,
        "bustup_mode": m.bustup_mode,
        "voice": None
        if v is None
        else {"channel": v.channel, "auto": v.auto, "lip_sync": v.lip_sync, "sound_id": v.sound_id},
        "text": m.text,
        "visible_glyphs": m.visible_glyphs,
        "glyph_count": m.glyph_count,
        "speed": m.speed,
        "reveal_frames": m.reveal_frames(default_speed),
        "signals": [{"value": s.value, "after_glyphs": s.after_glyphs} for s in m.signals],
        "wait": None
        if w is None
        else {"duration": w.duration, "infinite": w.infinite, "cursor": w.cursor, "flags": w.flags},
        "choices": [o.text for o in c.options] if c is not None else [],
    }
