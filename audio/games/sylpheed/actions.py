"""Project Sylpheed's actions (OSC ``/sylpheed/...``, TUI keys) onto its bus events."""

from __future__ import annotations

import audio.games.sylpheed.events  # noqa: F401  (registers the sylpheed.* event kinds)
from audio.core.plugin import Action, Param

__all__ = ["ACTIONS"]

ACTIONS = (
    Action(
        "sylpheed/bark",
        "sylpheed.bark",
        (Param("speaker", str, ("speaker", "crew", "who")), Param("event", str, ("event", "rule", "name"))),
        "fire a chatter event (speaker, rule name such as LOCKON_1)",
    ),
    Action(
        "sylpheed/phase",
        "sylpheed.phase",
        (Param("phase", int, ("phase",)),),
        "change the mission phase (1-3)",
    ),
)
