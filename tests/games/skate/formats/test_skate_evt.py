"""The .evt event table: a hand-laid file, round trips, and the fail-closed fields."""

from __future__ import annotations

import struct

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.core.errors import FormatError
from audio.games.skate.formats.evt import (
    ClipRef,
    EvtEvent,
    EvtRecord,
    EvtTable,
    event_id,
    parse_evt,
    write_evt,
)


def hand_made_evt() -> bytes:
    """One event (0x2012 '501_warn', 2 fields, 1 record of 2 clips), laid out byte by byte."""
    f = bytearray(0x20)
    o = 0x20
    ev = struct.pack(">HHHBBBBBB", 0x2012, 90, 520, 1, 0, 0x20, 100, 0, 7)
    ev += struct.pack(">H", 6) + b"\0\0"  # record at o + 24, offsets padded to 4
    ev += b"\xff\x01\x04" + b"\xff\x02\x04" + b"\0\0"  # field descriptors, padded
    assert len(ev) == 24
    rec = bytes([0x39, 100, 2 << 2 | 0, 0, 2, 0, 0, 0])
    rec += bytes([(8 + 4 + 8) // 4, (8 + 4 + 8 + 8) // 4]) + b"\0\0"  # clip entry offsets / 4
    rec += struct.pack(">II", 0x1000, 0x1)  # field values
    rec += struct.pack(">HBBb3x", 700, 0, 0, 0) + struct.pack(">HBBb3x", 701, 5, 0, 0)
    f += ev + rec
    names_at = len(f)
    f += struct.pack(">I", 0) + bytes(28) + b"501_warn\0"
    struct.pack_into(">IBB", f, 4, names_at, 1, 0)
    struct.pack_into(">H", f, 0x10, 1)
    struct.pack_into(">H", f, 0x18, o // 4)
    return bytes(f)


def test_hand_made_file_parses_field_by_field():
    t = parse_evt(hand_made_evt(), "h.evt")
    assert (t.bank, t.sub_bank, len(t.events)) == (1, 0, 1)
    ev = t.events[0]
    assert (ev.id, ev.name, ev.timeout, ev.priority, ev.probability, ev.byte11) == (
        8210,
        "501_warn",
        90,
        520,
        100,
        7,
    )
    assert ev.fields == (1, 2) and ev.field_descriptors == ()
    (rec,) = ev.records
    assert (rec.weight_code, rec.weight, rec.probability, rec.mode, rec.locals) == (0x39, 4 * 25, 100, 0, 0)
    assert rec.values == (0x1000, 1)
    assert [c.clip_id for c in rec.clips] == [700, 701] and rec.clips[1].byte2 == 5
    assert ev.unsupported() == [] and rec.unsupported() == []
    assert t.packed_word(ev.id) == (8210 << 16) | 1


def test_event_ids_are_bank_times_0x2000_plus_n():
    assert event_id(1, 0x12) == 0x2012 == 8210
    assert event_id(3, 0) == 24576


def test_write_then_parse_hand_made_is_identity():
    t = parse_evt(hand_made_evt())
    assert parse_evt(write_evt(t), t.path) == t


def test_unsupported_features_survive_a_round_trip():
    recs = tuple(
        EvtRecord(1, 50, 3, 2, (0,), (ClipRef(5, 1, 2, -3, b"\xfd\0\0\1"),), condition_bits=bytes([k, 9]))
        for k in range(3)
    )
    ev = EvtEvent(
        id=8200,
        timeout=60,
        priority=500,
        flags=0x15,
        probability=80,
        flags2=0x18,
        byte11=0,
        fields=(0,),
        records=recs,
        conditions=(b"\1\2\3",),
        name="odd",
        field_descriptors=(b"\xfe\x00\x02",),
    )
    back = parse_evt(write_evt(EvtTable(1, 2, [ev]))).events[0]
    assert back == ev
    assert back.conditions == (b"\1\2\3",) and back.flags2 == 0x18
    assert [r.condition_bits for r in back.records] == [bytes([k, 9]) for k in range(3)]
    assert back.records[0].locals == 2 and back.records[0].clips[0].lookup_mode == 2
    assert back.records[0].clips[0].param_count == -3
    assert len(back.unsupported()) == 3 and back.records[0].unsupported()


def test_truncated_tables_are_format_errors():
    data = hand_made_evt()
    for cut in (3, 0x12, 0x1A, 0x30, 0x48, len(data) - 12):
        with pytest.raises(FormatError):
            parse_evt(data[:cut], "cut.evt")


def _record(n_values, n_cond):
    clip = st.builds(
        lambda cid, b2, lm, pc, r: ClipRef(cid, b2, lm, pc, bytes([pc & 0xFF]) + r),
        st.integers(0, 0xFFFF),
        st.integers(0, 255),
        st.integers(0, 255),
        st.integers(-128, 127),
        st.binary(min_size=3, max_size=3),
    )
    return st.builds(
        EvtRecord,
        st.integers(0, 255),
        st.integers(0, 255),
        st.integers(0, 3),
        st.integers(0, 255),
        st.lists(st.integers(0, 0xFFFFFFFF), min_size=n_values, max_size=n_values).map(tuple),
        st.lists(clip, max_size=12).map(tuple),
        st.binary(min_size=(n_cond + 7) // 8 * 2, max_size=(n_cond + 7) // 8 * 2),
    )


@st.composite
def events(draw):
    n_fields = draw(st.integers(0, 4))
    n_cond = draw(st.sampled_from([0, 0, 1, 9]))
    fields = tuple(draw(st.lists(st.integers(0, 12), min_size=n_fields, max_size=n_fields)))
    return EvtEvent(
        id=draw(st.integers(0, 0xFFFF)),
        timeout=draw(st.integers(0, 0xFFFF)),
        priority=draw(st.integers(0, 0xFFFF)),
        flags=n_fields << 4 | draw(st.integers(0, 15)),
        probability=draw(st.integers(0, 255)),
        flags2=draw(st.integers(0, 255)),
        byte11=draw(st.integers(0, 255)),
        fields=fields,
        records=tuple(draw(st.lists(_record(n_fields, n_cond), max_size=5))),
        conditions=tuple(draw(st.lists(st.binary(min_size=3, max_size=3), min_size=n_cond, max_size=n_cond))),
        name=draw(st.text(st.sampled_from("abc_019"), max_size=12)),
    )


@settings(max_examples=examples(100))
@given(st.integers(0, 7), st.integers(0, 255), st.lists(events(), max_size=6))
def test_write_evt_parses_back_to_an_equal_model(bank, sub, evs):
    table = EvtTable(bank=bank, sub_bank=sub, events=evs, path="rt.evt")
    assert parse_evt(write_evt(table), "rt.evt") == table
