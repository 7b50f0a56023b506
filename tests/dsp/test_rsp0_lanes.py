"""The vector resampler (:func:`audio.dsp.kernels.rsp0_lanes16`, sixteen instances' 16.16 walks
in one kernel, transposed into lanes) computes, lane by lane, exactly what a plain-Python walk
of the spec's linear interpolation computes (float32 difference, float64 product and sum,
rounded to float32), for steps up to 2.0, odd block lengths and lanes switched off; and the
group wrapper the fused kernels call (vector lanes plus the scalar per-voice walk for the
rest) leaves every instance's output and state exactly as the scalar resampler does."""

from __future__ import annotations

from functools import cache

import numba as nb
import numpy as np
import pytest

from audio.dsp import kernels as K
from audio.dsp.fused import lanes_module

f32 = np.float32
LANES = 16


@cache
def _caller(native: bool):
    """A compiled function calling the intrinsic (intrinsics run only inside compiled code)."""
    kern = K.rsp0_lanes16 if native else K.rsp0_lanes16_portable

    @nb.njit
    def call(t, n, pool, act, g0, src_off, ipos, frac, step, mask):
        kern(t, n, pool, act, g0, src_off, ipos, frac, step, mask)

    return call


def _walk(pool: np.ndarray, pos: int, fr: int, st: int, n: int) -> list[float]:
    """The spec's resampler, sample by sample, in plain Python: out = a + (b - a) * fr / 65536,
    then advance the 16.16 position by the step."""
    out = []
    for _ in range(n):
        a, b = pool[pos], pool[pos + 1]
        out.append(f32(float(a) + float(f32(b - a)) * (fr / 65536.0)))
        acc = fr + st
        pos, fr = pos + (acc >> 16), acc & 0xFFFF
    return out


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("n", [1, 13, 16, 17, 100, 256])
def test_rsp0_lanes16_matches_plain_walk_per_lane(native, n):
    if native and not K._host_permute():
        pytest.skip("no AVX-512F on this CPU")
    rng = np.random.default_rng(n + 100 * native)
    pool = (0.5 * rng.standard_normal(40_000)).astype(f32)
    cap = 40
    act = rng.permutation(cap)[:20].astype(np.int64)  # non-contiguous instance indexes
    g0 = 3
    src_off = rng.integers(0, 1_000, cap).astype(np.int64) * 30
    ipos = rng.integers(0, 400, cap).astype(np.int64)
    frac = rng.integers(0, 65_536, cap).astype(np.int64)
    steps = [
        49_152,
        65_536,
        1,
        0,
        131_072,
        131_071,
        12_345,
        98_304,
        36_000,
        65_535,
        2,
        100_000,
        49_151,
        70_000,
        5,
        40_000,
    ]
    step = np.zeros(cap, np.int64)
    for j in range(LANES):
        step[act[g0 + j]] = steps[j]
    mask = sum(1 << j for j in range(LANES) if j not in (2, 9, 15))  # three lanes off
    t = np.full((n + 5, LANES), np.nan, f32)
    before = (ipos.copy(), frac.copy())
    _caller(native)(t, n, pool, act, g0, src_off, ipos, frac, step, mask)
    assert np.array_equal(before[0], ipos) and np.array_equal(before[1], frac)  # state not advanced
    for j in range(LANES):
        v = act[g0 + j]
        if (mask >> j) & 1:
            want = np.array(_walk(pool, int(src_off[v] + ipos[v]), int(frac[v]), int(step[v]), n), f32)
        else:
            want = np.zeros(n, f32)
        assert np.array_equal(t[:n, j].view(np.uint32), want.view(np.uint32)), j
    assert np.isnan(t[n:]).all()  # nothing written after sample n


def _voice_state(cap: int, grp: np.ndarray, rng: np.random.Generator, pool_len: int) -> dict[str, np.ndarray]:
    """Every kind of instance in the group ``grp``: playing (steps 0.3 to 2.1, some dirty
    pitches), one step beyond the vector kernel's, waiting, releasing, ended, running out of
    source inside the block, a source ending at the pool's last sample."""
    s = {
        "src_off": rng.integers(0, pool_len - 3_000, cap).astype(np.int64),
        "src_len": np.full(cap, 2_500, np.int64),
        "ipos": rng.integers(0, 1_000, cap).astype(np.int64),
        "frac": rng.integers(0, 65_536, cap).astype(np.int64),
        "step": rng.integers(20_000, 140_000, cap).astype(np.int64),
        "wait": np.zeros(cap, np.int64),
        "rel_left": np.zeros(cap, np.int64),
        "rel_total": np.full(cap, 300, np.int64),
        "ended_at": np.full(cap, -1, np.int64),
        "dirty": np.zeros(cap, np.bool_),
        "pitch": rng.uniform(1_000.0, 12_000.0, cap),
        "src_sample_rate": np.full(cap, 36_000.0),
    }
    s["step"][grp[1]] = 160_000
    s["dirty"][grp[[2, 5]]] = True
    s["wait"][grp[3]] = 40
    s["rel_left"][grp[4]] = 100
    s["ended_at"][grp[6]] = 7
    s["ipos"][grp[7]] = 2_450
    v = grp[8]
    s["src_off"][v], s["ipos"][v], s["frac"][v], s["step"][v] = pool_len - 2_500, 2_230, 0, 65_536
    return s


@pytest.mark.parametrize("m", [9, 16])
def test_rsp0_lanes_group_matches_scalar_resampler(m):
    """Block after block, a group's lanes and state equal :func:`audio.dsp.kernels.rsp0`'s."""
    LN = lanes_module()
    rng = np.random.default_rng(m)
    pool_len = 30_000
    pool = (0.5 * rng.standard_normal(pool_len)).astype(f32)
    cap = 24
    act = np.array([0, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 19, 20, 22, 23], np.int64)[: m + 2]
    g0 = 2
    lanes = _voice_state(cap, act[g0 : g0 + m], rng, pool_len)
    rows = {k: v.copy() for k, v in lanes.items()}
    t0 = 0
    for n in (256, 37, 1, 200, 256):
        t = np.full((n, LANES), np.nan, f32)
        y = np.full((cap, 1, n), np.nan, f32)
        L, R = lanes, rows
        LN.rsp0_lanes(
            act, g0, m, 16, t, n, t0, pool, L["src_off"], L["src_len"], L["dirty"], L["pitch"],
            L["src_sample_rate"], 48_000.0, L["step"], L["ipos"], L["frac"], L["wait"], L["rel_left"],
            L["rel_total"], L["ended_at"],
        )  # fmt: skip
        K.rsp0(
            pool, R["src_off"], R["src_len"], act[g0 : g0 + m], y, n, t0, R["dirty"], R["pitch"],
            R["src_sample_rate"], 48_000.0, R["step"], R["ipos"], R["frac"], R["wait"], R["rel_left"],
            R["rel_total"], R["ended_at"],
        )  # fmt: skip
        for j in range(m):
            v = act[g0 + j]
            assert np.array_equal(t[:, j].view(np.uint32), y[v, 0].view(np.uint32)), (n, j)
        for k in lanes:
            assert np.array_equal(lanes[k], rows[k]), k
        t0 += n
