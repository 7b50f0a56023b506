"""A render's decisions streamed to disk as they are taken, read back on demand.

An offline render may take millions of decisions (a chatty mission, hours of plaza), so it
keeps none of them in memory: :class:`DecisionSpool` pickles each one to an unnamed temporary
file (and writes it to the JSON-lines decision log when one was asked for), and keeps only
the counts per (system, outcome) and an 8-byte offset per decision. It is a read-only
sequence: iterating reads the file back in chunks, so a summary or a timeline sees every
decision while memory stays flat with the render's length and its number of decisions.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
import weakref
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import IO, overload

from audio.core.bus import Decision

__all__ = ["DecisionSpool"]

READ_CHUNK = 1 << 20
"""Bytes read back at a time when iterating."""


class DecisionSpool(Sequence[Decision]):
    """Decisions appended during a render, on disk; ``log`` (a text file) also gets each one
    as a JSON line as it comes. ``counts[(system, outcome)]`` is kept in memory."""

    def __init__(self, log: IO[str] | None = None) -> None:
        self._file = tempfile.TemporaryFile(prefix="barkbus-decisions-")  # noqa: SIM115 (lives with the spool)
        # a result dropped without close() still closes its file (no ResourceWarning at collection)
        self._closer = weakref.finalize(self, self._file.close)
        self._fd = self._file.fileno()
        self._offsets = array("q", [0])
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.log = log
        self.counts: Counter[tuple[str, str]] = Counter()

    def append(self, d: Decision) -> None:
        """Keep ``d`` (a decision listener: ``bus.on_decision(spool.append)``)."""
        blob = pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending.append(blob)
        self._pending_bytes += len(blob)
        self._offsets.append(self._offsets[-1] + len(blob))
        self.counts[(d.system, d.outcome)] += 1
        if self.log is not None:
            self.log.write(json.dumps(d.to_json(), separators=(",", ":")) + "\n")
        if self._pending_bytes >= READ_CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._file.write(b"".join(self._pending))
            self._file.flush()
            self._pending.clear()
            self._pending_bytes = 0

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _read(self, i: int, j: int) -> list[Decision]:
        """Decisions ``i..j-1`` (one read)."""
        self._flush()
        start = self._offsets[i]
        buf = os.pread(self._fd, self._offsets[j] - start, start)
        offs = self._offsets
        return [pickle.loads(buf[offs[k] - start : offs[k + 1] - start]) for k in range(i, j)]

    def __iter__(self) -> Iterator[Decision]:
        n, i = len(self), 0
        offs = self._offsets
        while i < n:
            j = i + 1
            while j < n and offs[j + 1] - offs[i] <= READ_CHUNK:
                j += 1
            yield from self._read(i, j)
            i = j

    @overload
    def __getitem__(self, index: int) -> Decision: ...

    @overload
    def __getitem__(self, index: slice) -> list[Decision]: ...

    def __getitem__(self, index: int | slice) -> Decision | list[Decision]:
        n = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step == 1:
                return self._read(start, stop) if stop > start else []
            return [self[k] for k in range(start, stop, step)]
        k = index + n if index < 0 else index
        if not 0 <= k < n:
            raise IndexError(f"decision {index} of {n}")
        return self._read(k, k + 1)[0]

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same decisions in the same order (a list, a spool)."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def close(self) -> None:
        """Drop the temporary file (the spool is empty afterwards)."""
        self._closer()
        self._offsets = array("q", [0])
        self._pending.clear()
