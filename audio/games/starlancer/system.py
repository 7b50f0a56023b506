"""The engine system: the mission script VM and the radio on 100 Hz game ticks, lines on one voice.

:class:`StarlancerSystem` (``frame_rate = 100``: one engine frame per game tick) runs the script
clock (1 Hz: timers, Wait), the radio's pre-roll and line ends every tick, and one VM pass plus
``radio_frame`` every ``frame_ticks`` ticks. Lines are decoded from ``msspeech.hog`` (``.ut``,
22,050 Hz) and played through the ``starlancer_radio_voice`` graph (our band-limited cockpit-radio
design, not the game's: the game plays the line dry) into the ``radio`` bus at
``Sen0.level = round(speech x master / 127) / 127``; the dead-channel static of a "once" film is a
looped noise bed on the same graph while the window stays open.

Decisions: ``starlancer.radio`` (Said, Queued, Dropped, Expired, Started, Ended, Interrupted,
WindowClosed, Static, FilmEnded, Gated, Gate, MissingSpeech, Reset) and ``starlancer.vm``
(ThreadStarted/Ended/Refused/Error, TriggerFired/Ignored/Resumed, Wait, TimerCreated/Fired,
RandomBranch, Skipped, InstructionCap, StackUnderflow, ...), each with its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from audio.core.bus import Event, EventBus
from audio.core.errors import FormatError
from audio.core.schema import did_you_mean
from audio.games.starlancer.events import Gate, Reset, Say, Trigger
from audio.games.starlancer.formats.dte import Dte
from audio.games.starlancer.formats.hog import Hog, member_name
from audio.games.starlancer.radio.radio import MODES, NOBODY, SPEECH_RATE, TICK_HZ, Line, Radio, RadioSettings
from audio.games.starlancer.script.commands import condition_code
from audio.games.starlancer.script.vm import MsvcRand, Vm, VmSettings

__all__ = [
    "RNG_STREAM",
    "SYSTEM",
    "SpeechBank",
    "StarlancerSystem",
    "scenario_events",
    "system_from_scenario",
]

SYSTEM = "starlancer"
RNG_STREAM = "starlancer.rand"
"""Engine random stream the game's ``rand()`` (random_branch) is seeded from."""
STATIC_LOOP_S = 0.5


def _decode_ut(data: bytes, path: str) -> np.ndarray:
    from audio.games.starlancer.formats.ut import decode_ut

    return decode_ut(data, path)


class SpeechBank:
    """Speech lines by the game's name from ``msspeech.hog`` (decoded once, cached)."""

    def __init__(self, hog: Hog | None, decode: Callable[[bytes, str], np.ndarray] | None = None) -> None:
        self.hog, self.decode = hog, decode or _decode_ut
        self._cache: dict[str, np.ndarray | None] = {}
        self.errors: dict[str, str] = {}

    def load(self, speech: str) -> np.ndarray | None:
        key = member_name(speech).lower()
        if key not in self._cache:
            self._cache[key] = self._read(speech)
        return self._cache[key]

    def _read(self, speech: str) -> np.ndarray | None:
        if self.hog is None:
            return None
        try:
            data = self.hog.read(speech)
            return np.asarray(
                self.decode(data, f"{self.hog.path}:{member_name(speech)}"), np.float32
            ).reshape(-1)
        except FormatError as exc:
            self.errors[speech] = str(exc)
            return None


class _Presenter:
    def __init__(self, system: StarlancerSystem) -> None:
        self.sys = system

    def load(self, speech: str) -> np.ndarray | None:
        return self.sys.bank.load(speech) if self.sys.bank is not None else None

    def start_speech(self, line: Line, pcm: np.ndarray, volume: int) -> Any:
        s = self.sys
        who = member_name(line.speech)
        return s.engine.voices.start(
            s.graph,
            pcm,
            SPEECH_RATE,
            params={"Sen0.level": volume / 127},
            tag=f"starlancer:{line.speaker}:{who}",
            meta={"speaker": line.speaker, "clip": who, "flags": line.flags},
        )

    def stop_speech(self, handle: Any) -> None:
        if handle is not None:
            self.sys.engine.voices.stop(handle, fade=True)

    def start_static(self, line: Line, ticks: int) -> Any:
        s = self.sys
        n = max(1, ticks * SPEECH_RATE // TICK_HZ)
        pcm = np.resize(s.static_loop, n)
        return s.engine.voices.start(
            s.graph,
            pcm,
            SPEECH_RATE,
            params={"Sen0.level": s.radio_settings.volume() / 127 * s.static_level},
            tag=f"starlancer:{line.speaker}:static",
            meta={"speaker": line.speaker},
        )

    def stop_static(self, handle: Any) -> None:
        self.stop_speech(handle)


class StarlancerSystem:
    """The Starlancer radio system (engine System protocol, ``frame_rate = 100``)."""

    name = SYSTEM
    frame_rate = TICK_HZ

    def __init__(
        self,
        mission: Dte,
        bank: SpeechBank | None,
        *,
        radio: RadioSettings | None = None,
        vm: VmSettings | None = None,
        globals_: dict[int, int] | None = None,
        pilot_names: dict[int, str] | None = None,
        graph: str = "starlancer_radio_voice",
        seed: int | None = None,
        static_level: float = 0.3,
        start: bool = True,
    ) -> None:
        self.mission, self.bank = mission, bank
        self.radio_settings, self.vm_settings = radio or RadioSettings(), vm or VmSettings()
        if self.vm_settings.frame_ticks < 1:
            raise ValueError("frame_ticks must be >= 1")
        self.globals_, self.pilot_names = dict(globals_ or {}), dict(pilot_names or {})
        self.graph, self.seed, self.static_level, self.auto_start = graph, seed, static_level, start
        self.engine: Any = None
        self.radio: Radio | None = None
        self.vm: Vm | None = None
        self.started = False
        self.tick_now = 0
        self.static_loop = np.zeros(1, np.float32)

    # -- System protocol ---------------------------------------------------------------------
    @property
    def graphs(self) -> tuple[str, ...]:
        """The voice graph its lines play through (loaded by :meth:`Engine.prepare`)."""
        return (self.graph,)

    def attach(self, engine: Any) -> None:
        self.engine = engine
        seed = engine.rng.seed32(RNG_STREAM) if self.seed is None else self.seed
        self.rand = MsvcRand(seed)
        noise = np.random.default_rng(seed).standard_normal(int(STATIC_LOOP_S * SPEECH_RATE))
        crackle = np.repeat(
            np.random.default_rng(seed + 1).random(int(STATIC_LOOP_S * 50)) ** 3, SPEECH_RATE // 50
        )
        self.static_loop = (0.25 * noise[: len(crackle)] * (0.3 + crackle)).astype(np.float32)
        self.radio = Radio(_Presenter(self), self._decider("starlancer.radio"), self.radio_settings)
        self._new_vm()
        engine.bus.subscribe(self, [Trigger, Say, Gate, Reset])

    def _new_vm(self) -> None:
        assert self.radio is not None
        self.vm = Vm(
            self.mission,
            self.radio,
            self._decider("starlancer.vm"),
            self.rand,
            self.vm_settings,
            self.globals_,
            self.pilot_names,
        )

    def _decider(self, system: str) -> Callable[..., Any]:
        def decide(outcome: str, **detail: Any) -> None:
            self.engine.bus.decide(system, outcome, tick=self.tick_now, **detail)

        return decide

    def tick(self, frame: int, engine: Any) -> None:
        assert self.radio is not None and self.vm is not None, "attach() first"
        self.tick_now = frame
        if not self.started:
            self.started = True
            self.radio.reset()
            if self.auto_start:
                self.vm.mission_start()
        if frame and frame % TICK_HZ == 0:
            self.vm.second()
        self.radio.tick(frame)
        if frame % self.vm_settings.frame_ticks == 0:
            self.vm.run_frame()
            self.radio.frame(frame)

    def handle(self, event: Event, bus: EventBus) -> None:
        assert self.radio is not None and self.vm is not None, "attach() first"
        if isinstance(event, Trigger):
            self.trigger(event)
        elif isinstance(event, Say):
            self.say(event)
        elif isinstance(event, Gate):
            try:
                self.radio.set_gate(event.gate, event.disabled)
            except ValueError as exc:
                self.engine.bus.decide("starlancer.radio", "BadEvent", reason=str(exc))
        elif isinstance(event, Reset):
            self.reset(event.restart)

    # -- actions ----------------------------------------------------------------------------
    def reset(self, restart: bool = False) -> None:
        """``radio_reset``; ``restart`` also restarts the script (new VM, the start part runs)."""
        assert self.radio is not None
        self.radio.reset()
        if restart:
            self._new_vm()
            assert self.vm is not None
            self.vm.mission_start()

    def resolve_subject(self, subject: str | int) -> int | None:
        """Object ID of a subject given as an ID or a ship / flight group name (case-insensitive;
        a name may omit its ``(A1)``-style prefix)."""
        d = self.mission
        if isinstance(subject, int):
            return subject if 0 <= subject < len(d.objects) else None
        key = subject.lower()
        cands = [(d.ship_name(i), s.object_id) for i, s in enumerate(d.ships)]
        cands += [(d.flight_group_name(i), g.object_id) for i, g in enumerate(d.flight_groups)]
        for name, oid in cands:
            if name and name.lower() == key:
                return oid
        for name, oid in cands:
            if name and name.lower().rsplit(")", 1)[-1] == key:
                return oid
        return None

    def trigger(self, ev: Trigger) -> int:
        assert self.vm is not None
        try:
            cond = condition_code(ev.condition)
        except KeyError as exc:
            self.engine.bus.decide(
                "starlancer.vm", "TriggerIgnored", reason=str(exc), subject=str(ev.subject)
            )
            return 0
        oid = self.resolve_subject(ev.subject)
        if oid is None:
            self.engine.bus.decide(
                "starlancer.vm",
                "TriggerIgnored",
                subject=str(ev.subject),
                reason="no object of that name or ID",
            )
            return 0
        return self.vm.fire(cond, oid, tuple(ev.locals) if ev.locals else None, ev.component)

    def say(self, ev: Say) -> str:
        """A line from a port or a scenario (see :class:`~audio.games.starlancer.events.Say`)."""
        assert self.radio is not None
        kind, _, value = ev.speaker.partition(":")
        who: str | int = value or ev.ship
        line = Line(
            ev.speech,
            flags=int(ev.film_flags),
            head=int(ev.head),
            source="port",
            expiry=-1 if ev.expiry < 0 else self.radio.now + int(ev.expiry),
        )
        if kind == "ship":
            slot = self._ship_slot(who)
            if slot is None:
                problem = self.check_event(ev)
                self.engine.bus.decide(
                    "starlancer.radio",
                    "BadEvent",
                    reason=problem[1] if problem else f"no ship {who!r}",
                    file=ev.speech,
                )
                return "BadEvent"
            line.speaker, line.speaker_kind, line.speaker_object = (
                self.mission.ship_name(slot) or f"ship({slot})",
                "ship",
                slot,
            )
            line.film = f"pilots\\face{self.mission.ships[slot].pilot:03d}_{ev.head}.fm8"
        elif kind == "pilot":
            n = int(value) if value else int(ev.pilot)
            line.speaker, line.speaker_kind, line.speaker_object = (
                self.pilot_names.get(n, f"pilot {n}"),
                "pilot",
                0xFFFF + n,
            )
            line.film = f"pilots\\face{n & 0xFF:03d}_{ev.head}.fm8"
        else:
            line.speaker_object = NOBODY
        if ev.mode not in MODES:
            self.engine.bus.decide(
                "starlancer.radio", "BadEvent", reason=f"mode {ev.mode!r} (now|queued|if_idle)"
            )
            return "BadEvent"
        if ev.remark:
            return self.radio.remark(line, ev.remark, ev.mode)
        return self.radio.say(line, ev.mode)

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """``(field, problem)`` when a :class:`Say` names a ship the mission does not have (with
        the closest of its ship names); None otherwise."""
        if isinstance(event, Say):
            kind, _, value = event.speaker.partition(":")
            who: str | int = value or event.ship
            if kind == "ship" and self._ship_slot(who) is None:
                full = [n for i in range(len(self.mission.ships)) if (n := self.mission.ship_name(i))]
                names = full + [n.partition(")")[2] for n in full if n.startswith("(") and ")" in n]
                field = "speaker" if value else "ship"
                return field, f"no ship {who!r} in the mission{did_you_mean(str(who), names)}"
            hog = self.bank.hog if self.bank is not None else None
            if event.speech and hog is not None and hog.find(member_name(event.speech)) is None:
                lines = [n.lower() for n in hog.names()]  # names match case-insensitively
                close = did_you_mean(member_name(event.speech).lower(), lines)
                return "speech", f"no speech line {event.speech!r} in {hog.path}{close}"
        return None

    def _ship_slot(self, who: str | int) -> int | None:
        if isinstance(who, int) or (isinstance(who, str) and who.isdigit()):
            n = int(who)
            return n if 0 <= n < len(self.mission.ships) else None
        oid = self.resolve_subject(str(who))
        return next((i for i, s in enumerate(self.mission.ships) if s.object_id == oid), None)

    # -- port queries ------------------------------------------------------------------------
    def film_playing(self) -> bool:
        """The comms window shows a film (what ``WaitForMovie`` waits on; pre-roll included)."""
        return self.radio is not None and self.radio.film_playing()

    def speech_playing(self) -> bool:
        """The speech voice plays (what ``WaitForSpeech`` waits on)."""
        return self.radio is not None and self.radio.speech_playing()

    speaking = speech_playing

    def busy(self) -> bool:
        """``radio_busy``: speech playing or lines queued."""
        return self.radio is not None and self.radio.busy()

    # -- UIs ---------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, list[str]]:
        """Panels for a live UI: pending threads, the window, the speech voice, the queue."""
        if self.radio is None or self.vm is None:
            return {}
        threads = []
        for t in self.vm.running():
            state = "parked" if t.parked else (f"sleeps until {t.wake} s" if t.wake is not None else "runs")
            threads.append(f"[{t.slot}] {t.label} @{t.ip - t.block} {state}")
        return {
            "threads": threads or ["(none)"],
            **self.radio.snapshot(),
            "clock": [f"script clock {self.vm.clock} s, tick {self.tick_now}"],
        }

    def summary(self, decisions: Any) -> str:
        """Outcome counts of the radio's and the VM's decisions."""
        per: dict[str, Counter[str]] = {}
        for d in decisions:
            if d.system.startswith("starlancer."):
                per.setdefault(d.system, Counter())[d.outcome] += 1
        return "\n".join(
            f"  {s:<18s} " + ", ".join(f"{k} {n}" for k, n in c.most_common()) for s, c in sorted(per.items())
        )


def scenario_events() -> dict[str, Any]:
    """Scenario ``[[event]]`` builders (see :mod:`audio.games.starlancer.scenario`)."""
    from audio.games.starlancer import scenario

    return scenario.scenario_events()


def system_from_scenario(section: dict[str, Any], ctx: Any) -> StarlancerSystem:
    """Build the system for a ``[starlancer]`` section (see :mod:`audio.games.starlancer.scenario`)."""
    from audio.games.starlancer import scenario

    return scenario.system_from_scenario(section, ctx)
