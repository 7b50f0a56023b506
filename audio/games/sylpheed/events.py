"""Bus events of the Sylpheed chatter system (kinds ``sylpheed.*``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from audio.core.bus import Event

__all__ = ["CrewSetup", "Bark", "PhaseChange", "ChatterEnable", "Subtitle"]


@dataclass(frozen=True, kw_only=True)
class CrewSetup(Event, kind="sylpheed.crew"):
    """Load a crew's phase tables into one merged map and give it to its speakers.

    Exactly one source: ``tables`` (rule table names in phase order), or ``crew`` (a
    UnitMessageSet record, e.g. ``MessageSet_Ellen``) with ``stage``, or ``squadron`` (a
    UnitGroup squadron id: every member's message set) with ``stage``. ``speakers``
    default to the tables' ``Sperkers`` roster; ``phases`` are the phase slots filled.
    """

    crew: str = ""
    stage: str = ""
    squadron: str = ""
    tables: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()
    phases: tuple[int, ...] = (1, 2, 3)


@dataclass(frozen=True, kw_only=True)
class Bark(Event, kind="sylpheed.bark"):
    """A firing site raised ``event`` (a rule record name, e.g. ``LOCKON_1``) for ``speaker``."""

    speaker: Annotated[str, Meta(min_length=1)]
    event: Annotated[str, Meta(min_length=1)]


@dataclass(frozen=True, kw_only=True)
class PhaseChange(Event, kind="sylpheed.phase"):
    """Set the mission phase ([this+8816]); rules are looked up in slot ``phase - 1``."""

    phase: Annotated[int, Meta(ge=1, le=3)] = 1


@dataclass(frozen=True, kw_only=True)
class ChatterEnable(Event, kind="sylpheed.enable"):
    """Set the enable flag ([this+8843]); while False every trigger is refused."""

    enabled: bool = True


@dataclass(frozen=True, kw_only=True)
class Subtitle(Event, kind="sylpheed.subtitle"):
    """Output: a Window-pattern line started; ``pages`` is its text from the ``_msg`` table."""

    speaker: str = ""
    message: str = ""
    pages: tuple[str, ...] = ()
    priority: int = 0
    seconds: float = 0.0
