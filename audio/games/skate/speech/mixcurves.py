"""Curves of the speech voice: the PEAK head-shadow curves and the level / filter curves.

PEAK (spec 5.5, the game's exact points): three 8-point curves over the folded azimuth
(raw 0..65535; ``a > 32767 -> 65536 - a``; 0 front, 16384 side, 32767 behind).
Evaluation: ``v < x0 -> y0``; ``v >= x7 -> y7``; else linear between neighbours.

Level outputs (spec 5.7) are the game's mixer outputs, numbered as in the game:

====  ===================================================  =========================
out   feeds                                                unit
====  ===================================================  =========================
2/3   main level, regular ped (and pros, bums), near/far   0..32767
4/5   main level, security, near/far clip                  0..32767
6     main level, security guard radio (event 8277)        0..32767
13    stream HPF HI20 cutoff                               Hz
14    stream LPF LI20 cutoff                               Hz
15    second level (env send), regular ped                 linear 0..1
16    second level, security                               linear 0..1
17    second level, guard radio                            linear 0..1
21    echo level (pre-gain send into the slot's echo)      linear 0..1
22    echo submix HI20 cutoff                              Hz
23    echo submix LI20 cutoff                              Hz
====  ===================================================  =========================

"far" = the playing clip's name ends in ``_f`` (then out 3 / 5 instead of 2 / 4). The
game's mix tables are not public: the curves over distance (metres) are OUR documented,
configurable defaults, anchored only on the measured stream filters (LPF 24,956 Hz /
HPF 77 Hz near, 3,489 / 379 Hz far). Pros' outputs are not given; they use the regular ped's.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any

import msgspec
import numpy as np
from msgspec import Meta

from audio.core.errors import ScenarioError
from audio.core.schema import Struct, convert
from audio.dsp.curves import interp_f32

__all__ = [
    "MixTable",
    "Curve",
    "CurveSet",
    "curve_set",
    "PEAK_CENTRE",
    "PEAK_GAIN",
    "PEAK_Q",
    "fold_azimuth",
    "peak",
    "MixCurves",
    "DEFAULT_OUTPUTS",
    "level_outputs",
]


@dataclass(frozen=True)
class Curve:
    """A piecewise-linear curve: clamped to the end values outside ``xs``."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.xs) != len(self.ys) or not self.xs:
            raise ValueError("a curve needs as many x as y points, at least one")
        if any(b < a for a, b in zip(self.xs, self.xs[1:])):
            raise ValueError("curve x points must not decrease")

    def crossings(self, y: float) -> tuple[float, ...]:
        """The inputs where ``self(v) <= y`` changes as ``v`` grows: each segment's crossing of
        ``y`` (or its step, between equal ``x`` points), ascending."""
        xs, ys = self.xs, self.ys
        out = []
        for i in range(len(xs) - 1):
            if (ys[i] <= y) != (ys[i + 1] <= y):
                x0, x1 = xs[i], xs[i + 1]
                out.append(x0 if x1 == x0 else x0 + (y - ys[i]) * (x1 - x0) / (ys[i + 1] - ys[i]))
        return tuple(out)

    def segment(self, v: float) -> float | tuple[float, float, float, float]:
        """What the curve reads at ``v``: an end value outside its points, else the segment
        holding ``v`` as ``(y0, y1 - y0, x0, x1 - x0)``, ``x0 <= v < x1`` (a NaN raises)."""
        xs, ys = self.xs, self.ys
        if v < xs[0]:
            return ys[0]
        if v >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, v) - 1
        return (ys[i], ys[i + 1] - ys[i], xs[i], xs[i + 1] - xs[i])

    def __call__(self, v: float) -> float:
        t = self.segment(v)
        if isinstance(t, tuple):
            y0, dy, x0, dx = t
            return y0 + dy * (v - x0) / dx
        return t


class CurveSet:
    """Several curves read at one input with one search: ``CurveSet(curves)(v)`` is
    ``[c(v) for c in curves]``, bit for bit (the same operations on the same floats),
    from a table made once per interval between the curves' x points (a voice block reads
    seven curves at the speaker's distance on every frame a line plays).

    Parameters
    ----------
    curves:
        The curves, in the order of the values returned.
    """

    def __init__(self, curves: Sequence[Curve]) -> None:
        self.curves = tuple(curves)
        self._edges = sorted({x for c in self.curves for x in c.xs})
        self._below = tuple(c.ys[0] for c in self.curves)
        self._rows = [tuple(c.segment(x) for c in self.curves) for x in self._edges]

    def __call__(self, v: float) -> list[float]:
        """Each curve's value at ``v`` (a NaN raises as :meth:`Curve.__call__` does)."""
        j = bisect.bisect_right(self._edges, v)
        if j == 0:
            return list(self._below)
        if v != v:  # NaN sorts past every point
            return [c(v) for c in self.curves]
        out = []
        for t in self._rows[j - 1]:
            if isinstance(t, tuple):
                y0, dy, x0, dx = t
                out.append(y0 + dy * (v - x0) / dx)
            else:
                out.append(t)
        return out


@lru_cache(maxsize=256)
def curve_set(curves: tuple[Curve, ...]) -> CurveSet:
    """The :class:`CurveSet` of ``curves`` (kept: a batch worker's runs read the same curves).

    Parameters
    ----------
    curves:
        The curves, in the order of the values returned.
    """
    return CurveSet(curves)


PEAK_CENTRE = Curve(
    (0.0, 2614.956, 5603.478, 8325.166, 15796.47, 21666.78, 25829.36, 32767.0),
    (600.0, 1195.0, 1802.143, 2336.429, 4000.0, 2676.428, 1838.571, 600.0),
)
"""PEAK centre frequency (Hz) over the folded azimuth."""
PEAK_GAIN = Curve(
    (0.0, 4162.583, 8378.532, 12114.18, 16063.3, 21079.75, 26416.39, 32767.0),
    (0.4, 0.34, 0.291786, 0.2575, 0.222143, 0.185714, 0.143929, 0.1),
)
"""PEAK linear gain at the centre over the folded azimuth."""
PEAK_Q = Curve((0.0, 4095.875, 8191.75, 12287.63, 16383.5, 20479.38, 24575.25, 28671.13), (3.0,) * 8)
"""PEAK Q over the folded azimuth (3.0 everywhere)."""


def fold_azimuth(raw: int) -> int:
    """Fold a raw azimuth 0..65535 to 0 (front) .. 32767 (behind)."""
    a = int(raw) & 0xFFFF
    return 65536 - a if a > 32767 else a


def peak(raw_azimuth: int) -> tuple[float, float, float]:
    """``(centre Hz, linear gain, Q)`` of the head-shadow PEAK filter for a raw azimuth; the
    game's points and evaluation are float32 (:func:`audio.dsp.curves.interp_f32`), read from
    a table of every folded azimuth (:func:`_peak_table`), each row kept as floats once read."""
    a = fold_azimuth(raw_azimuth)
    got = _PEAKS.get(a)
    if got is None:
        c, g, q = _peak_table()[a].tolist()
        got = _PEAKS[a] = (c, g, q)
    return got


_PEAKS: dict[int, tuple[float, float, float]] = {}
""":func:`peak` by folded azimuth (at most 32,769 rows)."""


@lru_cache(maxsize=1)
def _peak_table() -> np.ndarray:
    """``(32769, 3)`` float64: :func:`peak`'s values at folded azimuths 0..32768, computed once
    (a moving speaker's azimuth changes every console frame)."""
    folded = np.arange(32769, dtype=np.float32)
    return np.stack(
        [np.asarray(interp_f32(k.xs, k.ys, folded), np.float64) for k in (PEAK_CENTRE, PEAK_GAIN, PEAK_Q)],
        axis=1,
    )


def _c(xs: Sequence[float], ys: Sequence[float]) -> Curve:
    return Curve(tuple(float(x) for x in xs), tuple(float(y) for y in ys))


DEFAULT_OUTPUTS: dict[int, Curve] = {
    2: _c([0, 4, 12, 25, 45, 70], [32767, 30000, 21000, 11000, 3500, 0]),
    3: _c([0, 20, 35, 55, 80], [26000, 22000, 12000, 4000, 0]),
    4: _c([0, 4, 12, 25, 45, 70], [32767, 30000, 21000, 11000, 3500, 0]),
    5: _c([0, 20, 35, 55, 80], [26000, 22000, 12000, 4000, 0]),
    6: _c([0, 5, 15, 30, 50], [20000, 18000, 11000, 4000, 0]),
    13: _c([0, 5, 60], [77, 77, 379]),
    14: _c([0, 5, 60], [24956, 24956, 3489]),
    15: _c([0, 10, 40, 70], [0.10, 0.15, 0.25, 0.30]),
    16: _c([0, 10, 40, 70], [0.10, 0.15, 0.25, 0.30]),
    17: _c([0, 10, 40, 70], [0.05, 0.08, 0.12, 0.15]),
    21: _c([0, 10, 40, 70], [0.05, 0.12, 0.25, 0.35]),
    22: _c([0, 60], [150, 400]),
    23: _c([0, 60], [8000, 3000]),
}
"""barkbus's default curves over distance (metres); NOT the game's (its tables are not public)."""


def level_outputs(kind: str, event: int, far: bool) -> tuple[int, int]:
    """``(main level output, second level output)`` of a speaker (spec 5.7)."""
    if kind == "security":
        if event == 8277:
            return 6, 17
        return 4 + int(far), 16
    return 2 + int(far), 15


Metres = Annotated[float, Meta(ge=0.0, le=1e6)]
Points = Meta(min_length=1, max_length=256)


class LevelCurve(Struct):
    """A main-level output over distance: ``x`` metres, ``y`` the game's level 0..32767."""

    x: Annotated[list[Metres], Points]
    y: Annotated[list[Annotated[float, Meta(ge=0.0, le=32767.0)]], Points]


class CutoffCurve(Struct):
    """A filter-cutoff output over distance: ``x`` metres, ``y`` Hz."""

    x: Annotated[list[Metres], Points]
    y: Annotated[list[Annotated[float, Meta(ge=0.0, le=1e6)]], Points]


class SendCurve(Struct):
    """A send-level output over distance: ``x`` metres, ``y`` linear 0..64."""

    x: Annotated[list[Metres], Points]
    y: Annotated[list[Annotated[float, Meta(ge=0.0, le=64.0)]], Points]


class MixTable(Struct):
    """``[skate.mix]``: overrides of the output curves (numbered as in the module docstring)."""

    out2: LevelCurve | None = None
    out3: LevelCurve | None = None
    out4: LevelCurve | None = None
    out5: LevelCurve | None = None
    out6: LevelCurve | None = None
    out13: CutoffCurve | None = None
    out14: CutoffCurve | None = None
    out15: SendCurve | None = None
    out16: SendCurve | None = None
    out17: SendCurve | None = None
    out21: SendCurve | None = None
    out22: CutoffCurve | None = None
    out23: CutoffCurve | None = None


@dataclass
class MixCurves:
    """The output curves by output number (see the module docstring); override any of them."""

    outputs: dict[int, Curve] = field(default_factory=lambda: dict(DEFAULT_OUTPUTS))

    def __call__(self, out: int, distance: float) -> float:
        return self.outputs[out](distance)

    @classmethod
    def from_table(cls, table: MixTable, source: str = "<mix>", where: str = "skate.mix") -> MixCurves:
        """The defaults with ``table``'s overrides; :class:`ScenarioError` for a curve whose
        ``x`` and ``y`` differ in length or whose ``x`` decreases."""
        outputs = dict(DEFAULT_OUTPUTS)
        for key, v in msgspec.structs.asdict(table).items():
            if v is None:
                continue
            try:
                outputs[int(key[3:])] = _c(v.x, v.y)
            except ValueError as exc:
                raise ScenarioError(source, f"{where}.{key}", str(exc)) from None
        return cls(outputs)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<mix>", where: str = "skate.mix") -> MixCurves:
        """Overrides from ``{"out2": {"x": [...], "y": [...]}, ...}`` (a TOML table), checked
        against :class:`MixTable` (:class:`ScenarioError` naming the field otherwise)."""
        return cls.from_table(convert(dict(d), MixTable, source=source, where=where), source, where)
