"""Skate 3's actions (OSC ``/skate/...``, TUI keys) onto its bus events."""

from __future__ import annotations

import audio.games.skate.events  # noqa: F401  (registers the skate.* event kinds)
from audio.core.plugin import POS, VEC3, Action, Param

__all__ = ["ACTIONS"]

_PED = ("ped", "ped_id", "id", "emitter")

ACTIONS = (
    Action(
        "skate/spawn",
        "skate.spawn",
        (
            Param("ped", int, _PED),
            Param("voice", "int|str", ("voice",)),
            Param("position", VEC3, POS, (0.0, 0.0, 5.0)),
            Param("model", str, ("model", "model_name"), "regular"),
        ),
        "spawn a Skate 3 ped (id, voice id or name, position m, model kind)",
    ),
    Action(
        "skate/value",
        "skate.value",
        (Param("ped", int, _PED), Param("value", int, ("value", "speech_value", "speechvalue"))),
        "send a speech value (SendSpeechEvent speechvalue=N) for a ped",
    ),
    Action(
        "skate/move",
        "skate.move",
        (Param("ped", int, _PED), Param("position", VEC3, POS)),
        "move a ped (metres)",
    ),
    Action(
        "skate/speed",
        "skate.speed",
        (Param("speed", float, ("speed", "speed_ms", "mps", "player_speed")),),
        "set the player's speed (m/s)",
    ),
    Action(
        "skate/zombie",
        "skate.zombie",
        (Param("on", bool, ("on", "zombie", "enabled")),),
        "toggle zombie mode (0/1)",
    ),
)
