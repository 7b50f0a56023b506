"""A lock-free single-producer/single-consumer ring of preallocated audio blocks.

The render thread (producer) writes whole blocks; the audio callback (consumer) copies
them out. Both sides only touch their own index, a plain Python ``int`` that is written
*after* the data it publishes (an attribute store is atomic under the GIL), so neither
side takes a lock or allocates. Indices count blocks monotonically; the slot of block
``i`` is ``i % capacity``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BlockRing"]


class BlockRing:
    """SPSC ring of ``capacity`` blocks of shape ``(block, channels)`` float32.

    Parameters
    ----------
    capacity:
        Number of blocks held (how far ahead the producer may render), >= 1.
    block:
        Samples per block.
    channels:
        Channels per sample.
    """

    def __init__(self, capacity: int, block: int, channels: int = 2) -> None:
        if capacity < 1 or block < 1 or channels < 1:
            raise ValueError(
                f"capacity, block and channels must be >= 1, got {capacity}, {block}, {channels}"
            )
        self.capacity = capacity
        self.block = block
        self.channels = channels
        self._data = np.zeros((capacity, block, channels), dtype=np.float32)
        self._start = np.zeros(capacity, dtype=np.int64)
        self.written = 0
        """Blocks published by the producer (only the producer writes it)."""
        self.read = 0
        """Blocks consumed (only the consumer writes it)."""

    # -- producer ----------------------------------------------------------------------
    def free(self) -> int:
        """Slots the producer may fill now."""
        return self.capacity - (self.written - self.read)

    def push(self, block: np.ndarray, start_sample: int) -> bool:
        """Copy ``block`` (shape ``(block, channels)``) in; False (nothing written) if full."""
        w = self.written
        if w - self.read >= self.capacity:
            return False
        slot = w % self.capacity
        np.copyto(self._data[slot], block, casting="same_kind")
        self._start[slot] = start_sample
        self.written = w + 1
        return True

    # -- consumer ----------------------------------------------------------------------
    def available(self) -> int:
        """Blocks the consumer may read now."""
        return self.written - self.read

    def pop_into(self, out: np.ndarray) -> int:
        """Copy the oldest block into ``out``; returns its start sample, or -1 if empty."""
        r = self.read
        if self.written - r <= 0:
            return -1
        slot = r % self.capacity
        np.copyto(out, self._data[slot])
        start = int(self._start[slot])
        self.read = r + 1
        return start
