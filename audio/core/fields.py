"""Building bus events from untrusted values (a port, OSC, a capture file).

:func:`build_event` looks an event class up by its kind name in
:func:`audio.core.bus.event_kinds` ("skate.value", "sylpheed.bark", "world.listener", ...) and
builds it after checking every value against the field's type hint (numbers finite, no
bool for a number, lists for tuples, strings for strings, bounded sizes). Bad input raises
:class:`EventFieldError` with the reason; nothing reaches the engine.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

from audio.core.bus import Event, event_kinds
from audio.core.errors import BarkbusError

__all__ = ["EventFieldError", "event_fields", "build_event"]


class EventFieldError(BarkbusError, ValueError):
    """An event could not be built from the values given; the message says why."""


_MAX_STR = 256
_MAX_ITEMS = 64


def event_fields(kind: str) -> dict[str, Any]:
    """Field name -> type hint of event ``kind`` (without ``t``); EventFieldError if unknown."""
    cls = event_kinds().get(kind)
    if cls is None:
        raise EventFieldError(f"unknown event kind {kind!r} (known: {', '.join(sorted(event_kinds())) or 'none'})")
    hints = typing.get_type_hints(cls)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.name != "t"}


def _check(name: str, tp: Any, v: Any) -> Any:
    """Validate ``v`` against ``tp``; returns the value converted (lists -> tuples)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for a in typing.get_args(tp):
            if a is type(None):
                if v is None:
                    return None
                continue
            try:
                return _check(name, a, v)
            except EventFieldError as exc:
                errors.append(str(exc))
        raise EventFieldError(errors[0] if errors else f"{name}: unexpected value {v!r}")
    if origin is typing.Literal:
        if v in typing.get_args(tp):
            return v
        raise EventFieldError(f"{name}: expected one of {typing.get_args(tp)}, got {v!r}")
    if tp is bool:
        if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
            return bool(v)
        raise EventFieldError(f"{name}: expected a bool (0/1), got {v!r}")
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
                return int(v)
            raise EventFieldError(f"{name}: expected an integer, got {v!r}")
        if abs(v) >= 2**63:
            raise EventFieldError(f"{name}: integer out of range: {v}")
        return v
    if tp is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise EventFieldError(f"{name}: expected a number, got {v!r}")
        if not math.isfinite(v):
            raise EventFieldError(f"{name}: expected a finite number, got {v!r}")
        return float(v)
    if tp is str:
        if not isinstance(v, str) or len(v) > _MAX_STR:
            raise EventFieldError(f"{name}: expected a string of at most {_MAX_STR} characters, got {v!r:.60}")
        return v
    if tp is tuple or origin is tuple or tp is list or origin is list:
        if not isinstance(v, (list, tuple)) or len(v) > _MAX_ITEMS:
            raise EventFieldError(f"{name}: expected a list of at most {_MAX_ITEMS} items, got {v!r:.60}")
        args = typing.get_args(tp)
        if args and args[-1] is Ellipsis:
            items = [_check(f"{name}[{i}]", args[0], x) for i, x in enumerate(v)]
        elif args:
            if len(args) != len(v):
                raise EventFieldError(f"{name}: expected {len(args)} items, got {len(v)}")
            items = [_check(f"{name}[{i}]", a, x) for i, (a, x) in enumerate(zip(args, v))]
        else:
            items = [_check(f"{name}[{i}]", Any, x) for i, x in enumerate(v)]
        return tuple(items) if (tp is tuple or origin is tuple) else items
    if tp is Any:
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return _check(name, float, v)
        if isinstance(v, (list, tuple)):
            return _check(name, tuple, v)
        raise EventFieldError(f"{name}: unsupported value {v!r:.60}")
    if isinstance(tp, type) and isinstance(v, tp):
        return v
    raise EventFieldError(f"{name}: cannot take {v!r:.60} for a field of type {tp}")


def build_event(kind: str, /, **fields: Any) -> Event:
    """Build event ``kind`` from ``fields`` (validated; ``t`` optional, seconds >= 0).

    Raises
    ------
    EventFieldError
        Unknown kind, unknown or missing field, or a value of the wrong type/range.
    """
    hints = event_fields(kind)
    cls = event_kinds()[kind]
    unknown = sorted(set(fields) - set(hints) - {"t"})
    if unknown:
        raise EventFieldError(
            f"{kind}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(hints) or 'none'})"
        )
    kwargs = {name: _check(f"{kind}.{name}", hints[name], v) for name, v in fields.items() if name != "t"}
    if "t" in fields:
        t = _check(f"{kind}.t", float, fields["t"])
        if t < 0:
            raise EventFieldError(f"{kind}.t: expected a time >= 0 s, got {t}")
        kwargs["t"] = t
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise EventFieldError(f"{kind}: {exc}") from None
