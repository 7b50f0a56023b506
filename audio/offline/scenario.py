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

import logging
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec
import numpy as np

from audio.containers.fallback import decode_file
from audio.core.bus import Event, EventBus
from audio.core.capture import read_header
from audio.core.engine import Engine, EngineConfig
from audio.core.errors import BarkbusError, ScenarioError
from audio.core.faults import describe, report_fault
from audio.core.loader import Load, check_name, check_regular
from audio.core.outcomes import END, START, Outcome
from audio.core.paths import PathPolicy
from audio.core.plugin import NEVER, GameSystem, ScenarioContext
from audio.core.schema import Struct, convert
from audio.core.voices import Voice
from audio.core.world import EmitterMove, ListenerPose, Path3
from audio.dsp.curves import PeakCurves, azimuth_to_raw
from audio.dsp.graph import load_graph
from audio.games import game, game_names
from audio.offline.demos import BASIC_DEMO, demo_names, demo_scenario

log = logging.getLogger("barkbus.play")

__all__ = [
    "Scenario",
    "ScenarioContext",
    "PlayEvent",
    "PlayOutcome",
    "PlaySystem",
    "load_scenario",
    "build_engine",
    "BASIC_DEMO",
    "demo_names",
    "demo_scenario",
]


@dataclass(frozen=True, kw_only=True)
class PlayEvent(Event, kind="play"):
    """Play an audio file at an emitter through ``play_voice`` (the Skate 3 stream chain under a
    neutral name)."""

    FILE_FIELDS: ClassVar[tuple[str, ...]] = ("file",)
    emitter: str
    file: str
    gain: Annotated[float, msgspec.Meta(ge=0.0, le=64.0)] = 1.0
    pitch: Annotated[float, msgspec.Meta(ge=0.01, le=16.0)] = 1.0
    echo_send: Annotated[float, msgspec.Meta(ge=0.0, le=4.0)] = 0.25
    env_send: Annotated[float, msgspec.Meta(ge=0.0, le=4.0)] = 0.0


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
    tables: GenericTables | None = None

    @property
    def sections(self) -> list[str]:
        return [s for s in game_names() if s in self.doc]


MAX_EVENTS = 100_000
"""Most ``[[event]]`` entries a scenario may hold (a larger file is refused before parsing)."""
MAX_KEYFRAMES = 10_000
"""Most keyframes in one ``path``."""
MAX_FILE_BYTES = 32 << 20
"""Largest scenario file read (32 MiB)."""

Vec3 = tuple[float, float, float]
Seconds = Annotated[float, msgspec.Meta(ge=0.0)]


class Keyframe(Struct, kw_only=True):
    """A point of a keyframed path: time ``t`` (s) and ``position`` (m)."""

    t: Seconds
    position: Vec3


Keyframes = Annotated[list[Keyframe], msgspec.Meta(min_length=1, max_length=MAX_KEYFRAMES)]


class ListenerTable(Struct, kw_only=True):
    """``[listener]``: static ``position`` or keyframed ``path``, ``yaw`` in degrees."""

    position: Vec3 = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    path: Keyframes | None = None


class EmitterTable(Struct, kw_only=True):
    """``[[emitter]]``: an ``id`` and a static ``position`` or a keyframed ``path``."""

    id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    position: Vec3 = (0.0, 0.0, 0.0)
    path: Keyframes | None = None


class ScenarioHead(Struct, kw_only=True):
    """``[scenario]``: name, duration (s, required), seed, output layout."""

    name: str = ""
    duration: Annotated[float, msgspec.Meta(gt=0.0, le=24 * 3600.0)]
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] = 0
    layout: Literal["stereo", "5.1"] = "stereo"


class GenericTables(Struct, kw_only=True):
    """The tables every scenario may have (each game adds its own section)."""

    scenario: ScenarioHead
    listener: ListenerTable = msgspec.field(default_factory=ListenerTable)
    emitter: list[EmitterTable] = []
    event: Annotated[list[dict[str, Any]], msgspec.Meta(max_length=MAX_EVENTS)] = []


def _keyframes(ctx: ScenarioContext, where: str, position: Vec3, path: list[Keyframe] | None) -> Path3:
    if path is None:
        return Path3([(0.0, position)])
    for i in range(1, len(path)):
        if path[i].t < path[i - 1].t:
            raise ctx.error(f"{where}.path[{i}].t", "keyframe times must not decrease")
    return Path3([(k.t, k.position) for k in path])


def _fields(d: dict[str, Any], rename: dict[str, str] | None = None) -> dict[str, Any]:
    rename = rename or {}
    return {rename.get(k, k): v for k, v in d.items() if k != "type"}


def _generic_events() -> dict[str, Callable[[dict, ScenarioContext], Event]]:
    def play(d: dict, ctx: ScenarioContext) -> Event:
        ev = convert(_fields(d), PlayEvent, source=str(ctx.path), where=ctx.where)
        f = ctx.resolve(ev.file)
        if not f.is_file():
            raise ctx.error(f"{ctx.where}.file", f"audio file not found: {f}")
        if ev.emitter not in ctx.emitters:
            known = ", ".join(sorted(ctx.emitters)) or "none declared"
            raise ctx.error(
                f"{ctx.where}.emitter", f"no [[emitter]] with id {ev.emitter!r} (declared: {known})"
            )
        return ev

    def listener(d: dict, ctx: ScenarioContext) -> Event:
        return convert(_fields(d, {"yaw": "yaw_deg"}), ListenerPose, source=str(ctx.path), where=ctx.where)

    def emitter(d: dict, ctx: ScenarioContext) -> Event:
        return convert(_fields(d, {"id": "emitter"}), EmitterMove, source=str(ctx.path), where=ctx.where)

    return {"play": play, "listener": listener, "emitter": emitter}


def _read_doc(path: Path) -> dict[str, Any]:
    try:
        raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1) if str(path) == "-" else path.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(str(path), None, "no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(str(path), None, "is a folder, not a scenario file") from None
    except OSError as exc:
        raise ScenarioError(str(path), None, f"cannot read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(
            str(path), None, f"{len(raw)} bytes; scenarios are limited to {MAX_FILE_BYTES} bytes"
        )
    if raw.count(b"[[event]]") > MAX_EVENTS:
        raise ScenarioError(str(path), "event", f"more than {MAX_EVENTS} events; split the scenario")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            str(path), None, f"not UTF-8 text (byte {exc.start}); is this a scenario TOML file?"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(str(path), None, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(str(path), None, "nested too deeply") from None


def load_scenario(path: str | Path, seed: int | None = None) -> Scenario:
    """Read and validate a scenario file (errors name the file and the path to the field)."""
    path = Path(path)
    return scenario_from_doc(_read_doc(path), path, seed)


def scenario_from_doc(doc: dict[str, Any], path: Path, seed: int | None = None) -> Scenario:
    """Build a :class:`Scenario` from an already parsed TOML document."""
    ctx = ScenarioContext(path, 0, doc)
    games = [s for s in game_names() if s in doc]
    generic = {k: v for k, v in doc.items() if k not in games}
    if "scenario" not in generic:
        raise ctx.error("scenario", "missing [scenario] table (with at least duration = SECONDS)")
    tables = convert(generic, GenericTables, source=str(path))
    for sec in games:
        if not isinstance(doc[sec], dict):
            raise ctx.error(sec, "must be a table")
    head = tables.scenario
    if seed is not None and not 0 <= seed < 2**63:
        raise ctx.error("scenario.seed", f"the seed must be 0..2^63-1, got {seed}")
    ctx.seed = head.seed if seed is None else int(seed)
    ids = [e.id for e in tables.emitter]
    for i, e in enumerate(tables.emitter):
        if e.id in ids[:i]:
            raise ctx.error(f"emitter[{i}].id", f"duplicate emitter id {e.id!r}")
        _keyframes(ctx, f"emitter[{i}]", e.position, e.path)
    _keyframes(ctx, "listener", tables.listener.position, tables.listener.path)
    ctx.emitters = set(ids)
    builders = _generic_events()
    for sec in games:
        builders.update(game(sec).load("events")())
    events: list[Event] = []
    for i, entry in enumerate(tables.event):
        typ = entry.get("type")
        ctx.where = f"event[{i}]"
        if typ not in builders:
            raise ctx.error(
                f"event[{i}].type", f"unknown event type {typ!r} (known here: {', '.join(sorted(builders))})"
            )
        ev = builders[typ](entry, ctx)
        if ev.t < 0:
            raise ctx.error(f"event[{i}].t", f"expected a time >= 0 s, got {ev.t}")
        if ev.t > head.duration:
            raise ctx.error(f"event[{i}].t", f"t = {ev.t} s is after the end ({head.duration} s)")
        events.append(ev)
    ctx.where = ""
    name = head.name or ("stdin" if str(path) == "-" else path.stem)
    return Scenario(path, name, head.duration, ctx.seed, head.layout, doc, events, tables)


class PlayOutcome(Outcome):
    """The decisions of the generic ``play`` system."""

    Started = "Started", START
    Finished = "Finished", END


class PlaySystem(GameSystem):
    """Plays ``play`` events at emitters through ``play_voice`` (the Skate 3 stream chain under a
    neutral name), on 30 Hz console frames.

    Each play voice takes its own echo-submix slot, round-robin over ``slots`` (24-31, clear
    of the Skate speech streams, which use slot ``channel * streams_per_channel + k``).
    """

    name = "play"
    frame_rate = 30
    outcomes = PlayOutcome
    DELAY_FRAMES = 4
    SPEED_OF_SOUND = 344.0
    MAX_DELAY = 0.15
    MAX_LOADING = 256
    """Plays waiting for the loader at most (live); more are faults (``io``)."""

    def __init__(
        self,
        files: dict[str, tuple[np.ndarray, int]] | None = None,
        slots: range = range(24, 32),
        min_distance: float = 1.0,
        base: Path | None = None,
    ) -> None:
        self.files = dict(files or {})
        self.base = base
        """Folder relative ``file`` names are read from (the scenario's; captures keep them relative)."""
        self.slots = slots
        self.min_distance = min_distance
        self._next_slot = 0
        self.voices: list[tuple[Voice, PlayEvent, dict[str, Any]]] = []
        self.peak = PeakCurves.from_graph(load_graph("play_voice"))
        self.paths: PathPolicy | None = None
        """Set by ports and live runs: files outside its roots are refused (a fault)."""
        self.loading: list[tuple[Load[tuple[np.ndarray, int]], PlayEvent, int]] = []
        """Plays waiting for the loader (live): the load, the event, the sample it was asked at."""

    @property
    def graphs(self) -> tuple[str, ...]:
        """``play_voice`` once a file is preloaded (see :meth:`Engine.prepare`)."""
        return ("play_voice",) if self.files else ()

    def attach(self, engine: Engine) -> None:
        self.engine = engine
        engine.bus.subscribe(self, [PlayEvent])
        engine.prefetchers[PlayEvent] = self.prefetch  # type: ignore[assignment]

    def prefetch(self, ev: PlayEvent) -> Load[tuple[np.ndarray, int]] | None:
        """Start loading the file ``ev`` plays (kept in :attr:`files` when decoded), so a live
        inbox posts it when it can start at once; None if loaded or refused (its fault comes
        when it is handled)."""
        if ev.file in self.files:
            return None
        try:
            if self.paths is not None:
                self.paths.check(ev.file)
            where = self._where(ev.file)
        except (BarkbusError, ValueError):
            return None

        def load() -> tuple[np.ndarray, int]:
            got = _decode_mono(where)
            self.files.setdefault(ev.file, got)  # one dict store: safe from the worker thread
            return got

        return self.engine.loader.request(where, load)

    def allow_paths(self, policy: PathPolicy) -> None:
        """Refuse (as a fault) files outside ``policy``'s roots from now on."""
        self.paths = policy

    def preload(self, file: str) -> tuple[np.ndarray, int]:
        """Read ``file`` (mono mix, float32) once; later plays reuse it (no I/O while rendering).

        Any regular file :func:`~audio.containers.fallback.decode_file` decodes: soundfile first
        (WAV, FLAC as before), then our codecs, then vgmstream (``.vag``, ADX, XWB...)."""
        if file not in self.files:
            self.files[file] = _decode_mono(self._where(file))
        return self.files[file]

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """Files are checked where they are read (:meth:`preload`, the port's path policy): None."""
        return None

    def _where(self, file: str) -> Path:
        path = Path(check_name(file))
        return path if path.is_absolute() or self.base is None else self.base / path

    def handle(self, ev: Event, bus: EventBus) -> None:
        assert isinstance(ev, PlayEvent)
        eng = self.engine
        try:  # a file that is refused, missing or does not decode costs this voice only
            if self.paths is not None:
                self.paths.check(ev.file)
            got = self.files.get(ev.file)
            if got is None:
                where = self._where(ev.file)
                load: Load[tuple[np.ndarray, int]] = eng.loader.request(where, lambda: _decode_mono(where))
                if not eng.load_wait and not load.ready():
                    if len(self.loading) >= self.MAX_LOADING:
                        raise OSError(f"{self.MAX_LOADING} plays already wait for the loader")
                    self.loading.append((load, ev, bus.now))
                    return
                got = self._loaded(ev, load.wait(eng.config.load_timeout))
        except (BarkbusError, OSError, RuntimeError, KeyError, ValueError) as exc:
            self._fault(ev, exc)
            return
        self._start(ev, got, bus)

    def _loaded(self, ev: PlayEvent, got: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
        """Keep a file the loader decoded for the next plays (no reference while others play it)."""
        self.files.setdefault(ev.file, got)
        return got

    def _fault(self, ev: PlayEvent, exc: BaseException) -> None:
        kind, file, offset, reason = describe(exc, ev.file)
        if kind not in ("refused", "io") and not _is_file(self._where_or_none(ev.file)):
            kind, reason = "missing", f"no such file: {ev.file[:200]}"
        report_fault(self.engine.bus, "play", kind, reason, file=file, offset=offset, emitter=ev.emitter)

    def _where_or_none(self, file: str) -> Path | None:
        try:
            return self._where(file)
        except ValueError:
            return None

    def _start(self, ev: PlayEvent, got: tuple[np.ndarray, int], bus: EventBus, late: int = 0) -> None:
        pcm, sample_rate = got
        state: dict[str, Any] = {"countdown": 0, "delay": None}
        try:
            params = self._params(ev, state)
        except (KeyError, ValueError) as exc:
            self._fault(ev, exc)
            return
        slot = self.slots[self._next_slot % len(self.slots)]
        self._next_slot += 1
        v = self.engine.voices.start(
            "play_voice",
            pcm,
            sample_rate,
            slot=slot,
            params=params,
            tag=f"play:{ev.emitter}:{Path(ev.file).name}",
        )
        self.voices.append((v, ev, state))
        more = {"late_ms": round(1000.0 * late / self.engine.sample_rate, 1)} if late else {}
        bus.decide(
            "play",
            PlayOutcome.Started,
            emitter=ev.emitter,
            file=Path(ev.file).name,
            slot=slot,
            voice=v.id,
            **more,
        )
        if late:
            log.info("play %s started %d samples after its event (loading)", Path(ev.file).name, late)

    def _poll_loading(self, engine: Engine) -> None:
        """Start the plays whose file is ready now (live); fail those past the timeout."""
        waiting = []
        for load, ev, asked_at in self.loading:
            if load.ready():
                try:
                    got = self._loaded(ev, load.result())
                except (BarkbusError, OSError, RuntimeError, ValueError) as exc:
                    self._fault(ev, exc)
                    continue
                self._start(ev, got, engine.bus, late=engine.now - asked_at)
            elif load.expired(engine.config.load_timeout):
                self._fault(
                    ev, TimeoutError(f"loading {ev.file[:200]} took over {engine.config.load_timeout:g} s")
                )
            else:
                waiting.append((load, ev, asked_at))
        self.loading = waiting

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
        return {
            "Rsp0.pitch": 4096.0 * ev.pitch,
            "PI20.centre_hz": centre,
            "PI20.gain": gain,
            "PI20.q": q,
            "Sen0_echo.level": ev.echo_send,
            "Gai0.gain": ev.gain * roll,
            "Sen0_env.level": ev.env_send,
            "Pn21.angle_deg": angle,
        }

    def next_tick(self, frame: int) -> int:
        """Every frame while a play voice plays or a file loads (its parameters follow the world
        each frame); :data:`~audio.core.plugin.NEVER` otherwise (only a play event starts one)."""
        return frame if self.voices or self.loading else NEVER

    def tick(self, frame: int, engine: Engine) -> None:
        if self.loading:
            self._poll_loading(engine)
        keep = []
        for v, ev, state in self.voices:
            if v.done:
                engine.bus.decide(
                    "play", PlayOutcome.Finished, emitter=ev.emitter, voice=v.id, ended_at=v.ended_at
                )
                continue
            engine.voices.set(v, **self._params(ev, state))
            if state.pop("delay_changed", False):
                engine.mixer.set_submix("play_echo_submix", v.slot, **{"Del0.seconds": state["delay"]})
            keep.append((v, ev, state))
        self.voices = keep


def _decode_mono(path: Path) -> tuple[np.ndarray, int]:
    """A regular file decoded to mono float32 and its sample rate, Hz (see :meth:`PlaySystem.preload`)."""
    data, sample_rate = decode_file(check_regular(path))
    return data.mean(axis=1).astype(np.float32), int(sample_rate)


def _is_file(path: Path | None) -> bool:
    try:
        return path is not None and path.is_file()
    except (OSError, ValueError):
        return False


def build_engine(
    scn: Scenario, *, block: int | None = None, post_events: bool = True, **config: Any
) -> Engine:
    """An engine with the scenario's world, systems and (unless replaying) its events.

    ``config`` sets :class:`EngineConfig` fields; ``layout`` and ``seed`` default to the
    scenario's."""
    if block:
        config["block"] = block
    cfg = EngineConfig(**{"seed": scn.seed, "layout": scn.layout, **config})
    eng = Engine(cfg)
    ctx = ScenarioContext(scn.path, scn.seed, scn.doc)
    tables = scn.tables if scn.tables is not None else scenario_from_doc(scn.doc, scn.path, scn.seed).tables
    assert tables is not None
    lst = tables.listener
    eng.world.set_listener(yaw_deg=lst.yaw, path=_keyframes(ctx, "listener", lst.position, lst.path))
    for e in tables.emitter:
        eng.world.set_emitter(e.id, path=_keyframes(ctx, "emitter", e.position, e.path))
    play = PlaySystem(base=scn.path.parent)
    for ev in scn.events:
        if isinstance(ev, PlayEvent):
            try:
                play.preload(ev.file)
            except (OSError, RuntimeError, ValueError):
                pass  # reported as a fault when it plays; the rest of the scenario plays
    eng.add_system(play)
    for sec in scn.sections:
        section = scn.doc[sec]
        eng.add_system(game(sec).load("system")(section, ctx))
    for i, ev in enumerate(scn.events):  # names checked against the installs at load time
        problem = eng.check_event(ev)
        if problem is not None:
            raise ctx.error(f"event[{i}].{problem[0]}", problem[1])
    eng.prepare()
    if post_events:
        for ev in scn.events:
            eng.bus.post(ev)
    return eng


def port_doc(game_name: str, section: dict[str, Any], seed: int) -> dict[str, Any]:
    """The one-section scenario document a port runs ``game_name`` from (a day long)."""
    return {
        "scenario": {"name": f"port {game_name}", "duration": 24 * 3600.0, "seed": seed},
        game_name: section,
    }


def replay_scenario(header: dict[str, Any], capture: str | Path | None = None) -> tuple[Scenario, Engine]:
    """The one builder of a replay: the scenario and a fresh engine exactly like the recorded one.

    Parameters
    ----------
    header:
        A capture header (the first line of a capture, :class:`CaptureHeader`).
    capture:
        The capture file: relative paths in the header are read from its folder (the working
        folder when ``None``).

    The engine gets the header's layout (or the document's), sample rate (Hz), block
    (samples), seed and isolation; its systems open files only under the header's ``allow``
    roots when it names them (:meth:`GameSystem.allow_paths`). A header with ``doc`` rebuilds
    from that scenario document (its events are not posted: the capture holds them); otherwise
    from the game's port section for ``install``. Post the captured events with
    :func:`audio.core.capture.post_captured`.

    Raises
    ------
    FormatError, ScenarioError, InputError
        A header, document, game or install that cannot be rebuilt.
    """
    source = str(capture) if capture is not None else "<capture>"
    h = read_header(header, source).resolved(capture)
    if h.doc is not None:
        doc = h.doc
        where = Path(h.scenario) if h.scenario is not None else Path(source)
    else:
        name = h.game or "tone"
        doc = port_doc(name, game(name).port_section(h.install), h.seed)
        where = Path(h.scenario or (Path(source).resolve().parent / f"<port {name}>.toml"))
    scn = scenario_from_doc(doc, where, h.seed)
    config: dict[str, Any] = {"sample_rate": h.sample_rate, "isolate_systems": h.isolate_systems}
    if h.layout is not None:
        config["layout"] = h.layout
    eng = build_engine(scn, block=h.block, post_events=False, **config)
    if h.allow is not None:
        policy = PathPolicy(h.allow, bundled=False)
        for system in eng.systems:
            system.allow_paths(policy)
    return scn, eng


def engine_for_capture(header: dict[str, Any], capture: str | Path | None = None) -> Engine:
    """A fresh engine built like the one a capture header describes (:func:`replay_scenario`)."""
    return replay_scenario(header, capture)[1]
