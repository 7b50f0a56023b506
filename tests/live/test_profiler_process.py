"""A live run's profiler page served by its own process (audio.live.profiler.feed / .worker):
what the page receives is what the engine did, actions from the page reach the engine, and the
audio process' side of the feed never waits for the server process."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

import numpy as np
import pytest

from audio.live.profiler.attach import start_profiler
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


def _snapshot_calls(n_voices: int) -> tuple[int, int]:
    """Python calls (functions and builtins) in two snapshots of a run with ``n_voices``
    playing, publisher and feed together, and the voices the last one counted."""
    import collections
    import sys

    port = open_system("tone")
    prof = start_profiler(port)
    try:
        for i in range(n_voices):
            port.emit("tone.on", speaker=f"s{i}", line=f"l{i}", seconds=30.0)
        port.advance(1.0)  # every start taken in, every description sent
        calls: collections.Counter[str] = collections.Counter()

        def count(frame: Any, event: str, arg: Any) -> None:
            if event in ("call", "c_call"):
                calls[event] += 1

        sys.setprofile(count)
        try:
            prof.publisher.publish()
            snap = prof.publisher.publish()
        finally:
            sys.setprofile(None)
        assert prof.stats["fed_dropped"] == 0
        return calls.total(), snap.voices_total
    finally:
        prof.stop()


def test_a_snapshot_runs_no_python_per_voice_on_the_render_thread() -> None:
    # about the same Python calls for 2 and 48 voices: the voices are copied by numpy, not looped
    # over. A loop would add at least one call per voice (46 here; the old code: 190 -> 950); a
    # few calls may differ between runs (the socket send's outcome, a decision in flight).
    few, n_few = _snapshot_calls(2)
    many, n_many = _snapshot_calls(48)
    assert (n_few, n_many) == (2, 48)
    assert abs(many - few) < (n_many - n_few) // 4, (few, many)


def test_the_ring_hands_over_a_snapshot_or_nothing_never_a_mix() -> None:
    from audio.live.profiler.records import RECORD
    from audio.live.profiler.ring import SLOTS, SnapshotRing

    writer = SnapshotRing(8)
    reader = SnapshotRing(8, fd=writer.fd)  # the server process' side maps the same file
    recs = np.zeros(5, dtype=RECORD)
    recs["id"] = np.arange(1, 6)
    assert writer.write(0, recs) == 5
    got = reader.read(0)
    assert got is not None and got["id"].tolist() == [1, 2, 3, 4, 5]
    recs["id"] += 100
    writer.write(SLOTS, recs[:2])  # the same slot, SLOTS snapshots later
    assert reader.read(0) is None  # overwritten: dropped, not read as snapshot 0
    got = reader.read(SLOTS)
    assert got is not None and got["id"].tolist() == [101, 102]
    assert writer.write(1, np.zeros(20, dtype=RECORD)) == 8  # a slot holds max_voices records
    writer.close()


def test_the_server_process_runs_at_a_lower_priority_than_the_audio() -> None:
    import os
    from pathlib import Path

    from audio.live.profiler.feed import PAGE_NICE

    port = open_system("tone")
    prof = start_profiler(port)
    try:
        assert prof.proc is not None
        # /proc/PID/stat field 19 is the nice value (after the parenthesised command name)
        stat = Path(f"/proc/{prof.proc.pid}/stat").read_text()
        nice = int(stat.rpartition(")")[2].split()[16])
        assert nice == min(19, os.nice(0) + PAGE_NICE)
    finally:
        prof.stop()


def test_a_stopped_profiler_leaves_no_hook_on_the_voice_manager() -> None:
    port = open_system("tone")
    before = list(port.engine.voices.start_hooks)
    prof = start_profiler(port)
    assert len(port.engine.voices.start_hooks) == len(before) + 1
    prof.stop()
    assert port.engine.voices.start_hooks == before
