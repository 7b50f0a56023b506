"""Scenario hooks: the ``[sylpheed]`` section and the ``sylpheed.*`` ``[[event]]`` types.

``[sylpheed]`` keys (all optional except a crew to hear anything)::

    [sylpheed]
    install = "demo"            # "demo" = audio/games/sylpheed/demo, or a path (relative to the
                                # scenario file) to a folder holding dat/
    lang = "eng"                # voice language: eng | jpn (GP_MAIN_GAME_E / _J)
    phase = 1                   # initial mission phase (rule slot phase - 1)
    enabled = true              # initial enable flag
    generator = "msvc"          # rand(): msvc | ansi            (our choice, see audio.games.sylpheed.chatter.rand)
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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from audio.core.bus import Event
from audio.core.errors import FormatError, ScenarioError
from audio.games.sylpheed.events import Bark, ChatterEnable, CrewSetup, PhaseChange
from audio.games.sylpheed.formats.install import SylpheedInstall, stage_tag
from audio.games.sylpheed.system import SylpheedChatterSystem

__all__ = ["scenario_events", "system_from_scenario", "demo_root", "SECTION_KEYS", "CREW_KEYS"]

SECTION_KEYS = {"install", "lang", "phase", "enabled", "generator", "fold", "missing_line_s",
                "hold_effective_time", "pool_size", "crew"}
CREW_KEYS = {"stage", "crew", "squadron", "tables", "speakers", "phases", "t", "type"}


def demo_root() -> Path:
    """The demo install built by ``tools/build_sylpheed_demo.py``."""
    return Path(__file__).resolve().parent / "demo"


def _ctx(ctx: Any, name: str) -> Any:
    if isinstance(ctx, dict):
        return ctx.get(name)
    return getattr(ctx, name, None)


def _where(ctx: Any) -> str:
    return str(_ctx(ctx, "path") or "<scenario>")


def _need(entry: dict[str, Any], key: str, kind: type, ctx: Any, what: str) -> Any:
    if key not in entry:
        raise ScenarioError(_where(ctx), what, f"missing key {key!r}")
    v = entry[key]
    if kind is int and isinstance(v, bool) or not isinstance(v, kind):
        raise ScenarioError(_where(ctx), what, f"{key} must be {kind.__name__}, got {v!r}")
    return v


def _crew(entry: dict[str, Any], ctx: Any, what: str) -> CrewSetup:
    unknown = set(entry) - CREW_KEYS
    if unknown:
        raise ScenarioError(_where(ctx), what, f"unknown keys {sorted(unknown)} (have {sorted(CREW_KEYS)})")
    if sum(bool(entry.get(k)) for k in ("crew", "squadron", "tables")) != 1:
        raise ScenarioError(_where(ctx), what, "give exactly one of crew, squadron, tables")
    stage = ""
    if entry.get("stage") is not None:
        try:
            stage = stage_tag(entry["stage"])
        except ValueError as exc:
            raise ScenarioError(_where(ctx), what, str(exc)) from None
    if not entry.get("tables") and not stage:
        raise ScenarioError(_where(ctx), what, "crew and squadron need a stage")
    return CrewSetup(t=float(entry.get("t", 0.0)), crew=str(entry.get("crew", "")), stage=stage,
                     squadron=str(entry.get("squadron", "")),
                     tables=tuple(str(x) for x in entry.get("tables", ())),
                     speakers=tuple(str(x) for x in entry.get("speakers", ())),
                     phases=tuple(int(x) for x in entry.get("phases", (1, 2, 3))))


def _bark(e: dict[str, Any], ctx: Any) -> Event:
    return Bark(t=float(e.get("t", 0.0)), speaker=_need(e, "speaker", str, ctx, "sylpheed.bark"),
                event=_need(e, "event", str, ctx, "sylpheed.bark"))


def _phase(e: dict[str, Any], ctx: Any) -> Event:
    p = _need(e, "phase", int, ctx, "sylpheed.phase")
    if not 1 <= p <= 255:
        raise ScenarioError(_where(ctx), "sylpheed.phase", f"phase must be 1..255, got {p}")
    return PhaseChange(t=float(e.get("t", 0.0)), phase=p)


def _enable(e: dict[str, Any], ctx: Any) -> Event:
    v = e.get("enabled", True)
    if not isinstance(v, bool):
        raise ScenarioError(_where(ctx), "sylpheed.enable", f"enabled must be true/false, got {v!r}")
    return ChatterEnable(t=float(e.get("t", 0.0)), enabled=v)


def _disable(e: dict[str, Any], ctx: Any) -> Event:
    return ChatterEnable(t=float(e.get("t", 0.0)), enabled=False)


def scenario_events() -> dict[str, Callable[[dict[str, Any], Any], Event]]:
    """Scenario ``[[event]]`` type -> builder ``(entry, ctx) -> Event``."""
    return {"sylpheed.bark": _bark, "sylpheed.phase": _phase, "sylpheed.enable": _enable,
            "sylpheed.disable": _disable, "sylpheed.crew": lambda e, c: _crew(e, c, "sylpheed.crew")}


def system_from_scenario(section: dict[str, Any], ctx: Any) -> SylpheedChatterSystem:
    """Build the chatter system for a ``[sylpheed]`` section (keys in the module docstring)."""
    where = _where(ctx)
    unknown = set(section) - SECTION_KEYS
    if unknown:
        raise ScenarioError(where, "[sylpheed]",
                            f"unknown keys {sorted(unknown)} (have {sorted(SECTION_KEYS)})")
    inst = section.get("install", "demo")
    if not isinstance(inst, str):
        raise ScenarioError(where, "[sylpheed].install", f"a string, got {inst!r}")
    if inst == "demo":
        root = demo_root()
    else:
        base = _ctx(ctx, "base") or (Path(where).parent if _ctx(ctx, "path") else Path.cwd())
        root = Path(inst) if Path(inst).is_absolute() else Path(base) / inst
    if not (root / "dat").is_dir():
        raise ScenarioError(where, "[sylpheed].install", f"no dat/ folder under {root}"
                            + (" (run tools/build_sylpheed_demo.py)" if inst == "demo" else ""))
    crews_raw = section.get("crew", [])
    if not isinstance(crews_raw, list):
        raise ScenarioError(where, "[[sylpheed.crew]]", "an array of tables")
    crews = [_crew(c, ctx, f"[[sylpheed.crew]] #{i + 1}") for i, c in enumerate(crews_raw)]
    install = SylpheedInstall(root, str(section.get("lang", "eng")))
    try:
        if "crew" not in section:
            crews = [CrewSetup(stage=st, crew=c.name) for st in install.stages()
                     for c in install.unit_message_set(st).crews]
        return SylpheedChatterSystem(
            install, install, crews=crews, generator=str(section.get("generator", "msvc")),
            fold=str(section.get("fold", "hi8lo8")),
            missing_line_s=float(section.get("missing_line_s", 2.0)),
            hold_effective_time=bool(section.get("hold_effective_time", True)),
            pool_size=int(section.get("pool_size", 128)), phase=int(section.get("phase", 1)),
            enabled=bool(section.get("enabled", True)))
    except (ValueError, FormatError) as exc:
        raise ScenarioError(where, "[sylpheed]", str(exc)) from None
