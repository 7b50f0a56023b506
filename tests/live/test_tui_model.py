"""The audition's key handling (no terminal needed): keys become game events."""

from __future__ import annotations

import math

import pytest
from named_stub import NamedStub

import audio.games.skate.events as sk
import audio.games.sylpheed.events as sy
from audio.games.skate.tui import Adapter as SkateAdapter
from audio.games.sylpheed.tui import Adapter as SylpheedAdapter
from audio.live.tui import Audition
from audio.port import open_system


@pytest.fixture
def port():
    p = open_system(game="tone")
    p.engine.add_system(NamedStub("skate.speech"))
    p.engine.add_system(NamedStub("sylpheed.chatter"))
    return p


def _drain(port):
    return [it.event for it in port.inbox.drain()]


def test_skate_keys_spawn_fire_values_move_and_set_speed_and_zombie(port):
    ui = Audition(port, adapter=SkateAdapter(port))
    for k in ("n", "3", "KEY_LEFT", "KEY_UP", "+", "+", "z"):
        assert ui.key(k)
    a = math.radians(15.0)
    assert _drain(port) == [
        sk.PedSpawn(ped=1, voice=41, position=(0.0, 0.0, 5.0)),
        sk.SpeechValue(ped=1, value=6),
        sk.PedMove(ped=1, position=(-5 * math.sin(a), 0.0, 5 * math.cos(a))),
        sk.PedMove(ped=1, position=(-6.25 * math.sin(a), 0.0, 6.25 * math.cos(a))),
        sk.PlayerSpeed(speed=1.0),
        sk.PlayerSpeed(speed=2.0),
        sk.ZombieMode(on=True),
    ]
    assert not ui.key("q")


def test_sylpheed_keys_fire_barks_and_cycle_the_phase(port):
    ad = SylpheedAdapter(port)
    ad.speakers = ["ADAN"]
    ui = Audition(port, adapter=ad)
    ui.key("1")
    ui.key("p")
    assert _drain(port) == [sy.Bark(speaker="ADAN", event="LOCKON_1"), sy.PhaseChange(phase=2)]


def test_moving_an_emitter_left_puts_it_at_that_azimuth_in_the_engine_world(port):
    assert not port.engine.mixer.meters
    ui = Audition(port)
    assert port.engine.mixer.meters  # the voice rows show each voice's peak
    for _ in range(6):
        ui.key("KEY_LEFT")  # 6 x 15 degrees to the left
    port.advance(0.01)
    assert port.engine.world.azimuth_deg("ann") == pytest.approx(90.0)
    assert port.engine.world.distance("ann") == pytest.approx(5.0)


def test_command_line_posts_any_event_kind_and_reports_rejections(port):
    ui = Audition(port)
    for k in ':event tone.on {"speaker": "zed"}':
        ui.key(k)
    ui.key("\n")
    assert ui.message == "event tone.on"
    for k in ":tone/on":
        ui.key(k)
    ui.key("\n")
    assert "expected 1..6 arguments" in ui.message
    assert [e.speaker for e in _drain(port)] == ["zed"]


def test_the_screen_lists_unavailable_game_actions_with_the_reason(port):
    from audio.port.adapters import ACTIONS, Action, Param

    ACTIONS["skate/test_missing"] = Action("skate/test_missing", "test.none", (Param("x", int, ("x",)),), "t")
    try:
        screen = "\n".join(Audition(port, adapter=SkateAdapter(port)).lines(120, 40))
    finally:
        del ACTIONS["skate/test_missing"]
    assert "/skate/test_missing: unavailable (event kind 'test.none' is not registered" in screen


def test_the_legend_shows_only_the_running_games_keys_and_help_lists_its_commands():
    sylpheed = open_system(game="sylpheed")
    ui = Audition(sylpheed, adapter=SylpheedAdapter(sylpheed))
    legend = ui.legend()
    assert "p phase" in legend and "z zombie" not in legend and "n spawn" not in legend
    ui.key(":")
    for ch in "help":
        ui.key(ch)
    ui.key("\n")
    assert "/sylpheed/bark speaker:str event:str" in ui.message and "/skate/" not in ui.message
    skate = open_system(game="skate")
    sk_legend = Audition(skate, adapter=SkateAdapter(skate)).legend()
    assert "z zombie" in sk_legend and "p phase" not in sk_legend
