"""Building bus events from untrusted values (a port, OSC, a capture file).

:func:`build_event` looks an event class up by its kind name in
:func:`audio.core.bus.event_kinds` ("skate.value", "sylpheed.bark", "world.listener", ...) and
builds it through the one validator, :func:`audio.core.schema.convert`, against the event
class's type hints and ranges (numbers finite, no bool for a number, lists for tuples,
strings for strings, bounded sizes). Bad input raises
:class:`EventFieldError` with the reason; nothing reaches the engine.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from audio.core.bus import Event, event_kinds
from audio.core.errors import BarkbusError
from audio.core.schema import Limits, convert, did_you_mean

__all__ = ["EventFieldError", "PortError", "build_event", "event_fields", "make_event"]


class EventFieldError(BarkbusError, ValueError):
    """An event could not be built from the values given; the message says why."""


UNTRUSTED = Limits(max_str=256, max_items=64)
"""Bounds on values from a port, OSC or a capture: strings of 256 characters, lists of 64 items."""


def event_fields(kind: str) -> dict[str, Any]:
    """Field name -> type hint of event ``kind`` (without ``t``); EventFieldError if unknown."""
    cls = event_kinds().get(kind)
    if cls is None:
        known = ", ".join(sorted(event_kinds())) or "none"
        raise EventFieldError(
            f"unknown event kind {kind!r}{did_you_mean(kind, event_kinds())} (known: {known})"
        )
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.name != "t"}


def _field_error(source: str, where: str, problem: str) -> EventFieldError:
    return EventFieldError(f"{where}: {problem}" if where else problem)


def build_event(kind: str, /, **fields: Any) -> Event:
    """Build event ``kind`` from ``fields`` (validated by :mod:`audio.core.schema`; ``t``
    optional, seconds >= 0).

    Raises
    ------
    EventFieldError
        Unknown kind, unknown or missing field, or a value of the wrong type or range; the
        message names the field (``skate.value.value: expected `int` <= 255``).
    """
    hints = event_fields(kind)
    cls = event_kinds()[kind]
    for name, v in fields.items():  # OSC has no portable bool: 0/1 stand for false/true
        if hints.get(name) is bool and type(v) is int and v in (0, 1):
            fields[name] = bool(v)
    t = fields.get("t")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t < 0:
        raise EventFieldError(f"{kind}.t: expected a time >= 0 s, got {t}")
    try:
        return convert(fields, cls, source="<event>", where=kind, error=_field_error, limits=UNTRUSTED)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, EventFieldError):
            raise
        raise EventFieldError(f"{kind}: {exc}") from None


class PortError(EventFieldError):
    """A port, OSC or TUI request was rejected; the message says why."""


def make_event(kind: str, /, **fields: Any) -> Event:
    """Build event ``kind`` from untrusted ``fields`` (see :func:`build_event`); raises
    :class:`PortError`."""
    try:
        return build_event(kind, **fields)
    except PortError:
        raise
    except EventFieldError as exc:
        raise PortError(str(exc)) from None
