"""Validated event construction and the friendly action registry."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import audio.games.skate.events  # noqa: F401  (registers the skate.* kinds)
from audio.core.bus import Event
from audio.port import ACTIONS, PortError, make_event
from audio.port.adapters import VEC3, Action, Param, available_actions, load_game_actions, register_action


@dataclass(frozen=True, kw_only=True)
class _Probe(Event, kind="test.port_probe"):
    n: int
    gain: float = 1.0
    name: str = ""
    on: bool = False
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    maybe: int | None = None
    many: tuple[str, ...] = ()


def test_make_event_converts_lists_to_tuples_and_keeps_types():
    ev = make_event(
        "test.port_probe", n=3, gain=2, name="a", on=1, pos=[1, 2, 3], maybe=None, many=["x"], t=0.5
    )
    assert ev == _Probe(n=3, gain=2.0, name="a", on=True, pos=(1.0, 2.0, 3.0), maybe=None, many=("x",), t=0.5)


@pytest.mark.parametrize(
    "fields,reason",
    [
        ({}, "test.port_probe"),
        ({"n": True}, "expected `int`, got `bool`"),
        ({"n": 1, "gain": float("inf")}, "finite"),
        ({"n": 1, "gain": "x"}, "expected `float`"),
        ({"n": 1, "pos": [1, 2]}, "length 3"),
        ({"n": 1, "on": 2}, "bool"),
        ({"n": 1, "name": "x" * 1000}, "string of at most 256"),
        ({"n": 1, "many": list(range(3))}, r"many\[0\]: expected `str`"),
        ({"n": 1, "maybe": "no"}, "expected `int | null`"),
        ({"n": 1, "extra": 0}, "unknown field"),
        ({"n": 1, "t": -1.0}, "time >= 0"),
        ({"n": 2**70}, "out of range"),
    ],
)
def test_make_event_refuses_bad_values_with_the_reason(fields, reason):
    with pytest.raises(PortError, match=reason):
        make_event("test.port_probe", **fields)


_JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
    lambda c: st.lists(c, max_size=4),
    max_leaves=8,
)


@settings(max_examples=examples(200))
@given(
    st.dictionaries(
        st.sampled_from(["n", "gain", "name", "on", "pos", "maybe", "many", "t", "x"]), _JSONISH, max_size=6
    )
)
def test_make_event_either_builds_a_well_typed_event_or_raises_port_error(fields):
    try:
        ev = make_event("test.port_probe", **fields)
    except PortError:
        return
    assert isinstance(ev.n, int) and not isinstance(ev.n, bool)
    assert isinstance(ev.gain, float) and isinstance(ev.on, bool) and isinstance(ev.pos, tuple)
    assert len(ev.pos) == 3 and all(isinstance(v, float) for v in ev.pos)


def test_actions_map_positional_arguments_onto_the_game_event_fields():
    ev = load_game_actions()["skate/spawn"].build([4, "busm1", 1.0, 0.0, 2.0, "bum"])
    assert (ev.KIND, ev.ped, ev.voice, ev.position, ev.model) == (
        "skate.spawn",
        4,
        "busm1",
        (1.0, 0.0, 2.0),
        "bum",
    )
    assert load_game_actions()["skate/spawn"].build([4, 41]).position == (0.0, 0.0, 5.0)
    with pytest.raises(PortError, match="expected 4 arguments, got 3"):
        ACTIONS["skate/move"].build([4, 1.0, 2.0])


def test_an_action_of_a_game_that_is_not_loaded_is_reported_unavailable():
    register_action(Action("test/missing", "test.never_registered", (Param("x", int, ("x",)),), "test"))
    try:
        assert "not registered" in ACTIONS["test/missing"].unavailable()
        assert "test/missing" not in available_actions()
        with pytest.raises(PortError, match="not registered"):
            ACTIONS["test/missing"].build([1])
    finally:
        del ACTIONS["test/missing"]


def test_a_vec3_parameter_fills_separate_xyz_fields_when_the_event_has_them():
    @dataclass(frozen=True, kw_only=True)
    class _Xyz(Event, kind="test.port_xyz"):
        x: float = 0.0
        y: float = 0.0
        z: float = 0.0

    a = Action("test/xyz", "test.port_xyz", (Param("position", VEC3, ("position",)),), "test")
    assert a.build([1.0, 2.0, 3.0]) == _Xyz(x=1.0, y=2.0, z=3.0)
