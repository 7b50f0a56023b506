"""Fuzz the text formats the core reads: graph files, scenario files, captures.

Whatever the content, loading raises only the project's own error (naming the file) or
succeeds; never a KeyError, TypeError or AttributeError from deep inside.
"""

from __future__ import annotations

import json

import tomli_w
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.capture import read_capture
from audio.core.errors import FormatError, GraphError, ScenarioError
from audio.dsp.graph import load_graph
from audio.offline.scenario import build_engine, load_scenario

FUZZ = settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.booleans(),
)
keys = st.sampled_from(
    [
        "id",
        "kind",
        "params",
        "input",
        "to",
        "name",
        "t",
        "type",
        "position",
        "path",
        "duration",
        "seed",
        "emitter",
        "file",
        "gain",
        "x",
        "y",
        "yaw",
        "layout",
        "volume_db",
        "Rsp0",
        "PI20",
        "Sen0",
        "Sub0",
        "bus:master",
        "voice",
        "play",
        "listener",
    ]
)
values = st.recursive(
    scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(keys, kids, max_size=4)),
    max_leaves=12,
)
node = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=4),
        "kind": st.sampled_from(
            ["Rsp0", "PI20", "HI20", "LI20", "Gai0", "Sen0", "Del0", "Pn21", "Sub0", "Nope"]
        ),
    },
    optional={
        "params": st.dictionaries(
            st.sampled_from(
                ["gain", "q", "centre_hz", "cutoff_hz", "seconds", "level", "angle_deg", "pitch", "bogus"]
            ),
            scalars,
            max_size=3,
        ),
        "input": st.text(max_size=4),
        "to": st.sampled_from(["bus:master", "submix:x", "nowhere", "bus:"]),
    },
)
graph_doc = st.fixed_dictionaries(
    {
        "graph": st.fixed_dictionaries(
            {"name": st.text(max_size=5), "kind": st.sampled_from(["voice", "submix", "bus", "x"])}
        ),
        "node": st.lists(node, max_size=5),
    },
    optional={
        "curves": st.dictionaries(keys, values, max_size=2),
        "ducker": st.dictionaries(keys, values, max_size=3),
    },
)
event = st.fixed_dictionaries(
    {"t": scalars, "type": st.sampled_from(["play", "listener", "emitter", "nope"])},
    optional={
        "emitter": scalars,
        "file": scalars,
        "position": values,
        "id": scalars,
        "gain": scalars,
        "yaw": scalars,
    },
)
scenario_doc = st.fixed_dictionaries(
    {
        "scenario": st.dictionaries(
            st.sampled_from(["duration", "seed", "layout", "name"]), scalars, max_size=4
        )
    },
    optional={
        "listener": st.dictionaries(keys, values, max_size=3),
        "emitter": st.lists(st.dictionaries(keys, values, max_size=3), max_size=2),
        "event": st.lists(event, max_size=3),
    },
)


@FUZZ
@given(graph_doc)
def test_any_graph_file_loads_or_raises_a_graph_error(tmp_path, doc):
    p = tmp_path / "g.toml"
    p.write_text(tomli_w.dumps(doc))
    try:
        load_graph(p)
    except GraphError as exc:
        assert str(p) in str(exc)


@FUZZ
@given(scenario_doc)
def test_any_scenario_loads_or_raises_a_scenario_error(tmp_path, doc):
    p = tmp_path / "s.toml"
    p.write_text(tomli_w.dumps(doc))
    try:
        build_engine(load_scenario(p))
    except ScenarioError as exc:
        assert str(p) in str(exc)


KINDS = ["play", "world.listener", "world.emitter", "skate.spawn", "skate.value", "sylpheed.bark", "nope"]
records = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS)},
    optional={
        "at": values,
        "origin": st.sampled_from(["external", "internal", "x"]),
        "t": scalars,
        "emitter": values,
        "file": values,
        "position": values,
        "yaw_deg": values,
        "ped": values,
        "value": values,
        "voice": values,
        "speaker": values,
        "event": values,
        "bogus": values,
    },
)


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.dictionaries(keys, values, max_size=4).map(json.dumps),
            records.map(json.dumps),
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_any_capture_reads_or_raises_a_format_error(tmp_path, lines, with_header):
    p = tmp_path / "c.jsonl"
    head = [json.dumps({"capture": "barkbus", "version": 1})] if with_header else []
    p.write_text("\n".join(head + lines) + "\n")
    try:
        _, events = read_capture(p)
        list(events)
    except FormatError as exc:
        assert str(p) in str(exc)


wild = st.one_of(
    scalars, st.sampled_from([float("nan"), float("inf"), -float("inf"), "demo", "", "..", 2**70])
)
wild_values = st.recursive(
    wild,
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(keys, kids, max_size=3)),
    max_leaves=8,
)
section_keys = st.sampled_from(
    [
        "install",
        "tuning",
        "manager_rand",
        "manager_seed",
        "library_seed",
        "streams_per_channel",
        "console_start",
        "cache_mb",
        "mix",
        "lang",
        "phase",
        "generator",
        "fold",
        "crew",
        "pool_size",
        "graph",
        "max_seconds",
        "mission",
        "voices",
        "fps",
        "bogus",
    ]
)
game_event = st.fixed_dictionaries(
    {
        "t": st.one_of(scalars, st.just(float("nan"))),
        "type": st.sampled_from(
            [
                "skate.spawn",
                "skate.value",
                "skate.speed",
                "sylpheed.bark",
                "sylpheed.phase",
                "sylpheed.crew",
                "tone.on",
                "starlancer.trigger",
                "starlancer.say",
                "radiata.talk",
                "radiata.advance",
                "radiata.choose",
            ]
        ),
    },
    optional={
        "ped": wild,
        "value": wild,
        "voice": wild,
        "speaker": wild,
        "event": wild,
        "phase": wild,
        "stage": wild,
        "crew": wild,
        "speed": wild,
        "line": wild,
        "freq_hz": wild,
        "condition": wild,
        "subject": wild,
        "speech": wild,
        "file": wild,
        "packet": wild,
        "choice": wild,
        "bogus": wild,
    },
)


@settings(max_examples=examples(120), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    game=st.sampled_from(["skate", "sylpheed", "tone", "starlancer", "radiata"]),
    section=st.dictionaries(section_keys, wild_values, max_size=3),
    events=st.lists(game_event, max_size=3),
    duration=st.one_of(st.just(5.0), wild),
)
def test_any_scenario_with_a_game_section_and_non_finite_numbers_raises_only_barkbus_errors(
    tmp_path, game, section, events, duration
):
    from audio.core.errors import BarkbusError

    doc = {"scenario": {"duration": duration}, game: section, "event": events}
    p = tmp_path / "s.toml"
    p.write_text(tomli_w.dumps(doc))
    try:
        build_engine(load_scenario(p))
    except BarkbusError as exc:
        assert str(p) in str(exc) or "<" in str(exc)
