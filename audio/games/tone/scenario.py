"""The test-tone scenario section: :func:`system_from_scenario` builds the system from ``[tone]``,
:func:`scenario_events` the ``tone.on`` / ``tone.stop`` builders, :func:`port_section` the section a
port opens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audio.core.bus import Event
from audio.core.errors import ScenarioError
from audio.core.fields import PortError, make_event
from audio.core.plugin import ScenarioContext
from audio.games.tone.events import ToneOn, ToneStop
from audio.games.tone.system import DEFAULT_GRAPH, ToneSystem

__all__ = ["port_section", "scenario_events", "system_from_scenario"]


def _factory(kind: str) -> Callable[[dict[str, Any], ScenarioContext], Event]:
    def make(d: dict[str, Any], ctx: ScenarioContext) -> Event:
        try:
            return make_event(kind, **{k: v for k, v in d.items() if k != "type"})
        except PortError as exc:
            raise ScenarioError(str(ctx.path), f"event {kind}", str(exc)) from None

    return make


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Factories for the scenario's ``[[event]]`` types ``tone.on`` / ``tone.stop``."""
    return {cls.KIND: _factory(cls.KIND) for cls in (ToneOn, ToneStop)}


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> ToneSystem:
    """Build the system from a scenario's ``[tone]`` section.

    Parameters
    ----------
    section:
        The ``[tone]`` table: ``graph`` (voice graph name), ``max_seconds`` (longest line, s).
    ctx:
        The scenario being read (its path names the file in errors).
    """
    where = str(ctx.path)
    unknown = set(section) - {"graph", "max_seconds"}
    if unknown:
        raise ScenarioError(where, "[tone]", f"unknown key {min(unknown)!r} (known: graph, max_seconds)")
    graph = section.get("graph", DEFAULT_GRAPH)
    max_s = section.get("max_seconds", 30.0)
    if (
        not isinstance(graph, str)
        or isinstance(max_s, bool)
        or not isinstance(max_s, (int, float))
        or max_s <= 0
    ):
        raise ScenarioError(where, "[tone]", "graph must be a graph name and max_seconds a number > 0")
    return ToneSystem(graph, max_seconds=float(max_s))


def port_section(install: str | None) -> dict[str, Any]:
    """The ``[tone]`` section a port opens (no install: the tones need no game data)."""
    return {"graph": DEFAULT_GRAPH}
