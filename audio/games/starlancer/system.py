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
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from audio.core.bus import Event, EventBus
from audio.core.crt import MsvcRand
from audio.core.errors import FormatError
from audio.core.outcomes import CUT, END, QUIET, REFUSED, START, STATE, Outcome
from audio.core.plugin import NEVER, GameSystem, PlayKey
from audio.core.schema import did_you_mean
from audio.games.starlancer.events import Gate, Happen, Reset, Say, Trigger
from audio.games.starlancer.formats.dte import Dte
from audio.games.starlancer.formats.hog import Hog, member_name
from audio.games.starlancer.radio.radio import MODES, SPEECH_RATE, TICK_HZ, Line, Radio, RadioSettings
from audio.games.starlancer.radio.remarks import Remarks
from audio.games.starlancer.script.commands import condition_code
from audio.games.starlancer.script.triggers import Event as VmEvent
from audio.games.starlancer.script.values import Ref
from audio.games.starlancer.script.vm import Vm, VmSettings
from audio.games.starlancer.script.vm_commands import create_ship, speaker_line

__all__ = [
    "RNG_STREAM",
    "SYSTEM",
    "SpeechBank",
    "StarlancerOutcome",
    "StarlancerSystem",
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


class StarlancerOutcome(Outcome):
    """Every decision the Starlancer system logs, as ``starlancer.radio`` (the comms queue) or
    ``starlancer.vm`` (the mission script)."""

    # the radio
    Queued = "Queued", QUIET
    Said = "Said", QUIET
    Started = "Started", START
    Ended = "Ended", END
    Interrupted = "Interrupted", CUT
    Dropped = "Dropped", REFUSED
    Expired = "Expired", REFUSED
    Gated = "Gated", REFUSED
    Missing = "Missing", REFUSED
    MissingSpeech = "MissingSpeech", REFUSED
    BadEvent = "BadEvent", REFUSED
    WindowClosed = "WindowClosed", QUIET
    FilmEnded = "FilmEnded", QUIET
    Static = "Static", STATE
    Gate = "Gate", STATE
    Reset = "Reset", STATE
    Reported = "Reported", QUIET
    Remark = "Remark", QUIET
    Silent = "Silent", REFUSED
    # the script
    ThreadStarted = "ThreadStarted", QUIET
    ThreadEnded = "ThreadEnded", QUIET
    ThreadRefused = "ThreadRefused", REFUSED
    ThreadError = "ThreadError", REFUSED
    Wait = "Wait", QUIET
    TimerCreated = "TimerCreated", QUIET
    TimerDestroyed = "TimerDestroyed", QUIET
    TimerFired = "TimerFired", QUIET
    TriggerFired = "TriggerFired", STATE
    TriggerResumed = "TriggerResumed", STATE
    TriggerIgnored = "TriggerIgnored", REFUSED
    TriggerState = "TriggerState", STATE
    RandomBranch = "RandomBranch", STATE
    GlobalSet = "GlobalSet", QUIET
    Spawn = "Spawn", QUIET
    Subtitle = "Subtitle", QUIET
    TerminateMission = "TerminateMission", STATE
    Skipped = "Skipped", QUIET
    StackUnderflow = "StackUnderflow", REFUSED
    StackOverflow = "StackOverflow", REFUSED
    DivideByZero = "DivideByZero", REFUSED
    InstructionCap = "InstructionCap", REFUSED
    NoProgress = "NoProgress", REFUSED
    BudgetExceeded = "BudgetExceeded", REFUSED
    TimerRefused = "TimerRefused", REFUSED
    DirectorCam = "DirectorCam", STATE
    SetPilot = "SetPilot", STATE
    ShipCreated = "ShipCreated", STATE


class StarlancerSystem(GameSystem):
    """The Starlancer radio system (``frame_rate = 100``)."""

    name = SYSTEM
    frame_rate = TICK_HZ
    outcomes = StarlancerOutcome

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
        created: tuple[str, ...] = (),
        hostile: tuple[str, ...] = (),
        training: bool = False,
        player_voice: str = "male",
        rescuer: str = "",
    ) -> None:
        self.mission, self.bank = mission, bank
        self.radio_settings, self.vm_settings = radio or RadioSettings(), vm or VmSettings()
        if self.vm_settings.frame_ticks < 1:
            raise ValueError("frame_ticks must be >= 1")
        self.globals_, self.pilot_names = dict(globals_ or {}), dict(pilot_names or {})
        self.graph, self.seed, self.static_level, self.auto_start = graph, seed, static_level, start
        self.created, self.hostile, self.training = tuple(created), tuple(hostile), training
        if player_voice not in ("male", "female"):
            raise ValueError(f"player_voice {player_voice!r}: expected male or female")
        self.player_voice, self.rescuer = player_voice, rescuer
        self._slots: dict[str, int | None] = {}
        if rescuer and self._ship_slot(rescuer) is None:
            names = [mission.ship_name(i) or "" for i in range(len(mission.ships))]
            hint = did_you_mean(rescuer, names)
            raise ValueError(f"rescuer {rescuer!r}: no such ship in the mission{hint}")
        self.remarks: Remarks | None = None
        self.engine: Any = None
        self.radio: Radio | None = None
        self.vm: Vm | None = None
        self.started = False
        self.tick_now = 0
        self.static_loop = np.zeros(1, np.float32)

    # -- the game contract -------------------------------------------------------------------
    @property
    def graphs(self) -> tuple[str, ...]:
        """The voice graph its lines play through (loaded by :meth:`Engine.prepare`)."""
        return (self.graph,)

    def play_key(self, detail: Mapping[str, Any]) -> PlayKey:
        """A radio line's ``(source, file, None)``: the clip is the speech ``file`` it names, the
        event the script part or remark that said it (``"part Start"``, ``"remark:kill"``); a
        ``.ut`` file has one take."""
        return detail.get("source"), detail.get("file"), None

    def attach(self, engine: Any) -> None:
        self.engine = engine
        seed = engine.rng.seed32(RNG_STREAM) if self.seed is None else self.seed
        self.rand = MsvcRand(seed)
        if self.radio_settings.static_bed:  # ours, opt-in: the game's static.fm8 has no sound
            noise = np.random.default_rng(seed).standard_normal(int(STATIC_LOOP_S * SPEECH_RATE))
            crackle = np.repeat(
                np.random.default_rng(seed + 1).random(int(STATIC_LOOP_S * 50)) ** 3, SPEECH_RATE // 50
            )
            self.static_loop = (0.25 * noise[: len(crackle)] * (0.3 + crackle)).astype(np.float32)
        self.radio = Radio(_Presenter(self), self._decider("starlancer.radio"), self.radio_settings)
        self._new_vm()
        engine.bus.subscribe(self, [Trigger, Say, Gate, Reset, Happen])

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
        self.remarks = self._new_remarks()
        for who in self.hostile:
            k = self._ship_slot(who)
            if k is not None:
                self.vm.ships[k].hostile = True
        for who in self.created:
            k = self._ship_slot(who)
            if k is not None:
                create_ship(self.vm, k, "created at mission start (scenario)")

    def _new_remarks(self) -> Remarks:
        assert self.vm is not None
        rescuer = self._ship_slot(self.rescuer) if self.rescuer else None
        return Remarks(
            self.vm,
            self._decider("starlancer.radio"),
            self.training,
            player_voice=self.player_voice,
            rescuer=rescuer,
        )

    def _decider(self, system: str) -> Callable[..., Any]:
        def decide(outcome: str, **detail: Any) -> None:
            self.engine.bus.decide(system, StarlancerOutcome.named(outcome), tick=self.tick_now, **detail)

        return decide

    def tick(self, frame: int, engine: Any) -> None:
        assert self.radio is not None and self.vm is not None and self.remarks is not None, "attach() first"
        self.tick_now = frame
        if not self.started:
            self.started = True
            self.radio.reset()
            if self.auto_start:
                self.vm.mission_start()
        self.radio.tick(frame)
        k = self.vm_settings.frame_ticks
        if frame % k == 0:
            if frame or not self.auto_start:  # at tick 0 the mission start has just run its pass
                self.vm.idle(frame - k)  # the frames skipped since the last (next_tick)
                self.vm.frame(frame)
            self.radio.frame(frame)
            self.radio.step_reports(frame, self._report_silent)
            self.remarks.frame(frame, over=self.vm.terminated)

    def next_tick(self, frame: int) -> int:
        """The first game tick, ``frame`` or later, that can change anything: where the radio's
        window or speech changes (:meth:`Radio.next_change`), or the first frame (every
        ``frame_ticks`` ticks) whose VM pass (:meth:`Vm.next_change`), ``radio_frame``
        (:meth:`Radio.next_frame_change`), reports or remarks (:meth:`Remarks.next_change`) can;
        every tick until the first. The skipped frames only catch the script clock up
        (:meth:`Vm.idle`)."""
        assert self.radio is not None and self.vm is not None and self.remarks is not None, "attach() first"
        if not self.started:
            return frame
        k = self.vm_settings.frame_ticks
        due = [
            self.vm.next_change(frame),
            self.radio.next_frame_change(frame),
            self.remarks.next_change(frame, over=self.vm.terminated),
        ]
        first = min((d for d in due if d is not None), default=None)
        vm_frame = None if first is None else -(-first // k) * k
        radio = self.radio.next_change(frame)
        return min((d for d in (vm_frame, radio) if d is not None), default=NEVER)

    def _report_silent(self, line: Line) -> str:
        assert self.vm is not None
        if line.speaker_object == 0x3E9:
            return "object 0x3E9 is never said"
        ship = line.speaker_object if line.speaker_kind == "ship" else -1
        if 0 <= ship < len(self.vm.ships) and self.vm.ships[ship].exploding:
            return "the ship is exploding"
        return ""

    def handle(self, event: Event, bus: EventBus) -> None:
        assert self.radio is not None and self.vm is not None, "attach() first"
        if self.started:  # the tick its decisions name and the script clock, as if every tick had run
            self.tick_now = self.radio.now = max(self.tick_now, self.engine.frame_of(self))
            self.vm.idle(self.tick_now)
        if isinstance(event, Trigger):
            self.trigger(event)
        elif isinstance(event, Say):
            self.say(event)
        elif isinstance(event, Gate):
            try:
                self.radio.set_gate(event.gate, event.disabled)
            except ValueError as exc:
                self.engine.bus.decide("starlancer.radio", StarlancerOutcome.BadEvent, reason=str(exc))
        elif isinstance(event, Reset):
            self.reset(event.restart)
        elif isinstance(event, Happen):
            self.happen(event)

    # -- actions ----------------------------------------------------------------------------
    def reset(self, restart: bool = False) -> None:
        """``radio_reset``; ``restart`` also restarts the script (new VM, the start part runs)."""
        assert self.radio is not None and self.vm is not None
        self.radio.reset()
        self.remarks = self._new_remarks()  # state cleared
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
                "starlancer.vm", StarlancerOutcome.TriggerIgnored, reason=str(exc), subject=str(ev.subject)
            )
            return 0
        oid = self.resolve_subject(ev.subject)
        if oid is None:
            self.engine.bus.decide(
                "starlancer.vm",
                StarlancerOutcome.TriggerIgnored,
                subject=str(ev.subject),
                reason="no object of that name or ID",
            )
            return 0
        values = tuple(self._value(v) for v in ev.locals[:5]) if ev.locals else (self._subject_ref(oid),)
        values = values + (0,) * (5 - len(values))
        return int(self.vm.triggers.post(VmEvent(cond, oid, values, ev.component, ev.groups)))

    def _subject_ref(self, oid: int) -> Ref | int:
        k = next((i for i, s in enumerate(self.mission.ships) if s.object_id == oid), None)
        return Ref("ship", k) if k is not None else oid

    def _value(self, v: int | str) -> Ref | int:
        """An event value: a number, or a ship named (``ship:NAME`` or a bare ship name)."""
        if isinstance(v, int):
            return v & 0xFFFFFFFF
        k = self._ship_slot(v.removeprefix("ship:"))
        return Ref("ship", k) if k is not None else 0xFFFFFFFF

    def happen(self, ev: Happen) -> None:
        """A world event (see :class:`~audio.games.starlancer.events.Happen`)."""
        assert self.vm is not None and self.remarks is not None
        vm, rm, now = self.vm, self.remarks, self.tick_now
        k = self._ship_slot(ev.ship) if ev.ship != "" else 0
        o = self._ship_slot(ev.other) if ev.other != "" else None
        if k is None or (ev.other != "" and o is None):
            self._bad(ev, f"no ship {ev.ship if k is None else ev.other!r}")
            return
        oid = self.mission.ships[k].object_id if 0 <= k < len(self.mission.ships) else None

        def post(c: int, vals: tuple[Any, ...]) -> None:
            if oid is not None:
                vm.triggers.post(VmEvent(c, oid, vals + (0,) * (5 - len(vals))))

        if ev.what == "create":
            create_ship(vm, k, "created (event)")
        elif ev.what == "explode" and ev.kind not in ("", "pod"):
            self._bad(ev, f"explode kind {ev.kind!r} ('' the ship | pod its ejected pilot's pod)")
        elif ev.what == "explode" and ev.kind == "pod":
            rm.pod_exploded()
        elif ev.what == "explode":
            vm.ships[k].exploding = True
            post(1, (Ref("ship", o) if o is not None else 0xFFFFFFFF, Ref("ship", k)))
        elif ev.what == "kill":
            post(1, (Ref("ship", 0), Ref("ship", k)))
            rm.kill(k, ev.kind or "fighter", now)
        elif ev.what == "hit":
            att = Ref("ship", o) if o is not None else 0xFFFFFFFF
            post(0, (att, ev.value, ev.value, Ref("ship", k), 0xFFFFFFFF))
            if o is not None and k < vm.s.players and vm.ships[o].hostile:
                rm.hit(o, now)
        elif ev.what in ("missile", "missile_clear"):
            rm.missile_homing = ev.what == "missile"
        elif ev.what == "eject":
            rm.eject(k, now)
        elif ev.what == "eject_call":
            rm.eject_call(now)
        elif ev.what == "launch":
            post(2, (Ref("ship", k),))
            rm.launch(ev.kind or "reliant", now)
        elif ev.what == "lost":
            rm.lost(k, now)
        elif ev.what == "wingman":
            if ev.kind not in ("attack", "backoff", "help", "status", "scold", "praise", "taunt"):
                self._bad(ev, f"wingman order {ev.kind!r} (attack|backoff|help|status|scold|praise|taunt)")
                return
            rm.wingman(k, ev.kind, ev.busy, ev.value, now)
        elif ev.what == "variable":
            if ev.kind not in rm.vars:
                self._bad(ev, f"variable {ev.kind!r} ({'|'.join(rm.vars)})")
                return
            rm.vars[ev.kind] = ev.value
        elif ev.what == "key":
            (vm.keys.add if ev.busy else vm.keys.discard)(ev.value)
        elif ev.what == "jumping":
            vm.moving.add(k)
        elif ev.what == "jumped":
            vm.moving.discard(k)
            post(9, (Ref("ship", k),))
            if k < vm.s.players:
                vm.last_jump = vm.clock
        elif ev.what == "land":
            rm.permission_to_land(ev.kind or "reliant", ev.value, now)
        elif ev.what == "backup":
            if rm.request_backup(ev.kind or "reliant", ev.busy, now):
                post(0x0D, ())
        else:
            self._bad(ev, f"unknown happening {ev.what!r}")

    def _bad(self, ev: Happen, why: str) -> None:
        self.engine.bus.decide("starlancer.vm", StarlancerOutcome.BadEvent, what=ev.what, reason=why)

    def say(self, ev: Say) -> str:
        """A line from a port or a scenario (see :class:`~audio.games.starlancer.events.Say`): a
        ship speaks only once created and while not exploding; films and names from the faces."""
        assert self.radio is not None and self.vm is not None
        kind, _, value = ev.speaker.partition(":")
        who: str | int = value or ev.ship
        flags, head = int(ev.film_flags), int(ev.head)
        if kind == "ship":
            slot = self._ship_slot(who)
            if slot is None:
                problem = self.check_event(ev)
                self.engine.bus.decide(
                    "starlancer.radio",
                    StarlancerOutcome.BadEvent,
                    reason=problem[1] if problem else f"no ship {who!r}",
                    file=ev.speech,
                )
                return "BadEvent"
            st = self.vm.ships[slot]
            why = (
                "the ship is a stand-in (never created)"
                if not st.created
                else ("the ship is exploding" if st.exploding else ("no pilot" if st.pilot == 0xFF else ""))
            )
            if why:
                self.engine.bus.decide(
                    "starlancer.radio", StarlancerOutcome.Silent, file=ev.speech, reason=why
                )
                return "Silent"
            line = speaker_line(self.vm, st.pilot, head, ev.speech, flags)
            line.speaker_kind, line.speaker_object = "ship", slot
        elif kind == "pilot":
            if value and not value.isdigit():
                self.engine.bus.decide(
                    "starlancer.radio", StarlancerOutcome.BadEvent, reason=f"pilot {value!r} is not a number"
                )
                return "BadEvent"
            n = int(value) if value else int(ev.pilot)
            line = speaker_line(self.vm, n & 0xFFFF, head, ev.speech, flags)
        else:
            line = Line(ev.speech, flags=flags, head=head)
        line.source = "port"
        line.expiry = -1 if ev.expiry < 1 else self.radio.now + int(ev.expiry)
        if ev.mode not in MODES:
            self.engine.bus.decide(
                "starlancer.radio",
                StarlancerOutcome.BadEvent,
                reason=f"mode {ev.mode!r} (now|queued|if_idle)",
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
        if isinstance(event, Happen):
            for field, who in (("ship", event.ship), ("other", event.other)):
                if who != "" and self._ship_slot(who) is None:
                    names = [n for i in range(len(self.mission.ships)) if (n := self.mission.ship_name(i))]
                    return field, f"no ship {who!r} in the mission{did_you_mean(str(who), names)}"
        return None

    def _ship_slot(self, who: str | int) -> int | None:
        if isinstance(who, int) or (isinstance(who, str) and who.isdigit()):
            n = int(who)
            return n if 0 <= n < len(self.mission.ships) else None
        if who not in self._slots:  # the mission's names do not change: look each up once
            oid = self.resolve_subject(str(who))
            self._slots[who] = next((i for i, s in enumerate(self.mission.ships) if s.object_id == oid), None)
        return self._slots[who]

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
        now = self.engine.frame_of(self)
        threads = []
        for t in self.vm.running():
            state = "interrupted" if t.interrupted else (f"sleeps until {t.wake} s" if t.wake else "runs")
            threads.append(f"[{t.slot}] {t.label} @{t.ip - t.block} {state}")
        return {
            "threads": threads or ["(none)"],
            **self.radio.snapshot(),
            "clock": [f"script clock {self.vm.clock_at(now)} s, tick {now}"],
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
