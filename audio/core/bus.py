"""The event bus: typed, timestamped events, consumers and decisions.

Producers (the scenario player, the live controller, a port) :meth:`EventBus.post` events.
Each event carries ``t`` (seconds on the engine clock); the bus stamps it with the sample
``at = round(t * sample_rate)`` at which it takes effect. The engine delivers events to
consumers in (sample, post order) order at the start of that sample: it splits its audio
block there, so an event's effect does not depend on the block size. A live event is
stamped with the start of the block being rendered when it arrives (the block boundary),
and the capture records that sample, so replay is exact.

Consumers may post follow-up events (``origin="internal"``). A capture
(:mod:`audio.core.capture`) records every posted event with its sample and origin; replay
re-posts only the external ones, since the internal ones follow deterministically.

Decisions (what a speech system decided and why) are published as :class:`Decision`
records to decision listeners and the decision log.
"""

from __future__ import annotations

import abc
import dataclasses
import heapq
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from audio.core.clock import SAMPLE_RATE, seconds_to_samples
from audio.core.outcomes import Outcome

__all__ = [
    "Event",
    "SubtitleEvent",
    "Decision",
    "EventBus",
    "Consumer",
    "event_kinds",
    "event_to_json",
    "to_jsonable",
]

_KINDS: dict[str, type[Event]] = {}


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every bus event. ``t`` is in seconds on the engine clock.

    Subclasses declare their wire name: ``class PedValue(Event, kind="skate.value")``.
    Field values must be JSON-friendly (numbers, strings, bools, tuples/lists, None).
    """

    KIND: ClassVar[str] = "event"
    FILE_FIELDS: ClassVar[tuple[str, ...]] = ()
    """Fields naming a file the engine will open: from untrusted input they must pass the path
    policy (:class:`audio.core.paths.PathPolicy`)."""
    t: float = 0.0

    def __init_subclass__(cls, kind: str | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if kind is not None:
            if kind in _KINDS and _KINDS[kind] is not cls:
                raise TypeError(f"event kind {kind!r} registered twice")
            cls.KIND = kind
            _KINDS[kind] = cls


class SubtitleEvent(Event, abc.ABC):
    """An output event that puts a line of text on screen (a game's ``*.subtitle`` kind).

    A port's subtitle callbacks (:meth:`audio.port.VoicePort.on_subtitle`) receive what
    :meth:`caption` returns; every game's subtitle event implements it for its own fields.
    """

    @abc.abstractmethod
    def caption(self) -> tuple[str, str, str]:
        """The subtitle as shown.

        Returns
        -------
        tuple of str
            ``(speaker, text, line)``: who speaks, the text on screen (pages joined with
            ``" / "``), and the game's id of the line (a message id).
        """


def event_kinds() -> dict[str, type[Event]]:
    """Every registered event kind -> its class."""
    return dict(_KINDS)


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types :func:`to_jsonable` returns as they are (checked before anything else: most values)."""


def to_jsonable(v: Any) -> Any:
    """``v`` with tuples as lists and dict keys as text, ready for JSON.

    Parameters
    ----------
    v:
        An event field's value.
    """
    if type(v) in _PLAIN:
        return v
    if isinstance(v, (tuple, list)):
        return [x if type(x) in _PLAIN else to_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): x if type(x) in _PLAIN else to_jsonable(x) for k, x in v.items()}
    return v


def event_to_json(ev: Event, at: int, origin: str = "external") -> dict[str, Any]:
    """Serialise ``ev`` (stamped at sample ``at``) to a JSON-ready dict.

    Parameters
    ----------
    ev:
        The event.
    at:
        Sample it takes effect at.
    origin:
        Where it came from (``"external"``, ``"internal"``).
    """
    d = {f.name: to_jsonable(getattr(ev, f.name)) for f in dataclasses.fields(ev)}
    return {"kind": ev.KIND, "at": at, "origin": origin, **d}


@dataclass(frozen=True)
class Decision:
    """One decision of a game system, for logs, UIs and tests.

    ``system`` ("skate.speech", "sylpheed.chatter", ...), ``outcome`` (a member of the
    system's declared :class:`~audio.core.outcomes.Outcome` enum, such as ``Repeat`` or
    ``Started``; a ``str``), ``at`` the sample, ``t`` seconds, ``detail`` the rest.
    """

    at: int
    t: float
    system: str
    outcome: Outcome
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "t": round(self.t, 6),
            "system": self.system,
            "outcome": self.outcome,
            **to_jsonable(self.detail),
        }


class Consumer(Protocol):
    """Anything that receives events: ``handle(event, bus)``."""

    def handle(self, event: Event, bus: EventBus) -> None:
        """Receive ``event`` at its sample.

        Parameters
        ----------
        event:
            The event due now.
        bus:
            The bus (post follow-ups with :meth:`EventBus.post_now`).
        """


@dataclass(order=True)
class _Pending:
    at: int
    seq: int
    event: Event = field(compare=False)
    origin: str = field(compare=False, default="external")


class EventBus:
    """Orders events by sample and delivers them to subscribed consumers.

    Parameters
    ----------
    sample_rate:
        The engine's sample rate, Hz (event times in seconds become samples).
    """

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        self.sample_rate = sample_rate
        self.now = 0
        self._heap: list[_Pending] = []
        self._seq = 0
        self._subs: list[tuple[tuple[type[Event], ...] | None, Consumer]] = []
        self._capture: list[Callable[[dict[str, Any]], None]] = []
        self._decision_listeners: list[Callable[[Decision], None]] = []
        self.decisions: deque[Decision] = deque()
        """Decisions taken so far (all of them, unless :meth:`bound_decisions` was called)."""
        self.keep_decisions = True
        self.on_consumer_error: Callable[[Consumer, Event, Exception], None] | None = None
        """If set, an exception in a consumer's ``handle`` goes here instead of up (the engine
        isolating systems); the event still reaches the other consumers."""

    # -- producers ---------------------------------------------------------------------
    def post(self, event: Event, *, at: int | None = None, origin: str = "external") -> int:
        """Queue ``event``; returns the sample it takes effect at (never in the past).

        Parameters
        ----------
        event:
            The event; its ``t`` (seconds) gives its sample unless ``at`` does.
        at:
            Sample it takes effect at (``None``: ``round(t * sample_rate)``); never before now.
        origin:
            Where it came from (``"external"``, ``"internal"``), recorded in captures.
        """
        sample = seconds_to_samples(event.t, self.sample_rate) if at is None else int(at)
        sample = max(sample, self.now)
        heapq.heappush(self._heap, _Pending(sample, self._seq, event, origin))
        self._seq += 1
        if self._capture:
            rec = event_to_json(event, sample, origin)
            for cb in self._capture:
                cb(rec)
        return sample

    def post_now(self, event: Event, origin: str = "internal") -> int:
        """Post a follow-up at the current sample (used by consumers).

        Parameters
        ----------
        event:
            The follow-up event.
        origin:
            Where it came from, recorded in captures.
        """
        return self.post(event, at=self.now, origin=origin)

    # -- consumers ---------------------------------------------------------------------
    def subscribe(self, consumer: Consumer, kinds: Iterable[type[Event]] | None = None) -> None:
        """Deliver events of ``kinds`` (subclasses included; all if None) to ``consumer``.

        Parameters
        ----------
        consumer:
            Anything with ``handle(event, bus)``.
        kinds:
            Event classes it wants (subclasses included); ``None``: all.
        """
        self._subs.append((tuple(kinds) if kinds is not None else None, consumer))

    def next_at(self) -> int | None:
        """Sample of the earliest pending event, or None."""
        return self._heap[0].at if self._heap else None

    def dispatch(self, now: int) -> int:
        """Deliver every event due at or before sample ``now``; returns how many.

        Parameters
        ----------
        now:
            The current engine sample.
        """
        self.now = now
        n = 0
        while self._heap and self._heap[0].at <= now:
            p = heapq.heappop(self._heap)
            n += 1
            for kinds, consumer in self._subs:
                if kinds is None or isinstance(p.event, kinds):
                    try:
                        consumer.handle(p.event, self)
                    except Exception as exc:
                        if self.on_consumer_error is None:
                            raise
                        self.on_consumer_error(consumer, p.event, exc)
        return n

    def unsubscribe(self, consumer: Consumer) -> None:
        """Stop delivering events to ``consumer`` (a disabled system).

        Parameters
        ----------
        consumer:
            A subscribed consumer.
        """
        self._subs = [(k, c) for k, c in self._subs if c is not consumer]

    def pending(self) -> int:
        return len(self._heap)

    # -- decisions ---------------------------------------------------------------------
    def decide(self, system: str, outcome: Outcome, **detail: Any) -> Decision:
        """Publish a decision taken now.

        Parameters
        ----------
        system:
            The deciding system's name in the log (``"skate.speech"``).
        outcome:
            A member of the system's declared outcome enum; anything else is a ``TypeError``
            (an undeclared outcome fails where it is logged).
        **detail:
            JSON-friendly detail (``speaker``, ``line``, ``reason``...).
        """
        if not isinstance(outcome, Outcome):
            raise TypeError(f"{system}: outcome {outcome!r} is not a declared Outcome member")
        d = Decision(self.now, self.now / self.sample_rate, system, outcome, detail)
        if self.keep_decisions:
            self.decisions.append(d)
        for cb in self._decision_listeners:
            cb(d)
        return d

    def bound_decisions(self, keep: int) -> None:
        """Keep only the last ``keep`` decisions (long live runs: listeners still see all).

        Parameters
        ----------
        keep:
            Decisions kept in ``decisions``.
        """
        self.decisions = deque(self.decisions, maxlen=keep)

    def on_decision(self, callback: Callable[[Decision], None]) -> None:
        """Call ``callback(decision)`` for every decision logged from now on.

        Parameters
        ----------
        callback:
            Called with each :class:`Decision` (the render thread in a live run).
        """
        self._decision_listeners.append(callback)

    # -- capture -----------------------------------------------------------------------
    def on_post(self, callback: Callable[[dict[str, Any]], None]) -> None:
        """Call ``callback(record)`` for every posted event (the capture hook).

        Parameters
        ----------
        callback:
            Called with each posted event's JSON record (kind, ``at`` in samples, origin, fields).
        """
        self._capture.append(callback)
