"""Real-time rendering with the null output (no device): pacing, event stamping, replay."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from audio.core.capture import read_capture, replay
from audio.core.inbox import Inbox
from audio.games.tone.system import ToneOn
from audio.live.device import LivePlayer, LiveSettings, write_capture
from audio.port import open_system
from audio.port.api import engine_for_capture

BLOCK = 256


def _tone_port():
    return open_system(game="tone", seed=3)


def test_null_output_calls_back_once_per_block_period_and_every_callback_is_accounted_for():
    port = _tone_port()
    port.warm_up()
    player = LivePlayer(port.engine, LiveSettings(no_audio=True))
    player.run(1.5)
    m = player.metrics()
    # paced by the clock: one callback per block period of the run's own monotonic clock (a late
    # thread catches up, so the count follows the clock whatever the machine's load)
    assert m["callbacks"] == pytest.approx(m["expected_callbacks"], rel=0.03)
    assert m["callbacks"] >= 0.9 * 1.5 * 48000 / BLOCK
    # counted, not timed: every callback played a rendered block or counted an underrun, and the
    # render thread never ran ahead of the callbacks by more than the ring (2 blocks)
    played = m["callbacks"] - m["underruns"]
    assert 0 < played <= m["blocks_rendered"] <= played + 2
    assert m["samples_rendered"] == BLOCK * m["blocks_rendered"]
    assert m["underflows"] == 0


def test_live_events_take_effect_at_block_boundaries_and_the_capture_replays_bit_identically(tmp_path):
    port = _tone_port()
    player = port.play(LiveSettings(no_audio=True, keep_blocks=True))

    def controller() -> None:
        for i in range(8):
            time.sleep(0.09 + 0.013 * i)
            port.post(
                ToneOn(speaker=f"s{i % 3}", line=f"l{i}", freq_hz=200.0 + 40 * i, seconds=0.2), when="now"
            )

    th = threading.Thread(target=controller)
    th.start()
    th.join()
    time.sleep(0.3)
    port.stop()
    ext = [r for r in player.records if r["origin"] == "external"]
    assert len(ext) == 8
    assert all(r["at"] % BLOCK == 0 for r in ext)
    assert all(r["t"] == r["at"] / 48000 for r in ext)
    live = np.concatenate(player.rendered)
    assert live.shape == (player.samples_rendered, 2) and np.abs(live).max() > 0.1

    path = write_capture(
        tmp_path / "run.jsonl", player.capture_header(**port.capture_header()), player.records
    )
    header, events = read_capture(path)
    events = list(events)
    replayed = replay(engine_for_capture(header, path), events, header["samples"])
    assert replayed.tobytes() == live.tobytes()

    # the comparison can fail: the same capture with one event a block late differs
    moved = [dict(r) for r in player.records]
    moved[0]["at"] += BLOCK
    shifted = replay(engine_for_capture(header, path), moved, header["samples"])
    assert shifted.tobytes() != live.tobytes()


def test_a_slow_render_is_heard_as_counted_underruns_not_a_stall():
    port = _tone_port()

    class Slow:
        bus, now = port.engine.bus, 0

        def prepare(self):
            port.engine.prepare()

        def render(self, n):
            time.sleep(0.012)
            out = port.engine.render(n)
            self.now = port.engine.now
            return out

    player = LivePlayer(Slow(), LiveSettings(no_audio=True))
    player.run(0.6)
    m = player.metrics()
    assert m["underruns"] > 0.3 * m["callbacks"]
    assert m["callbacks"] == pytest.approx(m["expected_callbacks"], rel=0.05)


def test_a_render_error_stops_the_run_and_is_raised_by_stop():
    port = _tone_port()

    class Breaks:
        bus, now, calls = port.engine.bus, 0, 0

        def prepare(self):
            pass

        def render(self, n):
            self.calls += 1
            if self.calls > 20:
                raise ZeroDivisionError("boom")
            return np.zeros((n, 2), np.float32)

    player = LivePlayer(Breaks(), LiveSettings(no_audio=True))
    player.start()
    assert player.finished.wait(5.0)
    with pytest.raises(RuntimeError, match="boom"):
        player.stop()
    assert player.metrics()["blocks_rendered"] == 20


def test_inbox_is_bounded_and_counts_what_it_drops():
    inbox = Inbox(maxsize=4)
    results = [inbox.put(ToneOn(line=str(i))) for i in range(10)]
    assert results == [True] * 4 + [False] * 6
    assert (inbox.accepted, inbox.dropped) == (4, 6)
    assert [it.event.line for it in inbox.drain()] == ["0", "1", "2", "3"]
    assert inbox.drain() == []
