"""The games barkbus knows: scenario section name -> the module that implements it.

A game module exposes ``system_from_scenario(section: dict, ctx: ScenarioContext) -> System``
and ``scenario_events() -> dict[str, Callable[[dict, ScenarioContext], Event]]``. Modules are
imported only when a scenario uses their section, so the core never depends on a game.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["GAMES", "game_module"]

GAMES: dict[str, str] = {
    "skate": "audio.games.skate.system",
    "starlancer": "audio.games.starlancer.system",
    "sylpheed": "audio.games.sylpheed.system",
    "tone": "audio.games.tone.system",
}


def game_module(section: str) -> ModuleType:
    return importlib.import_module(GAMES[section])
