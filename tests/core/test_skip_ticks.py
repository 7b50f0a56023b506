"""Skipped ticks: a game system that names the frames it needs (``GameSystem.next_tick``) is
ticked only there, the engine splits the audio only where something can change, and the
decisions and audio are those of ticking every frame (``skip_ticks=False``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from audio.core.bus import Event
from audio.core.engine import Engine
from audio.core.outcomes import CoreOutcome
from audio.core.plugin import NEVER, GameSystem
from audio.offline.batch.runner import simulate
from audio.offline.scenario import demo_scenario

SR = 48_000
DEMOS = ("skate", "sylpheed", "starlancer", "radiata")


@dataclass(frozen=True, kw_only=True)
class Say(Event, kind="test.skip_ticks.say"):
    samples: int = 1000


class Waiter(GameSystem):
    """Starts a voice on each :class:`Say`; its tick logs the frame it first sees the voice
    done and counts down a 7-frame timer after it. It needs a tick only while the timer runs
    (``skips=True``), or every frame (``skips=False``, the default contract)."""

    name, frame_rate = "waiter", 60
    outcomes = CoreOutcome
    graphs = ("play_voice",)

    def __init__(self, skips: bool) -> None:
        self.skips = skips
        self.voice = None
        self.timer = 0
        self.last: int | None = None
        self.log: list[tuple[str, int]] = []
        self.ticked = 0

    def attach(self, engine: Engine) -> None:
        self.engine = engine
        engine.bus.subscribe(self, [Say])

    def handle(self, ev: Event, bus) -> None:
        assert isinstance(ev, Say)
        frame = self.engine.frame_of(self) if self.skips else self.last
        self.log.append(("say", -1 if frame is None else frame))
        src = np.full(ev.samples, 0.1, np.float32)
        self.voice = self.engine.voices.start("play_voice", src, SR, slot=24)

    def tick(self, frame: int, engine: Engine) -> None:
        elapsed = 1 if self.last is None else frame - self.last
        self.last, self.ticked = frame, self.ticked + 1
        if self.timer > 0:
            self.timer -= elapsed
            if self.timer <= 0:
                self.log.append(("timer", frame))
        if self.voice is not None and self.voice.done:
            self.log.append(("done", frame))
            self.voice, self.timer = None, 7

    def next_tick(self, frame: int) -> int:
        if not self.skips or self.last is None:
            return frame
        if self.voice is not None and self.voice.done:
            return frame
        return self.last + self.timer if self.timer > 0 else NEVER


def _waiter_run(skips: bool, block: int, dsp: bool) -> tuple[list, np.ndarray, Engine, Waiter]:
    e = Engine(block=block, dsp=dsp, skip_ticks=skips)
    w = Waiter(skips)
    e.add_system(w)
    e.prepare()
    # one ends inside a frame, one ends on a frame start, one arrives on a frame start
    for t, n in ((0.0101, 3000), (0.2, 1600 - 256), (0.5, 777)):
        e.bus.post(Say(t=t, samples=n))
    out = np.concatenate([e.render(min(block, SR - t)) for t in range(0, SR, block)])
    return w.log, out, e, w


@pytest.mark.parametrize("dsp", [False, True])
def test_a_system_ticked_only_where_it_asks_sees_events_voice_ends_and_timers_at_the_same_frames(dsp):
    ref_log, ref_out, ref_eng, ref_w = _waiter_run(False, 256, dsp)
    assert [k for k, _ in ref_log].count("done") == 3 and [k for k, _ in ref_log].count("timer") == 3
    for block in (64, 1000):
        log, out, eng, w = _waiter_run(True, block, dsp)
        assert log == ref_log
        assert out.tobytes() == ref_out.tobytes()
        assert w.ticked < ref_w.ticked // 4  # 60 frames at most: 3 x (1 done + 1 timer) + the first
    assert ref_w.ticked == 60


def _runs(name: str, skip: str, monkeypatch) -> list[tuple[str, bytes | None]]:
    monkeypatch.setenv("BARKBUS_SKIP_TICKS", skip)
    path = str(demo_scenario(name))
    got = []
    for seed, dry in ((0, True), (1, True), (2, False)):
        out = simulate(path, seed, decisions_only=dry)
        text = "".join(json.dumps(d.to_json(), separators=(",", ":")) + "\n" for d in out.decisions)
        got.append((text, None if out.audio is None else out.audio.tobytes()))
    return got


@pytest.mark.parametrize("name", DEMOS)
def test_every_demo_decides_and_sounds_the_same_with_ticks_skipped(name, monkeypatch):
    assert _runs(name, "1", monkeypatch) == _runs(name, "0", monkeypatch)


def test_skipping_runs_far_fewer_control_points_and_ticks_on_the_sylpheed_demo(monkeypatch):
    counts = {}
    for skip in ("0", "1"):
        monkeypatch.setenv("BARKBUS_SKIP_TICKS", skip)
        eng = simulate(str(demo_scenario("sylpheed")), 1, decisions_only=True).engine
        counts[skip] = (eng.control_points, eng.ticks)
    # 40 s: 2,400 frames at 60 Hz (and the play system's 1,200 at 30 Hz) when ticking every frame
    assert counts["0"] == (2400, 3600)
    assert counts["1"][0] < 2400 // 10 and counts["1"][1] < 3600 // 10


@dataclass(frozen=True, kw_only=True)
class Retune(Event, kind="test.skip_ticks.retune"):
    pitch: float = 8192.0


class Retuner(Waiter):
    """A :class:`Waiter` whose playing voice a :class:`Retune` event speeds up or slows down
    (its end moves: the engine must predict it again)."""

    def attach(self, engine: Engine) -> None:
        super().attach(engine)
        engine.bus.subscribe(self, [Retune])

    def handle(self, ev: Event, bus) -> None:
        if isinstance(ev, Retune):
            if self.voice is not None:
                self.engine.voices.set(self.voice, **{"Rsp0.pitch": ev.pitch})
            return
        super().handle(ev, bus)


def _retuned_run(skips: bool, block: int, pitch: float) -> tuple[list, np.ndarray, Retuner]:
    e = Engine(block=block, skip_ticks=skips)
    w = Retuner(skips)
    e.add_system(w)
    e.prepare()
    e.bus.post(Say(t=0.0, samples=12_000))
    e.bus.post(Retune(t=0.05, pitch=pitch))  # 2,400 samples in: the end moves
    out = np.concatenate([e.render(min(block, SR - t)) for t in range(0, SR, block)])
    return w.log, out, w


@pytest.mark.parametrize("pitch", [8192.0, 2048.0])
def test_a_voice_retuned_while_it_plays_is_seen_done_at_the_frame_ticking_every_frame_sees(pitch):
    ref_log, ref_out, _ = _retuned_run(False, 256, pitch)
    # at 4096 it would end near 12,256 samples (frame 15 at 60 Hz); faster or slower moves it
    done = [f for k, f in ref_log if k == "done"]
    assert done and done[0] != 15
    for block in (64, 1000):
        log, out, w = _retuned_run(True, block, pitch)
        assert log == ref_log
        assert out.tobytes() == ref_out.tobytes()


@dataclass(frozen=True, kw_only=True)
class Nudge(Event, kind="test.skip_ticks.nudge"):
    by: float = 0.25


class Fader(GameSystem):
    """Plays one long voice and writes its gain every frame from a ramp that a :class:`Nudge`
    shifts. ``ahead=0``: it ticks every frame and writes in its tick; else its ``next_tick``
    computes the next ``ahead`` frames' writes and hands them to :meth:`Engine.schedule`."""

    name, frame_rate = "fader", 30
    outcomes = CoreOutcome
    graphs = ("play_voice",)

    def __init__(self, ahead: int) -> None:
        self.ahead = ahead
        self.offset = 0.0
        self.voice = None
        self.computed = 0

    def attach(self, engine: Engine) -> None:
        self.engine = engine
        engine.bus.subscribe(self, [Nudge])

    def handle(self, ev: Event, bus) -> None:
        assert isinstance(ev, Nudge)
        self.offset += ev.by

    def gain(self, frame: int) -> dict[str, float]:
        return {"Gai0.gain": 0.2 + 0.6 * ((frame * 0.07 + self.offset) % 1.0)}

    def tick(self, frame: int, engine: Engine) -> None:
        if self.voice is None:
            self.voice = engine.voices.start("play_voice", np.full(SR, 0.5, np.float32), SR, slot=3)
        engine.voices.set(self.voice, **self.gain(frame))

    def next_tick(self, frame: int) -> int:
        if not self.ahead or self.voice is None:
            return frame
        rows = [
            [(self.engine.voices.set, (self.voice,), self.gain(g))] for g in range(frame, frame + self.ahead)
        ]
        self.computed += len(rows)
        self.engine.schedule(self, frame, rows)
        return frame + self.ahead


def _fader_run(ahead: int, block: int) -> tuple[np.ndarray, Engine, Fader]:
    e = Engine(block=block)
    f = Fader(ahead)
    e.add_system(f)
    e.prepare()
    for t in (0.12, 0.41, 0.5):  # mid-frame while rows wait to run, and on a frame's first sample
        e.bus.post(Nudge(t=t))
    n = SR // 2 + 123
    return np.concatenate([e.render(min(block, n - t)) for t in range(0, n, block)]), e, f


def test_scheduled_writes_sound_as_the_same_writes_made_by_a_tick_every_frame():
    ref, ref_eng, _ = _fader_run(0, 256)
    assert ref_eng.ticks == 16 and ref_eng.rows_applied == 0
    assert np.abs(ref).max() > 0.1
    for ahead in (1, 4, 9):
        for block in (64, 256, 1000):
            out, eng, f = _fader_run(ahead, block)
            assert out.tobytes() == ref.tobytes(), (ahead, block)
            assert eng.ticks + eng.rows_applied == 16
            if ahead > 1:
                assert eng.rows_applied > eng.ticks
                # each nudge drops the rows not run yet: they are computed again
                assert f.computed > eng.rows_applied


class Batcher(Fader):
    """A :class:`Fader` writing ``ahead`` frames at a time that needs its tick only at the
    frames of ``tick_at`` (it records the frames it ticks)."""

    def __init__(self, ahead: int, tick_at: set[int]) -> None:
        super().__init__(ahead)
        self.tick_at = tick_at
        self.ticked: list[int] = []

    def tick(self, frame: int, engine: Engine) -> None:
        self.ticked.append(frame)
        super().tick(frame, engine)

    def next_tick(self, frame: int) -> int:
        if frame in self.tick_at:
            return frame
        due = min((f for f in self.tick_at if f > frame), default=frame + self.ahead)
        self.ahead, ahead = min(self.ahead, due - frame), self.ahead
        try:
            return super().next_tick(frame)
        finally:
            self.ahead = ahead


def test_a_system_is_asked_again_at_its_last_scheduled_row_so_the_frame_after_is_ticked_only_if_it_asks():
    ref, _, _ = _fader_run(0, 256)
    for block in (64, 256, 1000):
        e = Engine(block=block)
        b = Batcher(4, {0, 9})
        e.add_system(b)
        e.prepare()
        for t in (0.12, 0.41, 0.5):
            e.bus.post(Nudge(t=t))
        n = SR // 2 + 123
        out = np.concatenate([e.render(min(block, n - t)) for t in range(0, n, block)])
        assert out.tobytes() == ref.tobytes(), block
        assert b.ticked == [0, 9]  # the frames after its rows ran out (4, 8, 13...) were not ticked
        assert e.ticks == 2 and e.rows_applied == 14


def _asked_after_retune(ask_before: bool) -> tuple[int, int]:
    e = Engine(block=256, skip_ticks=True)
    w = Retuner(True)
    e.add_system(w)
    e.prepare()
    e.bus.post(Say(t=0.0, samples=12_000))
    e.render(4_800)
    before = e.next_voice_end() if ask_before else -1
    e.voices.set(w.voice, **{"Rsp0.pitch": 2048.0})  # half speed: the voice ends later
    return before, e.next_voice_end()


def test_the_next_voice_end_asked_after_a_retune_is_the_new_one_not_the_answer_kept_from_before():
    before, after = _asked_after_retune(True)
    _, fresh = _asked_after_retune(False)  # the first question after the retune
    assert 4_800 < before < after == fresh
