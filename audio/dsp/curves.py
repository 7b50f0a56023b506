"""Piecewise-linear parameter curves and the azimuth folding of the PEAK head shadow.

The game's curve points are float32 and so is its evaluation: :func:`interp_f32` rounds
every step, ``y0 + (y1 - y0) * (v - x0) / (x1 - x0)`` in that order (the association is
OUR documented choice; the retail one is not traced).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from audio.dsp.graph import CurveSpec, GraphSpec

__all__ = ["Curve", "fold_azimuth", "PeakCurves", "azimuth_to_raw", "interp_f32"]


def interp_f32(xs: Sequence[float], ys: Sequence[float], v: float | np.ndarray) -> np.float32 | np.ndarray:
    """A piecewise-linear curve in float32: ``v < x[0] -> y[0]``; ``v >= x[-1] -> y[-1]``; else
    ``y0 + (y1 - y0) * (v - x0) / (x1 - x0)`` with every operation rounded to float32 (a
    repeated x gives the right-hand y). ``xs`` must not decrease."""
    if np.ndim(v) == 0:
        return _interp_f32_scalar(tuple(xs), tuple(ys), float(v))
    x = np.asarray(xs, dtype=np.float32)
    y = np.asarray(ys, dtype=np.float32)
    vv = np.asarray(v, dtype=np.float32)
    i = np.clip(np.searchsorted(x, vv, side="right") - 1, 0, max(x.shape[0] - 2, 0))
    j = np.minimum(i + 1, x.shape[0] - 1)
    x0, x1, y0, y1 = x[i], x[j], y[i], y[j]
    dx = x1 - x0
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = y0 + (y1 - y0) * (vv - x0) / np.where(dx == 0, np.float32(1.0), dx)
    mid = np.where(dx == 0, y1, mid)
    out = np.where(vv < x[0], y[0], np.where(vv >= x[-1], y[-1], mid)).astype(np.float32)
    return out[()] if out.ndim == 0 else out


@lru_cache(maxsize=64)
def _points_f32(
    xs: tuple[float, ...], ys: tuple[float, ...]
) -> tuple[list[np.float32], list[np.float32], list[float]]:
    x = [np.float32(a) for a in xs]
    return x, [np.float32(b) for b in ys], [float(a) for a in x]


def _interp_f32_scalar(xs: tuple[float, ...], ys: tuple[float, ...], v: float) -> np.float32:
    """:func:`interp_f32` for one value, with numpy float32 scalars (the same roundings)."""
    x, y, xf = _points_f32(xs, ys)
    vv = np.float32(v)
    if vv < x[0]:
        return y[0]
    if vv >= x[-1]:
        return y[-1]
    i = bisect_right(xf, float(vv)) - 1
    if x[i + 1] == x[i]:
        return y[i + 1]
    return y[i] + (y[i + 1] - y[i]) * (vv - x[i]) / (x[i + 1] - x[i])


@dataclass(frozen=True)
class Curve:
    """``v < x[0] -> y[0]``; ``v >= x[-1] -> y[-1]``; linear between neighbours."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    @classmethod
    def from_spec(cls, spec: CurveSpec) -> Curve:
        return cls(spec.x, spec.y)

    def __call__(self, v: float | np.ndarray) -> float | np.ndarray:
        """The curve at ``v``, evaluated in float32 (:func:`interp_f32`)."""
        out = interp_f32(self.x, self.y, v)
        return float(out) if np.ndim(out) == 0 else np.asarray(out)


def fold_azimuth(raw: int | np.ndarray) -> int | np.ndarray:
    """Raw azimuth (0..65535 = 360 degrees) folded so 0 = front, 16384 = side, 32767 = behind."""
    a = np.asarray(raw) & 0xFFFF
    out = np.where(a > 32767, 65536 - a, a)
    return int(out) if np.ndim(out) == 0 else out


def azimuth_to_raw(angle_deg: float) -> int:
    """Degrees (+ = left) to the raw 16-bit azimuth."""
    return math.floor(angle_deg * 65536.0 / 360.0 + 0.5) & 0xFFFF


@dataclass(frozen=True)
class PeakCurves:
    """The three PEAK curves (centre Hz, linear gain, Q) of a voice graph file."""

    centre_hz: Curve
    gain: Curve
    q: Curve

    @classmethod
    def from_graph(cls, spec: GraphSpec) -> PeakCurves:
        try:
            return cls(*(Curve.from_spec(spec.curves[k]) for k in ("peak_centre_hz", "peak_gain", "peak_q")))
        except KeyError as exc:
            raise KeyError(f"graph {spec.name!r} has no curve {exc.args[0]!r}") from None

    def __call__(self, raw_azimuth: int) -> tuple[float, float, float]:
        """(centre Hz, linear gain, Q) for a raw azimuth."""
        a = fold_azimuth(raw_azimuth)
        return float(self.centre_hz(a)), float(self.gain(a)), float(self.q(a))
