"""XMA2 bitstream building blocks shared by the encoder and the strict decoder.

The VLC code assignment, the rate class and scale-factor band edges, the packet and
block geometry, and a small MSB-first bit reader. All facts come from
``shared/specs/xma2-encoding.md`` (sections 2, 3, 5 and 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from audio.codecs import xma2_tables as T
from audio.core.errors import FormatError

__all__ = [
    "XMA_FRAME_SAMPLES",
    "PACKET_BITS",
    "PAYLOAD_BITS",
    "PACKETS_PER_BLOCK",
    "XMA_FRAME_LENGTH_BITS",
    "MAX_XMA_FRAMES_PER_PACKET",
    "Vlc",
    "codes_from_lengths",
    "rate_class",
    "band_edges",
    "vlc_tables",
    "BitReader",
]

XMA_FRAME_SAMPLES = 512
"""Samples per channel in every XMA frame, at every sample rate."""
PACKET_BITS = 2048 * 8
"""Bits per XMA packet (32-bit header + payload)."""
PAYLOAD_BITS = PACKET_BITS - 32
"""Payload bits per packet (16352, a whole number of bytes: 2044)."""
PACKETS_PER_BLOCK = 32
"""Packets per 64 KiB XMA2 block; an XMA frame never crosses a block boundary."""
XMA_FRAME_LENGTH_BITS = 15
"""Width of the XMA-frame-length prefix (log2(2048) + 4)."""
MAX_XMA_FRAMES_PER_PACKET = 63
"""XMA frame starts per packet that the 6-bit packet XMA frame count can hold."""


def codes_from_lengths(lengths: Sequence[int]) -> np.ndarray:
    """Codes of a VLC given by its code lengths in tree order (int64, right-aligned).

    Walking the table in order, each entry takes the next free code of its length: the
    running code (left-aligned in 32 bits) grows by ``2**(32 - length)`` per entry.

    Parameters
    ----------
    lengths:
        Code length of each entry, bits, in tree order.
    """
    codes = np.zeros(len(lengths), np.int64)
    acc = 0
    for i, n in enumerate(lengths):
        codes[i] = acc >> (32 - n)
        acc += 1 << (32 - n)
    return codes


@dataclass(frozen=True)
class Vlc:
    """One VLC table: per symbol its code and length, and a decoding map.

    Attributes
    ----------
    code, length:
        int64 arrays indexed by symbol (length 0 = the symbol has no code).
    decode_map:
        ``(length, code) -> symbol``.
    max_length:
        Longest code, bits.
    """

    code: np.ndarray
    length: np.ndarray
    decode_map: dict[tuple[int, int], int]
    max_length: int

    @classmethod
    def from_pairs(cls, symbols: Sequence[int], lengths: Sequence[int]) -> Vlc:
        """A VLC from its symbols and their code lengths (bits), in tree order.

        Parameters
        ----------
        symbols:
            Symbol of each entry.
        lengths:
            Code length of each entry, bits.
        """
        codes = codes_from_lengths(lengths)
        n = max(symbols) + 1
        code = np.zeros(n, np.int64)
        length = np.zeros(n, np.int64)
        dmap: dict[tuple[int, int], int] = {}
        for sym, ln, c in zip(symbols, lengths, codes):
            code[sym], length[sym] = c, ln
            dmap[(ln, int(c))] = sym
        return cls(code, length, dmap, max(lengths))


@cache
def vlc_tables() -> dict[str, Vlc]:
    """Every VLC of the format by name: scale, scale_rl, coef0, coef1, vec4, vec2, vec1."""

    def pairs(table: tuple[tuple[int, int], ...]) -> Vlc:
        return Vlc.from_pairs([s for s, _ in table], [n for _, n in table])

    return {
        "scale": pairs(T.SCALE_TABLE),
        "scale_rl": pairs(T.SCALE_RL_TABLE),
        "coef0": Vlc.from_pairs(T.COEF0_SYMS, T.COEF0_LENS),
        "coef1": pairs(T.COEF1_TABLE),
        "vec4": Vlc.from_pairs(T.VEC4_SYMS, T.VEC4_LENS),
        "vec2": pairs(T.VEC2_TABLE),
        "vec1": pairs(T.VEC1_TABLE),
    }


def rate_class(sample_rate: int) -> int:
    """The rate class (Hz) that picks the band layout: 24000, 32000, 44100 or 48000.

    Parameters
    ----------
    sample_rate:
        The stream's sample rate, Hz.
    """
    if sample_rate > 44100:
        return 48000
    if sample_rate > 32000:
        return 44100
    if sample_rate > 24000:
        return 32000
    return 24000


@cache
def band_edges(subframe_length: int, sample_rate: int) -> tuple[int, ...]:
    """Scale-factor band edges (coefficient indices, first 0, last ``subframe_length``).

    For each critical frequency: ``o = (2 L f) // class + 2`` with the low two bits
    cleared, kept if above the last edge, until an edge reaches ``L``; the last edge
    is then set to ``L`` (spec section 3).
    """
    klass = rate_class(sample_rate)
    edges = [0]
    for f in T.CRITICAL_FREQ[:-1]:
        if edges[-1] >= subframe_length:
            break
        o = ((subframe_length * 2 * f) // klass + 2) & ~3
        if o > edges[-1]:
            edges.append(o)
    edges[-1] = subframe_length
    return tuple(edges)


class BitReader:
    """MSB-first reader over a bytes object; reading past ``limit`` bits raises FormatError.

    Parameters
    ----------
    data:
        The bytes to read.
    limit:
        Readable bits (``None``: all of ``data``).
    path:
        Source name for error messages (file, or archive+member).
    """

    def __init__(self, data: bytes, limit: int | None = None, *, path: str = "<buffer>") -> None:
        self._value = int.from_bytes(data, "big")
        self._total = len(data) * 8
        self.limit = self._total if limit is None else min(limit, self._total)
        self.pos = 0
        self.path = path

    def read(self, n: int) -> int:
        """The next ``n`` bits as an unsigned integer.

        Parameters
        ----------
        n:
            Bits to read (0..32).
        """
        if n == 0:
            return 0
        end = self.pos + n
        if end > self.limit:
            raise FormatError(
                self.path, self.pos // 8, f"{n} more bits inside the XMA frame", "end of XMA frame"
            )
        v = (self._value >> (self._total - end)) & ((1 << n) - 1)
        self.pos = end
        return v

    def read_vlc(self, vlc: Vlc, what: str) -> int:
        """One symbol of ``vlc``.

        Parameters
        ----------
        vlc:
            The code table.
        what:
            What is read, for the error at a bad code.
        """
        code = 0
        for n in range(1, vlc.max_length + 1):
            code = (code << 1) | self.read(1)
            sym = vlc.decode_map.get((n, code))
            if sym is not None:
                return sym
        raise FormatError(self.path, self.pos // 8, f"a valid {what} code", code)
