"""Voice block: PEAK curves, curve sets, azimuth folding, levels by speaker kind, delay countdown, params."""

import math

import numpy as np
import pytest

from audio.games.skate.speech.mixcurves import (
    DEFAULT_OUTPUTS,
    PEAK_CENTRE,
    PEAK_GAIN,
    Curve,
    CurveSet,
    MixCurves,
    fold_azimuth,
    level_outputs,
    peak,
)
from audio.games.skate.speech.voice import DelayCountdown, VoiceMixer, azimuth_degrees

CX = [0.0, 2614.956, 5603.478, 8325.166, 15796.47, 21666.78, 25829.36, 32767.0]
CY = [600.0, 1195.0, 1802.143, 2336.429, 4000.0, 2676.428, 1838.571, 600.0]
GX = [0.0, 4162.583, 8378.532, 12114.18, 16063.3, 21079.75, 26416.39, 32767.0]
GY = [0.4, 0.34, 0.291786, 0.2575, 0.222143, 0.185714, 0.143929, 0.1]


def test_peak_curves_hit_their_points_and_interpolate():
    for x, y in zip(CX, CY):
        assert PEAK_CENTRE(x) == pytest.approx(y)
    for x, y in zip(GX, GY):
        assert PEAK_GAIN(x) == pytest.approx(y)
    mid = (CX[3] + CX[4]) / 2
    assert PEAK_CENTRE(mid) == pytest.approx((CY[3] + CY[4]) / 2)
    assert PEAK_CENTRE(-5) == 600.0 and PEAK_GAIN(40000) == 0.1


def test_a_curve_set_reads_each_of_its_curves_bit_for_bit_at_and_between_and_beyond_their_points():
    curves = [
        *(DEFAULT_OUTPUTS[o] for o in (2, 15, 21, 13, 14, 22, 23)),
        Curve((3.0, 3.0, 9.5), (1.0, 7.0, -2.0)),  # a step at 3 m
        Curve((20.0,), (5.0,)),  # one point
        Curve((-4.0, 1.0, 2.5, 100.0), (-0.0, 0.1, 3.0, 0.3)),
    ]
    points = sorted({x for c in curves for x in c.xs})
    rng = np.random.default_rng(7)
    grid = [
        *points,
        *(math.nextafter(x, -math.inf) for x in points),
        *(math.nextafter(x, math.inf) for x in points),
    ]
    grid += [-1e9, -0.0, 0.0, 1e-300, 1e9, math.inf, -math.inf, *rng.uniform(-10.0, 110.0, 2000).tolist()]
    both = CurveSet(curves)
    for v in grid:
        got, want = both(v), [c(v) for c in curves]
        assert [x.hex() for x in map(float, got)] == [x.hex() for x in map(float, want)], v
    with pytest.raises(IndexError):  # what each curve does with a NaN distance
        both(math.nan)


def test_azimuth_folding():
    assert [fold_azimuth(a) for a in (0, 16384, 32767, 32768, 49152, 65535)] == [
        0,
        16384,
        32767,
        32768,
        16384,
        1,
    ]
    assert peak(49152) == peak(16384)
    c, g, q = peak(15796)
    assert c == pytest.approx(4000.0, abs=0.5) and q == 3.0
    assert peak(0)[:2] == (600.0, float(np.float32(0.4)))  # the game's points are float32


def test_peak_at_every_raw_azimuth_is_the_float32_evaluation_of_the_game_points():
    def f32_curve(xs, ys, a):
        # the game's evaluation: every operation in float32, clamped at the end points
        x, y, v = np.float32(xs), np.float32(ys), np.float32(a)
        if v < x[0]:
            return y[0]
        if v >= x[-1]:
            return y[-1]
        i = int(np.searchsorted(x, v, side="right")) - 1
        return y[i] + (y[i + 1] - y[i]) * (v - x[i]) / (x[i + 1] - x[i])

    raws = np.arange(65536)
    folded = np.where(raws > 32767, 65536 - raws, raws)
    want = {a: (float(f32_curve(CX, CY, a)), float(f32_curve(GX, GY, a)), 3.0) for a in set(folded.tolist())}
    assert len(want) == 32769
    assert [peak(int(r)) for r in raws] == [want[a] for a in folded.tolist()]


def test_pan_angle_positive_left():
    assert azimuth_degrees(16384) == 90.0 and azimuth_degrees(49152) == -90.0 and azimuth_degrees(0) == 0.0


def test_level_outputs_per_speaker_kind():
    assert level_outputs("regular", 8210, False) == (2, 15)
    assert level_outputs("regular", 8210, True) == (3, 15)
    assert level_outputs("security", 8277, True) == (6, 17)
    assert level_outputs("security", 8210, True) == (5, 16)


def test_filters_anchor_on_the_measured_near_and_far_values():
    m = MixCurves()
    assert m(14, 1.0) == 24956 and m(13, 1.0) == 77
    assert m(14, 100.0) == 3489 and m(13, 100.0) == 379


def test_delay_countdown_recomputes_every_4_frames_from_its_start():
    # the game: every frame count -= 1; at <= 0 reload 4 and recompute -> frames 3, 7, 11...
    cd = DelayCountdown(start=3)
    asked: list[int] = []

    def distance(frame: int) -> float:
        asked.append(frame)
        return 34.4 if frame < 7 else 68.8

    delays = [cd.at(f, distance) for f in range(3, 12)]
    assert asked == [3, 7, 11]
    assert all(d == pytest.approx(0.1) for d in delays[:4])
    assert delays[4:] == [float(np.float32(0.15))] * 5  # clamped (float32 in the game)
    assert DelayCountdown(factor=2.0).at(0, lambda f: 17.2) == pytest.approx(0.1)
    # a countdown read after frames nobody read uses its last refresh frame's distance
    late = DelayCountdown(start=0)
    assert late.at(10, lambda f: 344.0 * 0.01 * f) == pytest.approx(0.08)


def test_delay_countdown_reloading_every_frame_below_one():
    cd = DelayCountdown(reload=0, start=5)
    assert [cd.refresh_frame(f) for f in (5, 6, 9)] == [5, 6, 9]


def test_voice_params_from_the_block():
    mix = VoiceMixer(MixCurves({**MixCurves().outputs, 2: Curve((0.0,), (16383.5,))}))
    b = mix.block(
        kind="regular",
        event=8210,
        clip_name="501_59_busm1_Warn_n",
        distance=3.0,
        azimuth=16384,
        delay=0.01,
        voice_float=1.2,
        pitch=4096,
    )
    p = b.voice_params()
    assert p["Gai0.gain"] == pytest.approx(0.5 * 1.2)
    assert p["PI20.centre_hz"] == pytest.approx(PEAK_CENTRE(16384)) and p["Pn21.angle_deg"] == 90.0
    assert p["Rsp0.pitch"] == 4096.0
    assert p["Sen0_env.level"] == pytest.approx(MixCurves()(15, 3.0) * 1.2)
    assert p["Sen0_echo.level"] == pytest.approx(MixCurves()(21, 3.0) * 1.2)
    assert set(b.submix_params()) == {"HI20.cutoff_hz", "LI20.cutoff_hz", "Del0.seconds"}
    far = mix.block(
        kind="regular",
        event=8210,
        clip_name="501_59_busm1_Warn_f",
        distance=3.0,
        azimuth=0,
        delay=0.0,
        voice_float=None,
    )
    assert far.far and far.outputs == (3, 15) and far.voice_float == 1.0


def test_mix_overrides_validate():
    with pytest.raises(ValueError, match=r"skate\.mix\.out99: unknown field"):
        MixCurves.from_dict({"out99": {"x": [0], "y": [1]}})
    with pytest.raises(ValueError, match=r"skate\.mix\.out_2: unknown field \(did you mean 'out2'\?\)"):
        MixCurves.from_dict({"out_2": {"x": [0], "y": [1]}})
    with pytest.raises(ValueError, match=r"skate\.mix\.out2\.y\[0\]: expected `float` <= 32767"):
        MixCurves.from_dict({"out2": {"x": [0], "y": [40000]}})
    with pytest.raises(ValueError, match=r"skate\.mix\.out15\.x\[1\]: expected a finite number, got inf"):
        MixCurves.from_dict({"out15": {"x": [0, float("inf")], "y": [1, 1]}})
    with pytest.raises(ValueError, match=r"skate\.mix\.out14: curve x points must not decrease"):
        MixCurves.from_dict({"out14": {"x": [5, 1], "y": [1, 1]}})
    with pytest.raises(ValueError, match=r"skate\.mix\.out14: a curve needs as many x as y points"):
        MixCurves.from_dict({"out14": {"x": [1, 5], "y": [1]}})
    assert MixCurves.from_dict({"out2": {"x": [0, 10], "y": [100, 0]}})(2, 5.0) == 50.0
