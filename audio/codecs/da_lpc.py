"""Digital Anvil LPC speech codec (Starlancer's ``.ut`` radio lines): bit-exact decoder and an encoder.

22,050 Hz mono in LPC frames of 432 samples (4 subframes of 108). The stream is read LSB-first; a
15-bit header (stepped, n, g, r) is followed by LPC frames: 12 reflection-coefficient level indices
(4 x 6 bits into the 64-entry level table, 8 x 5 bits into its entries 16..47), then per subframe
an 8-bit pitch lag, a 4-bit pitch gain in fifteenths, a 6-bit gain index, in stepped mode an
offset and an "alone" bit, and the pulses (a plain 1/2-bit code, or a two-context variable code
with runs and escapes when the first level index < ``coded_levels``). The excitation is
``gain x pulse + pitch gain x past excitation`` (``pitch`` here is the speech
model's long-term predictor, as in every LPC codec: a lag and a gain; barkbus's ``pitch``
parameter is a playback-rate ratio); reflection coefficients step a quarter of the way to
the LPC frame's over its first four 12-sample blocks, and a 12-pole all-pole filter makes the samples.

Every operation is IEEE float32 in the order of the spec (``starlancer-radio.md`` section 8), in
numba kernels with explicit ``float32`` values: the output is bit-identical to an f32 reference.
The codec knows no container (see ``audio.games.starlancer.formats.ut``).

The encoder (spec 8.11) analyses each LPC frame by Levinson-Durbin on a Hamming window, takes the
nearest levels, then per subframe searches the pitch lag/gain and all 64 gains x offset x alone for
the pulses with the least filtered squared error, running the decoder's own kernels for its state, so
its streams decode exactly to what it predicted. About 24 kbit/s; waveform SNR 4.6-6.4 dB on raw
espeak-ng lines (6-8 dB when they are low-passed near 6 kHz first).

State layout, as the game's: one float32 array ``st`` of 88 + 756 values, gains ``st[0:64]``,
reflection coefficients ``st[64:76]``, filter memory ``st[76:88]`` (``[76]`` = most recent
output), excitation history ``st[88:]`` (324 past + 432 this LPC frame). A pitch lag past the history's
start (q < 0) reads ``st[88 + q]``, i.e. the gains, coefficients and memory, as the game does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from audio.core.errors import FormatError

__all__ = [
    "LPC_FRAME_SAMPLES",
    "LEVELS",
    "MIN_LPC_FRAME_BITS",
    "SAMPLE_RATE",
    "SHIPPED_HEADER",
    "LPC_SUBFRAME_SAMPLES",
    "StreamHeader",
    "decode",
    "decode_float",
    "encode",
    "encode_lpc_frames",
    "lpc_frames_for",
    "gain_table",
    "read_header",
    "to_int16",
    "write_header_bits",
]

SAMPLE_RATE = 22050
LPC_FRAME_SAMPLES = 432
LPC_SUBFRAME_SAMPLES = 108
ORDER = 12
BLOCK = 12
HISTORY = 324
_H0 = 88
"""Index of the excitation history in the state array (after 64 gains, 12 coefficients, 12 memory)."""
_STATE_SIZE = _H0 + HISTORY + LPC_FRAME_SAMPLES
MIN_LPC_FRAME_BITS = 200
"""Fewest bits any LPC frame can take (stepped, variable code, one run per subframe): 64 + 4 x (20 + 14)."""

_LEVEL_HEX = (
    "00000000 b62c7fbf 12867dbf 7fdf7bbf eb387abf 479278bf b3eb76bf 0f4575bf 7c9e73bf e5456ebf 75ab67bf "
    "171161bf a7765abf 38dc53bf d9414dbf 69a746bf fa0c40bf 9b7239bf 2cd832bf bcae2bbf ee791ebf 0f4511bf "
    "411004bf e5b6edbe 274dd3be 8ae3b8be ee799ebe 521084be 274d53be ee791ebe 6a4dd3bd e44c53bd 00000000 "
    "e44c533d 6a4dd33d ee791e3e 274d533e 5210843e ee799e3e 8ae3b83e 274dd33e e5b6ed3e 4110043f 0f45113f "
    "ee791e3f bcae2b3f 2cd8323f 9b72393f fa0c403f 69a7463f d9414d3f 38dc533f a7765a3f 1711613f 75ab673f "
    "e5456e3f 7c9e733f 0f45753f b3eb763f 4792783f eb387a3f 7fdf7b3f 12867d3f b62c7f3f"
)
LEVELS = np.frombuffer(bytes.fromhex(_LEVEL_HEX.replace(" ", "")), "<f4").astype(np.float32)
"""The 64 reflection-coefficient levels (exact f32 bit patterns from the spec, 8.4)."""


def _f32_bits(hexbits: str) -> np.float32:
    return np.frombuffer(bytes.fromhex(hexbits)[::-1], "<f4")[0]


_PITCH_STEP = _f32_bits("3D888889")  # f32(1/15): pitch_gain = f32(pg) x this (a product, not pg / 15)
_W1, _W3, _W5 = _f32_bits("3F18EE49"), _f32_bits("BDEAAEFB"), _f32_bits("3C93B945")  # fill filter weights
_QUARTER = np.float32(0.25)
_HALF = np.float32(0.5)
_ONE = np.float32(1.0)
_PLAIN = np.float32(2.0)

# Variable pulse code (8.6): (code in read order, kind, value, next context); kind 0 value, 1 escape, 2 run.
_K_VALUE, _K_ESCAPE, _K_RUN = 0, 1, 2
_CODES = (
    [("00", 0, 0, 0), ("01", 0, -1, 0), ("10", 0, 1, 0)]
    + [(f"{'1' * mag}0{s}", 0, v, 1) for mag in (2, 3, 4, 5, 6) for s, v in (("0", -mag), ("1", mag))]
    + [("11111110", 1, 0, 1), ("11111111", 2, 0, 0)],
    [("00", 0, 0, 0), ("010", 0, -1, 0), ("011", 0, 1, 0), ("100", 0, -2, 1), ("101", 0, 2, 1)]
    + [
        (f"{'1' * m}0{s}", 0, v, 1)
        for m, mag in ((2, 3), (3, 4), (4, 5), (5, 6))
        for s, v in (("0", -mag), ("1", mag))
    ]
    + [("1111110", 1, 0, 1), ("1111111", 2, 0, 0)],
)


def _code_int(code: str) -> int:
    """A code written in read order as the integer whose low bits hold it (LSB = first bit read)."""
    return sum(1 << i for i, c in enumerate(code) if c == "1")


def _symbol_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per context, 256 entries looked up by ``peek8``: kind, value, length, next context."""
    kind = np.full((2, 256), -1, np.int64)
    value, length, nxt = (np.zeros((2, 256), np.int64) for _ in range(3))
    for ctx, codes in enumerate(_CODES):
        for code, k, v, n in codes:
            c, ln = _code_int(code), len(code)
            for b in range(256):
                if b & ((1 << ln) - 1) == c:
                    kind[ctx, b], value[ctx, b], length[ctx, b], nxt[ctx, b] = k, v, ln, n
    assert (kind >= 0).all(), "both contexts are complete prefix codes"
    return kind, value, length, nxt


_SYM_KIND, _SYM_VALUE, _SYM_LEN, _SYM_NEXT = _symbol_tables()


@dataclass(frozen=True)
class StreamHeader:
    """The 15-bit stream header: ``stepped`` (pulses on every other sample), ``n`` (coded_levels =
    32 - n), ``g`` (first gain (g + 1) x 8), ``r`` (gain ratio r x 0.001 + 1.04)."""

    stepped: bool
    n: int
    g: int
    r: int

    @property
    def coded_levels(self) -> int:
        """An LPC frame whose first level index is below this uses the variable pulse code."""
        return 32 - self.n

    def bits(self) -> int:
        """The header as a 15-bit LSB-first integer (stepped in bit 0)."""
        return int(self.stepped) | (self.n & 15) << 1 | (self.g & 15) << 5 | (self.r & 63) << 9


SHIPPED_HEADER = StreamHeader(True, 8, 7, 28)
"""The header of every shipped file (stream bytes ``F1 38``)."""


def read_header(stream: bytes) -> StreamHeader:
    """The header from the stream's first 15 bits (bytes past the end read as zero).

    Parameters
    ----------
    stream:
        The unscrambled codec stream.
    """
    v = int.from_bytes(bytes(stream[:2]).ljust(2, b"\0"), "little")
    return StreamHeader(bool(v & 1), (v >> 1) & 15, (v >> 5) & 15, (v >> 9) & 63)


def write_header_bits(header: StreamHeader) -> bytes:
    """The two bytes holding the header (bit 15 zero); LPC frames start at bit 15, so an encoder shares the
    second byte with the first LPC frame.

    Parameters
    ----------
    header:
        The stream header.
    """
    return header.bits().to_bytes(2, "little")


def gain_table(header: StreamHeader) -> np.ndarray:
    """The 64 gains in float32: ``G[0] = f32(g + 1) x 8``, ``G[i] = f32(rho x G[i-1])`` one step at a time,
    ``rho = f32(r) x 0.001f + 1.04f``.

    Parameters
    ----------
    header:
        The stream header (its ``g`` and ``r``).
    """
    g = np.zeros(64, np.float32)
    g[0] = np.float32(header.g + 1) * np.float32(8.0)
    rho = np.float32(header.r) * _f32_bits("3A83126F") + _f32_bits("3F851EB8")
    for i in range(1, 64):
        g[i] = rho * g[i - 1]
    return g


def lpc_frames_for(num_samples: int) -> int:
    """LPC frames needed for ``num_samples`` samples: ceil(num_samples / 432).

    Parameters
    ----------
    num_samples:
        Samples (22,050 Hz).
    """
    return -(-max(num_samples, 0) // LPC_FRAME_SAMPLES)


# ------------------------------------------------------------------------------------------- kernels
_FLAGS: Any = {"cache": True, "nogil": True, "fastmath": False, "boundscheck": False}


@nb.njit(**_FLAGS)
def _skip(data, bs, n):
    """Drop ``n`` (<= 8) bits; below 8 held, take the next byte (0 past the end). bs = held, count, next."""
    bs[0] >>= n
    bs[1] -= n
    if bs[1] < 8:
        nxt = bs[2]
        byte = np.int64(data[nxt]) if nxt < data.size else np.int64(0)
        bs[0] |= byte << bs[1]
        bs[2] = nxt + 1
        bs[1] += 8


@nb.njit(**_FLAGS)
def _read(data, bs, n):
    """The next ``n`` (<= 8) bits, LSB-first."""
    v = bs[0] & ((np.int64(1) << n) - 1)
    _skip(data, bs, n)
    return v


@nb.njit(**_FLAGS)
def _read_pulses(data, bs, coded, xb, offset, step, kind, value, length, nxt):
    """One subframe's pulses into ``xb[5 + offset + at]`` for at = 0, step, ... < 108 (xb has 5 slots of
    padding each side)."""
    at = 0
    base = 5 + offset
    if not coded:
        while at < LPC_SUBFRAME_SAMPLES:
            h = bs[0] & 3
            if h == 1:
                xb[base + at] = -_PLAIN
                _skip(data, bs, 2)
            elif h == 3:
                xb[base + at] = _PLAIN
                _skip(data, bs, 2)
            else:
                xb[base + at] = np.float32(0.0)
                _skip(data, bs, 1)
            at += step
        return
    ctx = 0
    while at < LPC_SUBFRAME_SAMPLES:
        b = bs[0] & 0xFF
        k = kind[ctx, b]
        _skip(data, bs, length[ctx, b])
        v = value[ctx, b]
        ctx = nxt[ctx, b]
        if k == _K_RUN:
            run = _read(data, bs, 6) + 7
            if run * step + at > LPC_SUBFRAME_SAMPLES:
                run = (LPC_SUBFRAME_SAMPLES - at) // step
            for _ in range(run):
                xb[base + at] = np.float32(0.0)
                at += step
            continue
        if k == _K_ESCAPE:
            v = 7
            if _read(data, bs, 1) == 1:
                v = 8
                while _read(data, bs, 1) == 1:
                    v += 1
            if _read(data, bs, 1) == 0:
                v = -v
        xb[base + at] = np.float32(v)
        at += step


@nb.njit(**_FLAGS)
def _fill(xb, other):
    """Stepped, alone = 0: fill positions other, other + 2, ... < 108 from the pulses 1, 3, 5 away."""
    j = other
    while j < LPC_SUBFRAME_SAMPLES:
        c = j + 5
        t5 = (xb[c - 5] + xb[c + 5]) * _W5
        t3 = (xb[c - 3] + xb[c + 3]) * _W3
        t1 = (xb[c - 1] + xb[c + 1]) * _W1
        xb[c] = (t5 + t3) + t1
        j += 2


@nb.njit(**_FLAGS)
def _build_lpc_subframe(st, s, lag, pg, gi, stepped, offset, alone, xb):
    """Excitation of subframe ``s`` into the history from the pulses in ``xb`` (fill applied here):
    ``H[p] = f32(gain x x[i]) + f32(pitch_gain x source)``."""
    pitch_gain = np.float32(pg) * _PITCH_STEP
    gain = st[gi]
    if stepped:
        if alone:
            j = 1 - offset
            while j < LPC_SUBFRAME_SAMPLES:
                xb[5 + j] = np.float32(0.0)
                j += 2
        else:
            for j in range(5):
                xb[j] = np.float32(0.0)
                xb[5 + LPC_SUBFRAME_SAMPLES + j] = np.float32(0.0)
            _fill(xb, 1 - offset)
            gain = gain * _HALF
    out = _H0 + HISTORY + LPC_SUBFRAME_SAMPLES * s
    src = _H0 + HISTORY - LPC_SUBFRAME_SAMPLES + LPC_SUBFRAME_SAMPLES * s - lag
    for i in range(LPC_SUBFRAME_SAMPLES):
        st[out + i] = gain * xb[5 + i] + pitch_gain * st[src + i]


@nb.njit(**_FLAGS)
def _weights(r, w, lat, resp):
    """Direct-form weights ``w`` from reflection coefficients ``r`` (lattice impulse response, 8.8)."""
    lat[0] = _ONE
    for m in range(ORDER - 1):
        lat[m + 1] = r[m]
    for n in range(ORDER):
        s = -(lat[ORDER - 1] * r[ORDER - 1])
        for m in range(ORDER - 2, -1, -1):
            s = s - r[m] * lat[m]
            lat[m + 1] = s * r[m] + lat[m]
        lat[0] = s
        resp[n] = s
        for i in range(n):
            s = s - resp[n - 1 - i] * w[i]
        w[n] = s


@nb.njit(**_FLAGS)
def _lpc_frame_weights(st, steps, wsets, lat, resp):
    """Add the steps to R four times (kept summed), the weights after each addition into ``wsets[0..3]``."""
    for b in range(4):
        for k in range(ORDER):
            st[64 + k] = st[64 + k] + steps[k]
        _weights(st[64:76], wsets[b], lat, resp)


@nb.njit(**_FLAGS)
def _synth(exc, n0, n, wsets, mem, out):
    """All-pole filter of ``exc[0:n]`` (LPC frame positions n0..n0+n-1; block b uses wsets[min(b, 3)]) with
    memory ``mem`` (mem[0] newest), into ``out[0:n]``."""
    for t in range(n):
        w = wsets[min((n0 + t) // BLOCK, 3)]
        y = exc[t]
        for j in range(ORDER):
            y = y + w[j] * mem[j]
        for j in range(ORDER - 1, 0, -1):
            mem[j] = mem[j - 1]
        mem[0] = y
        out[t] = y


@nb.njit(**_FLAGS)
def _finish(st, steps, wsets, lat, resp, out):
    """End of an LPC frame: keep the last 324 excitation samples, step R, synthesise 432 samples into out."""
    _lpc_frame_weights(st, steps, wsets, lat, resp)
    _synth(st[_H0 + HISTORY :], 0, LPC_FRAME_SAMPLES, wsets, st[76:88], out)
    st[_H0 : _H0 + HISTORY] = st[_H0 + LPC_FRAME_SAMPLES :].copy()


@nb.njit(**_FLAGS)
def _read_steps(data, bs, st, levels, steps):
    """The 12 level indices; ``steps[k] = (L_new[k] - R[k]) x 0.25``. Returns the first index."""
    first = 0
    for k in range(ORDER):
        idx = _read(data, bs, 6) if k < 4 else 16 + _read(data, bs, 5)
        if k == 0:
            first = idx
        steps[k] = (levels[idx] - st[64 + k]) * _QUARTER
    return first


@nb.njit(**_FLAGS)
def _decode_kernel(data, n_lpc_frames, stepped, coded_levels, gains, levels, kind, value, length, nxt, out):
    """Decode ``n_lpc_frames`` LPC frames of the stream ``data`` (header included) into float32 ``out``."""
    bs = np.zeros(3, np.int64)
    bs[0] = np.int64(data[0]) if data.size > 0 else np.int64(0)
    bs[1] = 8
    bs[2] = 1
    for n in (1, 4, 4, 6):
        _read(data, bs, n)
    st = np.zeros(_STATE_SIZE, np.float32)
    st[0:64] = gains
    steps = np.zeros(ORDER, np.float32)
    wsets = np.zeros((4, ORDER), np.float32)
    lat = np.zeros(ORDER, np.float32)
    resp = np.zeros(ORDER, np.float32)
    xb = np.zeros(LPC_SUBFRAME_SAMPLES + 10, np.float32)
    for f in range(n_lpc_frames):
        coded = _read_steps(data, bs, st, levels, steps) < coded_levels
        for s in range(4):
            lag = _read(data, bs, 8)
            pg = _read(data, bs, 4)
            gi = _read(data, bs, 6)
            offset, alone = 0, 1
            if stepped:
                offset = _read(data, bs, 1)
                alone = _read(data, bs, 1)
            _read_pulses(data, bs, coded, xb, offset, 2 if stepped else 1, kind, value, length, nxt)
            _build_lpc_subframe(st, s, lag, pg, gi, stepped, offset, alone, xb)
        _finish(st, steps, wsets, lat, resp, out[f * LPC_FRAME_SAMPLES : (f + 1) * LPC_FRAME_SAMPLES])


# ------------------------------------------------------------------------------------------- decoder
def decode_float(stream: bytes, num_samples: int) -> np.ndarray:
    """Decode an (unscrambled) codec stream to exactly ``num_samples`` float32 samples, before rounding
    (16-bit scale). Bits past the stream's end read as zero.

    Parameters
    ----------
    stream:
        The unscrambled codec stream, header included.
    num_samples:
        Samples to decode (22,050 Hz).
    """
    if num_samples < 0:
        raise FormatError(None, None, "a sample count >= 0", num_samples)
    header = read_header(stream)
    n_lpc_frames = lpc_frames_for(num_samples)
    out = np.zeros(n_lpc_frames * LPC_FRAME_SAMPLES, np.float32)
    if n_lpc_frames:
        data = np.frombuffer(bytes(stream), np.uint8)
        _decode_kernel(
            data,
            n_lpc_frames,
            header.stepped,
            header.coded_levels,
            gain_table(header),
            LEVELS,
            _SYM_KIND,
            _SYM_VALUE,
            _SYM_LEN,
            _SYM_NEXT,
            out,
        )
    return out[:num_samples]


def to_int16(y: np.ndarray, *, wrap17: bool = False) -> np.ndarray:
    """float32 samples to int16 as the game's player: round to nearest, ties to even; NaN -> -32768;
    held to -32768..32767. ``wrap17`` (faithful to a game bug, off by default): the game reads 17 bits,
    so values wrap modulo 2^17 before the hold.

    Parameters
    ----------
    y:
        float32 samples, int16 scale.
    wrap17:
        Wrap at 17 bits as the game's player does (a game bug; default off).
    """
    y = np.asarray(y, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.rint(y.astype(np.float64))
        nan = np.isnan(r)
        r = np.where(nan, -32768.0, np.clip(r, -(2.0**40), 2.0**40))
        v = r.astype(np.int64)
        if wrap17:
            v = ((v + 65536) & 0x1FFFF) - 65536
            v[nan] = -32768
    return np.clip(v, -32768, 32767).astype(np.int16)


def decode(stream: bytes, num_samples: int, *, wrap17: bool = False) -> np.ndarray:
    """Decode an (unscrambled) codec stream to ``num_samples`` int16 samples at 22,050 Hz.

    Parameters
    ----------
    stream:
        The unscrambled codec stream, header included.
    num_samples:
        Samples to decode (22,050 Hz).
    wrap17:
        Wrap at 17 bits as the game's player does (a game bug; default off).
    """
    return to_int16(decode_float(stream, num_samples), wrap17=wrap17)


# ------------------------------------------------------------------------------------------- encoder
def _encoder_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per context, slots v + 6 for values -6..6, 13 escape, 14 run: code (LSB = first bit), length, next."""
    code, length, nxt = (np.zeros((2, 15), np.int64) for _ in range(3))
    for ctx, codes in enumerate(_CODES):
        for text, k, v, n in codes:
            slot = v + 6 if k == _K_VALUE else (13 if k == _K_ESCAPE else 14)
            code[ctx, slot], length[ctx, slot], nxt[ctx, slot] = _code_int(text), len(text), n
    return code, length, nxt


_ENC_CODE, _ENC_LEN, _ENC_NEXT = _encoder_tables()


@nb.njit(**_FLAGS)
def _put(out, pos, value, n):
    """Write ``n`` bits of ``value`` LSB-first at bit ``pos`` of the zeroed byte array ``out``."""
    for i in range(n):
        if (value >> i) & 1:
            out[(pos + i) >> 3] |= np.uint8(1 << ((pos + i) & 7))
    return pos + n


@nb.njit(**_FLAGS)
def _lpc_indices(x, levels, idx):
    """Level indices of one LPC frame: Hamming window, autocorrelation 0..12 (f64), r0 x 1.0001 + 0.001,
    Levinson-Durbin (|k| <= 0.999), decoder coefficient = -k, nearest level (ties to the lower index)."""
    n = LPC_FRAME_SAMPLES
    xw = np.empty(n)
    for i in range(n):
        xw[i] = x[i] * (0.54 - 0.46 * np.cos(2.0 * np.pi * i / (n - 1)))
    r = np.zeros(ORDER + 1)
    for k in range(ORDER + 1):
        acc = 0.0
        for i in range(n - k):
            acc += xw[i] * xw[i + k]
        r[k] = acc
    r[0] = r[0] * 1.0001 + 0.001
    a = np.zeros(ORDER + 1)
    tmp = np.zeros(ORDER + 1)
    e = r[0]
    for i in range(1, ORDER + 1):
        acc = r[i]
        for j in range(1, i):
            acc -= a[j] * r[i - j]
        k = min(max(acc / e, -0.999), 0.999)
        tmp[:] = a
        a[i] = k
        for j in range(1, i):
            a[j] = tmp[j] - k * tmp[i - j]
        e *= 1.0 - k * k
        v = -k
        lo, hi = (0, 64) if i <= 4 else (16, 48)
        best, bd = lo, 1e30
        for c in range(lo, hi):
            d = abs(np.float64(levels[c]) - v)
            if d < bd:
                best, bd = c, d
        idx[i - 1] = best


@nb.njit(**_FLAGS)
def _filt(inp, n0, n, wsets, mem0, out):
    """f64 all-pole filter (analysis only) of inp[0:n] at LPC frame positions n0.., from memory ``mem0``."""
    mem = mem0.copy()
    for t in range(n):
        w = wsets[min((n0 + t) // BLOCK, 3)]
        y = inp[t]
        for j in range(ORDER):
            y += w[j] * mem[j]
        for j in range(ORDER - 1, 0, -1):
            mem[j] = mem[j - 1]
        mem[0] = y
        out[t] = y


@nb.njit(**_FLAGS)
def _pitch_search(st, s, target, wsets, zero, cand):
    """Best (lag, pg) by 2 g cross - g^2 energy over lags 0..min(255, 216 + 108 s) (q >= 0 only)."""
    n0 = LPC_SUBFRAME_SAMPLES * s
    best_lag, best_pg, best = 0, 0, 0.0
    for lag in range(min(255, HISTORY - LPC_SUBFRAME_SAMPLES + n0) + 1):
        src = _H0 + HISTORY - LPC_SUBFRAME_SAMPLES + n0 - lag
        _filt(
            st[src : src + LPC_SUBFRAME_SAMPLES].astype(np.float64),
            n0,
            LPC_SUBFRAME_SAMPLES,
            wsets,
            zero,
            cand,
        )
        cross = np.dot(target, cand)
        energy = np.dot(cand, cand)
        if cross <= 0.0 or energy <= 0.0:
            continue
        pg = min(max(int(np.floor(cross / energy * 15.0 + 0.5)), 0), 15)
        g = np.float64(np.float32(pg) * _PITCH_STEP)
        score = 2.0 * g * cross - g * g * energy
        if score > best:
            best_lag, best_pg, best = lag, pg, score
    return best_lag, best_pg


@nb.njit(**_FLAGS)
def _quantise(v, coded):
    """A pulse from residual / gain: plain code -2/0/+2 (threshold 1), variable code round, +-40."""
    if not coded:
        return 2 if v > 1.0 else (-2 if v < -1.0 else 0)
    return min(max(int(np.floor(v + 0.5)), -40), 40)


@nb.njit(**_FLAGS)
def _try_pulses(e, t2, n0, gain, offset, step, alone, coded, wsets, zero, xb, ex, fz, pulses):
    """Squared error of one (gain, offset, alone) choice; its pulses into ``pulses`` (f64 analysis)."""
    xb[:] = 0.0
    pulses[:] = 0
    for p in range(offset, LPC_SUBFRAME_SAMPLES, step):
        q = _quantise(e[p] / gain, coded)
        pulses[p] = q
        xb[5 + p] = q
    if step == 2 and not alone:
        for j in range(1 - offset, LPC_SUBFRAME_SAMPLES, 2):
            c = j + 5
            xb[c] = ((xb[c - 5] + xb[c + 5]) * _W5 + (xb[c - 3] + xb[c + 3]) * _W3) + (
                xb[c - 1] + xb[c + 1]
            ) * _W1
    for i in range(LPC_SUBFRAME_SAMPLES):
        ex[i] = gain * xb[5 + i]
    _filt(ex, n0, LPC_SUBFRAME_SAMPLES, wsets, zero, fz)
    err = 0.0
    for i in range(LPC_SUBFRAME_SAMPLES):
        d = t2[i] - fz[i]
        err += d * d
    return err


@nb.njit(**_FLAGS)
def _write_pulses(out, pos, pulses, offset, step, coded, code, length, nxt):
    """A subframe's pulses in the plain code or the variable code (runs of >= 7 zeros, escapes >= 7)."""
    if not coded:
        for p in range(offset, LPC_SUBFRAME_SAMPLES, step):
            v = pulses[p]
            pos = _put(out, pos, 0, 1) if v == 0 else _put(out, pos, 3 if v > 0 else 1, 2)
        return pos
    ctx = 0
    p = offset
    while p < LPC_SUBFRAME_SAMPLES:
        v = pulses[p]
        if v == 0:
            z = 0
            while p + z * step < LPC_SUBFRAME_SAMPLES and pulses[p + z * step] == 0:
                z += 1
            if z >= 7:
                run = min(z, 70)
                pos = _put(out, pos, code[ctx, 14], length[ctx, 14])
                pos = _put(out, pos, run - 7, 6)
                ctx = nxt[ctx, 14]
                p += run * step
                continue
        m = abs(v)
        if m <= 6:
            pos = _put(out, pos, code[ctx, v + 6], length[ctx, v + 6])
            ctx = nxt[ctx, v + 6]
        else:
            pos = _put(out, pos, code[ctx, 13], length[ctx, 13])
            ctx = nxt[ctx, 13]
            if m == 7:
                pos = _put(out, pos, 0, 1)
            else:
                for _ in range(m - 7):
                    pos = _put(out, pos, 1, 1)
                pos = _put(out, pos, 0, 1)
            pos = _put(out, pos, 1 if v > 0 else 0, 1)
        p += step
    return pos


@nb.njit(**_FLAGS)
def _encode_lpc_subframe(st, s, target, wsets, stepped, coded, sub, pulses):
    """Choose subframe s's lag, pitch gain, gain, offset, alone and pulses (``sub`` = the five fields)."""
    zero = np.zeros(ORDER)
    n = LPC_SUBFRAME_SAMPLES
    n0 = n * s
    cand, fp, t2, e = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    lag, pg = _pitch_search(st, s, target, wsets, zero, cand)
    pitch_gain = np.float32(pg) * _PITCH_STEP
    src = _H0 + HISTORY - n + n0 - lag
    for i in range(n):
        cand[i] = np.float64(pitch_gain * st[src + i])
    _filt(cand, n0, n, wsets, zero, fp)
    for i in range(n):
        t2[i] = target[i] - fp[i]
    for t in range(n):  # residual through the inverse filter, zero state
        w = wsets[min((n0 + t) // BLOCK, 3)]
        acc = t2[t]
        for j in range(min(ORDER, t)):
            acc -= w[j] * t2[t - 1 - j]
        e[t] = acc
    xb, ex, fz = np.zeros(n + 10), np.empty(n), np.empty(n)
    trial = np.zeros(n, np.int64)
    best = 1e300
    step = 2 if stepped else 1
    for gi in range(64):
        for offset in range(step):
            for alone in range(1, -1 if stepped else 0, -1):
                gain = np.float64(st[gi]) * (1.0 if alone else 0.5)
                err = _try_pulses(e, t2, n0, gain, offset, step, alone, coded, wsets, zero, xb, ex, fz, trial)
                if err < best:
                    best = err
                    sub[0], sub[1], sub[2], sub[3], sub[4] = lag, pg, gi, offset, alone
                    pulses[:] = trial
    if not stepped:
        sub[3], sub[4] = 0, 1


@nb.njit(**_FLAGS)
def _encode_lpc_frame(st, x, stepped, coded_levels, levels, idx, subs, pulses, steps, wsets, lat, resp, y):
    """Analyse one LPC frame (432 f64 samples, int16 scale), update ``st`` exactly as a decoder would and
    leave the decoded LPC frame in ``y``."""
    _lpc_indices(x, levels, idx)
    for k in range(ORDER):
        steps[k] = (levels[idx[k]] - st[64 + k]) * _QUARTER
    rtmp = st[64:76].copy()
    for b in range(4):
        for k in range(ORDER):
            rtmp[k] = rtmp[k] + steps[k]
        _weights(rtmp, wsets[b], lat, resp)
    w64 = wsets.astype(np.float64)
    coded = idx[0] < coded_levels
    mem = st[76:88].copy()
    zeros, zir, target = (
        np.zeros(LPC_SUBFRAME_SAMPLES),
        np.empty(LPC_SUBFRAME_SAMPLES),
        np.empty(LPC_SUBFRAME_SAMPLES),
    )
    xb = np.zeros(LPC_SUBFRAME_SAMPLES + 10, np.float32)
    sy = np.empty(LPC_SUBFRAME_SAMPLES, np.float32)
    for s in range(4):
        n0 = LPC_SUBFRAME_SAMPLES * s
        _filt(zeros, n0, LPC_SUBFRAME_SAMPLES, w64, mem.astype(np.float64), zir)
        for i in range(LPC_SUBFRAME_SAMPLES):
            target[i] = x[n0 + i] - zir[i]
        _encode_lpc_subframe(st, s, target, w64, stepped, coded, subs[s], pulses[s])
        xb[:] = 0.0
        for i in range(LPC_SUBFRAME_SAMPLES):
            xb[5 + i] = np.float32(pulses[s, i])
        sub = subs[s]
        _build_lpc_subframe(st, s, sub[0], sub[1], sub[2], stepped, sub[3], sub[4], xb)
        _synth(st[_H0 + HISTORY + n0 :], n0, LPC_SUBFRAME_SAMPLES, wsets, mem, sy)
    _finish(st, steps, wsets, lat, resp, y)
    return coded


@nb.njit(**_FLAGS)
def _encode_kernel(x, n_lpc_frames, stepped, coded_levels, gains, levels, code, length, nxt, out, pos, y):
    """Encode ``n_lpc_frames`` LPC frames of ``x`` into the zeroed byte array ``out`` from bit ``pos``;
    returns the bit count. ``y`` receives the decoded samples."""
    st = np.zeros(_STATE_SIZE, np.float32)
    st[0:64] = gains
    idx = np.zeros(ORDER, np.int64)
    subs = np.zeros((4, 5), np.int64)
    pulses = np.zeros((4, LPC_SUBFRAME_SAMPLES), np.int64)
    steps = np.zeros(ORDER, np.float32)
    wsets = np.zeros((4, ORDER), np.float32)
    lat, resp = np.zeros(ORDER, np.float32), np.zeros(ORDER, np.float32)
    step = 2 if stepped else 1
    for f in range(n_lpc_frames):
        f0 = f * LPC_FRAME_SAMPLES
        coded = _encode_lpc_frame(
            st,
            x[f0 : f0 + LPC_FRAME_SAMPLES],
            stepped,
            coded_levels,
            levels,
            idx,
            subs,
            pulses,
            steps,
            wsets,
            lat,
            resp,
            y[f0 : f0 + LPC_FRAME_SAMPLES],
        )
        for k in range(ORDER):
            pos = _put(out, pos, idx[k], 6) if k < 4 else _put(out, pos, idx[k] - 16, 5)
        for s in range(4):
            pos = _put(out, pos, subs[s, 0], 8)
            pos = _put(out, pos, subs[s, 1], 4)
            pos = _put(out, pos, subs[s, 2], 6)
            if stepped:
                pos = _put(out, pos, subs[s, 3], 1)
                pos = _put(out, pos, subs[s, 4], 1)
            pos = _write_pulses(out, pos, pulses[s], subs[s, 3], step, coded, code, length, nxt)
    return pos


def encode_lpc_frames(pcm16: np.ndarray, header: StreamHeader = SHIPPED_HEADER) -> tuple[bytes, np.ndarray]:
    """Encode mono samples (int16 scale, 22,050 Hz) by analysis by synthesis; returns the codec stream and
    the float32 samples a decoder makes from it (the encoder runs the decoder's own state).

    Parameters
    ----------
    pcm16:
        Mono samples at 22,050 Hz, int16 scale (float or int).
    header:
        The stream header (default: the shipped files' ``F1 38``).
    """
    x = np.asarray(pcm16, np.float64).reshape(-1)
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    n = x.size
    n_lpc_frames = lpc_frames_for(n)
    xp = np.zeros(n_lpc_frames * LPC_FRAME_SAMPLES)
    xp[:n] = np.clip(x, -32768.0, 32767.0)
    out = np.zeros(2 + n_lpc_frames * (64 + 4 * (20 + 108 * 44)) // 8 + 8, np.uint8)
    out[:2] = np.frombuffer(write_header_bits(header), np.uint8)
    y = np.zeros(n_lpc_frames * LPC_FRAME_SAMPLES, np.float32)
    nbits = _encode_kernel(
        xp,
        n_lpc_frames,
        header.stepped,
        header.coded_levels,
        gain_table(header),
        LEVELS,
        _ENC_CODE,
        _ENC_LEN,
        _ENC_NEXT,
        out,
        15,
        y,
    )
    return out[: (nbits + 7) // 8].tobytes(), y[:n]


def encode(pcm16: np.ndarray, header: StreamHeader = SHIPPED_HEADER) -> bytes:
    """Encode mono samples (int16 scale, 22,050 Hz) to a codec stream (spec 8.11): per LPC frame
    Levinson-Durbin levels, then per subframe the pitch lag/gain and the gain/offset/alone/pulses that
    minimise the filtered squared error, against the decoder's own state. Decode with
    ``num_samples = len(pcm16)``.

    Parameters
    ----------
    pcm16:
        Mono samples at 22,050 Hz, int16 scale (float or int).
    header:
        The stream header (default: the shipped files' ``F1 38``).
    """
    return encode_lpc_frames(pcm16, header)[0]
