"""The VM's Executor commands: the speech ones run, the rest are logged as skipped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from audio.games.starlancer.script.values import Thread, show, u32

if TYPE_CHECKING:
    from audio.games.starlancer.script.vm import Vm

__all__ = ["WAITS_SKIPPED", "run_command"]

WAITS_SKIPPED = (0x3A, 0x4C, 0x50)
"""WaitForJumpOrLaunch, WaitForKey, WaitForDirectorCam: their conditions are not emulated, so they
return at once (logged as skipped): our setting, so a script cannot stall on them."""


def run_command(vm: Vm, t: Thread, n: int, args: list[Any], ip: int) -> bool:
    """Run command ``n`` with its popped ``args``; False when the thread yields or ends."""
    t.result = 0
    r = vm.radio
    if n == 0x05:
        t.wake = vm.clock + u32(args[0])
        vm.decide("Wait", routine=t.label, seconds=u32(args[0]), until=t.wake)
        return False
    if n in (0x07, 0x09):
        if r.speech_playing() if n == 0x07 else r.film_playing():
            t.ip = ip
            return False
        return True
    if n in (0x18, 0x19, 0x29, 0x2A):
        vm.comms(t, n, args)
        return not vm.s.comms_yield
    if n == 0x08:
        vm.comms_movie(t, args)
        return not vm.s.comms_yield
    if n == 0x06:
        if isinstance(args[0], str):
            r.play_speech(args[0])
        return True
    if n in (0x27, 0x2E):
        r.set_gate("taunts" if n == 0x27 else "generic", bool(u32(args[0])))
        return True
    if n == 0x17:
        t.parked = True
        vm.decide(
            "Interrupted", routine=t.label, reason="InterruptTriggerCode: parked until its trigger fires"
        )
        return False
    return _other(vm, t, n, args)


def _other(vm: Vm, t: Thread, n: int, args: list[Any]) -> bool:
    if n == 0x01:
        part, period, firings = u32(args[1]), u32(args[2]), u32(args[3])
        vm.timers[u32(args[0])] = [part, period, firings, max(1, period)]
        vm.decide(
            "TimerCreated",
            routine=t.label,
            timer=u32(args[0]),
            part=vm.dte.part_name(part),
            seconds=period,
            firings=firings,
        )
    elif n == 0x02:
        vm.timers.pop(u32(args[0]), None)
        vm.decide("TimerDestroyed", routine=t.label, timer=u32(args[0]))
    elif n in (0x0F, 0x4F):
        _trigger_state(vm, t, args, n == 0x4F)
    elif n == 0x15:
        vm.decide("Subtitle", routine=t.label, text_id=u32(args[0]))
    elif n == 0x4D:
        vm.decide("TerminateMission", routine=t.label)
        vm.terminated = True
        for o in vm.running():
            vm.end(o, "TerminateMission")
        return False
    elif n == 0x51:
        for o in vm.running():
            if o is not t:
                vm.end(o, f"KillAllScriptExecutionExecptMe from {t.label}")
    else:
        vm.skipped(t, n, args)
    return True


def _trigger_state(vm: Vm, t: Thread, args: list[Any], nth: bool) -> None:
    ent, cond, enable = args[0], u32(args[1]), bool(u32(args[2]))
    oid = None
    d = vm.dte
    kind = getattr(ent, "kind", None)
    if kind in ("ship", "component") and 0 <= ent.n < len(d.ships):
        oid = d.ships[ent.n].object_id
    elif kind == "flight_group" and 0 <= ent.n < len(d.flight_groups):
        oid = d.flight_groups[ent.n].object_id
    if oid is None or oid >= len(d.objects):
        vm.decide(
            "Skipped",
            routine=t.label,
            command="SetTriggerState",
            args=[show(a) for a in args],
            reason="entity not resolved",
        )
        return
    o = d.objects[oid]
    k = 0
    for i in range(o.first_trigger, min(o.first_trigger + o.trigger_count, len(d.triggers))):
        if d.triggers[i].condition == cond:
            if not nth or k == u32(args[3]):
                vm.armed[i] = enable
                vm.decide("TriggerState", routine=t.label, trigger=i, armed=enable)
            k += 1
