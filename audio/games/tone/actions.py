"""The test-tone system's actions (OSC ``/tone/...``, TUI keys)."""

from __future__ import annotations

import audio.games.tone.events  # noqa: F401  (registers the tone.* event kinds)
from audio.core.plugin import Action, Param

__all__ = ["ACTIONS"]

ACTIONS = (
    Action(
        "tone/on",
        "tone.on",
        (
            Param("speaker", str, ("speaker",)),
            Param("line", str, ("line",), ""),
            Param("freq_hz", float, ("freq_hz",), 440.0),
            Param("seconds", float, ("seconds",), 0.25),
            Param("level", float, ("level",), 0.5),
            Param("fade_ms", float, ("fade_ms",), 5.0),
        ),
        "start a test-tone line for a speaker",
    ),
    Action(
        "tone/stop", "tone.stop", (Param("speaker", str, ("speaker",)),), "stop a speaker's test-tone line"
    ),
)
