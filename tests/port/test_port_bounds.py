"""Every queue a client can fill is bounded; the excess is refused and counted (issue 20)."""

from __future__ import annotations

from typing import Any

import pytest

from audio.core.world import EmitterMove
from audio.games.radiata.events import Talk, TalkEnd
from audio.port.api import open_system


def test_radiata_keeps_sixteen_waiting_talks_and_drops_the_rest() -> None:
    port = open_system(game="radiata")
    ends: list[Any] = []
    port.bus.subscribe(type("Ends", (), {"handle": lambda self, ev, bus: ends.append(ev)})(), [TalkEnd])
    for _ in range(100):
        port.post(Talk(file="town.rmf"), when="now")
    port.advance(0.05)
    system = port.engine.system("radiata.talk")
    outcomes = [d.outcome for d in port.bus.decisions]
    # 16 wait (the first, then 15 queued behind it) until the first opens at the next frame
    assert outcomes.count("TalkQueued") == 15 and outcomes.count("Dropped") == 84
    assert len(system.seq.queue) == 15 and system.seq.dropped == 84
    assert sum(e.reason == "Dropped" for e in ends) == 84 and port.engine.disabled == {}


def test_the_world_holds_a_bounded_number_of_emitters() -> None:
    port = open_system(game="tone")
    port.engine.world.max_emitters = 8
    for i in range(20):
        port.post(EmitterMove(emitter=f"e{i}"), when="now")
    port.post(EmitterMove(emitter="e3", position=(1.0, 0.0, 0.0)), when="now")  # a known one moves
    port.advance(0.01)
    assert sorted(port.engine.world.emitters) == sorted(f"e{i}" for i in range(8))
    assert port.engine.world.position("e3") == (1.0, 0.0, 0.0)
    assert [d.outcome for d in port.bus.decisions].count("Dropped") == 12


def test_a_port_keeps_the_last_decisions_only_but_listeners_see_all(monkeypatch: pytest.MonkeyPatch) -> None:
    import audio.port.api

    assert audio.port.api.DECISIONS_KEPT >= 1000  # the real bound; the test runs a smaller one
    monkeypatch.setattr(audio.port.api, "DECISIONS_KEPT", 600)
    port = open_system(game="tone")
    seen: list[Any] = []
    port.on_decision(seen.append)
    keep = port.bus.decisions.maxlen
    assert keep == 600
    for i in range(keep + 50):
        port.emit("tone.on", speaker=f"s{i % 4}", seconds=0.01, when="now")
        if i % 500 == 0:
            port.advance(0.01)
    port.advance(0.05)
    assert len(port.bus.decisions) == keep and len(seen) > keep


def test_a_nul_talk_name_reaching_the_system_is_one_fault_and_the_system_lives() -> None:
    port = open_system(game="radiata")
    port.bus.post(Talk(file="town.rmf\x00"))  # past the port's own checks (a capture, a script)
    port.bus.post(Talk(file="town.rmf", t=0.1))
    port.advance(0.3)
    outcomes = [d.outcome for d in port.bus.decisions]
    assert outcomes.count("Fault") == 1 and "TalkStarted" in outcomes and port.engine.disabled == {}
