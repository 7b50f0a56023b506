"""The control-flow disassembler and its symbolic stack, on the spec's blocks and writer-built ones."""

from __future__ import annotations

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from starlancer_fakes import MISSION1_BLOCK, SPEC_BLOCK, small_mission

from audio.core.errors import BarkbusError, FormatError
from audio.games.starlancer.formats.dte import read_dte, write_dte, write_routine
from audio.games.starlancer.script.asm import Asm
from audio.games.starlancer.script.disasm import disassemble, disassemble_routine
from audio.games.starlancer.script.opcodes import OPCODES, SIZE_CLASSES


def _calls(d):
    return [(c.ip, c.text(), c.guard) for c in d.calls]


def test_spec_block_extraction():
    d = disassemble(SPEC_BLOCK)
    assert _calls(d) == [
        (23, 'CommsFromShip(ship=ship(5), head=byte(0), speech="ms1_ban_001.ut")', ()),
        (25, "WaitForMovie()", ()),
        (29, "Wait(seconds=const(0)=2)", ()),
        (48, 'PlaySpeech(speech="x01.ut")', ("equal(global(3), byte(0))",)),
        (50, "WaitForSpeech()", ("equal(global(3), byte(0))",)),
    ]
    assert sorted(d.instructions) == [2, 4, 6, 23, 25, 27, 29, 31, 33, 35, 36, 39, 48, 50, 52, 54]
    assert d.instructions[36].target == 52 and d.instructions[52].guard == ()
    assert d.slack == [(55, 56)] and d.errors == [] and d.size == 64


def test_spec_block_json_fields():
    d = disassemble(SPEC_BLOCK)
    j = d.instructions[36].to_json()
    assert (j["ip"], j["opcode"], j["mnemonic"], j["operands"], j["target"]) == (
        36,
        0x23,
        "branch_if_zero",
        [15],
        52,
    )
    s = d.instructions[6].to_json()
    assert s["mnemonic"] == "push_string" and s["text"] == "ms1_ban_001.ut" and s["operands"][0] == 0x10


def test_mission1_block_from_the_seed():
    d = disassemble(MISSION1_BLOCK)
    assert sorted(d.instructions) == [2, 4, 6, 8, 10, 11, 14, 16, 19, 21, 23, 25]
    assert d.instructions[11].target == 19 and d.instructions[16].target == 21
    calls = [(c.ip, c.kind, c.index, c.guard) for c in d.calls]
    assert calls == [
        (2, "call_part", 1, ()),
        (4, "command", 0x17, ()),
        (14, "call_part", 21, ("equal(global(0), const(0)=1)",)),
        (19, "call_part", 24, ("!equal(global(0), const(0)=1)",)),
        (21, "command", 0x17, ()),
    ]
    assert d.slack == [(26, 28)] and d.constants == (1, 0x0D220008)


def test_stale_padding_that_looks_like_code_is_slack():
    code = Asm().call("WaitForMovie").ret().code()  # 5 bytes; block 7 -> 8, 1 pad byte
    blk = write_routine(code, pad=b"\x21")
    d = disassemble(blk)
    assert sorted(d.instructions) == [2, 4, 6] and d.slack == [(7, 8)] and not d.errors


def test_random_branch_follows_arms_and_default_never_the_stale_slots():
    stale = bytes.fromhex("2c48320a28002c06210b")  # a SetAI-looking residue
    a = (
        Asm()
        .random_branch("dflt", [("a1", 30), ("a2", 70)], reserve=10, stale=stale, unused=0x2C)
        .label("a1")
        .call("PlaySpeech", "one.ut")
        .ret()
        .label("a2")
        .call("PlaySpeech", "two.ut")
        .ret()
        .label("dflt")
        .call("PlaySpeech", "three.ut")
        .ret()
    )
    blk = write_routine(a.code())
    d = disassemble(blk)
    rb = d.instructions[2]
    assert rb.size == 12 and rb.arms[0][0] == 2 + 44 and rb.arms[0][1] == 30 and rb.arms[1][1] == 70
    assert d.slack[0] == (14, 46)  # 8 unused slots of 4 bytes
    got = {c.args[0].args[0]: c.guard for c in d.calls}
    assert got == {
        "one.ut": ("random arm 0 (roll < 30)",),
        "two.ut": ("random arm 1 (roll < 70)",),
        "three.ut": ("random default",),
    }


def test_random_branch_target_ffff_means_default():
    a = Asm().random_branch("d", [("d", 50)]).label("d").ret()
    code = bytearray(a.code())
    code[4:6] = b"\xff\xff"
    d = disassemble(write_routine(bytes(code)))
    assert d.instructions[2].arms[0][0] == d.instructions[2].target == 2 + 8


def test_wide_operands_and_components():
    a = (
        Asm()
        .op("push_constant_wide", 0x0102)
        .op("push_ship_wide", 0x0304)
        .op("push_component", 5, 6)
        .op(0x55, 7, 8)
        .op("push_event_value", 1, 2, 3)
        .call("DarrensNaughtyBlag")
        .ret()
    )
    d = disassemble(write_routine(a.code(), [11, 12]))
    assert d.instructions[2].operands == (0x0102,) and d.instructions[5].operands == (0x0304,)
    assert [str(s) for s in d.calls[0].args] == ["component(7, 8)", "event_value(1, 2, 3)"]
    assert str(d.instructions[2].call or "") == ""
    stack_texts = [i.mnemonic for i in d.ordered()]
    assert stack_texts[:5] == [
        "push_constant_wide",
        "push_ship_wide",
        "push_component",
        "push_component",
        "push_event_value",
    ]


def test_push_constant_wide_reads_the_constant_table():
    a = Asm().op("push_constant_wide", 1).call("Wait").ret()
    d = disassemble(write_routine(a.code(), [5, 9]))
    assert str(d.calls[0].args[0]) == "const(1)=9"


def test_command_pops_its_catalogue_count_and_records_underflow():
    a = Asm().push(("byte", 1)).push(("byte", 2)).push(("byte", 3)).push(("byte", 4)).call(0x10).ret()
    d = disassemble(write_routine(a.code()))
    c = d.calls[0]
    assert c.name == "StartDirectorCam" and c.underflow == 1
    assert [str(x) for x in c.args] == ["underflow", "byte(1)", "byte(2)", "byte(3)", "byte(4)"]


@pytest.mark.parametrize(
    "code, msg",
    [
        (bytes([0x50, 0x43]), "invalid opcode 0x50"),
        (bytes([0x42, 0x00, 0x30]), "leaves the block"),
        (bytes([0x21, 0x5F, 0x43]), "outside the 95-entry catalogue"),
        (bytes([0x2A, 0x04, 0x61, 0x62, 0x63, 0x43]), "without its NUL"),
        (bytes([0x2A, 0x40, 0x61, 0x00]), "runs past the block end"),
        (bytes([0x32, 0x00, 0x23, 0x00, 0x03, 0x32, 0x43, 0x43]), "overlaps"),
    ],
)
def test_decode_errors_are_collected(code, msg):
    d = disassemble(write_routine(code))
    assert any(msg in m for _ip, m in d.errors), d.errors


def test_strict_mode_raises_a_format_error():
    with pytest.raises(FormatError, match="invalid opcode"):
        disassemble(write_routine(bytes([0x01])), strict=True)


def test_a_path_running_off_the_end_without_return():
    d = disassemble(write_routine(bytes([0x32, 0x01, 0x53, 0x53, 0x53, 0x53])))
    assert any("leaves the block" in m for _ip, m in d.errors)


def test_mission_routines_resolve_names():
    dte = read_dte(write_dte(small_mission()))
    r0 = dte.routine_of("trigger", 0)
    d = disassemble_routine(dte, r0)
    texts = [c.text() for c in d.calls]
    assert texts[0] == 'CommsFromShip(ship=ship(0)=(A1)Naginata, head=byte(0), speech="ms1_ban_001.ut")'
    guard = ("!equal(global(0)=(GV)convoykilled, byte(1))",)
    assert any(c.kind == "call_part" and c.name == "Later" and c.guard == guard for c in d.calls)


def test_every_opcode_decodes_with_its_size():
    for code, info in OPCODES.items():
        if info.size is None:
            continue
        body = bytes([code]) + bytes(info.size)
        if info.flow in ("branch", "jump"):
            body = bytes([code, 0, 2])  # skip to the next instruction
        if code == 0x21:
            body = bytes([0x21, 0x07])  # WaitForSpeech, 0 args
        d = disassemble(write_routine(body + bytes([0x32, 0x00, 0x43])))
        assert d.instructions[2].size == 1 + info.size, info.mnemonic
        if info.flow != "return":
            assert not [m for _i, m in d.errors if "opcode" in m], (info.mnemonic, d.errors)
    assert sum(len(v) for v in SIZE_CLASSES.values()) == 71


@settings(max_examples=examples(300))
@given(st.binary(min_size=0, max_size=120), st.binary(max_size=16))
def test_fuzz_raw_blocks_only_barkbus_errors(code, consts):
    blk = bytearray(write_routine(code)) + consts
    for data in (bytes(blk), bytes(code)):
        try:
            d = disassemble(data)
            for i in d.ordered():
                i.to_json()
        except BarkbusError:
            pass
