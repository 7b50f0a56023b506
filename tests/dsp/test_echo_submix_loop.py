"""The echo submix's HPF -> Del0 -> LPF in the fused kernel: while a group's delays are held,
the two filters run as independent lanes of one sample loop over runs of samples no longer
than the shortest delay (the LPF reading the delay taps before the run is written). Its output
is exactly the plain-Python filters around a shifted signal, and exactly the node path's
whatever the group size, block size, delay (shorter than a block, a block long, crossfading,
reaching round the ring) and filter bypass; the one-loop branch, the three-step branch and,
for groups of more than 8 instances whose delays are at least a block long, the two-filter
loop (HPF and LPF each over 16 lanes, its taps and the HPF's output moved straight between
the rings and the lanes, across the rings' ends too) run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_float32_filters import ref_df1

from audio.dsp.bank import GraphBank
from audio.dsp.filters import pass_coefs
from audio.dsp.graph import load_graph

f32 = np.float32
SR = 48_000


def _banks(tmp_path: Path, capacity: int) -> tuple[GraphBank, GraphBank]:
    """The echo submix's node chain (ring of 512 samples: max 0.01 s), fused and node path."""
    nodes = [("Sub0", ""), ("HI20", ""), ("Del0", "params = { max_seconds = 0.01 }"), ("LI20", "")]
    nodes += [("Pn21", ""), ("Sen0", 'to = "bus:master"')]
    lines = ["[graph]", 'name = "echo"', 'kind = "submix"']
    for kind, more in nodes:
        lines += ["[[node]]", f'id = "{kind}"', f'kind = "{kind}"'] + ([more] if more else [])
    p = tmp_path / "echo.toml"
    p.write_text("\n".join(lines) + "\n")
    spec = load_graph(p)
    fused = GraphBank(spec, capacity, SR, "stereo", max_block=512, fused=True)
    nodes_bank = GraphBank(spec, capacity, SR, "stereo", max_block=512, fused=False)
    assert fused.fused and not nodes_bank.fused
    return fused, nodes_bank


def test_held_delay_output_is_the_plain_filters_around_the_shifted_signal(tmp_path):
    bank, _ = _banks(tmp_path, 16)
    bank.alloc(3)
    bank.set(3, "HI20.cutoff_hz", 180.0)
    bank.set(3, "LI20.cutoff_hz", 2600.0)
    bank.set(3, "Del0.seconds", 0.003)  # 144 samples: the float32 product rounds to 144
    rng = np.random.default_rng(4)
    x = (0.4 * rng.standard_normal(4000)).astype(f32)
    x[:300] = 0.0  # silence while the delay crossfades from 0 to 144 samples
    got, t, fast = [], 0, 0
    for n in [37, 128, 200, 1, 99, 144] * 12:
        n = min(n, x.shape[0] - t)
        if n == 0:
            break
        bank.input[3, 0, :n] = x[t : t + n]
        bank.slots["S_Del0"][:] = np.nan  # the three-step branch writes the delay's rows
        bank.process(n, t)
        fast += bool(np.isnan(bank.slots["S_Del0"][0, 0, :n]).all())
        got.append(bank.slots["S_LI20"][0, 0, :n].copy())
        t += n
    hc, lc = np.zeros(5, f32), np.zeros(5, f32)
    assert pass_coefs(180.0, SR, True, hc) and pass_coefs(2600.0, SR, False, lc)
    h = ref_df1(x, hc)
    shifted = np.concatenate([np.zeros(144, f32), h[:-144]])
    for i in range(128):  # the crossfade from the old tap (delay 0), in float64
        g = (i + 1) / 128.0
        shifted[i] = f32((1.0 - g) * float(h[i]) + g * float(shifted[i]))
    assert 20 < fast < len(got)  # not while the delay crossfades
    assert np.array_equal(np.concatenate(got).view(np.int32), ref_df1(shifted, lc).view(np.int32))


def _drive(
    bank: GraphBank, insts: list[int], blocks: list[int], script: int
) -> tuple[np.ndarray, int, int, int]:
    """Run ``insts`` through ``blocks`` with delays and filters changing on a fixed script;
    returns the output rows and the send's destination, block after block, and (fused) how
    many blocks took the one-loop branch, how many the two-filter loop, and how many of those
    read a tap or wrote a sample across a ring's end."""
    rng = np.random.default_rng(script)
    for v in insts:
        bank.alloc(v)
    delay = bank.by_id["Del0"]
    size = delay.buf.shape[2]
    outs, t, fast, pair, wraps = [], 0, 0, 0, 0
    for b, n in enumerate(blocks):
        for i, v in enumerate(insts):
            if b % 6 == 0:
                # held: longer than a block, exactly 128, 24 (runs of 24 samples), 0 (no run);
                # 384 + a 300-sample block reaches round the 512-sample ring
                d = [0.003, 0.008, 128 / SR, 0.0005, 0.0][(b // 6 + i % 2) % 5]
                bank.set(v, "Del0.seconds", d)
            if b % 4 == i % 4:
                bank.set(v, "HI20.cutoff_hz", 0.0 if (b + i) % 3 == 0 else 90.0 + 30 * i)
                bank.set(v, "LI20.cutoff_hz", 30_000.0 if (b + i) % 5 == 0 else 1500.0 + 400 * i)
            bank.input[v, 0, :n] = (0.3 * rng.standard_normal(n)).astype(f32)
        bank.by_id["Sen0"].target[:] = 0.0
        if bank.fused:
            # the three-step branch writes the delay's and the HPF's rows; the others do not
            bank.slots["S_Del0"][:] = np.nan
            bank.slots["S_HI20"][:] = np.nan
            bank.lane_scratch["CO"][1] = np.nan  # only the two-filter loop uses a second filter's
        w0 = delay.widx[insts].copy()
        bank.process(n, t)
        if bank.fused and not np.isnan(bank.lane_scratch["CO"][1]).all():
            # the two-filter loop moves the taps and the HPF's output between rings and lanes
            assert np.isnan(bank.slots["S_Del0"]).all() and np.isnan(bank.slots["S_HI20"]).all()
            pair += 1
            taps = (w0 - delay.dcur[insts]) % size
            wraps += bool((taps + n > size).any() or (w0 + n > size).any())
        elif bank.fused:
            fast += bool(np.isnan(bank.slots["S_Del0"][:, 0, :n]).all())
        outs.append(
            np.concatenate([bank.output[insts, :, :n].ravel(), bank.by_id["Sen0"].target[0, :, :n].ravel()])
        )
        t += n
    return np.concatenate(outs), fast, pair, wraps


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 9, 16])
@pytest.mark.parametrize("block", [37, 128])
def test_fused_echo_submix_is_bit_identical_to_the_node_path(tmp_path, count, block):
    fused, nodes = _banks(tmp_path, 16)
    insts = [(5 * i + 1) % 16 for i in range(count)]
    blocks = [block, block, 7, block, 300 if block == 37 else 128] * 12
    a, fast, pair, wraps = _drive(fused, insts, blocks, count)
    b, _, _, _ = _drive(nodes, insts, blocks, count)
    # the one loop needs 2 * count lanes and every delay held; the two-filter loop, more than
    # 8 instances and every delay held and at least a block long (and its rings, of 512
    # samples, are read and written across their ends)
    if count <= 8:
        assert 0 < fast < len(blocks) and pair == 0
    else:
        assert fast == 0 and 0 < wraps < pair < len(blocks)
    assert np.abs(a).max() > 0.01
    assert np.array_equal(a.view(np.int32), b.view(np.int32))


def test_every_instance_gives_the_same_output_wherever_its_ring_starts(tmp_path):
    """Each instance's ring starts at its own position (so the group's current samples spread
    over the cache sets: an odd number of 64-byte lines apart); the same input and parameters
    give every instance the same output, bit for bit, in both paths, through crossfades and
    delays reaching round the ring."""
    for bank in _banks(tmp_path, 16):
        insts = list(range(16))
        for v in insts:
            bank.alloc(v)
        delay = bank.by_id["Del0"]
        lines = delay.widx[insts] * 4 // 64  # float32 samples: the 64-byte line of each start
        assert len(set(lines % 64)) == 16  # 16 different sets of a 64-set cache
        rng = np.random.default_rng(2)
        t = 0
        for b, n in enumerate([128, 37, 300, 7, 128] * 6):
            x = (0.3 * rng.standard_normal(n)).astype(f32)
            for v in insts:
                if b % 5 == 0:
                    bank.set(v, "Del0.seconds", [0.003, 0.008, 0.0005][b // 5 % 3])
                bank.input[v, 0, :n] = x
            bank.process(n, t)
            out = bank.output[insts, :, :n]
            assert np.abs(out).max() > 0.01 or b < 2
            assert np.array_equal(out.view(np.int32), np.broadcast_to(out[:1], out.shape).view(np.int32))
            t += n
