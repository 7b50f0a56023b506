"""Random events of every kind, through the port, never disable a game system (issue 20).

Per game, hypothesis builds events of each of the game's kinds (and the generic ``world.*``
and ``play`` ones) from values of each field's type, biased towards the edges a client can
send: NUL bytes and path-like text in strings, huge and negative numbers, empty and long
lists. What the port's validator refuses is refused there (a PortError or a refused file);
what it lets through must cost at most one request (a decision), never a system.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.bus import event_kinds
from audio.core.errors import InputError
from audio.core.fields import event_fields
from audio.core.paths import PathRefused
from audio.port.adapters import load_game_actions
from audio.port.api import VoicePort, open_system
from audio.port.events import PortError, make_event

GAMES = ("tone", "skate", "sylpheed", "starlancer", "radiata")
GENERIC = ("world.listener", "world.emitter", "play")
NAMES = ["town.rmf", "town.rmf\x00", "../x", "/dev/zero", "/etc/passwd", "a" * 300, "", ".", "ship:Naginata"]

_TEXT = st.one_of(st.sampled_from(NAMES), st.text(max_size=24))
_INT = st.one_of(st.integers(-3, 300), st.sampled_from([-(2**63), 2**31, 2**32 - 1, 0xFFFFFFFF, 9901]))
_FLOAT = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, float("nan"), float("inf")]),
)


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a field's type hint (Annotated ranges dropped: the port checks them)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_strategy(a) for a in typing.get_args(hint)))
    if origin in (tuple, list):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis] or [int]
        return st.lists(_strategy(args[0]), max_size=5)
    if hint is bool:
        return st.booleans()
    if hint is int:
        return _INT
    if hint is float:
        return _FLOAT
    if hint is type(None):
        return st.none()
    return _TEXT


def _kinds(game: str) -> list[str]:
    load_game_actions()
    return [k for k in sorted(event_kinds()) if k.startswith(game + ".")] + list(GENERIC)


def _event(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    fields = event_fields(kind)
    return st.fixed_dictionaries({}, optional={name: _strategy(hint) for name, hint in fields.items()}).map(
        lambda d: {"kind": kind, **d}
    )


@cache
def _port(game: str) -> VoicePort:
    return open_system(game=game)


def _post(port: VoicePort, fields: dict[str, Any]) -> None:
    kind = fields.pop("kind")
    try:
        port.post(make_event(kind, **fields), when="now")
    except (PortError, PathRefused, InputError):
        pass  # refused at the port: nothing reached the engine


@pytest.mark.parametrize("game", GAMES)
def test_random_events_of_every_kind_never_disable_a_system(game: str) -> None:
    port = _port(game)
    kinds = _kinds(game)

    @settings(max_examples=examples(40), suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(st.one_of(*(_event(k) for k in kinds)), min_size=1, max_size=8))
    def run(events: list[dict[str, Any]]) -> None:
        for fields in events:
            _post(port, fields)
        port.advance(0.05)
        assert port.engine.disabled == {}

    run()
    assert port.engine.disabled == {}
