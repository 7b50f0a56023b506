"""Event bus ordering, follow-ups, seeded streams, capture and replay."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from audio.core.bus import Event, EventBus
from audio.core.capture import Capture, event_from_json, event_to_json, read_capture
from audio.core.clock import RngStreams
from audio.core.errors import FormatError


@dataclass(frozen=True, kw_only=True)
class Ping(Event, kind="test.ping"):
    n: int = 0
    where: tuple[float, float, float] = (0.0, 0.0, 0.0)


class Recorder:
    def __init__(self, follow: bool = False):
        self.got: list[tuple[int, int]] = []
        self.follow = follow

    def handle(self, ev, bus):
        self.got.append((bus.now, ev.n))
        if self.follow and ev.n < 3:
            bus.post_now(Ping(n=ev.n + 10))


def test_events_are_delivered_in_sample_then_post_order():
    bus = EventBus()
    rec = Recorder()
    bus.subscribe(rec, [Ping])
    bus.post(Ping(t=0.002, n=1))
    bus.post(Ping(t=0.001, n=2))
    bus.post(Ping(t=0.002, n=3))
    assert bus.dispatch(95) == 1
    assert bus.dispatch(96) == 2
    assert rec.got == [(95, 2), (96, 1), (96, 3)]


def test_consumers_post_follow_ups_delivered_in_the_same_pass():
    bus = EventBus()
    rec = Recorder(follow=True)
    bus.subscribe(rec, [Ping])
    bus.post(Ping(t=0.0, n=1))
    bus.dispatch(0)
    assert rec.got == [(0, 1), (0, 11)]


def test_event_json_round_trip_keeps_types():
    ev = Ping(t=1.25, n=7, where=(1.0, 2.0, 3.5))
    back, at, origin = event_from_json(event_to_json(ev, 60_000, "external"))
    assert back == ev and at == 60_000 and origin == "external"


def test_unknown_event_kind_is_a_format_error():
    with pytest.raises(FormatError, match="known event kind"):
        event_from_json({"kind": "nope.nothing", "at": 0})


def test_capture_records_every_post_and_reads_back(tmp_path):
    path = tmp_path / "cap.jsonl"
    bus = EventBus()
    with open(path, "w") as fh:
        cap = Capture(fh, {"seed": 3})
        cap.attach(bus)
        bus.post(Ping(t=0.5, n=1))
        bus.post(Ping(t=0.0, n=2), origin="internal")
    header, events = read_capture(path)
    assert header["seed"] == 3
    assert [(e.n, at, o) for e, at, o in events] == [(1, 24_000, "external"), (2, 0, "internal")]


def test_corrupt_capture_names_the_line(tmp_path):
    path = tmp_path / "cap.jsonl"
    path.write_text('{"capture": "barkbus", "version": 1}\n{"kind": "test.ping", "at": 0}\n{oops\n')
    _, events = read_capture(path)
    with pytest.raises(FormatError, match="line 3"):
        list(events)


def test_rng_streams_are_independent_of_each_other():
    a = RngStreams(42)
    x1 = a.generator("skate.ped.1").integers(0, 1 << 30, 5)
    b = RngStreams(42)
    b.generator("skate.ped.0").integers(0, 1 << 30, 100)  # another subsystem draws first
    x2 = b.generator("skate.ped.1").integers(0, 1 << 30, 5)
    assert np.array_equal(x1, x2)
    assert RngStreams(43).seed32("skate.ped.1") != a.seed32("skate.ped.1")
    assert a.seed32("x") == RngStreams(42).seed32("x")


def test_replay_of_a_capture_gives_the_identical_render(tmp_path):
    from audio.offline.render import render_replay, render_scenario
    from audio.offline.scenario import demo_scenario

    cap = tmp_path / "c.jsonl"
    first = render_scenario(demo_scenario("basic"), capture=cap)
    again = render_replay(cap, block=1000)
    assert np.array_equal(first.audio, again.audio)


def test_a_capture_moved_with_its_scenario_folder_replays_elsewhere(tmp_path):
    import shutil

    from audio.offline.render import render_replay, render_scenario
    from audio.offline.scenario import demo_scenario

    first = tmp_path / "a"
    shutil.copytree(demo_scenario("basic").parent, first)
    cap = first / "run.jsonl"
    res = render_scenario(first / "basic.toml", capture=cap)
    assert res.audio is not None and float(abs(res.audio).max()) > 0.01
    moved = tmp_path / "b"
    shutil.move(first, moved)
    again = render_replay(moved / "run.jsonl")
    assert again.audio is not None and again.audio.tobytes() == res.audio.tobytes()


def test_a_5_1_capture_replays_through_the_one_capture_module(tmp_path):
    from audio.core.capture import read_capture, replay
    from audio.offline.render import render_scenario
    from audio.offline.scenario import build_engine, demo_scenario, load_scenario

    cap = tmp_path / "six.jsonl"
    scn = load_scenario(demo_scenario("basic"))
    scn.layout = "5.1"
    first = render_scenario(scn, capture=cap)
    assert first.audio is not None and first.audio.shape[1] == 6 and abs(first.audio).max() > 0.01
    header, events = read_capture(cap)
    again = replay(build_engine(scn, post_events=False), events, header["samples"])
    assert again.shape == first.audio.shape and again.tobytes() == first.audio.tobytes()


def test_to_jsonable_gives_lists_for_tuples_and_text_keys_at_any_depth_and_keeps_plain_values():
    from enum import StrEnum

    from audio.core.bus import to_jsonable

    class Kind(StrEnum):
        A = "a"

    value = {"pos": (1.0, (2, 3)), 7: {"k": [None, True, (Kind.A,)]}, "s": "x", "n": 4}
    got = to_jsonable(value)
    assert got == {"pos": [1.0, [2, 3]], "7": {"k": [None, True, [Kind.A]]}, "s": "x", "n": 4}
    assert type(got["pos"]) is list and type(got["pos"][1]) is list and type(got["7"]["k"][2]) is list
    assert got["7"]["k"][2][0] is Kind.A  # a str subclass passes through as itself
    assert json.loads(json.dumps(got)) == {
        "pos": [1.0, [2, 3]],
        "7": {"k": [None, True, ["a"]]},
        "s": "x",
        "n": 4,
    }
