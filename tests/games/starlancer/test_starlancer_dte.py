""".DTE missions: directory, sections, triggers and subjects, parts, routine tiling, writer."""

from __future__ import annotations

import itertools
import struct

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from starlancer_fakes import MISSION1_BLOCK, SPEC_BLOCK, small_mission

from audio.containers import refpack
from audio.core.errors import BarkbusError, FormatError
from audio.games.starlancer.formats.dte import (
    DIR_SIZE,
    NONE16,
    load_mission,
    read_dte,
    read_routine,
    write_dte,
    write_routine,
)


def _hand_dte() -> bytes:
    """A mission assembled by hand: pool (slot 0), one ship (slot 3), the script (slot 6)."""
    pool = b"\0Naginata\0\0\0"
    ship = bytearray(0x4C)
    struct.pack_into("<IH", ship, 0, 7, 1)
    ship[0x14], ship[0x15] = 0xFF, 4
    struct.pack_into("<H", ship, 0x18, 0x3E5)
    script = SPEC_BLOCK
    slots = [(0, 0, 15, 0xFFFF)] * 128
    o_pool, o_ship = DIR_SIZE, DIR_SIZE + len(pool)
    o_script = o_ship + len(ship)
    size = o_script + len(script)
    slots[0] = (len(pool), 0, 15, o_pool)
    slots[3] = (1, 0, 15, o_ship)
    slots[6] = (len(script) // 2, 0, 15, o_script)
    slots[27] = (0, 0, 15, size)
    return b"".join(struct.pack("<HBBI", *s) for s in slots) + pool + bytes(ship) + script


def test_directory_slots_and_ship_fields():
    d = read_dte(_hand_dte())
    assert d.slots[3].count == 1 and d.slots[1].offset == NONE16 and d.slots[27].offset == len(_hand_dte())
    s = d.ships[0]
    assert (s.object_id, d.ship_name(0), s.flight_group, s.pilot, s.kind) == (7, "Naginata", 0xFF, 4, 0x3E5)


def test_script_count_is_in_halfwords():
    d = read_dte(_hand_dte())
    assert d.script == SPEC_BLOCK and d.slots[6].count == 32


def test_spec_routine_is_64_bytes_with_its_constant():
    r = read_routine(SPEC_BLOCK, 0, len(SPEC_BLOCK))
    assert (r.length, r.end, r.constants[0]) == (56, 64, 2)


def test_writer_reproduces_the_spec_block_and_mission1_block():
    code = SPEC_BLOCK[2:55]
    assert write_routine(code, [2], pad=b"\x32") == SPEC_BLOCK
    assert (
        write_routine(MISSION1_BLOCK[2:26], [1], pad=b"\x32\x01", filler=b"\x08\x00\x22\x0d")
        == MISSION1_BLOCK
    )


def test_constant_table_rounds_to_8_bytes():
    assert len(write_routine(b"\x43", [])) == 4
    assert len(write_routine(b"\x43", [1])) == 4 + 8
    assert len(write_routine(b"\x43", [1, 2])) == 4 + 8
    assert len(write_routine(b"\x43", [1, 2, 3])) == 4 + 16


def test_triggers_take_their_subject_from_the_object_slices():
    d = read_dte(write_dte(small_mission()))
    assert d.trigger_subject(0) == 0 and d.object_name(0) == "(A1)Naginata"
    assert d.trigger_subject(1) == 1 and d.object_name(1) == "Bandit"
    assert d.object_name(2) == "Alpha"


def test_routines_tile_the_script_and_parts_agree_with_extents():
    d = read_dte(write_dte(small_mission()))
    rs = sorted(d.routines(), key=lambda r: r.block)
    assert rs[0].block == 0 and rs[-1].end == len(d.script)
    assert all(a.end == b.block for a, b in itertools.pairwise(rs))
    for p in d.parts:
        r = next(r for r in rs if r.block == p.start * 2)
        assert r.end - r.block == p.extent * 2


def test_start_part_and_globals():
    d = read_dte(write_dte(small_mission()))
    assert d.start_parts() == [0] and d.part_name(0) == "Start"
    assert d.globals[1].value == 7 and d.global_name(0) == "(GV)convoykilled"


def test_write_read_write_is_stable_and_refpack_missions_load():
    b = write_dte(small_mission())
    assert write_dte(read_dte(b)) == b
    packed = refpack.encode(b)
    assert packed[:2] == b"\x10\xfb"
    assert write_dte(load_mission(packed)) == b


def test_section_past_the_end_is_a_format_error():
    b = bytearray(_hand_dte())
    struct.pack_into("<H", b, 3 * 8, 500)  # 500 ships
    with pytest.raises(FormatError, match="section 3"):
        read_dte(bytes(b))


def test_bad_block_length_is_a_format_error():
    with pytest.raises(FormatError):
        read_routine(b"\x01\x00\x43\x00", 0, 4)
    with pytest.raises(FormatError):
        read_routine(b"\x40\x00\x43\x00", 0, 4)


@settings(max_examples=examples(120))
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(0, 26), st.integers(0, 40), st.integers(0, 1500)), max_size=8),
)
def test_fuzz_dte_only_barkbus_errors(tail, slots):
    data = bytearray(struct.pack("<HBBI", 0, 0, 15, 0xFFFF) * 128) + tail
    for i, count, off in slots:
        struct.pack_into("<HBBI", data, 8 * i, count, 0, 15, off)
    try:
        d = read_dte(bytes(data))
        for r in d.routines([]):
            assert r.block + r.length <= r.end
        for i in range(len(d.triggers)):
            d.trigger_subject(i)
    except BarkbusError:
        pass
