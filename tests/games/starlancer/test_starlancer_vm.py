"""The script VM: clocks, waits, WaitForMovie vs WaitForSpeech, random_branch, timers, triggers, caps."""

from __future__ import annotations

from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from starlancer_fakes import Pool

from audio.core.crt import MsvcRand
from audio.core.errors import BarkbusError
from audio.games.starlancer.formats.dte import Dte, ObjectEntry, Part, Ship, Trigger, write_routine
from audio.games.starlancer.radio.radio import NullPresenter, Radio
from audio.games.starlancer.script.asm import Asm
from audio.games.starlancer.script.triggers import Event
from audio.games.starlancer.script.vm import Vm, VmSettings


class Harness:
    """A mission of routines (parts 0.. in order; part 0 the start part) and one trigger on ship 0."""

    def __init__(self, parts, trigger=None, *, repeat=1, seconds=1.0, seed=1, **vm_settings):
        pool = Pool()
        blocks = [write_routine(a.code(), consts) for a, consts in parts]
        if trigger is not None:
            blocks.append(write_routine(trigger.code()))
        offs, at = [], 0
        for b in blocks:
            offs.append(at)
            at += len(b)
        ps = [
            Part(name=pool.add(f"P{i}"), start=offs[i] // 2, flags=int(i == 0), extent=len(blocks[i]) // 2)
            for i in range(len(parts))
        ]
        trig = (
            [Trigger(condition=1, repeat=repeat, link=offs[-1] // 2, count_a=2, operands=(0xFFFFFFFF,) * 5)]
            if trigger is not None
            else []
        )
        self.dte = Dte(
            pool=bytes(pool.data),
            script=b"".join(blocks),
            parts=ps,
            triggers=trig,
            ships=[Ship(object_id=0, name=pool.add("Naginata"), pilot=3)],
            objects=[ObjectEntry(kind=0, trigger_count=len(trig), first_trigger=0)],
        )
        self.log = []
        self.tick_now = 0
        self.radio = Radio(NullPresenter(default=seconds), self.decide)
        self.vm = Vm(self.dte, self.radio, self.decide, MsvcRand(seed), VmSettings(**vm_settings))
        self.vm.ships[0].created = True  # Naginata exists (CreateFlightGroup's work in a real mission)

    def decide(self, outcome, **d):
        self.log.append((self.tick_now, outcome, d))

    def run(self, ticks, start=True):
        if start:
            self.vm.mission_start()
        first = self.tick_now
        for t in range(first, first + ticks):
            self.tick_now = t
            self.radio.tick(t)
            if t % self.vm.s.frame_ticks == 0:
                self.vm.frame(t)
                self.radio.frame(t)
        self.tick_now = first + ticks
        return self

    def when(self, outcome, **match):
        return [t for t, o, d in self.log if o == outcome and all(d.get(k) == v for k, v in match.items())]


def marker(a, value=1):
    """DisableTaunts(value): a visible side effect (a Gate decision) marking progress."""
    return a.call("DisableTaunts", ("byte", value))


def test_wait_for_speech_right_after_comms_returns_during_the_preroll():
    a = marker(Asm().call("CommsFromShip", ("ship", 0), ("byte", 0), "a.ut").call("WaitForSpeech")).ret()
    h = Harness([(a, [])], seconds=1.0).run(400)
    gate, started = h.when("Gate"), h.when("Started")
    assert gate[0] < 92 == started[0]  # it returned while the pre-roll held the film


def test_wait_for_movie_waits_through_preroll_and_line():
    a = marker(Asm().call("CommsFromShip", ("ship", 0), ("byte", 0), "a.ut").call("WaitForMovie")).ret()
    h = Harness([(a, [])], seconds=1.0).run(400)
    end = h.when("Ended")[0]
    assert end == 92 + 100 and h.when("Gate") == [-(-end // 4) * 4]  # the first frame from the end on


def test_wait_resumes_once_the_clock_has_passed_its_seconds():
    # spec 11.3: Wait 3 at clock 0 sets wake 3; the thread runs in the first pass where clock > 3
    a = marker(Asm().call("Wait", ("byte", 3))).ret()
    assert Harness([(a, [])]).run(500).when("Gate") == [400]


def test_wait_wake_comparison_is_a_setting():
    a = marker(Asm().call("Wait", ("byte", 3))).ret()
    assert Harness([(a, [])], wake_compare=">=").run(500).when("Gate") == [300]


def test_random_branch_rolls_msvc_rand_mod_100():
    # srand(1): the first rand() is 41, so roll 41: arm 0 (threshold 30) fails, arm 1 (70) wins
    a = (
        Asm()
        .random_branch("d", [("a0", 30), ("a1", 70)], reserve=10, stale=b"\x21\x18")
        .label("a0")
        .call("PlaySpeech", "zero.ut")
        .ret()
        .label("a1")
        .call("PlaySpeech", "one.ut")
        .ret()
        .label("d")
        .call("PlaySpeech", "default.ut")
        .ret()
    )
    h = Harness([(a, [])], seed=1).run(10)
    assert [d["file"] for _t, o, d in h.log if o == "Started"] == ["one.ut"]
    assert h.when("RandomBranch", roll=41)


def test_msvc_rand_sequence():
    r = MsvcRand(1)
    assert [r() for _ in range(3)] == [41, 18467, 6334]


def test_timer_starts_its_part_each_period_for_its_firings():
    start = Asm().call("CreateTimer", ("byte", 7), ("byte", 1), ("byte", 2), ("byte", 2)).ret()
    tick = marker(Asm()).ret()
    h = Harness([(start, []), (tick, [])]).run(800)
    assert h.when("TimerFired") == [200, 400] and len(h.when("Gate")) == 2


def test_spawn_part_runs_on_a_new_thread_and_the_caller_carries_on():
    start = marker(Asm().op("spawn_part", 1), 1).ret()
    other = Asm().call("Wait", ("byte", 1)).call("DisableGenericComms", ("byte", 1)).ret()
    h = Harness([(start, []), (other, [])]).run(300)
    gates = [(t, d["gate"]) for t, o, d in h.log if o == "Gate"]
    assert gates == [(0, "taunts"), (200, "generic")]  # Wait 1 at clock 0 resumes at clock 2


def test_call_part_is_synchronous_and_returns_its_value():
    start = (Asm().op("call_part", 1).op("push_result").call("DisableTaunts")).ret()
    callee = Asm().call("Wait", ("byte", 1)).op("push_byte", 1).op("return")
    h = Harness([(start, []), (callee, [])]).run(300)
    assert [(t, d["disabled"]) for t, o, d in h.log if o == "Gate"] == [(200, True)]


def test_globals_drive_branches_and_assign_through_select():
    a = (
        Asm()
        .op("select_global", 0)
        .push(("byte", 5))
        .op("assign")
        .push(("global", 0))
        .push(("byte", 5))
        .op("equal")
        .branch_if_zero("no")
        .call("PlaySpeech", "yes.ut")
        .label("no")
        .ret()
    )
    h = Harness([(a, [])])
    from audio.games.starlancer.formats.dte import Global

    h.dte.globals = [Global(value=0)]
    h.vm = Vm(h.dte, h.radio, h.decide, MsvcRand(1))
    h.run(10)
    assert h.vm.globals[0] == 5 and h.when("Started", file="yes.ut")


def test_global_override_changes_the_branch():
    a = (
        Asm()
        .push(("global", 0))
        .push(("byte", 1))
        .op("equal")
        .branch_if_zero("no")
        .call("PlaySpeech", "yes.ut")
        .jump("end")
        .label("no")
        .call("PlaySpeech", "no.ut")
        .label("end")
        .ret()
    )
    h = Harness([(a, [])])
    from audio.games.starlancer.formats.dte import Global

    h.dte.globals = [Global(value=0)]
    h.vm = Vm(h.dte, h.radio, h.decide, MsvcRand(1), globals_={0: 1})
    assert h.run(10).when("Started", file="yes.ut")


def test_trigger_runs_at_once_and_interrupt_parks_until_it_fires_again():
    trig = (
        Asm()
        .call("PlaySpeech", "first.ut")
        .call("InterruptTriggerCode")
        .call("PlaySpeech", "second.ut")
        .ret()
    )
    h = Harness([(Asm().ret(), [])], trig).run(10)
    h.vm.triggers.raise_event(0, Event(1, 0))
    assert h.when("Started", file="first.ut") == [10] and h.vm.running()[0].interrupted
    h.run(50, start=False)
    assert not h.when("Started", file="second.ut")
    h.vm.triggers.raise_event(0, Event(1, 0))
    h.run(10, start=False)
    assert h.when("TriggerResumed") and h.when("Started", file="second.ut")


def test_repeat_mode_zero_disarms_after_firing():
    trig = Asm().call("PlaySpeech", "x.ut").ret()
    h = Harness([(Asm().ret(), [])], trig, repeat=0).run(5)
    h.vm.triggers.raise_event(0, Event(1, 0))
    h.run(10, start=False)
    h.vm.triggers.raise_event(0, Event(1, 0))
    assert len(h.when("TriggerFired")) == 1 and not h.vm.triggers.armed[0]


def test_commands_outside_speech_are_logged_as_skipped():
    a = Asm().call("SetAI", ("ship", 0), ("byte", 6), ("byte", 1), None).ret()
    h = Harness([(a, [])]).run(5)
    sk = [d for _t, o, d in h.log if o == "Skipped"]
    assert sk and sk[0]["command"] == "SetAI" and sk[0]["args"] == ["ship(0)", 6, 1, 0xFFFFFFFF]


def test_thread_pool_refuses_the_32nd():
    start = Asm()
    for _ in range(40):
        start.op("spawn_part", 1)
    start.ret()
    sleeper = Asm().call("Wait", ("byte", 100)).ret()
    h = Harness([(start, []), (sleeper, [])]).run(5)
    # the start thread plus 30 sleepers make 31: the remaining 10 spawns are refused
    assert len(h.when("ThreadRefused")) == 10 and len(h.vm.running()) == 30


def test_nop_has_no_stack_effect():
    a = Asm()
    for _ in range(40):
        a.op("nop")
    a.call("PlaySpeech", "done.ut").ret()
    h = Harness([(a, [])]).run(20)
    assert h.when("Started", file="done.ut") and not h.when("Fault")


def test_a_self_looping_random_branch_is_ended_with_one_decision():
    a = Asm().raw(bytes([0x51, 0, 0, 0])).ret()  # default target 0: the opcode again, for ever
    h = Harness([(a, [])], thread_budget=300).run(40)
    assert len(h.when("NoProgress")) == 1 and not h.vm.running()
    assert len(h.when("RandomBranch")) == 100  # decisions past the per-thread cap are counted
    assert h.when("BudgetExceeded", budget="thread_budget")


def test_recursion_ends_in_a_stack_overflow_not_a_hang():
    a = Asm().op("call_part", 0).ret()
    h = Harness([(a, [])]).run(5)
    assert any("stack overflow" in d.get("reason", "") for _t, o, d in h.log if o == "Fault")


@settings(max_examples=examples(80))
@given(st.binary(min_size=1, max_size=80), st.integers(0, 2**32 - 1))
def test_fuzz_hostile_scripts_cannot_hang_the_vm(code, seed):
    blk = write_routine(code, [1, 2, 3])
    dte = Dte(
        script=blk + write_routine(code[::-1]),
        parts=[Part(start=0, flags=1, extent=len(blk) // 2), Part(start=len(blk) // 2, argc=code[0] % 3)],
        ships=[Ship()],
        objects=[ObjectEntry(trigger_count=1)],
        triggers=[Trigger(link=0, condition=1)],
    )
    radio = Radio(NullPresenter(default=0.2), lambda *a, **k: None)
    cfg = VmSettings(thread_budget=500)
    vm = Vm(dte, radio, lambda *a, **k: None, MsvcRand(seed), cfg)
    most = 0  # instructions of the busiest pass: bounded by the budgets, not by a wall clock
    try:
        vm.mission_start()
        for t in range(600):
            if t % 100 == 0:
                vm.triggers.post(Event(1, 0))
            radio.tick(t)
            if t % 4 == 0:
                vm.frame(t)
                most = max(most, vm.spent)
                radio.frame(t)
    except BarkbusError:
        pass
    # a pass stops starting threads at frame_budget; the thread it last started runs at most its own
    assert most <= cfg.frame_budget + cfg.thread_budget
