"""The OSC server: address space, replies, rejection of bad input, flood bounds."""

from __future__ import annotations

import json
import math
import socket
import struct
import time

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from named_stub import NamedStub
from pythonosc.osc_message import OscMessage

import audio.games.skate.events as skate_events
import audio.games.sylpheed.events as syl_events
from audio.port import OscServer, open_system
from audio.port.osc import build_message


class Client:
    def __init__(self, server: OscServer) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(15.0)
        self.target = server.address
        self.server = server

    def send(self, address: str, *args) -> None:
        self.sock.sendto(build_message(address, *args), self.target)

    def raw(self, data: bytes) -> None:
        self.sock.sendto(data, self.target)

    def ask(self, address: str, *args):
        self.send(address, *args)
        msg = OscMessage(self.sock.recvfrom(65536)[0])
        return msg.address, list(msg.params)

    def settle(self, received: int, timeout: float = 30.0) -> None:
        """Wait until ``received`` datagrams (one message each) have arrived and been handled:
        counted as accepted, rejected, dropped or answered (``received`` is counted on arrival,
        before the message is applied). ``timeout`` only keeps a lost datagram from hanging."""
        s = self.server.stats
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if s.received >= received and s.accepted + s.rejected + s.dropped + s.queries >= s.received:
                return
            time.sleep(0.005)
        raise AssertionError(f"{received} datagrams not handled: {s}")


@pytest.fixture
def rig():
    port = open_system(game="tone", seed=2)
    server = OscServer(port, udp_port=0, drive_clock=True).start()
    client = Client(server)
    yield port, server, client
    server.stop()


def test_tone_messages_play_and_the_speaking_query_replies_to_the_sender(rig):
    _port, _server, c = rig
    c.send("/tone/on", "ann", "hello", 440.0, 0.5, 0.5)
    assert c.ask("/time", 0.25) == ("/time", [0.25, 12000])
    assert c.ask("/query/speaking", "ann") == ("/speaking", ["ann", 1])
    assert c.ask("/query/line", "hello") == ("/line", ["hello", 1])
    assert c.ask("/barkbus/query/speaking", "bob") == ("/speaking", ["bob", 0])
    c.ask("/time", 1.0)
    assert c.ask("/query/speaking", "ann") == ("/speaking", ["ann", 0])
    # 8 messages received, 1 event accepted, nothing rejected, dropped, in error or faulty
    assert c.ask("/query/stats")[1] == [8, 1, 0, 0, 0, 0]


def test_a_run_refuses_other_games_addresses_and_lists_only_its_own(rig):
    port, server, c = rig
    c.send("/skate/spawn", 1, 41, 1.0, 0.0, 6.0)
    c.send("/event", "skate.value", json.dumps({"ped": 1, "value": 53}))
    c.settle(2)
    actions = c.ask("/query/actions")[1]
    assert [it.event for it in port.inbox.drain()] == []
    assert server.stats.rejected == 2 and all("is for skate" in r for r in server.stats.last_reasons)
    assert "/tone/on" in actions and "/emitter" in actions
    assert not any(a.startswith(("/skate", "/sylpheed", "/starlancer", "/radiata")) for a in actions)


def test_game_addresses_build_the_game_modules_events(rig):
    port, server, c = rig
    port.engine.add_system(NamedStub("skate.speech"))
    port.engine.add_system(NamedStub("sylpheed.chatter"))
    c.send("/skate/spawn", 1, 41, 1.0, 0.0, 6.0)
    c.send("/barkbus/skate/value", 1, 14)
    c.send("/skate/move", 1, -2.0, 0.0, 3.0)
    c.send("/skate/speed", 4.5)
    c.send("/skate/zombie", 1)
    c.send("/sylpheed/bark", "ADAN", "LOCKON_1")
    c.send("/sylpheed/phase", 2)
    c.send("/event", "skate.value", json.dumps({"ped": 1, "value": 53}))
    c.send("/listener", 0.0, 1.7, 0.0, 30.0)
    c.send("/emitter", "radio", 2.0, 1.0, 6.0)
    c.settle(10)
    events = [it.event for it in port.inbox.drain()]
    assert events == [
        skate_events.PedSpawn(ped=1, voice=41, position=(1.0, 0.0, 6.0)),
        skate_events.SpeechValue(ped=1, value=14),
        skate_events.PedMove(ped=1, position=(-2.0, 0.0, 3.0)),
        skate_events.PlayerSpeed(speed=4.5),
        skate_events.ZombieMode(on=True),
        syl_events.Bark(speaker="ADAN", event="LOCKON_1"),
        syl_events.PhaseChange(phase=2),
        skate_events.SpeechValue(ped=1, value=53),
        *[type(e)(**{f: getattr(e, f) for f in ("position", "yaw_deg")}) for e in events[8:9]],
        events[9],
    ]
    assert events[8].KIND == "world.listener" and events[8].yaw_deg == 30.0
    assert events[9].KIND == "world.emitter" and events[9].emitter == "radio"
    assert server.stats.rejected == 0 and "/skate/value" in c.ask("/query/actions")[1]


@pytest.mark.parametrize(
    "address,args,reason",
    [
        ("/nowhere", [1], "unknown OSC address"),
        ("/tone/on", [], "expected 1..6 arguments"),
        ("/tone/on", ["ann", "x", "loud"], "freq_hz"),
        ("/tone/on", ["ann", "x", math.nan], "finite"),
        ("/skate/value", [1.5, 14], "expected `int`"),
        ("/skate/zombie", [7], "bool"),
        ("/event", ["skate.value", "{not json"], "bad JSON"),
        ("/event", ["skate.value", "[1, 2]"], "must be an object"),
        ("/event", ["skate.value", json.dumps({"ped": 1, "value": 2, "evil": 3})], "unknown field"),
        ("/event", ["no.such", "{}"], "unknown event kind"),
        ("/event", ["skate.value", "{}"], "skate.value"),
        ("/time", [-1.0], "0 <= t"),
        ("/time", [500.0], "at most 60 s ahead"),
        ("/query/speaking", [], "expected speaker"),
    ],
)
def test_bad_messages_are_rejected_with_a_reason_and_the_engine_keeps_running(rig, address, args, reason):
    port, server, c = rig
    c.send(address, *args)
    c.settle(1)
    assert server.stats.rejected == 1 and reason in server.stats.last_reasons[-1]
    assert port.inbox.drain() == []
    c.send("/tone/on", "ann")
    assert c.ask("/time", 0.1)[1][1] == 4800
    assert port.is_speaking("ann")


def test_undecodable_datagrams_are_counted_not_fatal(rig):
    _port, server, c = rig
    for junk in (b"", b"\x00\x01garbage", b"/tone/on\x00\x00\x00\x00,zzz\x00", b"#bundle\x00" + b"\xff" * 9):
        c.raw(junk)
    c.settle(4)
    assert server.stats.rejected == 4
    assert c.ask("/time")[0] == "/time"


def test_time_cannot_be_driven_over_osc_unless_allowed():
    port = open_system(game="tone")
    with OscServer(port, udp_port=0) as server:
        c = Client(server)
        c.send("/time", 1.0)
        c.settle(1)
        assert "driven by the audio device or the host" in server.stats.last_reasons[-1]
        assert port.now_samples == 0


def test_a_flood_is_bounded_by_the_inbox_and_counted():
    port = open_system(game="tone", inbox_size=64)
    with OscServer(port, udp_port=0) as server:
        c = Client(server)
        for i in range(2000):
            c.send("/tone/on", f"s{i % 7}")
        end, last, still = time.monotonic() + 10, -1, 0
        while time.monotonic() < end and still < 30:  # until nothing has arrived for 0.3 s
            n = server.stats.received
            still = still + 1 if n == last and server.stats.accepted + server.stats.dropped == n else 0
            last = n
            time.sleep(0.01)
        s = server.stats
        assert s.accepted == 64 and s.dropped == s.received - 64 and s.dropped > 0
        port.advance(0.1)  # exactly the 64 queued events reach the engine
        assert sum(d.outcome == "Started" for d in port.bus.decisions) == 64
        assert port.is_speaking("s0")


_ADDRS = [
    "/tone/on",
    "/tone/stop",
    "/listener",
    "/emitter",
    "/skate/value",
    "/skate/spawn",
    "/sylpheed/bark",
    "/event",
    "/time",
    "/query/speaking",
    "/nowhere",
]
_OSC_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")  # what OSC can encode
_ARG = st.one_of(
    st.integers(-(2**31), 2**31 - 1),
    st.floats(width=32),
    st.text(_OSC_CHARS, max_size=12),
    st.sampled_from(["tone.on", "world.emitter", '{"speaker": "a"}', '{"position": [1, 2]}']),
)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_ADDRS), st.lists(_ARG, max_size=6)), max_size=6))
def test_any_message_is_either_rejected_or_yields_events_the_engine_renders(messages):
    port = open_system(game="tone")
    server = OscServer(port, udp_port=0)
    try:
        for address, args in messages:
            server.handle_datagram(build_message(address, *args), None)
        s = server.stats
        assert s.received == len(messages) and s.accepted + s.rejected + s.dropped + s.queries == len(
            messages
        )
        out = port.advance(0.05)
        assert np.isfinite(out).all()
    finally:
        server.stop()


@settings(max_examples=examples(200))
@given(st.binary(max_size=64))
def test_random_datagrams_never_raise(data):
    port = open_system(game="tone")
    server = OscServer(port, udp_port=0)
    try:
        server.handle_datagram(data, None)
        server.handle_datagram(b"/tone/on\x00\x00\x00\x00,s\x00\x00" + data[:8] + struct.pack(">I", 0), None)
        assert server.stats.received == 2
    finally:
        server.stop()
