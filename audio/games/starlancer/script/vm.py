"""The mission-script VM, as far as speech needs it (spec section 5).

Clocks: the script clock ``clock`` counts mission seconds (1 Hz); game ticks are 100 Hz; the VM
runs once per game frame (``frame_ticks`` ticks, a setting: the game's frame rate follows its
renderer). Thread pool: 32 slots, a new thread refused while 31 run. Each pass runs the threads in
slot order (one started during the pass in a later slot runs in the same pass), skipping parked
(InterruptTriggerCode) and sleeping ones. A thread runs until a handler yields, it returns at call
depth 0, or it hits the per-frame instruction cap (logged; it resumes next frame).

Speech commands act on the radio (``CommsFromShip/Pilot(Once)``, ``PlayCommsMovie``,
``PlaySpeech``, the gates); ``Wait`` sleeps on the script clock (wake when ``clock >= wake``:
the comparison is a setting); ``WaitForSpeech``/``WaitForMovie`` re-run each frame until their
condition clears; ``CreateTimer``/``DestroyTimer``, ``SetTriggerState``, ``InterruptTriggerCode``,
``TerminateMission`` and ``KillAllScriptExecutionExecptMe`` are run; every other command is logged
as ``Skipped`` with its arguments (result 0). ``random_branch`` rolls ``rand() % 100`` on MSVC's
``rand()`` seeded from the engine's RNG.

Our choices for unknowns (settings): a trigger thread's locals are ``(subject ship, 0, 0, 0, 0)``
unless the event gives them; ``WaitForKey``/``WaitForJumpOrLaunch`` are skipped (their
conditions never happen here); a value pushed as a plain number and used as a ship is ship slot n.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from audio.games.starlancer.formats.dte import NONE16, Dte
from audio.games.starlancer.radio.radio import FLAG_LOOP, FLAG_PALETTE, NOBODY, Line, Radio
from audio.games.starlancer.script import vm_ops
from audio.games.starlancer.script.commands import COMMANDS, condition_name
from audio.games.starlancer.script.opcodes import OPCODES
from audio.games.starlancer.script.values import MAX_THREADS, U32, Ref, Thread, show, u32

__all__ = ["MAX_THREADS", "Ref", "Thread", "Vm", "VmSettings"]


@dataclass(frozen=True)
class VmSettings:
    """Documented settings (the game's values where known)."""

    frame_ticks: int = 4
    wake_compare: str = ">="
    instruction_cap: int = 10_000
    refuse_at: int = 31
    stack_dwords: int = 32
    comms_yield: bool = True


class _Stop(Exception):
    """End the running thread (error or TerminateMission)."""


class Vm:
    """Runs a mission's script against a :class:`Radio`; ``decide(outcome, **detail)`` logs."""

    def __init__(
        self,
        dte: Dte,
        radio: Radio,
        decide: Callable[..., Any],
        rand: Callable[[], int],
        settings: VmSettings | None = None,
        globals_: dict[int, int] | None = None,
        pilot_names: dict[int, str] | None = None,
    ) -> None:
        self.dte, self.radio, self.decide, self.rand = dte, radio, decide, rand
        self.s = settings or VmSettings()
        self.pilot_names = dict(pilot_names or {})
        self.globals = [g.value for g in dte.globals]
        for k, v in (globals_ or {}).items():
            self.globals[k] = v & U32
        self.array = [0] * 64
        self.armed = [bool(t.armed) for t in dte.triggers]
        self.counts = [t.count_a for t in dte.triggers]
        self.slots: list[Thread | None] = [None] * MAX_THREADS
        self.by_trigger: dict[int, Thread] = {}
        self.timers: dict[int, list[int]] = {}  # id -> [part, period, firings left (0 forever), countdown]
        self.clock = 0
        self.terminated = False

    # -- threads ----------------------------------------------------------------------------
    def running(self) -> list[Thread]:
        return [t for t in self.slots if t is not None and not t.done]

    def _new(
        self,
        label: str,
        block: int,
        trigger: int | None = None,
        args: list[Any] | None = None,
        locals_: tuple[Any, ...] = (0, 0, 0, 0, 0),
    ) -> Thread | None:
        if self.terminated:
            return None
        if len(self.running()) >= self.s.refuse_at:
            self.decide("ThreadRefused", routine=label, reason=f"{self.s.refuse_at} threads running")
            return None
        slot = next(i for i, t in enumerate(self.slots) if t is None or t.done)
        script = self.dte.script
        if not 0 <= block <= len(script) - 2:
            self.decide("ThreadError", routine=label, reason=f"block 0x{block:X} outside the script")
            return None
        length = struct.unpack_from("<H", script, block)[0]
        t = Thread(
            slot,
            label,
            block,
            min(block + length, len(script)),
            block + 2,
            trigger,
            tuple(locals_) + (0,) * (5 - len(locals_)),
            list(args or []),
        )
        self.slots[slot] = t
        self.decide("ThreadStarted", routine=label, slot=slot)
        return t

    def start_part(self, p: int, args: list[Any] | None = None, why: str = "") -> Thread | None:
        if not 0 <= p < len(self.dte.parts) or self.dte.parts[p].start == NONE16:
            self.decide("ThreadError", routine=f"part{p}", reason=f"no part {p} {why}".strip())
            return None
        return self._new(f"part {self.dte.part_name(p)}", self.dte.parts[p].start * 2, args=args)

    def mission_start(self) -> None:
        """Run the start part(s) (flags bit 0) at once."""
        for p in self.dte.start_parts():
            t = self.start_part(p, why="(start part)")
            if t is not None:
                self.run_thread(t)

    def fire(
        self, condition: int, oid: int, locals_: tuple[Any, ...] | None = None, component: int = 0xFF
    ) -> int:
        """Raise ``condition`` on object ``oid``; returns how many triggers matched."""
        objs = self.dte.objects
        if not 0 <= oid < len(objs):
            self.decide(
                "TriggerIgnored", condition=condition_name(condition), subject=oid, reason="no such object"
            )
            return 0
        o, hits = objs[oid], 0
        for i in range(o.first_trigger, min(o.first_trigger + o.trigger_count, len(self.dte.triggers))):
            tr = self.dte.triggers[i]
            if tr.condition != condition or tr.link == NONE16:
                continue
            if tr.qualifier != 0xFF and tr.qualifier != component:
                continue
            if not self.armed[i]:
                self.decide(
                    "TriggerIgnored",
                    trigger=i,
                    condition=condition_name(condition),
                    subject=self.dte.object_name(oid),
                    reason="disarmed",
                )
                continue
            hits += 1
            self._fire_one(i, oid, locals_)
        if not hits:
            self.decide(
                "TriggerIgnored",
                condition=condition_name(condition),
                subject=self.dte.object_name(oid),
                reason="no armed trigger with that condition in the object's slice",
            )
        return hits

    def _fire_one(self, i: int, oid: int, locals_: tuple[Any, ...] | None) -> None:
        tr = self.dte.triggers[i]
        subj = self.dte.object_name(oid)
        old = self.by_trigger.get(i)
        if old is not None and not old.done:
            if old.parked:
                old.parked = False
                self.decide("TriggerResumed", trigger=i, subject=subj, routine=old.label)
            else:
                self.decide("TriggerIgnored", trigger=i, subject=subj, reason="its thread is still running")
            return
        if tr.repeat == 0:
            self.armed[i] = False
        elif tr.repeat == 2:
            self.counts[i] -= 1
            if self.counts[i] <= 0:
                self.armed[i] = False
        if locals_ is None:
            ship = next((k for k, s in enumerate(self.dte.ships) if s.object_id == oid), None)
            locals_ = (Ref("ship", ship) if ship is not None else oid, 0, 0, 0, 0)
        t = self._new(f"trigger {i}", tr.link * 2, trigger=i, locals_=locals_)
        self.decide(
            "TriggerFired",
            trigger=i,
            condition=condition_name(tr.condition),
            subject=subj,
            deferred=bool(tr.deferred),
        )
        if t is None:
            return
        self.by_trigger[i] = t
        if not tr.deferred:
            self.run_thread(t)

    # -- clocks -----------------------------------------------------------------------------
    def second(self) -> None:
        """The 1 Hz script clock ticks: count timers down, start their parts."""
        self.clock += 1
        for tid in list(self.timers):
            tm = self.timers[tid]
            tm[3] -= 1
            if tm[3] <= 0:
                self.decide("TimerFired", timer=tid, part=self.dte.part_name(tm[0]))
                self.start_part(tm[0], why="(timer)")
                tm[3] = max(1, tm[1])
                if tm[2] > 0:
                    tm[2] -= 1
                    if tm[2] == 0:
                        del self.timers[tid]

    def run_frame(self) -> None:
        """One scheduler pass over the 32 slots."""
        for slot in range(MAX_THREADS):
            t = self.slots[slot]
            if t is None or t.done or t.parked:
                continue
            if t.wake is not None and not (
                self.clock >= t.wake if self.s.wake_compare == ">=" else self.clock > t.wake
            ):
                continue
            t.wake = None
            self.run_thread(t)

    # -- the interpreter --------------------------------------------------------------------
    def run_thread(self, t: Thread) -> None:
        """Run ``t`` until it yields, ends, or hits the instruction cap."""
        for _ in range(self.s.instruction_cap):
            if t.done:
                return
            try:
                if not vm_ops.step(self, t):
                    return
            except _Stop as exc:
                self.end(t, str(exc))
                return
        self.decide(
            "InstructionCap",
            routine=t.label,
            cap=self.s.instruction_cap,
            reason="instruction cap per frame reached: resumes next frame",
        )

    def end(self, t: Thread, reason: str = "returned") -> None:
        t.done = True
        self.decide("ThreadEnded", routine=t.label, slot=t.slot, reason=reason)

    def stop(self, msg: str) -> None:
        raise _Stop(msg)

    # -- speech commands ---------------------------------------------------------------------
    def speaker_ship(self, v: Any) -> tuple[str, int, int]:
        """(name, ship slot, pilot) of a ship argument; nobody for null or unknown values."""
        n = (
            v.n
            if isinstance(v, Ref) and v.kind in ("ship", "component")
            else (v if isinstance(v, int) else -1)
        )
        if not 0 <= n < len(self.dte.ships):
            return "nobody", NOBODY, 0xFF
        return self.dte.ship_name(n) or f"ship({n})", n, self.dte.ships[n].pilot

    def comms(self, t: Thread, idx: int, args: list[Any]) -> None:
        flags = 6 if idx in (0x29, 0x2A) else FLAG_LOOP | FLAG_PALETTE
        speech = args[2] if isinstance(args[2], str) else ""
        head = u32(args[1])
        if idx in (0x18, 0x29):
            name, slot, pilot = self.speaker_ship(args[0])
            kind, obj = ("ship", slot) if slot != NOBODY else ("nobody", NOBODY)
        else:
            pilot = u32(args[0])
            name = self.pilot_names.get(pilot, f"pilot {pilot}")
            kind, obj = "pilot", 0xFFFF + pilot
        film = "" if kind == "nobody" else f"pilots\\face{pilot & 0xFF:03d}_{head}.fm8"
        line = Line(speech, name, kind, obj, film, flags, -1, head, source=t.label)
        self.radio.say(line, "now")

    def comms_movie(self, t: Thread, args: list[Any]) -> None:
        film = f"pilots\\{args[0]}" if isinstance(args[0], str) else ""
        speech = args[1] if isinstance(args[1], str) else ""
        self.radio.say(
            Line(speech, "nobody", "nobody", NOBODY, film, FLAG_LOOP | FLAG_PALETTE, source=t.label), "now"
        )

    def skipped(self, t: Thread, idx: int, args: list[Any]) -> None:
        c = COMMANDS[idx]
        self.decide(
            "Skipped",
            routine=t.label,
            command=c.name,
            args=[show(a) for a in args],
            reason="not part of the speech emulation",
        )


def _op_names() -> dict[int, str]:
    return {c: o.mnemonic for c, o in OPCODES.items()}
