"""Banks of one graph structure share one fused program per process: the next bank (a batch
worker's next run, a second render) plans, generates and loads nothing, and renders the same."""

from __future__ import annotations

import gc
import weakref

import numpy as np
from bankfeed import feed

from audio.dsp.bank import GraphBank
from audio.dsp.graph import load_graph


def _bank(capacity: int = 4) -> GraphBank:
    return GraphBank(load_graph("skate_stream_voice"), capacity, 48_000, max_block=512, fused=True)


def test_a_second_bank_of_a_graph_reuses_its_program_and_sounds_the_same():
    x = np.sin(np.arange(6000) * 0.05).astype(np.float32)
    first, second = _bank(), _bank()
    assert first.fused and second._program is first._program
    assert second.slots.keys() == first.slots.keys()
    for b in (first, second):
        b.alloc(0)
        b.set(0, "HI20.cutoff_hz", 300.0)
    a, b = feed(first, x, "Pn21", block=300), feed(second, x, "Pn21", block=300)
    assert np.abs(a).max() > 0.1 and np.array_equal(a, b)


def test_another_capacity_gets_its_own_program():
    assert _bank(4)._program is not _bank(40)._program


def test_a_kept_program_holds_no_bank_or_node_alive():
    bank = _bank(3)
    gone = [weakref.ref(bank), *(weakref.ref(n) for n in bank.nodes)]
    del bank
    gc.collect()
    assert all(ref() is None for ref in gone)


def test_a_fused_banks_scratch_starts_at_zero_on_reused_dirty_memory():
    from audio.dsp.graph import available_graphs

    for name in available_graphs():
        spec = load_graph(name)
        for capacity in (1, 16, 40):
            # leave freed, non-zero memory behind for the bank's allocations to reuse
            dirty = [np.full(n, np.nan, np.float32) for n in (4_000, 60_000, 300_000, 1_000_000)]
            del dirty
            bank = GraphBank(spec, capacity, 48_000, max_block=3200, fused=True)
            scratch = [*getattr(bank, "slots", {}).values(), *getattr(bank, "lane_scratch", {}).values()]
            assert bank.fused == bool(scratch)
            for arr in scratch:
                assert not arr.any(), (name, capacity)
            fresh = GraphBank(spec, capacity, 48_000, max_block=3200, fused=False)
            for node, ref in zip(bank.nodes, fresh.nodes):  # state and parameters as the node path's
                for a in node.arrays:
                    mine = node.params[a] if a in node.params else getattr(node, a)
                    theirs = ref.params[a] if a in ref.params else getattr(ref, a)
                    assert np.array_equal(mine, theirs, equal_nan=True), (name, a)


def _double(x: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]


def test_a_kernel_entry_is_resolved_once_per_argument_types_and_apart_for_another_layout():
    import numba as nb

    from audio.dsp import bank as bank_module

    fn = nb.njit(_double)
    c = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    fn(c, out)
    entry = bank_module._entry_point(fn, (c, out))
    (compiled,) = fn.overloads.values()
    assert entry is not None and entry == compiled.entry_point
    typeof_calls = []
    real = fn.typeof_pyval
    fn.typeof_pyval = lambda a: typeof_calls.append(a) or real(a)
    # another pair of arrays of the same types: no typing at all, the same entry
    assert bank_module._entry_point(fn, (c + 1, np.zeros(8, np.float32))) == entry
    assert typeof_calls == []
    # a strided view is another numba type (layout "A"): never the contiguous entry
    strided = np.arange(16, dtype=np.float32)[::2]
    assert bank_module._entry_point(fn, (strided, out)) is None
    fn(strided, out)
    other = bank_module._entry_point(fn, (strided, out))
    assert other is not None and other != entry
    # a read-only array is another type too
    ro = c.copy()
    ro.flags.writeable = False
    assert bank_module._entry_point(fn, (ro, out)) is None
