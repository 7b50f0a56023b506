"""The bundled demo scenarios: one per registered game that ships one, and ``basic``.

Light on purpose (the game registry only): the command line lists the demos in its
``--help`` without importing the scenario loader, the codecs or numba.
"""

from __future__ import annotations

from pathlib import Path

from audio.core.errors import ScenarioError
from audio.games import all_games, game, game_names

__all__ = ["BASIC_DEMO", "demo_names", "demo_scenario"]

BASIC_DEMO = Path(__file__).resolve().parent / "demo" / "basic.toml"
"""The generic demo: ``play`` events of an espeak-ng line at moving emitters (no game)."""


def demo_names() -> list[str]:
    """The bundled demos: every registered game that ships one, then ``"basic"``."""
    return [g.name for g in all_games() if g.demo is not None] + ["basic"]


def demo_scenario(which: str) -> Path:
    """Path of a bundled demo scenario: a game's name (see :func:`demo_names`) or ``"basic"``."""
    if which == "basic":
        return BASIC_DEMO
    path = game(which).demo_path() if which in game_names() else None
    if path is None:
        raise ScenarioError("<demo>", None, f"no demo {which!r} (have: {', '.join(demo_names())})")
    return path
