"""Embedding API and network interface of barkbus.

- :func:`open_system` / :class:`VoicePort` (:mod:`audio.port.api`): build the voice system of
  any registered game (:mod:`audio.games`) on an install or its demo, post events with game
  timestamps, advance time and pull blocks or own the audio device, query speech, subscribe
  to decisions and subtitles.
- :func:`make_event` (:mod:`audio.port.events`): validated events from keyword arguments.
- :data:`ACTIONS` / :func:`register_action` (:mod:`audio.port.adapters`): friendly actions
  shared by the OSC server and the TUI.
- :class:`OscServer` (:mod:`audio.port.osc`): OSC over UDP (address space in its docstring).

The names are imported on first use (as the package root does), so a module of this room that
needs none of them (``barkbus live --help``, :mod:`audio.port.live`'s parser) loads no engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audio.core.exports import lazy_exports

if TYPE_CHECKING:
    from audio.port.adapters import ACTIONS, Action, Param, available_actions, register_action
    from audio.port.api import (
        SpeechTracker,
        Subtitle,
        VoicePort,
        engine_for_capture,
        open_scenario,
        open_system,
    )
    from audio.port.events import PortError, make_event
    from audio.port.osc import DEFAULT_PORT, OscServer, OscStats

_EXPORTS = {
    "ACTIONS": "audio.port.adapters",
    "Action": "audio.port.adapters",
    "Param": "audio.port.adapters",
    "available_actions": "audio.port.adapters",
    "register_action": "audio.port.adapters",
    "SpeechTracker": "audio.port.api",
    "Subtitle": "audio.port.api",
    "VoicePort": "audio.port.api",
    "engine_for_capture": "audio.port.api",
    "open_scenario": "audio.port.api",
    "open_system": "audio.port.api",
    "PortError": "audio.port.events",
    "make_event": "audio.port.events",
    "DEFAULT_PORT": "audio.port.osc",
    "OscServer": "audio.port.osc",
    "OscStats": "audio.port.osc",
}
"""Exported name -> the module it is imported from on first use."""

__all__ = [
    "ACTIONS",
    "DEFAULT_PORT",
    "Action",
    "OscServer",
    "OscStats",
    "Param",
    "PortError",
    "SpeechTracker",
    "Subtitle",
    "VoicePort",
    "available_actions",
    "engine_for_capture",
    "make_event",
    "open_scenario",
    "open_system",
    "register_action",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
