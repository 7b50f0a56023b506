"""The port's view of event building: :func:`make_event` raises :class:`PortError`.

The validation itself is :func:`audio.core.fields.build_event`, shared with capture replay.
"""

from __future__ import annotations

from typing import Any

from audio.core.bus import Event
from audio.core.fields import EventFieldError, build_event, event_fields

__all__ = ["PortError", "event_fields", "make_event"]


class PortError(EventFieldError):
    """A port or OSC request was rejected; the message says why."""


def make_event(kind: str, /, **fields: Any) -> Event:
    """Build event ``kind`` from untrusted ``fields`` (see :func:`audio.core.fields.build_event`)."""
    try:
        return build_event(kind, **fields)
    except PortError:
        raise
    except EventFieldError as exc:
        raise PortError(str(exc)) from None
