"""A send, and a pan with the send reading its output, working straight from lanes
(:func:`audio.dsp.kernels.send_lanes16`, ``send_split_lanes16``, ``pan_send_lanes16``,
``env_pan_send_lanes16`` (a split send and a pan with its send in one pass) and the group
wrappers the fused kernels call) add, sample by sample, exactly the float32 products a
plain per-instance send adds, in instance order (several instances sharing a destination),
skipping instances without one, and the pan stores exactly its products; when a level ramps,
something ducks or the group is not full, the wrappers' per-instance fallback leaves outputs,
destinations and state as :func:`audio.dsp.kernels.sen0_voice` and
:func:`audio.dsp.kernels.pn21_sen0_voice` do."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from audio.dsp import kernels as K
from audio.dsp.fused import lanes_module

f32 = np.float32
LANES = 16


@nb.njit
def _call(t, n, tgt, c, act, g0, dest, cur, mask):
    K.send_lanes16(t, n, tgt, c, act, g0, dest, cur, mask)


@nb.njit
def _call_split(t, n, tgt, c, act, g0, dest, cur, mask):
    K.send_split_lanes16(t, n, tgt, c, act, g0, dest, cur, mask)


@nb.njit
def _call_pan(t, n, act, g0, out, pan, tgt, dest, s_cur, mask, keep):
    K.pan_send_lanes16(t, n, act, g0, out, pan, tgt, dest, s_cur, mask, keep)


@pytest.mark.parametrize("n", [16, 64])
def test_send_split_lanes16_adds_each_product_to_both_channels(n):
    rng = np.random.default_rng(n + 7)
    cap = 20
    act = rng.permutation(cap).astype(np.int64)
    dest = rng.integers(0, 3, cap).astype(np.int64)
    cur = rng.uniform(0.05, 1.5, cap)
    t = rng.standard_normal((n, LANES)).astype(f32)
    tgt = rng.standard_normal((3, 2, n)).astype(f32)
    mask = (1 << LANES) - 1 - (1 << 6)
    want = tgt.copy()
    for i in range(n):
        for j in range(LANES):
            if (mask >> j) & 1:
                v = act[2 + j]
                s = f32(t[i, j] * f32(cur[v] * 0.7071067811865476))
                for c in range(2):
                    want[dest[v], c, i] = f32(want[dest[v], c, i] + s)
    _call_split(t, n, tgt, 0, act, 2, dest, cur, mask)
    assert np.array_equal(tgt.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("keep", [1, 0])
@pytest.mark.parametrize("n", [16, 128])
def test_pan_send_lanes16_stores_pan_products_only_when_kept_and_adds_send_products(n, keep):
    rng = np.random.default_rng(n + 11)
    cap = 20
    act = rng.permutation(cap).astype(np.int64)
    dest = rng.integers(0, 3, cap).astype(np.int64)
    pan = rng.uniform(0.0, 1.0, (cap, 2))
    s_cur = rng.uniform(0.05, 1.5, cap)
    t = rng.standard_normal((n, LANES)).astype(f32)
    out = np.full((cap, 2, n + 4), np.nan, f32)
    tgt = rng.standard_normal((3, 2, n)).astype(f32)
    want_tgt = tgt.copy()
    want_out = out.copy()
    for i in range(n):
        for j in range(LANES):
            v = act[1 + j]
            for c in range(2):
                p = f32(t[i, j] * f32(pan[v, c]))
                if keep:
                    want_out[v, c, i] = p
                want_tgt[dest[v], c, i] = f32(want_tgt[dest[v], c, i] + f32(p * f32(s_cur[v])))
    _call_pan(t, n, act, 1, out, pan, tgt, dest, s_cur, (1 << LANES) - 1, keep)
    assert np.array_equal(tgt.view(np.uint32), want_tgt.view(np.uint32))
    assert np.array_equal(out.view(np.uint32), want_out.view(np.uint32))  # NaN elsewhere kept


@nb.njit
def _call_env_pan(t, n, act, g0, out, pan, tgt, dest, s_cur, mask, etgt, edest, e_cur, emask, keep):
    K.env_pan_send_lanes16(t, n, act, g0, out, pan, tgt, dest, s_cur, mask, etgt, edest, e_cur, emask, keep)


@pytest.mark.parametrize("keep", [1, 0])
@pytest.mark.parametrize("n", [16, 128])
def test_env_pan_send_lanes16_is_a_split_send_and_a_pan_send_from_the_same_lanes(n, keep):
    rng = np.random.default_rng(n + 13)
    cap = 20
    act = rng.permutation(cap).astype(np.int64)
    dest, edest = (rng.integers(0, 3, cap).astype(np.int64) for _ in range(2))
    pan = rng.uniform(0.0, 1.0, (cap, 2))
    s_cur, e_cur = rng.uniform(0.05, 1.5, cap), rng.uniform(0.05, 1.5, cap)
    t = rng.standard_normal((n, LANES)).astype(f32)
    out = np.full((cap, 2, n + 4), np.nan, f32)
    tgt, etgt = rng.standard_normal((3, 2, n)).astype(f32), rng.standard_normal((3, 2, n)).astype(f32)
    emask = (1 << LANES) - 1 - (1 << 9)
    want_tgt, want_etgt, want_out = tgt.copy(), etgt.copy(), out.copy()
    for i in range(n):
        for j in range(LANES):
            v = act[3 + j]
            if (emask >> j) & 1:
                s = f32(t[i, j] * f32(e_cur[v] * 0.7071067811865476))
                for c in range(2):
                    want_etgt[edest[v], c, i] = f32(want_etgt[edest[v], c, i] + s)
            for c in range(2):
                p = f32(t[i, j] * f32(pan[v, c]))
                if keep:
                    want_out[v, c, i] = p
                want_tgt[dest[v], c, i] = f32(want_tgt[dest[v], c, i] + f32(p * f32(s_cur[v])))
    _call_env_pan(t, n, act, 3, out, pan, tgt, dest, s_cur, (1 << LANES) - 1, etgt, edest, e_cur, emask, keep)
    for got, want in ((tgt, want_tgt), (etgt, want_etgt), (out, want_out)):
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("n", [16, 48, 256])
def test_send_lanes16_adds_float32_products_in_instance_order(n):
    rng = np.random.default_rng(n)
    cap = 30
    act = rng.permutation(cap).astype(np.int64)
    g0 = 5
    dest = rng.integers(0, 4, cap).astype(np.int64)  # 16 instances onto 4 rows: shared sums
    cur = rng.uniform(0.05, 1.5, cap)  # float64 levels, rounded to float32 per product
    t = rng.standard_normal((n + 16, LANES)).astype(f32)
    tgt = rng.standard_normal((4, 2, n + 16)).astype(f32)
    mask = sum(1 << j for j in range(LANES) if j not in (4, 11))
    want = tgt.copy()
    for i in range(n):
        for j in range(LANES):
            if (mask >> j) & 1:
                v = act[g0 + j]
                want[dest[v], 1, i] = f32(want[dest[v], 1, i] + f32(t[i, j] * f32(cur[v])))
    _call(t, n, tgt, 1, act, g0, dest, cur, mask)
    assert np.array_equal(tgt.view(np.uint32), want.view(np.uint32))


def _send_state(cap: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "dirty": np.ones(cap, np.bool_),
        "level": rng.uniform(0.1, 1.0, cap),
        "cur": np.zeros(cap),
        "step": np.zeros(cap),
        "left": np.zeros(cap, np.int64),
        "init": np.zeros(cap, np.bool_),
        "dest": rng.integers(-1, 5, cap).astype(np.int64),  # -1: no destination
        "band": np.zeros(cap, np.int64),
    }


@pytest.mark.parametrize(
    ("m", "w", "nch", "ramp", "duck"),
    [
        (16, 16, 1, False, False),  # the lane path
        (16, 16, 2, False, False),  # two channels, one to one
        (16, 16, -2, False, False),  # one channel split into two
        (16, 16, 1, True, False),  # a level ramps: rows
        (16, 16, 1, False, True),  # ducking: rows
        (11, 16, 1, False, False),  # a partial full-width group: the lane path
        (7, 8, 1, False, False),  # a narrow group: rows
    ],
)
def test_send_lanes_group_matches_sen0_voice(m, w, nch, ramp, duck):
    LN = lanes_module()
    rng = np.random.default_rng(m * 10 + nch + 2 * ramp + 4 * duck)
    cap = 24
    act = rng.permutation(cap).astype(np.int64)
    g0 = 3
    lanes = _send_state(cap, rng)
    rows = {k: v.copy() for k, v in lanes.items()}
    duck_env = rng.uniform(0.2, 1.0, (1 if duck else 0, 300)).astype(f32)
    tch, nch = abs(nch), (1 if nch < 0 else nch)  # -2: one channel into two
    tgt_l = rng.standard_normal((5, tch, 300)).astype(f32)
    tgt_r = tgt_l.copy()
    for block, n in enumerate((256, 37, 16, 5, 256)):
        if ramp and block == 2:  # a new level on the second block after the first value
            for s in (lanes, rows):
                s["level"][act[g0 + 2]] = 0.9
                s["dirty"][act[g0 + 2]] = True
        t = rng.standard_normal((nch, n, LANES)).astype(f32)
        x = np.full((LANES, nch, n + 8), np.nan, f32)
        L, R = lanes, rows
        LN.send_lanes(
            act, g0, m, w, t, x, n, L["dirty"], L["level"], L["cur"], L["step"], L["left"], L["init"],
            L["dest"], tgt_l, duck_env, L["band"], False,
        )  # fmt: skip
        for j in range(m):
            v = act[g0 + j]
            xr = np.ascontiguousarray(t[:, :, j])
            K.sen0_voice(
                v, xr, n, R["dirty"], R["level"], R["cur"], R["step"], R["left"], R["init"], R["dest"],
                tgt_r, duck_env, R["band"],
            )  # fmt: skip
        assert np.array_equal(tgt_l.view(np.uint32), tgt_r.view(np.uint32)), (block, n)
        for k in lanes:
            assert np.array_equal(lanes[k], rows[k]), k


def _pan_state(cap: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "dirty": np.ones(cap, np.bool_),
        "angle": rng.uniform(0.0, 360.0, cap),
        "level": rng.uniform(0.2, 1.0, cap),
        "cur": np.zeros((cap, 2)),
        "goal": np.zeros((cap, 2)),
        "step": np.zeros((cap, 2)),
        "left": np.zeros(cap, np.int64),
        "init": np.zeros(cap, np.bool_),
        "scratch": np.zeros(8),
        "s_dirty": np.ones(cap, np.bool_),
        "s_level": rng.uniform(0.1, 1.0, cap),
        "s_cur": np.zeros(cap),
        "s_step": np.zeros(cap),
        "s_left": np.zeros(cap, np.int64),
        "s_init": np.zeros(cap, np.bool_),
        "dest": rng.integers(0, 3, cap).astype(np.int64),
        "band": np.zeros(cap, np.int64),
    }


@pytest.mark.parametrize(
    ("m", "w", "change", "duck"),
    [
        (16, 16, None, False),  # the lane path
        (13, 16, None, False),  # a partial full-width group
        (16, 16, "angle", False),  # a pan ramps: rows
        (16, 16, "s_level", False),  # the send ramps: rows
        (16, 16, "dest", False),  # an instance without a destination: rows
        (16, 16, None, True),  # ducking: rows
        (6, 8, None, False),  # a narrow group: rows
    ],
)
@pytest.mark.parametrize("keep", [True, False])
def test_pan_send_lanes_group_matches_pn21_sen0_voice(m, w, change, duck, keep):
    LN = lanes_module()
    rng = np.random.default_rng(m + w + len(change or "") + duck)
    cap = 24
    act = rng.permutation(cap).astype(np.int64)
    g0 = 4
    lanes = _pan_state(cap, rng)
    rows = {k: v.copy() for k, v in lanes.items()}
    duck_env = rng.uniform(0.2, 1.0, (1 if duck else 0, 300)).astype(f32)
    tgt_l = rng.standard_normal((3, 2, 300)).astype(f32)
    tgt_r = tgt_l.copy()
    out_l = np.full((cap, 2, 300), np.nan, f32)
    out_r = out_l.copy()
    for block, n in enumerate((256, 37, 16, 5, 256)):
        if change and block == 2:
            v = act[g0 + 3]
            for s in (lanes, rows):
                if change == "dest":
                    s["dest"][v] = -1
                else:
                    s[change][v] *= 0.5
                    s["s_dirty" if change == "s_level" else "dirty"][v] = True
        t = rng.standard_normal((1, n, LANES)).astype(f32)
        x = np.full((LANES, 1, n + 8), np.nan, f32)
        L, R = lanes, rows
        LN.pan_send_lanes(
            act, g0, m, w, t, x, out_l, n, L["dirty"], L["angle"], L["level"], 0, L["cur"], L["goal"],
            L["step"], L["left"], L["init"], L["scratch"], L["s_dirty"], L["s_level"], L["s_cur"],
            L["s_step"], L["s_left"], L["s_init"], L["dest"], tgt_l, duck_env, L["band"], False, keep,
        )  # fmt: skip
        for j in range(m):
            v = act[g0 + j]
            K.pn21_sen0_voice(
                v, np.ascontiguousarray(t[:, :, j]), out_r[v], n, R["dirty"], R["angle"], R["level"], 0,
                R["cur"], R["goal"], R["step"], R["left"], R["init"], R["scratch"], R["s_dirty"],
                R["s_level"], R["s_cur"], R["s_step"], R["s_left"], R["s_init"], R["dest"], tgt_r,
                duck_env, R["band"],
            )  # fmt: skip
        assert np.array_equal(tgt_l.view(np.uint32), tgt_r.view(np.uint32)), (block, n)
        if keep:  # else only the row paths write them (their working rows)
            assert np.array_equal(out_l.view(np.uint32), out_r.view(np.uint32)), (block, n)
        for k in lanes:
            assert np.array_equal(lanes[k], rows[k]), k


@pytest.mark.parametrize(
    ("m", "w", "change", "duck"),
    [
        (16, 16, None, False),  # the one-pass lane path
        (13, 16, None, False),  # a partial full-width group
        (16, 16, "e_level", False),  # the split send ramps: the two wrappers
        (16, 16, "angle", False),  # a pan ramps: the two wrappers
        (16, 16, "e_dest", False),  # an instance without a split-send destination: one pass
        (16, 16, "dest", False),  # an instance without a pan-send destination: the two wrappers
        (16, 16, None, True),  # ducking: the two wrappers
        (6, 8, None, False),  # a narrow group: rows
    ],
)
@pytest.mark.parametrize("keep", [True, False])
def test_env_pan_send_lanes_group_matches_sen0_voice_then_pn21_sen0_voice(m, w, change, duck, keep):
    LN = lanes_module()
    rng = np.random.default_rng(m + w + 3 * len(change or "") + duck)
    cap = 24
    act = rng.permutation(cap).astype(np.int64)
    g0 = 4
    env = _send_state(cap, rng)
    env["dest"] = rng.integers(0, 3, cap).astype(np.int64)
    lanes = {**_pan_state(cap, rng), **{f"e_{k}": v for k, v in env.items()}}
    rows = {k: v.copy() for k, v in lanes.items()}
    duck_env = rng.uniform(0.2, 1.0, (1 if duck else 0, 300)).astype(f32)
    tgt_l, etgt_l = rng.standard_normal((3, 2, 300)).astype(f32), rng.standard_normal((3, 2, 300)).astype(f32)
    tgt_r, etgt_r = tgt_l.copy(), etgt_l.copy()
    out_l = np.full((cap, 2, 300), np.nan, f32)
    out_r = out_l.copy()
    for block, n in enumerate((256, 37, 16, 5, 256)):
        if change and block == 2:
            v = act[g0 + 3]
            for s in (lanes, rows):
                if change.endswith("dest"):
                    s[change][v] = -1
                else:
                    s[change][v] *= 0.5
                    s["e_dirty" if change == "e_level" else "dirty"][v] = True
        t = rng.standard_normal((1, n, LANES)).astype(f32)
        x = np.full((LANES, 1, n + 8), np.nan, f32)
        L, R = lanes, rows
        LN.env_pan_send_lanes(
            act, g0, m, w, t, x, n, L["e_dirty"], L["e_level"], L["e_cur"], L["e_step"], L["e_left"],
            L["e_init"], L["e_dest"], etgt_l, duck_env, L["e_band"], out_l, L["dirty"], L["angle"],
            L["level"], 0, L["cur"], L["goal"], L["step"], L["left"], L["init"], L["scratch"], L["s_dirty"],
            L["s_level"], L["s_cur"], L["s_step"], L["s_left"], L["s_init"], L["dest"], tgt_l, duck_env,
            L["band"], False, keep,
        )  # fmt: skip
        for j in range(m):
            v = act[g0 + j]
            xr = np.ascontiguousarray(t[:, :, j])
            K.sen0_voice(
                v, xr, n, R["e_dirty"], R["e_level"], R["e_cur"], R["e_step"], R["e_left"], R["e_init"],
                R["e_dest"], etgt_r, duck_env, R["e_band"],
            )  # fmt: skip
            K.pn21_sen0_voice(
                v, xr, out_r[v], n, R["dirty"], R["angle"], R["level"], 0, R["cur"], R["goal"], R["step"],
                R["left"], R["init"], R["scratch"], R["s_dirty"], R["s_level"], R["s_cur"], R["s_step"],
                R["s_left"], R["s_init"], R["dest"], tgt_r, duck_env, R["band"],
            )  # fmt: skip
        for got, want in ((tgt_l, tgt_r), (etgt_l, etgt_r), (out_l, out_r))[: 3 if keep else 2]:
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (block, n)
        for k in lanes:
            assert np.array_equal(lanes[k], rows[k]), k
