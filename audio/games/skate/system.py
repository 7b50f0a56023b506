"""The Skate 3 living-world speech system on the engine (``SkateSpeechSystem``).

Every console frame (30 Hz) it ticks (the engine skips the frames :meth:`next_tick
<SkateSpeechSystem.next_tick>` shows can change nothing), it runs, in this order: finished clips
(next clip of the record, or Finished); the player's frame (queue ageing, Expired, free
streams filled); each ped's :class:`~audio.games.skate.speech.ped.PedSpeech` (a new value stops the
ped's line; requests go through the manager's gate and the library, then to the player);
then each playing line's voice block -> the voice's parameters and the slot's echo submix
(each posted only when changed; sends every frame), and the cut check. A ped is placed (path
position, distance, azimuth) only on the frames that read it (a request's near/far word, a
playing line's block), and its distance delay countdown is kept in closed form
(:class:`~audio.games.skate.speech.voice.DelayCountdown`), so a ped nobody hears costs nothing
per frame; peds are registered as world emitters (with their paths) when they spawn. Lines
play their clips back to back; the next clip starts at the first console frame after the
previous one ended. In a full render, while the lines are all that moves, :meth:`next_tick
<SkateSpeechSystem.next_tick>` computes their writes for the frames ahead instead and the engine
runs them there (:meth:`Engine.schedule <audio.core.engine.Engine.schedule>`).

Every request and line outcome is logged with ``bus.decide("skate.speech", outcome, ...)``
(detail keys: ped, speaker, event, value, reason, stream, clip, take, record).

Scenario ``[skate]`` section (``system_from_scenario``)::

    [skate]
    install = "demo"              # "demo" (audio/games/skate/demo) or a Skate 3 install root
                                  #   (relative paths: to the scenario file)
    tuning = "tuning.toml"        # tuning file (default: audio/games/skate/demo/tuning.toml)
    manager_rand = "msvc"         # "msvc" (the port's LCG, default) or "awc" (shares the library's)
    manager_seed = "scenario"     # "scenario" (seed from the scenario seed) or an integer srand seed
    library_seed = "scenario"     # "scenario" (six words of the scenario seed), "table", or an
                                  #   integer added to every word of the retail table
    streams_per_channel = 2       # 2 (the port) or e.g. 8 (the retail notes' reading)
    phone_ring_seconds = 1.0      # length of the phone ring before value 64 (not the game's data)
    delay_factor = 1.0            # distance delay factor (spec 5.6)
    delay_frames = 4              # delay refresh countdown, console frames
    maincast = true               # load the install's maincast bank for pros when present
    cache_mb = 96                 # decoded-take cache budget (MB, LRU)
    prefetch = false              # decode a spawned ped's takes ahead of need on a worker
    console_start = 0.0           # seconds the console has run when the scenario starts: the
                                  #   manager's per-speaker timers count from the console's start
                                  #   (0 = just booted, so nothing passes a repeat time early)
                                  #   thread (live playback turns it on)
    [skate.mix.out2]              # optional curve overrides, see audio.games.skate.speech.mixcurves
    x = [0, 10, 40]
    y = [32767, 20000, 0]

Scenario events (``[[event]]`` with ``t`` seconds and ``type``)::

    type = "skate.spawn"     ped, voice (id or name), model, position = [x, y, z] or
                             path = [[t, x, y, z], ...], far_threshold, voice_float, pitch,
                             type_bit, variant_bit, partner_type, conversation, cast_bit, ...
    type = "skate.value"     ped, value
    type = "skate.move"      ped, position = [x, y, z]
    type = "skate.speed"     speed (m/s)
    type = "skate.zombie"    on (bool)
    type = "skate.challenge" challenge (int; omit for none)
    type = "skate.photo"     on (bool)
"""

from __future__ import annotations

import bisect
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from audio.core import memo
from audio.core.bus import Decision, Event, EventBus
from audio.core.errors import BarkbusError
from audio.core.faults import describe, report_fault
from audio.core.outcomes import CUT, END, QUIET, REFUSED, START, STATE, Outcome
from audio.core.plugin import NEVER, GameSystem, ShareKey
from audio.core.schema import did_you_mean
from audio.core.voices import ParamWriter
from audio.core.world import Path3
from audio.dsp.curves import azimuth_to_raw
from audio.games.skate.events import (
    ChallengeChange,
    PedMove,
    PedSpawn,
    PhotoFlag,
    PlayerSpeed,
    SpeechValue,
    ZombieMode,
)
from audio.games.skate.speech.library import SpeechLibrary, derived
from audio.games.skate.speech.manager import CHANNEL_LIVING, CHANNEL_MAINCAST, ManagerResult, SpeechManager
from audio.games.skate.speech.mixcurves import MixCurves
from audio.games.skate.speech.ped import (
    FEMALE_TYPES,
    INITIAL_VALUE,
    PedModel,
    PedSpeech,
    far_threshold_for,
    voice_type_bit,
)
from audio.games.skate.speech.player import Line, LineRequest, PlayerEvent, SpeechPlayer
from audio.games.skate.speech.rand import ManagerRand
from audio.games.skate.speech.tuning import SpeechTuning
from audio.games.skate.speech.voice import VoiceBlock, VoiceMixer

__all__ = [
    "TakeSource",
    "BankTakeSource",
    "SkateOutcome",
    "SkateSpeechSystem",
    "summarize",
    "format_summary",
    "VOICE_GRAPH",
    "ECHO_GRAPH",
    "DEMO_TUNING",
    "DEMO_INSTALL",
]

VOICE_GRAPH = "skate_stream_voice"
ECHO_GRAPH = "skate_echo_submix"
DEMO_TUNING = Path(__file__).resolve().parent / "demo" / "tuning.toml"
DEMO_INSTALL = Path(__file__).resolve().parent / "demo"
"""The demo install root (``install = "demo"``): data/audio/english/livingworldspeech.big etc."""
SYSTEM = "skate.speech"
FRAME_RATE = 30
WINDOW = 30
"""Console frames a full render's :meth:`SkateSpeechSystem.next_tick` computes the playing lines'
writes ahead of (:meth:`Engine.schedule <audio.core.engine.Engine.schedule>`); the engine asks
again at the last of them (or sooner, where anything happens), and ticks the frame after only
if the answer is that frame."""


class TakeSource(Protocol):
    """Where the system gets audio: a take's PCM (float32 mono, -1..1, ``sample_rate`` Hz), its
    length (samples, ``sample_rate`` Hz: all a decisions-only run needs) and clip names."""

    def pcm(self, clip_id: int, take: int) -> tuple[np.ndarray, int]: ...

    def length(self, clip_id: int, take: int) -> tuple[int, int]: ...

    def clip_name(self, clip_id: int) -> str: ...


class BankTakeSource:
    """A :class:`TakeSource` over an install bank (``audio.games.skate.formats.install.SpeechBank``).

    Decoded takes live in a :class:`~audio.containers.cache.TakeCache` bounded in megabytes, so a
    take is decoded once and memory stays bounded; :meth:`prefetch_voice` decodes every take a
    voice can be given on the cache's worker thread, ahead of need (live playback). Inside
    :func:`audio.core.memo.enabled` (a batch worker) takes, and decisions-only their lengths,
    are kept for the worker's later runs.
    """

    def __init__(self, bank: Any, budget_mb: float = 96.0) -> None:
        from audio.codecs.xma import load_ffmpeg
        from audio.containers.cache import TakeCache
        from audio.containers.snr import CODEC_EAXMA

        self.bank = bank
        self._clips = bank.clips_by_hdr_id()
        self.cache = TakeCache(budget_mb)
        self._memo_key = memo.file_key(bank.path) if memo.active() else None
        if "av" not in sys.modules and CODEC_EAXMA in bank.take_codecs():
            # FFmpeg loads on the cache's worker while the engine sets up, not at the first
            # take the render thread decodes (once per process, not a thread per run)
            self.cache.warm(load_ffmpeg)

    def clip_name(self, clip_id: int) -> str:
        c = self._clips.get(clip_id)
        return c.name if c is not None else f"clip{clip_id}"

    def voice_names(self) -> dict[str, int]:
        """Voice name -> voice id of the bank's clips."""
        return dict(
            derived(
                "skate.voice_names",
                (self.bank,),
                lambda: {c.voice_name: c.voice_id for c in self._clips.values() if c.voice_name},
            )
        )

    def _decoder(self, clip_id: int, take: int) -> Callable[[], tuple[np.ndarray, int]]:
        clip = self._clips[clip_id]
        return lambda: self.bank.decode_take(clip, take)

    def pcm(self, clip_id: int, take: int) -> tuple[np.ndarray, int]:
        decode = self._decoder(clip_id, take)
        if self._memo_key is not None:
            return memo.memo(("skate.take", self._memo_key, clip_id, take), decode)
        return self.cache.get_or_decode((clip_id, take), decode)

    def length(self, clip_id: int, take: int) -> tuple[int, int]:
        """``(samples, sample_rate Hz)`` of a take (a take that does not decode raises here as in
        :meth:`pcm`); inside the memo it is decoded once per worker and only its length kept."""
        if self._memo_key is None:
            pcm, sample_rate = self.pcm(clip_id, take)
            return int(pcm.shape[0]), int(sample_rate)

        def measure() -> tuple[int, int]:
            pcm, sample_rate = self._decoder(clip_id, take)()
            return int(pcm.shape[0]), int(sample_rate)

        return memo.memo(("skate.take_length", self._memo_key, clip_id, take), measure)

    def prefetch_voice(self, voice_id: int) -> int:
        """Queue every take of ``voice_id``'s clips for decoding; returns how many were queued."""
        jobs = [
            ((cid, k), self._decoder(cid, k))
            for cid, c in self._clips.items()
            if c.voice_id == voice_id
            for k in range(len(c.takes))
        ]
        return len(self.cache.prefetch(jobs))


@dataclass
class _Ped:
    id: int
    model: PedModel
    speech: PedSpeech
    emitter: str
    value: int = INITIAL_VALUE
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    path: tuple[tuple[float, float, float, float], ...] = ()
    distance: float = 0.0
    azimuth: int = 0
    delay: float = 0.0
    placed: int = -1
    """Console frame of ``position``, ``distance``, ``azimuth`` and ``delay`` (a ped is placed
    on the frames that read them)."""
    speeds: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())
    """Its path's :func:`_top_speeds` (none: it stands)."""


def _voice_clips(lib: SpeechLibrary, src: BankTakeSource) -> dict[int, set[ShareKey]]:
    """Voice id -> the ``(event, clip)`` of its clips in every event's records."""
    clips = src.bank.clips_by_hdr_id()
    out: dict[int, set[ShareKey]] = {}
    for ev in lib.table.events:
        for rec in ev.records:
            for c in rec.clips:
                clip = clips.get(c.clip_id)
                if clip is not None:
                    out.setdefault(clip.voice_id, set()).add((str(ev.id), clip.name))
    return out


def _top_speeds(
    keys: Iterable[tuple[float, Sequence[float]]],
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``(times, speeds)`` of keyframes ``(seconds, position)``, linear in between: from
    ``times[i]`` on, nothing moves faster than ``speeds[i]`` (m/s; ``inf`` past a jump, two keys
    at one time); :func:`_top_speed` reads it."""
    ks = list(keys)
    times, speeds, top = [], [], 0.0
    for (t0, p0), (t1, p1) in reversed(list(zip(ks, ks[1:]))):
        step = math.dist(p0, p1)
        if step:
            top = max(top, step / (t1 - t0) if t1 > t0 else math.inf)
        times.append(t0)
        speeds.append(top)
    return tuple(reversed(times)), tuple(reversed(speeds))


def _top_speed(speeds: tuple[tuple[float, ...], tuple[float, ...]], t: float) -> float:
    """The fastest speed (m/s) of a path (:func:`_top_speeds`) from ``t`` seconds on."""
    times, tops = speeds
    if not tops:
        return 0.0
    return tops[max(bisect.bisect_right(times, t) - 1, 0)]


def _path_position(
    path: tuple[tuple[float, float, float, float], ...], t: float
) -> tuple[float, float, float]:
    if t <= path[0][0]:
        return path[0][1:]
    for a, b in zip(path, path[1:]):
        if t < b[0]:
            u = (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else 1.0
            return (a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u, a[3] + (b[3] - a[3]) * u)
    return path[-1][1:]


def _position_at(ped: _Ped, t: float) -> tuple[float, float, float]:
    """The ped's position (m) at ``t`` seconds: on its path, or where it stands."""
    return _path_position(ped.path, t) if ped.path else ped.position


@dataclass
class _Window:
    """The playing lines' writes computed ahead (:meth:`SkateSpeechSystem._schedule`)."""

    epoch: int
    """The system's epoch when computed."""
    first: int
    """The console frame of ``rows[0]``."""
    lines: list[tuple[Line, Any]]
    """The lines and their voices."""
    rows: list[list[Any]]
    """Per frame, the writes (:meth:`Engine.schedule <audio.core.engine.Engine.schedule>`)."""
    states: list[list[tuple[int, dict[str, float] | None]]]
    """Per frame, each line's low-level count and echo submix parameters posted after it."""


class SkateOutcome(Outcome):
    """Every decision the Skate 3 speech system logs (requests, the player's lines, spawns)."""

    Accepted = "Accepted", QUIET
    """The manager's gates passed and the library picked a record."""
    Repeat = "Repeat", REFUSED
    Gap = "Gap", REFUSED
    NotFollow = "NotFollow", REFUSED
    Probability = "Probability", REFUSED
    Speed = "Speed", REFUSED
    Challenge = "Challenge", REFUSED
    Timers = "Timers", REFUSED
    Flags = "Flags", REFUSED
    Zombie = "Zombie", REFUSED
    UnknownEvent = "UnknownEvent", REFUSED
    Unsupported = "Unsupported", REFUSED
    NoRecord = "NoRecord", REFUSED
    NoEvent = "NoEvent", REFUSED
    """A speech value maps to no event for the ped's voice."""
    UnknownPed = "UnknownPed", REFUSED
    SpawnError = "SpawnError", REFUSED
    Spawned = "Spawned", QUIET
    PhoneRing = "PhoneRing", STATE
    Queued = "Queued", QUIET
    Dropped = "Dropped", REFUSED
    Expired = "Expired", REFUSED
    Started = "Started", START
    Finished = "Finished", END
    Interrupted = "Interrupted", CUT
    Cut = "Cut", CUT
    Stopped = "Stopped", CUT


_QUEUE_ONLY = frozenset({SkateOutcome.Queued, SkateOutcome.Dropped, SkateOutcome.Expired})
"""The player's outcomes that touch only its request queue, not a playing line (they leave the
lines' writes computed ahead standing)."""


def _changed(old: dict[str, float] | None, params: dict[str, float]) -> dict[str, float]:
    """The echo submix values of ``params`` that differ from those posted last (``old``)."""
    old = old or {}
    return {k: v for k, v in params.items() if old.get(k) != v}


class SkateSpeechSystem(GameSystem):
    """Ped speech -> manager -> library -> player -> engine voices (see the module docstring).

    Parameters
    ----------
    living:
        The living-world library (channel 1).
    tuning:
        Per-event tuning.
    source:
        Audio of the living-world takes.
    maincast, maincast_source:
        The main-cast library and its audio (pros), optional.
    rng:
        The manager's ``rand()`` (default :class:`~audio.games.skate.speech.rand.MsvcRand` seeded 1).
    streams_per_channel, phone_ring_seconds, curves, delay_factor, delay_frames:
        Settings (see :mod:`audio.games.skate.speech.player`, :mod:`audio.games.skate.speech.ped`,
        :mod:`audio.games.skate.speech.voice`).
    voice_bits:
        ``voice id -> (type bit, variant bit)`` (e.g. ``SpeechBank.voice_bits``); None entries
        fall back to the spec's voice table with variant 1.
    voice_names:
        Voice name -> voice id, for spawns naming a voice (``busm1``).
    """

    name = SYSTEM
    frame_rate = FRAME_RATE
    outcomes = SkateOutcome
    max_peds = 256
    """Peds alive at once; a spawn of a new ped beyond it is refused (SpawnError). Ours: every
    ped costs work each console frame, and a flood of spawns must not starve the audio."""

    def __init__(
        self,
        living: SpeechLibrary,
        tuning: SpeechTuning,
        source: TakeSource,
        *,
        maincast: SpeechLibrary | None = None,
        maincast_source: TakeSource | None = None,
        rng: ManagerRand | None = None,
        streams_per_channel: int = 2,
        phone_ring_seconds: float = 1.0,
        curves: MixCurves | None = None,
        delay_factor: float = 1.0,
        delay_frames: int = 4,
        voice_bits: Callable[[int], tuple[int, int] | None] | None = None,
        voice_names: Mapping[str, int] | None = None,
        prefetch: bool = False,
        console_start: float = 0.0,
    ) -> None:
        self.prefetch = prefetch
        self.manager = (
            SpeechManager(tuning, living, maincast)
            if rng is None
            else SpeechManager(tuning, living, maincast, rng=rng)
        )
        self.libraries = {CHANNEL_LIVING: living, CHANNEL_MAINCAST: maincast}
        self.sources: dict[int, TakeSource | None] = {
            CHANNEL_LIVING: source,
            CHANNEL_MAINCAST: maincast_source,
        }
        self.player = SpeechPlayer(streams_per_channel)
        self.mixer = VoiceMixer(curves, delay_factor, delay_frames)
        self.phone_ring_seconds = phone_ring_seconds
        self.voice_bits = voice_bits
        self.voice_names = dict(voice_names or {})
        self.peds: dict[int, _Ped] = {}
        self.photo_flag = False
        self.voices: dict[int, Any] = {}  # stream slot -> engine Voice
        self.submix_posted: dict[int, dict[str, float]] = {}
        self._blocks: dict[
            int, tuple[Any, tuple[Any, ...], VoiceBlock, dict[str, float], dict[str, float]]
        ] = {}
        """Stream slot -> (ped, inputs, voice block, its voice and echo submix parameters) of the
        last frame: a line whose ped has not moved reuses them (full mode)."""
        self.bus: EventBus | None = None
        self.now = 0.0
        self.console_start = console_start
        self.decisions_only = False
        """Set from the engine (``dsp=False``): the voice parameters, panning and distance
        delays that cannot change a decision are not computed, and a ped is placed only on the
        frames its distance is needed (a request's near/far word, a playing line's level)."""
        self._world: Any = None
        self._writer: ParamWriter | None = None
        self._engine: Any = None
        self._frame = -1
        self._listeners: list[tuple[int, Path3]] = []
        """(first console frame, listener path) of each listener the world has had lately, for a
        delay refresh read after its frame (full mode): the listener's position on frame ``f`` is
        its path at the first sample of ``f``, as a tick on ``f`` would have read it."""
        self._busy: set[int] = set()
        """Peds whose next frame may act (a new value, a ring running, a photo repeat
        counting); every other ped's frame is idle (:meth:`PedSpeech.idle`) and skipped."""
        self._mains: dict[tuple[str, int, int], int] = {}
        """(speaker kind, event, clip id) -> the main level output (decisions-only)."""
        self._next_frame = 0
        """The first console frame neither ticked nor caught up (:meth:`_catch_up`)."""
        self._kept: dict[int, tuple[Line, bool | None]] = {}
        """Stream slot -> (line, whether its level stays <= the cut level) from
        :meth:`next_tick` on, for the frames it skips (None: no level is read)."""
        self._edges: dict[int, tuple[float, ...]] = {}
        """Main level output -> the distances (m) where its level crosses the cut level."""
        self._listener_speeds: tuple[Any, int, tuple[tuple[float, ...], tuple[float, ...]]] | None = None
        """(listener path, its key count, its :func:`_top_speeds`)."""
        self._window: _Window | None = None
        """The playing lines' writes last computed ahead (:meth:`_schedule`)."""
        self._run_from: int | None = None
        """The first frame of the window's writes the engine holds (None: it holds none)."""
        self._epoch = 0
        """Counts what can change the playing lines' writes ahead: a line's start, end or
        clip (not a request queued, dropped or expired: :data:`_QUEUE_ONLY`), a ped's spawn or
        move, a new listener; a window computed in another epoch is computed again."""

    # -- engine ------------------------------------------------------------------------
    graphs = (VOICE_GRAPH,)
    """The stream-voice graph (its echo submixes follow its sends); see :meth:`Engine.prepare`."""

    def attach(self, engine: Any) -> None:
        self.bus = engine.bus
        self.decisions_only = not engine.config.dsp
        self._engine = engine
        self._world = engine.world
        if not self.decisions_only:
            self._writer = ParamWriter(engine.voices)
            self._listeners = [(-NEVER, engine.world.listener)]
        engine.bus.subscribe(
            self, (PedSpawn, SpeechValue, PedMove, PlayerSpeed, ZombieMode, ChallengeChange, PhotoFlag)
        )

    def _decide(self, outcome: str, **detail: Any) -> None:
        """Log ``outcome`` (a :class:`SkateOutcome` name: the manager, library and player
        return their codes as names; an undeclared one raises here)."""
        if self.bus is not None:
            self.bus.decide(
                SYSTEM, SkateOutcome.named(outcome), **{k: v for k, v in detail.items() if v is not None}
            )

    def handle(self, event: Event, bus: EventBus) -> None:
        """Apply a ``skate.*`` event; speech values act at the next console frame."""
        if isinstance(event, PedSpawn):
            self._epoch += 1
            self._spawn(event)
        elif isinstance(event, SpeechValue):
            ped = self.peds.get(event.ped)
            if ped is None:
                self._decide(
                    "UnknownPed", ped=event.ped, value=event.value, reason="value for a ped not spawned"
                )
            else:
                ped.value = event.value
                self._busy.add(event.ped)
        elif isinstance(event, PedMove):
            ped = self.peds.get(event.ped)
            self._epoch += 1
            if ped is not None:
                self._settle_delay(ped)
                ped.position, ped.path = tuple(event.position), ()  # type: ignore[assignment]
                ped.placed, ped.speeds = -1, ((), ())
                self._world.set_emitter(ped.emitter, ped.position)
        elif isinstance(event, PlayerSpeed):
            self.manager.player_speed = float(event.speed)
        elif isinstance(event, ZombieMode):
            self.manager.zombie = bool(event.on)
        elif isinstance(event, ChallengeChange):
            self.manager.challenge = event.challenge
        elif isinstance(event, PhotoFlag):
            self.photo_flag = bool(event.on)
            self._busy.update(self.peds)

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """``(field, problem)`` when ``event`` names a voice the install does not have (with the
        closest of its names); None otherwise. Scenarios check every event when they load, the
        port before it posts one."""
        if (
            isinstance(event, PedSpawn)
            and isinstance(event.voice, str)
            and event.voice not in self.voice_names
        ):
            return (
                "voice",
                f"no voice {event.voice!r} in the install{did_you_mean(event.voice, self.voice_names)}",
            )
        return None

    def _spawn(self, ev: PedSpawn) -> None:
        if ev.ped not in self.peds and len(self.peds) >= self.max_peds:
            self._decide("SpawnError", ped=ev.ped, reason=f"already {len(self.peds)} peds (max_peds)")
            return
        voice = ev.voice
        if isinstance(voice, str):
            if voice not in self.voice_names:
                problem = self.check_event(ev)
                self._decide(
                    "SpawnError", ped=ev.ped, reason=problem[1] if problem else f"unknown voice {voice!r}"
                )
                return
            voice = self.voice_names[voice]
        bits = self.voice_bits(voice) if self.voice_bits is not None else None
        type_bit = ev.type_bit if ev.type_bit is not None else (bits[0] if bits else voice_type_bit(voice))
        variant = ev.variant_bit if ev.variant_bit is not None else (bits[1] if bits else 1)
        kind = ev.model
        if kind == "regular":
            kind = "security" if type_bit & 0x40 else "bum" if type_bit & 0x4000 else "regular"
        model = PedModel(
            voice_id=voice,
            kind=kind,
            type_bit=0 if kind == "pro" else type_bit,
            variant_bit=variant,
            partner_type=ev.partner_type,
            conversation=ev.conversation,
            female=bool(type_bit & FEMALE_TYPES),
            far_threshold=ev.far_threshold if ev.far_threshold is not None else far_threshold_for(kind),
            voice_float=1.0 if ev.voice_float is None else ev.voice_float,
            pitch=ev.pitch,
            cast_bit=ev.cast_bit,
            cast_word=ev.cast_word,
            other_cast_bit=ev.other_cast_bit,
            other_cast_word=ev.other_cast_word,
        )
        old = self.peds.get(ev.ped)
        if old is not None:
            self._settle_delay(old)
        ped = self.peds[ev.ped] = _Ped(
            ev.ped,
            model,
            PedSpeech(model, self.phone_ring_seconds),
            f"skate.ped.{ev.ped}",
            position=(float(ev.position[0]), float(ev.position[1]), float(ev.position[2])),
            path=tuple(ev.path),
        )
        path = Path3([(k[0], tuple(k[1:])) for k in ped.path]) if ped.path else None  # type: ignore[misc]
        ped.speeds = _top_speeds(path.keys) if path else ((), ())
        self._world.set_emitter(ped.emitter, ped.position, path=path)
        if not self.decisions_only:
            self.mixer.countdown(ev.ped, self._engine.frame_of(self) + 1)
        self._busy.add(ev.ped)
        self._decide(
            "Spawned", ped=ev.ped, speaker=voice, reason=f"{kind} type 0x{type_bit:X} variant {variant}"
        )
        source = self.sources[CHANNEL_MAINCAST if kind == "pro" else CHANNEL_LIVING]
        if self.prefetch and isinstance(source, BankTakeSource):
            source.prefetch_voice(voice)

    def start_prefetch(self) -> None:
        """Decode a spawned ped's takes ahead of need from now on (a live run)."""
        self.prefetch = True

    # -- batch report ------------------------------------------------------------------------
    def _libs(self) -> list[tuple[SpeechLibrary, TakeSource | None]]:
        return [(lib, self.sources.get(ch)) for ch, lib in sorted(self.libraries.items()) if lib is not None]

    def event_names(self) -> dict[str, str]:
        """Event id -> name from the banks' ``.evt`` tables."""
        return {str(e.id): e.name for lib, _ in self._libs() for e in lib.table.events}

    def variety(self) -> tuple[str, str]:
        """A clip's take should vary between plays."""
        return ("clip", "take")

    @staticmethod
    def _record_shares(lib: SpeechLibrary, ev: Any, words: Sequence[int]) -> list[tuple[int, float]]:
        """(record index, probability) of the record a request with ``words`` gets."""
        ok = [
            i
            for i, rec in enumerate(ev.records)
            if rec.mode != 3 and (rec.mode != 1 or lib.flagged_channel) and lib.matches(ev, rec.values, words)
        ]
        total = sum(ev.records[i].weight for i in ok)
        if total > 0:
            return [(i, ev.records[i].weight / total) for i in ok if ev.records[i].weight > 0]
        return [(ok[0], 1.0)] if ok else []

    def expected_shares(self, decisions: Sequence[Decision]) -> dict[ShareKey, float]:
        """Expected plays per (event, clip): a request's matching records (its words against the
        records' field values) share ``weight / sum(weights)``. Exact for successive weighted
        draws when every record probability is 100 and mode 0 (the demo data), nominal otherwise.
        """
        libs = self._libs()
        accepted: dict[tuple[Any, Any], Sequence[int]] = {}
        out: dict[ShareKey, float] = {}
        for d in decisions:
            if d.system != self.name:
                continue
            det = d.detail
            if d.outcome == SkateOutcome.Accepted:
                accepted[(det.get("ped"), det.get("event"))] = tuple(det.get("words") or ())
            elif d.outcome == SkateOutcome.Started and det.get("clip_index", 0) == 0:
                words = accepted.get((det.get("ped"), det.get("event")))
                found = next(
                    (
                        (lib, src, ev)
                        for lib, src in libs
                        if (ev := lib.event(int(det["event"]))) is not None and src is not None
                    ),
                    None,
                )
                if words is None or found is None:
                    continue
                lib, src, ev = found
                for i, p in self._record_shares(lib, ev, words):
                    for c in ev.records[i].clips:
                        key = (str(ev.id), src.clip_name(c.clip_id))
                        out[key] = out.get(key, 0.0) + p
        return out

    def catalogue(self, decisions: Sequence[Decision]) -> set[ShareKey]:
        """The clips of the spawned peds' voices in every event's records."""
        speakers = {
            d.detail["speaker"] for d in decisions if d.system == self.name and d.outcome == "Spawned"
        }
        out: set[ShareKey] = set()
        for lib, src in self._libs():
            if isinstance(src, BankTakeSource):
                by_voice = derived("skate.catalogue", (lib.table, src.bank), partial(_voice_clips, lib, src))
                for voice in speakers:
                    out.update(by_voice.get(voice, ()))
        return out

    def summary(self, decisions: Iterable[Decision]) -> str:
        """Per-event outcome counts with the events' names from the banks' ``.evt`` tables."""
        names = {e.id: e.name for lib in self.libraries.values() if lib is not None for e in lib.table.events}
        return format_summary(decisions, names)

    def snapshot(self) -> dict[str, list[str]]:
        """Panels for a live UI: the streams, the request queue and the speakers' timers."""
        streams = []
        for ch, lines in sorted(self.player.streams.items()):
            for k, line in enumerate(lines):
                if line is None:
                    streams.append(f"ch{ch} k{k}: free")
                else:
                    clip, take = line.clip
                    src = self.sources.get(ch)
                    name = src.clip_name(clip) if src is not None else str(clip)
                    streams.append(
                        f"ch{ch} k{k}: ped {line.request.ped} {name}#{take} "
                        f"prio {line.request.priority} clip {line.clip_index + 1}/{len(line.request.picks)}"
                    )
        queue = [
            f"ped {r.ped} event {r.event} prio {r.priority} age {r.age}/{r.timeout} frames"
            for r in self.player.queue
        ]
        timers = [
            f"speaker {spk}: last line {self.console_now - t:.1f} s ago"
            for spk, t in sorted(self.manager.last_any.items())
        ]
        return {"streams": streams, "queue": queue or ["(empty)"], "timers": timers or ["(no line yet)"]}

    @property
    def console_now(self) -> float:
        """The speech manager's clock: seconds since the console started (scenario time plus
        ``console_start``)."""
        return self.console_start + self.now

    def next_tick(self, frame: int) -> int:
        """The first frame that can change anything: at once while a ped's speech frame has
        work, a queued request finds a free stream or a line's clip has ended; in a full render
        while a line plays (its voice's parameters follow its ped and the listener), the end
        of the lines' writes computed ahead (:meth:`_schedule`), or at once when they cannot
        be; else the first of a queued request's expiry and, decisions-only, a line's cut (its
        level kept <= the cut level for more than ``cut_frames`` frames) and the last frame on
        which each playing line's level provably stays on its side of the cut level
        (:meth:`_level_side`); NEVER when nothing plays or waits. The frames skipped only age
        the queue and run the lines' cut counts on (:meth:`_catch_up`); a ped places itself
        from the clock when asked, and a distance delay refreshed on a skipped frame is
        computed from the ped's and the listener's positions then when it is read
        (:meth:`_distance_on`)."""
        self._catch_up(frame)
        if not self.decisions_only:
            self._note_listener(frame)
        if self._busy:
            return frame
        due = NEVER
        for req in self.player.queue:
            if None in self.player.streams.get(req.channel, (None,)):
                return frame  # the player's frame starts it
            due = min(due, frame + req.timeout - req.age)
        self._kept.clear()
        if not self.decisions_only:
            lines = list(self.player.lines())
            return self._schedule(lines, frame, min(due, frame + WINDOW)) if lines else max(due, frame)
        for line in self.player.lines():
            voice = self.voices.get(line.slot)
            if voice is not None and voice.done:
                return frame  # the next clip, or Finished
            side = self._level_side(line, frame) if voice is not None else (None, NEVER)
            if side is None:
                return frame
            below, last = side
            self._kept[line.slot] = (line, below)
            due = min(due, last + 1)
            if below:
                due = min(due, frame + self.player.cut_frames - line.low_frames)
        return max(due, frame)

    def _schedule(self, lines: list[Line], frame: int, end: int) -> int:
        """Full render: compute the playing lines' writes for the frames from ``frame`` to at most
        ``end - 1`` as ticking them would (voice parameters through the
        :class:`~audio.core.voices.ParamWriter`'s rules, the echo submix's when changed), hand
        them to the engine (:meth:`Engine.schedule <audio.core.engine.Engine.schedule>`) and
        return the first frame to tick: ``end``, or a frame where a line's level would cut it,
        or ``frame`` when a line has no voice yet, its voice has ended or its ped is gone.

        The frames ahead read the ped's path and the listener's path as they are now; an event
        (a move, a new listener, a speech value) or a voice's end makes the engine ask again,
        which drops the writes not run yet. Nothing here changes the system's state: the
        lines' low-level counts and the echo parameters posted are set from the frames the
        engine ran when it asks again (:meth:`_catch_up`)."""
        if end <= frame:
            return frame
        w = self._window
        if w is not None and self._window_stands(w, lines, frame):
            ahead = w.rows[frame - w.first : end - w.first]
            self._engine.schedule(self, frame, ahead)
            self._run_from = frame
            return frame + len(ahead)
        writer, engine, world = self._writer, self._engine, self._world
        assert writer is not None
        sample_rate = engine.sample_rate
        # a voice that ends is seen at the first frame starting at or after its end: tick there
        end = min(end, -(-engine.next_voice_end() * FRAME_RATE // sample_rate))
        if end <= frame:
            return frame
        tracks = []
        for line in lines:
            voice = self.voices.get(line.slot)
            req = line.request
            ped = self.peds.get(req.ped)
            src = self.sources.get(req.channel)
            cd = self.mixer.countdowns.get(req.ped)
            if voice is None or voice.done or ped is None or src is None or cd is None or cd.start > frame:
                return frame
            m = ped.model
            shape = (self.mixer.shape(m.kind, req.event, src.clip_name(line.clip[0])), m.voice_float, m.pitch)
            tracks.append([line, voice, ped, shape, replace(cd), dict(voice.written), line.low_frames])
        cut_level, cut_frames = self.player.cut_level, self.player.cut_frames
        voices_set, set_submix = writer.voices.set_params, writer.voices.mixer.set_submix
        posted = {tr[0].slot: self.submix_posted.get(tr[0].slot) for tr in tracks}
        blocks: dict[int, tuple[tuple[Any, ...], VoiceBlock, dict[str, float], dict[str, float]]] = {}
        rows: list[list[Any]] = []
        states: list[list[tuple[int, dict[str, float] | None]]] = []
        for g in range(frame, end):
            t = g / FRAME_RATE
            heard = -(-g * sample_rate // FRAME_RATE) / sample_rate  # the frame's first sample (s)
            row: list[Any] = []
            state = []
            for tr in tracks:
                line, voice, ped, shape, cd, written, low = tr
                distance, azimuth = world.polar_at(_position_at(ped, t), heard)
                raw = azimuth_to_raw(azimuth)
                delay = cd.at(g, lambda r: distance if r == g else self._distance_on(ped, r))  # noqa: B023
                inputs = (distance, raw, delay)
                last = blocks.get(line.slot)
                if last is not None and last[0] == inputs:
                    _, block, params, sub = last
                else:
                    block, params, sub = self._new_block(shape, distance, raw, delay)
                    blocks[line.slot] = (inputs, block, params, sub)
                changed = writer.changes(VOICE_GRAPH, written, params)
                if changed:  # what the ParamWriter would set
                    written.update(changed)
                    row.append((voices_set, (voice, changed), {}))
                old = posted[line.slot]
                if old is not sub:
                    subs = _changed(old, sub)
                    if subs:
                        row.append((set_submix, (ECHO_GRAPH, line.slot), subs))
                        posted[line.slot] = sub
                low = tr[6] = low + 1 if block.level <= cut_level else 0
                if low > cut_frames:  # the tick on this frame cuts the line
                    break
                state.append((low, posted[line.slot]))
            else:
                rows.append(row)
                states.append(state)
                continue
            break
        self._window = _Window(self._epoch, frame, [(tr[0], tr[1]) for tr in tracks], rows, states)
        if rows:
            engine.schedule(self, frame, rows)
            self._run_from = frame
        return frame + len(rows)

    def _window_stands(self, w: _Window, lines: list[Line], frame: int) -> bool:
        """Whether the rest of window ``w`` from ``frame`` on is still what ticking would write:
        computed in this epoch, for these lines and voices, none of which has ended."""
        if (
            w.epoch != self._epoch
            or not w.first <= frame < w.first + len(w.rows)
            or len(w.lines) != len(lines)
        ):
            return False
        for (line, voice), now in zip(w.lines, lines):
            current = self.voices.get(now.slot)
            if line is not now or current is None or current is not voice or current.done:
                return False
        return True

    def _catch_up(self, frame: int) -> None:
        """Run the frames from :attr:`_next_frame` to ``frame - 1`` that were skipped
        (:meth:`next_tick`): each queued request ages by one a frame, and each
        playing line's count of frames at a low level runs on (or is 0) by the side of the cut
        level its level kept."""
        w, run_from, self._run_from = self._window, self._run_from, None
        if w is not None and run_from is not None:  # the engine ran the writes of frames before this
            k = min(frame, w.first + len(w.states)) - 1
            if k >= run_from:
                for (line, _), (low, posted) in zip(w.lines, w.states[k - w.first]):
                    line.low_frames = low
                    if posted is not None:
                        self.submix_posted[line.slot] = posted
        n = frame - self._next_frame
        if n <= 0:
            return
        self._next_frame = frame
        for req in self.player.queue:
            req.age += n
        for line in self.player.lines():
            kept = self._kept.get(line.slot)
            if kept is not None and kept[0] is line and kept[1] is not None:
                line.low_frames = line.low_frames + n if kept[1] else 0

    def _level_side(self, line: Line, frame: int) -> tuple[bool | None, int] | None:
        """``(below, last)``: whether ``line``'s level (:meth:`_level`) is <= the cut level on
        every frame from ``frame`` to ``last``: its ped's distance cannot reach the nearest
        distance where the level crosses the cut level sooner, moving at most as fast as the
        ped and the listener together (with a 1 mm and one-frame margin); ``(None, NEVER)``
        when no level is read; None when the level may cross at once."""
        req = line.request
        ped = self.peds.get(req.ped)
        src = self.sources.get(req.channel)
        if ped is None or src is None:
            return None, NEVER
        main = self._main(ped.model.kind, req.event, line.clip[0], src)
        edges = self._edges.get(main)
        if edges is None:
            edges = self._edges[main] = self.mixer.curves.outputs[main].crossings(self.player.cut_level)
        t = frame / FRAME_RATE
        listener = self._world.listener
        distance = math.dist(_position_at(ped, t), listener.at(t))
        room = min((abs(distance - e) for e in edges), default=math.inf) - 1e-3
        speed = _top_speed(ped.speeds, t) + _top_speed(self._listener_top_speeds(listener), t)
        if room <= 0 or (speed and room * FRAME_RATE / speed < 2):
            return None
        last = NEVER if not speed or math.isinf(room) else frame + int(room * FRAME_RATE / speed) - 1
        return self.mixer.level(main, distance) <= self.player.cut_level, last

    def _listener_top_speeds(self, listener: Path3) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The listener path's :func:`_top_speeds`, kept while the path is the same."""
        got = self._listener_speeds
        if got is None or got[0] is not listener or got[1] != len(listener.keys):
            got = self._listener_speeds = (listener, len(listener.keys), _top_speeds(listener.keys))
        return got[2]

    def tick(self, frame: int, engine: Any) -> None:
        """One console frame (see the module docstring for the order)."""
        self._catch_up(frame)
        self._next_frame = frame + 1
        self.now = frame / FRAME_RATE
        self._frame = frame
        dt = 1.0 / FRAME_RATE
        if not self.decisions_only:
            self._note_listener(frame)
        for line in list(self.player.lines()):
            v = self.voices.get(line.slot)
            if v is not None and v.done:
                self._player_event(self.player.clip_done(line), engine)
        if self.player.queue:  # an empty queue's frame ages and starts nothing
            for pe in self.player.frame():
                self._player_event(pe, engine)
        if self._busy:
            photo = self.photo_flag
            for pid in sorted(self._busy):
                busy = self.peds.get(pid)
                if busy is None or busy.speech.idle(busy.value, photo):
                    self._busy.discard(pid)
                    continue
                self._ped_frame(busy, dt, engine)
                if busy.speech.idle(busy.value, photo):
                    self._busy.discard(pid)
        for line in list(self.player.lines()):
            self._update_line(line, engine)

    def _place(self, ped: _Ped) -> None:
        """Place a ped on this frame (once, on the first read): its position along its path and
        its distance; in full mode its azimuth and distance delay too."""
        if ped.placed == self._frame:
            return
        if ped.path:
            ped.position = _path_position(ped.path, self.now)
        ped.placed = self._frame
        if self.decisions_only:
            ped.distance = float(self._world.distance_to(ped.position))
            return
        distance, azimuth = self._world.polar_to(ped.position)
        ped.distance = float(distance)
        ped.azimuth = azimuth_to_raw(azimuth)
        cd = self.mixer.countdown(ped.id, self._frame)
        ped.delay = cd.at(self._frame, lambda r: self._distance_on(ped, r))

    def _distance_on(self, ped: _Ped, frame: int) -> float:
        """The ped's distance (m) on console frame ``frame``, ticked or not, from its position
        then and the listener's (:meth:`_listener_on`)."""
        if frame == ped.placed:
            return ped.distance
        return math.dist(_position_at(ped, frame / FRAME_RATE), self._listener_on(frame))

    def _note_listener(self, frame: int) -> None:
        """Keep the world's listener when it is new: it holds from console frame ``frame`` on
        (called at every tick and :meth:`next_tick`, which the engine calls after every event,
        so a ``world.listener`` event is seen by the first frame it holds on). Listeners older
        than any delay refresh still to read are dropped."""
        listener = self._world.listener
        kept = self._listeners
        if kept[-1][1] is not listener:
            self._epoch += 1
            kept.append((frame, listener))
            period = max(self.mixer.delay_frames, 1)
            while len(kept) > 1 and kept[1][0] <= frame - 2 * period:
                del kept[0]

    def _listener_on(self, frame: int) -> tuple[float, float, float]:
        """The listener's position (m) on console frame ``frame``: its path at the frame's first
        sample (what the world reads there)."""
        kept = self._listeners
        k = len(kept) - 1
        while k > 0 and kept[k][0] > frame:
            k -= 1
        sample_rate = self._engine.sample_rate
        return kept[k][1].at(-(-frame * sample_rate // FRAME_RATE) / sample_rate)

    def _settle_delay(self, ped: _Ped) -> None:
        """Compute the delay refresh due by the last frame ticking every frame would have
        reached (:meth:`Engine.frame_of <audio.core.engine.Engine.frame_of>`) with the ped's
        position before it changes (a move or a respawn): the game computed it then (full
        mode)."""
        cd = self.mixer.countdowns.get(ped.id)
        if cd is None:
            return
        frame = self._engine.frame_of(self)
        if frame >= cd.start:
            cd.at(frame, lambda r: self._distance_on(ped, r))

    def _distance(self, ped: _Ped) -> float:
        """The ped's distance this frame (m)."""
        self._place(ped)
        return ped.distance

    # -- per ped -----------------------------------------------------------------------
    def _ped_frame(self, ped: _Ped, dt: float, engine: Any) -> None:
        pf = ped.speech.frame(ped.value, dt, self.photo_flag)
        if pf.stop_line:
            for pe in self.player.stop_ped(ped.id):
                self._player_event(pe, engine)
        if pf.ring_started:
            self._decide("PhoneRing", ped=ped.id, reason=f"ring for {self.phone_ring_seconds} s")
        m = ped.model
        for value in pf.values:
            block = ped.speech.block(self._distance(ped), self.manager.zombie)
            if m.maincast:
                stop, results = self.manager.request_maincast_value(
                    m.voice_id, value, block, self.console_now
                )
                if stop:
                    for pe in self.player.stop_ped(ped.id, "main-cast impact"):
                        self._player_event(pe, engine)
            else:
                results = self.manager.request_value(m.voice_id, value, block, m.type_bit, self.console_now)
            if not results:
                self._decide("NoEvent", ped=ped.id, speaker=m.voice_id, value=value)
            for r in results:
                self._request(ped, value, r, engine)

    def _request(self, ped: _Ped, value: int, r: ManagerResult, engine: Any) -> None:
        self._decide(
            r.outcome,
            ped=ped.id,
            speaker=r.speaker,
            event=r.event,
            value=value,
            reason=r.reason,
            record=r.choice.record if r.choice else None,
            words=list(r.words),
        )
        if not r.accepted or r.choice is None or r.tuning is None:
            return
        req = LineRequest(
            ped=ped.id,
            speaker=r.speaker,
            event=r.event,
            channel=r.channel,
            priority=r.tuning.priority,
            picks=r.choice.picks,
            timeout=r.timeout,
            interrupt=r.tuning.interrupt,
            interrupt_when_full=r.tuning.interrupt_when_full,
        )
        for pe in self.player.request(req):
            self._player_event(pe, engine)

    # -- lines -------------------------------------------------------------------------
    def _block(self, line: Line) -> tuple[VoiceBlock, dict[str, float], dict[str, float]] | None:
        """The line's voice block this frame and its voice and echo submix parameters (the last
        frame's, the same objects, when nothing they depend on changed)."""
        req = line.request
        ped = self.peds.get(req.ped)
        src = self.sources.get(req.channel)
        if ped is None or src is None:
            return None
        self._place(ped)
        inputs = (req.event, line.clip[0], ped.distance, ped.azimuth, ped.delay)
        last = self._blocks.get(line.slot)
        if last is not None and last[0] is ped and last[1] == inputs:
            return last[2], last[3], last[4]
        m = ped.model
        shape = (self.mixer.shape(m.kind, req.event, src.clip_name(line.clip[0])), m.voice_float, m.pitch)
        block, params, sub = self._new_block(shape, ped.distance, ped.azimuth, ped.delay)
        self._blocks[line.slot] = (ped, inputs, block, params, sub)
        return block, params, sub

    def _new_block(
        self, shape: tuple[Any, ...], distance: float, azimuth: int, delay: float
    ) -> tuple[VoiceBlock, dict[str, float], dict[str, float]]:
        """A line's voice block and its voice and echo submix parameters, from its
        ``(VoiceMixer.shape, voice float, pitch)`` and its ped's place (metres, raw azimuth,
        delay seconds)."""
        block_shape, voice_float, pitch = shape
        block = self.mixer.block_of(block_shape, distance, azimuth, delay, voice_float, pitch)
        return block, block.voice_params(), block.submix_params()

    def _post_submix(self, slot: int, params: dict[str, float], engine: Any) -> None:
        """Post the echo submix parameters of ``slot`` that changed since the last post."""
        old = self.submix_posted.get(slot)
        if old is params:  # the same block as last frame's
            return
        changed = _changed(old, params)
        if changed:
            engine.mixer.set_submix(ECHO_GRAPH, slot, **changed)
            self.submix_posted[slot] = params

    def _update_line(self, line: Line, engine: Any) -> None:
        if self.decisions_only:
            level = self._level(line)
            if level is not None and line.slot in self.voices:
                self._cut_check(line, level, engine)
            return
        got = self._block(line)
        voice = self.voices.get(line.slot)
        if got is None or voice is None:
            return
        block, params, sub = got
        assert self._writer is not None
        self._writer.write(voice, params)
        self._post_submix(line.slot, sub, engine)
        self._cut_check(line, block.level, engine)

    def _level(self, line: Line) -> float | None:
        """The line's main level this frame (decisions-only: the only part of the voice block a
        decision reads, computed as :meth:`VoiceMixer.block` does)."""
        req = line.request
        ped = self.peds.get(req.ped)
        src = self.sources.get(req.channel)
        if ped is None or src is None:
            return None
        main = self._main(ped.model.kind, req.event, line.clip[0], src)
        return self.mixer.level(main, self._distance(ped))

    def _main(self, kind: str, event: int, clip: int, src: TakeSource) -> int:
        """The main level output of speaker ``kind`` playing ``clip`` of ``event`` (kept)."""
        key = (kind, event, clip)
        main = self._mains.get(key)
        if main is None:
            main = self._mains[key] = self.mixer.main_output(kind, event, src.clip_name(clip))
        return main

    def _cut_check(self, line: Line, level: float, engine: Any) -> None:
        cut = self.player.level(line, level)
        if cut is not None:
            self._player_event(cut, engine)

    def _take_fault(self, line: Line, clip: str, take: int, exc: Exception, detail: dict[str, Any]) -> None:
        """The line ends here: its stream is freed and one Fault decision says why."""
        self.player.release(line)
        self.voices.pop(line.slot, None)
        kind, file, offset, reason = describe(exc)
        if self.bus is not None:
            report_fault(
                self.bus,
                SYSTEM,
                kind,
                reason,
                file=file,
                offset=offset,
                clip=clip,
                take=take,
                clip_index=line.clip_index,
                **{k: v for k, v in detail.items() if v is not None},
            )

    def _player_event(self, pe: PlayerEvent, engine: Any) -> None:
        if pe.outcome not in _QUEUE_ONLY:
            self._epoch += 1
        req = pe.request
        src = self.sources.get(req.channel)
        detail: dict[str, Any] = dict(
            ped=req.ped, speaker=req.speaker, event=req.event, stream=pe.slot, reason=pe.reason or None
        )
        if pe.outcome == "Started":
            clip_id, take = req.picks[pe.clip_index or 0]
            line = next(ln for ln in self.player.lines() if ln.slot == pe.slot)
            if src is None:
                return
            name = src.clip_name(clip_id)
            try:
                if self.decisions_only:  # the voice lasts the take's length; no sample is read
                    n, sample_rate = src.length(clip_id, take)
                    pcm = np.broadcast_to(np.float32(0.0), (n,))
                else:
                    pcm, sample_rate = src.pcm(clip_id, take)
            except (BarkbusError, OSError) as exc:  # a take that does not decode costs this line only
                self._take_fault(line, name, take, exc, detail)
                return
            if self.decisions_only:
                ped = self.peds.get(req.ped)
                params = {"Rsp0.pitch": float(ped.model.pitch)} if ped is not None else {}
            else:
                got = self._block(line)
                params = dict(got[1]) if got is not None else {}
                if got is not None:
                    self._post_submix(pe.slot or 0, got[2], engine)
            self.voices[line.slot] = engine.voices.start(
                VOICE_GRAPH,
                np.asarray(pcm, np.float32),
                int(sample_rate),
                params=params,
                slot=line.slot,
                tag=f"skate:{req.ped}:{name}#{take}",
                meta={"ped": req.ped, "clip": name, "take": take, "event": req.event, "stream": line.slot},
            )
            if pe.clip_index == 0:
                self.manager.line_started(req.speaker, req.event, self.console_now)
                lib = self.libraries.get(req.channel)
                if lib is not None:
                    lib.commit(req.picks)
            self._decide("Started", clip=name, take=take, clip_index=pe.clip_index, **detail)
            return
        if pe.outcome in ("Interrupted", "Cut", "Stopped") and pe.slot is not None:
            v = self.voices.pop(pe.slot, None)
            if v is not None:
                engine.voices.stop(v, fade=True)
        elif pe.outcome == "Finished" and pe.slot is not None:
            self.voices.pop(pe.slot, None)
        self._decide(pe.outcome, **detail)


# -- reports ---------------------------------------------------------------------------
def summarize(decisions: Iterable[Decision]) -> dict[int, Counter[str]]:
    """Per event id: how many decisions of each outcome (skate.speech decisions only)."""
    out: dict[int, Counter[str]] = {}
    for d in decisions:
        if d.system == SYSTEM and "event" in d.detail:
            out.setdefault(int(d.detail["event"]), Counter())[d.outcome] += 1
    return out


def format_summary(decisions: Iterable[Decision], names: Mapping[int, str] | None = None) -> str:
    """A text table of :func:`summarize`: one line per event (id and ``names`` when given),
    outcomes by count."""
    lines = []
    for ev, counts in sorted(summarize(decisions).items()):
        label = f"{ev:6d} {(names or {}).get(ev, ''):<20s}"
        lines.append(
            f"{label} " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        )
    return "\n".join(lines)
