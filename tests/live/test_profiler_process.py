"""A live run's profiler page served by its own process (audio.live.profiler.feed / .worker):
what the page receives is what the engine did, actions from the page reach the engine, and the
audio process' side of the feed never waits for the server process."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

import pytest

from audio.live.profiler import start_profiler
from audio.port.api import open_system


async def _talk(url: str, port: Any, until: Any, request: dict[str, Any] | None = None) -> list[dict]:
    """Connect to the page's socket, send ``request`` once, render 50 ms of the run per read
    until ``until(messages)`` or 20 s of wall time."""
    from tornado.websocket import websocket_connect

    ws = url.replace("http://", "ws://").split("?")[0].rstrip("/") + "/ws"
    conn = await websocket_connect(ws)
    msgs: list[dict] = []
    t_end = time.monotonic() + 20.0
    sent = False
    while time.monotonic() < t_end and not until(msgs):
        port.advance(0.05)
        if request is not None and not sent and msgs:
            await conn.write_message(json.dumps(request))
            sent = True
        try:
            text = await asyncio.wait_for(conn.read_message(), 0.1)
        except TimeoutError:
            continue
        if text is None:
            break
        msgs.append(json.loads(text))
    conn.close()
    return msgs


def test_the_server_process_shows_the_runs_voices_decisions_and_takes_its_actions() -> None:
    port = open_system("tone")
    prof = start_profiler(port)
    try:
        assert prof.proc is not None and prof.proc.pid > 0
        port.emit("tone.on", speaker="ann", line="hello", seconds=5.0)

        def seen(msgs: list[dict]) -> bool:
            voices = [v for m in msgs if m.get("snap") for v in m["snap"]["voices"]]
            decided = [d for m in msgs for d in m.get("decisions", ())]
            replied = [m for m in msgs if m["type"] == "result"]
            return (
                any(v["speaker"] == "ann" for v in voices)
                and any(d["speaker"] == "bob" for d in decided)
                and bool(replied)
            )

        request = {"type": "action", "name": "tone/on", "values": {"speaker": "bob", "line": "b1"}}
        msgs = asyncio.run(_talk(prof.url, port, seen, request))
        assert msgs[0]["type"] == "hello" and "tone/on" in [a["name"] for a in msgs[0]["actions"]]
        assert seen(msgs), msgs[-3:]
        (reply,) = [m for m in msgs if m["type"] == "result"]
        assert reply["ok"], reply
        ann = next(v for m in msgs if m.get("snap") for v in m["snap"]["voices"] if v["speaker"] == "ann")
        assert ann["len_s"] == pytest.approx(5.0, abs=0.01) and ann["peak_db"] is not None
        # the master meter and the engine's clock arrive as the publisher measured them
        snaps = [m["snap"] for m in msgs if m.get("snap")]
        assert snaps[-1]["buses"][0]["name"] == "master"
        assert [s["t"] for s in snaps] == sorted(s["t"] for s in snaps)
    finally:
        prof.stop()
    assert prof.proc is None  # the server process ended with the feed
    assert prof.stats["clients"] == 1 and prof.stats["actions"] == 1  # its last counts came back
    assert prof.stats["sent"] >= len(msgs)


def test_a_server_process_that_does_not_read_only_costs_dropped_snapshots() -> None:
    port = open_system("tone")
    prof = start_profiler(port)
    try:
        assert prof.proc is not None
        prof.proc.send_signal(signal.SIGSTOP)  # SIGSTOP: the server process reads nothing
        port.emit("tone.on", speaker="cy", line="c", seconds=1.0)
        port.advance(60.0)  # ~940 snapshots against a socket that holds a few hundred small ones
        fed, dropped = prof.stats["fed"], prof.stats["fed_dropped"]
        assert fed + dropped == 60 * 48_000 // 256 // prof.publisher.every and dropped > 0
        # decisions not delivered wait in the publisher's bounded queue, not lost
        port.emit("tone.on", speaker="dee", line="d", seconds=1.0)
        port.advance(0.2)
        assert any(d.detail.get("speaker") == "dee" for d in prof.publisher.decisions)
        prof.proc.send_signal(signal.SIGCONT)  # SIGCONT: the feed flows again
        t_end = time.monotonic() + 20.0
        while prof.stats["fed"] <= fed + 10 and time.monotonic() < t_end:
            time.sleep(0.1)
            port.advance(0.2)
        assert prof.stats["fed"] > fed + 10
        assert not any(d.detail.get("speaker") == "dee" for d in prof.publisher.decisions)
    finally:
        prof.stop()
