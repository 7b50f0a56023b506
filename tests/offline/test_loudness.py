"""The one-pass BS.1770 meter against pyloudnorm (the reference the batch report used)."""

from __future__ import annotations

import math

import numpy as np
import pyloudnorm
import pytest

from audio.offline.loudness import LoudnessMeter, integrated_loudness


def _speechlike(n: int, channels: int, seed: int) -> np.ndarray:
    """Bursts of filtered noise with pauses (so both gates matter), -30..-6 dBFS."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, channels)) * 0.1
    env = np.repeat(rng.uniform(0.0, 1.0, n // 4800 + 1) > 0.35, 4800)[:n]
    gain = np.repeat(10 ** (rng.uniform(-30, -6, n // 9600 + 1) / 20), 9600)[:n]
    return (x * (env * gain)[:, None]).astype(np.float32)


@pytest.mark.parametrize("channels", [1, 2, 5])
@pytest.mark.parametrize("seconds", [0.4, 0.45, 3.0, 17.3])
@pytest.mark.parametrize("sample_rate", [48_000, 44_100])
def test_loudness_agrees_with_pyloudnorm(channels, seconds, sample_rate):
    x = _speechlike(int(seconds * sample_rate), channels, seed=channels * 100 + int(seconds * 10))
    want = pyloudnorm.Meter(sample_rate).integrated_loudness(x.astype(np.float64))
    got = integrated_loudness(x, sample_rate)
    assert got == pytest.approx(want, abs=0.01)
    assert abs(got - want) < 1e-6  # the same arithmetic, only summed in another order


def test_51_excludes_lfe_and_weights_the_surrounds_as_five_channels_in_pyloudnorms_order():
    x = _speechlike(48_000 * 4, 6, seed=7)  # barkbus 5.1: L R C LFE Ls Rs
    five = x[:, [0, 1, 2, 4, 5]]  # pyloudnorm: L R C Ls Rs
    want = pyloudnorm.Meter(48_000).integrated_loudness(five.astype(np.float64))
    assert integrated_loudness(x, 48_000) == pytest.approx(want, abs=1e-6)
    x[:, 3] = 0.9  # a loud LFE changes nothing
    assert integrated_loudness(x, 48_000) == pytest.approx(want, abs=1e-6)


def test_silence_is_minus_infinity_and_a_short_input_is_nan():
    assert integrated_loudness(np.zeros((48_000, 2), np.float32), 48_000) == -math.inf
    assert math.isnan(integrated_loudness(np.zeros(19_199, np.float32), 48_000))


def test_a_full_scale_1khz_sine_reads_as_the_standard_says():
    # BS.1770: a 0 dBFS 997 Hz sine on one channel reads -3.01 LUFS (K-weighting gain ~0 dB there)
    t = np.arange(48_000 * 5) / 48_000
    x = np.sin(2 * np.pi * 997 * t)
    assert integrated_loudness(x, 48_000) == pytest.approx(-3.01, abs=0.05)


def test_the_stereo_running_sum_and_the_many_channel_path_measure_alike():
    """Mono and stereo sum the power as they go; more channels sum it per sample first: a stereo
    signal doubled into four channels at half weight measures as the stereo signal."""
    x = (0.2 * np.random.default_rng(5).standard_normal((48_000 * 3, 2))).astype(np.float32)
    four = np.concatenate([x, x], axis=1)
    got = integrated_loudness(four, 48_000, weights=np.array([0.5, 0.5, 0.5, 0.5]))
    assert got == pytest.approx(integrated_loudness(x, 48_000), abs=1e-9)


@pytest.mark.parametrize("channels", [1, 2, 5, 6])
def test_a_meter_fed_in_uneven_chunks_measures_bit_for_bit_as_the_whole_input(channels):
    rng = np.random.default_rng(channels)
    x = _speechlike(48_000 * 6 + 321, channels, seed=channels)
    x[1000, 0] = -1.25  # two full-scale samples
    x[2000, -1] = 1.0
    meter = LoudnessMeter(48_000, channels, x.shape[0])
    i = 0
    while i < x.shape[0]:
        k = int(rng.integers(1, 40_000))
        meter.add(x[i : i + k])
        i += k
    assert meter.integrated() == integrated_loudness(x, 48_000)
    assert meter.peak == float(np.abs(x).max()) == 1.25
    assert meter.clipped == int(np.count_nonzero(np.abs(x) >= 1.0)) == 2


def test_a_meter_reports_a_nan_sample_as_a_nan_peak_and_refuses_more_samples_than_announced():
    meter = LoudnessMeter(48_000, 2, 3)
    meter.add(np.array([[0.5, 0.1], [np.nan, 0.2]], np.float32))
    meter.add(np.array([[0.9, 0.1]], np.float32))
    assert math.isnan(meter.peak)
    with pytest.raises(ValueError, match="4 samples fed to a meter of 3"):
        meter.add(np.zeros((1, 2), np.float32))


def _k_weighted_power(x: np.ndarray, sample_rate: int) -> tuple[np.ndarray, list[float]]:
    """Per-sample ``sum_c kw(x[:, c]) ** 2`` computed plainly (both biquads on every sample, in
    float64, transposed direct form II) and the last channel's four filter states."""
    from audio.offline.loudness import k_weighting_sos

    (b0, b1, b2, _, a1, a2), (c0, c1, c2, _, d1, d2) = k_weighting_sos(sample_rate).tolist()
    power = np.zeros(x.shape[0])
    for c in range(x.shape[1]):
        p0 = p1 = q0 = q1 = 0.0
        out = []
        for v in x[:, c].tolist():
            y = b0 * v + p0
            p0, p1 = b1 * v - a1 * y + p1, b2 * v - a2 * y
            z = c0 * y + q0
            q0, q1 = c1 * y - d1 * z + q1, c2 * y - d2 * z
            out.append(z * z)
        power += np.array(out)
    return power, [p0, p1, q0, q1]


def test_long_exact_silences_rest_the_filters_and_change_no_power_sum():
    sample_rate = 8_000  # the 38 Hz high-pass decays to under 1e-100 within about 1 s here
    burst = _speechlike(sample_rate, 2, seed=3)
    silence = np.zeros((5 * sample_rate, 2), dtype=np.float32)
    x = np.concatenate([burst, silence, burst[::-1], silence])
    power, states = _k_weighted_power(x, sample_rate)
    assert any(s != 0.0 for s in states)  # computed plainly, the high-pass ends on subnormals
    meter = LoudnessMeter(sample_rate, 2, x.shape[0])
    meter.add(x[:30_001])
    meter.add(x[30_001:])
    assert not meter._state.any()  # at rest after the final silence
    got = meter.integrated()
    running = np.concatenate([[0.0], np.cumsum(power)])  # summed in sample order, as the meter
    assert np.array_equal(meter._sums, running[meter._marks])
    assert got == integrated_loudness(x, sample_rate)
