"""Embedding API and network interface of barkbus.

- :func:`open_system` / :class:`VoicePort` (:mod:`audio.port.api`): build the voice system of
  any registered game (:mod:`audio.games`) on an install or its demo, post events with game
  timestamps, advance time and pull blocks or own the audio device, query speech, subscribe
  to decisions and subtitles.
- :func:`make_event` (:mod:`audio.port.events`): validated events from keyword arguments.
- :data:`ACTIONS` / :func:`register_action` (:mod:`audio.port.adapters`): friendly actions
  shared by the OSC server and the TUI.
- :class:`OscServer` (:mod:`audio.port.osc`): OSC over UDP (address space in its docstring).
"""

from audio.port.adapters import ACTIONS, Action, Param, available_actions, register_action
from audio.port.api import SpeechTracker, Subtitle, VoicePort, engine_for_capture, open_scenario, open_system
from audio.port.events import PortError, make_event
from audio.port.osc import DEFAULT_PORT, OscServer, OscStats

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
