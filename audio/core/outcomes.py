"""Declared decision outcomes: every outcome a system logs is a member of one enum type.

A game declares its outcomes once, as a subclass of :class:`Outcome` whose members carry
their class (:class:`OutcomeClass`)::

    class ToneOutcome(Outcome):
        Started = "Started", START
        Rejected = "Rejected", REFUSED

:meth:`audio.core.bus.EventBus.decide` accepts only :class:`Outcome` members, so an undeclared
outcome fails where it is logged, not in a report. A member is a ``str`` (``ToneOutcome.Started
== "Started"``), so decision logs, Parquet tables and JSON carry the plain name. The timeline and
the batch report read the class from the member (and, for a name read back from a table,
from :func:`audio.games.outcome_table`).
"""

from __future__ import annotations

import enum
from typing import Self

__all__ = [
    "CUT",
    "END",
    "FAULT",
    "LINE_END",
    "LINE_START",
    "QUIET",
    "REFUSED",
    "START",
    "STATE",
    "CoreOutcome",
    "Outcome",
    "OutcomeClass",
]


class OutcomeClass(enum.StrEnum):
    """What an outcome means to the timeline and the batch report."""

    START = "start"
    """A line or voice started playing (the timeline's voice bar opens)."""
    END = "end"
    """A line or voice ended normally (the bar closes)."""
    QUIET = "quiet"
    """Bookkeeping inside the line flow (accepted, queued, picked): drawn only through its voices."""
    CUT = "cut"
    """A playing line was cut, stopped, ducked or replaced."""
    STATE = "state"
    """The system changed state (a phase, a gate, a trigger): a marker on the timeline."""
    REFUSED = "refused"
    """A request the system turned down by one of its rules (the batch report's refusals)."""
    FAULT = "fault"
    """A bad take, file or event cost one voice or one request (:mod:`audio.core.faults`)."""


START, END, QUIET, CUT, STATE, REFUSED, FAULT = (
    OutcomeClass.START,
    OutcomeClass.END,
    OutcomeClass.QUIET,
    OutcomeClass.CUT,
    OutcomeClass.STATE,
    OutcomeClass.REFUSED,
    OutcomeClass.FAULT,
)


class Outcome(enum.StrEnum):
    """Base of a system's declared outcomes: members are ``Name = "Name", CLASS``."""

    kind: OutcomeClass

    def __new__(cls, value: str, kind: OutcomeClass) -> Outcome:
        member = str.__new__(cls, value)
        member._value_ = value
        member.kind = OutcomeClass(kind)
        return member

    @classmethod
    def named(cls, name: str) -> Self:
        """The member called ``name`` (a system's inner code); ``ValueError`` if undeclared."""
        member = cls._value2member_map_.get(name)
        if member is None:
            raise ValueError(f"{name!r} is not a declared {cls.__name__} outcome")
        return member  # type: ignore[return-value]


class CoreOutcome(Outcome):
    """Outcomes the engine itself logs for any system."""

    Fault = "Fault", FAULT
    """A take, file or event cost one voice or request, or a system was disabled."""
    Dropped = "Dropped", REFUSED
    """The world refused a new emitter (``max_emitters`` reached); logged as system ``world``."""


LINE_START = frozenset({"Started", "Playing", "LineStarted"})
"""Outcome names that open a speaker's line for the port's speech queries and the profiler's
review (names, not classes: Sylpheed's ``Ducked`` is a cut yet its line plays on)."""
LINE_END = frozenset({"Finished", "Interrupted", "Stopped", "Cut", "Ended", "LineFinished", "Fault"})
"""Outcome names that close a speaker's line (see :data:`LINE_START`)."""
