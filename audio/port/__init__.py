"""Embedding API and network interface of barkbus.

- :func:`open_system` / :class:`VoicePort` (:mod:`audio.port.api`): build a voice system
  (test tone, Skate 3 or Project Sylpheed on an install or the demo), post events with game
  timestamps, advance time and pull blocks or own the audio device, query speech, subscribe
  to decisions and subtitles.
- :func:`make_event` (:mod:`audio.port.events`): validated events from keyword arguments.
- :data:`ACTIONS` / :func:`register_action` (:mod:`audio.port.adapters`): friendly actions
  shared by the OSC server and the TUI.
- :class:`OscServer` (:mod:`audio.port.osc`): OSC over UDP (address space in its docstring).
- :class:`ToneSystem` (:mod:`audio.games.tone.system`): a test-tone speech system.
"""

from audio.port.adapters import ACTIONS, Action, Param, available_actions, register_action
from audio.port.api import GAMES, SpeechTracker, Subtitle, VoicePort, engine_for_capture, open_scenario, open_system
from audio.port.events import PortError, make_event
from audio.port.osc import DEFAULT_PORT, OscServer, OscStats
from audio.games.tone.system import ToneOn, ToneStop, ToneSystem

__all__ = [
    "ACTIONS",
    "DEFAULT_PORT",
    "GAMES",
    "Action",
    "OscServer",
    "OscStats",
    "Param",
    "PortError",
    "SpeechTracker",
    "Subtitle",
    "ToneOn",
    "ToneStop",
    "ToneSystem",
    "VoicePort",
    "available_actions",
    "engine_for_capture",
    "make_event",
    "open_scenario",
    "open_system",
    "register_action",
]
