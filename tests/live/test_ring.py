"""The SPSC block ring: order, bounds, and a real producer/consumer thread pair."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from audio.core.ring import BlockRing


def _block(k: int, n: int = 8) -> np.ndarray:
    return np.full((n, 2), k, dtype=np.float32)


def test_ring_refuses_to_overwrite_unread_blocks_and_reports_empty():
    ring = BlockRing(2, 8)
    out = np.empty((8, 2), np.float32)
    assert ring.pop_into(out) == -1
    assert ring.push(_block(1), 0) and ring.push(_block(2), 8)
    assert not ring.push(_block(3), 16)
    assert ring.free() == 0 and ring.available() == 2


def test_ring_returns_blocks_in_order_with_their_start_samples_across_wraps():
    ring = BlockRing(3, 8)
    out = np.empty((8, 2), np.float32)
    for k in range(10):
        assert ring.push(_block(k), 8 * k)
        assert ring.pop_into(out) == 8 * k
        assert np.all(out == k)


def test_ring_copies_data_so_the_producer_may_reuse_its_buffer():
    ring = BlockRing(2, 8)
    buf = _block(5)
    ring.push(buf, 0)
    buf[:] = 9
    out = np.empty((8, 2), np.float32)
    ring.pop_into(out)
    assert np.all(out == 5)


def test_ring_rejects_nonsense_sizes():
    with pytest.raises(ValueError):
        BlockRing(0, 256)


def test_ring_threads_deliver_every_block_exactly_once_in_order():
    ring = BlockRing(2, 16)
    n_blocks = 500
    got: list[int] = []

    def producer() -> None:
        k = 0
        while k < n_blocks:
            if ring.push(_block(k, 16), k):
                k += 1
            else:
                time.sleep(0)

    def consumer() -> None:
        out = np.empty((16, 2), np.float32)
        while len(got) < n_blocks:
            s = ring.pop_into(out)
            if s >= 0:
                assert np.all(out == s)
                got.append(s)
            else:
                time.sleep(0)

    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert got == list(range(n_blocks))
