"""The speech library: which record of an event plays, and which take of each clip.

Generic over banks (living world, main cast, announcer). Implements spec 3.2 / 3.3 with
the exact order of generator draws: event probability, the full weighted record order,
then per record a probability draw, the field match, the clips' candidates (history
rings) and one :meth:`SpeechLibrary.recent_pick` per clip on the global 32-entry ring.
The clips' history rings are written only when the line starts (:meth:`commit`).

Retail rules of ``start`` (spec 3.2): event-level features that are not ported (external
conditions nC != 0, flags2 & 0x18) fail the whole event ("Unsupported"). Per record, after its
probability draw and the field match (which walks the EVENT's fields, a missing record value
reading 0), the record fails -- the next record is tried -- when it has more than 12 clips, a
mode other than 0/2, locals != 0, a clip with lookup mode or parameters != 0, a clip id with no
header, or a header with flags != 0. Then every clip's candidates are listed (at most 255 across
the record) before any take is drawn, and one :meth:`SpeechLibrary.recent_pick` per clip picks
among them in clip order; a clip with an empty list (0 takes, or the cap reached by the clips
before it) stops the picking there and fails the record, after the earlier clips' draws and
ring writes, which stay (spec 3.2 d, the port's order).

Setting of ours: ``flagged_channel`` lets mode-1 records ("only on a flagged channel", not
traced) play; off by default, so they fail like the spec's other unported modes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from audio.core import memo
from audio.games.skate.formats.evt import EvtEvent, EvtRecord, EvtTable
from audio.games.skate.speech.rand import AwcGenerator

__all__ = [
    "ClipHeaderLike",
    "ClipHistory",
    "LineChoice",
    "SpeechLibrary",
    "RECENT_RING",
    "MAX_CLIPS",
    "MAX_CANDIDATES",
    "derived",
]

T = TypeVar("T")

RECENT_RING = 32
"""Entries of the global recent-pick ring."""
MAX_CLIPS = 12
"""A record with more clips fails."""
MAX_CANDIDATES = 255
"""Candidate takes are capped at this many across one record."""
_WEIGHT_SCALE = (1, 4, 16, 64, 256, 1024, 4096, 16384)
_EMPTY = 0xFF


def derived(kind: str, sources: tuple[Any, ...], build: Callable[[], T]) -> T:
    """``build()``, which reads only ``sources`` (an install's tables, never changed), kept by
    a batch worker (:mod:`audio.core.memo`) with the sources it came from: while it is kept,
    they live, so no other object can take their ids."""
    return memo.memo((kind, *map(id, sources)), lambda: (sources, build()))[1]


class ClipHeaderLike(Protocol):
    """What the library needs of a ``.hdr`` clip header."""

    @property
    def id(self) -> int: ...
    @property
    def take_count(self) -> int: ...
    @property
    def history_len(self) -> int: ...


class _Histories(dict[int, "ClipHistory"]):
    """Clip id -> its history ring, made empty on first use (a real install has thousands of
    clips; a run touches the few its lines pick)."""

    def __init__(self, headers: dict[int, ClipHeaderLike]) -> None:
        super().__init__()
        self._headers = headers

    def __missing__(self, clip_id: int) -> ClipHistory:
        hist = self[clip_id] = ClipHistory([_EMPTY] * int(self._headers[clip_id].history_len))
        return hist


@dataclass
class ClipHistory:
    """A clip's runtime history ring (``0xFF`` = empty) and its cursor."""

    takes: list[int]
    cursor: int = 0

    def candidates(self, take_count: int) -> list[int]:
        """Takes not in the ring; if none, the single take with the greatest age (first on ties).
        A clip with 0 takes has no candidate."""
        n = len(self.takes)
        if take_count <= 0:
            return []
        if n == 0:
            return list(range(take_count))
        age: dict[int, int] = {}
        for step in range(1, n + 1):
            t = self.takes[(self.cursor - step) % n]
            if t != _EMPTY and t not in age:
                age[t] = step
        free = [t for t in range(take_count) if t not in age]
        if free:
            return free
        best, best_age = 0, -1
        for t in range(take_count):
            if age[t] > best_age:
                best, best_age = t, age[t]
        return [best]

    def write(self, take: int) -> None:
        """``takes[cursor] = take; cursor = (cursor + 1) % len``."""
        if self.takes:
            self.takes[self.cursor] = take
            self.cursor = (self.cursor + 1) % len(self.takes)


@dataclass(frozen=True)
class LineChoice:
    """The library's answer to ``start``.

    ``outcome`` is "Picked" or a failure: "UnknownEvent", "Probability", "Unsupported"
    (``reason`` says what), "NoRecord". ``picks`` are ``(clip_id, take)`` in play order;
    ``record`` the index of the record in the event; ``skipped`` why each tried record
    was passed over (record index, reason).
    """

    event: int
    outcome: str
    picks: tuple[tuple[int, int], ...] = ()
    record: int | None = None
    reason: str = ""
    skipped: tuple[tuple[int, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.outcome == "Picked"


@dataclass
class SpeechLibrary:
    """One bank's speech library: event table, clip headers, generator and runtime state.

    Parameters
    ----------
    table:
        The bank's ``.evt`` model.
    headers:
        Its clip headers (anything with ``id``, ``take_count``, ``history_len``; an optional
        ``flags`` attribute is honoured).
    generator:
        The add-with-carry generator (shared with the manager when its rand() is "awc").
    flagged_channel:
        Whether this bank's channel counts as "flagged", letting records of mode 1 play (not
        traced; off by default: a mode-1 record fails like any unported mode).
    """

    table: EvtTable
    headers: Sequence[ClipHeaderLike]
    generator: AwcGenerator = field(default_factory=AwcGenerator)
    flagged_channel: bool = False

    def __post_init__(self) -> None:
        self._events, self._header, self._header_index = derived(
            "skate.library", (self.table, self.headers), self._lookups
        )
        self.history: dict[int, ClipHistory] = _Histories(self._header)
        self.ring: list[tuple[int, int]] = [(0, 0)] * RECENT_RING
        self.ring_cursor = 0

    def _lookups(self) -> tuple[dict[int, EvtEvent], dict[int, ClipHeaderLike], dict[int, int]]:
        """Events by id, headers by id and each header's index in id order."""
        ordered = sorted(self.headers, key=lambda h: h.id)
        return self.table.by_id(), {h.id: h for h in ordered}, {h.id: i for i, h in enumerate(ordered)}

    # -- lookups -----------------------------------------------------------------------
    def event(self, event_id: int) -> EvtEvent | None:
        return self._events.get(event_id)

    def header(self, clip_id: int) -> ClipHeaderLike | None:
        return self._header.get(clip_id)

    # -- 3.3 ---------------------------------------------------------------------------
    def recent_pick(self, n: int, header: int) -> int:
        """Index into ``n`` candidates, avoiding the last ``min(n/2, 10)`` picks of ``header``."""
        limit = min(n // 2, 10, RECENT_RING)
        r = self.generator.scaled(n)
        best, chosen, attempts = -1, r, 0
        while True:
            found = -1
            if limit > 0:
                pos, count = self.ring_cursor, 0
                for _ in range(RECENT_RING + 1):
                    cand, hdr = self.ring[pos]
                    if hdr == header:
                        count += 1
                        if cand == r:
                            found = count - 1
                            break
                        if count >= limit:
                            break
                    pos = (pos - 1) % RECENT_RING
            if found < 0:
                chosen = r
                break
            if found > best:
                best, chosen = found, r
            attempts += 1
            if attempts >= 32:
                break
            r = self.generator.scaled(n)
        self.ring_cursor = (self.ring_cursor + 1) % RECENT_RING
        self.ring[self.ring_cursor] = (chosen, header)
        return chosen

    # -- 3.2 ---------------------------------------------------------------------------
    @staticmethod
    def _unsupported(ev: EvtEvent) -> str:
        """Event-level features that are not ported (they fail the whole event)."""
        if ev.condition_count:
            return f"external conditions (nC={ev.condition_count})"
        if ev.flags2 & 0x18:
            return f"flags2 0x{ev.flags2:02X} (record pairing / follow-up lists)"
        return ""

    def _record_fails(self, rec: EvtRecord) -> str:
        """Why a record fails (spec 3.2 c), or "" when it may be played."""
        if len(rec.clips) > MAX_CLIPS:
            return f"{len(rec.clips)} clips (at most {MAX_CLIPS})"
        if rec.mode not in (0, 2) and not (rec.mode == 1 and self.flagged_channel):
            return f"mode {rec.mode}"
        if rec.locals:
            return f"locals {rec.locals}"
        for c in rec.clips:
            if c.lookup_mode or c.param_count:
                return f"clip {c.clip_id} lookup mode {c.lookup_mode} / parameter count {c.param_count}"
        for c in rec.clips:
            h = self._header.get(c.clip_id)
            if h is None:
                return f"missing clip {c.clip_id}"
            flags = getattr(h, "flags", 0)
            if flags:
                return f"clip {c.clip_id} header flags 0x{flags:02X}"
        return ""

    def _candidates(self, rec: EvtRecord) -> list[list[int]]:
        """Every clip's candidate takes, built before any pick (at most 255 across the record).

        A clip with 0 takes, or one reached after the cap, gets an empty list: the picking
        stops there (spec 3.2 d), after the earlier clips' draws."""
        out: list[list[int]] = []
        total = 0
        for c in rec.clips:
            takes = int(self._header[c.clip_id].take_count)
            cands = self.history[c.clip_id].candidates(takes)[: MAX_CANDIDATES - total]
            total += len(cands)
            out.append(cands)
        return out

    def _pick(self, rec: EvtRecord, cands: list[list[int]]) -> tuple[tuple[int, int], ...] | str:
        """One :meth:`recent_pick` per clip in clip order (spec 3.2 d); a clip with no candidate
        stops the picking and fails the record, the earlier clips' draws and ring writes kept."""
        picks: list[tuple[int, int]] = []
        for c, cl in zip(rec.clips, cands, strict=True):
            if not cl:
                if int(self._header[c.clip_id].take_count) <= 0:
                    return f"clip {c.clip_id} has no takes"
                return f"candidate cap ({MAX_CANDIDATES}) reached at clip {c.clip_id}"
            picks.append((c.clip_id, cl[self.recent_pick(len(cl), self._header_index[c.clip_id])]))
        return tuple(picks)

    def record_order(self, ev: EvtEvent) -> list[int]:
        """The weighted record order (draws ``scaled(total)`` once per weighted record)."""
        w = [rec.weight for rec in ev.records]
        n = len(w)
        zero = [i for i, x in enumerate(w) if x == 0]
        total = sum(w)
        order: list[int] = []
        # Bounded to n emissions: only a 32-bit overflow of scaled(total) (total > 65535)
        # could clamp onto an emitted record; the data never comes close.
        while total > 0 and len(order) < n:
            left = self.generator.scaled(total)
            i = n - 1
            for j in range(n):
                left -= w[j]
                if left < 0:
                    i = j
                    break
            order.append(i)
            total -= w[i]
            w[i] = 0
        return order + zero

    def matches(self, ev: EvtEvent, values: Sequence[int], words: Sequence[int]) -> bool:
        """Walk the event's fields: field k reads its request word (0 = the packed word, missing
        = 0) and must share a bit with the record's value k (0 or missing = any)."""
        packed = None
        for k, src in enumerate(ev.fields):
            want = values[k] if k < len(values) else 0
            if want == 0:
                continue
            if src == 0:
                packed = self.table.packed_word(ev.id) if packed is None else packed
                word = packed
            elif 1 <= src <= len(words):
                word = words[src - 1]
            else:
                word = 0
            if not (int(word) & want):
                return False
        return True

    def start(self, event_id: int, words: Sequence[int]) -> LineChoice:
        """Choose a record and takes for ``event_id`` given the request ``words`` (spec 3.2)."""
        ev = self._events.get(event_id)
        if ev is None:
            return LineChoice(event_id, "UnknownEvent", reason=f"event {event_id} not in {self.table.path}")
        if self.generator.scaled(100) > ev.probability:
            return LineChoice(event_id, "Probability", reason=f"event probability {ev.probability}%")
        what = self._unsupported(ev)
        if what:
            return LineChoice(event_id, "Unsupported", reason=what)
        skipped: list[tuple[int, str]] = []
        for i in self.record_order(ev):
            rec = ev.records[i]
            if self.generator.scaled(100) >= rec.probability:
                skipped.append((i, "probability"))
                continue
            if not self.matches(ev, rec.values, words):
                skipped.append((i, "fields"))
                continue
            why = self._record_fails(rec)
            picks = why if why else self._pick(rec, self._candidates(rec))
            if isinstance(picks, str):
                skipped.append((i, picks))
                continue
            return LineChoice(event_id, "Picked", picks, i, skipped=tuple(skipped))
        return LineChoice(event_id, "NoRecord", reason="no record matched", skipped=tuple(skipped))

    def commit(self, picks: Iterable[tuple[int, int]]) -> None:
        """Write the picked takes into their clips' history rings (when the line starts)."""
        for clip_id, take in picks:
            if clip_id in self._header:
                self.history[clip_id].write(take)
