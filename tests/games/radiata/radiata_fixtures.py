"""Shared test data: the spec's constructed packet (section 9), typed in from the spec's hex dump."""

from __future__ import annotations

import struct

SPEC_PACKET = bytes.fromhex(
    "0b000000 02000000 0c000000 ad260000"  # budget 11; speakers (12,0), (9901,0)
    "0f2500000300"  # Sentence, 3 glyphs
    "0e2002000000"  # Speaker idx 2, mode 0
    "07100004"  # TextSpeed 4.0
    "0f281f002301"  # PlaySe 0x1F, sound 0x0123
    "6a008500"  # H i
    "06100500"  # Signal 5
    "1800"  # !
    "0f205a000200"  # WaitTime 90, flags 2
    "0f2500000300"  # Sentence, 3 glyphs
    "0e2001000100"  # Speaker idx 1, mode 1
    "07100003"  # TextSpeed 3.0
    "0f2802000700"  # PlaySe channel 2, sound 7
    "69008b001300"  # G o .
    "0f20ffff0300"  # WaitTime infinite, flags 3
    "0f2500000500"  # Sentence, 5 glyphs
    "0e2001000100"  # Speaker idx 1, mode 1
    "07100003"  # TextSpeed 3.0
    "0f2400000200"  # WaitSelect2, 2 options
    "7b0081008f000000"  # Yes, terminator
    "70008b000000"  # No, terminator
    "00000000"  # End + slack
)
assert len(SPEC_PACKET) == 0x80


def spec_file() -> bytes:
    """The spec's header suggestion around the packet: EN, [0C] = 0x1C + 0x80, one entry 0x1C."""
    pds = 0x1C + 0x80
    return b"RMF1" + struct.pack("<IIIIII", 0xCE, 0, pds, 1, pds, 0x1C) + SPEC_PACKET


SPEC_RECORDS = [
    {
        "packet": 0,
        "index": 0,
        "speaker_index": 2,
        "character_id": 9901,
        "bustup_mode": 0,
        "voice": {"channel": -1, "auto": True, "lip_sync": True, "sound_id": 291},
        "text": "Hi!",
        "visible_glyphs": 3,
        "glyph_count": 3,
        "speed": 4.0,
        "reveal_frames": 1,
        "signals": [{"value": 5, "after_glyphs": 2}],
        "wait": {"duration": 90, "infinite": False, "cursor": False, "flags": 2},
        "choices": [],
        "name_window": None,
        "propers": [],
        "mouth": [],
        "traps": [],
    },
    {
        "packet": 0,
        "index": 1,
        "speaker_index": 1,
        "character_id": 12,
        "bustup_mode": 1,
        "voice": {"channel": 2, "auto": False, "lip_sync": False, "sound_id": 7},
        "text": "Go.",
        "visible_glyphs": 3,
        "glyph_count": 3,
        "speed": 3.0,
        "reveal_frames": 1,
        "signals": [],
        "wait": {"duration": 0xFFFF, "infinite": True, "cursor": True, "flags": 3},
        "choices": [],
        "name_window": None,
        "propers": [],
        "mouth": [],
        "traps": [],
    },
    {
        "packet": 0,
        "index": 2,
        "speaker_index": 1,
        "character_id": 12,
        "bustup_mode": 1,
        "voice": None,
        "text": "",
        "visible_glyphs": 5,
        "glyph_count": 5,
        "speed": 3.0,
        "reveal_frames": 2,
        "signals": [],
        "wait": None,
        "choices": ["Yes", "No"],
        "name_window": None,
        "propers": [],
        "mouth": [],
        "traps": [],
    },
]
"""The spec's expected extraction of the packet, field by field."""


def header(region: str, count: int, pds: int, glyph_size: int = 0, entries: list[int] | None = None) -> bytes:
    """A hand-packed header + table (independent of the writer)."""
    h = b"RMF1" + struct.pack("<IIII", 0xCE, glyph_size, pds, count)
    if region == "EN":
        h += struct.pack("<I", pds + glyph_size)
    return h + struct.pack(f"<{len(entries or [])}I", *(entries or []))
