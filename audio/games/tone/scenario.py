"""The test-tone scenario section: :func:`system_from_scenario` builds the system from ``[tone]``,
:func:`scenario_events` the ``tone.on`` / ``tone.stop`` builders, :func:`port_section` the section a
port opens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from msgspec import Meta

from audio.core.bus import Event
from audio.core.plugin import ScenarioContext
from audio.core.schema import Struct, convert
from audio.games.tone.events import ToneOn, ToneStop
from audio.games.tone.system import DEFAULT_GRAPH, ToneSystem

__all__ = ["ToneSection", "port_section", "scenario_events", "system_from_scenario"]


class ToneSection(Struct):
    """The ``[tone]`` scenario section."""

    graph: Annotated[str, Meta(min_length=1, max_length=256)] = DEFAULT_GRAPH
    """Voice graph the lines play through."""
    max_seconds: Annotated[float, Meta(gt=0.0, le=86_400.0)] = 30.0
    """Longest line accepted (s); a longer one is Rejected."""


def _factory(cls: type[Event]) -> Callable[[dict[str, Any], ScenarioContext], Event]:
    def make(d: dict[str, Any], ctx: ScenarioContext) -> Event:
        fields = {k: v for k, v in d.items() if k != "type"}
        return convert(fields, cls, source=str(ctx.path), where=ctx.where or cls.KIND)

    return make


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Factories for the scenario's ``[[event]]`` types ``tone.on`` / ``tone.stop`` (each entry
    checked against the event type)."""
    return {cls.KIND: _factory(cls) for cls in (ToneOn, ToneStop)}


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> ToneSystem:
    """Build the system from a scenario's ``[tone]`` section (:class:`ToneSection`).

    Parameters
    ----------
    section:
        The ``[tone]`` table: ``graph`` (voice graph name), ``max_seconds`` (longest line, s).
    ctx:
        The scenario being read (its path names the file in errors).
    """
    cfg = convert(section, ToneSection, source=str(ctx.path), where="tone")
    return ToneSystem(cfg.graph, max_seconds=cfg.max_seconds)


def port_section(install: str | None) -> dict[str, Any]:
    """The ``[tone]`` section a port opens (no install: the tones need no game data)."""
    return {"graph": DEFAULT_GRAPH}
