"""EAAudioCore codec 2: PCM16BE (big-endian int16, channel-interleaved) in coded blocks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audio.codecs.blocks import CodedBlock
from audio.core.errors import FormatError

__all__ = ["decode_pcm16be", "encode_pcm16be", "fit_length"]


def fit_length(pcm: np.ndarray, num_samples: int, path: str, what: str) -> np.ndarray:
    """Trim ``pcm`` (samples, channels) to ``num_samples`` samples; FormatError if the blocks held fewer.

    Parameters
    ----------
    pcm:
        Decoded ``(samples, channels)``.
    num_samples:
        The header's sample count.
    path:
        Source name for error messages (file, or archive+member).
    what:
        The codec's name, for the error.
    """
    if pcm.shape[0] < num_samples:
        raise FormatError(path, None, f"{num_samples} samples of {what} in the blocks", pcm.shape[0])
    return pcm[:num_samples]


def decode_pcm16be(
    blocks: Sequence[CodedBlock], channels: int, num_samples: int, *, path: str = "<buffer>"
) -> np.ndarray:
    """Decode PCM16BE blocks to int16 ``(num_samples, channels)``.

    Each block's payload must hold ``samples * channels`` int16 values.

    Parameters
    ----------
    blocks:
        The take's coded blocks.
    channels:
        Channel count.
    num_samples:
        The header's sample count.
    path:
        Source name for error messages (file, or archive+member).
    """
    parts = []
    for blk in blocks:
        need = blk.samples * channels * 2
        if need > len(blk.payload):
            raise FormatError(
                path, blk.offset, f"{need} bytes of PCM16BE for {blk.samples} samples", len(blk.payload)
            )
        parts.append(np.frombuffer(blk.payload, ">i2", blk.samples * channels))
    flat = np.concatenate(parts) if parts else np.zeros(0, ">i2")
    return fit_length(flat.astype(np.int16).reshape(-1, channels), num_samples, path, "PCM16BE")


def encode_pcm16be(samples: np.ndarray, *, block_samples: int = 2048) -> list[tuple[int, bytes]]:
    """PCM16BE ``(samples, payload)`` blocks from int16 ``(samples, channels)`` (or 1-D mono)
    samples, ``block_samples`` per block (a container writes them, e.g.
    :func:`audio.containers.sns.write_blocks`).

    Parameters
    ----------
    samples:
        int16 ``(samples, channels)`` or 1-D mono.
    block_samples:
        Samples per block.
    """
    arr = np.asarray(samples, np.int16)
    arr = arr if arr.ndim == 2 else arr.reshape(-1, 1)
    if block_samples < 1:
        raise ValueError("block_samples must be >= 1")
    chunks = [
        (len(arr[i : i + block_samples]), arr[i : i + block_samples].astype(">i2").tobytes())
        for i in range(0, len(arr), block_samples)
    ]
    return chunks or [(0, b"")]
