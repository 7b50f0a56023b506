"""Project Sylpheed containers and tables: hashes, IPFB paks, IDXD/IXUD, chatter tables, cue join."""

from __future__ import annotations

import struct
import zlib

import pytest
from fuzz_budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sylpheed_fakes import ev, load_demo_tool, table

from audio.core.errors import FormatError
from audio.games.sylpheed.formats.cues import (
    SoundsTable,
    bank_path,
    cue_name,
    join_cues,
    read_sounds,
    write_sounds,
)
from audio.games.sylpheed.formats.hashes import name_hash, tag_hash
from audio.games.sylpheed.formats.pak import PakArchive, build_pak, inflate_z1, read_install_path, write_pak
from audio.games.sylpheed.formats.presets import (
    Crew,
    Message,
    MessagePage,
    MessageTable,
    UnitMessageSet,
    read_message_table,
    read_rule_table,
    read_unit_message_set,
    write_message_table,
    write_rule_table,
    write_unit_message_set,
)
from audio.games.sylpheed.formats.table import Field, Record, Table, make_record, read_table, write_table
from audio.games.sylpheed.formats.unitgroup import Member, Squadron, read_unit_group, write_unit_group


# -- hashes -------------------------------------------------------------------------------
def test_name_hash_matches_the_files_tbl_vector():
    assert name_hash("files.tbl") == 0x83421153


def test_name_hash_lowercases_the_path():
    assert name_hash("ENG\\Sounds.TBL") == name_hash("eng\\sounds.tbl")


def test_tag_hash_matches_the_sounds_vector():
    assert tag_hash("SOUNDS") == 0xDC0B7FB3


def test_tag_hash_keys_a_formation_record_as_seed_003_reports():
    assert tag_hash("Formation_4_Bird") == 0x22A5EEED
    assert name_hash("Formation_4_Bird") == 0x6286EDAD


def test_tag_hash_empty_is_zero_and_wide_differs_for_non_ascii():
    assert tag_hash("") == 0 and tag_hash("", wide=True) == 0
    assert tag_hash("僚機") != tag_hash("僚機", wide=True)


# -- pak ----------------------------------------------------------------------------------
def test_pak_round_trip_by_path_sorted_and_aligned():
    entries = {"files.tbl": b"x" * 5000, "eng\\sounds.tbl": b"hello", "message\\a.tbl": bytes(range(256))}
    toc, parts = build_pak(entries, compress=["files.tbl"])
    arc = PakArchive(toc, parts, "t.pak")
    ids = [e.id for e in arc.entries]
    assert ids == sorted(ids)
    assert all(e.offset % 2048 == 0 for e in arc.entries)
    for k, v in entries.items():
        assert arc.read(k) == v
    assert arc.stored("files.tbl").startswith(b"Z1")
    assert arc.stored("eng\\sounds.tbl") == b"hello"


def test_pak_header_fields_and_toc_stop_at_id_zero():
    toc, parts = build_pak({"a": b"1", "b": b"2"})
    assert toc[:4] == b"IPFB" and struct.unpack(">III", toc[4:16]) == (2, 0x800, 0x10000000)
    # a zero id ends the table even if the count says more
    bad = toc[:4] + struct.pack(">I", 3) + toc[8:] + b"\0" * 12
    assert len(PakArchive(bad, parts).entries) == 2


def test_z1_inflates_from_byte_12_as_raw_deflate():
    payload = b"chatter " * 100
    z = zlib.compress(payload)
    blob = b"Z1" + struct.pack(">I", len(payload)) + b"\xde\xad\xbe\xef" + z
    assert inflate_z1(blob) == payload


def test_z1_size_mismatch_is_a_format_error():
    blob = b"Z1" + struct.pack(">I", 99) + b"\0\0\0\0" + zlib.compress(b"abc")
    with pytest.raises(FormatError, match="99 inflated bytes"):
        inflate_z1(blob)


def test_unsorted_toc_is_rejected():
    toc = (
        b"IPFB"
        + struct.pack(">III", 2, 0x800, 0x10000000)
        + struct.pack(">III", 9, 0, 1)
        + struct.pack(">III", 5, 0x800, 1)
    )
    with pytest.raises(FormatError, match="sorted"):
        PakArchive(toc, [b"\0" * 4096])


def test_pak_plus_inner_path_opens_from_disk(tmp_path):
    write_pak(tmp_path / "dat" / "tables.pak", {"eng\\sounds.tbl": b"table bytes"})
    assert (tmp_path / "dat" / "tables.p00").exists()
    assert read_install_path(tmp_path, "dat\\tables.pak+eng\\sounds.tbl") == b"table bytes"
    with pytest.raises(FormatError):
        read_install_path(tmp_path, "dat\\tables.pak")


@settings(max_examples=examples(60))
@given(
    st.dictionaries(
        st.text("abcdefghijklmnopqrstuvwxyz\\._0123456789", min_size=1, max_size=24),
        st.binary(max_size=3000),
        max_size=8,
    ),
    st.booleans(),
)
def test_pak_round_trip_property(entries, compress):
    ids = {name_hash(k) for k in entries}
    if len(ids) != len(entries) or 0 in ids:
        return
    toc, parts = build_pak(entries, compress=compress)
    arc = PakArchive(toc, parts)
    assert {k: arc.read(k) for k in entries} == entries


@settings(max_examples=examples(200))
@given(st.binary(max_size=200), st.binary(max_size=300))
def test_pak_fuzz_only_format_errors(toc, part):
    try:
        arc = PakArchive(b"IPFB" + toc, [part])
        for e in arc.entries:
            arc.read(e.id)
    except FormatError:
        pass


# -- IDXD / IXUD -----------------------------------------------------------------------------
_ALPHA = st.sampled_from(list("abcXYZ_019 -,.") + list("アイウカキ日本語僚機隊"))
_TEXT = st.text(_ALPHA, max_size=12)


@st.composite
def tables(draw, wide=None):
    wide = draw(st.booleans()) if wide is None else wide
    recs = []
    for _ in range(draw(st.integers(0, 5))):
        fields = tuple(
            Field(draw(st.integers(0, 2**32 - 1)), draw(st.one_of(st.none(), _TEXT)), draw(_TEXT))
            for _ in range(draw(st.integers(0, 6)))
        )
        recs.append(Record(draw(st.integers(0, 2**32 - 1)), draw(_TEXT), fields))
    return Table(tuple(recs), wide)


@settings(max_examples=examples(150))
@given(tables())
def test_idxd_ixud_round_trip_property(t):
    data = write_table(t)
    assert data[:4] == (b"IXUD" if t.wide else b"IDXD")
    assert read_table(data) == t


def test_idxd_pool_ends_the_file_and_positional_fields_have_no_name():
    t = Table((make_record("SOUNDS", [("SND_LIST_VERSION", "0x060809")], ["a", "b"]),))
    data = write_table(t)
    s = struct.unpack_from(">I", data, 4)[0]
    k_off = 8 + 16 * s
    k = struct.unpack_from(">I", data, k_off)[0]
    pool_len = struct.unpack_from(">I", data, k_off + 4 + 12 * k)[0]
    assert k_off + 8 + 12 * k + pool_len == len(data)
    name_ptrs = [struct.unpack_from(">I", data, k_off + 4 + 12 * i + 4)[0] for i in range(k)]
    assert name_ptrs[1:] == [0xFFFFFFFF, 0xFFFFFFFF]
    back = read_table(data).records[0]
    assert back.named == {"SND_LIST_VERSION": "0x060809"} and back.positional == ("a", "b")
    assert back.key == 0xDC0B7FB3


def test_ixud_strings_are_utf16be():
    t = Table((make_record("隊", [("名前", "エレン")], wide=True),), wide=True)
    data = write_table(t)
    assert "エレン".encode("utf-16-be") in data
    assert read_table(data).records[0].named == {"名前": "エレン"}


def test_hash_report_flags_a_field_whose_tag_disagrees_with_its_name():
    good = make_record("LOCKON_1", [("Priority", "3"), ("Interval", "5")])
    bad = Record(good.key, good.name, (good.fields[0], Field(0x12345678, "Interval", "5")))
    rep = read_table(write_table(Table((bad,)))).hash_report()
    assert rep.named_fields == 2
    assert [(m.field, m.stored, m.computed) for m in rep.field_mismatches] == [
        ("Interval", 0x12345678, tag_hash("Interval"))
    ]
    assert read_table(write_table(Table((good,)))).hash_report().fields_ok


@settings(max_examples=examples(200))
@given(st.binary(max_size=400))
def test_table_fuzz_random_bytes_only_format_errors(data):
    try:
        read_table(b"IDXD" + data)
    except FormatError:
        pass


@settings(max_examples=examples(200))
@given(st.integers(0, 10_000), st.integers(0, 255))
def test_table_fuzz_mutated_valid_table_only_format_errors(pos, value):
    data = bytearray(
        write_table(Table((make_record("A", [("x", "1")], ["p", "q"]), make_record("B", [("y", "2")]))))
    )
    data[pos % len(data)] = value
    try:
        read_table(bytes(data))
    except FormatError:
        pass


def test_truncated_table_names_the_offset():
    data = write_table(Table((make_record("A", [("x", "1")]),)))
    with pytest.raises(FormatError) as exc:
        read_table(data[:20])
    assert exc.value.offset is not None


# -- chatter tables ------------------------------------------------------------------------------
def test_rule_table_round_trip_with_pairs_and_roster():
    rt = table(
        "PresetMessage_X",
        [
            ev(
                "LOCKON_1",
                [("MSG_BIRD_020", False), ("MSG_BIRD_030", True)],
                interval=5,
                fluctuation=2,
                pattern="Window",
                effective=3,
            ),
            ev("TALK", [], probability=0),
        ],
        ("CharacterELLEN", "CharacterSANDRA"),
    )
    back = read_rule_table(write_rule_table(rt), "message\\PresetMessage_X.tbl")
    assert back.name == "PresetMessage_X"
    assert back.speakers == ("CharacterELLEN", "CharacterSANDRA")
    e = back.event("LOCKON_1")
    assert e.lines == (("MSG_BIRD_020", False), ("MSG_BIRD_030", True))
    assert (e.interval, e.interval_fluctuation, e.effective_time, e.pattern) == (5, 2, 3, "Window")
    assert back.pair_failures() == []


def test_rule_table_reports_message_count_not_matching_pairs():
    rec = make_record(
        "DAMAGED",
        [
            ("EffectiveTime", "0"),
            ("Interval", "0"),
            ("Priority", "1"),
            ("Probability", "10"),
            ("MessageCount", "2"),
            ("IntervalFluctuation", "0"),
            ("Pattern", "Sound"),
        ],
        ["MSG_A_1", "No"],
    )
    rt = read_rule_table(write_table(Table((rec,))))
    assert rt.pair_failures() == ["DAMAGED"]


def test_rule_table_bad_number_is_a_format_error():
    rec = make_record(
        "DAMAGED",
        [
            ("EffectiveTime", "zero"),
            ("Interval", "0"),
            ("Priority", "1"),
            ("Probability", "10"),
            ("MessageCount", "0"),
            ("IntervalFluctuation", "0"),
            ("Pattern", "Sound"),
        ],
    )
    with pytest.raises(FormatError, match="EffectiveTime"):
        read_rule_table(write_table(Table((rec,))), "x.tbl")


def test_message_table_round_trip_nine_fields_per_page():
    mt = MessageTable(
        "PresetMessage_X_msg",
        (),
        (
            Message(
                "Message_000",
                "MSG_BIRD_020",
                (
                    MessagePage(("Target locked!", "ELLEN", "0", "0", "0", "0", "0", "0", "0")),
                    MessagePage(("Fire!", "ELLEN", "0", "0", "0", "0", "0", "0", "0")),
                ),
            ),
        ),
    )
    back = read_message_table(write_message_table(mt))
    assert back.generic == (("Count", "1"),)
    m = back.by_id("MSG_BIRD_020")
    assert [p.text for p in m.pages] == ["Target locked!", "Fire!"]
    assert m.positional_count == 18 and m.pages_ok


def test_unit_message_set_round_trip():
    ums = UnitMessageSet((Crew("MessageSet_Ellen", 1, ("PresetMessage_Ellen_03_S03-3", "", "P2")),))
    back = read_unit_message_set(write_unit_message_set(ums))
    assert back.crew("MessageSet_Ellen").tables == ["PresetMessage_Ellen_03_S03-3", "P2"]


def _squad(sid, key, members):
    return Squadron(
        sid, key, len(members), "TCAF", "AI_TCAF_RhinoFlight", "Formation_2_Rhino1", False, tuple(members), 0
    )


def test_unit_group_roster_found_by_missing_count_not_position():
    ellen = Member("UN_f001_TCAF_DeltaSaber_T", "MessageSet_Ellen", 1, "ELLEN")
    squads = [
        _squad(
            "TCN004",
            0x659AFF47,
            [
                Member("UN_f001_TCAF_DeltaSaber_T_Player", "MessageSet_Katana", 1, "Character_Player_Test"),
                ellen,
            ],
        ),
        _squad("TCN005", 0x659B0046, [Member("UN_x", "MessageSet_Y", 9, "")]),
    ]
    ug = read_unit_group(write_unit_group(squads, roster_at=0))
    assert ug.roster_name == "Enumerate_Squadrons"
    assert [s.id for s in ug.squadrons] == ["TCN004", "TCN005"]
    assert ug.squadron("TCN004").members[1] == ellen
    assert ug.width_failures() == [] and ug.roster_failures() == []


def test_unit_group_self_checks_catch_a_bad_roster_and_a_bad_width():
    squads = [_squad("TCN004", 0x10, [Member("U", "M", 1, "")])]
    t = read_table(write_unit_group(squads))
    recs = list(t.records)
    roster = recs[1]
    recs[1] = Record(roster.key, roster.name, (Field(roster.fields[0].tag, "TCN004", "0x11"),))
    sq = recs[0]
    recs[0] = Record(sq.key, sq.name, sq.fields + (Field(0, None, "extra"),))
    ug = read_unit_group(write_table(Table(tuple(recs))))
    assert ug.width_failures() == ["TCN004"]
    assert ug.roster_failures()


def test_demo_tables_pass_both_seed_003_self_checks_and_the_pair_identity():
    tool = load_demo_tool()
    game, tables_pak, lines = tool.build_tables()
    ug = read_unit_group(game["stage\\UnitGroup_S02.tbl"])
    assert len(ug.squadrons) >= 3
    assert all(s.field_count == s.count * 4 + 5 for s in ug.squadrons)
    assert ug.roster_failures() == []
    for path, data in game.items():
        if path.startswith("message\\PresetMessage_") and not path.endswith("_msg.tbl"):
            rt = read_rule_table(data, path)
            assert rt.pair_failures() == [], path
            assert read_table(data).hash_report().fields_ok


# -- cue join ----------------------------------------------------------------------------------
def test_cue_name_keeps_an_existing_voice_prefix():
    assert cue_name("MSG_BIRD_020") == "VOICE_BIRD_020"
    assert cue_name("MSG_VOICE_D_443") == "VOICE_D_443"


def test_bank_path_generic_pilots_live_in_etc():
    assert bank_path("VOICE_BIRD_020") == "eng\\Voice\\VOICE_BIRD_020.slb"
    assert bank_path("VOICE_D_443", "jpn") == "jpn\\etc\\VOICE_D_443.slb"


def test_sounds_table_read_in_either_orientation():
    ours = read_sounds(read_table(write_sounds([("VOICE_BIRD_020", 7, "eng\\Voice\\VOICE_BIRD_020.slb")])))
    assert ours.cue_ids == {"VOICE_BIRD_020": 7} and ours.files == {7: "eng\\Voice\\VOICE_BIRD_020.slb"}
    assert ours.version == "0x060809"
    flipped = Table(
        (
            make_record("FILES", [("eng\\Voice\\VOICE_BIRD_020.slb", "7")]),
            make_record("SOUNDS", [("7", "VOICE_BIRD_020")]),
        )
    )
    other = read_sounds(flipped)
    assert other.cue_ids == ours.cue_ids and other.files == ours.files


def test_join_counts_unresolved_ids_without_crashing():
    sounds = SoundsTable(
        {"VOICE_BIRD_020": 1, "VOICE_D_443": 2, "VOICE_RHIN_001": 3},
        {1: "eng\\Voice\\VOICE_BIRD_020.slb", 2: "eng\\etc\\VOICE_D_443.slb"},
    )
    banks = {name_hash("eng\\Voice\\VOICE_BIRD_020.slb"), name_hash("eng\\etc\\VOICE_D_443.slb")}
    rep = join_cues(
        ["MSG_BIRD_020", "MSG_VOICE_D_443", "MSG_RHIN_001", "MSG_ADAN_789", "MSG_BIRD_020"], sounds, banks
    )
    assert (rep.total, rep.resolved) == (4, 2)
    assert rep.results["MSG_VOICE_D_443"].ok
    assert rep.reasons() == {"no SOUNDS cue": 1, "no sound.pak entry": 1}
    assert "2 of 4" in rep.summary()


def _valid_chatter_tables():
    tool = load_demo_tool()
    game, tables_pak, _ = tool.build_tables()
    return [
        (read_rule_table, game["message\\PresetMessage_ADAN_plB.tbl"]),
        (read_message_table, game["message\\PresetMessage_ADAN_plB_msg.tbl"]),
        (read_unit_message_set, game["message\\UnitMessageSet_S02.tbl"]),
        (read_unit_group, game["stage\\UnitGroup_S02.tbl"]),
        (lambda d: read_sounds(read_table(d)), tables_pak["eng\\sounds.tbl"]),
    ]


_CHATTER = _valid_chatter_tables()


@settings(max_examples=examples(200))
@given(
    st.integers(0, len(_CHATTER) - 1),
    st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_chatter_table_readers_fuzz_only_format_errors(which, edits):
    reader, data = _CHATTER[which]
    buf = bytearray(data)
    for pos, value in edits:
        buf[pos % len(buf)] = value
    try:
        reader(bytes(buf))
    except FormatError:
        pass


@settings(max_examples=60, deadline=None)
@given(
    entries=st.dictionaries(
        st.text("abcdefgh\\.", min_size=1, max_size=12), st.binary(max_size=3000), min_size=1, max_size=6
    ),
    compress=st.booleans(),
    new=st.binary(max_size=5000),
    pick=st.integers(0, 5),
)
# hypothesis's find: an entry whose own data starts with "Z1" is stored compressed even when
# compress=False (else readers would take it for a Z1 entry), so its replacement stays compressed;
# the name ("\\", the simplest name in the alphabet) plays no part: "a" fails the same way
@example(entries={"\\": b"Z1"}, compress=False, new=b"", pick=0)
@example(entries={"a": b"Z1", "b": b"raw"}, compress=False, new=b"plain", pick=0)
def test_pak_rewrite_replaces_one_entry_and_keeps_every_other_as_stored(entries, compress, new, pick):
    from audio.games.sylpheed.formats.pak import rewrite_pak

    ids = {name_hash(k) for k in entries}
    if len(ids) != len(entries) or 0 in ids:
        return
    toc, parts = build_pak(entries, compress=compress)
    arc = PakArchive(toc, parts)
    assert rewrite_pak(arc, {}) == (toc, parts)  # an archive build_pak wrote comes back byte for byte
    key = sorted(entries)[pick % len(entries)]
    arc2 = PakArchive(*rewrite_pak(arc, {key: new}))
    assert arc2.read(key) == new
    was_z1 = compress or entries[key].startswith(b"Z1")  # build_pak's storage rule (its docstring)
    assert arc2.stored(key).startswith(b"Z1") == (was_z1 or new.startswith(b"Z1"))
    for other in entries:
        if other != key:
            assert arc2.stored(other) == arc.stored(other)


@settings(max_examples=150, deadline=None)
@given(toc=st.binary(max_size=120), part=st.binary(max_size=300), new=st.binary(max_size=64))
def test_pak_rewrite_of_a_fuzzed_archive_raises_only_format_errors(toc, part, new):
    from audio.games.sylpheed.formats.pak import rewrite_pak

    try:
        arc = PakArchive(b"IPFB" + toc, [part])
        rewrite_pak(arc, {e.id: new for e in arc.entries[:1]})
    except FormatError:
        pass
