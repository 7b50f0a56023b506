"""The fused kernels' layout changes move every sample unchanged (16 x 16 shuffle tiles plus a
tail), whatever the block length and group width."""

from __future__ import annotations

import numpy as np
import pytest

from audio.dsp import fused as F


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100, 256, 333])
@pytest.mark.parametrize(("w", "m"), [(4, 1), (4, 4), (8, 5), (8, 8), (16, 3), (16, 16)])
def test_rows_to_lanes_and_back_moves_every_sample_unchanged(n, w, m):
    ln = F.lanes_module()
    rng = np.random.default_rng(n * 31 + w + m)
    rows = rng.standard_normal((F.LANES, 2, 400)).astype(np.float32)
    lanes = np.full((400, F.LANES), np.nan, np.float32)
    ln.to_lanes(rows, 1, lanes, n, w, m)
    assert np.array_equal(lanes[:n, :m], rows[:m, 1, :n].T)
    assert np.isnan(lanes[n:]).all() and np.isnan(lanes[:n, w:]).all()  # nothing else written
    if w < 16:
        assert np.isnan(lanes[:, m:]).all()  # narrow groups: only the instances' lanes
    back = np.full((F.LANES, 2, 400), np.nan, np.float32)
    ln.from_lanes(lanes, back, 0, n, w, m)
    assert np.array_equal(back[:m, 0, :n], rows[:m, 1, :n])
    assert np.isnan(back[:, 1]).all() and np.isnan(back[:w, 0, n:]).all() and np.isnan(back[w:]).all()
    if w < 16:
        assert np.isnan(back[m:]).all()


@pytest.mark.parametrize("n", [7, 16, 100, 256])
@pytest.mark.parametrize("m", [3, 16])
def test_submix_inputs_go_to_their_lanes_and_are_cleared(n, m):
    ln = F.lanes_module()
    rng = np.random.default_rng(n + m)
    inp = rng.standard_normal((40, 1, 300)).astype(np.float32)
    expect = inp.copy()
    act = np.sort(rng.choice(40, size=20, replace=False)).astype(np.int64)
    g0 = 20 - m
    lanes = np.full((1, 300, F.LANES), np.nan, np.float32)
    ln.inputs_to_lanes(act, g0, m, inp, lanes, n, np.zeros((0, 1, 16), np.float32), np.zeros(0, np.bool_))
    insts = act[g0 : g0 + m]
    assert np.array_equal(lanes[0, :n, :m], expect[insts, 0, :n].T)
    assert np.isnan(lanes[0, n:]).all() and np.isnan(lanes[0, :, m:]).all()
    assert np.all(inp[insts, 0, :n] == 0.0) and np.array_equal(inp[insts, 0, n:], expect[insts, 0, n:])
    others = np.setdiff1d(np.arange(40), insts)
    assert np.array_equal(inp[others], expect[others])
