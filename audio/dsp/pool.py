"""A sample pool: every playing source in one float32 arena, so one kernel call can read
all voices' sources (a numba typed list would cost ~70 MB and a second of compilation).

Regions are found first-fit in a sorted free list and coalesced on release; the arena
doubles when nothing fits (a pool made with no capacity is sized by what plays). Growth
happens when a voice starts, never inside a kernel. The same array object added twice (a
take playing on several voices, as handed out by the decoded-take cache) is stored once and
reference-counted. A pool that does not ``keep_samples`` (decisions-only engines, which
never read a source) allocates regions the same way but copies nothing and holds no arena.
"""

from __future__ import annotations

from bisect import insort

import numpy as np

__all__ = ["SamplePool"]


class SamplePool:
    """First-fit allocator over one growing float32 array (sizes in samples).

    Parameters
    ----------
    capacity:
        Initial arena size (samples); 0 grows it from the first source on.
    keep_samples:
        False: regions are allocated (offsets, lengths) but no sample is copied or stored.
    """

    def __init__(self, capacity: int = 1 << 20, keep_samples: bool = True) -> None:
        self.keep_samples = keep_samples
        self.capacity = capacity
        self.data = np.zeros(capacity if keep_samples else 0, dtype=np.float32)
        self._free: list[tuple[int, int]] = [(0, capacity)] if capacity else []  # sorted (offset, length)
        self._used: dict[int, int] = {}
        self._shared: dict[int, tuple[int, int, np.ndarray]] = {}  # id(array) -> (offset, refs, array)
        self._by_offset: dict[int, int] = {}

    @property
    def used(self) -> int:
        """Samples in use."""
        return sum(self._used.values())

    def add(self, pcm: np.ndarray) -> int:
        """Copy ``pcm`` into the pool (once per array object); returns its offset."""
        key = id(pcm)
        if key in self._shared:
            off, refs, arr = self._shared[key]
            self._shared[key] = (off, refs + 1, arr)
            return off
        off = self._place(pcm)
        self._shared[key] = (off, 1, pcm)
        self._by_offset[off] = key
        return off

    def _place(self, pcm: np.ndarray) -> int:
        n = max(int(pcm.shape[0]), 1)
        for i, (off, length) in enumerate(self._free):  # noqa: B007  (used after the break)
            if length >= n:
                break
        else:
            self._grow(n)
            return self._place(pcm)
        if length == n:
            del self._free[i]
        else:
            self._free[i] = (off + n, length - n)
        if self.keep_samples:
            self.data[off : off + pcm.shape[0]] = pcm
        self._used[off] = n
        return off

    def release(self, offset: int) -> None:
        """Drop one reference to the region at ``offset``; free it with the last one."""
        key = self._by_offset[offset]
        off, refs, arr = self._shared[key]
        if refs > 1:
            self._shared[key] = (off, refs - 1, arr)
            return
        del self._shared[key], self._by_offset[offset]
        n = self._used.pop(offset)
        insort(self._free, (offset, n))
        merged: list[tuple[int, int]] = []
        for off, length in self._free:
            if merged and merged[-1][0] + merged[-1][1] == off:
                merged[-1] = (merged[-1][0], merged[-1][1] + length)
            else:
                merged.append((off, length))
        self._free = merged

    def reserve(self, samples: int) -> None:
        """Make sure a region of ``samples`` fits without growing later (call it before going
        live: growing copies the arena, which costs a render thread milliseconds)."""
        if not any(length >= samples for _, length in self._free):
            self._grow(samples)

    def _grow(self, need: int) -> None:
        old = self.capacity
        new = max(old * 2, old + need)
        if self.keep_samples:
            data = np.zeros(new, dtype=np.float32)
            data[:old] = self.data
            self.data = data
        self.capacity = new
        if self._free and self._free[-1][0] + self._free[-1][1] == old:
            self._free[-1] = (self._free[-1][0], new - self._free[-1][0])
        else:
            self._free.append((old, new - old))
