"""Engine timing, voices, ducking and block-size invariance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audio.core.bus import Event
from audio.core.engine import Engine
from audio.core.outcomes import CoreOutcome
from audio.core.plugin import GameSystem


def _tone(n: int = 36_000, sample_rate: int = 36_000, f: float = 440.0) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * f * np.arange(n) / sample_rate)).astype(np.float32)


def test_new_voice_is_silent_for_its_first_256_samples_then_sounds():
    e = Engine()
    e.voices.start("skate_stream_voice", np.ones(4800, np.float32), 48_000)
    out = e.render(1024)
    assert np.all(out[:256] == 0)
    assert np.all(out[256:] != 0)


def test_stop_fades_linearly_over_16_samples_without_a_click():
    e = Engine()
    v = e.voices.start("skate_stream_voice", np.ones(48_000, np.float32), 48_000)
    e.render(1000)
    level = e.render(1)[0, 0]
    e.voices.stop(v)
    out = e.render(100)[:, 0]
    assert np.allclose(out[:16], level * (16 - np.arange(16)) / 16, rtol=1e-5)
    assert np.all(out[16:] == 0)
    assert v.ended_at == 1001 + 16


def test_budget_steals_the_oldest_voice_with_the_fade():
    e = Engine(voice_budget=2, voice_headroom=2)
    a = e.voices.start("skate_stream_voice", np.ones(48_000, np.float32), 48_000, tag="a")
    e.render(10)
    b = e.voices.start("skate_stream_voice", np.ones(48_000, np.float32), 48_000, tag="b")
    e.render(10)
    c = e.voices.start("skate_stream_voice", np.ones(48_000, np.float32), 48_000, tag="c")
    e.render(500)
    assert a.done and not b.done and not c.done
    assert e.voices.stolen == 1


def test_systems_tick_on_exact_frame_starts():
    seen: list[tuple[int, int]] = []

    class S(GameSystem):
        name, frame_rate = "s", 30
        outcomes, graphs = CoreOutcome, ()

        def attach(self, engine):
            pass

        def tick(self, frame, engine):
            seen.append((frame, engine.now))

    e = Engine(block=1000)
    e.add_system(S())
    e.render(48_000 * 3)
    assert [f for f, _ in seen] == list(range(90))
    assert all(now == 1600 * f for f, now in seen)


def test_frame_clock_does_not_drift_over_a_day():
    from audio.core.clock import FrameClock

    c = FrameClock(60)
    day = 24 * 3600 * 60
    assert c.start(day) == 24 * 3600 * 48_000
    assert c.frame_at(c.start(day) - 1) == day - 1


def test_events_take_effect_at_their_sample_whatever_the_block():
    class Mark(Event, kind="test.mark"):
        pass

    for block in (64, 256, 1000):
        e = Engine(block=block)
        got = []
        e.bus.subscribe(
            type("C", (), {"handle": lambda self, ev, bus, got=got: got.append(bus.now)})(), [Mark]
        )
        e.bus.post(Mark(t=0.5))
        e.bus.post(Mark(t=0.0104))
        while e.now < 30_000:
            e.render(block)
        assert got == [499, 24_000]


class _Mover(GameSystem):
    """A system that changes voice and submix parameters on console-frame ticks."""

    name, frame_rate = "mover", 30
    outcomes = CoreOutcome
    graphs = ("skate_stream_voice",)

    def attach(self, engine):
        self.v = engine.voices.start(
            "skate_stream_voice",
            _tone(),
            36_000,
            slot=2,
            params={
                "PI20.gain": 0.3,
                "PI20.centre_hz": 1800.0,
                "Sen0_echo.level": 0.5,
                "HI20.cutoff_hz": 300.0,
                "LI20.cutoff_hz": 3000.0,
                "Sen0_env.level": 0.3,
            },
        )
        engine.mixer.set_submix("skate_echo_submix", 2, **{"Del0.seconds": 0.0145})

    def tick(self, frame, engine):
        engine.voices.set(
            self.v,
            **{
                "Gai0.gain": 1.0 - frame / 40,
                "Pn21.angle_deg": 7.0 * frame,
                "Rsp0.pitch": 4096.0 + 40 * frame,
                "PI20.centre_hz": 600.0 + 100 * frame,
            },
        )
        if frame % 4 == 0:
            engine.mixer.set_submix("skate_echo_submix", 2, **{"Del0.seconds": 0.001 * frame})


def test_render_with_frame_driven_changes_is_block_size_invariant():
    outs = []
    for block in (64, 256, 1000):
        e = Engine(block=block)
        e.add_system(_Mover())
        outs.append(np.concatenate([e.render(block) for _ in range(40_000 // block + 1)])[:40_000])
    assert np.abs(outs[0]).max() > 0.01
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


def test_scenario_events_make_output_block_size_invariant(tmp_path):
    from audio.offline.render import render_scenario
    from audio.offline.scenario import demo_scenario

    outs = [render_scenario(demo_scenario("basic"), block=b).audio for b in (64, 256, 1000)]
    assert np.abs(outs[0]).max() > 0.05
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


def test_ducker_fades_lower_bands_and_recovers_after_release():
    e = Engine()
    src = np.ones(48_000 * 3, np.float32)
    low = e.voices.start("skate_stream_voice", src, 48_000, band=1)
    e.render(2048)
    e.mixer.bus("radio")
    d = e.mixer.duckers["radio"]
    d.set("hi", band=5, on=True)
    e.render(48 * 60 + 10)  # fade_out 60 ms
    assert d.gain(1) == pytest.approx(10 ** (-9 / 20))
    assert d.gain(6) == 1.0  # bands at or above the trigger are not ducked
    d.set("hi", band=5, on=False)
    e.render(48 * 150 - 20)  # recovery 150 ms: still ducked
    assert d.gain(1) == pytest.approx(10 ** (-9 / 20))
    e.render(48 * (250 + 10) + 40)
    assert d.gain(1) == 1.0
    assert low.playing


def test_bus_ducker_attenuates_only_lower_bands_in_the_audio_and_outlives_the_trigger():
    def run(duck: bool) -> tuple[np.ndarray, np.ndarray]:
        outs = []
        for band in (1, 6):
            e = Engine()
            e.voices.start("sylpheed_radio_voice", _tone(48_000 * 2, 48_000, 1000.0), 48_000, band=band)
            e.render(4800)
            if duck:
                e.mixer.duck("radio", "line", band=5, on=True)
            e.render(4800)
            if duck:
                e.mixer.duck("radio", "line", band=5, on=False)  # the trigger ends; the duck recovers later
            outs.append(e.render(24_000))
        return outs[0], outs[1]

    low_dry, high_dry = run(False)
    low_duck, high_duck = run(True)
    rms = lambda x: float(np.sqrt(np.mean(x[:, 0] ** 2)))  # noqa: E731
    # just after release the low band is still at the floor (recovery 150 ms), the high band untouched
    assert 20 * np.log10(rms(low_duck[:2400]) / rms(low_dry[:2400])) == pytest.approx(-9.0, abs=0.05)
    assert np.array_equal(high_duck, high_dry)
    # after recovery (150 ms) and the 250 ms fade-in it is back to unity
    assert np.allclose(low_duck[-400:], low_dry[-400:], atol=1e-6)


def test_python_calls_per_block_do_not_grow_with_the_voice_count():
    import sys

    def calls_per_block(voices: int) -> int:
        e = Engine(voice_budget=128)
        for i in range(voices):
            e.voices.start(
                "skate_stream_voice",
                _tone(),
                36_000,
                slot=i % 8,
                params={"PI20.gain": 0.3, "Sen0_echo.level": 0.2, "Gai0.gain": 0.5},
            )
        e.render(512)  # everything started, kernels compiled
        count = 0

        def prof(frame, event, arg):
            nonlocal count
            if event in ("call", "c_call"):
                count += 1

        sys.setprofile(prof)
        try:
            e.render(256)
        finally:
            sys.setprofile(None)
        return count

    assert calls_per_block(1) == calls_per_block(64) > 0


def test_sample_pool_shares_one_array_and_reuses_freed_space():
    from audio.dsp.pool import SamplePool

    pool = SamplePool(1000)
    a = np.arange(300, dtype=np.float32)
    o1 = pool.add(a)
    assert pool.add(a) == o1 and pool.used == 300  # the same array is stored once
    o2 = pool.add(np.ones(600, np.float32))
    assert np.array_equal(pool.data[o1 : o1 + 300], a) and np.all(pool.data[o2 : o2 + 600] == 1)
    pool.release(o1)
    assert pool.used == 900  # one reference left
    pool.release(o1)
    pool.add(np.zeros(2000, np.float32))  # does not fit: the pool grows
    assert pool.data.shape[0] >= 2600 and np.all(pool.data[o2 : o2 + 600] == 1)
    pool.reserve(50_000)
    size = pool.data.shape[0]
    pool.add(np.zeros(50_000, np.float32))
    assert pool.data.shape[0] == size  # reserved: no growth while playing


def _duck_reference(env, held, hold_left, n, floor, down, up, recovery):
    """The ducking recurrence sample by sample in plain Python (independent of the kernel)."""
    out = []
    for b in range(len(env)):
        g, h, row = env[b], hold_left[b], []
        for _ in range(n):
            if held[b] > 0:
                h, g = recovery, max(g - down, floor)
            elif h > 0:
                h, g = h - 1, max(g - down, floor)
            else:
                g = min(g + up, 1.0)
            row.append(g)
        env[b], hold_left[b] = g, h
        out.append(row)
    return out


def test_ducker_envelope_matches_the_sample_by_sample_recurrence_at_rest_and_in_motion():
    from audio.dsp.mixer import Ducker

    class Spec:
        bands, volume_db, fade_out_ms, fade_in_ms, recovery_ms = 4, -9.0, 2.0, 3.0, 1.0

    rng = np.random.default_rng(7)
    d = Ducker(Spec, 48_000, 512)
    env, hold = [1.0] * 4, [0] * 4
    for _ in range(60):  # holds, releases and long rests, in blocks of random size
        if rng.random() < 0.3:
            d.set("k", int(rng.integers(0, 5)), bool(rng.random() < 0.5))
        n = int(rng.integers(1, 512))
        want = _duck_reference(env, list(d.held), hold, n, d.floor, d.down, d.up, d.recovery)
        d.run(n)
        assert np.array_equal(d.buf[:, :n], np.array(want, dtype=np.float32))
        assert list(d.env) == env and list(d.hold_left) == hold


def test_prepare_loads_the_declared_graphs_with_their_sends_and_kernels_and_leaves_the_audio_alone():
    from audio.games.tone.system import ToneOn, ToneSystem

    def run(prepare: bool) -> tuple[Engine, np.ndarray]:
        e = Engine()
        e.add_system(ToneSystem("skate_stream_voice"))
        if prepare:
            e.prepare()
            assert "skate_stream_voice" in e.mixer.voice_banks  # before any line plays
            assert "skate_echo_submix" in e.mixer.submix_banks  # wired through its send
            banks = [*e.mixer.voice_banks.values(), *e.mixer.submix_banks.values(), *e.mixer.buses.values()]
            assert all(b._program.fn.signatures for b in banks)  # compiled kernels loaded
        e.bus.post(ToneOn(speaker="a", line="l", freq_hz=440.0, seconds=0.2, level=0.5), at=300)
        return e, e.render(24_000)

    _, plain = run(False)
    _, warmed = run(True)
    assert np.abs(plain).max() > 0.01 and np.array_equal(plain, warmed)


def test_world_polar_gives_distance_and_azimuth_of_the_pose_at_each_sample_time():
    from audio.core.world import Path3

    e = Engine()
    w = e.world
    w.set_listener((1.0, 0.0, 2.0), yaw_deg=90.0)  # facing -x: -z is on its left
    w.set_emitter("ahead", (-3.0, 0.0, 2.0))
    w.set_emitter("north", (1.0, 0.0, 5.0))
    assert w.polar("ahead") == pytest.approx((4.0, 0.0))
    assert w.polar("north") == pytest.approx((3.0, -90.0))
    w.set_listener((1.0, 0.0, 2.0), yaw_deg=-90.0)  # a new pose is seen at once
    assert w.polar("north") == pytest.approx((3.0, 90.0))
    w.set_listener(yaw_deg=0.0, path=Path3([(0.0, (0.0, 0.0, 0.0)), (1.0, (0.0, 0.0, 10.0))]))
    assert w.polar("north") == pytest.approx((math.hypot(1.0, 5.0), math.degrees(math.atan2(-1.0, 5.0))))
    e.render(24_000)  # half way along the path: listener at z = 5
    assert w.polar("north") == pytest.approx((1.0, -90.0))


def test_world_polar_to_a_position_measures_it_like_polar_of_an_emitter_there():
    e = Engine()
    w = e.world
    w.set_listener((1.0, 0.0, 2.0), yaw_deg=90.0)  # facing -x, so -z is on its left
    got = w.polar_to((4, 0, -2))  # 3 m behind, 4 m to the left
    assert "e" not in w.emitters
    w.set_emitter("e", (4, 0, -2))
    assert got == w.polar("e") and got[0] == w.distance_to((4, 0, -2))
    assert got == pytest.approx((5.0, math.degrees(math.atan2(4.0, -3.0))))


def test_a_parameter_set_through_the_voice_manager_leaves_the_bank_as_the_banks_own_set_does():
    def run(through_manager: bool) -> tuple[dict[str, float], dict[str, bool], np.ndarray]:
        e = Engine(seed=0)
        e.mixer.prepare(("play_voice",))
        v = e.voices.start("play_voice", np.full(4800, 0.25, np.float32), 48000, params={"Gai0.gain": 0.5})
        bank = v._bank
        for node in bank.by_id.values():
            node.dirty[v.instance] = False
        writes = [("Gai0.gain", 0.25), ("HI20.cutoff_hz", 300.0), ("Gai0.gain", 0.25), ("Pn21.angle_deg", 30)]
        for k, val in writes:
            if through_manager:
                e.voices.set(v, **{k: val})
            else:
                bank.set(v.instance, k, val)
        values = {f"{i}.{p}": float(n.params[p][v.instance]) for i, n in bank.by_id.items() for p in n.params}
        dirty = {i: bool(n.dirty[v.instance]) for i, n in bank.by_id.items()}
        return values, dirty, e.render(2400)

    assert run(True)[:2] == run(False)[:2]
    assert run(True)[2].tobytes() == run(False)[2].tobytes()
    e = Engine(seed=0)
    e.mixer.prepare(("play_voice",))
    v = e.voices.start("play_voice", np.zeros(100, np.float32), 48000)
    e.voices.set(v, **{"Gai0.gain": 0.5})  # resolved once; an unknown key still names the graph's keys
    with pytest.raises(KeyError, match="Gai0.gain"):
        e.voices.set(v, **{"Gai0.gian": 0.5})


def test_meters_reach_the_voice_and_submix_banks_made_before_and_after_but_no_bus():
    from audio.dsp.mixer import Mixer

    m = Mixer(max_block=64)
    early = m.voice_bank("skate_stream_voice")
    assert not m.meters and not early.metered  # off by default: no meter reads them
    m.meters = True
    late = m.submix("skate_echo_submix")
    assert early.metered and late.metered
    m.meters = False
    assert not early.metered and not late.metered
    assert all(b.metered for b in m.buses.values())  # a bus's output is its signal
    assert Engine(meters=True).mixer.voice_bank("play_voice").metered
