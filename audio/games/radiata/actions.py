"""Radiata Stories' actions (OSC ``/radiata/...``, TUI keys) onto its bus events."""

from __future__ import annotations

import audio.games.radiata.events  # noqa: F401  (registers the radiata.* event kinds)
from audio.core.plugin import Action, Param

__all__ = ["ACTIONS"]

ACTIONS = (
    Action(
        "radiata/talk",
        "radiata.talk",
        (
            Param("file", str, ("file",)),
            Param("packet", int, ("packet",), 0),
            Param("voice", bool, ("voice",), True),
            Param("auto_advance", bool, ("auto_advance",), False),
        ),
        "start a conversation (RMF file, packet, voice on/off, auto-advance)",
    ),
    Action(
        "radiata/advance",
        "radiata.advance",
        (),
        "press continue (close a waiting box, or show the text at once)",
    ),
    Action(
        "radiata/choose",
        "radiata.choose",
        (Param("option", int, ("option",)),),
        "pick a choice option (0-based)",
    ),
)
