"""EA SNR header (EAAudioCore v0 "SNR/SNS", v1 "SPS") and the take decoder entry point.

Two big-endian words, then optional words:

- w1: bits 31-28 version (0 SNR/SNS, 1 SPS), 27-24 codec, 23-18 channels - 1,
  17-0 sample rate (Hz, 1..200000).
- w2: bits 31-30 type (0 RAM, 1 STREAM, 2 GIGASAMPLE), 29 loop flag, 28-0 samples.
- loop flag: s32 loop start (samples) at +8; STREAM + loop: u32 loop offset (bytes) at
  +0xC; GIGASAMPLE: u32 prefetch samples after the loop words.

Example: ``02 00 8c a0 40 00 27 10`` = mono 36000 Hz PCM16BE STREAM, 10000 samples.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from audio.codecs import eaxma, pcm, xas1
from audio.codecs.blocks import CodedBlock, pcm16_to_float32
from audio.containers.sns import SPS_HEADER, coded_blocks, write_blocks
from audio.core.binary import Reader
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "CODEC_NAMES",
    "CODEC_PCM16BE",
    "CODEC_EAXMA",
    "CODEC_XAS1",
    "EA_CODECS",
    "TakeCodec",
    "TYPE_RAM",
    "TYPE_STREAM",
    "TYPE_GIGASAMPLE",
    "SnrHeader",
    "parse_snr",
    "split_sps",
    "write_sps",
    "decode_take",
    "eaxma_take",
]

CODEC_NAMES = {
    0: "none",
    1: "reserved",
    2: "PCM16BE",
    3: "EA-XMA",
    4: "XAS1",
    5: "EALayer3 v1",
    6: "EALayer3 v2 PCM",
    7: "EALayer3 v2 Spike",
    8: "GC DSP",
    9: "EASpeex",
    0xA: "EATrax",
    0xB: "EAMP3",
    0xC: "EAOpus",
    0xD: "EA-ATRAC9",
    0xE: "EAOpus multistream",
    0xF: "EAOpus multistream (uncoupled)",
}
CODEC_PCM16BE, CODEC_EAXMA, CODEC_XAS1 = 2, 3, 4
TYPE_RAM, TYPE_STREAM, TYPE_GIGASAMPLE = 0, 1, 2
_TYPE_NAMES = {TYPE_RAM: "RAM", TYPE_STREAM: "STREAM", TYPE_GIGASAMPLE: "GIGASAMPLE"}
MAX_SAMPLE_RATE = 200_000


@dataclass(frozen=True)
class SnrHeader:
    """A parsed SNR header. ``loop_start`` (samples), ``loop_offset`` (bytes into the SNS
    data) and ``prefetch_samples`` are ``None`` when absent."""

    version: int
    codec: int
    channels: int
    sample_rate: int
    type: int
    loop: bool
    num_samples: int
    loop_start: int | None = None
    loop_offset: int | None = None
    prefetch_samples: int | None = None

    @property
    def codec_name(self) -> str:
        return CODEC_NAMES[self.codec]

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES[self.type]

    @property
    def size(self) -> int:
        """Header bytes including the optional words."""
        return 8 + 4 * (self.loop + (self.type == TYPE_STREAM and self.loop) + (self.type == TYPE_GIGASAMPLE))

    def pack(self) -> bytes:
        """The header bytes (inverse of :func:`parse_snr`)."""
        if not (
            0 <= self.version <= 1
            and 0 <= self.codec <= 15
            and 1 <= self.channels <= 64
            and 1 <= self.sample_rate <= MAX_SAMPLE_RATE
            and self.type in _TYPE_NAMES
            and 0 <= self.num_samples < 1 << 29
        ):
            raise ValueError(f"SNR header fields out of range: {self}")
        w1 = self.version << 28 | self.codec << 24 | (self.channels - 1) << 18 | self.sample_rate
        w2 = self.type << 30 | int(self.loop) << 29 | self.num_samples
        out = struct.pack(">II", w1, w2)
        if self.loop:
            out += struct.pack(">i", self.loop_start or 0)
            if self.type == TYPE_STREAM:
                out += struct.pack(">I", self.loop_offset or 0)
        if self.type == TYPE_GIGASAMPLE:
            out += struct.pack(">I", self.prefetch_samples or 0)
        return out


def parse_snr(data: bytes | memoryview, path: str = "<buffer>", offset: int = 0) -> SnrHeader:
    """Parse the SNR header at ``offset`` of ``data`` (the optional words must be present).

    Raises FormatError for a bad version, sample rate, type or a truncated header; unknown
    codec ids are accepted here (:func:`decode_take` rejects them).

    Parameters
    ----------
    data:
        An SNR header (8 or 12 bytes and more).
    path:
        Source name for error messages (file, or archive+member).
    offset:
        Byte offset of the header in its file.
    """
    r = Reader(bytes(data), path)
    w1, w2 = r.u32(offset, "SNR word 1"), r.u32(offset + 4, "SNR word 2")
    version, codec, channels, sample_rate = w1 >> 28, (w1 >> 24) & 0xF, ((w1 >> 18) & 0x3F) + 1, w1 & 0x3FFFF
    kind, loop, samples = w2 >> 30, bool(w2 >> 29 & 1), w2 & 0x1FFFFFFF
    if version > 1:
        raise FormatError(path, offset, "SNR version 0 (SNR/SNS) or 1 (SPS)", version)
    if not 1 <= sample_rate <= MAX_SAMPLE_RATE:
        raise FormatError(path, offset, f"an SNR sample rate of 1..{MAX_SAMPLE_RATE} Hz", sample_rate)
    if kind == 3:
        raise FormatError(path, offset + 4, "SNR type RAM, STREAM or GIGASAMPLE", 3)
    pos = offset + 8
    loop_start = loop_offset = prefetch = None
    if loop:
        loop_start = r.i32(pos, "SNR loop start")
        pos += 4
        if kind == TYPE_STREAM:
            loop_offset = r.u32(pos, "SNR loop offset")
            pos += 4
    if kind == TYPE_GIGASAMPLE:
        prefetch = r.u32(pos, "SNR GIGASAMPLE prefetch samples")
    return SnrHeader(
        version, codec, channels, sample_rate, kind, loop, samples, loop_start, loop_offset, prefetch
    )


def split_sps(data: bytes | memoryview, path: str = "<buffer>") -> tuple[SnrHeader, int]:
    """Parse an SPS file: its 'H' block and SNR header; returns ``(header, data offset)``
    where the 'D' blocks start.

    Parameters
    ----------
    data:
        An SPS file (SNR header, then SNS-style blocks).
    path:
        Source name for error messages (file, or archive+member).
    """
    r = Reader(bytes(data), path)
    word = r.u32(0, "SPS header block")
    if word >> 24 != SPS_HEADER:
        raise FormatError(path, 0, "an SPS 'H' (0x48) header block", f"0x{word >> 24:02X}")
    size = word & 0xFFFFFF
    header = parse_snr(data, path, 4)
    if header.version != 1:
        raise FormatError(path, 4, "SNR version 1 inside an SPS header block", header.version)
    if not 4 + header.size <= size <= len(data):
        raise FormatError(path, 0, f"an SPS header block of {4 + header.size}..{len(data)} bytes", size)
    return header, size


def write_sps(header: SnrHeader, blocks: bytes) -> bytes:
    """An SPS file: 'H' block holding ``header`` (version forced to 1), then ``blocks``
    (version-1 'D' blocks and 'E', as :func:`audio.containers.sns.write_blocks` makes them).

    Parameters
    ----------
    header:
        The take's header.
    blocks:
        The take's blocks, version 1 (:func:`audio.containers.sns.write_blocks`).
    """
    snr = replace(header, version=1).pack()
    return struct.pack(">I", SPS_HEADER << 24 | (4 + len(snr))) + snr + blocks


@dataclass(frozen=True)
class TakeCodec:
    """A sample codec as an SNR header names it: ``decode(blocks, header, path)`` returns
    float32 ``(header.num_samples, header.channels)`` in [-1, 1]."""

    name: str
    decode: Callable[[Sequence[CodedBlock], SnrHeader, str], np.ndarray]


def _pcm16be(blocks: Sequence[CodedBlock], h: SnrHeader, path: str) -> np.ndarray:
    return pcm16_to_float32(pcm.decode_pcm16be(blocks, h.channels, h.num_samples, path=path))


def _eaxma(blocks: Sequence[CodedBlock], h: SnrHeader, path: str) -> np.ndarray:
    return eaxma.decode_eaxma(blocks, h.channels, h.sample_rate, h.num_samples, path=path)


def _xas1(blocks: Sequence[CodedBlock], h: SnrHeader, path: str) -> np.ndarray:
    return pcm16_to_float32(xas1.decode_xas1(blocks, h.channels, h.num_samples, path=path))


EA_CODECS: dict[int, TakeCodec] = {
    CODEC_PCM16BE: TakeCodec(CODEC_NAMES[CODEC_PCM16BE], _pcm16be),
    CODEC_EAXMA: TakeCodec(CODEC_NAMES[CODEC_EAXMA], _eaxma),
    CODEC_XAS1: TakeCodec(CODEC_NAMES[CODEC_XAS1], _xas1),
}
"""SNR codec id -> decoder: the codecs barkbus decodes (every other id of :data:`CODEC_NAMES`
is UnsupportedError)."""


def decode_take(
    header_bytes: bytes | memoryview, body_bytes: bytes | memoryview, path: str = "<buffer>"
) -> tuple[np.ndarray, int]:
    """Decode one take: its SNR header and its SNS data (v0 blocks, or v1 'D'/'E' blocks).

    Bytes of ``header_bytes`` after the header (a RAM take's block stored in the .snr)
    are SNS data that precede ``body_bytes``. GIGASAMPLE prefetch data is not
    supported (UnsupportedError when present).

    Parameters
    ----------
    header_bytes:
        The SNR header.
    body_bytes:
        The SNS body (its blocks).
    path:
        Source name for error messages (file, or archive+member).

    Returns
    -------
    samples : numpy.ndarray
        float32 ``(samples, channels)`` in [-1, 1] whatever the codec (int16 codecs scaled by
        1/32768); ``samples`` = the header's sample count.
    sample_rate : int
        The header's sample rate (Hz).

    Raises UnsupportedError("unsupported codec N (name)") for a codec not in :data:`EA_CODECS`.
    """
    h = parse_snr(header_bytes, path)
    inline = bytes(header_bytes[h.size :])
    if inline and h.type == TYPE_GIGASAMPLE:
        raise UnsupportedError(
            path,
            h.size,
            "a GIGASAMPLE header without prefetched data",
            f"{len(inline)} bytes of prefetch data",
        )
    codec = EA_CODECS.get(h.codec)
    if codec is None:
        known = ", ".join(f"{k} {c.name}" for k, c in sorted(EA_CODECS.items()))
        raise UnsupportedError(
            path, 0, f"a supported codec ({known})", f"unsupported codec {h.codec} ({h.codec_name})"
        )
    body = inline + bytes(body_bytes)
    return codec.decode(coded_blocks(body, path, version=h.version), h, path), h.sample_rate


def eaxma_take(
    stream_packets: list[list[bytes]], channels: int, sample_rate: int, num_samples: int
) -> tuple[bytes, bytes]:
    """(8-byte SNR header, SNS body) of a codec 3 (EA-XMA) STREAM take from XMA2 packets.

    ``num_samples`` is the audible length (the encoder's input length); the packets are
    wrapped by :func:`audio.codecs.eaxma.encode_eaxma` (one 64 KiB XMA2 block per SNS block).

    Parameters
    ----------
    stream_packets:
        Per XMA stream, its 2048-byte XMA2 packets.
    channels:
        Channel count.
    sample_rate:
        Sample rate, Hz.
    num_samples:
        Samples of the take.
    """
    header = SnrHeader(0, CODEC_EAXMA, channels, sample_rate, TYPE_STREAM, False, num_samples).pack()
    return header, write_blocks(eaxma.encode_eaxma(stream_packets))
