"""EAAudioCore codec 4: EA-XAS v1 ADPCM (decoder and closed-loop encoder), vectorised with numpy.

An XAS1 frame is 0x4C bytes per channel and holds 128 samples in 4 groups of 32. Group ``g``
has a little-endian u32 header ``h`` at ``4g``: coefficient index ``h & 0xF`` (0..3
valid, others give (0, 0)), hist2 = ``int16(h & 0xFFF0)``, hist1 =
``int16((h >> 16) & 0xFFF0)``, shift = ``(h >> 16) & 0xF``. Its 30 nibbles are the bytes
``xas1_frame[0x10 + 4 * row + g]`` (row 0..14), high nibble first; each decodes as
``v = int16(n << 12) >> shift + hist1 * c1 + hist2 * c2`` in float32, truncated toward
zero and clamped to int16. In a block, channel ``c``'s XAS1 frame ``i`` is at
``8 + (i * channels + c) * 0x4C``; the last XAS1 frame of a block may be partial.

Groups restart from their header, so every group of every XAS1 frame decodes independently:
the 30-step recursion runs once over all groups at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audio.codecs.blocks import CodedBlock
from audio.codecs.pcm import fit_length
from audio.core.errors import FormatError

__all__ = [
    "XAS1_FRAME_BYTES",
    "XAS1_FRAME_SAMPLES",
    "XAS_COEFS",
    "decode_xas1_frames",
    "encode_xas1_frames",
    "decode_xas1",
    "encode_xas1",
]

XAS1_FRAME_BYTES = 0x4C
XAS1_FRAME_SAMPLES = 128
XAS_COEFS = np.zeros((16, 2), np.float32)
XAS_COEFS[:4] = [(0.0, 0.0), (0.9375, 0.0), (1.796875, -0.8125), (1.53125, -0.859375)]
"""CD-XA predictor pairs (c1, c2) by coefficient index; indexes 4..15 are (0, 0)."""
_SHIFTS = np.arange(13)
"""Shifts the encoder tries (13..15 give steps below one LSB and never win)."""


def _predict(s: np.ndarray, h1: np.ndarray, h2: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """One decoder step in float32 exactly as the reference: ``(s + h1*c1) + h2*c2``, truncated, clamped."""
    v = s.astype(np.float32) + h1.astype(np.float32) * c1
    v = v + h2.astype(np.float32) * c2
    return np.clip(np.trunc(v), -32768, 32767).astype(np.int32)


def decode_xas1_frames(xas1_frames: np.ndarray) -> np.ndarray:
    """Decode ``(n, 0x4C)`` uint8 XAS1 frames to int16 ``(n, 128)`` samples.

    Parameters
    ----------
    xas1_frames:
        ``(n, 0x4C)`` uint8 XAS1 frames (one channel each).
    """
    xas1_frames = np.ascontiguousarray(xas1_frames, np.uint8).reshape(-1, XAS1_FRAME_BYTES)
    n = xas1_frames.shape[0]
    hdr = xas1_frames[:, :16].copy().view("<u4").astype(np.int64)  # (n, 4)
    idx = hdr & 0xF
    c1, c2 = XAS_COEFS[idx, 0], XAS_COEFS[idx, 1]
    h2 = (hdr & 0xFFF0).astype(np.uint16).view(np.int16).astype(np.int32)
    h1 = ((hdr >> 16) & 0xFFF0).astype(np.uint16).view(np.int16).astype(np.int32)
    shift = ((hdr >> 16) & 0xF).astype(np.int32)
    rows = xas1_frames[:, 16:].reshape(n, 15, 4).transpose(0, 2, 1).astype(np.int32)  # (n, group, row)
    nib = np.stack([rows >> 4, rows & 0xF], axis=-1).reshape(n, 4, 30)
    s = (((nib << 28) >> 16) >> shift[..., None]).astype(np.float32)  # int16(n << 12) >> shift
    out = np.empty((30 + 2, n, 4), np.float32)  # step-major: each step writes one contiguous slab
    out[0], out[1] = h2, h1
    f1, f2 = out[1], out[0]
    s = np.moveaxis(s, -1, 0).copy()
    for k in range(30):
        v = out[k + 2]
        np.multiply(f1, c1, out=v)
        np.add(s[k], v, out=v)  # (s + h1*c1) ...
        v += f2 * c2  # ... + h2*c2, float32 as the reference
        np.trunc(v, out=v)
        np.clip(v, -32768, 32767, out=v)
        f2, f1 = f1, v
    return out.transpose(1, 2, 0).astype(np.int16, order="C").reshape(n, XAS1_FRAME_SAMPLES)


def _quant_hist(x: np.ndarray) -> np.ndarray:
    """Nearest value with the low 4 bits clear, inside int16."""
    return np.clip(np.round(x / 16.0) * 16, -32768, 32752).astype(np.int32)


def encode_xas1_frames(pcm: np.ndarray) -> np.ndarray:
    """Encode int16 ``(n, 128)`` samples to ``(n, 0x4C)`` uint8 XAS1 frames.

    Closed loop per 32-sample group: every coefficient index (0..3) and shift (0..12) is
    simulated with the decoder's exact arithmetic, each nibble chosen nearest to the
    input given the reconstructed history; the pair with the least squared error wins.

    Parameters
    ----------
    pcm:
        int16 ``(n, 128)`` samples, one XAS1 frame of one channel per row.
    """
    x = np.asarray(pcm, np.int32).reshape(-1, 4, 32)
    n = x.shape[0]
    g = x.reshape(-1, 32)
    ng = g.shape[0]
    hq2, hq1 = _quant_hist(g[:, 0]), _quant_hist(g[:, 1])
    cand_idx = np.repeat(np.arange(4), len(_SHIFTS))
    cand_shift = np.tile(_SHIFTS, 4)
    c1 = np.broadcast_to(XAS_COEFS[cand_idx, 0], (ng, len(cand_idx)))
    c2 = np.broadcast_to(XAS_COEFS[cand_idx, 1], (ng, len(cand_idx)))
    step = (4096 >> cand_shift).astype(np.float64)
    h2 = np.broadcast_to(hq2[:, None], c1.shape).astype(np.int32)
    h1 = np.broadcast_to(hq1[:, None], c1.shape).astype(np.int32)
    err = np.zeros(c1.shape, np.float64)
    nibs = np.empty((30,) + c1.shape, np.int8)
    for k in range(30):
        target = g[:, k + 2][:, None].astype(np.float64)
        pred = h1 * c1.astype(np.float64) + h2 * c2.astype(np.float64)
        q = np.clip(np.round((target - pred) / step), -8, 7).astype(np.int32)
        v = _predict(((q << 28) >> 16) >> cand_shift, h1, h2, c1, c2)
        err += (target - v) ** 2
        nibs[k] = q
        h2, h1 = h1, v
    best = np.argmin(err, axis=1)
    sel = nibs[:, np.arange(ng), best].T.astype(np.int32) & 0xF  # (ng, 30)
    hdr = ((hq2 & 0xFFF0) | cand_idx[best] | (((hq1 & 0xFFF0) | cand_shift[best]) << 16)).astype(np.uint32)
    out = np.empty((n, XAS1_FRAME_BYTES), np.uint8)
    out[:, :16] = hdr.reshape(n, 4).astype("<u4").view(np.uint8).reshape(n, 16)
    packed = (sel[:, 0::2] << 4 | sel[:, 1::2]).reshape(n, 4, 15).transpose(0, 2, 1)  # (n, row, group)
    out[:, 16:] = packed.reshape(n, 60).astype(np.uint8)
    return out


def decode_xas1(
    blocks: Sequence[CodedBlock], channels: int, num_samples: int, *, path: str = "<buffer>"
) -> np.ndarray:
    """Decode XAS1 blocks to int16 ``(num_samples, channels)``.

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
    xas1_frames, kept = [], []
    for blk in blocks:
        nfr = -(-blk.samples // XAS1_FRAME_SAMPLES)
        need = nfr * XAS1_FRAME_BYTES * channels
        if need > len(blk.payload):
            raise FormatError(
                path, blk.offset, f"{need} bytes of XAS1 frames for {blk.samples} samples", len(blk.payload)
            )
        xas1_frames.append(blk.payload[:need])
        kept.append(blk.samples)
    stripped = b"".join(xas1_frames)  # every block's XAS1 frames, block headers cut out
    pcm = decode_xas1_frames(np.frombuffer(stripped, np.uint8).reshape(-1, XAS1_FRAME_BYTES))
    # (XAS1 frame, channel, 128) -> samples x channels
    pcm = pcm.reshape(-1, channels, XAS1_FRAME_SAMPLES).transpose(0, 2, 1).reshape(-1, channels)
    held = np.asarray(kept, np.int64)
    room = -(-held // XAS1_FRAME_SAMPLES) * XAS1_FRAME_SAMPLES
    if held.size and not np.array_equal(held[:-1], room[:-1]):  # a partial XAS1 frame before the end
        starts = np.repeat(np.cumsum(room) - room, held)
        pcm = pcm[starts + np.arange(held.sum()) - np.repeat(np.cumsum(held) - held, held)]
    else:
        pcm = pcm[: int(held.sum())]
    return fit_length(pcm, num_samples, path, "XAS1")


def encode_xas1(samples: np.ndarray, *, block_samples: int = 2048) -> list[tuple[int, bytes]]:
    """XAS1 ``(samples, payload)`` blocks from int16 ``(samples, channels)`` (or 1-D mono) samples
    (a container writes them, e.g. :func:`audio.containers.sns.write_blocks`).

    ``block_samples`` (a multiple of 128) samples per block; the last block is partial.

    Parameters
    ----------
    samples:
        int16 ``(samples, channels)`` or 1-D mono.
    block_samples:
        Samples per block (a multiple of 128).
    """
    if block_samples < XAS1_FRAME_SAMPLES or block_samples % XAS1_FRAME_SAMPLES:
        raise ValueError("block_samples must be a positive multiple of 128")
    arr = np.asarray(samples, np.int16)
    arr = arr if arr.ndim == 2 else arr.reshape(-1, 1)
    xas1_frames_total, channels = arr.shape
    nfr = -(-xas1_frames_total // XAS1_FRAME_SAMPLES)
    padded = np.zeros((nfr * XAS1_FRAME_SAMPLES, channels), np.int16)
    padded[:xas1_frames_total] = arr
    # (XAS1 frame, channel, 128) in block order: XAS1 frame i's channels are consecutive
    per = padded.reshape(nfr, XAS1_FRAME_SAMPLES, channels).transpose(0, 2, 1).reshape(-1, XAS1_FRAME_SAMPLES)
    enc = encode_xas1_frames(per).reshape(nfr, channels * XAS1_FRAME_BYTES)
    fpb = block_samples // XAS1_FRAME_SAMPLES
    payloads = []
    for b in range(0, nfr, fpb):
        samples_here = min(block_samples, xas1_frames_total - b * XAS1_FRAME_SAMPLES)
        payloads.append((samples_here, enc[b : b + fpb].tobytes()))
    return payloads or [(0, b"")]
