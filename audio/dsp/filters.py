"""Coefficient formulas of the voice chain's filters (RBJ cookbook), in Hz and linear gain.

Coefficients are rounded to float32 as the game's nodes store them; the kernels run
Direct Form I with float64 history. ``b``/``a`` are normalised so ``a0 == 1``.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["peaking", "highpass", "lowpass", "magnitude", "HPF_BYPASS_W", "LPF_BYPASS_W"]

HPF_BYPASS_W = math.pi / 1000.0
"""HI20 passes through exactly when w = 2*pi*fc/fs <= pi/1000 (<= 24 Hz at 48 kHz)."""
LPF_BYPASS_W = 0.999 * math.pi
"""LI20 passes through exactly when w >= 0.999*pi (>= 23,976 Hz at 48 kHz)."""


@nb.njit(cache=True)
def _f32(x: float) -> float:
    return float(np.float32(x))


@nb.njit(cache=True)
def peaking_coefs(centre_hz: float, gain: float, q: float, fs: float, out: np.ndarray) -> bool:
    """RBJ peaking EQ into ``out[0:5] = b0, b1, b2, a1, a2``; returns False when bypassed.

    ``gain`` is LINEAR (A = sqrt(gain), so the response at the centre equals ``gain``);
    Q is clamped to 0.2..20 and w to [pi/1000, 0.999*pi]; bypass only when gain == 1.0.
    """
    if gain == 1.0 or gain <= 0.0:
        return False
    q = min(max(q, 0.2), 20.0)
    w = 2.0 * math.pi * centre_hz / fs
    w = min(max(w, math.pi / 1000.0), 0.999 * math.pi)
    a = math.sqrt(gain)
    alpha = math.sin(w) / (2.0 * q)
    cw = math.cos(w)
    a0 = 1.0 + alpha / a
    out[0] = _f32((1.0 + alpha * a) / a0)
    out[1] = _f32((-2.0 * cw) / a0)
    out[2] = _f32((1.0 - alpha * a) / a0)
    out[3] = _f32((-2.0 * cw) / a0)
    out[4] = _f32((1.0 - alpha / a) / a0)
    return True


@nb.njit(cache=True)
def pass_coefs(cutoff_hz: float, fs: float, high: bool, out: np.ndarray) -> bool:
    """RBJ high- or low-pass at Q = 1 (alpha = sin(w)/2); returns False when bypassed."""
    w = 2.0 * math.pi * cutoff_hz / fs
    if high and w <= math.pi / 1000.0:
        return False
    if (not high) and w >= 0.999 * math.pi:
        return False
    alpha = math.sin(w) / 2.0
    cw = math.cos(w)
    a0 = 1.0 + alpha
    if high:
        b0 = (1.0 + cw) / 2.0
        b1 = -(1.0 + cw)
    else:
        b0 = (1.0 - cw) / 2.0
        b1 = 1.0 - cw
    out[0] = _f32(b0 / a0)
    out[1] = _f32(b1 / a0)
    out[2] = _f32(b0 / a0)
    out[3] = _f32((-2.0 * cw) / a0)
    out[4] = _f32((1.0 - alpha) / a0)
    return True


def peaking(centre_hz: float, gain: float, q: float, fs: float = 48_000) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of PI20 at these settings, or None when it bypasses."""
    c = np.zeros(5)
    return (c[:3].copy(), np.array([1.0, c[3], c[4]])) if peaking_coefs(centre_hz, gain, q, fs, c) else None


def highpass(cutoff_hz: float, fs: float = 48_000) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of HI20 at ``cutoff_hz``, or None when it bypasses."""
    c = np.zeros(5)
    return (c[:3].copy(), np.array([1.0, c[3], c[4]])) if pass_coefs(cutoff_hz, fs, True, c) else None


def lowpass(cutoff_hz: float, fs: float = 48_000) -> tuple[np.ndarray, np.ndarray] | None:
    """``(b, a)`` of LI20 at ``cutoff_hz``, or None when it bypasses."""
    c = np.zeros(5)
    return (c[:3].copy(), np.array([1.0, c[3], c[4]])) if pass_coefs(cutoff_hz, fs, False, c) else None


def magnitude(ba: tuple[np.ndarray, np.ndarray] | None, freq_hz: float | np.ndarray,
              fs: float = 48_000) -> np.ndarray:
    """|H(f)| of a biquad (1.0 for a bypassed one)."""
    f = np.atleast_1d(np.asarray(freq_hz, dtype=float))
    if ba is None:
        return np.ones_like(f)
    b, a = ba
    z = np.exp(-1j * 2 * np.pi * f / fs)
    return np.abs((b[0] + b[1] * z + b[2] * z * z) / (a[0] + a[1] * z + a[2] * z * z))
