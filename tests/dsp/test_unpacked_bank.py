"""A bank built without packing (a decisions-only engine's) keeps each node's arrays its own
and processes exactly as a packed one; a decisions-only mixer builds its banks that way."""

from __future__ import annotations

import numpy as np
from bankfeed import feed

from audio.dsp.bank import GraphBank
from audio.dsp.graph import load_graph
from audio.dsp.mixer import Mixer


def _bank(pack: bool) -> GraphBank:
    return GraphBank(load_graph("skate_stream_voice"), 4, 48_000, max_block=512, pack=pack)


def test_an_unpacked_bank_processes_sample_for_sample_as_a_packed_one():
    x = np.sin(np.arange(6000) * 0.05).astype(np.float32)
    packed, unpacked = _bank(True), _bank(False)
    assert packed.packed and not unpacked.packed
    outs = []
    for b in (packed, unpacked):
        b.alloc(1)
        b.set(1, "HI20.cutoff_hz", 300.0)
        b.set(1, "PI20.gain", 0.4)
        outs.append(feed(b, x, "Pn21", block=300, v=1))
    assert np.abs(outs[0]).max() > 0.1 and np.array_equal(outs[0], outs[1])


def test_an_unpacked_banks_parameters_stay_in_their_nodes_arrays():
    b = _bank(False)
    b.alloc(2)
    b.set(2, "HI20.cutoff_hz", 250.0)
    hpf = b.by_id["HI20"].params["cutoff_hz"]
    assert hpf.base is None and hpf[2] == 250.0  # its own array, not a row of a packed one


def test_a_decisions_only_mixer_builds_unpacked_banks_and_a_full_one_packed_banks():
    quiet, full = Mixer(dsp=False, fused=False), Mixer(fused=False)
    for m in (quiet, full):
        m.prepare(["skate_stream_voice"])
    assert all(not b.packed for b in quiet.banks)
    assert all(b.packed for b in full.banks if b.spec.kind != "bus")
