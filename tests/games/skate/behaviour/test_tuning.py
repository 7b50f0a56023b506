"""The tuning file: inheritance, limits, clear errors, round trip, the demo file."""

from pathlib import Path

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.core.errors import FormatError
from audio.games.skate.speech.tuning import EventTuning, SpeechTuning, dump_tuning, load_tuning

DEMO = Path(__file__).resolve().parents[4] / "audio" / "games" / "skate" / "demo" / "tuning.toml"
HEAD = 'format = "barkbus-skate-tuning"\nversion = 1\n'


def write(tmp_path, text):
    p = tmp_path / "t.toml"
    p.write_text(HEAD + text)
    return p


def test_events_inherit_default_and_missing_events_use_default(tmp_path):
    t = load_tuning(
        write(
            tmp_path,
            "[default]\ngap = 2.5\nrepeat = 4.0\n[event.8210]\nrepeat = 9.0\n"
            'not_follow = [[8204, 1.5]]\nname = "501_warn"\n',
        )
    )
    assert t.for_event(8210) == EventTuning(gap=2.5, repeat=9.0, not_follow=((8204, 1.5),))
    assert t.for_event(1) == EventTuning(gap=2.5, repeat=4.0)
    assert t.names[8210] == "501_warn"
    assert EventTuning().priority == 50 and EventTuning().probability == 100.0


@pytest.mark.parametrize(
    "text, words",
    [
        ('[event.8210]\nrepeat = "x"\n', ["event.8210.repeat", "`float | null`, got `str`"]),
        ("[default]\ngap = nan\n", ["default.gap", "a finite number"]),
        ("[event.8210]\nloudness = 3\n", ["event.8210.loudness", "unknown field"]),
        ("[event.8210]\nrepaet = 3\n", ["event.8210.repaet", "did you mean 'repeat'"]),
        ("[event.warn]\nrepeat = 1\n", ["event.warn", "decimal event id"]),
        ("[default]\nprobability = 120\n", ["default.probability", "<= 100.0"]),
        ('[default]\ninterrupt = "false"\n', ["default.interrupt", "`bool | null`, got `str`"]),
        ("[default]\nblocked_flags = [1, 2, 3, 4]\n", ["blocked_flags", "length <= 3"]),
        ("[default]\nnot_follow = [" + ", ".join(["[1, 1.0]"] * 11) + "]\n", ["not_follow", "length <= 10"]),
        ("[default]\nnot_follow = [[1]]\n", ["not_follow[0]", "length 2"]),
        ("[default\n", ["valid TOML"]),
    ],
)
def test_bad_files_name_the_file_and_the_key(tmp_path, text, words):
    p = write(tmp_path, text)
    with pytest.raises(FormatError) as exc:
        load_tuning(p)
    msg = str(exc.value)
    assert str(p) in msg and all(w in msg for w in words), msg


def test_wrong_format_header(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text('format = "other"\n')
    with pytest.raises(FormatError, match="barkbus-skate-tuning"):
        load_tuning(p)


def test_dump_and_load_round_trip(tmp_path):
    t = SpeechTuning(default=EventTuning(gap=1.0), names={8204: "104_spec_slam"})
    t.events[8204] = EventTuning(
        gap=1.0,
        priority=70,
        interrupt=True,
        not_follow=((8202, 1.5),),
        challenge_exclude=(2, 5),
        blocked_flags=(3,),
        zombie_allowed=True,
        maincast_repeat_31=4.0,
        timer_b=2.0,
    )
    t.events[8210] = EventTuning(gap=1.0)
    p = tmp_path / "mine.toml"
    dump_tuning(t, p)
    assert load_tuning(p) == t


def test_demo_tuning_covers_the_common_events():
    t = load_tuning(DEMO)
    for e in (8210, 8204, 8207, 8209, 8220, 8202, 8194, 8198, 8224, 8217, 8214, 8277):
        assert e in t.events, e
    assert "user's game" in DEMO.read_text()


from audio.games.skate.speech.tuning import parse_tuning  # noqa: E402

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True), st.text(max_size=5)
)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=12), max_leaves=30)
_keys = st.sampled_from(
    [
        "gap",
        "repeat",
        "priority",
        "probability",
        "not_follow",
        "blocked_flags",
        "challenge_exclude",
        "interrupt",
        "zombie_allowed",
        "name",
        "bogus",
    ]
)
_table = st.dictionaries(_keys, _values, max_size=6)


@settings(max_examples=examples(200))
@given(
    default=_table,
    events=st.dictionaries(st.sampled_from(["8210", "1", "x", "70000", "-3"]), _table, max_size=3),
)
def test_fuzzed_documents_load_or_raise_format_error(default, events):
    doc = {"format": "barkbus-skate-tuning", "version": 1, "default": default, "event": events}
    try:
        t = parse_tuning(doc, "fuzz.toml")
    except FormatError as exc:
        assert "fuzz.toml" in str(exc)
    else:
        assert all(0 <= e <= 0xFFFF for e in t.events)


@settings(max_examples=examples(100))
@given(data=st.binary(max_size=200))
def test_fuzzed_bytes_raise_format_error(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("fz") / "t.toml"
    p.write_bytes(data)
    with pytest.raises(FormatError):
        load_tuning(p)
