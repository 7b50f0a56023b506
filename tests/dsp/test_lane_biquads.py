"""The lane biquad kernels (LLVM IR on float32 vectors) compute, lane by lane, exactly what a
plain-Python Direct Form I with exactly rounded fmas computes: one to three filters in series,
a gain in front or between two, with and without a bypassed lane, odd block lengths and
starting positions, the filters' history carried from one call to the next; two filters each
on its own input in one loop (the echo submix's HPF and LPF); and they write nothing outside
their lanes, nor an output passed as None."""

from __future__ import annotations

from functools import cache

import numba as nb
import numpy as np
import pytest
from test_float32_filters import ref_df1

from audio.dsp import kernels as K
from audio.dsp.filters import pass_coefs, peaking_coefs

f32 = np.float32
LANES = 16
ROWS = 160


@cache
def _caller(filters: int, width: int, gain_at: int | None):
    """A compiled function calling the intrinsic (intrinsics run only inside compiled code)."""
    kern = K.lane_biquads(filters, width, gain_at)
    ys = ", ".join(f"y{f}" for f in range(filters))
    more = ", gv, gb, steady" if gain_at is not None else ""
    scope = {"kern": kern, "nb": nb}
    params = f"x, {ys}, n, t0, co, st, by{more}"
    exec(f"@nb.njit\ndef call({params}):\n    kern({params})\n", scope)
    return scope["call"]


def _coefs(rng: np.random.Generator, filters: int) -> np.ndarray:
    """(filters, 5, LANES): a different real high-pass, low-pass or peak per filter and lane
    (b0, b1, b2, a1, a2, as the banks store them)."""
    co = np.zeros((filters, 5, LANES), f32)
    for f in range(filters):
        for j in range(LANES):
            out = np.zeros(5, f32)
            kind = (f + j) % 3
            if kind == 2:
                peaking_coefs(float(rng.uniform(300, 6000)), float(rng.uniform(0.1, 0.9)), 3.0, 48_000.0, out)
            else:
                pass_coefs(float(rng.uniform(60, 12_000)), 48_000.0, kind == 0, out)
            co[f, :, j] = out
    return co


@pytest.mark.parametrize("filters", [1, 2, 3])
@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize(("t0", "n1", "n2"), [(0, 64, 64), (5, 13, 27), (3, 1, 8), (8, 40, 17)])
@pytest.mark.parametrize("gain", ["none", "held", "ramp"])
@pytest.mark.parametrize("bypass", [True, False])  # the loops with and without the lane blends
def test_lane_biquads_match_plain_df1_per_lane(filters, width, t0, n1, n2, gain, bypass):
    rng = np.random.default_rng(filters * 1000 + width * 10 + t0 + n1)
    x = (0.5 * rng.standard_normal((ROWS, LANES))).astype(f32)
    co = _coefs(rng, filters)
    by = np.zeros((filters, LANES), np.bool_)
    by[filters - 1, 1] = bypass  # one bypassed lane (its output is its input)
    gv = rng.uniform(0.1, 2.0, LANES).astype(f32)
    gb = rng.uniform(0.1, 2.0, (ROWS, LANES)).astype(f32)
    # the kernel's coefficient layout: b0, b1, b2, -a1, -a2
    kco = co.copy()
    kco[:, 3:] = -co[:, 3:]
    st = np.zeros((filters, 4, LANES), f32)
    ys = [np.full((ROWS, LANES), np.nan, f32) for _ in range(filters)]
    gain_at = None if gain == "none" else 0 if gain == "held" else filters - 1  # in front; before the last
    call = _caller(filters, width, gain_at)
    for start, n in ((0, n1), (n1, n2)):  # two calls: the history carries over
        xs = x[start:]
        views = [y[start:] for y in ys]
        if gain == "none":
            call(xs, *views, n, t0 + start, kco, st, by)
        else:
            call(xs, *views, n, t0 + start, kco, st, by, gv, gb[start:], gain == "held")
    n = n1 + n2
    for j in range(width):
        sig = x[:n, j]
        for f in range(filters):
            if f == gain_at:
                sig = sig * (gv[j] if gain == "held" else gb[:n, j])
            sig = sig.copy() if by[f, j] else ref_df1(sig, co[f, :, j], t0)
            assert np.array_equal(ys[f][:n, j], sig), (f, j)
    for y in ys:
        assert np.isnan(y[n:]).all() and np.isnan(y[:, width:]).all()  # nothing else written


@pytest.mark.parametrize("skipped", [(0,), (1,), (0, 1)])
def test_an_output_passed_as_none_is_not_stored_and_the_others_are_unchanged(skipped):
    rng = np.random.default_rng(sum(skipped) + 7)
    x = (0.5 * rng.standard_normal((ROWS, LANES))).astype(f32)
    kco = _coefs(rng, 3)
    kco[:, 3:] = -kco[:, 3:]
    by = np.zeros((3, LANES), np.bool_)
    full = [np.full((ROWS, LANES), np.nan, f32) for _ in range(3)]
    _caller(3, 16, None)(x, *full, 100, 3, kco, np.zeros((3, 4, LANES), f32), by)
    part = [np.full((ROWS, LANES), np.nan, f32) for _ in range(3)]
    args = [None if f in skipped else part[f] for f in range(3)]
    _caller(3, 16, None)(x, *args, 100, 3, kco, np.zeros((3, 4, LANES), f32), by)
    for f in range(3):
        if f in skipped:
            assert np.isnan(part[f]).all()
        else:
            assert np.array_equal(part[f].view(np.int32), full[f].view(np.int32))


@cache
def _parallel_caller(width: int):
    """A compiled function calling the two-input kernel."""
    kern = K.lane_biquads(2, width, parallel=True)
    scope = {"kern": kern, "nb": nb}
    params = "x0, y0, x1, y1, n, t0, co, st, by"
    exec(f"@nb.njit\ndef call({params}):\n    kern({params})\n", scope)
    return scope["call"]


@pytest.mark.parametrize("width", [8, 16])
@pytest.mark.parametrize(("t0", "n1", "n2"), [(0, 64, 64), (5, 13, 27), (3, 1, 8)])
@pytest.mark.parametrize("bypass", [True, False])
def test_parallel_lane_biquads_filter_each_input_on_its_own(width, t0, n1, n2, bypass):
    rng = np.random.default_rng(width * 10 + t0 + n1)
    xs = [(0.5 * rng.standard_normal((ROWS, LANES))).astype(f32) for _ in range(2)]
    co = _coefs(rng, 2)
    by = np.zeros((2, LANES), np.bool_)
    by[1, 2] = bypass
    kco = co.copy()
    kco[:, 3:] = -co[:, 3:]
    st = np.zeros((2, 4, LANES), f32)
    ys = [np.full((ROWS, LANES), np.nan, f32) for _ in range(2)]
    call = _parallel_caller(width)
    for start, n in ((0, n1), (n1, n2)):  # two calls: the history carries over
        call(xs[0][start:], ys[0][start:], xs[1][start:], ys[1][start:], n, t0 + start, kco, st, by)
    n = n1 + n2
    for f in range(2):
        for j in range(width):
            sig = xs[f][:n, j]
            want = sig if by[f, j] else ref_df1(sig, co[f, :, j], t0)
            assert np.array_equal(ys[f][:n, j].view(np.int32), want.view(np.int32)), (f, j)
        assert np.isnan(ys[f][n:]).all() and np.isnan(ys[f][:, width:]).all()  # nothing else written


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("n", [1, 31, 64])
def test_lane_scale_multiplies_each_lane_in_float32(width, n):
    rng = np.random.default_rng(width + n)
    x = rng.standard_normal((ROWS, LANES)).astype(f32)
    gv = rng.uniform(0, 2, LANES).astype(f32)
    gb = rng.uniform(0, 2, (ROWS, LANES)).astype(f32)
    kern = K.lane_scale(width)
    for steady in (True, False):
        y = np.full((ROWS, LANES), np.nan, f32)
        scope = {"kern": kern, "nb": nb}
        exec("@nb.njit\ndef call(x, y, n, gv, gb, steady):\n    kern(x, y, n, gv, gb, steady)\n", scope)
        scope["call"](x, y, n, gv, gb, steady)
        g = gv[None, :width] if steady else gb[:n, :width]
        assert np.array_equal(y[:n, :width], x[:n, :width] * g)
        assert np.isnan(y[n:]).all() and np.isnan(y[:, width:]).all()
