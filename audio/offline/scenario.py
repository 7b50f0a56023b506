"""Scenarios: what happens when, as a TOML file.

Generic keys (game sections add their own; see the README)::

    [scenario]
    name = "plaza"          # free text
    duration = 20.0         # seconds (required)
    seed = 1                # scenario seed (default 0); --seed overrides it
    layout = "stereo"       # or "5.1"

    [listener]              # the camera: position in metres (x right, y up, z forward), yaw in
    position = [0, 1.7, 0]  # degrees counter-clockwise seen from above (0 faces +z)
    yaw = 0.0
    path = [{ t = 0.0, position = [0, 1.7, 0] }, { t = 8.0, position = [0, 1.7, 20] }]  # optional

    [[emitter]]             # a sound position: static `position` or keyframed `path`
    id = "radio"
    position = [2.0, 1.0, 6.0]

    [[event]]               # play an audio file through play_voice at an emitter
    t = 0.5
    type = "play"
    emitter = "radio"
    file = "speech.wav"     # relative to the scenario file
    gain = 1.0              # linear
    pitch = 1.0             # playback-rate ratio
    echo_send = 0.25        # level into the stream slot's echo submix (distance-delayed)
    env_send = 0.0          # level into the environment bus

    [[event]]
    t = 4.0
    type = "listener"       # or "emitter" (id, position)
    position = [0, 1.7, 5]
    yaw = 30.0

Azimuth drives the PEAK head shadow through the three curves of
``graphs/play_voice.toml``; distance drives the echo submix's distance delay
``min(d / 344, 0.15) s``, refreshed every 4 console frames (30 Hz). The play voice's level
follows an inverse-distance rolloff clamped at ``min_distance`` (1 m) — our choice, not a
game's rule.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import soundfile as sf

from audio.core.bus import Event, EventBus
from audio.dsp.curves import PeakCurves, azimuth_to_raw
from audio.dsp.graph import load_graph
from audio.core.engine import Engine, EngineConfig
from audio.core.errors import ScenarioError
from audio.games import game, game_names
from audio.core.voices import Voice
from audio.core.world import EmitterMove, ListenerPose, Path3

__all__ = ["Scenario", "ScenarioContext", "PlayEvent", "PlaySystem", "load_scenario", "build_engine",
           "BASIC_DEMO", "demo_names", "demo_scenario"]

BASIC_DEMO = Path(__file__).resolve().parent / "demo" / "basic.toml"
"""The generic demo: ``play`` events of an espeak-ng line at moving emitters (no game)."""


def demo_names() -> list[str]:
    """The bundled demos: every registered game that ships one, then ``"basic"``."""
    from audio.games import all_games

    return [g.name for g in all_games() if g.demo is not None] + ["basic"]


def demo_scenario(which: str) -> Path:
    """Path of a bundled demo scenario: a game's name (see :func:`demo_names`) or ``"basic"``."""
    if which == "basic":
        return BASIC_DEMO
    path = game(which).demo_path() if which in game_names() else None
    if path is None:
        raise ScenarioError("<demo>", None, f"no demo {which!r} (have: {', '.join(demo_names())})")
    return path


@dataclass(frozen=True, kw_only=True)
class PlayEvent(Event, kind="play"):
    """Play an audio file at an emitter through ``play_voice`` (the Skate 3 stream chain under a neutral name)."""

    emitter: str
    file: str
    gain: float = 1.0
    pitch: float = 1.0
    echo_send: float = 0.25
    env_send: float = 0.0


@dataclass
class ScenarioContext:
    """What a game section builder gets: where the scenario lives and its seed."""

    path: Path
    seed: int
    doc: dict[str, Any]

    @property
    def base(self) -> Path:
        return self.path.parent

    def resolve(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else (self.base / p)

    def error(self, where: str | None, problem: str) -> ScenarioError:
        return ScenarioError(str(self.path), where, problem)


@dataclass
class Scenario:
    """A loaded scenario: settings, world set-up, events and game sections."""

    path: Path
    name: str
    duration: float
    seed: int
    layout: str
    doc: dict[str, Any]
    events: list[Event] = field(default_factory=list)

    @property
    def sections(self) -> list[str]:
        return [s for s in game_names() if s in self.doc]


def _vec(ctx: ScenarioContext, where: str, v: Any) -> tuple[float, float, float]:
    if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          for x in v)):
        raise ctx.error(where, f"expected a position [x, y, z] in metres, got {v!r}")
    return (float(v[0]), float(v[1]), float(v[2]))


def _num(ctx: ScenarioContext, where: str, d: dict[str, Any], key: str, default: float | None = None,
         lo: float = -math.inf, hi: float = math.inf) -> float:
    if key not in d:
        if default is None:
            raise ctx.error(where, f"missing {key!r}")
        return default
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ctx.error(where, f"{key!r} must be a number, got {v!r}")
    if not lo <= v <= hi:
        raise ctx.error(where, f"{key!r} = {v} is outside {lo}..{hi}")
    return float(v)


def _path(ctx: ScenarioContext, where: str, d: dict[str, Any]) -> Path3:
    if "path" in d:
        keys = d["path"]
        if not isinstance(keys, list) or not keys:
            raise ctx.error(where, "'path' must be a non-empty list of {t, position} tables")
        out: list[tuple[float, tuple[float, float, float]]] = []
        for i, k in enumerate(keys):
            if not isinstance(k, dict):
                raise ctx.error(f"{where}.path[{i}]", "expected {t = ..., position = [x, y, z]}")
            t = _num(ctx, f"{where}.path[{i}]", k, "t", lo=0.0)
            if out and t < out[-1][0]:
                raise ctx.error(f"{where}.path[{i}]", "keyframe times must not decrease")
            out.append((t, _vec(ctx, f"{where}.path[{i}].position", k.get("position"))))
        return Path3(out)
    return Path3([(0.0, _vec(ctx, f"{where}.position", d.get("position", [0.0, 0.0, 0.0])))])


def _generic_events() -> dict[str, Callable[[dict, ScenarioContext], Event]]:
    def play(d: dict, ctx: ScenarioContext) -> Event:
        w = f"event t={d.get('t')} (play)"
        if not isinstance(d.get("emitter"), str):
            raise ctx.error(w, "missing 'emitter'")
        if not isinstance(d.get("file"), str):
            raise ctx.error(w, "missing 'file'")
        f = ctx.resolve(d["file"])
        if not f.is_file():
            raise ctx.error(w, f"audio file not found: {f}")
        return PlayEvent(t=_num(ctx, w, d, "t", lo=0.0), emitter=d["emitter"], file=str(f),
                         gain=_num(ctx, w, d, "gain", 1.0, 0.0, 64.0), pitch=_num(ctx, w, d, "pitch", 1.0, 0.01, 16.0),
                         echo_send=_num(ctx, w, d, "echo_send", 0.25, 0.0, 4.0),
                         env_send=_num(ctx, w, d, "env_send", 0.0, 0.0, 4.0))

    def listener(d: dict, ctx: ScenarioContext) -> Event:
        w = f"event t={d.get('t')} (listener)"
        return ListenerPose(t=_num(ctx, w, d, "t", lo=0.0), position=_vec(ctx, w, d.get("position")),
                            yaw_deg=_num(ctx, w, d, "yaw", 0.0))

    def emitter(d: dict, ctx: ScenarioContext) -> Event:
        w = f"event t={d.get('t')} (emitter)"
        if not isinstance(d.get("id"), str):
            raise ctx.error(w, "missing 'id'")
        return EmitterMove(t=_num(ctx, w, d, "t", lo=0.0), emitter=d["id"], position=_vec(ctx, w, d.get("position")))

    return {"play": play, "listener": listener, "emitter": emitter}


_GENERIC_TABLES = {"scenario", "listener", "emitter", "event"}


def load_scenario(path: str | Path, seed: int | None = None) -> Scenario:
    """Read and validate a scenario file (errors name the file and the entry)."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(str(path), None, "no such scenario file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(str(path), None, f"not valid TOML: {exc}") from None
    return scenario_from_doc(doc, path, seed)


def scenario_from_doc(doc: dict[str, Any], path: Path, seed: int | None = None) -> Scenario:
    """Build a :class:`Scenario` from an already parsed TOML document."""
    ctx = ScenarioContext(path, 0, doc)
    known = _GENERIC_TABLES | set(game_names())
    unknown = set(doc) - known
    if unknown:
        raise ctx.error(sorted(unknown)[0], f"unknown table (known: {', '.join(sorted(known))})")
    head = doc.get("scenario")
    if not isinstance(head, dict):
        raise ctx.error("scenario", "missing [scenario] table")
    duration = _num(ctx, "scenario", head, "duration", lo=0.001, hi=24 * 3600.0)
    s = int(_num(ctx, "scenario", head, "seed", 0.0, 0, 2 ** 63 - 1)) if seed is None else int(seed)
    ctx.seed = s
    layout = head.get("layout", "stereo")
    if layout not in ("stereo", "5.1"):
        raise ctx.error("scenario.layout", f'must be "stereo" or "5.1", got {layout!r}')
    builders = _generic_events()
    for sec in game_names():
        if sec in doc:
            builders.update(game(sec).load("events")())
    events: list[Event] = []
    lst = doc.get("listener", {})
    if not isinstance(lst, dict):
        raise ctx.error("listener", "must be a table")
    for i, e in enumerate(doc.get("emitter", [])):
        if not isinstance(e, dict) or not isinstance(e.get("id"), str):
            raise ctx.error(f"emitter[{i}]", "each [[emitter]] needs an 'id'")
        _path(ctx, f"emitter {e['id']!r}", e)
    for i, e in enumerate(doc.get("event", [])):
        if not isinstance(e, dict):
            raise ctx.error(f"event[{i}]", "each [[event]] must be a table")
        typ = e.get("type")
        if typ not in builders:
            raise ctx.error(f"event[{i}]", f"unknown event type {typ!r} (known here: {', '.join(sorted(builders))})")
        ev = builders[typ](e, ctx)
        if ev.t > duration:
            raise ctx.error(f"event[{i}] ({typ})", f"t = {ev.t} s is after the end ({duration} s)")
        events.append(ev)
    return Scenario(path, str(head.get("name", path.stem)), duration, s, layout, doc, events)


class PlaySystem:
    """Plays ``play`` events at emitters through ``play_voice`` (the Skate 3 stream chain under a neutral name) (30 Hz console frames).

    Each play voice takes its own echo-submix slot, round-robin over ``slots`` (24-31, clear
    of the Skate speech streams, which use slot ``channel * streams_per_channel + k``).
    """

    name = "play"
    frame_rate = 30
    DELAY_FRAMES = 4
    SPEED_OF_SOUND = 344.0
    MAX_DELAY = 0.15

    def __init__(self, files: dict[str, tuple[np.ndarray, int]] | None = None, slots: range = range(24, 32),
                 min_distance: float = 1.0) -> None:
        self.files = dict(files or {})
        self.slots = slots
        self.min_distance = min_distance
        self._next_slot = 0
        self.voices: list[tuple[Voice, PlayEvent, dict[str, Any]]] = []
        self.peak = PeakCurves.from_graph(load_graph("play_voice"))

    def attach(self, engine: Engine) -> None:
        self.engine = engine
        engine.bus.subscribe(self, [PlayEvent])

    def preload(self, file: str) -> tuple[np.ndarray, int]:
        """Read ``file`` (mono mix, float32) once; later plays reuse it (no I/O while rendering)."""
        if file not in self.files:
            data, rate = sf.read(file, dtype="float32", always_2d=True)
            self.files[file] = (data.mean(axis=1).astype(np.float32), int(rate))
        return self.files[file]

    def handle(self, ev: Event, bus: EventBus) -> None:
        assert isinstance(ev, PlayEvent)
        eng = self.engine
        pcm, rate = self.preload(ev.file)
        slot = self.slots[self._next_slot % len(self.slots)]
        self._next_slot += 1
        state: dict[str, Any] = {"countdown": 0, "delay": None}
        params = self._params(ev, state)
        v = eng.voices.start("play_voice", pcm, rate, slot=slot, params=params,
                             tag=f"play:{ev.emitter}:{Path(ev.file).name}")
        self.voices.append((v, ev, state))
        bus.decide("play", "Started", emitter=ev.emitter, file=Path(ev.file).name, slot=slot, voice=v.id)

    def _params(self, ev: PlayEvent, state: dict[str, Any]) -> dict[str, float]:
        w = self.engine.world
        angle = w.azimuth_deg(ev.emitter)
        centre, gain, q = self.peak(azimuth_to_raw(angle))
        d = w.distance(ev.emitter)
        roll = min(1.0, self.min_distance / max(d, 1e-9))
        state["countdown"] -= 1
        if state["countdown"] <= 0:
            state["countdown"] = self.DELAY_FRAMES
            delay = min(d / self.SPEED_OF_SOUND, self.MAX_DELAY)
            if delay != state["delay"]:
                state["delay"] = delay
                state["delay_changed"] = True
        return {"Rsp0.pitch": 4096.0 * ev.pitch, "PI20.centre_hz": centre, "PI20.gain": gain, "PI20.q": q,
                "Sen0_echo.level": ev.echo_send, "Gai0.gain": ev.gain * roll, "Sen0_env.level": ev.env_send,
                "Pn21.angle_deg": angle}

    def tick(self, frame: int, engine: Engine) -> None:
        keep = []
        for v, ev, state in self.voices:
            if v.done:
                engine.bus.decide("play", "Finished", emitter=ev.emitter, voice=v.id, ended_at=v.ended_at)
                continue
            engine.voices.set(v, **self._params(ev, state))
            if state.pop("delay_changed", False):
                engine.mixer.set_submix("play_echo_submix", v.slot, **{"Del0.seconds": state["delay"]})
            keep.append((v, ev, state))
        self.voices = keep


def build_engine(scn: Scenario, *, block: int | None = None, post_events: bool = True,
                 **config: Any) -> Engine:
    """An engine with the scenario's world, systems and (unless replaying) its events."""
    cfg = EngineConfig(seed=scn.seed, layout=scn.layout, **({"block": block} if block else {}), **config)
    eng = Engine(cfg)
    ctx = ScenarioContext(scn.path, scn.seed, scn.doc)
    lst = scn.doc.get("listener", {})
    eng.world.set_listener(yaw_deg=_num(ctx, "listener", lst, "yaw", 0.0), path=_path(ctx, "listener", lst))
    for e in scn.doc.get("emitter", []):
        eng.world.set_emitter(e["id"], path=_path(ctx, f"emitter {e['id']!r}", e))
    play = PlaySystem()
    for ev in scn.events:
        if isinstance(ev, PlayEvent):
            play.preload(ev.file)
    eng.add_system(play)
    for sec in scn.sections:
        section = scn.doc[sec]
        if not isinstance(section, dict):
            raise ctx.error(sec, "must be a table")
        eng.add_system(game(sec).load("system")(section, ctx))
    if post_events:
        for ev in scn.events:
            eng.bus.post(ev)
    return eng
