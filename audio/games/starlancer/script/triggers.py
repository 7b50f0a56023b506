"""Events and triggers by the engine's rules (spec 11.6-11.9): queue, kept values, matching, operands, groups.

An event is raised on an object: its values are kept first (ShotAt slot 0, Destroyed slot 1, for
``push_event_value``), then the object's slice of section 5 is walked in order. A trigger answers
when armed, of the event's condition, of **exactly** the event's qualifier (``0xFF`` = the ship
itself, not a wildcard), with a link, and (while a group's verdict is false) of the condition's
exempt repeat mode. For each answering trigger the event's values go into the first free slot's
locals; its operands are checked (a failure skips it, armed, count kept); then, unless a thread it
started still runs (which is released from ``InterruptTriggerCode`` instead), a thread starts in
that slot (at once when ``+0x16 == 0``); then it is disarmed by its repeat mode whether or not a
thread started (0 once; 2 counted down to 0; 1 and others never).

Events posted with groups go on to the ship's flight group, then to each squad holding the ship as
the event's component (qualifier ``0xFF`` there); ShotAt averages the members' damage into the
group's event, Destroyed vetoes until every member is destroyed. Our assumption (documented): the
k-th object of kind 2 (squad) in section 7 is squad k of section 12.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audio.games.starlancer.formats.dte import NONE16
from audio.games.starlancer.script.conditions import CONDITIONS, Condition
from audio.games.starlancer.script.vm import U32, Ref, Thread, u32

if TYPE_CHECKING:
    from audio.games.starlancer.script.vm import Vm

__all__ = ["Event", "Triggers", "condition"]

_TAGS = {0x00: "ship", 0x01: "flight_group", 0x16: "squad"}


def condition(code: int) -> Condition | None:
    return CONDITIONS[code] if 0 <= code < len(CONDITIONS) else None


@dataclass(frozen=True)
class Event:
    """An event: condition, the object it is raised on, five values, the qualifier (component)."""

    condition: int
    oid: int
    values: tuple[Any, ...] = (0, 0, 0, 0, 0)
    qualifier: int = 0xFF
    groups: bool = True


class Triggers:
    """The trigger table's run-time state and the event queue of one :class:`Vm`."""

    def __init__(self, vm: Vm) -> None:
        self.vm = vm
        d = vm.dte
        self.armed = [bool(t.armed) for t in d.triggers]
        self.counts = [t.count_a for t in d.triggers]
        self.kept: dict[int, list[Any]] = {}
        self.queue: deque[Event] = deque()
        self.bad_tags: set[int] = set()
        self.squad_objects = [i for i, o in enumerate(d.objects) if o.kind == 2]

    # -- arming ----------------------------------------------------------------------------
    def arm_all(self) -> None:
        """After the start parts (11.1): every trigger in some object's slice is armed."""
        n = len(self.vm.dte.triggers)
        for o in self.vm.dte.objects:
            for i in range(o.first_trigger, min(o.first_trigger + o.trigger_count, n)):
                self.armed[i] = True

    def slice(self, oid: int) -> range:
        o = self.vm.dte.objects[oid]
        return range(o.first_trigger, min(o.first_trigger + o.trigger_count, len(self.vm.dte.triggers)))

    def set_state(self, oid: int, cond: int, on: bool, nth: int | None, components: tuple[int, ...]) -> int:
        """``SetTriggerState`` / ``SetAnyTriggerState`` (11.7); returns how many changed."""
        k, hits = 0, 0
        for i in self.slice(oid):
            tr = self.vm.dte.triggers[i]
            if tr.condition != cond:
                continue
            if nth is None:
                if tr.qualifier in (components or (0xFF,)):
                    self.armed[i] = on
                    if on:
                        self.counts[i] = tr.count_b
                    hits += 1
            elif k == nth:
                self.armed[i] = on
                hits += 1
            k += 1
        return hits

    # -- posting ---------------------------------------------------------------------------
    def post(self, ev: Event) -> bool:
        """Queue an event for the next flush; past the queue's 1,000 it is dropped (OpenReliant's fix)."""
        if len(self.queue) >= self.vm.s.event_queue:
            self.vm.budget(
                "event_queue",
                limit=self.vm.s.event_queue,
                reason="event queue full: further events dropped (the game stops: Trigger List exceeded)",
            )
            return False
        self.queue.append(ev)
        return True

    def flush(self) -> None:
        """``events_flush``: raise every queued event in order (then on its groups)."""
        while self.queue:
            self.raise_with_groups(self.queue.popleft())

    def raise_with_groups(self, ev: Event) -> int:
        vm, d = self.vm, self.vm.dte
        cond = condition(ev.condition)
        ship = next((k for k, s in enumerate(d.ships) if s.object_id == ev.oid), None)
        if ship is not None and ev.condition == 1:
            st = vm.ships[ship]
            if ev.qualifier == 0xFF:
                if st.destroyed:
                    vm.decide(
                        "TriggerIgnored",
                        condition="Destroyed",
                        subject=d.object_name(ev.oid),
                        reason="the ship is already destroyed (its Destroyed is not posted again)",
                    )
                    return 0
                st.destroyed = True
            else:
                st.intact &= ~(1 << (ev.qualifier & 31)) & U32
        if ship is not None and ev.condition == 0:
            vm.ships[ship].damage = u32(ev.values[2])
        hits = self.raise_event(ev.oid, ev)
        if ship is None or cond is None or not cond.groups or not ev.groups:
            return hits
        for goid, members in self.groups_of(ship, ev.qualifier):
            if goid is None or not 0 <= goid < len(d.objects) or not len(self.slice(goid)):
                continue
            values, verdict = list(ev.values), True
            if cond.handler == "average" and members:
                avg = sum(vm.ships[m].damage if c == 0xFF else 0 for m, c in members) // len(members)
                values[1] = values[2] = avg
            elif cond.handler == "all_destroyed":
                verdict = all(
                    vm.ships[m].destroyed if c == 0xFF else not vm.ships[m].intact >> (c & 31) & 1
                    for m, c in members
                )
            hits += self.raise_event(goid, Event(ev.condition, goid, tuple(values), 0xFF, False), verdict)
        return hits

    def groups_of(self, ship: int, comp: int) -> list[tuple[int | None, list[tuple[int, int]]]]:
        """The ship's flight group, then each squad holding it as ``comp`` (11.8), with members."""
        d = self.vm.dte
        out: list[tuple[int | None, list[tuple[int, int]]]] = []
        fg = d.ships[ship].flight_group
        if fg < len(d.flight_groups):
            out.append(
                (
                    d.flight_groups[fg].object_id,
                    [(k, 0xFF) for k, s in enumerate(d.ships) if s.flight_group == fg],
                )
            )
        for q in range(len(d.squads)):
            members = self.members(q, set())
            if (ship, comp) in members:
                out.append((self.squad_objects[q] if q < len(self.squad_objects) else None, members))
        return out

    def members(self, q: int, seen: set[int] | None = None) -> list[tuple[int, int]]:
        """A squad's members as (ship, component); a squad inside itself is walked once (fix)."""
        seen = set() if seen is None else seen
        if q in seen:
            return []
        seen.add(q)
        d, out = self.vm.dte, []
        for m in d.squad_members:
            if m.squad != q or not 0 <= m.object_id < len(d.objects):
                continue
            kind = d.objects[m.object_id].kind
            if kind == 0:
                out += [(k, m.component) for k, s in enumerate(d.ships) if s.object_id == m.object_id]
            elif kind == 1:
                fgs = [g for g, f in enumerate(d.flight_groups) if f.object_id == m.object_id]
                out += [(k, 0xFF) for k, s in enumerate(d.ships) if s.flight_group in fgs]
            elif kind == 2 and m.object_id in self.squad_objects:
                out += self.members(self.squad_objects.index(m.object_id), seen)
        return out

    # -- raising ---------------------------------------------------------------------------
    def raise_event(self, oid: int, ev: Event, verdict: bool = True) -> int:
        """``trigger_raise_event`` on object ``oid``; returns how many triggers answered."""
        vm, d = self.vm, self.vm.dte
        name = _cname(ev.condition)
        if oid == NONE16 or not 0 <= oid < len(d.objects):
            vm.decide("TriggerIgnored", condition=name, subject=oid, reason="no such object")
            return 0
        cond = condition(ev.condition)
        self.keep(oid, ev, cond)
        hits = 0
        for i in self.slice(oid):
            tr = d.triggers[i]
            if not (self.armed[i] and tr.condition == ev.condition and tr.link != NONE16):
                continue
            if tr.qualifier != ev.qualifier:
                continue
            subj = d.object_name(oid)
            if not verdict and (cond is None or tr.repeat != cond.exempt_repeat):
                vm.decide(
                    "TriggerIgnored",
                    trigger=i,
                    condition=name,
                    subject=subj,
                    reason="group veto: not every member is destroyed",
                )
                continue
            hits += 1
            free = next((k for k, t in enumerate(vm.slots) if t is None), None)
            if free is not None:
                vm.slot_locals[free][:] = list(ev.values)[:5] + [0] * (5 - len(ev.values[:5]))
            bad = self.operand_failure(i, ev, cond)
            if bad:
                vm.decide("TriggerIgnored", trigger=i, condition=name, subject=subj, reason=bad)
                continue
            own = next((t for t in vm.slots if t is not None and t.trigger == i), None)
            if own is not None:
                if own.interrupted:
                    own.interrupted = False
                    vm.decide("TriggerResumed", trigger=i, subject=subj, routine=own.label)
                else:
                    vm.decide("TriggerIgnored", trigger=i, subject=subj, reason="its thread is still running")
            else:
                vm.decide("TriggerFired", trigger=i, condition=name, subject=subj, deferred=bool(tr.deferred))
                if free is not None:
                    vm.start_thread(f"trigger {i}", tr.link * 2, trigger=i, slot=free, now=not tr.deferred)
                else:
                    vm.decide("ThreadRefused", routine=f"trigger {i}", reason="no free thread slot")
            if tr.repeat == 0:
                self.armed[i] = False
            elif tr.repeat == 2:
                if self.counts[i]:
                    self.counts[i] -= 1
                if not self.counts[i]:
                    self.armed[i] = False
        if not hits:
            vm.decide(
                "TriggerIgnored",
                condition=name,
                subject=d.object_name(oid),
                reason="no armed trigger of that condition and qualifier in the object's slice",
            )
        return hits

    def keep(self, oid: int, ev: Event, cond: Condition | None) -> None:
        if cond is None or cond.kept_slot is None:
            return
        rec = self.kept.setdefault(oid, [0] * 10)
        vals = list(ev.values[:5]) + [0] * 5
        if cond.kept_slot == 1:
            vals = vals[:2] + [0, 0, 0]
        rec[5 * cond.kept_slot : 5 * cond.kept_slot + 5] = vals[:5]

    def event_value(self, c: int, v: int, oid: int) -> Any:
        """``push_event_value c v o``; None when the engine would end the thread."""
        cond = condition(c)
        if (
            cond is None
            or cond.kept_slot is None
            or not 0 <= oid < len(self.vm.dte.objects)
            or not 0 <= v < 5
        ):
            return None
        return self.kept.get(oid, [0] * 10)[5 * cond.kept_slot + v]

    def operand_failure(self, i: int, ev: Event, cond: Condition | None) -> str:
        """Why trigger ``i``'s operands refuse ``ev`` ("" when they pass; 11.9)."""
        if cond is None:
            return ""
        ops = self.vm.dte.triggers[i].operands
        for n, spec in enumerate(cond.values):
            op = ops[n] if n < len(ops) else U32
            if not spec.checked or op & 0xFFFF == 0xFFFF:
                continue
            val = ev.values[n] if n < len(ev.values) else 0
            if spec.kind == "number":
                if u32(val) != op:
                    return f"operand {n} ({spec.name}) is {op}, the event's {u32(val)}"
                continue
            if op & 0x2000:
                if not (
                    isinstance(val, Ref) and val.kind in ("ship", "component") and val.n < self.vm.s.players
                ):
                    return f"operand {n} ({spec.name}) wants a player's ship"
                continue
            tag = op >> 16 & 0xFF
            kind = _TAGS.get(tag)
            if kind is None:
                if i not in self.bad_tags:
                    self.bad_tags.add(i)
                    self.vm.decide(
                        "OperandFault",
                        trigger=i,
                        operand=n,
                        value=op,
                        reason="reference tag neither ship, flight group nor squad: the trigger does "
                        "not pass (the game stops: NULL entity referenced in script)",
                    )
                return f"operand {n} has an unknown reference tag 0x{tag:02X}"
            vkind = "ship" if isinstance(val, Ref) and val.kind == "component" else getattr(val, "kind", None)
            if not (isinstance(val, Ref) and vkind == kind and val.n == op & 0xFFFF):
                return f"operand {n} ({spec.name}) names {kind} {op & 0xFFFF}, the event's {_show(val)}"
        return ""

    def forget(self, t: Thread) -> None:
        """A thread ended (nothing to do: ownership is found by scanning the slots)."""


def _cname(code: int) -> str:
    c = condition(code)
    return c.name if c is not None else f"TT_0x{code:02X}"


def _show(v: Any) -> str:
    return f"{v.kind} {v.n}" if isinstance(v, Ref) else str(u32(v))
