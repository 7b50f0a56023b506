"""Skipped ticks in Starlancer: the system ticks only where the VM, the radio or the remarks can
change anything (``StarlancerSystem.next_tick``), and a mission whose threads sit in every kind of
wait (spec 11.3: ``Wait``, ``WaitForMovie``, ``WaitForSpeech``, ``WaitForDirectorCam``,
``WaitForKey`` on a global another thread changes, ``WaitForJumpOrLaunch``), with a timer, world
events that read the script clock, queued lines, a report, remarks and a restart, decides exactly
as it does ticking every frame."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audio.core.engine import Engine
from audio.games.starlancer.events import Happen, Reset, Say
from audio.games.starlancer.formats.dte import (
    Dte,
    FlightGroup,
    Global,
    ObjectEntry,
    Part,
    Ship,
    write_routine,
)
from audio.games.starlancer.radio.radio import SPEECH_RATE, NullPresenter, Radio
from audio.games.starlancer.script.asm import Asm
from audio.games.starlancer.script.vm import Vm, VmSettings
from audio.games.starlancer.system import SpeechBank, StarlancerSystem

SR = 48_000


class _Bank(SpeechBank):
    """Every line is silence of a length set by its name (``b.ut`` 0.7 s, others 1.3 s)."""

    def __init__(self) -> None:
        super().__init__(None)

    def load(self, speech: str) -> np.ndarray | None:
        return np.zeros(int((0.7 if speech == "b.ut" else 1.3) * SPEECH_RATE), np.float32)


def _clock_since_jump(a: Asm) -> Asm:
    """``global 1 = WhenPlayerLastJumped()`` (a GlobalSet decision shows the value)."""
    return a.op("select_global", 1).call("WhenPlayerLastJumped").op("push_result").op(0x16)


def _mission() -> Dte:
    pool = bytearray(b"\0")

    def name(s: str) -> int:
        pool.extend(s.encode() + b"\0")
        return len(pool) - len(s) - 1

    main = (
        Asm()
        .call("CreateTimer", ("byte", 1), ("byte", 2), ("byte", 3), ("byte", 2))
        .op("spawn_part", 1)
        .call("CommsFromPilotOnce", ("byte", 20), ("byte", 0), "a.ut")
        .call("WaitForMovie")
        .call("StartDirectorCam", ("byte", 0), ("byte", 0), ("byte", 0), ("byte", 0), ("byte", 0))
        .call("WaitForDirectorCam")
        .call("WaitForKey", ("global", 0))  # action 7, then 9 once Waiter sets it
        .call("DisplaySubTitle", ("byte", 1))
        .call("WaitForJumpOrLaunch", ("ship", 0))
    )
    _clock_since_jump(main).call("PlaySpeech", "b.ut").call("WaitForSpeech")
    # made in a frame where the clock did not tick: its first count-down waits for the next second
    main.call("CreateTimer", ("byte", 2), ("byte", 2), ("byte", 1), ("byte", 1)).call("Wait", ("byte", 1))
    _clock_since_jump(main).ret()
    waiter = (
        Asm()
        .call("Wait", ("byte", 4))
        .op("select_global", 0)
        .push(("byte", 9))
        .op(0x16)
        .call("Wait", ("byte", 0))
        .call("CommsFromShip", ("ship", 0), ("byte", 0), "c.ut")
        .call("WaitForSpeech")
        .ret()
    )
    tick = Asm().call("StopDirectorCam").ret()
    blocks = [write_routine(main.code()), write_routine(waiter.code()), write_routine(tick.code())]
    offs = [sum(len(b) for b in blocks[:i]) for i in range(len(blocks))]
    parts = [
        Part(name=name(n), start=o // 2, flags=f, extent=len(b) // 2)
        for n, o, b, f in zip(("Main", "Waiter", "Tick"), offs, blocks, (1, 0, 0), strict=True)
    ]
    ships = [Ship(object_id=0, name=name("(A1)Naginata"), flight_group=0, pilot=7, kind=1)]
    groups = [FlightGroup(object_id=1, name=name("Alpha"), wing=0)]
    globals_ = [Global(name=name("(GV)key"), value=7), Global(name=name("(GV)since"), value=0)]
    return Dte(
        pool=bytes(pool),
        script=b"".join(blocks),
        ships=ships,
        flight_groups=groups,
        globals=globals_,
        objects=[ObjectEntry(kind=0), ObjectEntry(kind=1)],
        parts=parts,
    )


EVENTS = (
    Happen(t=1.0, what="jumping", ship="Naginata"),
    Happen(t=1.0, what="variable", kind="landing_cleared", value=1),
    Happen(t=2.0, what="variable", kind="jump_ready", value=1),
    Happen(t=2.5, what="key", value=9, busy=True),
    Happen(t=9.33, what="jumped", ship="Naginata"),
    Say(t=12.0, speaker="ship:Naginata", speech="q1.ut", mode="queued"),
    Say(t=12.01, speaker="ship:Naginata", speech="q2.ut", mode="queued", expiry=120),
    Say(t=12.02, speaker="pilot:7", speech="q3.ut", mode="queued"),
    Happen(t=13.0, what="wingman", ship="Naginata", kind="status", value=1),
    Happen(t=14.0, what="missile"),
    Happen(t=20.0, what="eject", ship="Naginata"),
    Happen(t=25.5, what="missile_clear"),
    Reset(t=46.37, restart=True),
)


def _run(skip: bool) -> tuple[list[str], Engine]:
    eng = Engine(seed=5, dsp=False, skip_ticks=skip)
    system = StarlancerSystem(
        _mission(),
        _Bank(),
        pilot_names={7: "Naginata", 20: "Twenty"},
        created=("Naginata",),
        rescuer="Naginata",
    )
    eng.add_system(system)
    eng.prepare()
    for ev in EVENTS:
        eng.bus.post(ev)
    eng.run_until(50 * SR)
    return [json.dumps(d.to_json(), sort_keys=True) for d in eng.bus.decisions], eng


def test_a_mission_waiting_in_every_way_decides_the_same_with_ticks_skipped():
    ref, every = _run(False)
    got, skipped = _run(True)
    assert got == ref
    outcomes = [json.loads(d)["outcome"] for d in ref]
    assert [json.loads(d)["clock"] for d in ref if '"TimerFired"' in d and '"timer": 2' in d] == [12]
    for seen in ("Subtitle", "Expired", "Reported", "Remark", "Ended", "Interrupted", "ThreadEnded"):
        assert seen in outcomes
    # Waiter sets the key's global at clock 5 while Main polls WaitForKey: Main goes on to wait for
    # its jump, which lands at 9.33 s (clock 9, long after the VM last ran a frame); Main reads
    # the seconds since at once (1 at least) and after its Wait 1, at clock 12 (12 - 9)
    since = [json.loads(d)["value"] for d in ref if '"GlobalSet"' in d and '"index": 1' in d]
    assert since == [1, 3]
    assert skipped.ticks < every.ticks // 20


def _vm(code: Asm, compare: str = ">") -> Vm:
    block = write_routine(code.code())
    dte = Dte(pool=b"\0Start\0", script=block, parts=[Part(name=1, start=0, flags=1, extent=len(block) // 2)])
    radio = Radio(NullPresenter(), lambda *a, **k: None)
    return Vm(dte, radio, lambda *a, **k: None, lambda: 0, VmSettings(wake_compare=compare))


@pytest.mark.parametrize(("compare", "resume"), [(">", 3), (">=", 2)])
def test_a_thread_in_wait_2_at_clock_0_next_changes_the_vm_at_the_tick_of_its_resuming_second(
    compare, resume
):
    vm = _vm(Asm().call("Wait", ("byte", 2)).ret(), compare)
    vm.mission_start()
    assert vm.next_change(4) == 4  # before its first frame the clock has never caught up
    vm.frame(4)
    assert vm.next_change(8) == 100 * resume  # spec 11.3: Wait 2 at clock 0 resumes at clock 3
    vm.idle(100 * resume - 4)
    assert vm.clock == resume - 1
    vm.frame(100 * resume)
    assert not vm.running()


def test_a_thread_polling_wait_for_speech_holds_the_vm_until_the_speech_ends():
    vm = _vm(Asm().call("PlaySpeech", "x.ut").call("WaitForSpeech").ret())
    vm.mission_start()
    vm.frame(4)
    assert vm.running()[0].poll is not None and vm.next_change(8) is None
    vm.radio.tick(vm.radio.speech_end)
    assert vm.next_change(vm.radio.speech_end) == vm.radio.speech_end


@pytest.mark.parametrize(("period", "fires"), [(1, 2), (3, 3), (0, 65536)])
def test_a_timer_made_at_clock_0_next_changes_the_vm_at_its_first_firing(period, fires):
    # spec 11.4: period 1 fires first at clock 2, p >= 2 at p, period 0 wraps and fires at 65536
    vm = _vm(Asm().call("CreateTimer", ("byte", 1), ("byte", 0), ("byte", period), ("byte", 0)).ret())
    vm.mission_start()
    vm.frame(4)
    assert vm.next_change(8) == 100 * fires
    vm.idle(100 * fires - 4)  # the seconds before only count it down
    assert vm.clock == fires - 1 and vm.timers[0] is not None and vm.timers[0].countdown == 1
    vm.frame(100 * fires)
    assert vm.timers[0].last == fires and vm.running()  # fired: its part runs at the next pass
