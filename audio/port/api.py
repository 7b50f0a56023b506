"""The embedding API: a voice system a game (or a script) drives with its own clock.

Usage
-----
>>> from audio.port import open_system
>>> port = open_system(game="tone")                      # or any registered game, install="demo"
>>> port.emit("tone.on", speaker="ann", line="hello", t=0.5)   # game timestamp, seconds
>>> block = port.advance(1.0)                             # renders 1 s -> (48000, 2) float32
>>> port.is_speaking("ann"), port.line_active("hello")

Time: the port's clock drives the engine. ``advance(seconds)`` / ``advance_to(t)`` render
and return the audio; ``pull(n)`` renders ``n`` samples. Events posted from any thread go
through a bounded inbox drained before every block: an event keeps its own ``t``
(``when="event"``, a past time takes effect at once) or takes effect at the next block
boundary (``when="now"``). ``play()`` instead hands the engine to :class:`audio.live.device.LivePlayer`
(the audio device's clock drives it).

Speech queries (what a mission script's WaitForSpeech needs): ``is_speaking(speaker)``
and ``line_active(line_id)`` ask the game systems when they implement those methods and
otherwise follow the decision stream: a line is active from a decision with outcome in
:data:`LINE_START` until one in :data:`LINE_END` for the same speaker/line (detail keys
``speaker`` and ``line``; aliases in :data:`SPEAKER_KEYS`, :data:`LINE_KEYS`).
Subtitles: events of a kind ending in ``.subtitle`` (``sylpheed.subtitle``) and decisions
whose detail carries ``text`` or ``subtitle``.

Dependability: a port's engine isolates its game systems (one that raises in its tick is
disabled and reported, the rest plays); a take or file that cannot be played costs one voice
and is reported as a fault (:mod:`audio.core.faults`), delivered to ``on_fault(callback)``;
an exception in a host's callback is logged and counted (``callback_errors``), never passed
to the render thread. Files named by posted events (``play``) must lie under the port's
allowed roots (:class:`audio.core.paths.PathPolicy`: barkbus's demo installs, the game
install, the scenario's folder and the ``allow`` folders); others are refused
(:class:`~audio.core.paths.PathRefused`, counted, and a ``refused`` fault).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from audio.core.bus import Decision, Event, SubtitleEvent
from audio.core.clock import BLOCK, SAMPLE_RATE, seconds_to_samples
from audio.core.docs import share_parameters
from audio.core.errors import BarkbusError, InputError
from audio.core.faults import Fault
from audio.core.inbox import Inbox
from audio.core.outcomes import LINE_END, LINE_START
from audio.core.paths import PathPolicy, PathRefused
from audio.live.device import LivePlayer, LiveSettings
from audio.port.adapters import Action, load_game_actions
from audio.port.events import PortError, make_event

if TYPE_CHECKING:
    from audio.core.engine import Engine

__all__ = [
    "LINE_END",
    "LINE_KEYS",
    "LINE_START",
    "SPEAKER_KEYS",
    "SpeechTracker",
    "Subtitle",
    "VoicePort",
    "engine_for_capture",
    "open_scenario",
    "open_system",
    "port_paths",
]

SPEAKER_KEYS = ("speaker", "speaker_id", "ped", "crew")
LINE_KEYS = ("line", "line_id", "event", "message", "cue")
log = logging.getLogger("barkbus.port")


def _first(detail: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in detail:
            return detail[k]
    return None


@dataclass(frozen=True)
class Subtitle:
    """A subtitle shown at sample ``at`` (``t`` s) for ``speaker``."""

    at: int
    t: float
    speaker: str
    text: str
    line: str


class SpeechTracker:
    """Follows the decision stream to answer which speakers and lines are active.

    A line is keyed by (system, speaker); it answers to every speaker alias in its start
    decision (:data:`SPEAKER_KEYS`: e.g. a Skate ped id and its voice id) and every line
    alias (:data:`LINE_KEYS`: e.g. a speech event id, a message id).

    Parameters
    ----------
    keep_last:
        Decisions kept in ``last`` (the most recent ones).
    """

    def __init__(self, keep_last: int = 64) -> None:
        self.active: dict[tuple[str, str], tuple[str, int, frozenset[str], frozenset[str]]] = {}
        self.last: list[Decision] = []
        self.keep_last = keep_last

    def __call__(self, d: Decision) -> None:
        self.last.append(d)
        if len(self.last) > self.keep_last:
            del self.last[: len(self.last) - self.keep_last]
        speaker = _first(d.detail, SPEAKER_KEYS)
        if speaker is None:
            return
        key = (d.system, str(speaker))
        if d.outcome in LINE_START:
            names = frozenset(str(d.detail[k]) for k in SPEAKER_KEYS if d.detail.get(k) is not None)
            lines = frozenset(str(d.detail[k]) for k in LINE_KEYS if d.detail.get(k) is not None)
            self.active[key] = (str(_first(d.detail, LINE_KEYS) or ""), d.at, names, lines)
        elif d.outcome in LINE_END:
            cur = self.active.get(key)
            line = _first(d.detail, LINE_KEYS)
            if cur is not None and (line is None or str(line) in cur[3]):
                del self.active[key]

    def is_speaking(self, speaker: Any) -> bool:
        """Whether ``speaker`` has a line playing (any of its aliases).

        Parameters
        ----------
        speaker:
            A speaker id or alias (compared as text).
        """
        s = str(speaker)
        return any(s in names for _, _, names, _ in list(self.active.values()))

    def line_active(self, line_id: Any) -> bool:
        """Whether a line with id ``line_id`` plays (any of its aliases).

        Parameters
        ----------
        line_id:
            A line id or alias: speech event id, message id, file (compared as text).
        """
        s = str(line_id)
        return any(s in lines for _, _, _, lines in list(self.active.values()))


DECISIONS_KEPT = 10_000
"""Decisions a port keeps in ``bus.decisions`` (the last ones; ``on_decision`` sees every one)."""


class VoicePort:
    """A voice system embedded in a host: post events, advance time, query speech.

    Parameters
    ----------
    engine:
        The engine (``render``, ``bus``, ``now``); :func:`open_system` builds one.
    game, install, seed:
        Recorded in capture headers so a run can be rebuilt (:func:`engine_for_capture`).
    inbox_size:
        Events waiting between blocks before new ones are dropped (counted).
    paths:
        Where files named by posted events may be (default: barkbus's demo installs only).
    block:
        Engine block, samples (the output does not depend on it).
    doc:
        The scenario document the engine was built from (capture headers carry it).
    scenario:
        The scenario file the port was opened on, or ``None``.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        game: str = "custom",
        install: str | None = None,
        seed: int = 0,
        block: int = BLOCK,
        inbox_size: int = 4096,
        doc: dict[str, Any] | None = None,
        scenario: str | None = None,
        paths: PathPolicy | None = None,
    ) -> None:
        self.engine = engine
        self.paths = paths or PathPolicy()
        self.callback_errors = 0
        engine.isolate_systems = True
        for system in engine.systems:
            system.allow_paths(self.paths)
        self.doc, self.scenario = doc, scenario
        self.bus = engine.bus
        self.bus.bound_decisions(DECISIONS_KEPT)  # a port may run for hours (listeners see all)
        self.sample_rate = int(engine.bus.sample_rate)
        self.block = block
        self.game, self.install, self.seed = game, install, seed
        self.inbox = Inbox(inbox_size)
        self.tracker = SpeechTracker()
        self.bus.on_decision(self.tracker)
        self.player: LivePlayer | None = None
        self._subtitle_cbs: list[Callable[[Subtitle], None]] = []
        self.bus.on_decision(self._subtitle)
        self.bus.subscribe(self)
        self._scheduled: list[Event] = []
        self.block_hooks: list[Callable[[int, np.ndarray], None]] = []
        """``hook(start_sample, block)`` after every block rendered (by :meth:`pull` or the
        player's render thread); the profiler's snapshot publisher is one."""

    # -- clock -------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """Engine time, seconds."""
        return int(self.engine.now) / self.sample_rate

    @property
    def now_samples(self) -> int:
        return int(self.engine.now)

    def pull(self, n: int) -> np.ndarray:
        """Render ``n`` samples (in blocks, draining the inbox before each): ``(n, 2)`` float32.

        Parameters
        ----------
        n:
            Samples to render (at :attr:`sample_rate` Hz).
        """
        if self.player is not None:
            raise PortError("the audio device drives this port (play() is running); stop it to pull blocks")
        if n < 0:
            raise PortError(f"cannot render a negative number of samples ({n})")
        self._flush_scheduled()
        out = np.empty((n, 2), dtype=np.float32)
        done = 0
        while done < n:
            self.inbox.post_all(self.engine)
            k = min(self.block, n - done)
            start = self.now_samples
            out[done : done + k] = self.engine.render(k)
            for hook in self.block_hooks:
                hook(start, out[done : done + k])
            done += k
        return out

    def advance_to(self, t: float) -> np.ndarray:
        """Render up to game time ``t`` seconds (sample ``round(t * sample_rate)``); past -> empty.

        Parameters
        ----------
        t:
            Game time to render up to, seconds since sample 0.
        """
        target = seconds_to_samples(t, self.sample_rate)
        return self.pull(max(0, target - self.now_samples))

    def advance(self, seconds: float) -> np.ndarray:
        """Render ``seconds`` more (exact sample arithmetic, no drift over many calls).

        Parameters
        ----------
        seconds:
            Game time to render, seconds.
        """
        if seconds < 0:
            raise PortError(f"cannot advance by a negative time ({seconds} s)")
        return self.advance_to(self.now + seconds)

    # -- events ------------------------------------------------------------------------
    def schedule(self, events: list[Event]) -> None:
        """Post ``events`` at their own ``t`` when the run starts (first pull or play),
        after any capture hook is attached (a scenario's script).

        Parameters
        ----------
        events:
            Events, each posted at its own ``t`` (seconds).
        """
        self._scheduled.extend(events)

    def _flush_scheduled(self) -> None:
        events, self._scheduled = self._scheduled, []
        for ev in events:
            self.bus.post(ev)

    def post(self, event: Event, *, when: str = "event") -> bool:
        """Queue ``event`` (thread-safe); False if the inbox is full (dropped, counted).

        A file the event names (its class's ``FILE_FIELDS``) is checked against :attr:`paths`
        and replaced by its resolved absolute path; outside them :class:`PathRefused` is raised,
        counted and reported as a fault.

        Parameters
        ----------
        event:
            A validated event (:func:`make_event`); its ``t`` is game time, seconds.
        when:
            ``"event"``: take effect at the event's ``t``; ``"now"``: at the next block boundary.
        """
        return self.inbox.put(self.checked(event), when=when)

    def games(self) -> set[str]:
        """The games this run has a system of (``skate``, ``sylpheed``...; the part of each
        system's name before the dot)."""
        return {s.name.partition(".")[0] for s in self.engine.systems}

    def accepts(self, kind: str) -> str | None:
        """None if events of ``kind`` are for this run (a generic kind such as ``world.emitter``,
        or one of its games'), else why not.

        Parameters
        ----------
        kind:
            An event kind (``"skate.value"``, ``"world.emitter"``).
        """
        from audio.games import game_names

        game, dot, _ = kind.partition(".")
        if dot and game in game_names() and game not in self.games():
            runs = ", ".join(sorted(self.games()))
            return f"event {kind!r} is for {game}, which this run does not have (it runs {runs})"
        return None

    def checked(self, event: Event) -> Event:
        """``event`` for this run's games, naming what their installs have (else
        :class:`InputError` with a did-you-mean), with its file fields resolved under the allowed
        roots (else PathRefused).

        Parameters
        ----------
        event:
            The event to check (untrusted: from a host, OSC or a capture).
        """
        why = self.accepts(event.KIND)
        if why is not None:
            raise InputError(why)
        problem = self.engine.check_event(event)
        if problem is not None:
            raise InputError(f"{event.KIND}.{problem[0]}: {problem[1]}")
        names = type(event).FILE_FIELDS
        if not names:
            return event
        resolved: dict[str, Any] = {}
        for name in names:
            value = getattr(event, name)
            try:
                resolved[name] = str(self.paths.check(value))
            except PathRefused as exc:
                self.engine.faults.report_later(
                    "port", "refused", str(exc), file=str(value)[:300], event_kind=event.KIND
                )
                raise
        return dataclasses.replace(event, **resolved)

    def emit(self, kind: str, /, *, when: str | None = None, **fields: Any) -> Event:
        """Build event ``kind`` from ``fields`` (validated) and post it.

        Without ``t`` the event takes effect at the next block boundary (``when="now"``).

        Parameters
        ----------
        kind:
            The event kind (``"tone.on"``).
        when:
            ``"now"`` (the default without ``t``): the next block boundary; ``"event"``: at ``t``.
        fields:
            The event's fields (``t`` in seconds, positions in metres...), validated by its type.
        """
        ev = make_event(kind, **fields)
        self.post(ev, when=when or ("event" if "t" in fields else "now"))
        return ev

    # -- queries -----------------------------------------------------------------------
    @property
    def actions(self) -> dict[str, Action]:
        """Every registered action by name (the generic ones and every game's)."""
        return load_game_actions()

    def is_speaking(self, speaker: Any) -> bool:
        """True while ``speaker`` has a line playing (or starting) in any system.

        Parameters
        ----------
        speaker:
            A speaker id or alias (a Skate ped or voice id, a Sylpheed speaker).
        """
        answers = [s.is_speaking(speaker) for s in self.engine.systems]
        return any(answers) or self.tracker.is_speaking(speaker)

    def line_active(self, line_id: Any) -> bool:
        """True while a line with id ``line_id`` plays (speech event id, message id, ...).

        Parameters
        ----------
        line_id:
            A line id: speech event id, message id, file...
        """
        answers = [s.line_active(line_id) for s in self.engine.systems]
        return any(answers) or self.tracker.line_active(line_id)

    def speaking(self) -> dict[str, str]:
        """Speaker -> its active line, from the decision stream."""
        return {sp: v[0] for (_, sp), v in list(self.tracker.active.items())}

    # -- subscriptions -----------------------------------------------------------------
    def _guard(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """``callback`` wrapped so that an exception in it is logged and counted, not raised."""

        def guarded(arg: Any) -> None:
            try:
                callback(arg)
            except Exception:  # the host's bug must not stop the render thread
                self.callback_errors += 1
                if self.callback_errors <= 5 or self.callback_errors % 1000 == 0:
                    log.exception("a port callback failed (%d so far; ignored)", self.callback_errors)

        return guarded

    @property
    def faults(self) -> Any:
        """The engine's :class:`~audio.core.faults.FaultLog` (counts, kinds, the last faults)."""
        return self.engine.faults

    def on_fault(self, callback: Callable[[Fault], None]) -> None:
        """Call ``callback(fault)`` for every fault (a voice that could not start, a refused file,
        a disabled system); render thread in live mode.

        Parameters
        ----------
        callback:
            Called with each :class:`~audio.core.faults.Fault`.
        """
        self.engine.faults.on_fault(self._guard(callback))

    def on_decision(self, callback: Callable[[Decision], None]) -> None:
        """Call ``callback(decision)`` for every decision (render thread in live mode).

        Parameters
        ----------
        callback:
            Called with each :class:`~audio.core.bus.Decision`.
        """
        self.bus.on_decision(self._guard(callback))

    def on_subtitle(self, callback: Callable[[Subtitle], None]) -> None:
        """Call ``callback(subtitle)`` for every subtitle event (``*.subtitle``, e.g.
        ``sylpheed.subtitle``) and every decision that carries a ``text``/``subtitle``.

        Parameters
        ----------
        callback:
            Called with each :class:`Subtitle` (its ``t`` in seconds).
        """
        self._subtitle_cbs.append(self._guard(callback))

    def handle(self, event: Event, bus: Any) -> None:
        """Bus consumer: forwards subtitle events (:class:`~audio.core.bus.SubtitleEvent`).

        Parameters
        ----------
        event:
            An event the bus delivers.
        bus:
            The engine's bus.
        """
        if not self._subtitle_cbs or not isinstance(event, SubtitleEvent):
            return
        speaker, text, line = event.caption()
        sub = Subtitle(int(bus.now), bus.now / bus.sample_rate, speaker, text, line)
        for cb in self._subtitle_cbs:
            cb(sub)

    def _subtitle(self, d: Decision) -> None:
        text = d.detail.get("text", d.detail.get("subtitle"))
        if text is None or not self._subtitle_cbs:
            return
        sub = Subtitle(
            d.at,
            d.t,
            str(_first(d.detail, SPEAKER_KEYS) or ""),
            str(text),
            str(_first(d.detail, LINE_KEYS) or ""),
        )
        for cb in self._subtitle_cbs:
            cb(sub)

    # -- live --------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Compile and allocate the DSP kernels before going live, on a scratch engine.

        Starts one short voice on every voice graph of ``graphs/`` in a throw-away Engine
        and renders a few blocks, so the first live voice does not pay numba compilation
        or bank allocation in the render thread. This engine is not touched.
        """
        from audio.core.engine import Engine
        from audio.dsp.graph import available_graphs, load_graph

        scratch = Engine(sample_rate=self.sample_rate, block=self.block, seed=0)
        pcm = np.zeros(self.block * 2, dtype=np.float32)
        pcm[::7] = 0.1
        for name in available_graphs():
            try:
                spec = load_graph(name)
            except ValueError:
                continue
            if spec.kind == "voice":
                scratch.voices.start(name, pcm, self.sample_rate)
        for _ in range(8):
            scratch.render(self.block)

    def play(self, settings: LiveSettings | None = None, **kw: Any) -> LivePlayer:
        """Own the audio device: start a :class:`LivePlayer` sharing this port's inbox.

        Game systems that can prefetch (Skate: a spawned ped's takes) start doing so, so the
        render thread finds decoded takes in the cache; the audio is the same either way.

        Parameters
        ----------
        settings:
            Device settings (default: this port's sample rate, Hz, and block, samples).
        kw:
            Passed to :class:`LivePlayer` (``on_block`` and the like).
        """
        if self.player is not None:
            raise PortError("play() is already running")
        s = settings or LiveSettings(sample_rate=self.sample_rate, block=self.block)
        self.warm_up()
        # room for ~5.8 minutes of 48 kHz sources, so the sample pool never grows (a copy of the
        # whole pool) on the render thread while playing; untouched pages cost no memory
        self.engine.reserve(1 << 24)
        # a live run may last hours: keep a bounded decision history and no voice history
        # (listeners such as the speech tracker and the TUI still see every decision)
        self.engine.voices.keep_history = False
        for system in self.engine.systems:  # decode takes ahead of need on the cache's worker
            system.start_prefetch()
        if self.block_hooks:
            hooks = [*self.block_hooks, *([kw["on_block"]] if kw.get("on_block") else [])]

            def on_block(start: int, block: np.ndarray) -> None:
                for hook in hooks:
                    hook(start, block)

            kw["on_block"] = on_block
        player = LivePlayer(self.engine, s, inbox=self.inbox, **kw)
        self._flush_scheduled()
        player.start()
        self.player = player
        return player

    def profiler(self, bind: str | None = None, token: str | None = None) -> Any:
        """Serve the live profiler page for this port (:mod:`audio.live.profiler`) at ``bind``
        (``[HOST:]PORT``; default 127.0.0.1 and a free port; another host needs ``token``).
        Call it before or after :meth:`play` (or while pulling blocks); returns the server:
        its ``url``, and ``stop()``.

        Parameters
        ----------
        bind:
            ``[HOST:]PORT`` to serve on (default 127.0.0.1 and a free port).
        token:
            Access token, needed for a host other than 127.0.0.1.
        """
        from audio.live.profiler.attach import start_profiler

        return start_profiler(self, bind, token)

    def stop(self) -> LivePlayer | None:
        """Stop a running ``play()`` (returns the player, for its metrics and records)."""
        player, self.player = self.player, None
        if player is not None:
            player.stop()
        return player

    def capture_header(self) -> dict[str, Any]:
        """What a replay needs to rebuild this engine: game, install, seed, sample rate, block and,
        for engines built from a scenario document, ``doc`` and ``scenario`` (the fields
        ``audio.offline.render.render_replay`` reads)."""
        h: dict[str, Any] = {
            "game": self.game,
            "install": self.install,
            "seed": self.seed,
            "sample_rate": self.sample_rate,
            "block": self.block,
            "layout": self.engine.config.layout,
            "isolate_systems": True,
            "allow": self.paths.to_json(),
        }
        if self.doc is not None:
            h["doc"] = self.doc
            h["scenario"] = self.scenario or "<port>"
        return h


def _engine_from_doc(doc: dict[str, Any], where: str, seed: int, block: int, sample_rate: int) -> Any:
    from audio.core.errors import ScenarioError
    from audio.offline.scenario import build_engine, scenario_from_doc

    try:
        scn = scenario_from_doc(doc, Path(where), seed)
        return build_engine(scn, block=block, post_events=False, sample_rate=sample_rate)
    except (ScenarioError, OSError, KeyError) as exc:
        raise PortError(str(exc)) from None


def port_paths(
    install: str | None = None,
    scenario: str | Path | None = None,
    doc: dict[str, Any] | None = None,
    allow: Any = (),
) -> PathPolicy:
    """The allowed roots of a port: barkbus's demo installs, ``install`` (a folder), the
    scenario's folder and the installs its game sections name, and the ``allow`` folders.

    Parameters
    ----------
    install:
        A game install folder (``None`` or ``"demo"``: none).
    scenario:
        The scenario file, whose folder is allowed.
    doc:
        The scenario document, whose game sections name installs.
    allow:
        More folders.
    """
    roots: list[Path] = []
    base = Path(scenario).resolve().parent if scenario is not None else None
    if install not in (None, "demo"):
        roots.append(Path(str(install)))
    if base is not None:
        roots.append(base)
        for section in (doc or {}).values():
            inst = section.get("install") if isinstance(section, dict) else None
            if isinstance(inst, str) and inst != "demo":
                roots.append(base / inst)
    roots.extend(Path(a) for a in allow)
    return PathPolicy(roots, base=base)


def open_system(
    game: str = "tone",
    install: str | None = "demo",
    seed: int = 0,
    *,
    sample_rate: int = SAMPLE_RATE,
    block: int = BLOCK,
    section: dict[str, Any] | None = None,
    inbox_size: int = 4096,
    allow: Any = (),
) -> VoicePort:
    """Create the voice system of a registered game and wrap it in a :class:`VoicePort`.

    The engine is built from a one-section scenario document, which the capture header
    carries (so ``barkbus render --replay`` rebuilds the same engine). The engine's world
    follows ``world.listener`` / ``world.emitter`` events.

    Parameters
    ----------
    game:
        A game of :mod:`audio.games` ("tone" needs no game data).
    install:
        "demo" (the embedded demo install) or a game install folder.
    seed:
        Scenario seed.
    section:
        The game's scenario section to use instead of the one built from ``install``.
    sample_rate:
        Output sample rate, Hz.
    block:
        Engine block, samples (the output does not depend on it).
    inbox_size:
        Events the thread-safe inbox holds before a post is refused.
    allow:
        More folders posted events may name files in (see :func:`port_paths`).
    """
    from audio.games import game as find_game

    try:
        record = find_game(game)
    except BarkbusError as exc:
        raise PortError(str(exc)) from None
    from audio.offline.scenario import port_doc

    if install not in (None, "demo"):
        install = str(Path(str(install)).resolve())  # a capture replays from any folder
    where = str(Path.cwd() / f"<port {game}>.toml")
    sec = dict(section) if section is not None else record.port_section(install)
    doc = port_doc(game, sec, seed)
    engine = _engine_from_doc(doc, where, seed, block, sample_rate)
    return VoicePort(
        engine,
        game=game,
        install=(install or "demo") if record.needs_install else None,
        seed=seed,
        block=block,
        inbox_size=inbox_size,
        doc=doc,
        scenario=where,
        paths=port_paths(install, None, None, allow),
    )


@share_parameters(open_system, "sample_rate", "block", "inbox_size", "allow")
def open_scenario(
    path: str | Path,
    seed: int | None = None,
    *,
    sample_rate: int = SAMPLE_RATE,
    block: int = BLOCK,
    inbox_size: int = 4096,
    allow: Any = (),
) -> tuple[VoicePort, float]:
    """A port on the engine a scenario file describes, its events scheduled (posted when
    the run starts); returns ``(port, duration_s)``. ``sample_rate`` is the output rate (Hz).
    Posted events may name files under the scenario's folder, its installs and ``allow``
    (see :func:`port_paths`).

    Parameters
    ----------
    path:
        The scenario file (TOML).
    seed:
        Seed, 0..2^63-1 (``None``: the file's).
    """
    from audio.core.errors import ScenarioError
    from audio.offline.scenario import build_engine, load_scenario

    try:
        scn = load_scenario(path, seed)
        engine = build_engine(scn, block=block, post_events=False, sample_rate=sample_rate)
    except ScenarioError as exc:
        raise PortError(str(exc)) from None
    port = VoicePort(
        engine,
        game="scenario",
        seed=scn.seed,
        block=block,
        inbox_size=inbox_size,
        doc=scn.doc,
        scenario=str(scn.path),
        paths=port_paths(None, scn.path, scn.doc, allow),
    )
    port.schedule(list(scn.events))
    return port, scn.duration


def engine_for_capture(header: dict[str, Any], capture: str | Path | None = None) -> Any:
    """A fresh engine built like the one a capture header describes (for replay).

    The same builder as ``barkbus render --replay``
    (:func:`audio.offline.scenario.replay_scenario`): the header's layout, sample rate, block,
    seed, isolation and allowed roots; ``capture`` is the capture file the header's relative
    paths are read from. Post the events with :func:`audio.core.capture.post_captured`.

    Parameters
    ----------
    header:
        A capture header (:func:`audio.core.capture.read_capture`'s first record).
    capture:
        The capture file, so install paths relative to it resolve (``None``: as written).
    """
    from audio.offline.scenario import replay_scenario

    try:
        return replay_scenario(header, capture)[1]
    except BarkbusError as exc:
        raise PortError(str(exc)) from None
