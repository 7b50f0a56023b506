"""What a container hands a codec: coded blocks; and the one int16 -> float32 conversion.

A container (:mod:`audio.containers`) walks its own block layout and gives a codec a list of
:class:`CodedBlock`; the codec never sees the container's headers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["CodedBlock", "pcm16_to_float32"]


class CodedBlock(NamedTuple):
    """One block of coded samples.

    Attributes
    ----------
    offset : int
        File offset (bytes) of the block's header, for error messages.
    samples : int
        Samples per channel the block holds.
    payload_offset : int
        File offset (bytes) of ``payload``.
    payload : bytes
        The coded bytes.
    """

    offset: int
    samples: int
    payload_offset: int
    payload: bytes


def pcm16_to_float32(pcm: np.ndarray) -> np.ndarray:
    """float32 samples in [-1, 1) from int16 samples: ``x / 32768`` (exact: a power-of-two scale
    of a 16-bit integer is representable in float32).

    Parameters
    ----------
    pcm:
        int16 samples, any shape.
    """
    return np.asarray(pcm, np.int16).astype(np.float32) / np.float32(32768.0)
