"""The RMF1 container [2]: header, region detection, packet table, packets, glyph tiles, widths.

``RMF1``, version (0xCE), ``glyph_data_size`` (0x08), ``packet_data_size`` (0x0C), ``packet_count``
(0x10), on English files ``glyph_data_end`` (0x14), then the packet offset table (EN at 0x18, JP at
0x14; ``0xFFFFFFFF`` = absent). After the packets: 32 x 32 4-bpp glyph tiles (512 bytes each), then
on EN files one advance byte per tile rounded up to 4 bytes.

Region detection: a candidate layout fits when its first present table entry is
``table_offset + 4 * count`` (or, when packet 0 is absent, every present entry lies between the
table's end and ``packet_data_size``, 4-aligned); EN also needs ``[0x14] == [0x0C] + [0x08]``. Both
or neither fitting is a :class:`FormatError` unless ``region=`` forces one.

Packets [3]: ``glyph_budget`` u32, ``speaker_count`` u32, ``{u16 character_id, u16 variant}`` per
speaker, then the token stream. A packet extends to the next packet offset or ``packet_data_size``,
whichever comes first; the walker never reads past it [8.5].
"""

from __future__ import annotations

from dataclasses import dataclass, field

from audio.core.binary import Reader, align
from audio.core.errors import FormatError
from audio.games.radiata.formats.rmf.layout import (
    ABSENT,
    EN,
    JP,
    MAGIC,
    TABLE_AT,
    TILE_BYTES,
    Packet,
    Speaker,
)
from audio.games.radiata.formats.rmf.script import PacketScript, read_script
from audio.games.radiata.formats.rmf.writer import write_rmf


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
        return TABLE_AT[self.region]

    @property
    def table_end(self) -> int:
        return self.table_offset + 4 * self.packet_count


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
    t = TABLE_AT[region]
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
    if region not in TABLE_AT:
        raise FormatError(path, None, 'region "auto", "EN" or "JP"', region)
    count = r.u32(0x10, "packet_count")
    t = TABLE_AT[region]
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
