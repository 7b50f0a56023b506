"""A send reading its input straight from lanes (:func:`audio.dsp.kernels.send_lanes16` and the
group wrapper the fused kernels call) adds, sample by sample, exactly the float32 products a
plain per-instance send adds, in instance order (several instances sharing a destination),
skipping instances without one; and when a level ramps, something ducks or the group is not
full, the wrapper's per-instance fallback leaves the destinations and the send's state as
:func:`audio.dsp.kernels.sen0_voice` does."""

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
    tgt_l = rng.standard_normal((5, nch, 300)).astype(f32)
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
            L["dest"], tgt_l, duck_env, L["band"],
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
