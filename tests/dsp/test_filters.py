"""The voice chain's filters against physical facts (RBJ cookbook, spec section 5.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bankfeed import feed
from scipy import signal

from audio.dsp.filters import highpass, lowpass, peaking


def magnitude(ba, f_hz: float, sample_rate: float = 48_000) -> float:
    """|H(f)| by scipy.signal.freqz (independent of the module under test)."""
    b, a = ba
    return float(np.abs(signal.freqz(b, a, worN=[f_hz], fs=sample_rate)[1][0]))


@pytest.mark.parametrize("centre,gain,q", [(600.0, 0.4, 3.0), (4000.0, 0.222143, 3.0), (1000.0, 2.0, 1.0)])
def test_peaking_gain_at_centre_equals_linear_gain(centre, gain, q):
    assert magnitude(peaking(centre, gain, q), centre) == pytest.approx(gain, rel=1e-5)


@pytest.mark.parametrize("sample_rate", [44_100, 48_000])
@pytest.mark.parametrize("fc", [77.0, 379.0, 3489.0, 12000.0])
def test_q1_pass_filters_are_unity_at_the_cutoff(sample_rate, fc):
    # RBJ low/high-pass at Q = 1: |H(fc)| = Q = 1 (0 dB), a 6 dB peak over the -3 dB Butterworth.
    # In float32, n = 1 - cos(w) loses bits at low cutoffs: ~cos(w) * 6e-8 / (w^2/2) relative.
    tol = max(1e-4, 3 * 6e-8 / (2 * math.pi * fc / sample_rate) ** 2)
    assert magnitude(lowpass(fc, sample_rate), fc, sample_rate) == pytest.approx(1.0, rel=tol)
    assert magnitude(highpass(fc, sample_rate), fc, sample_rate) == pytest.approx(1.0, rel=1e-4)


def test_pass_filters_bypass_exactly_at_the_thresholds():
    assert highpass(24.0) is None and highpass(0.0) is None
    assert highpass(25.0) is not None
    assert lowpass(23_976.0) is None and lowpass(96_000.0) is None
    assert lowpass(23_975.0) is not None
    assert peaking(2000.0, 1.0, 3.0) is None
    assert peaking(2000.0, 0.999, 3.0) is not None


def test_peaking_clamps_q_and_frequency():
    assert np.allclose(peaking(1000.0, 0.5, 100.0)[0], peaking(1000.0, 0.5, 20.0)[0])
    assert np.allclose(peaking(1000.0, 0.5, 0.01)[0], peaking(1000.0, 0.5, 0.2)[0])
    assert np.allclose(peaking(96_000.0, 0.5, 3.0)[0], peaking(0.999 * 24_000.0, 0.5, 3.0)[0])


def test_bypassed_node_is_an_exact_pass_through(chain):
    bank = chain([("HI20", {"cutoff_hz": 24.0}), ("LI20", {"cutoff_hz": 23_976.0}), ("PI20", {"gain": 1.0})])
    x = np.random.default_rng(1).uniform(-1, 1, 3000).astype(np.float32)
    assert np.array_equal(feed(bank, x, "n2")[0], x)


def test_node_biquad_matches_scipy_direct_form(chain):
    bank = chain([("LI20", {"cutoff_hz": 3489.0})])
    x = np.random.default_rng(2).uniform(-1, 1, 5000).astype(np.float32)
    y = feed(bank, x, "n0", block=333)[0]
    b, a = lowpass(3489.0)
    ref = signal.lfilter(b, a, x.astype(np.float64)).astype(np.float32)
    assert np.max(np.abs(y - ref)) < 1e-5


def test_entering_bypass_clears_history(chain):
    bank = chain([("HI20", {"cutoff_hz": 500.0})])
    x = np.ones(1000, np.float32)
    feed(bank, x, "n0")
    bank.set(0, "n0.cutoff_hz", 0.0)
    bank.set(0, "n0.cutoff_hz", 500.0)  # dirty twice in one block: the last value wins, no bypass
    y = feed(bank, np.zeros(10, np.float32), "n0")
    assert np.any(y != 0)  # history kept (never bypassed)
    bank.set(0, "n0.cutoff_hz", 0.0)
    feed(bank, np.zeros(10, np.float32), "n0")
    bank.set(0, "n0.cutoff_hz", 500.0)
    y = feed(bank, np.zeros(10, np.float32), "n0")
    fresh = chain([("HI20", {"cutoff_hz": 500.0})])
    # bypass cleared the history: the same output as a new filter (only the 1e-18 bias rings)
    assert np.array_equal(y, feed(fresh, np.zeros(10, np.float32), "n0"))
    assert np.all(np.abs(y) < 1e-15)


def test_filter_response_measured_through_the_node(chain):
    fc = 1000.0
    bank = chain([("PI20", {"centre_hz": fc, "gain": 0.25, "q": 3.0})])
    t = np.arange(48_000) / 48_000
    x = np.sin(2 * math.pi * fc * t).astype(np.float32)
    y = feed(bank, x, "n0")[0]
    steady = y[24_000:]
    assert np.sqrt(np.mean(steady**2)) / np.sqrt(0.5) == pytest.approx(0.25, rel=2e-3)
