"""The engine: sample clock, event bus, game systems, voices and the mixer, in lock-step.

:meth:`Engine.render` advances the sample clock. It splits the requested block at every
control point (an event's sample, a game system's frame start), delivers the events due
there in (sample, post order), ticks the systems whose frame starts there, and only then
renders audio up to the next control point. Parameters set at a control point therefore
apply atomically from that sample on, and the output is identical whatever block size the
caller uses (64, 256, 1000 samples...).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from audio.core.bus import Consumer, Event, EventBus
from audio.core.clock import BLOCK, SAMPLE_RATE, FrameClock, RngStreams
from audio.core.faults import FaultLog, SystemFault, report_fault
from audio.core.loader import LOAD_TIMEOUT, AssetLoader, Load, shared_loader
from audio.core.plugin import GameSystem
from audio.core.voices import VoiceManager
from audio.core.world import World
from audio.dsp.mixer import Mixer
from audio.dsp.skip import advance_sources, voice_end_seen

__all__ = ["Engine", "EngineConfig", "IDLE_GRID"]
log = logging.getLogger("barkbus.engine")


@dataclass(frozen=True)
class EngineConfig:
    """Engine settings. ``block`` only changes how audio is chunked, never the output."""

    sample_rate: int = SAMPLE_RATE
    block: int = BLOCK
    seed: int = 0
    layout: str = "stereo"
    voice_budget: int = 128
    voice_headroom: int = 16
    submix_slots: int = 32
    release_samples: int = 16
    start_silence: int = 256
    pool_samples: int = 1 << 22
    """Initial sample-pool size (samples; 16 MB of float32, committed only as it is used); 0
    sizes it by what plays (it doubles as needed, copying: a batch run, never a live one)."""
    max_block: int | None = None
    """Largest sub-block the mixer processes (samples); defaults to ``block``. Only memory
    and speed depend on it, never the output."""
    dsp: bool = True
    """False: decisions only. Bus, clocks and systems run as usual, a voice lasts its take's
    resampled length (:mod:`audio.dsp.skip`), no audio is computed and the output is silence."""
    meters: bool = False
    """Keep each voice's and submix slot's output for meters (``Voice.peak_dbfs``, the live
    profiler's peaks; :attr:`audio.dsp.mixer.Mixer.meters`, which the TUI and the profiler
    turn on). Off, many-voice blocks skip storing them; the output is the same either way."""
    isolate_systems: bool = False
    """True (live, ports): a game system whose tick raises is disabled and reported once as a
    fault, and an event a system cannot apply is a fault, while audio and the other systems go
    on. False (offline): the render fails with :class:`~audio.core.faults.SystemFault`."""
    load_wait: bool = True
    """True (offline, pulled ports): a system waits for a file it asked the loader for at the
    event's sample, so the output does not depend on the disk. False (live, set by the player):
    the voice starts when the data is ready, a late start logged with its delay."""
    load_timeout: float = LOAD_TIMEOUT
    """Seconds a file load may take before the request fails as a fault."""
    skip_idle: bool = field(default_factory=lambda: os.environ.get("BARKBUS_SKIP_IDLE", "1") != "0")
    """Every :data:`IDLE_GRID` samples, free the ended voices whose filters have rung out and
    put to sleep the submix slots and buses that get no input and are idle (their skipped
    output is below :data:`audio.dsp.bank.QUIET_FLOOR`, about -180 dBFS); a grid sample where
    no voice has ended and everything awake has a sender is passed by (the check could change
    nothing there); while nothing is awake and every ducker is at rest, the silence up to the
    next control point is written at once instead of a sub-block at a time. False: the
    reference path (ended voices are freed only when a voice of their graph starts; idle
    submixes and buses run on silence; also ``$BARKBUS_SKIP_IDLE=0``)."""
    skip_ticks: bool = field(default_factory=lambda: os.environ.get("BARKBUS_SKIP_TICKS", "1") != "0")
    """Tick a game system only at the frames its :meth:`~audio.core.plugin.GameSystem.next_tick`
    names, and split the audio (a control point) only where a system ticks, an event arrives or
    a voice's end becomes visible (:func:`audio.dsp.skip.voice_end_seen`); the systems are asked
    again after each of those. Decisions and audio are the same as ticking every frame. False:
    the reference path (every system ticks at every frame start; also ``$BARKBUS_SKIP_TICKS=0``)."""


_NO_END = 1 << 62
"""The voice-end sample when no active voice can end (pitch 0, or none plays)."""
IDLE_GRID = 8192
"""Samples between the engine's idle checks (:attr:`EngineConfig.skip_idle`). The checks sit
on multiples of it, which split the audio like control points, so what they find is the same
whatever the block size."""


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _interleave(rows: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i, c] = rows[c, i]``: the mixer's ``(channels, n)`` rows into the caller's
    ``(n, channels)`` block (numpy's transposed copy costs several times more per sample)."""
    n = out.shape[0]
    if out.shape[1] == 2:  # stereo: both rows in one pass (vectorises)
        left, right = rows[0], rows[1]
        for i in range(n):
            out[i, 0] = left[i]
            out[i, 1] = right[i]
        return
    for c in range(out.shape[1]):
        row = rows[c]
        for i in range(n):
            out[i, c] = row[i]


Write = tuple[Callable[..., object], tuple[object, ...], dict[str, float]]
"""A parameter write a system schedules (:meth:`Engine.schedule`): ``function(*args, **params)``,
e.g. ``(engine.voices.set, (voice,), {"Gai0.gain": 0.5})``."""


class _Clocked:
    __slots__ = ("system", "clock", "frame", "next_at", "first", "skips", "rows", "row_frame", "row_at")

    def __init__(self, system: GameSystem, clock: FrameClock, now: int) -> None:
        self.system = system
        self.clock = clock
        self.frame = clock.frame_at(now) + (0 if clock.start(clock.frame_at(now)) == now else 1)
        """The next frame to tick."""
        self.next_at = clock.start(self.frame)
        """Its first sample."""
        self.first = self.frame
        """The first frame the system can tick (it joined the engine before its start)."""
        self.skips = type(system).next_tick is not GameSystem.next_tick
        """The system names the frames it needs (else it ticks every frame)."""
        self.rows: list[list[Write]] | None = None
        """The writes :meth:`Engine.schedule` holds for the frames before :attr:`frame`, from
        console frame :attr:`row_frame` on (None: none)."""
        self.row_frame = 0
        self.row_at = 1 << 62
        """The first sample of the frame of the next row (``2**62``: none)."""

    def drop_rows(self) -> None:
        """Forget the scheduled writes (the system is asked again, or ticks)."""
        self.rows, self.row_at = None, 1 << 62


class Engine:
    """One barkbus engine (offline or live).

    Parameters
    ----------
    config:
        An :class:`EngineConfig` (sample rate in Hz, block in samples, seed, layout...).
    **overrides:
        Fields of :class:`EngineConfig` to override (``Engine(seed=3, block=64)``).
    """

    def __init__(self, config: EngineConfig | None = None, **overrides: object) -> None:
        cfg = config or EngineConfig()
        if overrides:
            cfg = EngineConfig(**{**cfg.__dict__, **overrides})  # type: ignore[arg-type]
        max_block = cfg.max_block or cfg.block
        if cfg.block < 1 or cfg.block > max_block:
            raise ValueError(f"block must be 1..{max_block} samples, got {cfg.block}")
        self.config = cfg
        self.sample_rate = cfg.sample_rate
        self.block = cfg.block
        self.now = 0
        self.bus = EventBus(cfg.sample_rate)
        self.rng = RngStreams(cfg.seed)
        self.max_block = max_block
        self.mixer = Mixer(
            cfg.sample_rate,
            cfg.layout,
            max_block,
            voice_capacity=cfg.voice_budget + cfg.voice_headroom,
            submix_slots=cfg.submix_slots,
            pool_samples=cfg.pool_samples,
            dsp=cfg.dsp,
            meters=cfg.meters,
        )
        self.voices = VoiceManager(self.mixer, cfg.voice_budget, cfg.release_samples, cfg.start_silence)
        self.world = World(self)
        self.systems: list[GameSystem] = []
        self._clocked: list[_Clocked] = []
        self._taps: dict[str, list[np.ndarray]] | None = None
        self.faults = FaultLog(self.bus)
        self.isolate_systems = cfg.isolate_systems
        self.disabled: dict[str, str] = {}
        """Systems disabled after an exception (name -> reason)."""
        self.bus.on_consumer_error = self._consumer_error
        self.loader: AssetLoader = shared_loader()
        """Opens and decodes files off the render thread (:mod:`audio.core.loader`)."""
        self.load_wait = cfg.load_wait
        self._skip_idle = cfg.skip_idle and cfg.dsp
        self._skip_ticks = cfg.skip_ticks
        self._ticked = False
        self._watch_ends = False
        self._end_at = -1
        """The first sample a voice's end shows (-1: to compute; ``_NO_END``: none ends)."""
        self._end_version = -1
        """:attr:`VoiceManager.version <audio.core.voices.VoiceManager.version>` when
        :attr:`_end_at` was computed: it stands while no voice changed and it is not reached."""
        self._fed_for: tuple[tuple[np.ndarray, ...], bool] | None = None
        """The banks' active sets :meth:`_idle_work` last asked the mixer about, and its answer."""
        self.control_points = 0
        """Control points run so far (where the audio was split to deliver events and ticks)."""
        self.ticks = 0
        """System ticks run so far (all systems)."""
        self.rows_applied = 0
        """Frames whose scheduled writes (:meth:`schedule`) ran in place of a tick."""
        self.prefetchers: dict[type[Event], Callable[[Event], Load[object] | None]] = {}
        """Per event class, what starts loading the files an event names (a system registers
        it); a live inbox holds such an event until its files are loaded (:meth:`prefetch`)."""

    @property
    def channels(self) -> int:
        return self.mixer.channels

    @property
    def time(self) -> float:
        """Seconds on the engine clock."""
        return self.now / self.sample_rate

    def add_system(self, system: GameSystem) -> None:
        """Attach a game system; it ticks from its next frame start on.

        Parameters
        ----------
        system:
            A :class:`~audio.core.plugin.GameSystem` (its ``frame_rate`` in console frames per
            second sets its tick clock).
        """
        self.systems.append(system)
        system.attach(self)
        c = _Clocked(system, FrameClock(system.frame_rate, self.sample_rate), self.now)
        self._clocked.append(c)
        self._watch_ends = self._watch_ends or (self._skip_ticks and c.skips)

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """The first system's ``(field, problem)`` for a name in ``event`` no install has.

        Parameters
        ----------
        event:
            An event about to be posted (scenario, port, OSC).
        """
        for s in self.systems:
            problem = s.check_event(event)
            if problem is not None:
                return problem
        return None

    def prepare(self) -> None:
        """Load the voice graphs the systems declare (:attr:`GameSystem.graphs`) with their
        submixes, buses and compiled kernels now (decisions-only, ``dsp=False``: the graphs
        only, no kernel); see :meth:`audio.dsp.mixer.Mixer.prepare`. Output does not depend on it."""
        self.mixer.prepare(tuple(g for s in self.systems for g in s.graphs))
        if self.config.dsp:
            _interleave(np.zeros((self.channels, 0), np.float32), np.zeros((0, self.channels), np.float32))

    def reserve(self, samples: int) -> None:
        """Pre-size the sample pool so ``samples`` of source audio fit without growing it while
        playing live (growing copies the pool on the render thread).

        Parameters
        ----------
        samples:
            Source samples (float32) the pool must hold.
        """
        self.mixer.pool.reserve(int(samples))

    def system(self, name: str) -> GameSystem:
        """The attached system called ``name`` (``KeyError`` naming the attached ones otherwise).

        Parameters
        ----------
        name:
            A system's decision-log name (``"skate.speech"``).
        """
        for s in self.systems:
            if s.name == name:
                return s
        raise KeyError(f"no system {name!r} (have: {', '.join(s.name for s in self.systems) or 'none'})")

    def tap_buses(self, names: list[str]) -> None:
        """Record the output of these buses (for stems); read them with :meth:`taps`.

        Parameters
        ----------
        names:
            Bus names (``"master"``, a submix's).
        """
        for n in names:
            self.mixer.bus(n)
        self._taps = {n: [] for n in names}

    def taps(self) -> dict[str, np.ndarray]:
        """Recorded bus outputs as (samples, channels) float32 arrays."""
        if self._taps is None:
            return {}
        return {
            n: (np.concatenate(v, axis=0) if v else np.zeros((0, self.channels), np.float32))
            for n, v in self._taps.items()
        }

    def drain_taps(self) -> dict[str, np.ndarray]:
        """The tapped buses' output since the last call, ``(samples, channels)`` float32, and
        forget it (a streaming render writes stems block by block)."""
        if self._taps is None:
            return {}
        out = {
            n: (np.concatenate(v, axis=0) if v else np.zeros((0, self.channels), np.float32))
            for n, v in self._taps.items()
        }
        for v in self._taps.values():
            v.clear()
        return out

    def prefetch(self, event: Event) -> Load[object] | None:
        """Start loading the files ``event`` names; the load, or None when nothing is to load.

        Parameters
        ----------
        event:
            An event that may name files (a play event's audio file).
        """
        fn = self.prefetchers.get(type(event))
        return None if fn is None else fn(event)

    def frame_of(self, system: GameSystem) -> int:
        """The last console frame of ``system`` that ticking every frame would have ticked by
        now: the frame running at this sample, or the one before while the events due at that
        frame's first sample are handled (they come before its tick). A system that skips
        ticks (:meth:`~audio.core.plugin.GameSystem.next_tick`) reads it in its event handlers.

        Parameters
        ----------
        system:
            An attached system.
        """
        for c in self._clocked:
            if c.system is system:
                f = c.clock.frame_at(self.now)
                if c.clock.start(f) == self.now and not self._ticked:
                    f -= 1
                return max(f, c.first - 1)
        return FrameClock(system.frame_rate, self.sample_rate).frame_at(self.now)  # a disabled system

    def schedule(self, system: GameSystem, frame: int, rows: list[list[Write]]) -> None:
        """Run ``rows[k]``, in order, at the first sample of console frame ``frame + k`` of
        ``system``, where its tick would have run, instead of ticking it: the parameter writes
        that ticking those frames would make (a playing voice's gain, sends, filters...),
        computed ahead by the system. Only from
        :meth:`~audio.core.plugin.GameSystem.next_tick`, for frames before the one it returns;
        the engine forgets the rows left whenever it asks ``next_tick`` again (after an event,
        a tick, or where a voice's end shows), so the rows of a frame run only if nothing
        happened since they were computed, and asks it again once its last row has run (the
        frame after may need no tick either). A frame's writes so cost one call each, not a tick.

        Parameters
        ----------
        system:
            The attached system asking (from its ``next_tick``).
        frame:
            The console frame of ``rows[0]`` (the frame ``next_tick`` was asked about).
        rows:
            Per console frame, the writes ``(function, args, params)`` to run:
            ``function(*args, **params)``.
        """
        for c in self._clocked:
            if c.system is system:
                c.rows, c.row_frame = rows, frame
                c.row_at = c.clock.start(frame) if rows else 1 << 62
                return

    def next_voice_end(self) -> int:
        """The first engine sample at which a playing voice shows ended
        (:func:`audio.dsp.skip.voice_end_seen`) if nothing changes the voices first; ``2**62``
        when none can end. A system computing frames ahead stops there: the engine asks its
        :meth:`~audio.core.plugin.GameSystem.next_tick` again at that sample."""
        if self._end_at < 0 or self._end_version != self.voices.version:  # none yet, or voices changed
            self._end_version = self.voices.version
            self._end_at = min(
                (voice_end_seen(b, self.now) for b in self.mixer.voice_banks.values() if b.act.shape[0]),
                default=_NO_END,
            )
        return self._end_at

    def _run_row(self, c: _Clocked) -> bool:
        """Run the scheduled writes due now of ``c`` (:meth:`schedule`); whether they were its
        last (the system is then asked again: its next frame may need no tick)."""
        rows = c.rows
        assert rows is not None
        k = c.clock.frame_at(self.now) - c.row_frame
        try:
            for fn, args, params in rows[k]:
                fn(*args, **params)
        except Exception as exc:
            self._system_failed(c.system, f"scheduled writes of frame {c.row_frame + k}", exc)
        self.rows_applied += 1
        if self._end_version != self.voices.version:  # a write moved a voice's end (its pitch)
            self._end_at = -1
        if k + 1 < len(rows):
            c.row_at = c.clock.start(c.row_frame + k + 1)
            return False
        c.drop_rows()
        return True

    def _control(self) -> None:
        now = self.now
        self.voices.now = now
        if self.faults.pending:
            self.bus.now = now
            self.faults.publish_pending()
        self._ticked = False
        # something a system's next_tick reads may have changed: an event, a voice's end
        news = self.bus.dispatch(now) > 0 or now == self._end_at
        skip = self._skip_ticks
        for c in self._clocked:
            if news and skip and c.skips and c.next_at != now:
                # a frame starts now that was not asked for: ask again
                f = c.clock.frame_at(now)
                if f >= c.first and c.clock.start(f) == now:
                    c.drop_rows()
                    if c.system.next_tick(f) <= f:
                        c.frame, c.next_at = f, now
            if c.next_at == now:
                c.drop_rows()
                try:
                    c.system.tick(c.frame, self)
                except Exception as exc:
                    self._system_failed(c.system, f"tick of frame {c.frame}", exc)
                c.frame += 1
                c.next_at = c.clock.start(c.frame)
                self.ticks += 1
                news = True
            elif c.row_at == now and self._run_row(c):
                news = True  # its last row: ask it again rather than tick the frame after
        self._ticked = True
        if len(self._clocked) != len(self.systems) - len(self.disabled):
            self._clocked = [c for c in self._clocked if c.system.name not in self.disabled]
        news = self.bus.dispatch(now) > 0 or news
        if skip and news:  # else every answer stands (a tick, an event or a voice's end changes one)
            if now >= self._end_at or self._end_version != self.voices.version:
                self._end_at = -1
            for c in self._clocked:
                if c.skips:
                    base = max(c.clock.frame_at(now) + 1, c.first)
                    c.drop_rows()
                    f = max(int(c.system.next_tick(base)), base)
                    c.frame, c.next_at = f, c.clock.start(f)
                    if c.rows is not None and c.row_frame + len(c.rows) > f:  # rows: frames before the tick
                        if f > c.row_frame:
                            c.rows = c.rows[: f - c.row_frame]
                        else:
                            c.drop_rows()
        self.control_points += 1

    # -- faults ------------------------------------------------------------------------
    def _system_failed(self, system: GameSystem, where: str, exc: Exception) -> None:
        """Disable ``system`` (isolating) or fail with a :class:`SystemFault` (offline)."""
        if not self.isolate_systems:
            raise SystemFault(system.name, where, self.time, exc) from exc
        if system.name in self.disabled:
            return
        reason = f"disabled after an exception in its {where}: {type(exc).__name__}: {exc}"
        self.disabled[system.name] = reason
        self.bus.unsubscribe(system)  # type: ignore[arg-type]
        log.error("game system %r %s", system.name, reason, exc_info=exc)
        report_fault(self.bus, system.name, "system", reason)

    def _consumer_error(self, consumer: Consumer, event: Event, exc: Exception) -> None:
        """An event a consumer could not apply: a fault for that event (isolating), else fail."""
        name = consumer.name if isinstance(consumer, GameSystem) else type(consumer).__name__
        if not self.isolate_systems:
            raise SystemFault(name, f"handling {event.KIND}", self.bus.now / self.sample_rate, exc) from exc
        if name in self.disabled:
            return
        report_fault(
            self.bus,
            name,
            "event",
            f"{event.KIND} not applied: {type(exc).__name__}: {exc}",
            event_kind=event.KIND,
        )

    def _idle_work(self, grid: int) -> bool:
        """Whether the idle check at grid sample ``grid`` (no control point before it) may free a
        voice or put a submix slot or a bus to sleep: a voice has ended or shows ended by then,
        or something awake has no sender (:meth:`~audio.dsp.mixer.Mixer.all_fed`). Otherwise the
        check would change nothing, so it is skipped and the audio is not split there."""
        banks = [b for b in self.mixer.voice_banks.values() if b.act.shape[0]]
        for b in banks:
            if max(b.ended_at[b.act].tolist()) >= 0:  # a few voices: cheaper than numpy's any
                return True
        end = self._end_at if self._watch_ends and self._end_at >= 0 else -1
        if end < 0:
            end = min((voice_end_seen(b, self.now) for b in banks), default=_NO_END)
        if end <= grid:
            return True
        mx = self.mixer
        acts = tuple(b.act for b in mx.banks)
        seen = self._fed_for
        if seen is None or len(seen[0]) != len(acts) or any(a is not b for a, b in zip(acts, seen[0])):
            # who sends where changes only with a bank's active set (a new array each time)
            seen = self._fed_for = (acts, mx.all_fed())
        return not seen[1]

    def _quiet(self) -> bool:
        """Whether the mixer would process nothing: no voice, submix slot or bus is active
        (one asleep reads as silence: its output rows are zeroed when it sleeps) and every
        ducker is at rest. Its output is then silence until a control point starts something,
        so the engine writes zeros for the whole stretch instead of processing it a sub-block
        at a time."""
        mx = self.mixer
        for b in mx.banks:
            if b.act.shape[0]:
                return False
        return all(d.still for d in mx.duckers.values())

    def render(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """Advance the engine clock and render its audio.

        Parameters
        ----------
        n:
            Samples to render (at the engine's sample rate, Hz).
        out:
            ``(n, channels)`` float32 array to write into; a new one if ``None``.

        Returns
        -------
        numpy.ndarray
            ``(n, channels)`` float32, identical whatever ``n`` the caller chunks by.
        """
        if out is None:
            out = np.empty((n, self.channels), dtype=np.float32)
        if not self.config.dsp:
            out[:n] = 0.0  # decisions-only: silence, written once per call
        self._run(n, out)
        return out

    def advance(self, n: int) -> None:
        """Advance the engine clock by ``n`` samples, delivering events, ticks and decisions,
        without keeping the audio: a decisions-only engine computes and writes none (a batch
        run of a whole scenario in one call: no output buffer, no control point but the
        engine's own), a full one renders it block by block and drops it.

        Parameters
        ----------
        n:
            Samples to advance (at the engine's sample rate, Hz).
        """
        if self.config.dsp:
            scratch = np.empty((min(n, self.max_block), self.channels), dtype=np.float32)
            done = 0
            while done < n:
                m = min(n - done, scratch.shape[0])
                self.render(m, scratch[:m])
                done += m
            return
        self._run(n, None)

    def _run(self, n: int, out: np.ndarray | None) -> None:
        """:meth:`render`'s loop: ``n`` samples from the clock's now into ``out`` (None: a
        decisions-only engine keeping no audio; ``out`` is already silence otherwise)."""
        i = 0
        dsp = self.config.dsp
        max_block = self.max_block if dsp else n
        mixer, bus, skip_idle, taps = self.mixer, self.bus, self._skip_idle, self._taps
        while i < n:
            self._control()
            t = self.now
            quiet = dsp and self._quiet()
            # the next control point: the next event, system frame, scheduled row or voice end
            nxt = t + (n - i if quiet else min(n - i, max_block))
            e = bus.next_at()
            if e is not None and e < nxt:
                nxt = e
            for c in self._clocked:
                if c.next_at < nxt:
                    nxt = c.next_at
                if c.row_at < nxt:
                    nxt = c.row_at
            if self._watch_ends:
                end = self._end_at  # computed again only when voices changed (ticks, handlers)
                if end < 0 or self._end_version != self.voices.version:
                    end = self.next_voice_end()
                if end < nxt:
                    nxt = end
            if nxt <= t:
                nxt = t + 1
            if skip_idle:
                if t % IDLE_GRID == 0 and self._idle_work(t):
                    self.voices.reclaim_quiet()
                    mixer.sleep_idle()
                grid = t - t % IDLE_GRID + IDLE_GRID
                if grid < nxt and self._idle_work(grid):
                    nxt = grid
            m = nxt - t
            j = i + m
            if not dsp:
                advance_sources(mixer, m, t)
            else:
                assert out is not None  # a full engine renders into a buffer
                if quiet:  # the mixer would process nothing and output silence, m samples at once
                    out[i:j] = 0.0
                else:
                    _interleave(mixer.process(m, t), out[i:j])
            if taps is not None:
                for name, chunks in taps.items():
                    if dsp and not quiet:
                        chunks.append(mixer.buses[name].output[0, :, :m].T.copy())
                    else:  # decisions-only or quiet: silence, like the output
                        chunks.append(np.zeros((m, self.channels), dtype=np.float32))
            self.now = nxt
            i = j

    def run_until(self, sample: int) -> None:
        """Deliver events and ticks up to ``sample`` without keeping the audio (:meth:`advance`
        by what is left).

        Parameters
        ----------
        sample:
            Engine-clock sample to stop at.
        """
        if sample > self.now:
            self.advance(sample - self.now)
