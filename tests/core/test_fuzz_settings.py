"""Fuzz the settings loaders that became msgspec structs: any parsed value either loads or is
one barkbus error (never another exception): talk settings, ``[skate.mix]``, ``[tone]``,
Sylpheed crew entries and capture headers (with their paths resolved)."""

from __future__ import annotations

from pathlib import Path

from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.capture import read_header
from audio.core.errors import BarkbusError
from audio.core.plugin import ScenarioContext
from audio.games.radiata.talk.settings import TalkSettings
from audio.games.skate.speech.mixcurves import MixCurves
from audio.games.sylpheed.scenario import scenario_events as sylpheed_events
from audio.games.tone.scenario import system_from_scenario as tone_system

FUZZ = settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.floats(width=64),  # nan and inf included: refused as one error
    st.text(max_size=8),
    st.booleans(),
)
values = st.recursive(
    scalars,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=10,
)


def _table(keys: list[str]) -> st.SearchStrategy[dict]:
    return st.dictionaries(st.one_of(st.sampled_from(keys), st.text(max_size=6)), values, max_size=4)


_CTX = ScenarioContext(Path("fuzz.toml"), 0, {})
"""The scenario the fuzzed sections are read from."""


@FUZZ
@given(_table(list(TalkSettings.names())))
def test_any_talk_settings_table_loads_or_is_one_error(d):
    try:
        TalkSettings.from_dict(d)
    except BarkbusError as exc:
        assert "\n" not in str(exc)  # one clear line


curve = st.fixed_dictionaries({}, optional={"x": values, "y": values, "z": scalars})


@FUZZ
@given(st.dictionaries(st.sampled_from(["out2", "out6", "out14", "out15", "out9", "x"]), curve, max_size=3))
def test_any_skate_mix_table_loads_or_is_one_error(d):
    try:
        MixCurves.from_dict(d)
    except BarkbusError as exc:
        assert "\n" not in str(exc)  # one clear line


@FUZZ
@given(_table(["graph", "max_seconds"]))
def test_any_tone_section_loads_or_is_one_error(d):
    try:
        tone_system(d, _CTX)
    except BarkbusError as exc:
        assert "\n" not in str(exc)  # one clear line


@FUZZ
@given(_table(["t", "stage", "crew", "squadron", "tables", "speakers", "phases"]))
def test_any_sylpheed_crew_entry_loads_or_is_one_error(d):
    try:
        sylpheed_events()["sylpheed.crew"](d, _CTX)
    except BarkbusError as exc:
        assert "\n" not in str(exc)  # one clear line


@FUZZ
@given(
    _table(["sample_rate", "block", "layout", "seed", "game", "install", "allow", "isolate_systems", "doc"])
)
def test_any_capture_header_reads_or_is_one_error(tmp_path, d):
    try:
        read_header({"capture": "barkbus", **d}, "c.jsonl").resolved(tmp_path / "c.jsonl")
    except BarkbusError as exc:
        assert "\n" not in str(exc)  # one clear line
