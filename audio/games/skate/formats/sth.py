"""A clip's ``.sth`` (its takes): reader and writer.

12-byte rows: u32 byte offset of the take inside the clip's ``.dat``, then the take's 8-byte EA SNR
header (big-endian). A take runs to the next row's offset; the last one to the end of the ``.dat``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from audio.core.errors import FormatError

__all__ = ["Take", "STH_ROW", "parse_sth", "write_sth"]

#: Bytes per row.
STH_ROW = 12


@dataclass(frozen=True)
class Take:
    """One take of a clip: where its SNS data lies in the ``.dat`` and its SNR header."""

    index: int
    offset: int  # bytes into the .dat
    size: int  # bytes
    snr: bytes  # the 8-byte SNR header

    @property
    def codec(self) -> int:
        """SNR codec id (3 = EA-XMA)."""
        return self.snr[0] & 0x0F

    @property
    def channels(self) -> int:
        return ((self.snr[1] >> 2) & 0x3F) + 1

    @property
    def sample_rate(self) -> int:
        """Hz."""
        return int.from_bytes(self.snr[1:4], "big") & 0x3FFFF

    @property
    def num_samples(self) -> int:
        """Decoded length in samples."""
        return int.from_bytes(self.snr[4:8], "big") & 0x1FFFFFFF

    @property
    def duration(self) -> float:
        """Seconds (0 if the sample rate is 0)."""
        sample_rate = self.sample_rate
        return self.num_samples / sample_rate if sample_rate else 0.0


def parse_sth(data: bytes | memoryview, dat_size: int, path: str = "<sth>") -> list[Take]:
    """Read the rows of a ``.sth`` for a ``.dat`` of ``dat_size`` bytes.

    Raises :class:`FormatError` if the length is not a whole number of rows or the offsets decrease
    or pass the end of the ``.dat``.
    """
    raw = bytes(data)
    if len(raw) % STH_ROW:
        raise FormatError(
            path, len(raw) - len(raw) % STH_ROW, f"whole {STH_ROW}-byte .sth rows", f"{len(raw)} bytes"
        )
    rows = list(struct.iter_unpack(">I8s", raw))
    takes = []
    for k, (off, snr) in enumerate(rows):
        end = rows[k + 1][0] if k + 1 < len(rows) else dat_size
        if not off <= end <= dat_size:
            raise FormatError(
                path, STH_ROW * k, f"take {k} offset <= next offset <= .dat size {dat_size}", f"{off}..{end}"
            )
        takes.append(Take(k, off, end - off, snr))
    return takes


def write_sth(rows: list[tuple[int, bytes]]) -> bytes:
    """Lay out ``(offset, 8-byte SNR header)`` rows."""
    out = bytearray()
    for off, snr in rows:
        if len(snr) != 8:
            raise ValueError(".sth rows hold an 8-byte SNR header")
        out += struct.pack(">I", off) + bytes(snr)
    return bytes(out)
