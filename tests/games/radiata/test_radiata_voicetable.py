"""The voice table: keys, precedence, validation, paths relative to the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio.core.errors import ScenarioError
from audio.games.radiata.formats.voicetable import (
    VoiceEntry,
    load_voicetable,
    read_voicetable,
    write_voicetable,
)

TABLE = """
[characters]
12 = "Jack"

[[voice]]
file = "talk/town.rmf"
packet = 0
sound_id = 291
audio = "v/line.wav"

[[voice]]
character_id = 12
sound_id = 291
audio = "v/bank.wav"

[[voice]]
character_id = 9901
sound_id = 7
audio = "v/party.wav"
"""


def make(tmp_path: Path, text: str = TABLE) -> Path:
    (tmp_path / "v").mkdir(exist_ok=True)
    for n in ("line", "bank", "party"):
        (tmp_path / "v" / f"{n}.wav").write_bytes(b"x")
    p = tmp_path / "voices.toml"
    p.write_text(text)
    return p


def test_line_key_wins_over_character_key_and_paths_are_relative_to_the_table(tmp_path):
    t = load_voicetable(make(tmp_path))
    assert t.lookup("talk/town.rmf", 0, 291, [12]).audio == tmp_path / "v" / "line.wav"
    assert t.lookup("town.rmf", 0, 291, [12]).audio == tmp_path / "v" / "line.wav"  # by base name
    assert t.lookup("town.rmf", 1, 291, [12]).audio == tmp_path / "v" / "bank.wav"  # other packet
    assert t.lookup("town.rmf", 1, 7, [5, 9901]).audio == tmp_path / "v" / "party.wav"  # second id
    assert t.lookup("town.rmf", 1, 8, [12]) is None
    assert t.name(12) == "Jack" and t.name(40) == "chr40" and t.name(None) == "-"


@pytest.mark.parametrize(
    "row,problem",
    [
        ('file = "a.rmf"\nsound_id = 1\naudio = "v/line.wav"', "either file"),
        ('character_id = 1\nfile = "a.rmf"\npacket = 0\nsound_id = 1\naudio = "v/line.wav"', "either file"),
        (
            'character_id = 1\nsound_id = 70000\naudio = "v/line.wav"',
            r"voice\[0\].sound_id: expected `int` <= 65535",
        ),
        ("character_id = 1\nsound_id = 1", r"voice\[0\]: object missing required field `audio`"),
        ('character_id = 1\nsound_id = 1\naudio = "v/missing.wav"', "existing audio"),
        (
            'character_id = 1\nsound_id = 1\naudio = "v/line.wav"\nvolume = 2',
            r"voice\[0\].volume: unknown field",
        ),
        ('character_id = 1\nsound_id = 1\naudio = "v/line.wav"\nsound_ib = 2', r"did you mean 'sound_id'"),
        ('character_id = 1\nsound_id = 1.5\naudio = "v/line.wav"', r"voice\[0\].sound_id: expected `int`"),
    ],
)
def test_bad_rows_are_one_error_naming_the_field(tmp_path, row, problem):
    with pytest.raises(ScenarioError, match=problem):
        load_voicetable(make(tmp_path, f"[[voice]]\n{row}\n"))


def test_duplicate_keys_and_bad_toml_are_one_error(tmp_path):
    row = '[[voice]]\ncharacter_id = 1\nsound_id = 1\naudio = "v/line.wav"\n'
    with pytest.raises(ScenarioError, match="one row per key"):
        load_voicetable(make(tmp_path, row + row))
    with pytest.raises(ScenarioError, match="valid TOML"):
        read_voicetable("[[voice", "x.toml")


def test_written_table_reads_back(tmp_path):
    make(tmp_path)
    entries = [
        VoiceEntry(291, tmp_path / "v" / "line.wav", "town.rmf", 0),
        VoiceEntry(7, tmp_path / "v" / "party.wav", character_id=9901),
    ]
    p = tmp_path / "out.toml"
    p.write_text(write_voicetable(entries, {12: "Jack"}, tmp_path))
    t = load_voicetable(p)
    assert t.entries == entries and t.characters == {12: "Jack"}
    assert 'audio = "v/line.wav"' in p.read_text()


@pytest.mark.parametrize(
    "text,match",
    [
        ('[names]\n70000 = "x"\n', r"names\.70000: expected an id 0\.\.65535"),
        ('[names]\nold = "x"\n', r"names: invalid key: expected `str` matching regex"),
        ('[propers]\nabc = "x"\n', r"propers: invalid key: expected `str` matching regex"),
        ('[charcters]\n12 = "Jack"\n', r"charcters: unknown field \(did you mean 'characters'\?\)"),
    ],
)
def test_bad_id_tables_are_one_error_naming_the_table(tmp_path, text, match):
    with pytest.raises(ScenarioError, match=match):
        read_voicetable(text, tmp_path / "voices.toml")
