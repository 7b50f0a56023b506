"""EAAudioCore codec 2: PCM16BE in SNS blocks (big-endian int16, channel-interleaved)."""

from __future__ import annotations

import numpy as np

from audio.codecs.sns import walk_blocks, write_blocks
from audio.core.errors import FormatError

__all__ = ["decode_pcm16be", "encode_pcm16be", "fit_length"]


def fit_length(pcm: np.ndarray, num_samples: int, path: str, what: str) -> np.ndarray:
    """Trim ``pcm`` (frames, channels) to ``num_samples`` frames; FormatError if the blocks held fewer."""
    if pcm.shape[0] < num_samples:
        raise FormatError(path, None, f"{num_samples} samples of {what} in the SNS blocks", pcm.shape[0])
    return pcm[:num_samples]


def decode_pcm16be(
    body: bytes,
    channels: int,
    num_samples: int,
    *,
    path: str = "<buffer>",
    version: int = 0,
    base_offset: int = 0,
) -> np.ndarray:
    """Decode PCM16BE SNS blocks to int16 ``(num_samples, channels)``.

    Each block's payload must hold ``samples * channels`` int16 values.
    """
    parts = []
    for blk in walk_blocks(body, path, version=version, base_offset=base_offset):
        need = blk.samples * channels * 2
        if need > blk.payload_size:
            raise FormatError(
                path, blk.offset, f"{need} bytes of PCM16BE for {blk.samples} samples", blk.payload_size
            )
        start = blk.payload_offset - base_offset
        parts.append(np.frombuffer(body, ">i2", blk.samples * channels, start))
    flat = np.concatenate(parts) if parts else np.zeros(0, ">i2")
    return fit_length(flat.astype(np.int16).reshape(-1, channels), num_samples, path, "PCM16BE")


def encode_pcm16be(samples: np.ndarray, *, block_samples: int = 2048, version: int = 0) -> bytes:
    """SNS blocks of PCM16BE from int16 ``(frames, channels)`` (or 1-D mono) samples."""
    arr = np.asarray(samples, np.int16)
    arr = arr if arr.ndim == 2 else arr.reshape(-1, 1)
    if block_samples < 1:
        raise ValueError("block_samples must be >= 1")
    chunks = [
        (len(arr[i : i + block_samples]), arr[i : i + block_samples].astype(">i2").tobytes())
        for i in range(0, len(arr), block_samples)
    ]
    return write_blocks(chunks or [(0, b"")], version=version)
