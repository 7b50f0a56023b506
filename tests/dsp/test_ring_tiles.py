"""The ring tiles: a delay's taps read from 16 instances' rings straight into sample-major
lanes, and lanes written straight into the rings, each instance at its own ring position.
Every sample lands exactly where plain numpy indexing with the ring index wrapped puts it
(rows reaching round their ring's end within a 16-sample chunk, odd start positions, blocks
not a multiple of 16, rings shorter than a chunk, a partial group), and a write touches
nothing but the group's own samples."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from audio.dsp import kernels as K

CAP = 40


@nb.njit
def _read(t, n, buf, c, act, g0, mask, widx, back):
    K.ring_to_lanes16(t, n, buf, c, act, g0, mask, widx, back)


@nb.njit
def _write(t, n, buf, c, act, g0, mask, widx):
    K.lanes_to_rings16(t, n, buf, c, act, g0, mask, widx)


def _case(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rings of ``size`` samples (2 channels), the active list, write positions and delays."""
    buf = rng.standard_normal((CAP, 2, size)).astype(np.float32)
    act = rng.permutation(CAP)[:32].astype(np.int64)
    return buf, act, rng.integers(0, size, CAP), rng.integers(0, size, CAP)


def _lane_instance(act: np.ndarray, g0: int, m: int, j: int) -> int:
    return int(act[g0 + j]) if j < m else int(act[g0])


@pytest.mark.parametrize("size", [8, 16, 64, 512])
@pytest.mark.parametrize("n", [0, 5, 16, 37, 128, 300])
@pytest.mark.parametrize("m", [16, 11])
def test_taps_read_into_lanes_are_the_rings_at_each_instances_own_position(size, n, m):
    rng = np.random.default_rng(size * 1000 + n + m)
    buf, act, widx, back = _case(rng, size)
    if size == 512:
        widx[act[3]], back[act[3]] = 500, 0  # this row's chunk 0 reaches round the end
        widx[act[4]], back[act[4]] = 7, 13  # starts 6 before the end
    g0, c = 5, 1
    keep = buf.copy()
    t = np.full((320, 16), np.nan, np.float32)
    _read(t, n, buf, c, act, g0, (1 << m) - 1, widx, back)
    for j in range(16):
        v = _lane_instance(act, g0, m, j)
        at = (widx[v] - back[v] + np.arange(n)) % size
        assert np.array_equal(t[:n, j], buf[v, c, at]), j
    assert np.isnan(t[n:]).all()  # nothing past the block
    assert np.array_equal(buf, keep)


@pytest.mark.parametrize("size", [8, 16, 64, 512])
@pytest.mark.parametrize("n", [0, 5, 16, 37, 128, 300])
@pytest.mark.parametrize("m", [16, 11])
def test_lanes_written_into_the_rings_land_at_each_instances_own_position(size, n, m):
    rng = np.random.default_rng(size * 1000 + n + m + 1)
    buf, act, widx, _ = _case(rng, size)
    if size == 512:
        widx[act[2]] = 511  # reaches round the end from the second sample
        widx[act[6]] = 495  # a chunk that ends exactly at the end: no wrap
    g0, c = 3, 0
    t = rng.standard_normal((320, 16)).astype(np.float32)
    want = buf.copy()
    for j in range(m):
        v = int(act[g0 + j])
        for i in range(n):  # in sample order: a block longer than the ring keeps its last samples
            want[v, c, (widx[v] + i) % size] = t[i, j]
    _write(t, n, buf, c, act, g0, (1 << m) - 1, widx)
    assert np.array_equal(buf.view(np.int32), want.view(np.int32))


def test_a_write_then_a_read_a_block_later_gives_the_block_back():
    """The two directions agree: a block written at the write positions reads back as the
    taps of a block-long delay once the positions have moved on by the block."""
    rng = np.random.default_rng(7)
    buf, act, widx, _ = _case(rng, 256)
    t = rng.standard_normal((200, 16)).astype(np.float32)
    _write(t, 200, buf, 1, act, 0, 0xFFFF, widx)
    back = np.full(CAP, 200)
    u = np.zeros_like(t)
    _read(u, 200, buf, 1, act, 0, 0xFFFF, (widx + 200) % 256, back)
    assert np.array_equal(u, t)
