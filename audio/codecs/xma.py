"""XMA1 / XMA2 decoding through FFmpeg (PyAV), plus the XMA2 packet header.

XMA data is a sequence of 2048-byte packets. FFmpeg's ``xma1``/``xma2`` decoders take
one packet at a time, need the *real* sample rate (band tables depend on the rate
class) and an extradata blob: the 34-byte XMA2WAVEFORMATEX extension for XMA2, the
XMAWAVEFORMAT body (fmt chunk minus its first 4 bytes) for XMA1. The decoder holds
back samples until it is flushed, drops the encoder pre-roll and applies the skip
fields, so N XMA frames without skips decode to ``N * 512 - 64`` samples.

FFmpeg is lenient with bad input: it may raise, silently drop a packet or return
garbage. :func:`decode_xma` therefore catches every FFmpeg error per packet, rejects
samples far out of range and checks the decoded length when the caller knows it; every
failure becomes a :class:`~audio.core.errors.FormatError` naming the file and the packet's
byte offset.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from audio.core.errors import FormatError

if TYPE_CHECKING:
    import av

__all__ = [
    "XMA_PACKET_SIZE",
    "XMA2_BLOCK_SIZE",
    "XMA_LENGTH_SLACK",
    "MAX_ABS_SAMPLE",
    "XmaPacketHeader",
    "xma2_extradata",
    "xma1_extradata",
    "parse_xma2_packet_header",
    "split_packets",
    "xma_stream_channels",
    "decode_xma",
    "load_ffmpeg",
]

XMA_PACKET_SIZE = 2048
"""Bytes per XMA packet."""
XMA2_BLOCK_SIZE = 0x10000
"""Bytes per XMA2 block (32 packets); XMA frames never cross a block boundary."""
XMA_LENGTH_SLACK = 2048
"""Samples by which FFmpeg's decode may differ from a header's duration.

Real data decodes to about ``duration - (384..768)`` (FFmpeg drops the pre-roll and
applies the encoded skips); a larger gap means lost or corrupt packets.
"""
MAX_ABS_SAMPLE = 4.0
"""Decoded float samples with a larger magnitude are taken as garbage (real XMA overshoots ~1.4)."""

_MASKS = {1: 0x4, 2: 0x3}


def xma_stream_channels(channels: int) -> list[int]:
    """Channels of each XMA stream: stereo pairs, the last stream mono if ``channels`` is odd.

    Parameters
    ----------
    channels:
        Total channel count.
    """
    if channels < 1:
        raise ValueError(f"channels must be >= 1, got {channels}")
    return [2] * (channels // 2) + [1] * (channels % 2)


def xma2_extradata(
    channels: int,
    *,
    samples_encoded: int = 0,
    bytes_per_block: int = XMA2_BLOCK_SIZE,
    block_count: int = 1,
    play_begin: int = 0,
    play_length: int = 0,
    loop_begin: int = 0,
    loop_length: int = 0,
    loop_count: int = 0,
    encoder_version: int = 4,
    streams: int | None = None,
    channel_mask: int | None = None,
) -> bytes:
    """The 34-byte little-endian XMA2WAVEFORMATEX extension FFmpeg's ``xma2`` decoder reads.

    Parameters
    ----------
    channels:
        Total channel count; ``streams`` defaults to ``(channels + 1) // 2``.
    samples_encoded:
        Samples in the stream (informational for FFmpeg).
    block_count:
        Number of ``bytes_per_block`` blocks in the stream.
    channel_mask:
        Speaker mask; defaults to 0x4 (mono), 0x3 (stereo), else 0.
    bytes_per_block:
        Bytes per XMA2 block (64 KiB).
    play_begin:
        First sample to play.
    play_length:
        Samples to play (0: all).
    loop_begin:
        First sample of the loop.
    loop_length:
        Samples in the loop (0: no loop).
    loop_count:
        Times the loop plays (255: forever).
    encoder_version:
        Encoder version byte.
    streams:
        XMA stream count (``None``: from ``channels``).
    """
    n_streams = len(xma_stream_channels(channels)) if streams is None else streams
    mask = _MASKS.get(channels, 0) if channel_mask is None else channel_mask
    return struct.pack(
        "<HIIIIIIIBBH",
        n_streams,
        mask,
        samples_encoded,
        bytes_per_block,
        play_begin,
        play_length,
        loop_begin,
        loop_length,
        loop_count,
        encoder_version,
        min(max(block_count, 1), 0xFFFF),
    )


def xma1_extradata(
    sample_rate: int,
    channels: int,
    *,
    loop_start: int = 0,
    loop_end: int = 0,
    loop_count: int = 0,
    bytes_per_second: int = 0,
) -> bytes:
    """XMA1 extradata: an XMAWAVEFORMAT without its first 4 bytes (``8 + 20 * streams`` bytes).

    One XMASTREAMFORMAT per stream (stereo pairs, last one mono if odd); ``sample_rate``
    in Hz, loop points in bits (XMA1 convention, 0 = none).

    Parameters
    ----------
    sample_rate:
        Sample rate, Hz.
    channels:
        Total channel count.
    loop_start:
        Loop start, bits (0: none).
    loop_end:
        Loop end, bits (0: none).
    loop_count:
        Times the loop plays.
    bytes_per_second:
        Average bytes per second (informational).
    """
    per = xma_stream_channels(channels)
    head = struct.pack("<HHHBB", 0, 0, len(per), loop_count, 0)
    body = b"".join(
        struct.pack("<IIIIBBH", bytes_per_second, sample_rate, loop_start, loop_end, 0, ch, _MASKS.get(ch, 0))
        for ch in per
    )
    return head + body


@dataclass(frozen=True)
class XmaPacketHeader:
    """The 32-bit header of an XMA2 packet (MSB first).

    xma_frame_count: XMA frames that *start* in this packet (6 bits);
    first_xma_frame_bit_offset: bit offset of the first XMA frame header after the 32-bit packet
    header (15 bits);
    metadata: 3 bits; packet_skip: packets of other streams to skip after this one (8 bits).
    """

    xma_frame_count: int
    first_xma_frame_bit_offset: int
    metadata: int
    packet_skip: int

    @classmethod
    def unpack(cls, word: int) -> XmaPacketHeader:
        """The header fields of a packet's big-endian first word.

        Parameters
        ----------
        word:
            The packet's first 32 bits, big-endian.
        """
        return cls(word >> 26, (word >> 11) & 0x7FFF, (word >> 8) & 0x7, word & 0xFF)

    def pack(self) -> int:
        """The header as a 32-bit word (inverse of :meth:`unpack`)."""
        return (
            (self.xma_frame_count & 0x3F) << 26
            | (self.first_xma_frame_bit_offset & 0x7FFF) << 11
            | (self.metadata & 0x7) << 8
            | (self.packet_skip & 0xFF)
        )


def parse_xma2_packet_header(packet: bytes, path: str = "<buffer>", offset: int = 0) -> XmaPacketHeader:
    """Parse and sanity-check the header of one 2048-byte XMA2 packet.

    Raises FormatError if the packet is short or the first-XMA-frame offset points outside
    the packet (``32 + offset`` must be below ``2048 * 8`` bits).

    Parameters
    ----------
    packet:
        One 2048-byte packet.
    path:
        Source name for error messages (file, or archive+member).
    offset:
        The packet's byte offset in its file.
    """
    if len(packet) < 4:
        raise FormatError(path, offset, "an XMA2 packet header (4 bytes)", f"{len(packet)} bytes")
    hdr = XmaPacketHeader.unpack(struct.unpack_from(">I", packet, 0)[0])
    if hdr.xma_frame_count and 32 + hdr.first_xma_frame_bit_offset >= XMA_PACKET_SIZE * 8:
        raise FormatError(
            path, offset, "an XMA2 first-frame bit offset inside the packet", hdr.first_xma_frame_bit_offset
        )
    return hdr


def split_packets(
    data: bytes | memoryview, base_offset: int = 0, *, pad: bool = True, path: str = "<buffer>"
) -> list[tuple[int, bytes]]:
    """Cut ``data`` into ``(file offset, 2048-byte packet)`` pairs.

    A short tail is padded with 0xFF when ``pad`` is true, else it is an error.

    Parameters
    ----------
    data:
        Whole XMA packets.
    base_offset:
        Byte offset of ``data`` in its file, so errors name the real offset.
    pad:
        Pad a short tail with 0xFF (``False``: a short tail is an error).
    path:
        Source name for error messages (file, or archive+member).
    """
    out = []
    for pos in range(0, len(data), XMA_PACKET_SIZE):
        pkt = bytes(data[pos : pos + XMA_PACKET_SIZE])
        if len(pkt) < XMA_PACKET_SIZE:
            if not pad:
                raise FormatError(
                    path, base_offset + pos, "a whole 2048-byte XMA packet", f"{len(pkt)} bytes"
                )
            pkt += b"\xff" * (XMA_PACKET_SIZE - len(pkt))
        out.append((base_offset + pos, pkt))
    return out


def _make_context(version: int, sample_rate: int, channels: int, extradata: bytes) -> av.AudioCodecContext:
    import av  # PyAV (FFmpeg) loads on the first XMA decode, not with the package

    ctx = av.CodecContext.create("xma2" if version == 2 else "xma1", "r")
    assert isinstance(ctx, av.AudioCodecContext)
    ctx.sample_rate = sample_rate
    ctx.layout = {1: "mono", 2: "stereo"}.get(channels, f"{channels}c")
    ctx.extradata = extradata
    return ctx


def load_ffmpeg() -> None:
    """Load PyAV/FFmpeg and open (then drop) one XMA2 decoder context.

    The first XMA decode of a process pays for loading FFmpeg's libraries (0.1-0.2 s of
    CPU, more wall time on a busy disk); a player calls this on its loader thread while
    it sets up, so that cost never lands on the render thread.
    """
    _make_context(2, 48000, 1, xma2_extradata(1))


def _numbered(packets: Iterable[bytes | tuple[int, bytes]], base_offset: int) -> Iterable[tuple[int, bytes]]:
    """``(file offset, packet)`` pairs; bare packets are numbered from ``base_offset``."""
    for index, item in enumerate(packets):
        yield item if isinstance(item, tuple) else (base_offset + index * XMA_PACKET_SIZE, item)


def _checked(decoded: Iterable[Any], channels: int, max_abs: float, path: str, at: int) -> list[np.ndarray]:
    """FFmpeg's decoded sample blocks as planar float32 arrays, each checked for its channels
    and magnitude."""
    out = []
    for block in decoded:
        arr = block.to_ndarray()
        if arr.ndim != 2 or arr.shape[0] != channels:
            raise FormatError(path, at, f"decoded XMA with {channels} planar channels", arr.shape)
        peak = float(np.abs(arr).max()) if arr.size else 0.0
        if not peak <= max_abs:  # also rejects NaN
            raise FormatError(path, at, f"decoded XMA samples within +-{max_abs}", peak)
        out.append(arr)
    return out


def decode_xma(
    packets: Iterable[bytes | tuple[int, bytes]],
    sample_rate: int,
    channels: int,
    *,
    version: int = 2,
    extradata: bytes | None = None,
    path: str = "<buffer>",
    base_offset: int = 0,
    samples_range: tuple[int, int] | None = None,
    max_abs: float = MAX_ABS_SAMPLE,
) -> np.ndarray:
    """Decode XMA packets with a fresh FFmpeg decoder, drained at the end.

    Parameters
    ----------
    packets:
        2048-byte packets, either bare (offsets then count from ``base_offset``) or as
        ``(file offset, packet)`` pairs so errors name the real byte offset.
    sample_rate:
        The stream's real rate in Hz (FFmpeg picks band tables by rate class).
    channels:
        Total channels over all streams.
    version:
        1 (XMA1) or 2 (XMA2).
    extradata:
        Overrides the default :func:`xma2_extradata` / :func:`xma1_extradata`.
    samples_range:
        If given, ``(low, high)``: the decoded length (samples per channel) must lie in it.
    max_abs:
        Largest accepted sample magnitude (garbage from corrupt packets is far above 1).
    path:
        Source name for error messages (file, or archive+member).
    base_offset:
        Byte offset of the first bare packet in its file.

    Returns
    -------
    float32 array of shape (samples, channels), interleaved; ``.T`` gives planar.
    """
    if version not in (1, 2):
        raise ValueError(f"XMA version must be 1 or 2, got {version}")
    if not 1 <= channels <= 8 or not 1 <= sample_rate <= 200_000:
        raise FormatError(
            path, base_offset, "XMA with 1-8 channels and a 1-200000 Hz rate", (channels, sample_rate)
        )
    if extradata is None:
        extradata = xma2_extradata(channels) if version == 2 else xma1_extradata(sample_rate, channels)
    # One fresh decoder per stream: FFmpeg's flush does not reset all of the XMA decoder's
    # state (a flushed decoder drops or refuses a one-packet 128-sample stream that follows
    # another stream); opening one costs about 0.5 ms of CPU.
    ctx = _make_context(version, sample_rate, channels, bytes(extradata))
    import av.error

    chunks: list[np.ndarray] = []
    offset = first_offset = None
    for offset, pkt in _numbered(packets, base_offset):
        if first_offset is None:
            first_offset = offset
        if len(pkt) != XMA_PACKET_SIZE:
            raise FormatError(path, offset, "a 2048-byte XMA packet", f"{len(pkt)} bytes")
        try:
            chunks += _checked(ctx.decode(av.Packet(pkt)), channels, max_abs, path, offset)
        except av.error.FFmpegError as exc:
            raise FormatError(path, offset, f"a decodable XMA{version} packet", str(exc)) from exc
    end = base_offset if offset is None else offset
    try:
        chunks += _checked(ctx.decode(None), channels, max_abs, path, end)
    except av.error.ArgumentError as exc:
        # FFmpeg's xma1 decoder (no delay capability) answers the drain with EINVAL: nothing held back
        if version == 2:
            raise FormatError(path, end, "a decodable end of XMA2 stream", str(exc)) from exc
    except av.error.FFmpegError as exc:
        raise FormatError(path, end, f"a decodable end of XMA{version} stream", str(exc)) from exc
    n = sum(c.shape[1] for c in chunks)
    if samples_range is not None and not samples_range[0] <= n <= samples_range[1]:
        raise FormatError(
            path,
            base_offset if first_offset is None else first_offset,
            f"{samples_range[0]}..{samples_range[1]} decoded XMA samples",
            n,
        )
    if not chunks:
        return np.zeros((0, channels), np.float32)
    planar = np.concatenate(chunks, axis=1)
    return planar.reshape(n, 1) if channels == 1 else np.column_stack(tuple(planar))
