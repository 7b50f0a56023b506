"""The OSC server survives any datagram: crafted bundles, handler bugs, range checks, fuzzing."""

from __future__ import annotations

import json
import socket
import struct
import time

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pythonosc.osc_message import OscMessage

from audio.port import OscServer, open_system
from audio.port.events import PortError
from audio.port.osc import MAX_BUNDLE_DEPTH, build_message, check_bundle


def bundle(*elements: bytes) -> bytes:
    """An OSC bundle (time tag "immediately") holding ``elements``."""
    out = b"#bundle\x00" + b"\x00" * 7 + b"\x01"
    for e in elements:
        out += struct.pack(">i", len(e)) + e
    return out


def nested(depth: int, inner: bytes) -> bytes:
    for _ in range(depth):
        inner = bundle(inner)
    return inner


@pytest.fixture
def server():
    port = open_system(game="tone", seed=1)
    srv = OscServer(port, udp_port=0, drive_clock=True).start()
    yield srv
    srv.stop()


def _ask(srv: OscServer, address: str, *args) -> list:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(10.0)
    s.sendto(build_message(address, *args), srv.address)
    return list(OscMessage(s.recvfrom(65536)[0]).params)


def test_a_bundle_nested_thousands_deep_is_rejected_and_receiving_continues(server):
    deep = nested(3000, build_message("/tone/on", "ann"))
    assert len(deep) < 65_000
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(deep, server.address)
    stats = _ask(server, "/query/stats")
    assert stats[:5] == [2, 0, 1, 0, 0]  # received, accepted, rejected, dropped, errors
    assert f"nested deeper than {MAX_BUNDLE_DEPTH}" in server.stats.last_reasons[-1]
    s.sendto(build_message("/tone/on", "ann"), server.address)
    assert _ask(server, "/time", 0.1)[1] == 4800 and server.port.is_speaking("ann")


def test_bundles_within_the_limits_deliver_every_message():
    port = open_system(game="tone")
    srv = OscServer(port, udp_port=0)
    msgs = [build_message("/tone/on", f"s{i}") for i in range(4)]
    srv.handle_datagram(nested(MAX_BUNDLE_DEPTH - 1, bundle(*msgs)))
    assert srv.stats.accepted == 4 and srv.stats.rejected == 0
    srv.handle_datagram(nested(MAX_BUNDLE_DEPTH, bundle(*msgs)))
    assert srv.stats.rejected == 1
    srv.stop()


@pytest.mark.parametrize(
    "data,reason",
    [
        (b"#bundle\x00" + b"\x00" * 4, "shorter than its 16-byte header"),
        (bundle(b""), "bad size 0"),
        (b"#bundle\x00" + b"\x00" * 8 + struct.pack(">i", 1 << 20) + b"/x\x00\x00", "bad size"),
        (b"#bundle\x00" + b"\x00" * 8 + struct.pack(">i", -4) + b"/x\x00\x00", "bad size -4"),
        (b"#bundle\x00" + b"\x00" * 8 + b"\x00\x00", "size cut"),
        (bundle(*[build_message("/a")] * 1100), "more than 1024 elements"),
    ],
)
def test_bundles_with_lying_structure_are_rejected_with_a_reason(data, reason):
    with pytest.raises(PortError, match=reason):
        check_bundle(data)


def test_a_bug_in_a_handler_is_counted_as_an_error_and_the_server_goes_on(server, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr(server.port, "post", broken)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(3):
        s.sendto(build_message("/tone/on", "ann"), server.address)
    stats = _ask(server, "/query/stats")
    assert stats[4] == 3 and server.stats.errors == 3 and stats[1] == 0
    monkeypatch.undo()
    s.sendto(build_message("/tone/on", "bob"), server.address)
    assert _ask(server, "/time", 0.1)[0] == pytest.approx(0.1) and server.port.is_speaking("bob")


@pytest.mark.parametrize(
    "address,args,reason",
    [
        ("/skate/value", [1, 999], "<= 255"),
        ("/skate/value", [1, -1], ">= 0"),
        ("/sylpheed/phase", [99], "<= 3"),
        ("/sylpheed/phase", [0], ">= 1"),
        ("/skate/speed", [1e6], "<= 1000"),
        ("/event", ["sylpheed.phase", json.dumps({"phase": 4})], "<= 3"),
        ("/event", ["skate.value", "[" * 3000], "bad JSON"),
        ("/event", ["play", json.dumps({"emitter": "x", "file": "/etc/passwd"})], "file refused"),
        ("/event", ["play", json.dumps({"emitter": "x", "file": "../../../../etc/passwd"})], "file refused"),
    ],
)
def test_out_of_range_and_refused_messages_are_rejected_with_a_reason(address, args, reason):
    import re

    port = open_system(game="tone")
    srv = OscServer(port, udp_port=0)
    srv.handle_datagram(build_message(address, *args))
    assert srv.stats.rejected == 1 and srv.stats.errors == 0 and re.search(reason, srv.stats.last_reasons[-1])
    assert port.inbox.drain() == []
    srv.stop()


def test_refused_files_are_counted_and_reported_as_faults():
    port = open_system(game="tone")
    srv = OscServer(port, udp_port=0)
    srv.handle_datagram(build_message("/event", "play", json.dumps({"emitter": "x", "file": "/etc/shadow"})))
    port.advance(0.01)
    assert srv.stats.refused == 1 and port.faults.by_kind["refused"] == 1
    srv.handle_datagram(build_message("/query/stats"), None)
    srv.stop()


# -- fuzzing raw datagrams --------------------------------------------------------------
_ADDRESSES = [
    "/tone/on",
    "/tone/stop",
    "/listener",
    "/emitter",
    "/skate/spawn",
    "/skate/value",
    "/skate/move",
    "/sylpheed/bark",
    "/sylpheed/phase",
    "/event",
    "/time",
    "/query/stats",
    "/query/speaking",
    "/x",
]


def _pad(b: bytes) -> bytes:
    return b + b"\x00" * (4 - len(b) % 4)


@st.composite
def raw_message(draw) -> bytes:
    """A message with a real address and a random type-tag string over random payload bytes."""
    addr = draw(st.sampled_from(_ADDRESSES)).encode()
    tags = draw(st.text(alphabet="ifsbhdtTFNIcrm[]", max_size=8))
    payload = draw(st.binary(max_size=48))
    return _pad(addr) + _pad(("," + tags).encode()) + payload


@st.composite
def datagram(draw) -> bytes:
    kind = draw(st.sampled_from(["raw", "message", "bundle", "mutated"]))
    if kind == "raw":
        return draw(raw_message())
    if kind == "message":
        text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
        number = st.one_of(st.integers(-(2**31), 2**31 - 1), st.floats(width=32))
        args = draw(st.lists(st.one_of(number, text), max_size=6))
        return build_message(draw(st.sampled_from(_ADDRESSES)), *args)
    if kind == "bundle":
        inner = draw(st.lists(raw_message(), min_size=1, max_size=4))
        return nested(draw(st.integers(0, 12)), bundle(*inner))
    data = bytearray(build_message("/skate/spawn", 1, "busm1", 0.0, 0.0, 4.0))
    for i, b in draw(st.lists(st.tuples(st.integers(0, len(data) - 1), st.integers(0, 255)), max_size=6)):
        data[i] = b
    return bytes(data)


@settings(max_examples=examples(300))
@given(st.lists(datagram(), min_size=1, max_size=5))
def test_any_datagram_is_accepted_rejected_or_answered_never_an_error(datagrams):
    port = open_system(game="tone")
    srv = OscServer(port, udp_port=0)
    try:
        for d in datagrams:
            srv.handle_datagram(d, None)
        s = srv.stats
        assert s.received == len(datagrams) and s.errors == 0, list(s.last_reasons)
        assert np.isfinite(port.advance(0.02)).all()
    finally:
        srv.stop()


def test_the_server_thread_stays_alive_after_a_burst_of_junk(server):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = np.random.default_rng(5)
    for i in range(500):
        s.sendto(rng.bytes(int(rng.integers(0, 200))), server.address)
        if i % 20 == 0:
            time.sleep(0.005)  # a localhost socket buffer drops a burst; this test is not about that
    s.sendto(nested(2000, b"/x\x00\x00,\x00\x00\x00"), server.address)
    end = time.monotonic() + 10
    while server.stats.received < 501 and time.monotonic() < end:
        time.sleep(0.01)
    assert server.stats.received == 501 and server.stats.errors == 0 and server._thread.is_alive()
    assert _ask(server, "/query/stats")[0] == 502


def test_the_stats_account_for_every_datagram_and_message(server):
    datagrams = [
        build_message("/tone/on", "ann"),  # accepted
        bundle(build_message("/tone/on", "bob"), build_message("/query/actions")),  # accepted, query
        b"not osc at all",  # undecodable
        build_message("/skate/value", 1, 3),  # another game's: rejected
        build_message("/nosuch"),  # rejected
    ]
    for d in datagrams:
        server.handle_datagram(d, None)
    s = server.stats
    assert (s.received, s.undecodable, s.messages) == (5, 1, 5)
    assert (s.accepted, s.queries, s.rejected - s.undecodable) == (2, 1, 2)
    assert s.accepted + s.queries + (s.rejected - s.undecodable) + s.dropped + s.errors == s.messages
