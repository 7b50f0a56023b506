"""Scenario hooks: the ``[starlancer]`` section and the ``starlancer.*`` ``[[event]]`` types.

``[starlancer]`` keys (all optional)::

    [starlancer]
    install = "demo"            # "demo" = audio/games/starlancer/demo, or a folder (relative to the
                                # scenario) holding resource.hog and ms_speech/msspeech.hog
    mission = "mission99.dte"   # a resource.hog member, or a path to a loose .dte (RefPack'd or not)
    globals = { "(GV)convoykilled" = 1, "3" = 0 }   # initial globals by name or index
    pilots = { "20" = "Instructor" }                # display names of pilot faces
    start = true                # run the start part at mission start
    preroll_ticks = 92          # window pre-roll (game ticks; the spec's conflict: a setting)
    queue_size = 5              # the game: 5
    once_film_ticks = 150       # a face film's length when played once (our setting)
    speech_volume = 127         # Miles 0..127; volume = round(speech x master / 127)
    master_volume = 127
    frame_ticks = 4             # a VM pass + radio_frame every N game ticks (our setting)
    wake_compare = ">"          # Wait wakes when clock > wake (the engine, spec 11.3); ">=" for experiments
    frame_budget = 8000         # ours: instructions per frame across all threads
    thread_budget = 2000        # ours: instructions without yielding before a thread is ended
    decisions_per_thread = 100  # ours: decisions a thread may log per frame
    created = ["Naginata"]      # ships that exist from the start (the first curve's work; else stand-ins
                                # until CreateFlightGroup)
    hostile = ["Bandit"]        # hostile ships (their lines use the face's hostile voice)
    training = false            # a training mission (the instructor's reminders and launch line)
    player_voice = "male"       # the player's own lines: male (mphud_NNN) | female (fphud_NNN)
    rescuer = "Naginata"        # the ship in wing place 5 (says the rescue remark); "" none (the default)
    mission_number = 99         # Moose's pilot and the 45th's films swap by mission number
    static_bed = false          # OURS, off by default: a noise bed under the dead channel's film
    static_level = 0.3          # its level
    graph = "starlancer_radio_voice"

``[[event]]`` types (``t`` in seconds)::

    { t = 2.0, type = "starlancer.trigger", condition = "Destroyed", subject = "Bandit" }
    { t = 3.0, type = "starlancer.say", speaker = "ship:Naginata", speech = "ms1_ban_004.ut",
      mode = "queued", film_flags = 5, expiry = 300, remark = "" }
    { t = 4.0, type = "starlancer.gate", gate = "generic", disabled = true }
    { t = 0.0, type = "starlancer.reset", restart = false }
    { t = 5.0, type = "starlancer.happen", what = "kill", ship = "Bandit", kind = "fighter" }
    { t = 6.0, type = "starlancer.happen", what = "hit", ship = "Naginata", other = "Bandit", value = 20 }
    { t = 7.0, type = "starlancer.happen", what = "variable", kind = "jump_ready", value = 1 }
    { t = 8.0, type = "starlancer.happen", what = "wingman", ship = "Naginata", kind = "status", value = 1 }
    { t = 9.0, type = "starlancer.happen", what = "explode", ship = "Naginata", kind = "pod" }
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from msgspec import Meta

from audio.core import memo
from audio.core.bus import Event
from audio.core.errors import FormatError, ScenarioError
from audio.core.plugin import ScenarioContext
from audio.core.schema import Struct, convert, did_you_mean
from audio.games.starlancer.events import Gate, Happen, Reset, Say, Trigger
from audio.games.starlancer.formats.dte import load_mission
from audio.games.starlancer.formats.hog import open_hog
from audio.games.starlancer.radio.radio import RadioSettings
from audio.games.starlancer.script.vm import VmSettings
from audio.games.starlancer.system import SpeechBank, StarlancerSystem

__all__ = ["StarlancerSection", "demo_root", "scenario_events", "system_from_scenario"]

E = TypeVar("E", bound=Event)
Tick = Annotated[int, Meta(ge=0, le=10_000_000)]


class StarlancerSection(Struct, kw_only=True):
    """The ``[starlancer]`` section (keys in the module docstring)."""

    install: str = "demo"
    mission: str = "mission99.dte"
    globals: dict[str, int] = {}
    pilots: dict[str, str] = {}
    start: bool = True
    static_level: Annotated[float, Meta(ge=0.0, le=4.0)] = 0.3
    graph: str = "starlancer_radio_voice"
    preroll_ticks: Tick = 92
    queue_size: Annotated[int, Meta(ge=1, le=64)] = 5
    once_film_ticks: Tick = 150
    speech_volume: Annotated[int, Meta(ge=0, le=127)] = 127
    master_volume: Annotated[int, Meta(ge=0, le=127)] = 127
    frame_ticks: Annotated[int, Meta(ge=1, le=100)] = 4
    wake_compare: Literal[">=", ">"] = ">"
    frame_budget: Annotated[int, Meta(ge=1, le=10_000_000)] = 8_000
    thread_budget: Annotated[int, Meta(ge=1, le=10_000_000)] = 2_000
    decisions_per_thread: Annotated[int, Meta(ge=1, le=1_000_000)] = 100
    created: list[str] = []
    hostile: list[str] = []
    training: bool = False
    player_voice: Literal["male", "female"] = "male"
    rescuer: str = ""
    mission_number: Annotated[int, Meta(ge=0, le=255)] = 99
    static_bed: bool = False


def demo_root() -> Path:
    """The demo install built by ``tools/build_starlancer_demo.py``."""
    return Path(__file__).resolve().parent / "demo"


def _where(ctx: ScenarioContext) -> str:
    return str(ctx.path)


def _at(ctx: ScenarioContext, typ: str) -> str:
    return ctx.where or typ


def _base(ctx: ScenarioContext) -> Path:
    return ctx.base


def _trigger(e: dict[str, Any], ctx: ScenarioContext) -> Event:
    from audio.games.starlancer.script.commands import TRIGGER_CONDITIONS, condition_code

    w = _at(ctx, "starlancer.trigger")
    v = _event(Trigger, e, ctx)
    try:
        condition_code(v.condition)
    except KeyError as exc:
        hint = did_you_mean(str(v.condition), TRIGGER_CONDITIONS)
        raise ScenarioError(_where(ctx), f"{w}.condition", f"{exc.args[0]}{hint}") from None
    return v


def _event(cls: type[E], e: dict[str, Any], ctx: ScenarioContext) -> E:
    """Entry ``e`` (its ``type`` dropped) checked against the event type itself."""
    fields = {k: v for k, v in e.items() if k != "type"}
    return convert(fields, cls, source=_where(ctx), where=_at(ctx, cls.KIND))


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Scenario ``[[event]]`` type -> builder ``(entry, ctx) -> Event``."""
    return {
        "starlancer.trigger": _trigger,
        "starlancer.say": lambda e, ctx: _event(Say, e, ctx),
        "starlancer.gate": lambda e, ctx: _event(Gate, e, ctx),
        "starlancer.reset": lambda e, ctx: _event(Reset, e, ctx),
        "starlancer.happen": lambda e, ctx: _event(Happen, e, ctx),
    }


def _globals(cfg: StarlancerSection, dte: Any, where: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for k, v in cfg.globals.items():
        idx = (
            int(k)
            if k.isdigit()
            else next(
                (i for i in range(len(dte.globals)) if (dte.global_name(i) or "").lower() == k.lower()), None
            )
        )
        if idx is None or not 0 <= idx < len(dte.globals):
            raise ScenarioError(where, f"starlancer.globals.{k}", "no such global in the mission")
        out[idx] = v
    return out


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> StarlancerSystem:
    """Build the radio system for a ``[starlancer]`` section (keys in the module docstring)."""
    where = _where(ctx)
    cfg = convert(section, StarlancerSection, source=where, where="starlancer")
    inst = cfg.install
    root = demo_root() if inst == "demo" else (Path(inst) if Path(inst).is_absolute() else _base(ctx) / inst)
    mission = cfg.mission
    try:
        loose = root / mission
        if loose.is_file():
            dte = memo.load("starlancer.mission", loose, lambda: load_mission(loose.read_bytes(), str(loose)))
        else:
            res = root / "resource.hog"
            if not res.is_file():
                raise ScenarioError(
                    where,
                    "[starlancer].install",
                    f"no resource.hog under {root}"
                    + (" (run tools/build_starlancer_demo.py)" if inst == "demo" else ""),
                )
            dte = memo.load(
                "starlancer.mission",
                res,
                lambda: load_mission(open_hog(res).read(mission, game_name=False), f"{res}:{mission}"),
                mission,
            )
        sp = next(
            (p for p in (root / "ms_speech" / "msspeech.hog", root / "msspeech.hog") if p.is_file()), None
        )
        bank = (  # a batch worker keeps the bank and the lines it decoded
            SpeechBank(None)
            if sp is None
            else memo.load("starlancer.speech", sp, lambda: SpeechBank(open_hog(sp)))
        )
        radio = RadioSettings(
            preroll_ticks=cfg.preroll_ticks,
            queue_size=cfg.queue_size,
            once_film_ticks=cfg.once_film_ticks,
            speech_volume=cfg.speech_volume,
            master_volume=cfg.master_volume,
            static_bed=cfg.static_bed,
        )
        vm = VmSettings(
            frame_ticks=cfg.frame_ticks,
            wake_compare=cfg.wake_compare,
            frame_budget=cfg.frame_budget,
            thread_budget=cfg.thread_budget,
            decisions_per_thread=cfg.decisions_per_thread,
            mission=cfg.mission_number,
        )
        if not all(k.isdigit() for k in cfg.pilots):
            raise ScenarioError(where, "starlancer.pilots", "keys must be pilot numbers")
        pilots = {int(k): v for k, v in cfg.pilots.items()}
        return StarlancerSystem(
            dte,
            bank,
            radio=radio,
            vm=vm,
            globals_=_globals(cfg, dte, where),
            pilot_names=pilots,
            graph=cfg.graph,
            static_level=cfg.static_level,
            start=cfg.start,
            created=tuple(cfg.created),
            hostile=tuple(cfg.hostile),
            training=cfg.training,
            player_voice=cfg.player_voice,
            rescuer=cfg.rescuer,
        )
    except (FormatError, ValueError, TypeError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError(where, "[starlancer]", str(exc)) from None
