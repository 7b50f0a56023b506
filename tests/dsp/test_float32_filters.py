"""Single-precision filters as the game computes them (spec 5.4, retail analysis).

Every expected value here is computed independently: coefficients with numpy float32 step by
step, fused multiply-adds with exact rational arithmetic (``fractions.Fraction``) rounded to
float32 by hand, the kernel's association by a plain-Python Direct Form I.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba as nb
import numpy as np
import pytest
from bankfeed import feed
from scipy import signal

from audio.dsp.filters import highpass, lowpass, pass_coefs, peaking, peaking_coefs
from audio.dsp.kernels import fma32, fma32_soft

f32 = np.float32
W_LO = f32(0.003141593)
W_HI = f32(3.1384511)


# ------------------------------------------------------------------ independent references
def ref_angle(fc: float, sample_rate: float = 48_000.0) -> np.float32:
    return f32(f32(f32(fc) / f32(sample_rate)) * f32(2 * math.pi))


def ref_pass(fc: float, high: bool, sample_rate: float = 48_000.0) -> np.ndarray | None:
    w = ref_angle(fc, sample_rate)
    if np.isnan(w) or (high and w <= W_LO) or (not high and w >= W_HI):
        return None
    w = min(w, W_HI) if high else max(w, W_LO)
    s, c = f32(math.sin(float(w))), f32(math.cos(float(w)))
    alpha = f32(0.5) * s
    a0 = f32(1) + alpha
    inv = f32(1) / a0
    a1 = (f32(-2) * c) * inv
    a2 = (f32(1) - alpha) * inv
    n = f32(1) + c if high else f32(1) - c
    b0 = n / (f32(2) * a0)
    b1 = -n * inv if high else n * inv
    return np.array([b0, b1, b0, a1, a2], dtype=np.float32)


def ref_peak(fc: float, gain: float, q: float, sample_rate: float = 48_000.0) -> np.ndarray:
    w = min(max(ref_angle(fc, sample_rate), W_LO), W_HI)
    q32 = min(max(f32(q), f32(0.2)), f32(20))
    s, c = f32(math.sin(float(w))), f32(math.cos(float(w)))
    a = f32(math.sqrt(max(float(f32(gain)), 0.0)))
    alpha = s / (f32(2) * q32)
    inv = f32(1) / (f32(1) + alpha / a)
    b1 = (f32(-2) * c) * inv
    return np.array(
        [(f32(1) + alpha * a) * inv, b1, (f32(1) - alpha * a) * inv, b1, (f32(1) - alpha / a) * inv],
        dtype=np.float32,
    )


def round_f32(x: Fraction) -> np.float32:
    """Round an exact rational to the nearest float32 (ties to even), by hand."""
    guess = f32(float(x))
    cands = [guess, np.nextafter(guess, f32(np.inf)), np.nextafter(guess, f32(-np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.int32)) & 1))


def exact_fma(a: np.float32, b: np.float32, c: np.float32) -> np.float32:
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


@nb.njit(cache=True)
def _fma_hw(a, b, c):
    out = np.empty(a.shape[0], np.float32)
    for i in range(a.shape[0]):
        out[i] = fma32(a[i], b[i], c[i])
    return out


@nb.njit(cache=True)
def _fma_sw(a, b, c):
    out = np.empty(a.shape[0], np.float32)
    for i in range(a.shape[0]):
        out[i] = fma32_soft(a[i], b[i], c[i])
    return out


def _coefs(fn, *args) -> np.ndarray | None:
    out = np.zeros(5, dtype=np.float32)
    return out if fn(*args, out) else None


# ------------------------------------------------------------------------------ coefficients
@pytest.mark.parametrize("fc", [25.0, 77.0, 379.0, 1000.0, 3489.0, 12_000.0, 23_975.0])
def test_pass_coefficients_are_float32_step_by_step(fc):
    for high in (False, True):
        assert np.array_equal(_coefs(pass_coefs, fc, 48_000.0, high), ref_pass(fc, high))


def test_public_ba_carries_the_float32_coefficients():
    b, a = lowpass(3489.0)
    r = ref_pass(3489.0, False)
    assert np.array_equal(np.concatenate([b, a[1:]]).astype(np.float32), r)
    assert a[0] == 1.0


@pytest.mark.parametrize(
    "fc,gain,q",
    [
        (600.0, 0.4, 3.0),
        (4000.0, 0.222143, 3.0),
        (1838.571, 0.143929, 3.0),
        (1000.0, 2.0, 1.0),
        (1000.0, 0.5, 100.0),
        (5.0, 0.5, 0.01),
        (96_000.0, 0.3, 3.0),
    ],
)
def test_peak_coefficients_follow_the_documented_float32_order(fc, gain, q):
    assert np.array_equal(_coefs(peaking_coefs, fc, gain, q, 48_000.0), ref_peak(fc, gain, q))


def test_cutoffs_are_rounded_to_float32_before_the_division():
    fc = 1000.0000001  # not a float32: the game's parameter is f32(fc)
    assert np.array_equal(_coefs(pass_coefs, fc, 48_000.0, False), ref_pass(1000.0, False))


# ----------------------------------------------------------------------------- bypass edges
def test_bypass_edges_at_24_25_hz_and_23975_23976_hz():
    assert ref_angle(24.0) == W_LO and ref_angle(23_976.0) == W_HI  # the edges land on the constants
    assert highpass(24.0) is None and highpass(25.0) is not None
    assert lowpass(23_976.0) is None and lowpass(23_975.0) is not None


def test_nan_cutoff_bypasses():
    assert highpass(float("nan")) is None and lowpass(float("nan")) is None
    assert peaking(float("nan"), 0.5, 3.0) is None


def test_filtering_pass_filters_clamp_the_angle():
    # an LPF far below 24 Hz filters at w = f32(0.003141593); an HPF above 23,976 Hz at w = f32(3.1384511)
    lo = _coefs(pass_coefs, 1.0, 48_000.0, False)
    assert np.array_equal(lo, _coefs(pass_coefs, 24.0, 48_000.0, False))
    hi = _coefs(pass_coefs, 30_000.0, 48_000.0, True)
    assert np.array_equal(hi, _coefs(pass_coefs, 23_976.0, 48_000.0, True))


@pytest.mark.parametrize("gain", [0.0, -1.0, -1e-30])
def test_peak_gain_at_or_below_zero_is_finite(gain, chain):
    c = _coefs(peaking_coefs, 1000.0, gain, 3.0, 48_000.0)
    assert c is not None and np.all(np.isfinite(c))
    bank = chain([("PI20", {"centre_hz": 1000.0, "gain": 0.5})])
    bank.set(0, "n0.gain", gain)
    y = feed(bank, np.random.default_rng(0).uniform(-1, 1, 600).astype(np.float32), "n0")
    assert np.all(np.isfinite(y)) and np.max(np.abs(y)) < 1e-15


def test_peak_bypasses_only_at_unity_gain():
    assert peaking(2000.0, 1.0, 3.0) is None
    assert peaking(2000.0, float(np.nextafter(f32(1.0), f32(2.0))), 3.0) is not None


# -------------------------------------------------------------------------------------- fma
def _triples(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scale = lambda: 2.0 ** rng.integers(-40, 40, n)  # noqa: E731
    a = (rng.standard_normal(n) * scale()).astype(np.float32)
    b = (rng.standard_normal(n) * scale()).astype(np.float32)
    c = (rng.standard_normal(n) * scale()).astype(np.float32)
    near = rng.random(n) < 0.5  # half of them with c near -a*b: heavy cancellation
    c[near] = (-(a[near].astype(np.float64) * b[near]) * (1 + rng.standard_normal(near.sum()) * 1e-6)).astype(
        np.float32
    )
    return a, b, c


def test_float32_fma_is_correctly_rounded_against_an_exact_reference():
    a, b, c = _triples(np.random.default_rng(11), 4000)
    ref = np.array([exact_fma(*t) for t in zip(a, b, c, strict=True)], dtype=np.float32)
    assert np.array_equal(_fma_hw(a, b, c).view(np.int32), ref.view(np.int32))
    assert np.array_equal(_fma_sw(a, b, c).view(np.int32), ref.view(np.int32))


def test_float32_fma_survives_the_double_rounding_case():
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a float32 midpoint; + 2^-80 must round UP.
    a = np.array([1 + 2**-12], np.float32)
    c = np.array([2.0**-80], np.float32)
    naive = f32(float(a[0]) * float(a[0]) + float(c[0]))  # float64 sum, then float32: wrong
    right = exact_fma(a[0], a[0], c[0])
    assert naive != right and right == f32(1 + 2**-11 + 2**-23)
    assert _fma_hw(a, a, c)[0] == right and _fma_sw(a, a, c)[0] == right
    assert _fma_sw(-a, a, -c)[0] == -right


def test_float32_fma_handles_subnormal_results():
    a = np.array([2.0**-75, 3e-39], np.float32)
    b = np.array([2.0**-74 * 1.5, 0.5], np.float32)
    c = np.array([2.0**-149, -1e-45], np.float32)
    ref = np.array([exact_fma(*t) for t in zip(a, b, c, strict=True)], dtype=np.float32)
    assert np.array_equal(_fma_hw(a, b, c), ref) and np.array_equal(_fma_sw(a, b, c), ref)


# ------------------------------------------------------------------------ the DF1 kernel
def ref_df1(x: np.ndarray, co: np.ndarray, t0: int = 0) -> np.ndarray:
    """Plain-Python Direct Form I with the console's association by position in the group of 8."""
    b0, b1, b2, a1, a2 = (f32(v) for v in co)
    bias = f32(1e-18)
    x1 = x2 = y1 = y2 = f32(0)
    out = np.empty_like(x)
    for i, x0 in enumerate(x):
        pos = (t0 + i) % 8
        if pos == 0:
            t = exact_fma(b1, x1, exact_fma(b2, x2, b0 * x0 + bias))
        elif pos == 1:
            t = exact_fma(b2, x2, exact_fma(b1, x1, b0 * x0 + bias))
        else:
            t = exact_fma(b0, x0, exact_fma(b2, x2, b1 * x1 + bias))
        y0 = exact_fma(-a2, y2, exact_fma(-a1, y1, t))
        x2, x1, y2, y1 = x1, x0, y1, y0
        out[i] = y0
    return out


@pytest.mark.parametrize(
    "kind,params",
    [
        ("LI20", {"cutoff_hz": 3489.0}),
        ("HI20", {"cutoff_hz": 379.0}),
        ("PI20", {"centre_hz": 2336.429, "gain": 0.2575, "q": 3.0}),
    ],
)
def test_kernel_association_by_position_in_the_group_of_8(kind, params, chain):
    bank = chain([(kind, params)])
    x = np.random.default_rng(5).uniform(-1, 1, 300).astype(np.float32)
    y = feed(bank, x, "n0", block=37)[0]
    co = bank.by_id["n0"].coefs[0]
    assert np.array_equal(y.view(np.int32), ref_df1(x, co).view(np.int32))


def test_groups_follow_the_absolute_sample_index_not_the_call(chain):
    x = np.random.default_rng(6).uniform(-1, 1, 200).astype(np.float32)
    outs = []
    for block in (1, 3, 8, 13, 200):
        bank = chain([("LI20", {"cutoff_hz": 5000.0}), ("PI20", {"centre_hz": 1200.0, "gain": 0.3})])
        outs.append(feed(bank, x, "n1", block=block))
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


def test_the_association_is_observable():
    # the positions really differ: a single association would not reproduce the kernel
    rng = np.random.default_rng(7)
    co = ref_pass(12_000.0, False)
    x = rng.uniform(-1, 1, 400).astype(np.float32)
    shifted = ref_df1(x, co, t0=3)
    assert not np.array_equal(ref_df1(x, co), shifted)


# ------------------------------------------------------------------------------ magnitudes
@pytest.mark.parametrize("fc", [379.0, 3489.0, 12_000.0])
def test_float32_filters_keep_the_cookbook_response(fc):
    for ba in (lowpass(fc), highpass(fc)):
        h = signal.freqz(*ba, worN=[fc, fc / 8, min(fc * 8, 23_000.0)], fs=48_000)[1]
        assert abs(h[0]) == pytest.approx(1.0, rel=2e-4)  # Q = 1: 0 dB at the cutoff
    lp = np.abs(signal.freqz(*lowpass(fc), worN=[fc / 8], fs=48_000)[1][0])
    hp = np.abs(signal.freqz(*highpass(fc), worN=[fc / 8], fs=48_000)[1][0])
    assert lp == pytest.approx(1.0, abs=0.02) and hp < 0.03


# ------------------------------------------------------------------------ float32 curves
def test_peak_curves_evaluate_in_float32_step_by_step():
    from audio.dsp.curves import interp_f32
    from audio.games.skate.speech.mixcurves import PEAK_CENTRE, PEAK_GAIN, peak

    for raw in (0, 1000, 2614, 9000, 16384, 30000, 32767, 40000, 60000):
        a = raw if raw <= 32767 else 65536 - raw
        want = []
        for curve in (PEAK_CENTRE, PEAK_GAIN):
            x = [f32(v) for v in curve.xs]
            y = [f32(v) for v in curve.ys]
            v = f32(a)
            if v < x[0]:
                want.append(y[0])
            elif v >= x[-1]:
                want.append(y[-1])
            else:
                i = max(k for k in range(len(x)) if x[k] <= v)
                want.append(y[i] + (y[i + 1] - y[i]) * (v - x[i]) / (x[i + 1] - x[i]))
        assert peak(raw)[:2] == (float(want[0]), float(want[1]))
        assert interp_f32(PEAK_GAIN.xs, PEAK_GAIN.ys, np.array([a]))[0] == want[1]


def test_distance_delay_is_float32():
    from audio.games.skate.speech.voice import DelayCountdown

    d = DelayCountdown(factor=1.3).at(0, lambda frame: 17.77)
    assert d == float(f32(f32(f32(1.3) * f32(17.77)) / f32(344.0)))
