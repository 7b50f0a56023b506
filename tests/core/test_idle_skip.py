"""Idle skipping: ended voices leave their bank, silent submix slots and buses sleep, and
the output stays what the reference path (``skip_idle=False``) renders."""

from __future__ import annotations

import numpy as np

from audio.core.engine import IDLE_GRID, Engine
from audio.dsp.bank import QUIET_FLOOR

SR = 48_000


def _source(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (0.3 * rng.standard_normal(int(SR * seconds))).astype(np.float32)


def _render(skip: bool, block: int, total: int, restart_at: int) -> tuple[np.ndarray, Engine]:
    """A voice with every filter and its echo slot busy for 0.25 s, silence, a second voice on
    the same slot at ``restart_at``, silence again; rendered ``block`` samples at a time."""
    e = Engine(block=block, skip_idle=skip)
    params = {
        "PI20.centre_hz": 1800.0,
        "PI20.gain": 0.3,
        "HI20.cutoff_hz": 120.0,
        "LI20.cutoff_hz": 6000.0,
        "Sen0_env.level": 0.5,
        "Sen0_echo.level": 0.5,
    }
    echo = {"HI20.cutoff_hz": 150.0, "LI20.cutoff_hz": 5000.0, "Del0.seconds": 0.05}
    e.voices.start("play_voice", _source(0.25, 1), SR, slot=1, params=params)
    e.mixer.set_submix("play_echo_submix", 1, **echo)
    chunks = []
    t = 0
    while t < total:
        if t == restart_at:
            e.voices.start("play_voice", _source(0.1, 2), SR, slot=1, params=params)
        m = min(block, total - t, restart_at - t if t < restart_at else total)
        chunks.append(e.render(m))
        t += m
    return np.concatenate(chunks), e


def test_an_ended_voice_and_its_silent_echo_slot_and_bus_stop_running_until_a_voice_comes() -> None:
    restart = 12 * IDLE_GRID
    out, e = _render(True, 1000, restart, restart)
    voices = e.mixer.voice_banks["play_voice"]
    echo = e.mixer.submix_banks["play_echo_submix"]
    env = e.mixer.buses["environment"]
    assert voices.act.shape[0] == 0 and not voices.active.any()  # reclaimed without a new start
    assert echo.asleep[1] and echo.act.shape[0] == 0
    assert env.asleep[0] and not np.any(env.output)
    assert e.mixer.buses["master"].asleep[0] and not np.any(out[-IDLE_GRID:])
    assert e.voices.history[0].done
    e.voices.start("play_voice", _source(0.1, 2), SR, slot=1)
    assert not echo.asleep[1] and not env.asleep[0] and not e.mixer.buses["master"].asleep[0]


def test_skipping_renders_the_reference_output_below_the_quiet_floor_and_the_same_16_bits() -> None:
    total, restart = 16 * IDLE_GRID, 9 * IDLE_GRID + 123
    ref, _ = _render(False, 256, total, restart)
    out, _ = _render(True, 256, total, restart)
    assert np.any(np.abs(ref) > 0.05)  # something was heard, before and after the restart
    assert np.any(np.abs(ref[restart:]) > 0.05)
    assert float(np.abs(out - ref).max()) < 8 * QUIET_FLOOR

    def pcm16(x: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(x * np.float32(32767.0)), -32768, 32767).astype(np.int16)

    np.testing.assert_array_equal(pcm16(out), pcm16(ref))


def test_skipping_is_the_same_whatever_the_block_size() -> None:
    total, restart = 14 * IDLE_GRID, 9 * IDLE_GRID + 123
    a, _ = _render(True, 256, total, restart)
    b, _ = _render(True, 1000, total, restart)
    c, _ = _render(True, 77, total, restart)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_passing_by_grid_samples_where_nothing_can_sleep_changes_no_sample(monkeypatch) -> None:
    """The engine skips the idle check (and the split) at a grid sample where no voice has
    ended and everything awake has a sender; checking at every grid sample instead renders
    the same bytes, with more control points."""
    from audio.offline.batch.runner import simulate
    from audio.offline.scenario import demo_scenario

    path = str(demo_scenario("skate"))
    passing = simulate(path, 3, decisions_only=False)
    monkeypatch.setattr(Engine, "_idle_work", lambda self, grid: True)
    checking = simulate(path, 3, decisions_only=False)
    assert passing.audio is not None and checking.audio is not None
    assert passing.audio.tobytes() == checking.audio.tobytes()
    assert passing.engine.control_points < checking.engine.control_points - 50


def test_a_quiet_mixer_writes_its_silence_at_once_with_the_same_bytes_and_taps(monkeypatch) -> None:
    """Once every voice has left and every slot and bus sleeps, the engine writes silence up to
    the next control point instead of running the mixer a sub-block at a time: the output and
    the tapped buses are the bytes processing it renders, in fewer control points."""

    def run(block: int, call: int) -> tuple[np.ndarray, dict[str, np.ndarray], Engine]:
        e = Engine(block=block)
        e.tap_buses(["master", "environment"])
        params = {"Sen0_env.level": 0.5, "Sen0_echo.level": 0.5}
        e.voices.start("play_voice", _source(0.2, 1), SR, slot=1, params=params)
        e.mixer.set_submix("play_echo_submix", 1, **{"Del0.seconds": 0.05})
        total, again = 3 * SR, 2 * SR + 77
        out = [e.render(min(call, again - t)) for t in range(0, again, call)]
        e.voices.start("play_voice", _source(0.1, 2), SR, slot=1, params=params)
        out += [e.render(min(call, total - t)) for t in range(again, total, call)]
        return np.concatenate(out), e.taps(), e

    quiet, quiet_taps, eng = run(3200, 24_000)
    assert eng._quiet()  # everything asleep again at the end
    monkeypatch.setattr(Engine, "_quiet", lambda self: False)
    for block in (256, 3200):
        busy, busy_taps, ref = run(block, block)
        assert quiet.tobytes() == busy.tobytes()
        assert quiet_taps.keys() == busy_taps.keys()
        for name in quiet_taps:
            assert quiet_taps[name].tobytes() == busy_taps[name].tobytes()
    assert eng.control_points < ref.control_points - 20  # 1.5 s of silence: 22 sub-blocks of 3,200
    assert np.abs(quiet).max() > 0.01 and not np.any(quiet[int(1.5 * SR) : 2 * SR])
