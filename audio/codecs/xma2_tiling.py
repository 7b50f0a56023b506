"""XMA2 subframe tilings and the forward transform for any mix of block sizes.

An XMA frame (512 samples per channel) is cut into subframes (blocks) of 512, 256 or
128 samples; the six ways to do it are :data:`TILINGS`. The decoder's synthesis
(``shared/specs/xma2-encoding.md`` section 6) overlaps neighbouring blocks with a sine
slope of ``min(left, right)`` samples centred on their boundary, so a block of length
``L`` whose neighbours give slopes ``nl`` (left) and ``nr`` (right) is, seen from the
encoder, an MDCT of its ``2 L`` samples from ``L / 2`` before its start, under the window
``0 | rising sine of nl | 1 | falling sine of nr | 0``. :func:`analyse_blocks` computes
those coefficients (decoder scale, ``-32768`` x the MDCT) through a DCT-IV
(:func:`scipy.fft.dct` type 4) of the folded input; for uniform 128-sample blocks they are
the coefficients of the spec's section 6 formula.

Model time: input sample 0 sits at model time 576; the block at XMA-frame offset ``o``
of XMA frame ``f`` starts at model time ``512 f + 256 + o``.
"""

from __future__ import annotations

from functools import cache

import numba as nb
import numpy as np
import scipy.fft

from audio.codecs.xma2_bitstream import XMA_FRAME_SAMPLES

__all__ = ["TILINGS", "MODEL_OFFSET", "block_windows", "analyse_blocks", "layout"]

TILINGS: tuple[tuple[int, ...], ...] = (
    (512,),
    (256, 256),
    (256, 128, 128),
    (128, 128, 256),
    (128, 256, 128),
    (128, 128, 128, 128),
)
"""Every split of an XMA frame into subframes (block lengths in samples, in time order)."""
MODEL_OFFSET = 576
"""Model time of input sample 0 (the decoder drops its first XMA frame and 64 samples)."""
_FIRST_START = XMA_FRAME_SAMPLES // 2  # model time of XMA frame 0's first block
_DECODER_START = XMA_FRAME_SAMPLES  # the decoder's "previous block length" before the first block
_LAST_RIGHT = 128  # right slope of the last block: only its flat part lies before the end


@cache
def _window(size: int, left: int, right: int) -> np.ndarray:
    """The ``2 size``-sample analysis window of a block with slopes ``left`` and ``right``."""
    w = np.zeros(2 * size)
    a = size // 2 - left // 2
    w[a : a + left] = np.sin((np.arange(left) + 0.5) * np.pi / (2 * left))
    b = 3 * size // 2 - right // 2
    w[a + left : b] = 1.0
    w[b : b + right] = np.cos((np.arange(right) + 0.5) * np.pi / (2 * right))
    return w


def block_windows(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Left and right slope lengths (samples) of consecutive blocks of lengths ``sizes``.

    Each boundary's slope is the shorter neighbour's length; the first block's left
    neighbour is the decoder's initial 512, the last block's right slope is 128.

    Parameters
    ----------
    sizes:
        Block lengths in time order, samples.
    """
    sizes = np.asarray(sizes, np.int64)
    left = np.minimum(sizes, np.concatenate([[_DECODER_START], sizes[:-1]]))
    right = np.minimum(sizes, np.concatenate([sizes[1:], [_LAST_RIGHT]]))
    return left, right


def layout(tiling: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model-time starts and lengths (samples) of every block of a stream.

    Parameters
    ----------
    tiling:
        Per XMA frame an index into :data:`TILINGS`.
    """
    sizes = np.concatenate([TILINGS[int(t)] for t in tiling]).astype(np.int64)
    starts = _FIRST_START + np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return starts, sizes


def analyse_blocks(
    model: np.ndarray, starts: np.ndarray, sizes: np.ndarray, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """Coefficients (decoder scale) of blocks of one channel, back to back in the order given.

    Parameters
    ----------
    model:
        The channel on the model timeline (input at :data:`MODEL_OFFSET`, zeros around it,
        long enough for every block's window), full scale 1.0.
    starts:
        Model time of each block's first sample.
    sizes:
        Block lengths, samples (128, 256 or 512).
    left, right:
        Slope lengths of each block's window, samples (:func:`block_windows`).

    Returns
    -------
    numpy.ndarray
        ``sum(sizes)`` coefficients: block ``i``'s at ``sum(sizes[:i])``.
    """
    out = np.empty(int(np.sum(sizes)))
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    keys = np.stack([sizes, left, right], axis=1)
    model = np.ascontiguousarray(model, np.float64)
    for key in np.unique(keys, axis=0):
        size, lft, rgt = (int(v) for v in key)
        idx = np.flatnonzero((keys == key).all(axis=1))
        folded = np.empty((len(idx), size))
        _fold(model, (starts[idx] - size // 2).astype(np.int64), _window(size, lft, rgt), folded)
        # decoder scale: -32768 x the MDCT = -32768 x (DCT-IV of the folded input) / 2
        _place(out, first[idx], scipy.fft.dct(folded, type=4, axis=1, overwrite_x=True) * -16384.0)
    return out


@nb.njit(cache=True, nogil=True)
def _fold(model, origins, window, folded):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Fold each windowed ``2 L``-sample segment ``model[o : o + 2 L] * window`` (quarters
    a, b, c, d) into the ``L`` samples ``(-c reversed - d, a - b reversed)`` of the MDCT."""
    size = folded.shape[1]
    half = size // 2
    for i in range(origins.shape[0]):
        o = origins[i]
        for j in range(half):
            c = size + half - 1 - j
            d = size + half + j
            folded[i, j] = -model[o + c] * window[c] - model[o + d] * window[d]
            b = size - 1 - j
            folded[i, half + j] = model[o + j] * window[j] - model[o + b] * window[b]


@nb.njit(cache=True, nogil=True)
def _place(out, first, rows):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``out[first[i] : first[i] + L] = rows[i]`` for every row."""
    size = rows.shape[1]
    for i in range(rows.shape[0]):
        for k in range(size):
            out[first[i] + k] = rows[i, k]
