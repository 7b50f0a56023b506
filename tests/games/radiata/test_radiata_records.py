"""The CTalk records beside the text (spec 4.2): NameWindow, Proper, Speak / SpeakingCycle and the
error traps, from hand-laid packets (bytes written out here, not by the module's writers)."""

from __future__ import annotations

import json
import math

import pytest
from test_radiata_sequencer import Fake, frames_of, run

from audio.cli import main
from audio.games.radiata.cli import dump_records
from audio.games.radiata.events import Subtitle, Talk
from audio.games.radiata.formats.rmf import read_rmf, write_packet, write_rmf
from audio.games.radiata.formats.voicetable import read_voicetable, write_voicetable
from audio.games.radiata.talk.sequencer import TalkSequencer
from audio.games.radiata.talk.settings import TalkSettings

SENTENCE_2 = bytes.fromhex("0f25 0000 0200")  # Sentence, flags 0, 2 glyphs
SPEAKER_1 = bytes.fromhex("0e20 0100 0000")  # Speaker index 1, bustup mode 0
SPEED_1 = bytes.fromhex("0710 0001")  # TextSpeed 1.0 (one glyph per frame)
HI = bytes.fromhex("6a00 8500")  # "H" "i"
WAIT = bytes.fromhex("0f20 1e00 0200")  # WaitTime 30 frames, flags 2 (timed)
# NameWindow: index 1, mode 0x0D (plate style 1, layout bit, template 6), y -10, override name 40
NAME_WINDOW = bytes.fromhex("0e4e 0100 0d00 f6ff 2800")
NO_PLATE = bytes.fromhex("0e4e 0100 0000 7600 0000")  # mode 0: no plate, y 118, no override
# Proper: b1 = 0x06 -> sub 6, payload 2 * 6 = 12 bytes
PROPER = bytes.fromhex("0f06") + bytes.fromhex("0a00 0b00 0c00 0000 0000 0000")
SPEAK = bytes.fromhex("0e25 0100 0300")  # Speak: index 1, flags 3
CYCLE = bytes.fromhex("0e26 0100 0405")  # SpeakingCycle: index 1, open 4, close 5
STREAM = 0x1C + 12  # EN table (one packet) ends at 0x1C; budget, count and one speaker precede the stream
TRAPS = {  # one record of each error-trap entry (sub nibble first, as the spec writes them)
    0x18: "0e08",
    0x19: "0e09",
    0x1B: "0e0b",
    0x1F: "0e0f",
    0x21: "0f01",
    **{0x20 + s: f"0f{s:02x}" for s in range(9, 16)},
}


def rmf_of(*parts: bytes, speakers=(12,)) -> bytes:
    return write_rmf([write_packet(list(speakers), b"".join(parts))])


def message_of(data: bytes):
    return read_rmf(data).script(0).messages[0]


def make(data: bytes, names=None, propers=None, **settings):
    class Table(Fake):
        def plate_name(self, name_id):
            return (names or {}).get(name_id, f"name{name_id}")

        def proper(self, key):
            return (propers or {}).get(key)

    fake = Table(clip_frames=10)
    log: list = []
    files = {"t.rmf": read_rmf(data, "t.rmf")}
    seq = TalkSequencer(
        TalkSettings(**settings),
        fake,
        lambda outcome, **d: log.append((seq.frame, outcome, d)),
        lambda f, p: files[f].script(p),
    )
    fake.seq = seq
    seq.talk(Talk(file="t.rmf", packet=0))
    return seq, fake, log


def test_name_window_fields_decode_from_the_record_layout():
    nw = message_of(rmf_of(SENTENCE_2, SPEAKER_1, NAME_WINDOW, HI, WAIT)).name_window
    assert (nw.index, nw.mode, nw.y_offset, nw.name_id, nw.character_id) == (1, 0x0D, -10, 40, 12)
    assert (nw.plate_style, nw.plate, nw.layout, nw.template) == (1, True, True, 6)
    off = message_of(rmf_of(SENTENCE_2, SPEAKER_1, NO_PLATE, HI, WAIT)).name_window
    assert (off.plate_style, off.plate, off.layout, off.template, off.y_offset, off.name_id) == (
        0,
        False,
        False,
        5,
        118,
        0,
    )


def test_dump_json_carries_a_name_window_object_and_the_text_dump_shows_it(tmp_path, capsys):
    data = rmf_of(SENTENCE_2, SPEAKER_1, NAME_WINDOW, HI, WAIT)
    (tmp_path / "t.rmf").write_bytes(data)
    assert main(["radiata", "dump", str(tmp_path / "t.rmf")]) == 0
    assert "plate 1 t6 y-10 name #40" in capsys.readouterr().out
    out = dump_records(data, "t.rmf", None, "auto", 3.0)
    nw = out["records"][0]["name_window"]
    assert nw == {
        "offset": STREAM + len(SENTENCE_2) + len(SPEAKER_1),
        "index": 1,
        "character_id": 12,
        "mode": 13,
        "plate_style": 1,
        "layout": True,
        "template": 6,
        "y_offset": -10,
        "name_id": 40,
    }
    json.dumps(out)


def test_the_subtitle_shows_the_override_name_through_the_name_table():
    data = rmf_of(SENTENCE_2, SPEAKER_1, NAME_WINDOW, HI, WAIT)
    seq, fake, log = make(data, names={40: "Old man"})
    run(seq, 5)
    assert [e.speaker for _, e in fake.of(Subtitle)] == ["Old man"]
    msg = [d for _, o, d in log if o == "Message"][0]
    assert msg["speaker"] == "12" and msg["name"] == "Old man"
    # without an override the plate shows the speaker's own name
    seq, fake, _ = make(rmf_of(SENTENCE_2, SPEAKER_1, NO_PLATE, HI, WAIT), names={40: "Old man"})
    run(seq, 5)
    assert [e.speaker for _, e in fake.of(Subtitle)] == ["12"]


def test_voice_table_names_and_propers_round_trip(tmp_path):
    text = write_voicetable([], names={40: "Old man"}, propers={"0a000b00": "Elena"})
    t = read_voicetable(text, tmp_path / "v.toml")
    assert t.plate_name(40) == "Old man" and t.plate_name(41) == "name41"
    assert t.proper("0A000B00") == "Elena" and t.proper("ff") is None


def test_proper_payload_is_shown_and_an_unknown_one_costs_no_glyph():
    data = rmf_of(SENTENCE_2, SPEAKER_1, SPEED_1, HI, PROPER, WAIT)
    m = message_of(data)
    (p,) = m.propers
    assert p.b1 == 6 and p.payload == PROPER[2:] and p.words == (10, 11, 12, 0, 0, 0)
    assert m.text == "Hi[proper:0a000b000c00000000000000]" and m.visible_glyphs == 2
    rec = dump_records(data, "t.rmf", None, "auto", 3.0)["records"][0]
    assert rec["propers"] == [
        {"offset": p.offset, "b1": 6, "payload": PROPER[2:].hex(), "words": [10, 11, 12, 0, 0, 0]}
    ]
    seq, fake, log = make(data)
    run(seq, 40)
    assert frames_of(log, "Wait") == [math.ceil(2 * 256 / 0x100)]  # the two glyphs only


def test_a_known_proper_expands_with_one_glyph_of_reveal_per_character():
    data = rmf_of(SENTENCE_2, SPEAKER_1, SPEED_1, HI, PROPER, WAIT)
    seq, fake, log = make(data, propers={PROPER[2:].hex(): "Jack Russell"})
    run(seq, 40)
    assert [e.text for _, e in fake.of(Subtitle)] == ["HiJack Russell"]
    glyphs = 2 + len("JackRussell")  # the space is free, as in any text
    assert frames_of(log, "Wait") == [math.ceil(glyphs * 256 / 0x100)]
    assert [d["payload"] for _, o, d in log if o == "Proper"] == [PROPER[2:].hex()]


@pytest.mark.parametrize("entry", sorted(TRAPS))
def test_each_error_trap_is_a_dump_issue_and_a_trap_decision_with_its_offset(entry):
    trap = bytes.fromhex(TRAPS[entry])
    data = rmf_of(SENTENCE_2, SPEAKER_1, SPEED_1, HI, trap, WAIT)
    off = STREAM + len(SENTENCE_2) + len(SPEAKER_1) + len(SPEED_1) + len(HI)
    out = dump_records(data, "t.rmf", None, "auto", 3.0)
    hits = [i for i in out["issues"] if "error trap" in i]
    assert len(hits) == 1 and f"0x{off:X}" in hits[0] and f"0x{entry:02X}" in hits[0]
    assert out["records"][0]["traps"] == [{"offset": off, "record": f"{trap[0]:02X} {trap[1]:02X}"}]
    seq, _fake, log = make(data)
    run(seq, 40)
    (t,) = [d for _, o, d in log if o == "Trap"]
    assert t["offset"] == off and frames_of(log, "Wait") == [2]  # the walk goes on past it


def test_ordinary_records_are_not_traps():
    data = rmf_of(SENTENCE_2, SPEAKER_1, NAME_WINDOW, SPEAK, HI, WAIT)
    assert not [i for i in dump_records(data, "t.rmf", None, "auto", 3.0)["issues"] if "trap" in i]


@pytest.mark.parametrize("record", [SPEAK, CYCLE])
def test_mouth_records_count_as_speaking_while_the_text_reveals(record):
    # Speaker 1 is character 12; the record sits before the glyphs; 2 glyphs at 1.0 reveal by frame 2
    data = rmf_of(SENTENCE_2, SPEAKER_1, SPEED_1, record, HI, WAIT)
    seq, _fake, log = make(data)
    seen = []
    for f in range(8):
        seq.tick(f)
        seen.append(seq.speaking(12))
    assert seen == [True, True, False, False, False, False, False, False]
    (m,) = [d for _, o, d in log if o == "Mouth"]
    assert m["record"] == ("Speak" if record is SPEAK else "SpeakingCycle") and m["index"] == 1


def test_mouth_frames_sets_a_fixed_speaking_time():
    data = rmf_of(SENTENCE_2, SPEAKER_1, SPEED_1, CYCLE, HI, WAIT)
    seq, _fake, _ = make(data, mouth_frames=5)
    seen = []
    for f in range(8):
        seq.tick(f)
        seen.append(seq.speaking(12))
    assert seen == [True] * 5 + [False] * 3


def test_mouth_record_fields_decode():
    m = message_of(rmf_of(SENTENCE_2, SPEAKER_1, SPEAK, CYCLE, HI, WAIT))
    rec = dump_records(rmf_of(SENTENCE_2, SPEAKER_1, SPEAK, CYCLE, HI, WAIT), "t", None, "auto", 3.0)
    assert [
        (x["record"], x["index"], x["flags"], x["open_time"], x["close_time"])
        for x in rec["records"][0]["mouth"]
    ] == [
        ("Speak", 1, 3, 0, 0),
        ("SpeakingCycle", 1, 0, 4, 5),
    ]
    assert m.visible_glyphs == 2
