"""RMF1: the spec's packet, region detection, absent packets, the size rule, choices, bounds, timing."""

from __future__ import annotations

import math
import struct

import pytest
from radiata_fixtures import SPEC_PACKET, SPEC_RECORDS, header, spec_file

from audio.core.errors import FormatError
from audio.games.radiata.formats import rmf
from audio.games.radiata.formats.rmf import (
    EN,
    JP,
    Command,
    Glyph,
    Signal,
    build_message,
    detect_region,
    message_record,
    read_rmf,
    read_script,
    walk_tokens,
    write_packet,
    write_rmf,
)
from audio.games.radiata.talk.typewriter import Typewriter, reveal_frames


def records(data: bytes, packet: int = 0) -> list[dict]:
    f = read_rmf(data, "t.rmf")
    return [message_record(m, reveal_frames(m.steps)) for m in f.script(packet).messages]


# -- the spec's constructed packet (section 9) ---------------------------------------------------
def test_spec_packet_extracts_exactly_the_spec_values():
    assert records(spec_file()) == SPEC_RECORDS


def test_spec_packet_budget_matches_and_the_end_closes_it():
    s = read_rmf(spec_file()).script(0)
    assert s.budget == 11 == 3 + 3 + 5
    assert s.ended and s.mismatches() == [] and s.issues == []
    assert [m.wait.stored_flags for m in s.messages[:2]] == [0, 1]  # flags & 0xFD


def test_writer_reproduces_the_spec_packet_and_header_byte_for_byte():
    m0 = build_message(
        2, "Hi!", speed=4.0, voice=(0x1F, 0x0123), signals=[(5, 2)], wait=(90, 2), name_plate=False
    )
    m1 = build_message(1, "Go.", mode=1, speed=3.0, voice=(2, 7), wait=(0xFFFF, 3), name_plate=False)
    m2 = build_message(1, "", mode=1, speed=3.0, choices=["Yes", "No"], name_plate=False)
    packet = write_packet([(12, 0), (9901, 0)], m0 + m1 + m2)
    assert packet == SPEC_PACKET
    assert write_rmf([packet], EN) == spec_file()


def test_round_trip_rewrites_identical_bytes():
    data = spec_file()
    assert read_rmf(data).to_bytes() == data
    jp = write_rmf([SPEC_PACKET, None, SPEC_PACKET], JP)
    f = read_rmf(jp)
    assert f.region == JP and f.to_bytes() == jp

    def strip(rs):
        return [{k: v for k, v in r.items() if k not in ("packet", "text", "choices")} for r in rs]

    assert strip(records(jp, 2)) == strip(records(data))
    assert records(jp, 2)[0]["text"] == "[g:90][g:117][g:8]"  # the JP font table is unknown


def test_glyph_words_decode_per_the_spec_examples():
    assert rmf.decode_glyph(Glyph(0, 0x6A, 0x00).index) == "H"  # 0x5A = 90
    assert rmf.decode_glyph(Glyph(0, 0x13, 0x00).index) == "."  # 3
    assert rmf.decode_glyph(Glyph(0, 0x75, 0x00).index) == "S"  # 101
    g = Glyph(0, 0x20, 0x82)  # page 2, own tile
    assert g.index == 0x10 + 2 * 240 and g.tile and not g.attr40
    assert rmf.decode_glyph(g.index, EN, g.tile) == f"[tile:{g.index}]"
    assert rmf.decode_glyph(60) == "[g:60]" and rmf.decode_glyph(90, JP) == "[g:90]"


# -- region detection (section 2) ----------------------------------------------------------------
REAL_ROWS = [  # size, [08], [0C], count, word at 0x14, word at 0x18, first packet, region
    (10332, 9728, 604, 22, 108, 124, 108, JP),
    (752, 0, 752, 22, 752, 112, 112, EN),
    (40364, 34304, 5992, 38, 40296, 176, 176, EN),
    (6312, 4608, 1704, 16, 84, 184, 84, JP),
]


@pytest.mark.parametrize("size,g08,p0c,count,w14,w18,first,region", REAL_ROWS)
def test_region_detection_on_the_real_header_rows(size, g08, p0c, count, w14, w18, first, region):
    buf = bytearray(size)
    struct.pack_into("<4sIIIIII", buf, 0, b"RMF1", 0xCE, g08, p0c, count, w14, w18)
    t = 0x18 if region == EN else 0x14
    # the rest of the table: packets 12 bytes apart after the ones the row gives
    known = [w18] if region == EN else [w14, w18]
    entries = known + [max(known) + 12 * (k + 1) for k in range(count - len(known))]
    struct.pack_into(f"<{count}I", buf, t, *entries)
    assert entries[0] == first
    assert detect_region(bytes(buf)) == region
    f = read_rmf(bytes(buf))
    assert f.region == region and len(f.packets) == count


def test_ambiguous_or_unfitting_header_is_one_format_error_unless_forced():
    bad = header(EN, 1, 0x40, entries=[0x30]) + bytes(0x40)  # neither layout fits
    with pytest.raises(FormatError, match="neither"):
        read_rmf(bad)
    f = read_rmf(bad, region=EN)
    assert f.region == EN and f.packets[0].offset == 0x30


def test_not_rmf1_and_truncated_tables_are_format_errors():
    with pytest.raises(FormatError, match="RMF1"):
        read_rmf(b"RMF2" + bytes(40))
    with pytest.raises(FormatError):
        read_rmf(header(EN, 1000, 0x20) + bytes(8), region=EN)


# -- absent packets ------------------------------------------------------------------------------
@pytest.mark.parametrize("region", [EN, JP])
def test_absent_packets_are_none_and_skipped(region):
    data = write_rmf([None, SPEC_PACKET, None, SPEC_PACKET], region)
    t = 0x18 if region == EN else 0x14
    table = struct.unpack_from("<4I", data, t)
    assert table[0] == table[2] == 0xFFFFFFFF and table[1] == t + 16
    f = read_rmf(data)
    assert f.region == region
    assert [p is None for p in f.packets] == [True, False, True, False]
    with pytest.raises(FormatError, match="absent"):
        f.packet(0)
    assert records(data, 3)[0]["voice"]["sound_id"] == 291


def test_a_packet_offset_outside_the_packet_data_is_a_format_error():
    data = bytearray(spec_file())
    struct.pack_into("<I", data, 0x18, 0x1000)
    with pytest.raises(FormatError, match="packet 0 offset"):
        read_rmf(bytes(data), region=EN)


# -- the token stream ----------------------------------------------------------------------------
def test_proper_is_sized_by_its_whole_second_byte():
    b1 = 0x16  # sub 6 = CTalk entry 0x26 (Proper)
    payload = bytes([0x00, 0x00, 0x6A, 0x00]) * (b1 // 2) + bytes(2 * b1 - 4 * (b1 // 2))
    stream = bytes([0x0F, b1]) + payload + bytes([0x6A, 0x00]) + b"\x00\x00"
    toks = list(walk_tokens(stream))
    assert isinstance(toks[0], Command) and toks[0].name == "Proper" and len(toks[0].payload) == 2 * b1
    assert isinstance(toks[1], Glyph) and toks[1].offset == 2 + 2 * b1
    assert isinstance(toks[2], Command) and toks[2].name == "End"
    # every other record: 2 + 2 * (b1 >> 4); 0E x6 (SpeakingCycle) is not Proper
    assert [t.offset for t in walk_tokens(bytes([0x0E, 0x26, 1, 0, 2, 3, 0x6A, 0]))] == [0, 6]


def test_choice_terminators_are_not_the_end():
    msg = build_message(1, "", choices=["Yes", "No"]) + build_message(1, "Go.", wait=(30, 2))
    data = write_rmf([write_packet([12], msg)])
    s = read_rmf(data).script(0)
    assert [m.choice.count if m.choice else None for m in s.messages] == [2, None]
    assert [m.text for m in s.messages] == ["", "Go."] and s.ended
    assert [o.text for o in s.messages[0].choice.options] == ["Yes", "No"]


def test_unknown_command_bytes_are_skipped_by_their_size():
    stream = (
        rmf.sentence(2)
        + bytes([0x0B, 0x20, 0, 0, 0, 0])
        + rmf.encode_text("A")
        + bytes([0x0C, 0x00])
        + bytes([0x0D, 0x10, 0x00, 0x00])
        + bytes([0x08, 0x30])
        + bytes(6)
        + rmf.encode_text("b")
    )
    s = read_rmf(write_rmf([write_packet([12], stream)])).script(0)
    assert s.messages[0].text == "Ab" and s.ended and s.mismatches() == []


def test_a_packet_without_an_end_stops_at_its_boundary():
    p0 = write_packet([12], rmf.sentence(1) + rmf.encode_text("A"), end_token=False)
    p1 = write_packet([12], rmf.sentence(1) + rmf.encode_text("B"))
    f = read_rmf(write_rmf([p0, p1]))
    s0 = f.script(0)
    assert [m.text for m in s0.messages] == ["A"] and not s0.ended
    assert any("no End" in i for i in s0.issues)
    assert f.script(1).messages[0].text == "B"


def test_the_last_packet_stops_before_the_glyph_tiles():
    tiles = bytes([0x6A, 0x00]) * 256  # looks like 256 "H" glyphs
    p = write_packet([12], rmf.sentence(1) + rmf.encode_text("A"), end_token=False)
    f = read_rmf(write_rmf([p], EN, tiles=tiles))
    assert f.script(0).messages[0].text == "A" and f.tiles == tiles
    assert f.widths == bytes([30, 0, 0, 0])


def test_a_record_cut_by_the_packet_end_stops_the_walk_with_an_issue():
    p = write_packet(
        [12], rmf.sentence(1) + rmf.encode_text("A") + bytes([0x0F, 0x20, 0x10]), end_token=False
    )
    s = read_rmf(write_rmf([p])).script(0)
    assert s.messages[0].text == "A" and any("runs past" in i for i in s.issues)


def test_leading_jumps_are_the_prologue():
    stream = rmf.jump(3, 10, 20) + rmf.jump(1) + rmf.sentence(1) + rmf.encode_text("A") + rmf.jump(9)
    s = read_rmf(write_rmf([write_packet([12], stream)])).script(0)
    assert [(j.arg, j.words) for j in s.prologue] == [(3, (10, 20)), (1, ())]
    assert len(s.messages) == 1 and isinstance(s.messages[0].steps[-1], rmf.Jump)


def test_bare_text_packet_is_one_message_without_speaker():
    s = read_rmf(write_rmf([write_packet([], rmf.encode_text("Save one"))])).script(0)
    (m,) = s.messages
    r = message_record(m, reveal_frames(m.steps))
    assert (r["text"], r["speaker_index"], r["character_id"], r["glyph_count"]) == ("Save one", 0, None, None)


def test_glyph_count_and_budget_mismatches_are_reported():
    stream = rmf.sentence(5) + rmf.speaker(1) + rmf.encode_text("Hey")
    s = read_rmf(write_rmf([write_packet([12], stream, glyph_budget=9)])).script(0)
    assert s.mismatches() == [
        "packet 0 message 0: declares 5 glyphs, draws 3",
        "packet 0: glyph_budget 9 != sum of declared counts 5",
    ]


def test_speaker_index_beyond_the_table_is_an_issue_not_a_crash():
    s = read_rmf(
        write_rmf([write_packet([12], rmf.sentence(1) + rmf.speaker(4) + rmf.encode_text("A"))])
    ).script(0)
    assert s.messages[0].character_id is None and any("beyond the table" in i for i in s.messages[0].issues)


# -- reveal timing in frames (section 5) ---------------------------------------------------------
@pytest.mark.parametrize("glyphs", [1, 2, 3, 5, 12, 40])
@pytest.mark.parametrize("word", [0x80, 0x100, 0x300, 0x400, 0x700, 0x155])
def test_reveal_frames_follow_ceil_of_glyphs_times_256_over_speed(glyphs, word):
    text = " ".join("a" * glyphs)  # spaces refund their cost
    stream = rmf.sentence(glyphs) + rmf.record(0x07, 0, word) + rmf.encode_text(text)
    m = read_rmf(write_rmf([write_packet([1], stream)])).script(0).messages[0]
    assert reveal_frames(m.steps) == math.ceil(glyphs * 256 / word)


def test_speed_zero_reveals_at_once_and_no_speed_needs_a_default():
    m = read_rmf(write_rmf([write_packet([1], rmf.sentence(3) + rmf.text_speed(0) + rmf.encode_text("abc"))]))
    assert reveal_frames(m.script(0).messages[0].steps) == 0
    m2 = (
        read_rmf(write_rmf([write_packet([1], rmf.sentence(3) + rmf.encode_text("abc"))]))
        .script(0)
        .messages[0]
    )
    assert reveal_frames(m2.steps) is None and reveal_frames(m2.steps, 3.0) == 1
    assert reveal_frames(m2.steps, 0.5) == 6


def test_signal_fires_on_the_frame_its_preceding_glyph_shows():
    stream = (
        rmf.sentence(6)
        + rmf.text_speed(1.0)
        + rmf.encode_text("abcd")
        + rmf.signal(7)
        + rmf.encode_text("ef")
    )
    m = read_rmf(write_rmf([write_packet([1], stream)])).script(0).messages[0]
    tw, frame, at = Typewriter(m.steps), 0, None
    while not tw.done:
        if any(isinstance(s, Signal) for s in tw.run(first=frame == 0)):
            at = frame
        frame += 1
    assert at == 4 and m.signals[0].after_glyphs == 4


def test_style_restore_brings_back_the_saved_speed():
    stream = (
        rmf.sentence(4)
        + rmf.text_speed(1.0)
        + rmf.record(0x09, 0, 0xBC)
        + rmf.text_speed(0)
        + rmf.encode_text("ru")
        + rmf.record(0x09, 1, 0xBC)
        + rmf.encode_text("by")
    )
    m = read_rmf(write_rmf([write_packet([1], stream)])).script(0).messages[0]
    assert reveal_frames(m.steps) == 2 and m.speed == 0.0


def test_read_script_of_a_hand_packed_packet_uses_the_packet_extent():
    pk = read_rmf(spec_file()).packet(0)
    assert (pk.offset, pk.end, pk.stream_offset) == (0x1C, 0x9C, 0x1C + 16)
    assert len(read_script(pk).messages) == 3
