"""A shared-memory ring of voice-record snapshots between the audio process and the page's server.

The render thread writes each snapshot's :data:`~audio.live.profiler.records.RECORD` array into
the next of :data:`SLOTS` fixed-size slots of an anonymous shared memory file (``memfd``,
passed to the server process by file descriptor): one numpy copy, no pickling, no allocation
beyond the copy. Each slot starts with a sequence word written last-after-first (``-1`` while
the slot is being written, then the snapshot's number): a reader copies the slot and keeps the
copy only if the word still holds the number it expected, so a slot overwritten while being
read (a reader more than :data:`SLOTS` snapshots behind) is dropped, never torn.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

from audio.live.profiler.records import RECORD

__all__ = ["SLOTS", "SnapshotRing"]

SLOTS = 16
"""Snapshots the ring holds (1.6 s at 10 Hz)."""
HEAD = 2
"""int64 words before each slot's records: the sequence number and the record count."""


class SnapshotRing:
    """The ring over a shared memory file.

    Parameters
    ----------
    max_voices:
        Records per slot at most.
    fd:
        An existing ring's file descriptor (the reader's side); None creates one.
    """

    def __init__(self, max_voices: int, fd: int | None = None) -> None:
        self.max_voices = int(max_voices)
        self.slot_bytes = HEAD * 8 + self.max_voices * RECORD.itemsize
        size = SLOTS * self.slot_bytes
        if fd is None:
            fd = os.memfd_create("barkbus-profiler-ring", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
        self.fd = fd
        self._map = mmap.mmap(fd, size)
        at = [k * self.slot_bytes for k in range(SLOTS)]
        self._heads = [np.frombuffer(self._map, dtype=np.int64, count=HEAD, offset=o) for o in at]
        self._recs = [
            np.frombuffer(self._map, dtype=RECORD, count=self.max_voices, offset=o + HEAD * 8) for o in at
        ]

    def write(self, seq: int, records: np.ndarray) -> int:
        """Store ``records`` (the first :attr:`max_voices`) as snapshot ``seq``; how many were
        stored (render thread)."""
        k = seq % SLOTS
        head = self._heads[k]
        n = min(int(records.shape[0]), self.max_voices)
        head[0] = -1
        self._recs[k][:n] = records[:n]
        head[1] = n
        head[0] = seq
        return n

    def read(self, seq: int) -> np.ndarray | None:
        """A copy of snapshot ``seq``'s records, or None if its slot holds another one now."""
        k = seq % SLOTS
        head = self._heads[k]
        if int(head[0]) != seq:
            return None
        n = int(head[1])
        out = self._recs[k][: max(0, min(n, self.max_voices))].copy()
        return out if int(head[0]) == seq else None

    def close(self) -> None:
        """Close the ring's file descriptor (the mapping goes when the last view does)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
