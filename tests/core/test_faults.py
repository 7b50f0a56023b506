"""One fault path: faults are decisions, counted; a failing system is disabled live, fatal offline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from audio.core.bus import Event
from audio.core.engine import Engine
from audio.core.errors import FormatError, UnsupportedError
from audio.core.faults import FAULT, Fault, SystemFault, describe, report_fault
from audio.core.outcomes import CoreOutcome
from audio.core.paths import PathRefused
from audio.core.plugin import GameSystem


@dataclass(frozen=True, kw_only=True)
class Poke(Event, kind="test.faults.poke"):
    n: int = 0


class Ticker(GameSystem):
    """A system that counts its ticks and the pokes it gets; raises when told to."""

    frame_rate = 30
    outcomes = CoreOutcome
    graphs = ()

    def __init__(self, name: str, fail_at_frame: int | None = None, fail_on_poke: bool = False) -> None:
        self.name, self.fail_at_frame, self.fail_on_poke = name, fail_at_frame, fail_on_poke
        self.ticks = 0
        self.pokes: list[int] = []

    def attach(self, engine: Engine) -> None:
        engine.bus.subscribe(self, [Poke])

    def tick(self, frame: int, engine: Engine) -> None:
        if self.fail_at_frame is not None and frame >= self.fail_at_frame:
            raise ZeroDivisionError("the system's own bug")
        self.ticks += 1

    def handle(self, ev: Event, bus) -> None:
        if self.fail_on_poke and ev.n == 13:
            raise KeyError("no such thing")
        self.pokes.append(ev.n)


def _engine(isolate: bool, *systems: Ticker) -> Engine:
    eng = Engine(isolate_systems=isolate)
    for s in systems:
        eng.add_system(s)
    return eng


def test_a_fault_is_one_decision_with_file_offset_and_reason_and_is_counted():
    eng = Engine()
    seen: list[Fault] = []
    eng.faults.on_fault(seen.append)
    report_fault(eng.bus, "skate.speech", "decode", "bad block", file="x.big", offset=48, clip="c", take=1)
    (d,) = eng.bus.decisions
    assert (d.system, d.outcome) == ("skate.speech", FAULT)
    assert d.detail == {
        "kind": "decode",
        "file": "x.big",
        "offset": 48,
        "reason": "bad block",
        "clip": "c",
        "take": 1,
    }
    assert eng.faults.count == 1 and eng.faults.by_kind == {"decode": 1}
    assert eng.faults.by_system == {"skate.speech": 1}
    assert seen == [Fault(0, 0.0, "skate.speech", "decode", "x.big", 48, "bad block")]
    assert eng.faults.summary() == "1 fault (decode 1)"


def test_fault_kinds_are_checked():
    with pytest.raises(ValueError, match="fault kind"):
        report_fault(Engine().bus, "x", "oops", "r")


@pytest.mark.parametrize(
    "exc,kind,offset",
    [
        (FormatError("a.big", 12, "an SNS block flag"), "decode", 12),
        (UnsupportedError("a.snr", 0, "codec 4", 9), "unsupported", 0),
        (FileNotFoundError(2, "No such file", "/x.wav"), "missing", None),
        (PermissionError(13, "denied", "/x.wav"), "io", None),
        (PathRefused("/etc/passwd", "outside"), "refused", None),
        (KeyError("no emitter"), "event", None),
    ],
)
def test_describe_names_the_kind_of_an_exception(exc, kind, offset):
    got_kind, _file, got_offset, reason = describe(exc)
    assert (got_kind, got_offset) == (kind, offset) and reason


def test_a_fault_callback_that_raises_is_counted_not_propagated():
    eng = Engine()
    eng.faults.on_fault(lambda f: 1 / 0)
    report_fault(eng.bus, "x", "decode", "r")
    assert eng.faults.count == 1 and eng.faults.callback_errors == 1


def test_isolated_a_system_whose_tick_raises_is_disabled_once_and_the_rest_goes_on():
    bad, good = Ticker("bad", fail_at_frame=3), Ticker("good")
    eng = _engine(True, bad, good)
    eng.voices.start("play_voice", np.full(48000, 0.25, np.float32), 48000)
    out = eng.render(48000)  # one second: 30 frames
    assert bad.ticks == 3 and good.ticks == 30
    faults = [d for d in eng.bus.decisions if d.outcome == FAULT]
    assert len(faults) == 1 and faults[0].system == "bad" and faults[0].detail["kind"] == "system"
    assert "ZeroDivisionError" in faults[0].detail["reason"] and faults[0].at == 3 * 1600
    assert set(eng.disabled) == {"bad"}
    assert np.abs(out[24000:]).max() > 0.05  # the voice kept playing after the system died
    eng.bus.post(Poke(t=1.5, n=1))
    eng.render(48000)
    assert bad.pokes == [] and good.pokes == [1] and eng.faults.count == 1


def test_offline_a_system_whose_tick_raises_fails_the_render_with_a_clear_error():
    eng = _engine(False, Ticker("bad", fail_at_frame=2), Ticker("good"))
    with pytest.raises(SystemFault, match=r"'bad' failed in tick of frame 2 at 0\.067 s: ZeroDivisionError"):
        eng.render(48000)


def test_isolated_an_event_a_system_cannot_apply_is_a_fault_and_the_system_keeps_running():
    flaky, other = Ticker("flaky", fail_on_poke=True), Ticker("other")
    eng = _engine(True, flaky, other)
    for i, n in enumerate((1, 13, 2)):
        eng.bus.post(Poke(t=0.01 * (i + 1), n=n))
    eng.render(4800)
    assert flaky.pokes == [1, 2] and other.pokes == [1, 13, 2]  # the bad event still reached the others
    (f,) = [d for d in eng.bus.decisions if d.outcome == FAULT]
    assert f.system == "flaky" and f.detail["kind"] == "event" and "test.faults.poke" in f.detail["reason"]
    assert eng.disabled == {} and flaky.ticks == other.ticks == 3


def test_offline_an_event_a_system_cannot_apply_fails_the_render():
    eng = _engine(False, Ticker("flaky", fail_on_poke=True))
    eng.bus.post(Poke(t=0.0, n=13))
    with pytest.raises(SystemFault, match="'flaky' failed in handling test.faults.poke"):
        eng.render(256)


def test_a_fault_reported_from_another_thread_is_published_at_the_next_control_point():
    eng = Engine()
    eng.render(1000)
    eng.faults.report_later("port", "refused", "file refused: '/etc/passwd'", file="/etc/passwd")
    assert eng.faults.count == 0 and eng.faults.pending
    eng.render(10)
    (d,) = eng.bus.decisions
    assert d.at == 1000 and d.detail["kind"] == "refused" and eng.faults.count == 1 and not eng.faults.pending
