"""Ramps, resampler, delay and pan: the counted-in-samples rules of spec section 5.4."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bankfeed import feed

from audio.core.outcomes import CoreOutcome
from audio.core.plugin import GameSystem


def test_gain_jumps_first_then_ramps_linearly_over_64_samples(chain):
    bank = chain([("Gai0", {"gain": 0.5})])
    y = feed(bank, np.ones(100, np.float32), "n0")[0]
    assert np.all(y == 0.5)
    bank.set(0, "n0.gain", 1.0)
    y = feed(bank, np.ones(100, np.float32), "n0")[0]
    assert y[0] == pytest.approx(0.5 + 0.5 / 64)
    assert y[62] < 1.0 and y[63] == 1.0 and np.all(y[63:] == 1.0)
    assert np.allclose(np.diff(y[:63]), 0.5 / 64)


def test_send_level_moves_64_65ths_of_the_way_then_holds(chain):
    bank = chain([("Sen0", {"level": 0.0})])
    bank.load_source(0, np.ones(300, np.float32), 48_000, 0)
    tgt = bank.by_id["n0"].target
    bank.process(100, 0)
    assert np.all(tgt[0, 0, :100] == 0.0)  # first value jumps to 0
    bank.set(0, "n0.level", 1.0)
    tgt[:] = 0
    bank.process(100, 100)
    # an unwired bank sends into a buffer of its own channel count (mono here)
    assert tgt.shape[1] == 1
    got = tgt[0, 0, :100]
    assert got[0] == pytest.approx(1 / 65)
    assert got[63] == pytest.approx(64 / 65)
    assert np.allclose(got[63:], 64 / 65)


def test_resampler_step_and_linear_interpolation(chain):
    bank = chain([("Gai0", {"gain": 1.0})])
    src = np.arange(200, dtype=np.float32)
    bank.load_source(0, src, 36_000, 0)
    bank.process(100, 0)
    y = bank.by_id["Rsp0"].out[0, 0, :100]
    step = round(np.float32(36_000 / 48_000) * 65536)  # 49152
    pos = np.arange(100) * step
    expect = (pos >> 16) + (pos & 0xFFFF) / 65536
    assert np.allclose(y, expect, atol=1e-4)


def test_resampler_pitch_clamps_to_2_pow_18(chain):
    bank = chain([])
    bank.set(0, "Rsp0.pitch", 4096.0 * 100)
    bank.load_source(0, np.arange(4000, dtype=np.float32), 48_000, 0)
    bank.process(10, 0)
    y = bank.by_id["Rsp0"].out[0, 0, :10]
    assert np.allclose(np.diff(y), 4.0)  # step 2^18 = 4 source samples per output sample


def test_voice_end_is_reported_at_the_exact_sample(chain):
    bank = chain([])
    bank.load_source(0, np.ones(480, np.float32), 48_000, 100)
    for t in range(0, 2000, 256):
        bank.process(256, t)
    assert bank.ended_at[0] == 100 + 480


@pytest.mark.parametrize(
    "distance,samples", [(0.0, 0), (3.44, 480), (10.0, 1395), (51.6, 7200), (500.0, 7200)]
)
def test_distance_delay_in_samples(chain, distance, samples):
    bank = chain([("Del0", {"max_seconds": 0.17})])
    seconds = min(distance / 344.0, 0.15)
    bank.set(0, "n0.seconds", seconds)
    x = np.zeros(9000, np.float32)
    x[0] = 1.0
    y = feed(bank, x, "n0")[0]
    if samples == 0:
        assert y[0] == 1.0
    else:
        # the first change crossfades from tap 0 to tap D over 128 samples: the impulse at 0 is
        # mostly faded; the delayed copy arrives at D exactly
        assert np.argmax(y[1:]) + 1 == samples
        assert y[samples] == 1.0


def test_delay_samples_come_from_the_float32_product(chain):
    # spec 5.4's probe: 33.2139 m gives 0.09655208 s (a float32); the port multiplies by 48000 in
    # float32 (4634.5 -> 4635), where a float64 product gives 4634.49984 -> 4634
    seconds = float(np.float32(0.09655208))
    assert seconds * 48_000 < 4634.5 <= float(np.float32(seconds) * np.float32(48_000))
    bank = chain([("Del0", {"max_seconds": 0.17})])
    bank.set(0, "n0.seconds", seconds)
    x = np.zeros(9000, np.float32)
    x[0] = 1.0
    y = feed(bank, x, "n0")[0]
    assert np.argmax(y[1:]) + 1 == 4635 and y[4635] == 1.0


@pytest.mark.parametrize("block", [1, 100, 333, 4096])
def test_held_delay_is_the_input_shifted_whatever_the_block(chain, block):
    # blocks that fit before the ring wraps onto a tap take the block copy path, 4096 does not
    bank = chain([("Del0", {"max_seconds": 0.17, "seconds": 0.15})])
    x = np.random.default_rng(4).uniform(-1, 1, 30_000).astype(np.float32)
    y = feed(bank, x, "n0", block=block)[0]
    d = 7200
    assert np.array_equal(y[d + 128 :], x[128:-d])


def test_delay_change_crossfades_over_128_samples(chain):
    bank = chain([("Del0", {})])
    bank.set(0, "n0.seconds", 0.0)
    feed(bank, np.arange(1200, dtype=np.float32), "n0")
    bank.set(0, "n0.seconds", 300 / 48_000)
    t = np.arange(1200, 1700)
    y = feed(bank, t.astype(np.float32), "n0")[0]
    g = np.minimum((np.arange(500) + 1) / 128, 1.0)
    assert np.allclose(y, t - 300 * g, atol=1e-3)
    assert np.all(y[127:] == t[127:] - 300)


def test_pan_is_constant_power_and_ramps_over_64_samples(chain):
    bank = chain([("Pn21", {"angle_deg": 0.0})])
    y = feed(bank, np.ones(100, np.float32), "n0")
    assert np.allclose(y[0] ** 2 + y[1] ** 2, 1.0)
    assert np.allclose(y[0], y[1])
    bank.set(0, "n0.angle_deg", 30.0)
    y = feed(bank, np.ones(100, np.float32), "n0")
    assert y[0, 63] == pytest.approx(1.0) and y[1, 63] == pytest.approx(0.0, abs=1e-12)
    assert y[0, 0] < 1.0


@pytest.mark.parametrize("angle,loud", [(30.0, 0), (-30.0, 1), (0.0, 2), (110.0, 4), (-110.0, 5)])
def test_51_pan_puts_speaker_angles_on_their_speaker(tmp_path, angle, loud):
    from audio.dsp.bank import GraphBank
    from audio.dsp.graph import load_graph

    p = tmp_path / "p.toml"
    p.write_text(
        '[graph]\nname="p"\nkind="voice"\n[[node]]\nid="Rsp0"\nkind="Rsp0"\n'
        f'[[node]]\nid="P"\nkind="Pn21"\nparams={{angle_deg={angle}}}\n'
    )
    bank = GraphBank(load_graph(p), 1, 48_000, "5.1")
    bank.alloc(0)
    y = feed(bank, np.ones(10, np.float32), "P")
    assert y[loud, 0] == pytest.approx(1.0)
    assert np.sum(y[:, 0] ** 2) == pytest.approx(1.0)


# ------------------------------------------------------------------ fused kernels (audio.dsp.fused)
class _Busy(GameSystem):
    """Starts more voices than one lane group, changes every kind of parameter on 60 Hz ticks
    (ramps, filters entering and leaving bypass, delays, pan), releases and restarts voices,
    and ducks the radio bus: everything the fused kernels must reproduce."""

    name, frame_rate = "busy", 60
    outcomes = CoreOutcome
    graphs = ("skate_stream_voice", "sylpheed_radio_voice")

    def attach(self, engine):
        rng = np.random.default_rng(9)
        self.src = [(0.3 * rng.standard_normal(36_000 * 2)).astype(np.float32) for _ in range(3)]
        self.voices = []

    def tick(self, frame, engine):
        vs = engine.voices
        if frame < 22:
            graph = "sylpheed_radio_voice" if frame % 5 == 4 else "skate_stream_voice"
            self.voices.append(
                vs.start(
                    graph,
                    self.src[frame % 3],
                    36_000 if frame % 2 else 24_000,
                    slot=frame % 8,
                    band=frame % 4,
                    params={"Pn21.angle_deg": 17.0 * frame},
                )
            )
        for i, v in enumerate(self.voices):
            k = (frame + i) % 7
            p = {"Pn21.angle_deg": 11.0 * frame + i, "Gai0.gain": 0.5 + 0.4 * np.sin(frame / 3 + i)}
            if "PI20.gain" in v._bank.spec.param_keys():
                p["PI20.gain"] = 1.0 if k == 0 else 0.2 + 0.05 * k
                p["PI20.centre_hz"] = 600.0 + 300 * k
            p["HI20.cutoff_hz"] = 0.0 if k == 1 else 50.0 + 40 * k
            p["LI20.cutoff_hz"] = 30_000.0 if k == 2 else 2000.0 + 900 * k
            vs.set(v, **{key: val for key, val in p.items() if key in v._bank.spec.param_keys()})
            if frame == 40 + i:
                vs.stop(v)
        engine.mixer.set_submix(
            "skate_echo_submix",
            frame % 8,
            **{
                "Del0.seconds": 0.002 * (frame % 9),
                "HI20.cutoff_hz": 0.0 if frame % 3 == 0 else 150.0,
                "LI20.cutoff_hz": 5000.0 - 30 * frame,
            },
        )
        engine.mixer.duck("radio", "t", band=3, on=frame % 20 < 10)


def _render_busy(block: int, fused: bool, meters: bool = False, peaks: list | None = None) -> np.ndarray:
    """The master output; ``peaks`` (if given) gets each block's ``peak_dbfs`` of every voice
    and the peak of every submix slot's output rows (when metered)."""
    from audio.core.engine import Engine

    # ended voices stay in their bank (skip_idle off), so the last blocks still run > 16 lanes
    e = Engine(block=block, voice_budget=40, submix_slots=8, skip_idle=False, meters=meters)
    e.add_system(_Busy())
    n = 48_000
    chunks = []
    for t in range(0, n, block):
        chunks.append(e.render(min(block, n - t)))
        if peaks is not None:
            peaks.append([v.peak_dbfs for v in e.voices.playing()])
            for sub in e.mixer.submix_banks.values():
                peaks.append(np.abs(sub.output[:, :, : min(block, n - t)]).max() if sub.metered else None)
    out = np.concatenate(chunks)
    banks = [*e.mixer.voice_banks.values(), *e.mixer.submix_banks.values(), *e.mixer.buses.values()]
    assert len(banks) >= 6 and all(b.fused == fused for b in banks)
    assert max(len(b.act) for b in banks) > 16  # more than one lane group
    return out


@pytest.mark.parametrize("block", [37, 256])
def test_fused_kernels_are_bit_identical_to_the_node_path(monkeypatch, block):
    outs = {}
    for fused in ("0", "1"):
        monkeypatch.setenv("BARKBUS_FUSED", fused)
        outs[fused] = _render_busy(block, fused == "1")
    assert np.abs(outs["1"]).max() > 0.01
    assert np.array_equal(outs["0"].view(np.int32), outs["1"].view(np.int32))


def test_meters_off_change_no_sample_and_on_read_the_node_paths_voice_peaks(monkeypatch):
    """Meters only decide whether the fused lane pans store the voices' and submix slots'
    output rows: the master is the same bit for bit either way, off every voice's meter reads
    None, on the meters read what the node path (which always writes the rows) reads."""
    runs = {}
    for fused, meters in (("0", True), ("1", False), ("1", True)):
        monkeypatch.setenv("BARKBUS_FUSED", fused)
        peaks: list = []
        runs[fused, meters] = (_render_busy(256, fused == "1", meters, peaks), peaks)
    (ref, ref_peaks), (off, off_peaks), (on, on_peaks) = runs.values()
    for out in (off, on):
        assert np.array_equal(out.view(np.int32), ref.view(np.int32))
    assert on_peaks == ref_peaks
    voice_peaks = [p for block in ref_peaks if isinstance(block, list) for p in block]
    assert len(voice_peaks) > 1000 and sum(math.isfinite(p) for p in voice_peaks) > 1000
    assert all(p is None for block in off_peaks for p in (block if isinstance(block, list) else [block]))


def test_fused_output_is_block_size_invariant(monkeypatch):
    monkeypatch.setenv("BARKBUS_FUSED", "1")
    a, b = _render_busy(64, True), _render_busy(1000, True)
    assert np.array_equal(a, b)


def test_a_graph_with_two_sends_to_one_destination_keeps_the_node_path(tmp_path):
    from audio.dsp.bank import GraphBank
    from audio.dsp.graph import load_graph

    p = tmp_path / "two.toml"
    p.write_text(
        '[graph]\nname = "two"\nkind = "voice"\n[[node]]\nid = "Rsp0"\nkind = "Rsp0"\n'
        '[[node]]\nid = "a"\nkind = "Sen0"\nto = "bus:master"\n'
        '[[node]]\nid = "b"\nkind = "Sen0"\nto = "bus:master"\n'
    )
    assert not GraphBank(load_graph(p), 2, 48_000, fused=True).fused
    assert GraphBank(load_graph("skate_stream_voice"), 2, 48_000, fused=True).fused
