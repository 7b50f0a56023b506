"""Sony PS-ADPCM (SPU/SPU2 "VAG" ADPCM): decoder and closed-loop encoder, compiled with numba.

An ADPCM frame is 16 bytes and holds 28 samples. Byte 0: high nibble = filter (predictor) index,
low nibble = shift; byte 1 = flags; bytes 2..15: 28 signed 4-bit nibbles, low nibble first.
Each nibble decodes as ``s = int16(nibble << 12) >> shift`` and
``out = clamp16(s + (c1 * hist1 + c2 * hist2) / 64)`` with the filter pairs (c1, c2) of
:data:`COEFS` (1/64 units). History runs on across ADPCM frames (one channel).

What the spec leaves open is a :class:`PsxSettings` field; the defaults are what
pyvgmstream 0.1.1 does (measured: 0 differing samples on random ADPCM frames of every filter,
shift and flag):

``rounding``
    ``"vgmstream"`` (default): ``s + (int(c1*h1 + c2*h2) >> 6)`` with the products and their
    sum in float32, which is what pyvgmstream 0.1.1 computes (measured on random ADPCM frames; it
    equals ``"floor"`` unless ``|c*h| > 2**24``, i.e. after a clip with the raw history).
    ``"floor"``: the same in exact integers, the ``>> 6`` form of the spec. ``"trunc"``: the
    exact sum ``s + c1*h1/64 + c2*h2/64`` truncated toward zero (older vgmstream's
    double-math decoder). Floor and trunc differ by at most 1 LSB per step.
``history``
    ``"raw"`` (default, vgmstream 0.1.1): the history holds the sum before the 16-bit
    clamp. ``"clamped"``: it holds the clamped output. They differ only after a clip.
``bad_filter``
    Filter indexes 5..15 are not in the PS2 table. ``"vgmstream"`` (default): 5 predicts
    (30, 0), 6..15 predict (0, 0), as pyvgmstream 0.1.1 does. ``"zero"``: all (0, 0).
    ``"error"``: :class:`UnsupportedError`.
``bad_shift``
    Shifts 13..15 act as this shift: default 9 (vgmstream, after the Nocash PSX notes).
``mute_flag7``
    ADPCM frames whose flag byte is 7 or more decode as silence (their history too), as in
    vgmstream. Default True.
``stop_at_end``
    False (default, vgmstream): decode every ADPCM frame of the data. True: stop after the
    first ADPCM frame with an end mark (flag bit 0 set: 1, 3, 7), as the SPU does for a one-shot.

Flags the encoder writes (:data:`FLAG_END` etc.): 1 on the last ADPCM frame of a one-shot; with
a loop, 6 on its first ADPCM frame, 2 inside, 3 on its last ADPCM frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from audio.codecs.blocks import pcm16_to_float32
from audio.core.docs import share_parameters
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "COEFS",
    "FLAG_END",
    "FLAG_END_MUTE",
    "FLAG_LOOP_END",
    "FLAG_LOOP_REGION",
    "FLAG_LOOP_START",
    "FLAG_START",
    "ADPCM_FRAME_BYTES",
    "ADPCM_FRAME_SAMPLES",
    "VGMSTREAM",
    "PsxSettings",
    "decode_psadpcm",
    "decode_psadpcm_int16",
    "encode_adpcm_frames",
    "encode_psadpcm",
    "adpcm_frame_flags",
    "loop_points",
    "to_int16",
]

ADPCM_FRAME_BYTES = 16
ADPCM_FRAME_SAMPLES = 28
COEFS = np.array([(0, 0), (60, 0), (115, -52), (98, -55), (122, -60)], np.int64)
"""Filter pairs (c1, c2) in 1/64 units, by filter index 0..4."""
FLAG_END = 0x01  # end mark, ADPCM frame decoded
FLAG_LOOP_REGION = 0x02  # inside a loop
FLAG_LOOP_END = 0x03  # last ADPCM frame of a loop (end mark + repeat)
FLAG_START = 0x04  # start mark
FLAG_LOOP_START = 0x06  # first ADPCM frame of a loop
FLAG_END_MUTE = 0x07  # end mark, ADPCM frame decoded as silence
_ROUNDINGS = {"floor": 0, "trunc": 1, "vgmstream": 2}
_HISTORIES = ("raw", "clamped")
_BAD_FILTERS = ("vgmstream", "zero", "error")


@dataclass(frozen=True)
class PsxSettings:
    """Decoder choices the spec leaves open (module docstring); defaults match pyvgmstream 0.1.1."""

    rounding: str = "vgmstream"
    history: str = "raw"
    bad_filter: str = "vgmstream"
    bad_shift: int = 9
    mute_flag7: bool = True
    stop_at_end: bool = False

    def __post_init__(self) -> None:
        if self.rounding not in _ROUNDINGS:
            raise ValueError(f"rounding must be one of {sorted(_ROUNDINGS)}, not {self.rounding!r}")
        if self.history not in _HISTORIES:
            raise ValueError(f"history must be one of {_HISTORIES}, not {self.history!r}")
        if self.bad_filter not in _BAD_FILTERS:
            raise ValueError(f"bad_filter must be one of {_BAD_FILTERS}, not {self.bad_filter!r}")
        if not 0 <= self.bad_shift <= 12:
            raise ValueError(f"bad_shift must be 0..12, not {self.bad_shift!r}")

    @property
    def mode(self) -> int:
        """Rounding code for the kernels (0 floor, 1 trunc, 2 vgmstream)."""
        return _ROUNDINGS[self.rounding]

    @property
    def raw_history(self) -> bool:
        return self.history == "raw"

    def coef_table(self) -> np.ndarray:
        """(16, 2) int64 filter pairs by index, 5..15 as ``bad_filter`` says."""
        table = np.zeros((16, 2), np.int64)
        table[:5] = COEFS
        if self.bad_filter == "vgmstream":
            table[5] = (30, 0)
        return table

    def shift_table(self) -> np.ndarray:
        table = np.arange(16, dtype=np.int64)
        table[13:] = self.bad_shift
        return table


VGMSTREAM = PsxSettings()
"""The defaults: what pyvgmstream 0.1.1 decodes."""


@nb.njit(cache=True, nogil=True)
def _step(s: int, h1: int, h2: int, c1: int, c2: int, mode: int, raw_hist: bool) -> tuple[int, int]:
    """One decoder step: ``(clamp16(v), next hist1)``, ``v = s + (c1*h1 + c2*h2) / 64`` with the
    prediction floored (mode 0), the exact sum truncated (mode 1) or the prediction summed in
    float32 then floored (mode 2); the history is ``v`` when ``raw_hist``, else the output."""
    if mode == 0 or (mode == 2 and -65536 < h1 < 65536 and -65536 < h2 < 65536):
        v = s + ((c1 * h1 + c2 * h2) >> 6)  # mode 2 too: |c1*h1| + |c2*h2| < 2**24 is exact in float32
    elif mode == 1:
        p = (s << 6) + c1 * h1 + c2 * h2
        v = p >> 6 if p >= 0 else -((-p) >> 6)
    else:
        f = np.float32(np.float32(c1) * np.float32(h1)) + np.float32(np.float32(c2) * np.float32(h2))
        v = s + (int(f) >> 6)
    out = min(max(v, -32768), 32767)
    return out, (v if raw_hist else out)


@nb.njit(cache=True, nogil=True)
def _decode_adpcm_frames(adpcm_frames, coefs, shifts, mode, raw_hist, mute7, stop_at_end, out):
    """Decode ``(n, 16)`` uint8 ADPCM frames of one channel into int16 ``out``; returns how many decoded."""
    h1 = 0
    h2 = 0
    n = adpcm_frames.shape[0]
    for f in range(n):
        head = adpcm_frames[f, 0]
        c1 = coefs[head >> 4, 0]
        c2 = coefs[head >> 4, 1]
        shift = shifts[head & 0xF]
        flag = adpcm_frames[f, 1]
        mute = mute7 and flag >= 7
        base = f * 28
        for i in range(28):
            v = 0
            h = 0
            if not mute:
                byte = adpcm_frames[f, 2 + (i >> 1)]
                nib = np.int64((byte >> 4) if (i & 1) else (byte & 0xF))
                s = (((nib - 16) if nib >= 8 else nib) << 12) >> shift  # int16(nibble << 12) >> shift
                v, h = _step(s, h1, h2, c1, c2, mode, raw_hist)
            out[base + i] = v
            h2 = h1
            h1 = h
        if stop_at_end and (flag & 1):
            return f + 1
    return n


def _split_channels(data: bytes | memoryview, channels: int, interleave: int, path: str) -> list[np.ndarray]:
    """Per-channel ``(n, 16)`` ADPCM frames from ``channels`` interleaved blocks of ``interleave`` bytes."""
    if channels < 1:
        raise ValueError(f"channels must be >= 1, not {channels}")
    if interleave < ADPCM_FRAME_BYTES or interleave % ADPCM_FRAME_BYTES:
        raise ValueError(f"interleave must be a positive multiple of 16 bytes, not {interleave}")
    raw = np.frombuffer(data, np.uint8)
    if channels == 1:
        usable = raw.size // ADPCM_FRAME_BYTES * ADPCM_FRAME_BYTES
        return [raw[:usable].reshape(-1, ADPCM_FRAME_BYTES)]
    row = interleave * channels
    if raw.size % row:
        raise FormatError(
            path,
            raw.size - raw.size % row,
            f"whole rows of {channels} x {interleave}-byte interleave blocks",
            f"{raw.size % row} trailing bytes",
        )
    blocks = raw.reshape(-1, channels, interleave)
    return [np.ascontiguousarray(blocks[:, c, :]).reshape(-1, ADPCM_FRAME_BYTES) for c in range(channels)]


def _check_filters(adpcm_frames: np.ndarray, path: str, channel: int, interleave: int, channels: int) -> None:
    bad = np.flatnonzero((adpcm_frames[:, 0] >> 4) > 4)
    if bad.size:
        f = int(bad[0])
        per_block = interleave // ADPCM_FRAME_BYTES
        offset = ((f // per_block) * channels + channel) * interleave + (f % per_block) * ADPCM_FRAME_BYTES
        raise UnsupportedError(path, offset, "a PS-ADPCM filter index 0..4", int(adpcm_frames[f, 0] >> 4))


def decode_psadpcm_int16(
    data: bytes | memoryview,
    channels: int = 1,
    *,
    interleave: int = ADPCM_FRAME_BYTES,
    num_samples: int | None = None,
    settings: PsxSettings = VGMSTREAM,
    path: str = "<buffer>",
) -> np.ndarray:
    """Decode PS-ADPCM frames to int16 ``(samples, channels)``.

    ``channels`` > 1: blocks of ``interleave`` bytes per channel, in turn. Trailing bytes
    short of an ADPCM frame (mono) are ignored. ``num_samples`` cuts (never pads) the result.

    Parameters
    ----------
    data:
        PS-ADPCM data (16-byte ADPCM frames of 28 samples).
    channels:
        Channel count.
    interleave:
        Bytes per channel before the next channel's (interleaved data).
    num_samples:
        Samples to keep (``None``: every decoded one; never pads).
    settings:
        Decoder choices the spec leaves open (:class:`PsxSettings`; default: vgmstream's).
    path:
        Source name for error messages (file, or archive+member).
    """
    coefs, shifts = settings.coef_table(), settings.shift_table()
    decoded = []
    for c, adpcm_frames in enumerate(_split_channels(data, channels, interleave, path)):
        if settings.bad_filter == "error":
            _check_filters(adpcm_frames, path, c, interleave, channels)
        out = np.zeros(adpcm_frames.shape[0] * ADPCM_FRAME_SAMPLES, np.int16)
        used = _decode_adpcm_frames(
            adpcm_frames,
            coefs,
            shifts,
            settings.mode,
            settings.raw_history,
            settings.mute_flag7,
            settings.stop_at_end,
            out,
        )
        decoded.append(out[: used * ADPCM_FRAME_SAMPLES])
    n = min(len(d) for d in decoded)
    if num_samples is not None:
        n = min(n, max(0, int(num_samples)))
    return np.stack([d[:n] for d in decoded], axis=1)


@share_parameters(decode_psadpcm_int16)
def decode_psadpcm(
    data: bytes | memoryview,
    channels: int = 1,
    *,
    interleave: int = ADPCM_FRAME_BYTES,
    num_samples: int | None = None,
    settings: PsxSettings = VGMSTREAM,
    path: str = "<buffer>",
) -> np.ndarray:
    """Decode PS-ADPCM frames to float32 ``(samples, channels)`` in [-1, 1) (int16 / 32768).

    Arguments as :func:`decode_psadpcm_int16`.
    """
    pcm = decode_psadpcm_int16(
        data, channels, interleave=interleave, num_samples=num_samples, settings=settings, path=path
    )
    return pcm16_to_float32(pcm)


# ---------------------------------------------------------------------------------------------- encoder
@nb.njit(cache=True, nogil=True)
def _try_adpcm_frame(x, start, h1, h2, c1, c2, shift, mode, raw_hist, limit, nibs):
    """Simulate one ADPCM frame for (c1, c2, shift): per sample the nibble whose decoded value (the
    decoder's exact arithmetic) is nearest the input; returns (squared error, hist1, hist2),
    stopping early once the error passes ``limit``."""
    err = 0.0
    unit = 1 << (12 - shift)
    for i in range(28):
        target = x[start + i]
        q0 = int(np.floor((target - (c1 * h1 + c2 * h2) / 64.0) / unit + 0.5))
        q0 = min(max(q0, -8), 7)
        best_e = -1.0
        best_q = q0
        best_h = 0
        for q in (q0 - 1, q0, q0 + 1):
            if q < -8 or q > 7:
                continue
            v, h = _step(q * unit, h1, h2, c1, c2, mode, raw_hist)
            e = float(target - v) * float(target - v)
            if best_e < 0.0 or e < best_e:
                best_e, best_q, best_h = e, q, h
        err += best_e
        nibs[i] = best_q
        h2 = h1
        h1 = best_h
        if err > limit:
            break
    return err, h1, h2


@nb.njit(cache=True, nogil=True)
def _encode_channel(x, coefs, mode, raw_hist, out):
    """Encode int64 samples ``x`` (a multiple of 28 long) into ``out`` ``(n, 16)`` uint8, flags 0."""
    h1 = 0
    h2 = 0
    nibs = np.zeros(28, np.int64)
    best_nibs = np.zeros(28, np.int64)
    for f in range(out.shape[0]):
        best_err = 1e300
        best_filt = 0
        best_shift = 0
        best_h1 = 0
        best_h2 = 0
        for filt in range(5):
            for shift in range(13):
                err, n1, n2 = _try_adpcm_frame(
                    x, f * 28, h1, h2, coefs[filt, 0], coefs[filt, 1], shift, mode, raw_hist, best_err, nibs
                )
                if err < best_err:
                    best_err, best_filt, best_shift, best_h1, best_h2 = err, filt, shift, n1, n2
                    best_nibs[:] = nibs
        out[f, 0] = (best_filt << 4) | best_shift
        out[f, 1] = 0
        for i in range(14):
            out[f, 2 + i] = (best_nibs[2 * i] & 0xF) | ((best_nibs[2 * i + 1] & 0xF) << 4)
        h1 = best_h1
        h2 = best_h2


def to_int16(pcm: np.ndarray) -> np.ndarray:
    """int16 input unchanged; float input (full scale 1.0) scaled by 32768, rounded and clipped.

    Parameters
    ----------
    pcm:
        Float (full scale 1.0) or integer samples.
    """
    arr = np.asarray(pcm)
    if arr.dtype == np.int16:
        return arr
    if not np.issubdtype(arr.dtype, np.floating):
        return np.clip(arr, -32768, 32767).astype(np.int16)
    return np.clip(np.round(np.nan_to_num(arr.astype(np.float64)) * 32768.0), -32768, 32767).astype(np.int16)


def encode_adpcm_frames(samples: np.ndarray, *, settings: PsxSettings = VGMSTREAM) -> np.ndarray:
    """Encode one channel of int16 samples to ``(ceil(n / 28), 16)`` uint8 ADPCM frames, flags 0.

    Closed loop per ADPCM frame: every filter (0..4) and shift (0..12) is simulated with the
    decoder's exact arithmetic (``settings.rounding`` and ``history``), each nibble the one whose
    decoded value is nearest the input; the pair with the least squared error wins and
    its reconstructed history carries into the next ADPCM frame. Zero-padded to a whole ADPCM frame.

    Parameters
    ----------
    samples:
        One channel of int16 samples.
    settings:
        Rounding and history as the decoder will use them.
    """
    x = np.asarray(samples, np.int16).reshape(-1)
    nfr = -(-x.size // ADPCM_FRAME_SAMPLES)
    padded = np.zeros(nfr * ADPCM_FRAME_SAMPLES, np.int64)
    padded[: x.size] = x
    out = np.zeros((nfr, ADPCM_FRAME_BYTES), np.uint8)
    _encode_channel(padded, COEFS, settings.mode, settings.raw_history, out)
    return out


def _mark_flags(
    adpcm_frames: np.ndarray, loop_start: int | None, loop_end: int | None, end_flag: bool
) -> None:
    """Write the loop/end flags (byte 1) of one channel's ADPCM frames in place; loop points in samples."""
    n = adpcm_frames.shape[0]
    if loop_start is not None:
        last = n - 1 if loop_end is None else min(n - 1, max(0, -(-int(loop_end) // ADPCM_FRAME_SAMPLES) - 1))
        first = min(max(0, int(loop_start) // ADPCM_FRAME_SAMPLES), last)
        adpcm_frames[first : last + 1, 1] = FLAG_LOOP_REGION
        adpcm_frames[first, 1] = FLAG_LOOP_START
        adpcm_frames[last, 1] = FLAG_LOOP_END
    elif end_flag and n:
        adpcm_frames[n - 1, 1] = FLAG_END


def encode_psadpcm(
    pcm: np.ndarray,
    *,
    loop_start: int | None = None,
    loop_end: int | None = None,
    end_flag: bool = True,
    interleave: int = ADPCM_FRAME_BYTES,
    settings: PsxSettings = VGMSTREAM,
) -> bytes:
    """PS-ADPCM frames from ``pcm`` (float full scale 1.0, or int16; 1-D mono or ``(n, channels)``).

    Flags: without a loop the last ADPCM frame is marked end (1) when ``end_flag``; with
    ``loop_start`` (samples; ``loop_end`` exclusive, default the end) the ADPCM frames holding
    the loop get 6 (first), 2 (inside), 3 (last). Several channels are interleaved in
    blocks of ``interleave`` bytes, each channel zero-padded to whole blocks. The ADPCM frames
    are chosen for a decoder with ``settings`` (its rounding and history).

    Parameters
    ----------
    pcm:
        Float (full scale 1.0) or int16 samples, 1-D mono or ``(samples, channels)``.
    loop_start:
        First sample of the loop (``None``: no loop).
    loop_end:
        Sample after the loop's last (``None``: the end).
    end_flag:
        Mark the last ADPCM frame of a one-shot with the end flag (1).
    interleave:
        Bytes per channel block (multi-channel data).
    settings:
        Rounding and history as the decoder will use them.
    """
    arr = to_int16(pcm)
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    if interleave < ADPCM_FRAME_BYTES or interleave % ADPCM_FRAME_BYTES:
        raise ValueError(f"interleave must be a positive multiple of 16 bytes, not {interleave}")
    per = []
    for c in range(arr.shape[1]):
        adpcm_frames = encode_adpcm_frames(arr[:, c], settings=settings)
        _mark_flags(adpcm_frames, loop_start, loop_end, end_flag)
        per.append(adpcm_frames.reshape(-1))
    if arr.shape[1] == 1:
        return per[0].tobytes()
    size = -(-per[0].size // interleave) * interleave
    blocks = np.zeros((arr.shape[1], size), np.uint8)
    for c, body in enumerate(per):
        blocks[c, : body.size] = body
    return blocks.reshape(arr.shape[1], -1, interleave).transpose(1, 0, 2).tobytes()


def adpcm_frame_flags(data: bytes | memoryview) -> np.ndarray:
    """The flag byte of every whole 16-byte ADPCM frame (one channel).

    Parameters
    ----------
    data:
        PS-ADPCM data of one channel.
    """
    raw = np.frombuffer(data, np.uint8)
    return (
        raw[: raw.size // ADPCM_FRAME_BYTES * ADPCM_FRAME_BYTES].reshape(-1, ADPCM_FRAME_BYTES)[:, 1].copy()
    )


def loop_points(data: bytes | memoryview) -> tuple[int, int] | None:
    """``(start, end)`` in samples (end exclusive) from the first loop-start (6) ADPCM frame and the
    first loop-end (3) ADPCM frame at or after it; ``None`` without both marks.

    Parameters
    ----------
    data:
        PS-ADPCM data of one channel.
    """
    flags = adpcm_frame_flags(data)
    starts = np.flatnonzero(flags == FLAG_LOOP_START)
    if not starts.size:
        return None
    ends = np.flatnonzero(flags[starts[0] :] == FLAG_LOOP_END)
    if not ends.size:
        return None
    return int(starts[0]) * ADPCM_FRAME_SAMPLES, (int(starts[0]) + int(ends[0]) + 1) * ADPCM_FRAME_SAMPLES
