"""The one-pass BS.1770 meter against pyloudnorm (the reference the batch report used)."""

from __future__ import annotations

import math

import numpy as np
import pyloudnorm
import pytest
import scipy.signal
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.offline.loudness import LoudnessMeter, channel_weights, integrated_loudness, k_weighting_sos


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


def _plain_power_sums(x: np.ndarray, sample_rate: int, marks: np.ndarray) -> np.ndarray:
    """``sum(p[:mark])`` for each mark, ``p[i] = sum_c g[c] * kw(x[:, c])[i] ** 2`` with the
    K-weighting run plainly over the whole input in float64 (scipy's second-order sections)."""
    weights = channel_weights(x.shape[1])
    kw = scipy.signal.sosfilt(k_weighting_sos(sample_rate), x.astype(np.float64), axis=0)
    power = (kw * kw) @ weights
    return np.concatenate([[0.0], np.cumsum(power)])[marks]


def _bursts_and_silences(sample_rate: int, channels: int) -> np.ndarray:
    """Speech-like bursts of 49,152 samples (a multiple of the meter's groups, so a silence
    starts at one) between exact silences of 0.1 to 3 s, one of them ending the input."""
    burst = _speechlike(49_152, channels, seed=3)
    parts = []
    for seconds in (0.1, 3.0, 0.7, 1.9, 3.0):
        parts += [burst, np.zeros((int(seconds * sample_rate), channels), np.float32)]
        burst = burst[::-1]
    return np.concatenate(parts)


@pytest.mark.parametrize("channels", [1, 2, 5])
def test_the_power_sums_at_the_block_bounds_are_those_of_a_plain_filter_over_the_whole_input(channels):
    x = _bursts_and_silences(48_000, channels)
    meter = LoudnessMeter(48_000, channels, x.shape[0])
    meter.add(x)
    meter.integrated()
    want = _plain_power_sums(x, 48_000, meter._marks)
    np.testing.assert_allclose(meter._sums, want, rtol=1e-12, atol=0.0)


def test_long_exact_silences_set_the_filters_to_rest_without_changing_the_power_sums():
    x = _bursts_and_silences(48_000, 2)  # 3 s of exact zeros at the end
    meter = LoudnessMeter(48_000, 2, x.shape[0])
    meter.add(x)
    assert not meter._carry.any()  # at rest: every state exactly zero
    meter.integrated()
    np.testing.assert_allclose(meter._sums, _plain_power_sums(x, 48_000, meter._marks), rtol=1e-12, atol=0.0)


_CHUNKED = _speechlike(3 * 8192 + 4321, 2, seed=11)
_CHUNKED[9000:30000] = 0.0  # a silence across segment and group bounds


@settings(max_examples=examples(100))
@given(st.lists(st.integers(1, _CHUNKED.shape[0] - 1), max_size=12, unique=True))
def test_any_chunking_measures_bit_for_bit_as_the_whole_input(cuts):
    whole = LoudnessMeter(48_000, 2, _CHUNKED.shape[0])
    whole.add(_CHUNKED)
    chunked = LoudnessMeter(48_000, 2, _CHUNKED.shape[0])
    bounds = [0, *sorted(cuts), _CHUNKED.shape[0]]
    for lo, hi in zip(bounds, bounds[1:]):
        chunked.add(_CHUNKED[lo:hi])
    assert chunked.integrated() == whole.integrated()
    assert np.array_equal(chunked._sums, whole._sums)


def test_chunks_in_another_memory_order_or_float_type_measure_bit_for_bit_alike():
    x = _speechlike(48_000 * 2 + 77, 2, seed=4)
    want = LoudnessMeter(48_000, 2, x.shape[0])
    want.add(x)
    meter = LoudnessMeter(48_000, 2, x.shape[0])
    meter.add(np.asfortranarray(x[:30_000].astype(np.float64)))  # the same values, column-major
    meter.add(x[30_000:, ::-1][:, ::-1])  # a view with negative strides
    assert meter.integrated() == want.integrated()
    assert np.array_equal(meter._sums, want._sums)
