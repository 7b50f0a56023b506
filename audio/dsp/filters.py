"""The voice chain's filters in single precision, step by step as the game computes them.

Retail analysis (spec 5.4): parameters are float32; the angle is
``w = f32(f32(fc / sample_rate) * f32(2*pi))`` (``fc`` rounded to float32 when it is set, so
``fc / sample_rate`` is one float32 division; ``sample_rate`` = the engine's sample rate, Hz);
``s = f32(sin w)``, ``c = f32(cos w)`` (trig in double, rounded once); every other step is one
float32 operation.
``b``/``a`` are normalised so ``a0 == 1``; the kernel (:mod:`audio.dsp.kernels`) stores
``b0, b1, b2, a1, a2``.

* HI20 / LI20 (RBJ at Q = 1): ``alpha = 0.5*s``, ``a0 = 1 + alpha``, ``inv = 1/a0``,
  ``a1 = (-2*c)*inv``, ``a2 = (1 - alpha)*inv``, ``n = 1 - c`` (LPF) / ``1 + c`` (HPF),
  ``b0 = n/(2*a0)``, ``b1 = +n*inv`` (LPF) / ``-n*inv`` (HPF), ``b2 = b0``. Bypass on the float32
  ``w``: LPF when ``w >= f32(3.1384511)`` (23,976 Hz at 48 kHz), HPF when
  ``w <= f32(0.003141593)`` (24 Hz); a NaN ``w`` bypasses. A filtering LPF clamps
  ``w`` up to >= f32(0.003141593), a filtering HPF down to <= f32(3.1384511).
* PI20 (RBJ peaking, LINEAR gain: the response at the centre equals ``gain``). Bypass only
  when ``f32(gain) == 1.0``. ``w`` clamped to [f32(0.003141593), f32(3.1384511)], Q to [0.2, 20],
  ``A = f32(sqrt(max(gain, 0)))``, ``alpha = s/(2*Q)``, ``a0 = 1 + alpha/A``, ``inv = 1/a0``,
  ``b0 = (1 + alpha*A)*inv``, ``b1 = a1 = (-2*c)*inv``, ``b2 = (1 - alpha*A)*inv``,
  ``a2 = (1 - alpha/A)*inv``. The retail PEAK arithmetic is less certain than the pass
  filters': this operation order is OUR documented choice. Also ours: a NaN angle, Q or gain
  bypasses; a gain <= 0 (A = 0, where the formulas give 0 * inf) mutes: every coefficient 0.
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np

__all__ = [
    "peaking",
    "highpass",
    "lowpass",
    "magnitude",
    "angle",
    "HPF_BYPASS_W",
    "LPF_BYPASS_W",
    "TWO_PI_F32",
    "DENORMAL_BIAS",
    "Q_MIN",
    "Q_MAX",
]

F32 = np.float32
TWO_PI_F32 = F32(2.0 * math.pi)
"""f32(2*pi)."""
HPF_BYPASS_W = F32(0.003141593)
"""f32(0.003141593) (pi/1000 as the game writes it; one float32 step above f32(pi/1000)): HI20
passes through when its float32 w is <= this (24 Hz at 48 kHz)."""
LPF_BYPASS_W = F32(3.1384511)
"""f32(3.1384511) = f32(0.999*pi): LI20 passes through when its float32 w is >= this (23,976 Hz at 48 kHz)."""
DENORMAL_BIAS = F32(1e-18)
"""Added to the feed-forward sum of every biquad sample (f32(1e-18))."""
Q_MIN = F32(0.2)
Q_MAX = F32(20.0)

_FLAGS: Any = dict(cache=True, nogil=True, fastmath=False, _nrt=False)


@nb.njit(**_FLAGS)
def angle(fc: float, sample_rate: float) -> np.float32:
    """``w = f32(f32(fc) / f32(sample_rate) * f32(2*pi))`` in radians (float32, each step rounded)."""
    ratio = np.float32(fc) / np.float32(sample_rate)
    return ratio * np.float32(TWO_PI_F32)


@nb.njit(**_FLAGS)
def _trig(w: np.float32) -> tuple:
    """``(f32(sin w), f32(cos w))``: trig in double, rounded once."""
    wd = np.float64(w)
    return np.float32(math.sin(wd)), np.float32(math.cos(wd))


@nb.njit(**_FLAGS)
def pass_coefs(cutoff_hz: float, sample_rate: float, high: bool, out: np.ndarray) -> bool:
    """HI20 (``high``) or LI20 coefficients into float32 ``out[0:5] = b0, b1, b2, a1, a2``;
    returns False when the filter bypasses (then ``out`` is left as it was)."""
    lo_w = np.float32(HPF_BYPASS_W)
    hi_w = np.float32(LPF_BYPASS_W)
    w = angle(cutoff_hz, sample_rate)
    if w != w:
        return False
    if high:
        if w <= lo_w:
            return False
        w = min(w, hi_w)
    else:
        if w >= hi_w:
            return False
        w = max(w, lo_w)
    s, c = _trig(w)
    one = np.float32(1.0)
    alpha = np.float32(0.5) * s
    a0 = one + alpha
    inv = one / a0
    a1 = (np.float32(-2.0) * c) * inv
    a2 = (one - alpha) * inv
    nn = (one + c) if high else (one - c)
    b0 = nn / (np.float32(2.0) * a0)
    b1 = -(nn * inv) if high else nn * inv
    out[0] = b0
    out[1] = b1
    out[2] = b0
    out[3] = a1
    out[4] = a2
    return True


@nb.njit(**_FLAGS)
def peaking_coefs(centre_hz: float, gain: float, q: float, sample_rate: float, out: np.ndarray) -> bool:
    """PI20 coefficients into float32 ``out[0:5] = b0, b1, b2, a1, a2``; False when bypassed.

    ``gain`` is LINEAR (A = sqrt(gain): the response at the centre equals ``gain``)."""
    g = np.float32(gain)
    if g == np.float32(1.0):
        return False
    w = angle(centre_hz, sample_rate)
    qq = np.float32(q)
    if w != w or qq != qq or g != g:
        return False
    w = min(max(w, np.float32(HPF_BYPASS_W)), np.float32(LPF_BYPASS_W))
    qq = min(max(qq, np.float32(Q_MIN)), np.float32(Q_MAX))
    zero = np.float32(0.0)
    if g <= zero:
        for i in range(5):
            out[i] = zero
        return True
    s, c = _trig(w)
    one = np.float32(1.0)
    a = np.float32(math.sqrt(np.float64(g)))
    alpha = s / (np.float32(2.0) * qq)
    a0 = one + alpha / a
    inv = one / a0
    b1 = (np.float32(-2.0) * c) * inv
    out[0] = (one + alpha * a) * inv
    out[1] = b1
    out[2] = (one - alpha * a) * inv
    out[3] = b1
    out[4] = (one - alpha / a) * inv
    return True


def _ba(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return c[:3].astype(np.float64), np.array([1.0, float(c[3]), float(c[4])])


def peaking(
    centre_hz: float, gain: float, q: float, sample_rate: float = 48_000
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of PI20 (its float32 values, as float64 arrays), or None when it bypasses."""
    c = np.zeros(5, dtype=np.float32)
    return _ba(c) if peaking_coefs(float(centre_hz), float(gain), float(q), float(sample_rate), c) else None


def highpass(cutoff_hz: float, sample_rate: float = 48_000) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of HI20 at ``cutoff_hz``, or None when it bypasses."""
    c = np.zeros(5, dtype=np.float32)
    return _ba(c) if pass_coefs(float(cutoff_hz), float(sample_rate), True, c) else None


def lowpass(cutoff_hz: float, sample_rate: float = 48_000) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of LI20 at ``cutoff_hz``, or None when it bypasses."""
    c = np.zeros(5, dtype=np.float32)
    return _ba(c) if pass_coefs(float(cutoff_hz), float(sample_rate), False, c) else None


def magnitude(
    ba: tuple[np.ndarray, np.ndarray] | None, freq_hz: float | np.ndarray, sample_rate: float = 48_000
) -> np.ndarray:
    """|H(f)| of a biquad's coefficients (1.0 for a bypassed one), for plots."""
    f = np.atleast_1d(np.asarray(freq_hz, dtype=float))
    if ba is None:
        return np.ones_like(f)
    b, a = ba
    z = np.exp(-1j * 2 * np.pi * f / sample_rate)
    return np.abs((b[0] + b[1] * z + b[2] * z * z) / (a[0] + a[1] * z + a[2] * z * z))
