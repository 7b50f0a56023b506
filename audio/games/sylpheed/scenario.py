"""Scenario hooks: the ``[sylpheed]`` section and the ``sylpheed.*`` ``[[event]]`` types.

``[sylpheed]`` keys (all optional except a crew to hear anything)::

    [sylpheed]
    install = "demo"            # "demo" = audio/games/sylpheed/demo, or a path (relative to the
                                # scenario file) to a folder holding dat/
    lang = "eng"                # voice language: eng | jpn (GP_MAIN_GAME_E / _J)
    phase = 1                   # initial mission phase (rule slot phase - 1)
    enabled = true              # initial enable flag
    generator = "msvc"          # rand(): msvc | ansi (our choice, see audio.games.sylpheed.chatter.rand)
    fold = "hi8lo8"             # rand01 fold: hi8lo8 | xor16    (our choice)
    missing_line_s = 2.0        # how long a line with no recording holds its path (s)
    hold_effective_time = true  # lines hold their path >= EffectiveTime (our reading)
    pool_size = 128             # queue nodes (the game: 128)

    [[sylpheed.crew]]           # one per crew, applied before the first event; with no
                                # [[sylpheed.crew]] at all, every crew of every stage's
                                # UnitMessageSet in the install is loaded (crew = [] for none)
    stage = "S02"               # with crew = "MessageSet_Ellen" (a UnitMessageSet record) ...
    crew = "MessageSet_Ellen"
    # squadron = "TCN004"       # ... or a UnitGroup squadron (all its members' message sets)
    # tables = ["PresetMessage_Ellen_S02-1"]   # ... or rule tables by name, phase order
    # speakers = ["CharacterELLEN"]            # default: the tables' Sperkers roster
    # phases = [1, 2, 3]

``[[event]]`` types (``t`` in seconds)::

    { t = 1.0, type = "sylpheed.bark", speaker = "ELLEN", event = "LOCKON_1" }
    { t = 9.0, type = "sylpheed.phase", phase = 2 }
    { t = 9.5, type = "sylpheed.enable", enabled = false }   # or type = "sylpheed.disable"
    { t = 0.0, type = "sylpheed.crew", stage = "S02", crew = "MessageSet_Ellen" }

A speaker may be given with or without the roster's ``Character`` prefix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from audio.core import memo
from audio.core.bus import Event
from audio.core.errors import FormatError, ScenarioError
from audio.core.plugin import ScenarioContext
from audio.core.schema import Struct, convert
from audio.games.sylpheed.events import Bark, ChatterEnable, CrewSetup, PhaseChange
from audio.games.sylpheed.formats.install import SylpheedInstall, stage_tag
from audio.games.sylpheed.system import SylpheedChatterSystem

__all__ = ["SylpheedSection", "demo_root", "scenario_events", "system_from_scenario"]


def demo_root() -> Path:
    """The demo install built by ``tools/build_sylpheed_demo.py``."""
    return Path(__file__).resolve().parent / "demo"


def _where(ctx: ScenarioContext) -> str:
    return str(ctx.path)


class SylpheedSection(Struct, kw_only=True):
    """The ``[sylpheed]`` scenario section (keys in the module docstring)."""

    install: str = "demo"
    lang: str = "eng"
    phase: Annotated[int, Meta(ge=1, le=3)] = 1
    enabled: bool = True
    generator: Literal["msvc", "ansi"] = "msvc"
    fold: Literal["hi8lo8", "xor16"] = "hi8lo8"
    missing_line_s: Annotated[float, Meta(ge=0.0, le=60.0)] = 2.0
    hold_effective_time: bool = True
    pool_size: Annotated[int, Meta(ge=1, le=4096)] = 128
    crew: list[dict[str, Any]] | None = None
    """``[[sylpheed.crew]]`` entries, each a :class:`CrewSetup` (checked when the system is built)."""


def _crew(entry: dict[str, Any], ctx: ScenarioContext, what: str) -> CrewSetup:
    """A crew entry checked against :class:`CrewSetup`: exactly one source, a stage for a crew
    or squadron (normalised to ``S02``)."""
    fields = {k: v for k, v in entry.items() if k != "type"}
    c = convert(fields, CrewSetup, source=_where(ctx), where=ctx.where or what)
    if sum(bool(x) for x in (c.crew, c.squadron, c.tables)) != 1:
        raise ScenarioError(_where(ctx), what, "give exactly one of crew, squadron, tables")
    stage = stage_tag(c.stage) if c.stage != "" else ""
    if not c.tables and not stage:
        raise ScenarioError(_where(ctx), what, "crew and squadron need a stage")
    return dataclasses.replace(c, stage=stage)


def _event(cls: type[Event], **fixed: Any) -> Callable[[dict[str, Any], ScenarioContext], Event]:
    def make(e: dict[str, Any], ctx: ScenarioContext) -> Event:
        fields = {k: v for k, v in e.items() if k != "type"} | fixed
        return convert(fields, cls, source=_where(ctx), where=ctx.where or cls.KIND)

    return make


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Scenario ``[[event]]`` type -> builder ``(entry, ctx) -> Event``."""
    return {
        "sylpheed.bark": _event(Bark),
        "sylpheed.phase": _event(PhaseChange),
        "sylpheed.enable": _event(ChatterEnable),
        "sylpheed.disable": _event(ChatterEnable, enabled=False),
        "sylpheed.crew": lambda e, c: _crew(e, c, "sylpheed.crew"),
    }


def install_names(install: SylpheedInstall, crews: list[CrewSetup]) -> tuple[set[str], set[str]]:
    """Every speaker and chatter event of the install's rule tables (those its UnitMessageSets
    reach and those the crews name), for the load-time name check."""
    tables = [*install.reachable_rule_tables(), *(t for c in crews for t in c.tables)]
    speakers: set[str] = set()
    events: set[str] = set()
    for name in dict.fromkeys(tables):
        table = install.rule_table(name)
        speakers.update(s.removeprefix("Character") for s in table.speakers)
        events.update(e.event for e in table.events)
    for c in crews:
        speakers.update(s.removeprefix("Character") for s in c.speakers)
    return speakers, events


def _install(root: Path, lang: str) -> SylpheedInstall:
    """The install at ``root``: a batch worker keeps it (with the tables and lines it has read)
    for its later runs (:mod:`audio.core.memo`); every other caller opens its own."""
    if not memo.active():
        return SylpheedInstall(root, lang)
    return memo.memo(
        ("sylpheed.install", lang, *memo.folder_key(root / "dat")), lambda: SylpheedInstall(root, lang)
    )


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> SylpheedChatterSystem:
    """Build the chatter system for a ``[sylpheed]`` section (keys in the module docstring)."""
    where = _where(ctx)
    cfg = convert(section, SylpheedSection, source=where, where="sylpheed")
    inst = cfg.install
    if inst == "demo":
        root = demo_root()
    else:
        root = ctx.resolve(inst)
    if not (root / "dat").is_dir():
        raise ScenarioError(
            where,
            "[sylpheed].install",
            f"no dat/ folder under {root}"
            + (" (run tools/build_sylpheed_demo.py)" if inst == "demo" else ""),
        )
    crews = [
        _crew(c, dataclasses.replace(ctx, where=f"sylpheed.crew[{i}]"), f"sylpheed.crew[{i}]")
        for i, c in enumerate(cfg.crew or [])
    ]
    install = _install(root, cfg.lang)
    try:
        if cfg.crew is None:
            crews = [
                CrewSetup(stage=st, crew=c.name)
                for st in install.stages()
                for c in install.unit_message_set(st).crews
            ]
        return SylpheedChatterSystem(
            install,
            install,
            crews=crews,
            generator=cfg.generator,
            fold=cfg.fold,
            missing_line_s=cfg.missing_line_s,
            hold_effective_time=cfg.hold_effective_time,
            pool_size=cfg.pool_size,
            phase=cfg.phase,
            enabled=cfg.enabled,
            names=install_names(install, crews),
        )
    except (ValueError, FormatError) as exc:
        raise ScenarioError(where, "[sylpheed]", str(exc)) from None
