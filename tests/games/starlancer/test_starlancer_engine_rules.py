"""The VM, triggers, faces, radio and remarks by the engine's rules (spec section 11, OpenReliant's tests).

Every mission here is built with our writers (``write_routine``, :class:`Asm`); expected values are the
spec's (its worked examples and the OpenReliant tests it cites), not computed by the modules tested.
"""

from __future__ import annotations

import pytest
from starlancer_fakes import Pool

from audio.core.crt import MsvcRand
from audio.games.starlancer.formats.dte import (
    Dte,
    FlightGroup,
    ObjectEntry,
    Part,
    Ship,
    Trigger,
    write_routine,
)
from audio.games.starlancer.radio.faces import FACES, face_film
from audio.games.starlancer.radio.radio import Line, NullPresenter, Radio
from audio.games.starlancer.radio.remarks import Remarks
from audio.games.starlancer.script.asm import Asm
from audio.games.starlancer.script.triggers import Event
from audio.games.starlancer.script.values import Ref
from audio.games.starlancer.script.vm import Vm, VmSettings

U = 0xFFFFFFFF
ANY = (U,) * 5


class World:
    """Parts (part 0 the start part), triggers ``(object, condition, block, **fields)`` and two ships in a
    flight group (objects 0, 1) plus a third ship (object 2); object 3 is the flight group."""

    def __init__(self, parts, triggers=(), *, start=True, **settings):
        pool = Pool()
        blocks = [write_routine(a.code()) for a in parts] + [write_routine(t[2].code()) for t in triggers]
        offs, at = [], 0
        for b in blocks:
            offs.append(at)
            at += len(b)
        ps = [
            Part(name=pool.add(f"P{i}"), start=offs[i] // 2, flags=int(i == 0 and start))
            for i in range(len(parts))
        ]
        trs, slices = [], {0: [], 1: [], 2: [], 3: []}
        for k, (obj, *_rest) in enumerate(triggers):
            slices[obj].append(k)
        order = [k for o in range(4) for k in slices[o]]
        for k in order:
            obj, cond, _code, fields = triggers[k]
            trs.append(Trigger(condition=cond, link=offs[len(parts) + k] // 2, **{"operands": ANY, **fields}))
        objects, first = [], 0
        for o in range(4):
            objects.append(
                ObjectEntry(kind=1 if o == 3 else 0, trigger_count=len(slices[o]), first_trigger=first)
            )
            first += len(slices[o])
        self.order = order
        self.dte = Dte(
            pool=bytes(pool.data),
            script=b"".join(blocks),
            parts=ps,
            triggers=trs,
            ships=[
                Ship(object_id=0, name=pool.add("Player"), flight_group=0, pilot=0),
                Ship(object_id=1, name=pool.add("Wing"), flight_group=0, pilot=7),
                Ship(object_id=2, name=pool.add("Bandit"), pilot=9),
            ],
            flight_groups=[FlightGroup(object_id=3, name=pool.add("Alpha"))],
            objects=objects,
        )
        self.log = []
        self.now = 0
        self.radio = Radio(NullPresenter(default=1.0), self.decide)
        self.vm = Vm(self.dte, self.radio, self.decide, MsvcRand(1), VmSettings(**settings))

    def decide(self, outcome, **d):
        self.log.append((self.now, outcome, d))

    def run(self, ticks, start=False):
        if start:
            self.vm.mission_start()
        for t in range(self.now, self.now + ticks):
            self.now = t
            self.radio.tick(t)
            if t % 4 == 0:
                self.vm.frame(t)
                self.radio.frame(t)
        self.now += ticks
        return self

    def when(self, outcome, **match):
        return [t for t, o, d in self.log if o == outcome and all(d.get(k) == v for k, v in match.items())]


def mark(a, n):
    """A visible side effect: DisableTaunts(n) logs a Gate decision with disabled = bool(n)."""
    return a.call("DisableTaunts", ("byte", n))


# -- 11.3 Wait -------------------------------------------------------------------------------
def test_wait_two_at_clock_zero_resumes_at_clock_three():
    w = World([mark(Asm().call("Wait", ("byte", 2)), 1).ret()]).run(500, start=True)
    assert w.when("Gate") == [300]


def test_wait_zero_at_clock_five_resumes_at_clock_six():
    part = mark(Asm().call("Wait", ("byte", 0)), 1).ret()
    start = Asm().call("Wait", ("byte", 4)).op("spawn_part", 1).ret()  # runs at clock 5
    w = World([start, part]).run(800, start=True)
    assert w.when("Spawn") == [500] and w.when("Gate") == [600]


# -- 11.4 Timers -----------------------------------------------------------------------------
def timer_world(period, firings, **kw):
    start = Asm().call("CreateTimer", ("byte", 7), ("byte", 1), ("byte", period), ("byte", firings)).ret()
    return World([start, mark(Asm(), 1).ret()], **kw)


def test_a_period_two_timer_of_two_firings_counts_0_1_1_2_2_2():
    w = timer_world(2, 2).run(1, start=True)
    counts = []
    for _ in range(6):
        w.run(100)
        counts.append(len(w.when("TimerFired")))
    assert counts == [0, 1, 1, 2, 2, 2]


def test_a_period_one_timer_fires_at_clocks_2_3_4_and_its_thread_is_deferred():
    w = timer_world(1, 3).run(600, start=True)
    assert w.when("TimerFired") == [200, 300, 400]
    assert w.when("Gate") == [204, 304, 404]  # the next pass, after the threads of its own frame


def test_a_period_zero_timer_first_fires_at_65536_seconds():
    w = timer_world(0, 0).run(1, start=True)
    vm = w.vm
    for c in range(1, 65_537):
        vm.clock = c
        vm.run_timers()
        if w.when("TimerFired"):
            break
    assert vm.clock == 65_536


def test_the_timer_table_holds_16_and_create_destroys_the_same_id_first():
    start = Asm()
    for i in range(17):
        start.call("CreateTimer", ("byte", i), ("byte", 1), ("byte", 5), ("byte", 0))
    start.call("CreateTimer", ("byte", 3), ("byte", 1), ("byte", 9), ("byte", 0))
    w = World([start.ret(), Asm().ret()]).run(1, start=True)
    assert len(w.when("TimerRefused")) == 1 and len(w.when("BudgetExceeded", budget="timers")) == 1
    ids = sorted(t.id for t in w.vm.timers if t is not None)
    assert ids == list(range(16)) and [t.period for t in w.vm.timers if t and t.id == 3] == [9]


# -- 11.2 the scheduler --------------------------------------------------------------------
def test_a_pass_runs_only_as_many_slots_as_were_alive_when_it_began():
    # the timer's thread is alone when its pass begins: the part it spawns waits for the next pass
    tick = Asm().op("spawn_part", 2).ret()
    start = Asm().call("CreateTimer", ("byte", 1), ("byte", 1), ("byte", 1), ("byte", 1)).ret()
    w = World([start, tick, mark(Asm(), 1).ret()]).run(400, start=True)
    assert w.when("Spawn") == [204] and w.when("Gate") == [208]


# -- 11.5 results, 11.10 opcodes and faults ---------------------------------------------------
def branch_on_result(a, want):
    return (
        a.op("push_result")
        .push(("byte", want))
        .op("equal")
        .branch_if_zero("no")
        .call("PlaySpeech", "yes.ut")
        .label("no")
        .ret()
    )


@pytest.mark.parametrize(
    "code, want",
    [
        (Asm().call("PlaySpeech", "a.ut"), 1),
        (Asm().call("IsShipThisPlayer", ("ship", 0)), 1),
        (Asm().call("IsShipThisPlayer", ("ship", 1)), 2),
        (Asm().call("WhenPlayerLastJumped"), 0xFF),  # 0xFFFF before any jump: low byte compared below
    ],
)
def test_command_results_reach_push_result(code, want):
    if want == 0xFF:
        code = (
            code.op("push_result")
            .push(("const", 0))
            .op("equal")
            .branch_if_zero("no")
            .call("PlaySpeech", "yes.ut")
            .label("no")
            .ret()
        )
        w = World([code])
        blk = write_routine(code.code(), [0xFFFF])
        w.dte.script = blk
        w.dte.parts[0].start = 0
        w.vm = Vm(w.dte, w.radio, w.decide, MsvcRand(1))
    else:
        w = World([branch_on_result(code, want)])
    w.run(10, start=True)
    assert w.when("Started", file="yes.ut")


@pytest.mark.parametrize(
    "a, b, op, want",
    [
        (16777217, 0, "add_f", 16777216),
        (5, -3 & U, "sub_f", 8),
        (-2 & U, 3, "mul_f", -6 & U),
        (7, 2, "div_f", 3),
        (7, 0, "div_f", 0),
    ],
)
def test_float_opcodes_round_once_to_f32_and_truncate(a, b, op, want):
    code = Asm().push(("const", 0)).push(("const", 1)).op(op).push(("const", 2)).op("equal")
    code = code.branch_if_zero("no").call("PlaySpeech", "yes.ut").label("no").ret()
    w = World([Asm().ret()])
    w.dte.script = write_routine(code.code(), [a, b, want])
    w.vm = Vm(w.dte, w.radio, w.decide, MsvcRand(1))
    w.run(10, start=True)
    assert w.when("Started", file="yes.ut")


def test_float_assigns_hold_f32_bit_patterns():
    # f32 6.0 -= 2, *= 3, /= 4 gives 3.0 (0x40400000); 1.5 += 2 gives 3.5 (0x40600000)
    code = (
        Asm()
        .op("select_global", 0).push(("byte", 2)).op("sub_assign_f")
        .op("select_global", 0).push(("byte", 3)).op("mul_assign_f")
        .op("select_global", 0).push(("byte", 4)).op("div_assign_f")
        .op("select_global", 1).push(("byte", 2)).op("add_assign_f")
        .ret()
    )  # fmt: skip
    from audio.games.starlancer.formats.dte import Global

    w = World([code])
    w.dte.globals = [Global(value=0x40C00000), Global(value=0x3FC00000)]
    w.vm = Vm(w.dte, w.radio, w.decide, MsvcRand(1))
    w.run(5, start=True)
    assert w.vm.globals == [0x40400000, 0x40600000]


def test_push_percent_rounds_each_product_to_f32():
    code = Asm().push(("byte", 200)).op("push_percent", 50).push(("byte", 100)).op("equal")
    code = code.branch_if_zero("no").call("PlaySpeech", "yes.ut").label("no").ret()
    assert World([code]).run(5, start=True).when("Started", file="yes.ut")


def test_a_fault_ends_the_thread_before_the_store():
    code = Asm().op("select_global", 0).push(("byte", 1)).push(("byte", 0)).op("div").op("assign")
    from audio.games.starlancer.formats.dte import Global

    w = World([mark(code, 1).ret()])
    w.dte.globals = [Global(value=9)]
    w.vm = Vm(w.dte, w.radio, w.decide, MsvcRand(1))
    w.run(10, start=True)
    assert w.vm.globals == [9] and w.when("Fault") and not w.when("Gate")


def test_a_command_with_too_few_pushes_ends_the_thread():
    w = World([mark(Asm().op("command", 0x06), 1).ret()]).run(5, start=True)  # PlaySpeech, empty stack
    assert any("underflow" in d["reason"] for _t, o, d in w.log if o == "Fault") and not w.when("Gate")


def test_wait_for_key_waits_until_the_key_is_held():
    w = World([mark(Asm().call("WaitForKey", ("byte", 5)), 1).ret()]).run(200, start=True)
    assert not w.when("Gate")
    w.vm.keys.add(5)
    w.run(8)
    assert w.when("Gate")


# -- 11.7-11.9 triggers ----------------------------------------------------------------------
def fired(w):
    return [d["trigger"] for _t, o, d in w.log if o == "TriggerFired"]


def test_qualifier_matches_exactly():
    w = World([Asm().ret()], [(1, 0, Asm().ret(), {}), (1, 0, Asm().ret(), {"qualifier": 4})]).run(1, True)
    w.vm.triggers.raise_event(1, Event(0, 1, (0,) * 5, 4))
    w.vm.triggers.raise_event(1, Event(0, 1, (0,) * 5, 0xFF))
    assert fired(w) == [1, 0]  # the component event only the component trigger; the ship event the other


def test_an_operand_for_any_ship_passes_the_players_ships_alone():
    tr = (1, 1, Asm().ret(), {"operands": (0x2000, U, U, U, U), "repeat": 1})
    w = World([Asm().ret()], [tr]).run(1, True)
    w.vm.triggers.raise_event(1, Event(1, 1, (Ref("ship", 1), Ref("ship", 1))))
    w.vm.triggers.raise_event(1, Event(1, 1, (Ref("ship", 0), Ref("ship", 1))))
    assert fired(w) == [0] and len(w.when("TriggerIgnored")) == 1  # the refusal: it stays armed


def test_operand_references_name_ships_and_an_unknown_tag_never_passes():
    tr = (1, 1, Asm().ret(), {"operands": (0x00000002, U, U, U, U), "repeat": 1})
    bad = (2, 1, Asm().ret(), {"operands": (0x00050002, U, U, U, U), "repeat": 1})
    w = World([Asm().ret()], [tr, bad]).run(1, True)
    w.vm.triggers.raise_event(1, Event(1, 1, (Ref("ship", 2), Ref("ship", 1))))
    w.vm.triggers.raise_event(2, Event(1, 2, (Ref("ship", 2), Ref("ship", 2))))
    w.vm.triggers.raise_event(2, Event(1, 2, (Ref("ship", 2), Ref("ship", 2))))
    assert fired(w) == [0] and len(w.when("OperandFault")) == 1


def test_an_unset_operand_of_zero_is_ship_zero():
    tr = (1, 1, Asm().ret(), {"operands": (0, 0, 0, 0, 0)})
    w = World([Asm().ret()], [tr]).run(1, True)
    w.vm.triggers.raise_event(1, Event(1, 1, (Ref("ship", 2), Ref("ship", 1))))
    assert fired(w) == []


def test_a_counted_trigger_counts_down_even_when_its_thread_still_runs():
    tr = (1, 1, Asm().call("Wait", ("byte", 50)).ret(), {"repeat": 2, "count_a": 2})
    w = World([Asm().ret()], [tr]).run(1, True)
    w.vm.triggers.raise_event(1, Event(1, 1))
    w.vm.triggers.raise_event(1, Event(1, 1))
    assert fired(w) == [0] and w.vm.triggers.counts[0] == 0 and not w.vm.triggers.armed[0]


def test_every_slice_trigger_is_armed_after_the_start_parts():
    tr = (1, 1, Asm().ret(), {"armed": 0, "repeat": 1})
    start = Asm().call("SetTriggerState", ("ship", 1), ("byte", 1), ("byte", 0)).ret()
    w = World([start], [tr]).run(1, True)
    assert w.when("TriggerState") and w.vm.triggers.armed == [True]


def test_event_values_become_the_thread_locals_and_shot_at_is_kept():
    code = Asm().push(("local", 1)).push(("byte", 40)).op("equal").branch_if_zero("no")
    code = code.call("PlaySpeech", "local.ut").label("no")
    code = code.raw(bytes([0x4B, 0, 2, 1])).push(("byte", 40)).op("equal").branch_if_zero("end")
    code = code.call("PlaySpeech", "kept.ut").label("end").ret()
    w = World([Asm().ret()], [(1, 0, code, {})]).run(1, True)
    w.vm.triggers.raise_event(1, Event(0, 1, (Ref("ship", 2), 40, 40, Ref("ship", 1), U)))
    w.run(300)
    assert [d["file"] for _t, o, d in w.log if o == "Started"] == ["local.ut", "kept.ut"]


def test_a_groups_destroyed_goes_ahead_once_every_member_is_destroyed():
    once = (3, 1, Asm().ret(), {"repeat": 0})
    always = (3, 1, Asm().ret(), {"repeat": 1})
    w = World([Asm().ret()], [once, always]).run(1, True)
    w.vm.triggers.post(Event(1, 0, (U, Ref("ship", 0))))
    w.run(4)
    assert fired(w) == [1] and w.when("TriggerIgnored", reason="group veto: not every member is destroyed")
    w.vm.triggers.post(Event(1, 1, (U, Ref("ship", 1))))
    w.run(4)
    assert fired(w) == [1, 0, 1]


# -- 11.11 ships and faces --------------------------------------------------------------------
def test_faces_table_films_and_the_dead_channel():
    assert len(FACES) == 194 and FACES[2].films[0] == "45Tigers_Moose"
    assert face_film(0, 3) == "pilots\\45TigersWL_Bandit_d.fm8"
    assert face_film(0, 4) is None and face_film(194, 0) is None
    assert face_film(2, 0, mission=5) == "pilots\\45Volntrs_Moose.fm8"  # through 13 the 45th's swap


def test_a_ship_speaks_only_once_created():
    talk = Asm().call("CommsFromShip", ("ship", 1), ("byte", 0), "a.ut").call("WaitForMovie")
    talk = talk.call("CreateFlightGroup", ("flight_group", 0))
    talk = talk.call("CommsFromShip", ("ship", 1), ("byte", 4), "b.ut").ret()
    w = World([talk]).run(600, start=True)
    assert w.when("Silent") and [d["file"] for _t, o, d in w.log if o == "Said"] == ["b.ut"]
    said = next(d for _t, o, d in w.log if o == "Said")
    assert said["film"] == "pilots\\static.fm8" and said["speaker"] == ""  # head 4: the dead channel


# -- 11.13-11.15 the radio -------------------------------------------------------------------
def test_a_queued_line_of_nobody_plays_nothing_and_expiry_is_strict():
    log = []
    r = Radio(NullPresenter(default=1.0), lambda o, **d: log.append((o, d)))
    r.say(Line("n.ut"), "queued")
    r.say(Line("late.ut", "x", "pilot", 0xFFFF, "pilots\\f.fm8", expiry=150), "queued")
    r.frame(100)
    r.frame(200)
    assert not [d for o, d in log if o == "Started"]
    assert [d["file"] for o, d in log if o == "Expired"] == ["late.ut"]


def test_a_report_due_at_400_is_said_at_401():
    log = []
    r = Radio(NullPresenter(), lambda o, **d: log.append((o, d)))
    r.report(Line("rep.ut", "x", "pilot", 0xFFFF, "pilots\\f.fm8"), 400)
    r.step_reports(400, lambda line: "")
    assert r.reports and not r.queue
    r.step_reports(401, lambda line: "")
    assert not r.reports and [ln.speech for ln in r.queue] == ["rep.ut"]


def test_generic_comms_gate_mutes_the_kill_remark_not_the_jump_reminder():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    w.radio.set_gate("generic", True)
    w.vm.ships[2].hostile = True
    rm.kill(2, "fighter", 10)
    rm.vars["jump_ready"] = 1
    rm.frame(20)
    assert w.when("Gated") and [d["rule"] for _t, o, d in w.log if o == "Remark"] == ["jump reminder"]


def test_the_jump_reminder_calls_four_times_then_the_player_jumps():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    rm.vars["jump_ready"] = 1
    for t in range(0, 11_000, 4):  # calls at 2000, 4000, 6000, 8000; the jump 2300 after the 4th
        rm.frame(t)
    calls = [d["file"][:6] for _t, o, d in w.log if o == "Remark"]
    assert calls[0][:4] == "jmp_" and calls[1:] == ["moo_w1", "moo_w2", "moo_w3", "moo_w4"]
    assert len(w.when("PlayerJumps")) == 1


def test_a_wingman_status_answer_is_a_report_250_ticks_later_in_its_voice():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    rm.wingman(1, "status", busy=False, armour=1, now=1000)  # pilot 7: vip, the fuller set
    ((due, line),) = w.radio.reports
    n = int(line.speech[len("vip_status_") : -3])
    assert due == 1250 and line.speech.startswith("vip_status_") and 8 <= n <= 15


def test_a_hostile_ace_answers_a_taunt_with_its_own_lines():
    w = World([Asm().ret()]).run(1, True)
    w.vm.ships[2].hostile = True
    w.vm.ships[2].pilot = 10  # an ace: hs_res_001..007
    Remarks(w.vm, w.decide).wingman(2, "taunt", busy=False, armour=0, now=0)
    ((due, line),) = w.radio.reports
    assert due == 300 and line.speech.startswith("hs_res_00") and 1 <= int(line.speech[7:10]) <= 7


def test_in_squad_follows_nested_squads_and_walks_a_cycle_once():
    from audio.games.starlancer.formats.dte import Squad, SquadMember

    code = Asm().push(("ship", 1)).push(("squad", 1)).op("in_squad").branch_if_zero("no")
    code = code.call("PlaySpeech", "yes.ut").label("no").ret()
    w = World([code])
    w.dte.objects += [ObjectEntry(kind=2), ObjectEntry(kind=2)]  # squads 0 and 1 are objects 4 and 5
    w.dte.squads = [Squad(), Squad()]
    w.dte.squad_members = [
        SquadMember(object_id=3, squad=0),  # squad 0 holds flight group Alpha (ships 0 and 1)
        SquadMember(object_id=4, squad=1),  # squad 1 holds squad 0 ...
        SquadMember(object_id=5, squad=1),  # ... and itself (the game would loop for ever)
    ]
    w.vm = Vm(w.dte, w.radio, w.decide, MsvcRand(1))
    assert w.run(10, start=True).when("Started", file="yes.ut")


def test_permission_to_land_is_heard_once_per_500_ticks_and_answered_by_the_bridge():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    rm.permission_to_land("reliant", 0, now=100)  # not cleared: a denial
    rm.vars["landing_cleared"] = 1
    rm.permission_to_land("yamato", 1, now=300)  # within 500 ticks: not heard
    rm.permission_to_land("yamato", 1, now=700)
    (d1, den), (d2, ok) = w.radio.reports
    assert (
        (d1, d2) == (400, 1000)
        and den.speech[:12] == "rel_lnd_den_"
        and 1 <= int(den.speech[12:14]) <= 4
        and den.film.endswith("Rel_Brdge_Off.fm8")
    )
    assert ok.speech.startswith("yam_lnd_0") and 10 <= int(ok.speech[8:11]) <= 16


def test_backup_is_granted_once_a_mission():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    assert rm.request_backup("reliant", True, 0) and not rm.request_backup("reliant", True, 10)
    first, second = (int(line.speech[10:13]) for _due, line in w.radio.reports)
    assert 1 <= first <= 7 and 8 <= second <= 14


def test_scolding_a_fuller_set_wingman_draws_from_cmon_1_to_12():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    for _ in range(5):
        rm.wingman(1, "scold", busy=False, armour=0, now=0)
    assert all(
        ln.speech.startswith("vip_cmon_") and 1 <= int(ln.speech[9:12]) <= 12 for _d, ln in w.radio.reports
    )
    assert [d for d, _ln in w.radio.reports] == [300] * 5


# -- 11.15 the rescue remark and the player's own lines -----------------------------------------
def msvc_next(state):
    """The game's rand() step (Microsoft C: state * 214013 + 2531011, bits 16..30), computed here."""
    state = (state * 214013 + 2531011) & 0xFFFFFFFF
    return state, (state >> 16) & 0x7FFF


def test_the_rescue_is_said_by_wing_place_5_once_frame_start_passes_ejection_plus_1000():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide, rescuer=1)  # wing place 5: ship 1, pilot 7 (voice vip)
    rm.eject(2, 100)
    rm.frame(1100)  # not yet: strictly after 1100
    assert not [d for _t, o, d in w.log if d.get("rule") == "rescue"]
    _state, r = msvc_next(w.vm.rand.state)
    rm.frame(1104)
    rm.frame(5000)  # once per ejection
    (said,) = [d for _t, o, d in w.log if o == "Remark" and d.get("rule") == "rescue"]
    assert said["file"] == f"{FACES[7].friendly_voice}res_{r % 3 + 1:03d}.ut"
    (line,) = w.radio.queue  # mode 2 (if idle), flags 5, no expiry, said as the pilot (radio_say_pilot)
    assert (line.speaker_kind, line.flags, line.expiry) == ("pilot", 5, -1)


def test_no_rescue_when_the_pod_explodes_and_nothing_but_the_draw_without_a_place_5_ship():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide, rescuer=1)
    rm.eject(2, 0)
    rm.pod_exploded()
    rm.frame(2000)
    assert not [d for _t, o, d in w.log if o == "Remark" and d.get("rule") == "rescue" and "file" in d]
    rm = Remarks(w.vm, w.decide)  # no ship in wing place 5
    rm.eject(2, 0)
    calls = w.vm.rand.calls
    rm.frame(2000)
    assert w.vm.rand.calls == calls + 1  # the suffix is drawn first, then nothing is said
    assert w.log[-1][2] == {"rule": "rescue", "reason": "no ship in wing place 5: nothing"}


def test_the_rescue_is_muted_by_disable_generic_comms():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide, rescuer=1)
    w.radio.set_gate("generic", True)
    rm.eject(2, 0)
    rm.frame(1004)
    assert [d["rule"] for _t, o, d in w.log if o == "Gated"] == ["rescue"]


@pytest.mark.parametrize(("voice", "prefix"), [("male", "mp"), ("female", "fp")])
def test_the_players_own_lines_are_mp_or_fp_by_the_pilots_sex(voice, prefix):
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide, player_voice=voice)
    rm.wingman(1, "attack", busy=False, armour=0, now=0)
    rm.permission_to_land("reliant", 0, now=10)
    rm.request_backup("reliant", True, 20)
    heard = [
        d["file"]
        for _t, o, d in w.log
        if d.get("file", "").endswith(("hud_001.ut", "hud_012.ut", "hud_013.ut"))
    ]
    assert sorted(set(heard)) == [f"{prefix}hud_001.ut", f"{prefix}hud_012.ut", f"{prefix}hud_013.ut"]


def test_an_unknown_player_voice_is_refused():
    w = World([Asm().ret()]).run(1, True)
    with pytest.raises(ValueError, match="male or female"):
        Remarks(w.vm, w.decide, player_voice="robot")


def test_moose_calls_the_pilot_to_eject_queued_from_ejt_1_to_8_even_with_generic_comms_muted():
    w = World([Asm().ret()]).run(1, True)
    rm = Remarks(w.vm, w.decide)
    w.radio.set_gate("generic", True)
    state = w.vm.rand.state
    rm.eject_call(10)
    _state, r = msvc_next(state)
    (line,) = w.radio.queue
    assert line.speech == f"ejt_{r % 8 + 1:03d}.ut" and line.flags == 5 and line.expiry == -1
    assert not w.when("Gated") and w.when("Queued", source="remark:eject call", mode="queued")
