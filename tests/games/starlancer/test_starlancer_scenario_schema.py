"""Starlancer scenario events are checked against the event types themselves: one error naming
the entry and field, the choices and a did-you-mean; any entry loads or is one ScenarioError."""

from __future__ import annotations

import pytest
import tomli_w
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.errors import ScenarioError
from audio.games.starlancer.events import Say, Trigger
from audio.offline.scenario import load_scenario

HEAD = {"scenario": {"duration": 10.0}, "starlancer": {"install": "demo"}}


def _load(tmp_path, *events):
    p = tmp_path / "s.toml"
    p.write_text(tomli_w.dumps({**HEAD, "event": list(events)}))
    return load_scenario(p)


def test_a_good_say_and_trigger_become_the_event_types(tmp_path):
    say = {"t": 1.0, "type": "starlancer.say", "speech": "a.ut", "speaker": "ship:Naginata", "mode": "now"}
    trig = {"t": 2.0, "type": "starlancer.trigger", "condition": "tt_destroyed", "subject": "Bandit"}
    scn = _load(tmp_path, say, trig)
    assert scn.events == [
        Say(t=1.0, speech="a.ut", speaker="ship:Naginata", mode="now"),
        Trigger(t=2.0, condition="tt_destroyed", subject="Bandit"),
    ]


@pytest.mark.parametrize(
    "entry,match",
    [
        (
            {"type": "starlancer.say", "speech": "a.ut", "mode": "later"},
            r"event\[0\]\.mode: expected one of 'now', 'queued', 'if_idle', got 'later'",
        ),
        (
            {"type": "starlancer.say", "speech": "a.ut", "remark": "tuant"},
            r"event\[0\]\.remark: .*got 'tuant' \(did you mean 'taunt'\?\)",
        ),
        (
            {"type": "starlancer.say", "speech": "a.ut", "speaker": "captain"},
            r"event\[0\]\.speaker: expected `str`",
        ),
        ({"type": "starlancer.say", "mode": "now"}, r"event\[0\]: object missing required field `speech`"),
        (
            {"type": "starlancer.say", "speech": "a.ut", "film_flag": 5},
            r"event\[0\]\.film_flag: unknown field \(did you mean 'film_flags'\?\)",
        ),
        (
            {"type": "starlancer.trigger", "condition": "Destroyd", "subject": "x"},
            r"event\[0\]\.condition: unknown trigger condition 'Destroyd' \(did you mean 'Destroyed'\?\)",
        ),
        (
            {"type": "starlancer.trigger", "condition": 1, "subject": "x", "component": 256},
            r"event\[0\]\.component: expected `int` <= 255",
        ),
        (
            {"type": "starlancer.gate", "gate": "taunt"},
            r"event\[0\]\.gate: .*got 'taunt' \(did you mean 'taunts'\?\)",
        ),
        ({"t": -1.0, "type": "starlancer.reset"}, r"event\[0\]\.t: expected a time >= 0 s"),
    ],
)
def test_a_bad_entry_is_one_error_naming_the_field(tmp_path, entry, match):
    with pytest.raises(ScenarioError, match=match):
        _load(tmp_path, entry)


scalars = st.one_of(
    st.integers(-(2**40), 2**40), st.floats(allow_nan=False, width=32), st.text(max_size=6), st.booleans()
)
entry = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["starlancer.say", "starlancer.trigger", "starlancer.gate", "starlancer.reset"]
        )
    },
    optional={
        k: st.one_of(scalars, st.lists(scalars, max_size=3))
        for k in (
            "t",
            "speech",
            "speaker",
            "mode",
            "remark",
            "condition",
            "subject",
            "gate",
            "locals",
            "expiry",
        )
    },
)


@settings(max_examples=examples(120), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entry)
def test_any_starlancer_entry_loads_or_is_one_scenario_error(tmp_path, e):
    try:
        _load(tmp_path, e)
    except ScenarioError as exc:
        assert "s.toml" in str(exc)
