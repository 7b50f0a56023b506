"""Port actions (OSC addresses, TUI keys) of the Starlancer radio: say, trigger, happen, gate, reset.

Queries for a port: ``system.film_playing()``, ``system.speech_playing()`` (alias ``speaking``),
``system.busy()``.
"""

from __future__ import annotations

import audio.games.starlancer.events  # noqa: F401  (registers the starlancer.* event kinds)
from audio.core.plugin import Action, Param

__all__ = ["ACTIONS"]

ACTIONS: tuple[Action, ...] = (
    Action(
        "starlancer/say",
        "starlancer.say",
        (
            Param("speaker", str, ("speaker",)),
            Param("speech", str, ("speech",)),
            Param("mode", str, ("mode",), "queued"),
            Param("film_flags", int, ("film_flags",), 5),
            Param("expiry", int, ("expiry",), -1),
            Param("remark", str, ("remark",), ""),
        ),
        "a radio line: speaker ship:NAME | pilot:N | nobody, speech .ut name, mode now|queued|if_idle, "
        "film flags (5 loop, 6 once), expiry ticks (-1 never), remark kind (gated) or empty",
    ),
    Action(
        "starlancer/trigger",
        "starlancer.trigger",
        (
            Param("condition", "int|str", ("condition",)),
            Param("subject", "int|str", ("subject",)),
            Param("component", int, ("component",), 0xFF),
        ),
        "raise a trigger condition (Destroyed, ShotAt, ...) on an object (ID or ship name)",
    ),
    Action(
        "starlancer/happen",
        "starlancer.happen",
        (
            Param("what", str, ("what",)),
            Param("ship", "int|str", ("ship",), ""),
            Param("other", "int|str", ("other",), ""),
            Param("kind", str, ("kind",), ""),
            Param("value", int, ("value",), 0),
            Param("busy", bool, ("busy",), False),
        ),
        "a world event for the script and the remarks: create, explode, kill, hit, missile, "
        "missile_clear, eject, eject_call, launch, lost, wingman, variable, key, jumping, jumped, "
        "land, backup",
    ),
    Action(
        "starlancer/gate",
        "starlancer.gate",
        (Param("gate", str, ("gate",)), Param("disabled", bool, ("disabled",), True)),
        "set a remark gate: generic (DisableGenericComms) or taunts (DisableTaunts)",
    ),
    Action(
        "starlancer/reset",
        "starlancer.reset",
        (Param("restart", bool, ("restart",), False),),
        "radio_reset at mission start (restart: also restart the mission script)",
    ),
)
