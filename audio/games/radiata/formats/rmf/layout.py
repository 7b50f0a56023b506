"""RMF1 layout constants and the packet record: header magic, regions, speaker table [2, 3].

Facts from ``shared/specs/radiata-rmf.md`` (sections in brackets). All values little-endian.
"""

from __future__ import annotations

from dataclasses import dataclass

MAGIC = b"RMF1"
VERSION = 0xCE
ABSENT = 0xFFFFFFFF
"""A packet-table entry for an absent packet."""
TILE_BYTES = 512
"""One 32 x 32 4-bpp glyph tile."""
EN, JP = "EN", "JP"
ACTIVE_CHARACTER = 9900
PARTY_IDS = range(9901, 9906)
"""Character ids resolved late [3]: 9900 the active character, 9901..9905 party slots 1..5."""
TABLE_AT = {EN: 0x18, JP: 0x14}
"""File offset of the packet offset table by region [2]."""


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
