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
    wake_compare = ">="         # Wait wakes when clock >= wake (or ">"): unknown in the game
    instruction_cap = 10000     # per thread per frame (ours: a hostile script cannot hang the VM)
    static_level = 0.3          # dead-channel static bed level (ours)
    graph = "starlancer_radio_voice"

``[[event]]`` types (``t`` in seconds)::

    { t = 2.0, type = "starlancer.trigger", condition = "Destroyed", subject = "Bandit" }
    { t = 3.0, type = "starlancer.say", speaker = "ship:Naginata", speech = "ms1_ban_004.ut",
      mode = "queued", film_flags = 5, expiry = 300, remark = "" }
    { t = 4.0, type = "starlancer.gate", gate = "generic", disabled = true }
    { t = 0.0, type = "starlancer.reset", restart = false }
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from audio.core.bus import Event
from audio.core.errors import FormatError, ScenarioError
from audio.games.starlancer.events import Gate, Reset, Say, Trigger
from audio.games.starlancer.formats.dte import load_mission
from audio.games.starlancer.formats.hog import open_hog
from audio.games.starlancer.radio.radio import MODES, RadioSettings
from audio.games.starlancer.script.vm import VmSettings
from audio.games.starlancer.system import SpeechBank, StarlancerSystem

__all__ = ["SECTION_KEYS", "demo_root", "scenario_events", "system_from_scenario"]

_RADIO = {"preroll_ticks", "queue_size", "once_film_ticks", "speech_volume", "master_volume"}
_VM = {"frame_ticks", "wake_compare", "instruction_cap"}
SECTION_KEYS = {"install", "mission", "globals", "pilots", "start", "static_level", "graph"} | _RADIO | _VM
_EVENT_KEYS = {"starlancer.trigger": {"condition", "subject", "component", "locals"},
               "starlancer.say": {"speech", "speaker", "ship", "pilot", "head", "mode", "film_flags", "expiry",
                                  "remark"},
               "starlancer.gate": {"gate", "disabled"}, "starlancer.reset": {"restart"}}


def demo_root() -> Path:
    """The demo install built by ``tools/build_starlancer_demo.py``."""
    return Path(__file__).resolve().parent / "demo"


def _where(ctx: Any) -> str:
    p = ctx.get("path") if isinstance(ctx, dict) else getattr(ctx, "path", None)
    return str(p or "<scenario>")


def _base(ctx: Any) -> Path:
    p = ctx.get("path") if isinstance(ctx, dict) else getattr(ctx, "path", None)
    return Path(p).parent if p else Path.cwd()


def _check(e: dict[str, Any], ctx: Any, typ: str) -> None:
    unknown = set(e) - _EVENT_KEYS[typ] - {"t", "type"}
    if unknown:
        raise ScenarioError(_where(ctx), typ, f"unknown keys {sorted(unknown)} (have {sorted(_EVENT_KEYS[typ])})")


def _typed(e: dict[str, Any], key: str, kinds: tuple[type, ...], default: Any, ctx: Any, typ: str) -> Any:
    v = e.get(key, default)
    if isinstance(v, bool) and bool not in kinds or not isinstance(v, kinds):
        raise ScenarioError(_where(ctx), typ, f"{key} must be {' or '.join(k.__name__ for k in kinds)}, got {v!r}")
    return v


def _trigger(e: dict[str, Any], ctx: Any) -> Event:
    typ = "starlancer.trigger"
    _check(e, ctx, typ)
    if "condition" not in e or "subject" not in e:
        raise ScenarioError(_where(ctx), typ, "needs condition and subject")
    from audio.games.starlancer.script.commands import condition_code
    cond = _typed(e, "condition", (str, int), 0, ctx, typ)
    try:
        condition_code(cond)
    except KeyError as exc:
        raise ScenarioError(_where(ctx), typ, str(exc)) from None
    return Trigger(t=float(e.get("t", 0.0)), condition=cond, subject=_typed(e, "subject", (str, int), 0, ctx, typ),
                   component=_typed(e, "component", (int,), 0xFF, ctx, typ),
                   locals=tuple(int(x) for x in _typed(e, "locals", (list,), [], ctx, typ)))


def _say(e: dict[str, Any], ctx: Any) -> Event:
    typ = "starlancer.say"
    _check(e, ctx, typ)
    speech = _typed(e, "speech", (str,), "", ctx, typ)
    if not speech:
        raise ScenarioError(_where(ctx), typ, "needs speech (a .ut name)")
    mode = _typed(e, "mode", (str,), "queued", ctx, typ)
    if mode not in MODES:
        raise ScenarioError(_where(ctx), typ, f"mode must be one of {sorted(MODES)}, got {mode!r}")
    speaker = _typed(e, "speaker", (str,), "nobody", ctx, typ)
    if speaker.partition(":")[0] not in ("ship", "pilot", "nobody"):
        raise ScenarioError(_where(ctx), typ, f"speaker must be ship[:NAME], pilot[:N] or nobody, got {speaker!r}")
    return Say(t=float(e.get("t", 0.0)), speech=speech, speaker=speaker, ship=_typed(e, "ship", (str, int), "", ctx, typ),
               pilot=_typed(e, "pilot", (int,), -1, ctx, typ), head=_typed(e, "head", (int,), 0, ctx, typ),
               mode=mode, film_flags=_typed(e, "film_flags", (int,), 5, ctx, typ),
               expiry=_typed(e, "expiry", (int,), -1, ctx, typ), remark=_typed(e, "remark", (str,), "", ctx, typ))


def _gate(e: dict[str, Any], ctx: Any) -> Event:
    typ = "starlancer.gate"
    _check(e, ctx, typ)
    gate = _typed(e, "gate", (str,), "generic", ctx, typ)
    if gate not in ("generic", "taunts"):
        raise ScenarioError(_where(ctx), typ, f"gate must be generic or taunts, got {gate!r}")
    return Gate(t=float(e.get("t", 0.0)), gate=gate, disabled=_typed(e, "disabled", (bool,), True, ctx, typ))


def _reset(e: dict[str, Any], ctx: Any) -> Event:
    _check(e, ctx, "starlancer.reset")
    return Reset(t=float(e.get("t", 0.0)), restart=_typed(e, "restart", (bool,), False, ctx, "starlancer.reset"))


def scenario_events() -> dict[str, Callable[[dict[str, Any], Any], Event]]:
    """Scenario ``[[event]]`` type -> builder ``(entry, ctx) -> Event``."""
    return {"starlancer.trigger": _trigger, "starlancer.say": _say, "starlancer.gate": _gate,
            "starlancer.reset": _reset}


def _int_map(section: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    m = section.get(key, {})
    if not isinstance(m, dict):
        raise ScenarioError(where, f"[starlancer].{key}", "a table")
    return m


def _globals(section: dict[str, Any], dte: Any, where: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for k, v in _int_map(section, "globals", where).items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise ScenarioError(where, "[starlancer].globals", f"{k} must be an integer, got {v!r}")
        idx = int(k) if k.isdigit() else next((i for i in range(len(dte.globals))
                                               if (dte.global_name(i) or "").lower() == k.lower()), None)
        if idx is None or not 0 <= idx < len(dte.globals):
            raise ScenarioError(where, "[starlancer].globals", f"no global {k!r} in the mission")
        out[idx] = v
    return out


def system_from_scenario(section: dict[str, Any], ctx: Any) -> StarlancerSystem:
    """Build the radio system for a ``[starlancer]`` section (keys in the module docstring)."""
    where = _where(ctx)
    unknown = set(section) - SECTION_KEYS
    if unknown:
        raise ScenarioError(where, "[starlancer]", f"unknown keys {sorted(unknown)} (have {sorted(SECTION_KEYS)})")
    inst = section.get("install", "demo")
    root = demo_root() if inst == "demo" else (Path(inst) if Path(inst).is_absolute() else _base(ctx) / inst)
    mission = str(section.get("mission", "mission99.dte"))
    try:
        loose = root / mission
        if loose.is_file():
            dte = load_mission(loose.read_bytes(), str(loose))
        else:
            res = root / "resource.hog"
            if not res.is_file():
                raise ScenarioError(where, "[starlancer].install", f"no resource.hog under {root}"
                                    + (" (run tools/build_starlancer_demo.py)" if inst == "demo" else ""))
            dte = load_mission(open_hog(res).read(mission, game_name=False), f"{res}:{mission}")
        sp = next((p for p in (root / "ms_speech" / "msspeech.hog", root / "msspeech.hog") if p.is_file()), None)
        bank = SpeechBank(open_hog(sp) if sp is not None else None)
        radio = RadioSettings(**{k: int(section[k]) for k in _RADIO if k in section})
        vm = VmSettings(**{k: (str(section[k]) if k == "wake_compare" else int(section[k])) for k in _VM
                           if k in section})
        if vm.wake_compare not in (">=", ">"):
            raise ScenarioError(where, "[starlancer].wake_compare", "must be \">=\" or \">\"")
        pilots = {int(k): str(v) for k, v in _int_map(section, "pilots", where).items()}
        return StarlancerSystem(dte, bank, radio=radio, vm=vm, globals_=_globals(section, dte, where),
                                pilot_names=pilots, graph=str(section.get("graph", "starlancer_radio_voice")),
                                static_level=float(section.get("static_level", 0.3)),
                                start=bool(section.get("start", True)))
    except (FormatError, ValueError, TypeError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError(where, "[starlancer]", str(exc)) from None
