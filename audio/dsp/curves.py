"""Piecewise-linear parameter curves and the azimuth folding of the PEAK head shadow."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audio.dsp.graph import CurveSpec, GraphSpec

__all__ = ["Curve", "fold_azimuth", "PeakCurves", "azimuth_to_raw"]


@dataclass(frozen=True)
class Curve:
    """``v < x[0] -> y[0]``; ``v >= x[-1] -> y[-1]``; linear between neighbours."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    @classmethod
    def from_spec(cls, spec: CurveSpec) -> "Curve":
        return cls(spec.x, spec.y)

    def __call__(self, v: float | np.ndarray) -> float | np.ndarray:
        out = np.interp(v, self.x, self.y, left=self.y[0], right=self.y[-1])
        return float(out) if np.ndim(out) == 0 else out


def fold_azimuth(raw: int | np.ndarray) -> int | np.ndarray:
    """Raw azimuth (0..65535 = 360 degrees) folded so 0 = front, 16384 = side, 32767 = behind."""
    a = np.asarray(raw) & 0xFFFF
    out = np.where(a > 32767, 65536 - a, a)
    return int(out) if np.ndim(out) == 0 else out


def azimuth_to_raw(angle_deg: float) -> int:
    """Degrees (+ = left) to the raw 16-bit azimuth."""
    return int(np.floor(angle_deg * 65536.0 / 360.0 + 0.5)) & 0xFFFF


@dataclass(frozen=True)
class PeakCurves:
    """The three PEAK curves (centre Hz, linear gain, Q) of a voice graph file."""

    centre_hz: Curve
    gain: Curve
    q: Curve

    @classmethod
    def from_graph(cls, spec: GraphSpec) -> "PeakCurves":
        try:
            return cls(*(Curve.from_spec(spec.curves[k]) for k in ("peak_centre_hz", "peak_gain", "peak_q")))
        except KeyError as exc:
            raise KeyError(f"graph {spec.name!r} has no curve {exc.args[0]!r}") from None

    def __call__(self, raw_azimuth: int) -> tuple[float, float, float]:
        """(centre Hz, linear gain, Q) for a raw azimuth."""
        a = fold_azimuth(raw_azimuth)
        return float(self.centre_hz(a)), float(self.gain(a)), float(self.q(a))
