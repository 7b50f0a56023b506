"""EAAudioCore codec 3: EA-XMA (XMA2 packets inside SNS blocks), decoder and writer.

Per SNS block, after the 8-byte block header: one chunk per XMA stream (stereo pairs,
the last stream mono if the channel count is odd). A chunk is a BE u32 ``F`` whose
quarter ``F / 4`` is the chunk size including that word, then 2048-byte XMA2 packets
with the last one cut short (its trailing 0xFF padding removed). Decoding re-pads each
chunk to a multiple of 2048 bytes with 0xFF, concatenates a stream's packets over all
blocks and runs one FFmpeg ``xma2`` decoder per stream (real sample rate, flushed). The
result is trimmed or zero-padded to the SNR sample count; no packet header is changed.
Real XMA2 frames never cross a 64 KiB block, which is why the padding can be cut.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from audio.codecs.blocks import CodedBlock
from audio.codecs.xma import (
    XMA_LENGTH_SLACK,
    XMA_PACKET_SIZE,
    XmaPacketHeader,
    decode_xma,
    xma2_extradata,
    xma_stream_channels,
)
from audio.core.errors import FormatError

__all__ = ["eaxma_extradata", "split_streams", "decode_eaxma", "encode_eaxma"]


def eaxma_extradata(stream_channels: int) -> bytes:
    """The XMA2 extradata used for each EA-XMA stream (one stream of 1 or 2 channels).

    Parameters
    ----------
    stream_channels:
        Channels of the stream, 1 or 2.
    """
    return xma2_extradata(stream_channels)


def split_streams(
    blocks: Sequence[CodedBlock], channels: int, *, path: str = "<buffer>"
) -> list[list[tuple[int, bytes]]]:
    """Per XMA stream, its ``(file offset, 2048-byte packet)`` list, re-padded with 0xFF.

    Parameters
    ----------
    blocks:
        The take's coded blocks (:func:`audio.containers.sns.coded_blocks`).
    channels:
        The take's channel count (streams of 2, the last mono if odd).
    path:
        Source name for error messages (file, or archive+member).
    """
    streams = xma_stream_channels(channels)
    out: list[list[tuple[int, bytes]]] = [[] for _ in streams]
    for blk in blocks:
        body, pos, end = blk.payload, 0, len(blk.payload)
        for s in range(len(streams)):
            at = blk.payload_offset + pos
            if pos + 4 > end:
                raise FormatError(
                    path, at, f"an EA-XMA chunk header for stream {s}", f"{end - pos} bytes left"
                )
            word = struct.unpack_from(">I", body, pos)[0]
            size = word // 4
            if word % 4 or size < 4 or pos + size > end:
                raise FormatError(path, at, f"an EA-XMA chunk word F (F/4 = 4..{end - pos} bytes)", word)
            data = body[pos + 4 : pos + size]
            for p in range(0, len(data), XMA_PACKET_SIZE):
                pkt = data[p : p + XMA_PACKET_SIZE]
                out[s].append((at + 4 + p, pkt + b"\xff" * (XMA_PACKET_SIZE - len(pkt))))
            pos += size
    return out


def decode_eaxma(
    blocks: Sequence[CodedBlock],
    channels: int,
    sample_rate: int,
    num_samples: int,
    *,
    path: str = "<buffer>",
    slack: int = XMA_LENGTH_SLACK,
) -> np.ndarray:
    """Decode EA-XMA blocks to float32 ``(num_samples, channels)``.

    Each stream's decoded length must be within ``slack`` samples of ``num_samples``
    (FFmpeg drops pre-roll and applies the encoded skips), else FormatError.

    Parameters
    ----------
    blocks:
        The take's coded blocks (:func:`audio.containers.sns.coded_blocks`).
    channels:
        The take's channel count.
    sample_rate:
        The take's sample rate, Hz (XMA2 band tables depend on it).
    num_samples:
        The header's sample count.
    path:
        Source name for error messages (file, or archive+member).
    slack:
        Samples a stream's decoded length may differ from ``num_samples`` by.
    """
    per_stream = xma_stream_channels(channels)
    packets = split_streams(blocks, channels, path=path)
    decoded = []
    for s, (ch, pk) in enumerate(zip(per_stream, packets)):
        if not pk:
            raise FormatError(
                path, blocks[0].offset if blocks else None, f"XMA packets for EA-XMA stream {s}", "none"
            )
        decoded.append(
            decode_xma(
                pk,
                sample_rate,
                ch,
                extradata=eaxma_extradata(ch),
                path=path,
                base_offset=pk[0][0],
                samples_range=(max(0, num_samples - slack), num_samples + slack),
            )
        )
    if len(decoded) == 1 and decoded[0].shape[0] >= num_samples:
        return decoded[0][:num_samples]
    out = np.zeros((num_samples, channels), np.float32)  # bounded: every stream decoded near num_samples
    col = 0
    for ch, pcm in zip(per_stream, decoded):
        n = min(num_samples, pcm.shape[0])
        out[:n, col : col + ch] = pcm[:n]
        col += ch
    return out


def _cut(chunk: bytes, packets: int) -> bytes:
    """Remove trailing 0xFF from the last packet only (at least one of its bytes stays)."""
    keep = (packets - 1) * XMA_PACKET_SIZE + 1
    stripped = chunk.rstrip(b"\xff")
    return chunk[: max(len(stripped), keep)]


def encode_eaxma(
    stream_packets: Sequence[Sequence[bytes]], *, packets_per_block: int = 32
) -> list[tuple[int, bytes]]:
    """EA-XMA ``(samples, payload)`` blocks from each stream's 2048-byte XMA2 packets (a
    container writes them, e.g. :func:`audio.containers.sns.write_blocks`).

    Each block carries up to ``packets_per_block`` packets per stream (32 = one XMA2
    block, so XMA frames never cross a chunk); each chunk's last packet is cut short. The
    block's sample word is 512 x the XMA frames starting in stream 0's packets.

    Parameters
    ----------
    stream_packets:
        Per XMA stream, its 2048-byte XMA2 packets.
    packets_per_block:
        Packets per stream in each block (32 = one 64 KiB XMA2 block).
    """
    if packets_per_block < 1:
        raise ValueError("packets_per_block must be >= 1")
    for pk in stream_packets:
        if any(len(p) != XMA_PACKET_SIZE for p in pk):
            raise ValueError("XMA packets must be 2048 bytes")
    nblocks = max((-(-len(pk) // packets_per_block) for pk in stream_packets), default=0)
    payloads = []
    for b in range(nblocks):
        body = bytearray()
        samples = 0
        for s, pk in enumerate(stream_packets):
            part = list(pk[b * packets_per_block : (b + 1) * packets_per_block])
            chunk = _cut(b"".join(part), len(part)) if part else b""
            body += struct.pack(">I", 4 * (4 + len(chunk))) + chunk
            if s == 0:
                samples = 512 * sum(
                    XmaPacketHeader.unpack(struct.unpack_from(">I", p)[0]).xma_frame_count for p in part
                )
        payloads.append((samples, bytes(body)))
    return payloads or [(0, b"")]
