"""Bus events of the Sylpheed chatter system (kinds ``sylpheed.*``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from audio.core.bus import Event, SubtitleEvent

__all__ = ["CrewSetup", "Bark", "PhaseChange", "ChatterEnable", "Subtitle"]

Name = Annotated[str, Meta(max_length=256)]


@dataclass(frozen=True, kw_only=True)
class CrewSetup(Event, kind="sylpheed.crew"):
    """Load a crew's phase tables into one merged map and give it to its speakers.

    Exactly one source: ``tables`` (rule table names in phase order), or ``crew`` (a
    UnitMessageSet record, e.g. ``MessageSet_Ellen``) with ``stage``, or ``squadron`` (a
    UnitGroup squadron id: every member's message set) with ``stage``. ``speakers``
    default to the tables' ``Sperkers`` roster; ``phases`` are the phase slots filled.
    """

    crew: Name = ""
    stage: Annotated[str, Meta(pattern=r"^([Ss]?[0-9]{1,3})?$")] | Annotated[int, Meta(ge=0, le=999)] = ""
    """A stage number (``2``, ``"02"``, ``"S02"``; read as ``"S02"``), or "" for ``tables``."""
    squadron: Name = ""
    tables: Annotated[tuple[Name, ...], Meta(max_length=64)] = ()
    speakers: Annotated[tuple[Name, ...], Meta(max_length=256)] = ()
    phases: Annotated[tuple[Annotated[int, Meta(ge=1, le=3)], ...], Meta(max_length=3)] = (1, 2, 3)


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
class Subtitle(SubtitleEvent, kind="sylpheed.subtitle"):
    """Output: a Window-pattern line started; ``pages`` is its text from the ``_msg`` table."""

    speaker: str = ""
    message: str = ""
    pages: tuple[str, ...] = ()
    priority: int = 0
    seconds: float = 0.0

    def caption(self) -> tuple[str, str, str]:
        """``(speaker, pages joined with " / ", message)``."""
        return self.speaker, " / ".join(self.pages), self.message
