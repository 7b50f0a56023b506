"""The port's view of event building: :func:`make_event` raises :class:`PortError`.

Both live in :mod:`audio.core.fields` (games and the TUI adapters build events too); the
validation itself is :func:`audio.core.fields.build_event`, shared with capture replay.
"""

from __future__ import annotations

from audio.core.fields import PortError, event_fields, make_event

__all__ = ["PortError", "event_fields", "make_event"]
