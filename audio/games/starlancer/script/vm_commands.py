"""The VM's Executor commands and their results (spec 11.5, 11.12).

``command n`` pops the catalogue's argument count, runs, stores its result in the thread's result
register and returns it: 0 ends the thread's run for this frame. Results: 0 for ``Wait``,
``InterruptTriggerCode``, the four Comms commands (said or not), ``StartMissileCam``,
``StartChaseCam``, ``MultiPlayerSync`` and a waiting command while it waits; ``IsShipThisPlayer`` 1
for a player's ship, 2 otherwise; ``WhenPlayerLastJumped`` the seconds since the last jump (at least
1; ``0xFFFF`` before any); 1 for every other command (the ones this emulation does not act on are
logged as ``Skipped``).

Waiting commands move the ip back and yield until their condition clears: ``WaitForSpeech``,
``WaitForMovie``, ``WaitForDirectorCam`` back 2 bytes; ``WaitForJumpOrLaunch`` and ``WaitForKey``
back 4 (their argument's push runs again). Their conditions here: the director's view is on from
``StartDirectorCam``/``StackDirectorCam`` until ``StopDirectorCam`` (or a port says so); a ship has a
jump or launch order only while a port or scenario says so (``starlancer.ship`` state ``jumping``);
a key is held only while a port says so (offline, nothing presses a key: such a thread waits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from audio.games.starlancer.radio.faces import DEAD_CHANNEL_FILM, FACES, face_film
from audio.games.starlancer.radio.radio import FLAG_LOOP, FLAG_PALETTE, NOBODY, Line
from audio.games.starlancer.script.commands import COMMANDS
from audio.games.starlancer.script.values import U32, Ref, Thread, show, u32

if TYPE_CHECKING:
    from audio.games.starlancer.script.vm import Vm

__all__ = ["WAITING", "YIELDING", "run_command", "speaker_line", "waits"]

YIELDING = frozenset({0x05, 0x17, 0x18, 0x19, 0x29, 0x2A, 0x1F, 0x20, 0x2D})
"""Commands whose result is 0 (the thread yields)."""
WAITING = frozenset({0x07, 0x09, 0x50, 0x3A, 0x4C})
"""Commands that wait (11.3): ``WaitForSpeech``, ``WaitForMovie``, ``WaitForDirectorCam`` (no
argument), ``WaitForJumpOrLaunch`` and ``WaitForKey`` (one, pushed again at each re-run)."""
_FILM_MAX = 52


def run_command(vm: Vm, t: Thread, n: int, args: list[Any], ip: int) -> bool:
    """Run command ``n`` with its popped ``args``; False when the thread yields or ends."""
    res = _run(vm, t, n, args, ip)
    t.result = res
    t.components.clear()
    return res != 0 and not t.done


def _run(vm: Vm, t: Thread, n: int, args: list[Any], ip: int) -> int:
    r = vm.radio
    if n == 0x05:
        t.wake = (vm.clock + u32(args[0])) & U32
        vm.decide("Wait", routine=t.label, seconds=u32(args[0]), until=t.wake, clock=vm.clock)
        return 0
    if n in WAITING:
        if waits(vm, n, args[0] if args else None):
            t.ip = ip - (2 if args else 0)  # back to the command, or to its argument's push
            t.poll = n
            return 0
        return 1
    if n in (0x18, 0x19, 0x29, 0x2A):
        comms(vm, t, n, args)
        return 0
    if n == 0x08:
        comms_movie(vm, t, args)
        return 1
    if n == 0x06:
        r.play_speech(args[0] if isinstance(args[0], str) else "")
        return 1
    if n in (0x27, 0x2E):
        r.set_gate("taunts" if n == 0x27 else "generic", bool(u32(args[0]) & 0xFFFF))
        return 1
    if n == 0x17:
        t.interrupted = True
        vm.decide("Interrupted", routine=t.label, reason="InterruptTriggerCode: held until its trigger fires")
        return 0
    if n == 0x45:
        ship = args[0].n if isinstance(args[0], Ref) and args[0].kind in ("ship", "component") else -1
        return 1 if 0 <= ship < vm.s.players else 2
    if n == 0x1E:
        return 0xFFFF if vm.last_jump is None else max(1, vm.clock - vm.last_jump)
    if n in (0x1F, 0x20, 0x2D):
        skipped(vm, t, n, args)
        return 0
    _other(vm, t, n, args)
    return 1


def waits(vm: Vm, n: int, arg: Any = None) -> bool:
    """Whether waiting command ``n`` (one of :data:`WAITING`) waits now, given its argument
    ``arg`` (``WaitForJumpOrLaunch``'s ship or flight group, ``WaitForKey``'s action number)."""
    if n == 0x07:
        return vm.radio.speech_playing()
    if n == 0x09:
        return vm.radio.film_playing()
    if n == 0x50:
        return vm.director_cam
    if n == 0x3A:
        return bool(_ships_of(vm, arg) & vm.moving)
    return u32(arg) not in vm.keys


def _ships_of(vm: Vm, v: Any) -> set[int]:
    if isinstance(v, Ref) and v.kind in ("ship", "component"):
        return {v.n}
    if isinstance(v, Ref) and v.kind == "flight_group":
        return {k for k, s in enumerate(vm.dte.ships) if s.flight_group == v.n}
    return set()


def _other(vm: Vm, t: Thread, n: int, args: list[Any]) -> None:
    d = vm.dte
    if n == 0x01:
        tid, part, period, firings = (u32(a) for a in args)
        made = vm.create_timer(tid, part, period, firings)
        vm.decide(
            "TimerCreated" if made else "TimerRefused",
            routine=t.label,
            timer=tid & 0xFFFF,
            part=d.part_name(part),
            seconds=period & 0xFFFF,
            firings=firings & 0xFFFF,
        )
    elif n == 0x02:
        vm.destroy_timers(u32(args[0]))
        vm.decide("TimerDestroyed", routine=t.label, timer=u32(args[0]) & 0xFFFF)
    elif n == 0x03:
        ships = _ships_of(vm, args[0])
        for k in sorted(ships):
            create_ship(vm, k, why=f"CreateFlightGroup in {t.label}")
    elif n == 0x0E:
        for k in _ships_of(vm, args[0]):
            vm.ships[k].pilot = u32(args[1]) & 0xFF
        vm.decide("SetPilot", routine=t.label, ship=show(args[0]), pilot=u32(args[1]) & 0xFF)
    elif n in (0x0F, 0x4F):
        _trigger_state(vm, t, args, n == 0x4F)
    elif n == 0x15:
        vm.decide("Subtitle", routine=t.label, text_id=u32(args[0]))
    elif n in (0x10, 0x52):
        vm.director_cam = True
        vm.decide("DirectorCam", routine=t.label, on=True)
    elif n == 0x24:
        vm.director_cam = False
        vm.decide("DirectorCam", routine=t.label, on=False)
    elif n == 0x4D:
        vm.decide("TerminateMission", routine=t.label, reason="the mission ends once the frame is over")
        vm.terminating = True
    elif n == 0x51:
        for o in vm.running():
            if o is not t:
                vm.end(o, f"KillAllScriptExecutionExecptMe from {t.label}")
    else:
        skipped(vm, t, n, args)


def create_ship(vm: Vm, k: int, why: str) -> None:
    """A stand-in becomes a ship (11.11): its pilot from the record's ``+0x15`` unless ``0xFF``."""
    st = vm.ships[k]
    if st.created:
        return
    st.created = True
    pilot = vm.dte.ships[k].pilot
    if pilot != 0xFF:
        st.pilot = pilot
    vm.decide("ShipCreated", ship=vm.dte.ship_name(k) or f"ship({k})", pilot=st.pilot, reason=why)


def speaker_line(vm: Vm, pilot: int, head: int, speech: str, flags: int) -> Line:
    """A line of face ``pilot`` (its film by ``head``, its name; the dead channel past the table)."""
    film = face_film(pilot, head, vm.s.mission)
    if film is None:
        return Line(speech, "", "pilot", 0xFFFF + pilot, DEAD_CHANNEL_FILM, flags, head=head)
    name = vm.pilot_names.get(pilot, FACES[pilot].name)
    return Line(speech, name, "pilot", 0xFFFF + pilot, film, flags, head=head)


def comms(vm: Vm, t: Thread, idx: int, args: list[Any]) -> None:
    """``CommsFromShip/Pilot(Once)``: mode now, flags 5 (6 for the Once forms), no expiry."""
    flags = 6 if idx in (0x29, 0x2A) else FLAG_LOOP | FLAG_PALETTE
    speech = args[2] if isinstance(args[2], str) else ""
    head = u32(args[1]) & 0xFFFF
    if idx in (0x18, 0x29):
        v = args[0]
        k = v.n if isinstance(v, Ref) and v.kind in ("ship", "component") else -1
        why = ""
        if not 0 <= k < len(vm.ships):
            why = "not a mission ship"
        elif not vm.ships[k].created:
            why = "the ship is a stand-in (never created): it says nothing"
        elif vm.ships[k].exploding:
            why = "the ship is exploding"
        elif vm.ships[k].pilot == 0xFF:
            why = "the ship has no pilot record"
        if why:
            vm.decide("Silent", routine=t.label, ship=show(v), file=speech, reason=why)
            return
        line = speaker_line(vm, vm.ships[k].pilot, head, speech, flags)
        line.speaker_kind, line.speaker_object = "ship", k
    else:
        line = speaker_line(vm, u32(args[0]) & 0xFFFF, head, speech, flags)
    line.source = t.label
    vm.radio.say(line, "now")


def comms_movie(vm: Vm, t: Thread, args: list[Any]) -> None:
    """``PlayCommsMovie(film, speech, text id)``: mode now, flags 5, nobody; the thread runs on."""
    film = args[0] if isinstance(args[0], str) else ""
    speech = args[1] if isinstance(args[1], str) else ""
    if (
        len(film.encode("latin-1", "replace")) >= _FILM_MAX
        or len(speech.encode("latin-1", "replace")) >= _FILM_MAX
    ):
        vm.decide("Silent", routine=t.label, file=speech, reason="film or speech name of 52 bytes or more")
        return
    line = Line(
        speech, f"text#{u32(args[2]) & 0xFFFF}", "nobody", NOBODY, f"pilots\\{film}", FLAG_LOOP | FLAG_PALETTE
    )
    line.source = t.label
    vm.radio.say(line, "now")


def skipped(vm: Vm, t: Thread, idx: int, args: list[Any]) -> None:
    c = COMMANDS[idx]
    vm.decide(
        "Skipped",
        routine=t.label,
        command=c.name,
        args=[show(a) for a in args],
        reason="not part of the speech emulation",
    )


def _trigger_state(vm: Vm, t: Thread, args: list[Any], nth: bool) -> None:
    ent, cond, enable = args[0], u32(args[1]), bool(u32(args[2]))
    d = vm.dte
    oid = None
    kind = ent.kind if isinstance(ent, Ref) else None
    if kind in ("ship", "component") and 0 <= ent.n < len(d.ships):
        oid = d.ships[ent.n].object_id
    elif kind == "flight_group" and 0 <= ent.n < len(d.flight_groups):
        oid = d.flight_groups[ent.n].object_id
    elif kind == "squad" and ent.n < len(vm.triggers.squad_objects):
        oid = vm.triggers.squad_objects[ent.n]
    if oid is None or oid >= len(d.objects):
        vm.decide(
            "Skipped",
            routine=t.label,
            command="SetAnyTriggerState" if nth else "SetTriggerState",
            args=[show(a) for a in args],
            reason="entity not resolved",
        )
        return
    comps = tuple(c & 0xFF for c in t.components)
    hits = vm.triggers.set_state(oid, cond, enable, u32(args[3]) if nth else None, comps)
    vm.decide(
        "TriggerState",
        routine=t.label,
        subject=d.object_name(oid),
        condition=cond,
        armed=enable,
        triggers=hits,
    )
