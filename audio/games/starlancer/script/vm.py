"""The mission-script VM by the engine's rules (spec section 11).

Clocks: game ticks are 100 Hz; the script clock ``clock`` counts mission seconds (clock N begins at
tick 100 N); the VM runs once per game frame (``frame_ticks`` ticks, a setting). One frame
(:meth:`Vm.frame`, 11.1): the clock catches up (``ticked`` set for each whole second), the queued
events are raised (then on the ship's flight group and squads), the threads run (:meth:`run_threads`),
then, only when the clock ticked, the timers (:meth:`run_timers`).

Threads (11.2): 32 slots, a start refused while 31 run. A pass runs as many slots as were alive when
it began (each non-free slot seen uses one, run or not), so a thread started during the pass in a
later slot runs while the count lasts. A thread runs until a command returns 0 (yield) or it returns
at call depth 0. ``Wait n`` sets ``wake = clock + n``; the thread runs again once ``clock > wake``
(``wake_compare``, a setting kept for experiments: ``>=`` is the old guess); wake 0 = not waiting.
Deferred starts (a trigger with ``+0x16 != 0``, every ``spawn_part``, every timer) run at the next
pass; a trigger with ``+0x16 == 0`` and the start parts run at once.

Timers (11.4): 16 entries; ``CreateTimer`` destroys every timer of its id first, makes none when the
table is full (result 1 anyway), countdown = period (+1 for period 1); after the threads, in a frame
where the clock ticked, each live timer not fired at this clock counts down (u16) and fires at 0,
starting its part deferred.

Faults end the thread, logged (11.10, OpenReliant's fix; the game crashes): division by zero, stack
overflow (33rd dword) or underflow, an opcode with no handler, code, constants or records outside the
image, a local past the fifth, no frame, a store with no ``select_``, a command past the catalogue.

Budgets (ours: the game has none; each logged once when it first bites, then counted in
:attr:`Vm.budget_hits`): ``frame_budget`` instructions per frame across all threads (the rest wait
for the next frame); ``thread_budget`` instructions of one thread without yielding: the game would
hang there (a self-looping ``random_branch``, a call fan-out), so the thread is ended with one
``NoProgress`` decision; ``decisions_per_thread`` decisions per thread per frame (the rest are
counted, not logged); the timer table's 16 slots (the game's) and the 1,000-event queue (the game's;
past it events are dropped, OpenReliant's fix).
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from audio.games.starlancer.formats.dte import NONE16, Dte
from audio.games.starlancer.radio.radio import Radio
from audio.games.starlancer.script import vm_ops
from audio.games.starlancer.script.triggers import Triggers
from audio.games.starlancer.script.values import (
    MAX_THREADS,
    MAX_TIMERS,
    U32,
    Ref,
    ShipState,
    Thread,
    Timer,
)
from audio.games.starlancer.script.vm_commands import waits

__all__ = [
    "MAX_THREADS",
    "MAX_TIMERS",
    "Ref",
    "ShipState",
    "Thread",
    "Timer",
    "Vm",
    "VmSettings",
]


@dataclass(frozen=True)
class VmSettings:
    """Documented settings: the game's values where known, ours (budgets) marked so."""

    frame_ticks: int = 4
    """Game ticks per frame (the game's frame rate follows its renderer): ours."""
    wake_compare: str = ">"
    """``>`` the engine (11.3); ``>=`` kept for experiments."""
    refuse_at: int = 31
    stack_dwords: int = 32
    timers: int = MAX_TIMERS
    event_queue: int = 1000
    players: int = 1
    clear_locals: bool = False
    """[unknown] whether a thread not started by an event gets zeroed locals (OpenReliant: kept)."""
    frame_budget: int = 8_000
    """Ours: instructions per frame across all threads."""
    thread_budget: int = 2_000
    """Ours: instructions of one thread without yielding before it is ended (the game would hang)."""
    decisions_per_thread: int = 100
    """Ours: decisions a thread may log per frame."""
    mission: int = 99
    """Mission number (Moose's pilot, the 45th's film swap)."""


class _Stop(Exception):
    """End the running thread (a fault or TerminateMission)."""


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
        self.dte, self.radio, self._decide, self.rand = dte, radio, decide, rand
        self.s = settings or VmSettings()
        self.pilot_names = dict(pilot_names or {})
        self.globals = [g.value for g in dte.globals]
        for k, v in (globals_ or {}).items():
            if 0 <= k < len(self.globals):
                self.globals[k] = v & U32
        self.array = [0] * 64
        self.slots: list[Thread | None] = [None] * MAX_THREADS
        self.slot_locals: list[list[Any]] = [[0] * 5 for _ in range(MAX_THREADS)]
        self.timers: list[Timer | None] = [None] * max(0, self.s.timers)
        self.ships = [ShipState(pilot=s.pilot) for s in dte.ships]
        self.triggers = Triggers(self)
        self.clock = 0
        self.ticked = False
        self.terminated = False
        self.terminating = False
        self.last_jump: int | None = None
        self.keys: set[int] = set()
        self.director_cam = False
        self.moving: set[int] = set()
        self.budget_hits: Counter[str] = Counter()
        self.spent = 0
        self.current: Thread | None = None
        self.last_frame: int | None = None
        """Mission tick of the last :meth:`frame` (None: none ran yet)."""

    # -- logging and budgets ---------------------------------------------------------------
    def decide(self, outcome: str, **detail: Any) -> None:
        """Log a decision; a thread's own are capped per frame (``decisions_per_thread``)."""
        t = self.current
        if t is not None:
            t.logged += 1
            if t.logged > self.s.decisions_per_thread:
                self.budget(
                    "decisions_per_thread",
                    routine=t.label,
                    limit=self.s.decisions_per_thread,
                    reason="a thread's decisions past the per-frame cap are counted, not logged",
                )
                return
        self._decide(outcome, **detail)

    def budget(self, kind: str, **detail: Any) -> None:
        """A budget bit: logged once per kind (``BudgetExceeded``), counted every time."""
        self.budget_hits[kind] += 1
        if self.budget_hits[kind] == 1:
            self._decide("BudgetExceeded", budget=kind, **detail)

    def fault(self, t: Thread, why: str) -> None:
        """A fault ends ``t`` (OpenReliant's fix; the game crashes)."""
        self.end(t, f"fault: {why} (the game would crash; OpenReliant ends the thread)", "Fault")

    # -- threads ----------------------------------------------------------------------------
    def running(self) -> list[Thread]:
        return [t for t in self.slots if t is not None]

    def start_thread(
        self,
        label: str,
        block: int,
        *,
        trigger: int | None = None,
        args: list[Any] | None = None,
        slot: int | None = None,
        now: bool = False,
    ) -> Thread | None:
        """``vm_thread_start``: a thread on ``block`` in the first free slot; run at once if ``now``."""
        if self.terminated:
            return None
        if len(self.running()) + 1 > self.s.refuse_at:
            self.decide("ThreadRefused", routine=label, reason=f"{self.s.refuse_at} threads running")
            return None
        if slot is None:
            slot = next((i for i, t in enumerate(self.slots) if t is None), None)
            if slot is None:
                return None
        script = self.dte.script
        if not 0 <= block <= len(script) - 2:
            self.decide("ThreadError", routine=label, reason=f"block 0x{block:X} outside the script")
            return None
        length = struct.unpack_from("<H", script, block)[0]
        if trigger is None and self.s.clear_locals:
            self.slot_locals[slot] = [0] * 5
        t = Thread(
            slot,
            label,
            block,
            min(block + length, len(script)),
            block + 2,
            trigger,
            self.slot_locals[slot],
            args,
        )
        self.slots[slot] = t
        self.decide("ThreadStarted", routine=label, slot=slot, deferred=not now)
        if now:
            self.run_thread(t)
        return t

    def part_block(self, p: int) -> int | None:
        if not 0 <= p < len(self.dte.parts) or self.dte.parts[p].start == NONE16:
            return None
        return self.dte.parts[p].start * 2

    def start_part(
        self, p: int, args: list[Any] | None = None, why: str = "", now: bool = False
    ) -> Thread | None:
        block = self.part_block(p)
        if block is None:
            self.decide("ThreadError", routine=f"part{p}", reason=f"no part {p} {why}".strip())
            return None
        return self.start_thread(f"part {self.dte.part_name(p)}", block, args=args, now=now)

    def mission_start(self) -> None:
        """11.1: run each start part at once, then arm every trigger in some object's slice, then
        create the ships the scenario says exist from the start, then one pass of the threads."""
        for p in self.dte.start_parts():
            self.start_part(p, why="(start part)", now=True)
        self.triggers.arm_all()
        self.run_threads()

    # -- the frame ----------------------------------------------------------------------------
    def clock_at(self, ticks: int) -> int:
        """The clock a frame at every ``frame_ticks``-th tick up to mission tick ``ticks`` would
        have left: frames skipped since the last (:meth:`next_change`) only caught the clock up."""
        if self.last_frame is None:  # the first frame catches the clock up itself (``ticked``)
            return self.clock
        return max(self.clock, (ticks - ticks % self.s.frame_ticks) // 100)

    def idle(self, ticks: int) -> None:
        """The frames up to mission tick ``ticks`` that were skipped changed nothing
        (:meth:`next_change`) but the clock and the timers: catch them up as those frames would
        have (each live timer counts down once a second and none reached 0; ``ticked`` was
        cleared again)."""
        clock = self.clock_at(ticks)
        seconds = clock - self.clock
        if seconds:
            for tm in self.timers:
                if tm is not None:
                    assert (tm.countdown or 0x10000) > seconds, "a skipped frame would have fired a timer"
                    tm.countdown = (tm.countdown - seconds) & 0xFFFF
            self.clock = clock

    def next_change(self, ticks: int) -> int | None:
        """The first mission tick, ``ticks`` or later, from which :meth:`frame` can change
        anything if no event is posted, no thread is started and the radio's speech, film and
        the director's view stay as they are (those are asked again after such a change);
        None when only those can.

        A frame changes nothing when no event waits to be raised, no timer fires (11.4: each
        counts down once in the first frame of each second, from 0 through 65535), and every
        thread is held: by ``InterruptTriggerCode``, by a ``Wait`` whose second has not passed
        (11.3), or by a waiting command whose condition holds (re-run, it moves the ip back to
        itself and yields with the same result: :attr:`Thread.poll`). Such frames only catch
        the clock and the timers' count-downs up (:meth:`idle`)."""
        if self.last_frame is None or self.triggers.queue or self.terminating:
            return ticks
        left = [tm.countdown or 0x10000 for tm in self.timers if tm is not None]
        due = 100 * (self.clock + min(left)) if left else None  # the first second a timer fires
        later = 1 if self.s.wake_compare == ">" else 0
        for t in self.slots:
            if t is None or t.interrupted:
                continue
            if t.wake:  # runs in the first frame whose clock passes it
                at = 100 * (t.wake + later)
            elif t.poll is not None and self._waits_again(t, t.poll):
                continue
            else:
                return ticks
            due = at if due is None else min(due, at)
        return None if due is None else max(due, ticks)

    def _waits_again(self, t: Thread, n: int) -> bool:
        """Whether ``t``'s waiting command ``n`` (:attr:`Thread.poll`) would wait again, re-run now."""
        arg = None
        if n in (0x3A, 0x4C):  # its argument's push runs again first
            try:
                known, arg = vm_ops.peek_push(self, t)
            except _Stop:
                return False
            if not known:
                return False
        return waits(self, n, arg)

    def frame(self, ticks: int) -> None:
        """One game frame at mission tick ``ticks`` (100 Hz): clock, events, threads, timers."""
        self.last_frame = ticks
        target = ticks // 100
        while self.clock < target:
            self.clock += 1
            self.ticked = True
        self.triggers.flush()
        self.run_threads()
        if self.ticked:
            self.run_timers()
            self.ticked = False
        if self.terminating and not self.terminated:
            for t in self.running():
                self.end(t, "TerminateMission")
            self.terminated = True

    def run_threads(self) -> None:
        """``vm_threads_run``: as many slots as were alive when the pass began (11.2)."""
        self.spent = 0
        for t in self.slots:
            if t is not None:
                t.logged = 0
        alive, seen = len(self.running()), 0
        for slot in range(MAX_THREADS):
            if seen >= alive:
                break
            t = self.slots[slot]
            if t is None:
                continue
            seen += 1
            if t.interrupted:
                continue
            if self.spent >= self.s.frame_budget:
                self.budget(
                    "frame_budget",
                    limit=self.s.frame_budget,
                    reason="instructions per frame across all threads: the rest run next frame",
                )
                break
            if t.wake and (self.clock <= t.wake if self.s.wake_compare == ">" else self.clock < t.wake):
                continue
            t.wake = 0
            self.run_thread(t)

    def run_timers(self) -> None:
        """``vm_run_timers`` (11.4): count down each live timer not fired at this clock."""
        alive = sum(tm is not None for tm in self.timers)
        seen = 0
        for i, tm in enumerate(self.timers):
            if seen >= alive:
                break
            if tm is None:
                continue
            seen += 1
            if tm.last == self.clock:
                continue
            tm.countdown = (tm.countdown - 1) & 0xFFFF
            if tm.countdown:
                continue
            tm.last = self.clock
            if tm.firings == 0:
                tm.countdown = tm.period
            else:
                tm.firings -= 1
                if tm.firings:
                    tm.countdown = tm.period
                else:
                    self.destroy_timers(tm.id)
            self._decide(
                "TimerFired", timer=tm.id, slot=i, part=self.dte.part_name(tm.part), clock=self.clock
            )
            self.start_part(tm.part, why="(timer)")

    def create_timer(self, tid: int, part: int, period: int, firings: int) -> bool:
        tid, period, firings = tid & 0xFFFF, period & 0xFFFF, firings & 0xFFFF
        self.destroy_timers(tid)
        free = next((i for i, tm in enumerate(self.timers) if tm is None), None)
        if free is None:
            self.budget(
                "timers",
                limit=len(self.timers),
                reason="timer table full (the game's 16 slots): no timer made (OpenReliant's fix)",
            )
            return False
        self.timers[free] = Timer(part, period, firings, period + (1 if period == 1 else 0), tid)
        return True

    def destroy_timers(self, tid: int) -> None:
        for i, tm in enumerate(self.timers):
            if tm is not None and tm.id == tid & 0xFFFF:
                self.timers[i] = None

    # -- the interpreter --------------------------------------------------------------------
    def run_thread(self, t: Thread) -> None:
        """``vm_thread_run``: interpret ``t`` until a handler yields or it ends."""
        outer, self.current = self.current, t
        t.poll = None
        try:
            run = 0
            while not t.done:
                if run >= self.s.thread_budget:
                    self.budget(
                        "thread_budget",
                        limit=self.s.thread_budget,
                        reason="a thread ran this long without yielding: ended (the game would hang)",
                    )
                    self.end(t, f"no progress: {run} instructions without yielding", "NoProgress")
                    return
                if self.spent >= self.s.frame_budget:
                    self.budget(
                        "frame_budget",
                        limit=self.s.frame_budget,
                        reason="instructions per frame across all threads: the rest run next frame",
                    )
                    return
                run += 1
                self.spent += 1
                try:
                    if not vm_ops.step(self, t):
                        return
                except _Stop as exc:
                    self.fault(t, str(exc))
                    return
        finally:
            self.current = outer

    def end(self, t: Thread, reason: str = "returned", outcome: str = "ThreadEnded") -> None:
        if t.done:
            return
        t.done = True
        if self.slots[t.slot] is t:
            self.slots[t.slot] = None
        self.triggers.forget(t)
        self._decide(outcome, routine=t.label, slot=t.slot, reason=reason)

    def stop(self, msg: str) -> None:
        raise _Stop(msg)
