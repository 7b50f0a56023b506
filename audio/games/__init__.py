"""The game registry: one :class:`Game` record per game, the only place the core learns of games.

A game is one package ``audio/games/NAME/`` whose ``game.py`` defines ``GAME = Game(...)``, plus
one line in :data:`REGISTRY`. Every front end (scenario loader, render, ``barkbus demo``, live,
the port API, the OSC address table, the TUI, the command line) iterates the registry; none
names a game. Each part of a record is a lazy ``"module:attr"`` reference relative to the game's
package, imported only when a front end needs it, so ``barkbus --help`` does not load any game's
decoders.

Parts of a game (``module:attr`` inside the game's package; the types are the game contract,
:mod:`audio.core.plugin`):

==============  ================================================================================
``system``      ``system_from_scenario(section: dict, ctx: ScenarioContext) -> GameSystem``
``outcomes``    the system's :class:`~audio.core.outcomes.Outcome` enum (every decision it logs)
``events``      ``scenario_events() -> dict[str, Callable[[dict, ScenarioContext], Event]]``
``actions``     a sequence of :class:`~audio.core.plugin.Action` (OSC addresses, TUI keys)
``tui``         a :class:`~audio.core.plugin.GameAdapter` subclass
``cli``         ``register(subparsers)`` adding the game's command group
``demo``        the demo scenario, a path relative to the game's package folder
``port``        ``port_section(install: str | None) -> dict``: the scenario section a port opens
``codecs``      codec name -> ``"module:attr"`` of a :class:`~audio.core.plugin.GameCodec` that
                ``barkbus encode`` writes (Starlancer's ``.ut``); names known without importing
==============  ================================================================================

The timeline and the batch report read each outcome's class (refused, cut, state, quiet,
start, end, fault) from these enums (:func:`outcome_table`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audio.core import capture
from audio.core.errors import InputError
from audio.core.outcomes import CoreOutcome, Outcome, OutcomeClass

if TYPE_CHECKING:
    from audio.core.plugin import GameCodec

__all__ = [
    "REGISTRY",
    "Game",
    "all_games",
    "codec_names",
    "game",
    "game_codec",
    "game_names",
    "install_section",
    "load_all_events",
    "outcome_table",
    "outcome_types",
]

REGISTRY: tuple[str, ...] = (
    "audio.games.tone.game",
    "audio.games.skate.game",
    "audio.games.sylpheed.game",
    "audio.games.starlancer.game",
    "audio.games.radiata.game",
)
"""The modules that define a ``GAME`` record, in the order front ends list them."""


def install_section(install: str | None) -> dict[str, Any]:
    """The scenario section of a game opened on ``install`` ("demo", None or a folder)."""
    return {"install": "demo" if install in (None, "demo") else str(Path(str(install)).resolve())}


@dataclass(frozen=True)
class Game:
    """Everything the core needs to know of one game.

    Parameters
    ----------
    name:
        Scenario section, event-kind prefix (``NAME.value``), OSC prefix (``/NAME/...``) and CLI
        group.
    title:
        The game's name for people ("Skate 3").
    package:
        The game's package (``audio.games.skate``); the references below are relative to it.
    outcomes:
        ``"module:attr"`` of the system's :class:`~audio.core.outcomes.Outcome` enum.
    system, events, actions, tui, cli, port:
        ``"module:attr"`` references (see the module docstring); ``None`` where the game has none.
    cli_help:
        The command group's one-line help, listed by ``barkbus --help`` without importing ``cli``.
    demo:
        Demo scenario path relative to the package folder, or ``None``.
    needs_install:
        Whether the game reads game data (an install root) or plays without any (test tones).
    codecs:
        ``(codec name, "module:attr")`` pairs of the game's own sample formats
        (:class:`~audio.core.plugin.GameCodec`) that ``barkbus encode`` writes; the names are
        known without importing the codec (``barkbus --help`` stays light).
    """

    name: str
    title: str
    package: str
    outcomes: str
    system: str = "scenario:system_from_scenario"
    events: str = "scenario:scenario_events"
    actions: str | None = "actions:ACTIONS"
    tui: str | None = "tui:Adapter"
    cli: str | None = "cli:register"
    cli_help: str = ""
    demo: str | None = None
    port: str | None = None
    needs_install: bool = True
    codecs: tuple[tuple[str, str], ...] = ()

    def load(self, part: str) -> Any:
        """Import and return the object a part refers to (``game.load("system")``)."""
        ref = getattr(self, part)
        if ref is None:
            raise InputError(f"{self.title} has no {part}")
        module, _, attr = ref.partition(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), attr)

    def demo_path(self) -> Path | None:
        """The demo scenario file inside the installed package, or ``None``."""
        if self.demo is None:
            return None
        return Path(str(resources.files(self.package).joinpath(self.demo)))

    def port_section(self, install: str | None) -> dict[str, Any]:
        """The scenario section :func:`audio.port.open_system` builds this game from."""
        if self.port is not None:
            return dict(self.load("port")(install))
        return install_section(install) if self.needs_install else {}


@cache
def all_games() -> tuple[Game, ...]:
    """Every registered game, in :data:`REGISTRY` order."""
    return tuple(importlib.import_module(m).GAME for m in REGISTRY)


def game_names() -> tuple[str, ...]:
    """The registered games' names (``("tone", "skate", ...)``)."""
    return tuple(g.name for g in all_games())


def game(name: str) -> Game:
    """The record of game ``name``; an :class:`InputError` naming the known games otherwise."""
    for g in all_games():
        if g.name == name:
            return g
    raise InputError(f"unknown game {name!r} (known: {', '.join(game_names())})")


def codec_names() -> dict[str, Game]:
    """Codec name -> the game whose record declares it (:attr:`Game.codecs`), without importing
    any codec."""
    return {name: g for g in all_games() for name, _ in g.codecs}


def game_codec(name: str) -> GameCodec:
    """The :class:`~audio.core.plugin.GameCodec` a game registers as ``name``."""
    from audio.core.plugin import GameCodec  # the contract's import cost only when encoding

    g = codec_names().get(name)
    if g is None:
        raise InputError(f"no game registers a codec {name!r} (known: {', '.join(codec_names()) or 'none'})")
    module, _, attr = dict(g.codecs)[name].partition(":")
    codec = getattr(importlib.import_module(f"{g.package}.{module}"), attr)
    if not isinstance(codec, GameCodec) or codec.name != name:
        raise TypeError(f"{g.package}.{module}:{attr} is not the GameCodec {name!r}")
    return codec


@cache
def outcome_types() -> tuple[type[Outcome], ...]:
    """The engine's own outcomes (:class:`~audio.core.outcomes.CoreOutcome`), then every
    registered game's outcome enum."""
    return (CoreOutcome, *(g.load("outcomes") for g in all_games()))


@cache
def outcome_table() -> dict[str, OutcomeClass]:
    """Outcome name -> class over :func:`outcome_types` (for names read back from a log or a
    table; a name two games declare has one class, which the contract test checks)."""
    out: dict[str, OutcomeClass] = {}
    for t in outcome_types():
        for m in t:
            out.setdefault(m.value, m.kind)
    return out


def load_all_events() -> None:
    """Import every game's events (registering their event kinds)."""
    for g in all_games():
        g.load("events")


capture.KIND_LOADERS.append(load_all_events)
