"""The engine system that runs the chatter queue at 60 Hz and plays its lines.

:class:`SylpheedChatterSystem` subscribes to the ``sylpheed.*`` events, runs
:class:`~audio.games.sylpheed.chatter.queue.ChatterQueue` on the engine's 60 Hz frame clock and plays
lines through the ``sylpheed_radio_voice`` graph into the ``radio`` bus with
``band = Priority``. Ducking: while a node holds ducking level 1 the system holds
``engine.mixer.duck("radio", key, band=Priority, on=True)``; the radio bus's ``[ducker]``
(``graphs/radio.toml``) attenuates lower bands. The game's attenuation is NOT known:
the bus default of -9 dB with fade out / in is our documented setting.

Every decision goes to ``engine.bus.decide("sylpheed.chatter", outcome, ...)``: NotLoaded
(reason: disabled | speaker | phase | event), RollFailed, Duplicate (detail: pending |
cooling), NoEligible, PoolFull, Queued, Started (message, line), Ducked, Finished,
OneShotSpent, Cooldown (frames); crew setup logs CrewLoaded or CrewError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from audio.core.bus import Decision, Event, EventBus
from audio.core.errors import FormatError
from audio.core.faults import report_fault
from audio.core.outcomes import CUT, END, QUIET, REFUSED, START, STATE, Outcome
from audio.core.plugin import NEVER, GameSystem, ShareKey
from audio.core.schema import did_you_mean
from audio.games.sylpheed.chatter.queue import FRAME_RATE, ChatterQueue, Node, frames_of
from audio.games.sylpheed.chatter.rand import GameRand
from audio.games.sylpheed.chatter.rules import MergeResult, merge_phases
from audio.games.sylpheed.events import Bark, ChatterEnable, CrewSetup, PhaseChange, Subtitle
from audio.games.sylpheed.formats.install import LineSource, TableSource, stage_tag
from audio.games.sylpheed.formats.presets import RuleTable

__all__ = ["RNG_STREAM", "SYSTEM", "SylpheedChatterSystem", "SylpheedOutcome"]

SYSTEM = "sylpheed.chatter"
RNG_STREAM = "sylpheed.chatter"
"""Name of the engine random stream the game ``rand()`` is seeded from."""


class SylpheedOutcome(Outcome):
    """Every decision the Project Sylpheed chatter system logs."""

    Queued = "Queued", QUIET
    Started = "Started", START
    Finished = "Finished", END
    Ducked = "Ducked", CUT
    Duplicate = "Duplicate", REFUSED
    RollFailed = "RollFailed", REFUSED
    PoolFull = "PoolFull", REFUSED
    NotLoaded = "NotLoaded", REFUSED
    NoRule = "NoRule", REFUSED
    NoEligible = "NoEligible", REFUSED
    Missing = "Missing", REFUSED
    Cooldown = "Cooldown", QUIET
    Picked = "Picked", QUIET
    OneShotSpent = "OneShotSpent", STATE
    Phase = "Phase", STATE
    Enabled = "Enabled", STATE
    Disabled = "Disabled", STATE
    CrewLoaded = "CrewLoaded", QUIET
    CrewError = "CrewError", REFUSED


class SylpheedChatterSystem(GameSystem):
    """The chatter system (``frame_rate = 60``).

    Parameters
    ----------
    lines:
        Audio per message id (None: every line is silent and lasts ``missing_line_s``).
    tables:
        Rule / message / UnitMessageSet / UnitGroup tables (needed for crews given by name
        and for Window subtitles).
    crews:
        Crew setups applied at attach time (before any event).
    generator, fold:
        The ``rand()`` generator and ``rand01`` fold (see :mod:`audio.games.sylpheed.chatter.rand`).
    seed:
        Initial ``rand()`` state; default ``engine.rng.seed32("sylpheed.chatter")``.
    missing_line_s:
        Seconds a line without audio holds its path (our setting).
    hold_effective_time:
        Lines hold their path at least EffectiveTime frames (our reading).
    """

    name = SYSTEM
    frame_rate = FRAME_RATE
    outcomes = SylpheedOutcome

    def __init__(
        self,
        lines: LineSource | None = None,
        tables: TableSource | None = None,
        *,
        crews: Sequence[CrewSetup] = (),
        graph: str = "sylpheed_radio_voice",
        bus: str = "radio",
        generator: str = "msvc",
        fold: str = "hi8lo8",
        seed: int | None = None,
        pool_size: int = 128,
        hold_effective_time: bool = True,
        missing_line_s: float = 2.0,
        phase: int = 1,
        enabled: bool = True,
        names: tuple[set[str], set[str]] | None = None,
    ) -> None:
        self.lines, self.tables = lines, tables
        self.names = names
        """Every speaker and every chatter event the install's rule tables have (None: not
        checked), for :meth:`check_event`."""
        self.crews = list(crews)
        self.graph, self.bus_name = graph, bus
        self.generator, self.fold, self.seed = generator, fold, seed
        self.pool_size, self.hold_effective_time = pool_size, hold_effective_time
        self.missing_line_frames = max(1, round(missing_line_s * FRAME_RATE))
        self._phase, self._enabled = phase, enabled
        self.engine: Any = None
        self.queue: ChatterQueue | None = None
        self._last: int | None = None
        """The last frame ticked (None: none yet)."""
        self.merges: dict[str, MergeResult] = {}
        GameRand(0, generator, fold)  # validate the settings now

    # -- the game contract -----------------------------------------------------------------
    @property
    def graphs(self) -> tuple[str, ...]:
        """The voice graph its lines play through (loaded by :meth:`Engine.prepare`)."""
        return (self.graph,)

    def attach(self, engine: Any) -> None:
        self.engine = engine
        seed = engine.rng.seed32(RNG_STREAM) if self.seed is None else self.seed
        self.queue = ChatterQueue(
            GameRand(seed, self.generator, self.fold),
            self,
            self._decide,
            pool_size=self.pool_size,
            hold_effective_time=self.hold_effective_time,
            enabled=self._enabled,
            phase=self._phase,
        )
        engine.bus.subscribe(self, [CrewSetup, Bark, PhaseChange, ChatterEnable])
        for crew in self.crews:
            self.setup_crew(crew)

    def summary(self, decisions: Any) -> str:
        """Per chatter event (rule name): outcome counts of this system's decisions."""
        from collections import Counter

        per: dict[str, Counter[str]] = {}
        for d in decisions:
            if d.system == SYSTEM and "event" in d.detail:
                per.setdefault(str(d.detail["event"]), Counter())[d.outcome] += 1
        return "\n".join(
            f"  {ev:<30s} " + ", ".join(f"{k} {n}" for k, n in c.most_common())
            for ev, c in sorted(per.items())
        )

    def snapshot(self) -> dict[str, list[str]]:
        """Panels for a live UI: the queue (pending, playing) and the cooling nodes' timers."""
        from audio.games.sylpheed.chatter.queue import STATE_COOLING, STATE_PLAYING

        if self.queue is None:
            return {}
        queue, cooling = [], []
        # frames since the last tick (ticks are skipped while nothing changes)
        gone = 0 if self._last is None else max(0, self.engine.frame_of(self) - self._last)
        for n in self.queue.nodes:
            if n.state == STATE_COOLING:
                left = n.timer - gone
                cooling.append(f"{n.speaker} {n.message}: {left} frames ({left / FRAME_RATE:.1f} s) left")
            else:
                state = "playing" if n.state == STATE_PLAYING else "pending"
                queue.append(
                    f"{n.speaker} {n.message} prio {n.priority} {state}" + (" ducked" if n.ducked else "")
                )
        return {
            "queue": queue or ["(empty)"],
            "cooldowns": cooling or ["(none)"],
            "pool": [
                f"{self.queue.live}/{self.queue.pool_size} nodes in use, phase {self.queue.phase}, "
                f"{'enabled' if self.queue.enabled else 'disabled'}"
            ],
        }

    def tick(self, frame: int, engine: Any) -> None:
        q = self.queue
        assert q is not None, "attach() first"
        q.tick(frame, 1 if self._last is None else frame - self._last)
        self._last = frame

    def next_tick(self, frame: int) -> int:
        """The frame a line can start or retire, or a cooldown end (:meth:`ChatterQueue.next_change`);
        every frame before the first tick."""
        assert self.queue is not None, "attach() first"
        if self._last is None:
            return frame
        due = self.queue.next_change(frame, self._last)
        return NEVER if due is None else due

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """``(field, problem)`` when a :class:`Bark` names a speaker or an event no rule table of
        the install has (with the closest of its names); None otherwise. A speaker the install
        has but no crew has loaded yet is the game's own ``NotLoaded``, not a mistake."""
        if isinstance(event, Bark) and self.names is not None:
            speakers, events = self.names
            who = event.speaker.removeprefix("Character")
            if who not in speakers:
                return "speaker", f"no speaker {event.speaker!r} in the install{did_you_mean(who, speakers)}"
            if event.event not in events:
                return (
                    "event",
                    f"no chatter event {event.event!r} in the install{did_you_mean(event.event, events)}",
                )
        return None

    def handle(self, event: Event, bus: EventBus) -> None:
        q = self.queue
        assert q is not None, "attach() first"
        q.frame = max(q.frame, self.engine.frame_of(self))  # the frame its decisions name
        if isinstance(event, Bark):
            q.fire(event.speaker, event.event)
        elif isinstance(event, PhaseChange):
            q.phase = int(event.phase)
            self._decide("Phase", phase=q.phase)
        elif isinstance(event, ChatterEnable):
            q.enabled = bool(event.enabled)
            self._decide("Enabled" if q.enabled else "Disabled")
        elif isinstance(event, CrewSetup):
            self.setup_crew(event)

    def speakers(self) -> list[str]:
        """Speakers with a loaded entry (for UIs)."""
        return list(self.queue.speakers) if self.queue is not None else []

    # -- crews -----------------------------------------------------------------------------
    def load_crew(
        self,
        name: str,
        tables: Sequence[RuleTable],
        speakers: Sequence[str] = (),
        phases: Sequence[int] = (1, 2, 3),
    ) -> MergeResult:
        """Merge ``tables`` (phase order) into one map and give it to ``speakers``
        (default: the union of the tables' ``Sperkers`` rosters, in order)."""
        assert self.queue is not None, "attach() first"
        if not phases or any(not 1 <= p <= 255 for p in phases):
            raise ValueError(f"crew {name}: phases must be 1..255, got {list(phases)}")
        res = merge_phases(list(tables))
        who = list(speakers) or list(dict.fromkeys(s for t in tables for s in t.speakers))
        slots: list[Any] = [None] * max(phases, default=1)
        for p in phases:
            slots[p - 1] = res.rules
        for s in who:
            self.queue.set_speaker(s, slots)
        self.merges[name] = res
        self._decide(
            "CrewLoaded",
            crew=name,
            tables=[t.name for t in tables],
            speakers=who,
            rules=len(res.rules),
            flag=res.flag,
            collisions=len(res.collisions),
            mismatches=[c.event for c in res.mismatches],
        )
        return res

    def setup_crew(self, ev: CrewSetup) -> MergeResult | None:
        """Apply a :class:`CrewSetup` (names resolved through ``tables``)."""
        label = ev.crew or ev.squadron or "+".join(ev.tables)
        stage = stage_tag(ev.stage) if ev.stage != "" else ""
        try:
            if ev.tables:
                groups = [(label, list(ev.tables))]
            else:
                if self.tables is None:
                    raise FormatError(label, None, "a table source for crews given by name")
                if ev.squadron:
                    sq = self.tables.unit_group(stage).squadron(ev.squadron)
                    if sq is None:
                        raise FormatError(f"UnitGroup_{stage}", None, f"squadron {ev.squadron}")
                    crews = list(dict.fromkeys(m.message_set for m in sq.members))
                else:
                    crews = [ev.crew]
                ums = self.tables.unit_message_set(stage)
                groups = []
                for c in crews:
                    crew = ums.crew(c)
                    if crew is None:
                        raise FormatError(f"UnitMessageSet_{stage}", None, f"crew {c}")
                    groups.append((c, crew.tables))
            if self.tables is None:
                raise FormatError(label, None, "a table source to read rule tables")
            res = None
            for name, group in groups:
                res = self.load_crew(name, [self.tables.rule_table(n) for n in group], ev.speakers, ev.phases)
            return res
        except (FormatError, ValueError) as exc:
            self._decide("CrewError", crew=label, error=str(exc))
            return None

    # -- Presenter -------------------------------------------------------------------------
    def start_line(self, node: Node) -> int:
        got = self.lines.line(node.message) if self.lines is not None else None
        eng = self.engine
        frames = self.missing_line_frames
        if got is not None:
            pcm, sample_rate = got
            pcm = np.asarray(pcm, np.float32).reshape(-1)
            frames = frames_of(len(pcm), sample_rate)
            node.handle = eng.voices.start(
                self.graph,
                pcm,
                sample_rate,
                band=node.priority,
                tag=f"sylpheed:{node.speaker}:{node.message}",
                meta={
                    "speaker": node.speaker,
                    "message": node.message,
                    "clip": node.message,
                    "take": node.index,
                    "event": node.rule.event,
                    "priority": node.priority,
                },
            )
        elif self.lines is not None and node.message in self.lines.line_errors:
            report_fault(
                eng.bus,
                self.name,
                "decode",
                self.lines.line_errors[node.message],
                speaker=node.speaker,
                message=node.message,
            )
        if node.pattern >= 3:
            self._subtitle(node, max(frames, node.timer if self.hold_effective_time else 0))
        return frames

    def _subtitle(self, node: Node, frames: int) -> None:
        pages: tuple[str, ...] = ()
        if self.tables is not None and node.rule.source:
            try:
                mt = self.tables.message_table(node.rule.source)
            except FormatError:
                mt = None
            msg = mt.by_id(node.message) if mt is not None else None
            pages = tuple(p.text for p in msg.pages) if msg is not None else ()
        bus = self.engine.bus
        bus.post_now(
            Subtitle(
                t=bus.now / bus.sample_rate,
                speaker=node.speaker,
                message=node.message,
                pages=pages,
                priority=node.priority,
                seconds=frames / FRAME_RATE,
            )
        )

    def stop_line(self, node: Node) -> None:
        v = node.handle
        if v is not None and v.playing:
            self.engine.voices.stop(v, fade=True)
        node.handle = None

    def duck(self, node: Node, on: bool) -> None:
        self.engine.mixer.duck(self.bus_name, f"sylpheed.slot{node.slot}", band=node.priority, on=on)

    def _decide(self, outcome: str, **detail: Any) -> None:
        """Log ``outcome`` (a :class:`SylpheedOutcome` name; the queue logs its codes by name)."""
        self.engine.bus.decide(SYSTEM, SylpheedOutcome.named(outcome), **detail)

    # -- batch report ----------------------------------------------------------------------
    def variety(self) -> tuple[str, str]:
        """A speaker's event should vary its message between plays."""
        return ("event", "clip")

    def _rule(self, speaker: str, event: str, phase: int) -> Any:
        maps = self.queue.speakers.get(speaker) if self.queue is not None else None
        rules = maps[(phase - 1) & 0xFF] if maps and (phase - 1) & 0xFF < len(maps) else None
        return rules.get(event) if rules else None

    def expected_shares(self, decisions: Sequence[Decision]) -> dict[ShareKey, float]:
        """Expected plays per (event, message): a rule's messages share ``1 / count`` (nominal:
        the one-shot masks of the moment are not logged)."""
        phase = self._phase
        out: dict[ShareKey, float] = {}
        for d in decisions:
            if d.system != self.name:
                continue
            if d.outcome == SylpheedOutcome.Phase:
                phase = int(d.detail.get("phase", phase))
            elif d.outcome == SylpheedOutcome.Started:
                rule = self._rule(str(d.detail.get("speaker")), str(d.detail.get("event")), phase)
                if rule is None or not rule.messages:
                    continue
                for m in rule.messages:
                    key = (str(d.detail.get("event")), str(m))
                    out[key] = out.get(key, 0.0) + 1.0 / len(rule.messages)
        return out

    def catalogue(self, decisions: Sequence[Decision]) -> set[ShareKey]:
        """The messages of the loaded speakers' rules (as loaded at the end of the run)."""
        out: set[ShareKey] = set()
        if self.queue is None:
            return out
        for maps in self.queue.speakers.values():
            for rules in maps:
                for event, rule in (rules or {}).items():
                    out.update((str(event), str(m)) for m in rule.messages)
        return out
