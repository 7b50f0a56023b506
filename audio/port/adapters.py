"""The action registry: every game's friendly actions (OSC addresses, TUI keys) by name.

An :class:`~audio.core.plugin.Action` (defined in the game contract, :mod:`audio.core.plugin`)
names an event kind ("skate.value") and its parameters in the order an OSC message or a key
press gives them. Each game lists its own in its package (``actions.py``), registered through
:mod:`audio.games`; the OSC server and the TUI read them from :data:`ACTIONS`.
"""

from __future__ import annotations

from audio.core.plugin import POS, VEC3, Action, Param

__all__ = [
    "ACTIONS",
    "GENERIC_ACTIONS",
    "POS",
    "VEC3",
    "Action",
    "Param",
    "available_actions",
    "load_game_actions",
    "register_action",
]

GENERIC_ACTIONS: tuple[Action, ...] = (
    Action(
        "listener",
        "world.listener",
        (Param("position", VEC3, POS), Param("yaw_deg", float, ("yaw_deg",), 0.0)),
        "move the listener (metres, yaw degrees)",
    ),
    Action(
        "emitter",
        "world.emitter",
        (Param("emitter", str, ("emitter", "id")), Param("position", VEC3, POS)),
        "place an emitter (metres)",
    ),
)
"""Actions every game has (the world's listener and emitters)."""

ACTIONS: dict[str, Action] = {a.name: a for a in GENERIC_ACTIONS}
"""Registered actions by name: the generic ones, then each game's (see :func:`load_game_actions`)."""


def register_action(action: Action) -> None:
    """Add (or replace) a friendly action.

    Parameters
    ----------
    action:
        The action; one of the same name is replaced.
    """
    ACTIONS[action.name] = action


def load_game_actions() -> dict[str, Action]:
    """Register the actions of every game in :mod:`audio.games` (once) and return them all."""
    from audio.games import all_games

    for g in all_games():
        if g.actions is not None and not any(n.startswith(g.name + "/") for n in ACTIONS):
            for a in g.load("actions"):
                register_action(a)
    return ACTIONS


def available_actions() -> dict[str, Action]:
    """The registered actions usable now (their event kinds and fields exist)."""
    return {n: a for n, a in load_game_actions().items() if a.unavailable() is None}
