"""A graph bank: every instance of one graph, processed together.

A :class:`GraphBank` holds the state of up to ``capacity`` instances of a graph in
instance-major arrays and runs each node once per (sub-)block over all active instances
with a compiled kernel. Parameters are written into target arrays and marked dirty; the
kernels apply them at the start of their next call, i.e. atomically at a block boundary.
A submix or bus zeroes its inputs once it has read them, so the next block's sends start
from silence (an instance's input is also zeroed when it is allocated).

An allocated instance may be *asleep* (:meth:`GraphBank.sleep`): it keeps its state and
parameters but is left out of processing until :meth:`GraphBank.wake`. The mixer puts a
submix slot or a bus to sleep when nothing can send to it and it is idle
(:meth:`GraphBank.idle`: no parameter change or ramp pending, every signal history below
:data:`QUIET_FLOOR`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from audio.dsp import kernels as K
from audio.dsp.graph import GraphSpec
from audio.dsp.nodes import NODE_KINDS, Node, Resampler, Send, untouched_zeros
from audio.dsp.pool import SamplePool

if TYPE_CHECKING:
    from audio.dsp.fused import FusedPlan, FusedProgram

__all__ = ["GraphBank", "LAYOUTS"]

LAYOUTS = {"stereo": 2, "5.1": 6}
"""Output layouts: channel counts. 5.1 is in WAV order L, R, C, LFE, Ls, Rs."""

QUIET_FLOOR = 2.0**-30
"""Signal level (linear, about -180 dBFS) below which an instance with no input counts as
silent. The biquads add a denormal bias of 1e-18 each sample, so a filter fed with zeros
settles on a tiny constant (at most about 1e-13 for the lowest cutoffs) instead of exact
zero; this floor sits 10^4 above that and 128 times below one 24-bit step (2^-23), so
skipping what remains changes 16- and 24-bit output only where a sample lies within 2^-30
of a rounding boundary."""


_PROGRAMS: dict[tuple, tuple[FusedPlan | None, FusedProgram | None]] = {}
"""Per graph structure (:attr:`GraphBank.structure`), its fused plan (without node objects) and
program, made once per process: the next bank of the same graph (a batch worker's next run, a
second render) plans, generates and loads nothing. At most :data:`_MAX_PROGRAMS` are kept."""
_MAX_PROGRAMS = 256


_ENTRIES: dict[tuple, Callable[..., None] | None] = {}
"""Per numba dispatcher and argument type key (:func:`_type_key`), its machine-code entry:
resolved once per process, so the next bank of the same graph (a batch worker's next run) asks
numba's typing nothing. At most :data:`_MAX_ENTRIES` are kept."""
_MAX_ENTRIES = 1024


def _type_key(a: object) -> object:
    """What numba's type of argument ``a`` depends on, cheaply (an array's dtype, dimensions and
    flags: contiguity, alignment, writeability; a scalar's class), or None for anything else."""
    if type(a) is np.ndarray:
        return (a.dtype, a.ndim, a.flags.num)
    if type(a) in (int, float, bool):
        return type(a)
    return None


def _entry_point(fn: Any, args: tuple) -> Callable[..., None] | None:
    """The machine-code entry of numba dispatcher ``fn`` compiled for exactly the types of
    ``args``, or None. Calling it skips the dispatcher's type resolution (a few microseconds
    per call with a fused kernel's twenty-odd arrays); the bank calls it only with arguments
    of those types (``act`` is always a C-contiguous int64 array; the arrays change only when
    :meth:`GraphBank._fused_args` rebuilds them, which forgets the entry). Arguments of the
    same type key share one resolution per process (numba's ``typeof`` costs about 6 us an
    array)."""
    keys = tuple(_type_key(a) for a in args)
    key = (fn, keys) if None not in keys else None
    if key is not None and key in _ENTRIES:
        return _ENTRIES[key]
    try:
        sig = tuple(fn.typeof_pyval(a) for a in args)
    except (TypeError, ValueError):
        return None
    cres = fn.overloads.get(sig)
    entry = None if cres is None else cres.entry_point
    if key is not None and entry is not None:
        if len(_ENTRIES) >= _MAX_ENTRIES:
            _ENTRIES.clear()
        _ENTRIES[key] = entry
    return entry


class GraphBank:
    """Up to ``capacity`` instances of ``spec``, with batched processing.

    Parameters
    ----------
    spec: the graph.
    capacity: number of instances (voices, submix slots; 1 for a bus).
    sample_rate: engine rate in Hz.
    layout: output layout name (``"stereo"`` or ``"5.1"``).
    max_block: the largest block (samples) :meth:`process` will be asked for.
    pool: the sample pool of voice graphs' sources (a new one if None).
    fused: run the graph as one fused kernel (:mod:`audio.dsp.fused`; bit-identical) instead of
        one kernel call per node (:meth:`process_nodes`, the reference path). Node outputs
        other than the last (``bank.output``) are only kept by the node path.
    pack: group the nodes' arrays for processing (:meth:`_pack`). False for a bank that only
        keeps its instances' parameters and sources' positions (a decisions-only engine's,
        :mod:`audio.dsp.skip`): its arrays stay the nodes' own, which the node path also
        reads, so its processing is unchanged, and building it costs about half as much.

    Attributes
    ----------
    output: the instances' output rows ``(capacity, channels, max_block)``: the last block
        processed, while :attr:`metered` (always on the node path and for a bus, whose
        output is its signal).
    """

    def __init__(
        self,
        spec: GraphSpec,
        capacity: int,
        sample_rate: int,
        layout: str = "stereo",
        max_block: int = 4096,
        pool: SamplePool | None = None,
        fused: bool = False,
        pack: bool = True,
    ) -> None:
        self.spec = spec
        self.capacity = capacity
        self.sample_rate = sample_rate
        self.max_block = max_block
        self.structure = (repr(spec), capacity, sample_rate, layout, max_block)
        """What the bank's arrays, fused plan and generated kernel depend on (and nothing else)."""
        nch = LAYOUTS[layout]
        lay = 0 if layout == "stereo" else 1
        ch0 = nch if spec.kind == "bus" else 1
        self.input = untouched_zeros((capacity, ch0, max_block))
        self.nodes: list[Node] = []
        self.by_id: dict[str, Node] = {}
        for i, ns in enumerate(spec.nodes):
            if i == 0:
                ch_in, inp = ch0, (None if ns.kind == "Rsp0" else self.input)
            else:
                src = self.by_id[ns.input]  # type: ignore[index]
                ch_in, inp = src.ch_out, src.out
            cls = NODE_KINDS[ns.kind]
            node = cls(ns, capacity, ch_in, cls.channels_out(ch_in, nch), sample_rate, lay, max_block, inp)
            self.nodes.append(node)
            self.by_id[ns.id] = node
        self.output = self.nodes[-1].out
        self.meter = np.ones(1, dtype=np.bool_)
        """The fused kernels' meter switch (:attr:`metered`), read at every block."""
        self.sends = [n for n in self.nodes if isinstance(n, Send)]
        self._keys: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """``"NODE.param"`` -> the parameter's array and its node's dirty flags, resolved once
        (:meth:`set`; emptied when :meth:`_pack` replaces the arrays)."""
        self.resampler_keys = frozenset(
            f"{nid}.{p}" for nid, n in self.by_id.items() if isinstance(n, Resampler) for p in n.params
        )
        """The keys whose write can move a voice's end (its pitch)."""
        self.active = np.zeros(capacity, dtype=np.bool_)
        self.asleep = np.zeros(capacity, dtype=np.bool_)
        self.act = np.zeros(0, dtype=np.int64)
        self.band = np.zeros(capacity, dtype=np.int64)
        for s in self.sends:
            s.band = self.band
        first = self.nodes[0]
        self._rsp = first if isinstance(first, Resampler) else None
        if self._rsp is not None:
            self.pool = pool if pool is not None else SamplePool()
            r = self._rsp
            r.source = self.pool
            # the source state lives in the resampler; the bank exposes it to the voice manager
            self.src_off, self.src_len, self.src_sample_rate, self.ipos, self.frac = (
                r.src_off,
                r.src_len,
                r.src_sample_rate,
                r.ipos,
                r.frac,
            )
            self.rstep, self.wait, self.rel_left, self.rel_total = r.rstep, r.wait, r.rel_left, r.rel_total
            self.ended_at = r.ended_at
        self._program: FusedProgram | None = None
        self._args: tuple | None = None
        self._entry: Callable[..., None] | None = None
        self._sample_rate_hz = float(sample_rate)
        self._args_pool: np.ndarray | None = None
        self._plan: FusedPlan | None = None
        self.packed: dict[str, np.ndarray] = {}
        self.pack_index: dict[int, tuple[str, int]] = {}
        if fused:
            self._setup_fused()  # packs once its scratch is allocated
        elif pack:
            self._pack()

    _UNPACKED = (
        "input", "output", "out", "inp", "target", "duck", "act", "active", "asleep", "meter", "box", "boxed",
        "nbox", "bgain",
    )  # fmt: skip

    def _pack(self, unset: tuple[np.ndarray, ...] = ()) -> None:
        """Move arrays of the same dtype and shape (the nodes' parameters and state, the
        sources' positions, the fused scratch) into one array each, ``packed["A<k>"]``, whose
        rows replace them; the node path and the fused kernels share them (and a fused call
        gets a few packed arrays instead of one argument per vector). ``unset`` are new arrays
        whose content is not set yet (``numpy.empty``): a group of only such arrays is made as
        zeros (untouched pages for float32), not copied; every other one is zeroed here."""
        holders: list[tuple[object, str]] = [(self, a) for a in vars(self)]
        for node in self.nodes:
            holders += [(node, a) for a in vars(node)]
            holders += [(node.params, p) for p in node.params]
        for d in (getattr(self, "slots", {}), getattr(self, "lane_scratch", {})):
            holders += [(d, k) for k in d]
        groups: dict[tuple, list[np.ndarray]] = {}
        index: dict[int, tuple[tuple, int]] = {}
        found: list[tuple[object, str, np.ndarray]] = []
        for obj, attr in holders:
            arr = obj[attr] if isinstance(obj, dict) else getattr(obj, attr)
            if not isinstance(arr, np.ndarray) or attr in self._UNPACKED or attr == "pool":
                continue
            if id(arr) not in index:
                key = (arr.dtype.str, arr.shape)
                index[id(arr)] = (key, len(groups.setdefault(key, [])))
                groups[key].append(arr)
            found.append((obj, attr, arr))
        names = {key: f"A{i}" for i, key in enumerate(k for k, v in groups.items() if len(v) > 1)}
        fresh = {id(a) for a in unset}
        new = {key for key, arrs in groups.items() if key in names and all(id(a) in fresh for a in arrs)}
        for a in unset:
            if id(a) not in index or index[id(a)][0] not in new:
                a.fill(0)
        self.packed = {
            names[key]: (
                untouched_zeros((len(arrs), *key[1]))
                if key in new and key[0] == "<f4"
                else np.zeros((len(arrs), *key[1]), np.dtype(key[0]))
                if key in new
                else np.array(arrs)
            )
            for key, arrs in groups.items()
            if key in names
        }
        self._keys = {}  # the parameter arrays are replaced by rows of the packed ones
        views = {i: self.packed[names[key]][r] for i, (key, r) in index.items() if key in names}
        for obj, attr, arr in found:
            if id(arr) in views:
                if isinstance(obj, dict):
                    obj[attr] = views[id(arr)]
                else:
                    setattr(obj, attr, views[id(arr)])
        self.pack_index = {id(views[i]): (names[key], r) for i, (key, r) in index.items() if key in names}

    def prepare_fused(self) -> FusedPlan | None:
        """Plan the fused kernel and allocate its scratch (once); None when the graph keeps
        the node path. :func:`audio.dsp.fused.graph_source` of the plan is the kernel's source."""
        from audio.dsp import fused as F

        if self._plan is not None:
            return self._plan
        plan = F.plan_graph(self)
        if plan is not None:
            self._allocate(plan)
        return plan

    def _allocate(self, plan: FusedPlan) -> None:
        """Allocate the scratch of fused ``plan`` (made for this bank's structure) and repack."""
        from audio.dsp import fused as F

        self.slots = {}
        for name, (k, rows) in plan.slots.items():
            ch = self.nodes[k].ch_out
            shape = (F.LANES, ch, self.max_block + F.ROW_PAD) if rows else (ch, self.max_block, F.LANES)
            self.slots[name] = np.empty(shape, dtype=np.float32)  # zeroed by _pack
        self.lane_scratch = {
            "CO": np.empty((F.CHAIN, 5, F.LANES), np.float32),
            "ST": np.empty((F.CHAIN, 4, F.LANES), np.float32),
            "BY": np.empty((F.CHAIN, F.LANES), np.bool_),
            "GB": np.empty((self.max_block, F.LANES), np.float32),
            "GV": np.empty(F.LANES, np.float32),
        }
        self._pack((*self.slots.values(), *self.lane_scratch.values()))
        self._plan = plan

    def fused_source(self, lanes_name: str = "barkbus_lanes") -> str | None:
        """The source of this graph's fused kernel, importing the lane kernels as module
        ``lanes_name`` (the snapshot tests' view: ``tools/fused_snapshots.py``); None when
        the graph keeps the node path. Nothing is compiled."""
        from audio.dsp import fused as F

        plan = self.prepare_fused()
        return None if plan is None else F.graph_source(self, plan, lanes_name)[0]

    def _setup_fused(self) -> None:
        from dataclasses import replace

        from audio.dsp import fused as F

        made = _PROGRAMS.get(self.structure)
        if made is None:
            plan = self.prepare_fused()
            program = None if plan is None else F.compile_graph(self, plan)
            if plan is None:
                self._pack()
            if len(_PROGRAMS) >= _MAX_PROGRAMS:
                _PROGRAMS.pop(next(iter(_PROGRAMS)), None)  # the oldest (another thread may race)
            _PROGRAMS[self.structure] = (None if plan is None else replace(plan, nodes=()), program)
        else:
            plan, program = made
            if plan is not None:
                self._allocate(replace(plan, nodes=tuple(self.nodes)))
            else:
                self._pack()
        self._program = program

    @property
    def fused(self) -> bool:
        """Whether :meth:`process` runs the fused kernel."""
        return self._program is not None

    @property
    def metered(self) -> bool:
        """Whether :attr:`output` holds each processed block (for meters: a voice's peak,
        the profiler's). A voice's or submix's output rows feed only meters: a send reads the
        signal before them, so when off the fused kernels' lane paths skip storing them
        (1 MB a block at 256 voices of the Skate stream voice and echo submix); the mix is
        the same bit for bit. On by default; the mixer turns it off unless meters are on
        (:attr:`audio.dsp.mixer.Mixer.meters`)."""
        return bool(self.meter[0])

    @metered.setter
    def metered(self, on: bool) -> None:
        self.meter[0] = on

    def invalidate(self) -> None:
        """Forget the fused kernel's cached arguments (after re-wiring a send)."""
        self._args = None

    # -- instances ---------------------------------------------------------------------
    def alloc(self, v: int) -> None:
        """Activate instance ``v`` with default parameters and cleared state."""
        for node in self.nodes:
            node.reset(v)
        self.input[v] = 0.0  # sends may have reached the instance while it was idle
        self.active[v] = True
        self.asleep[v] = False
        self.band[v] = 0
        self._update_act()

    def free(self, v: int) -> None:
        self.active[v] = False
        self.asleep[v] = False
        if self._rsp is not None and self.src_off[v] >= 0:
            self.pool.release(int(self.src_off[v]))
            self.src_off[v] = -1
            self.src_len[v] = 0
        self._update_act()

    def _update_act(self) -> None:
        self.act = np.flatnonzero(self.active & ~self.asleep).astype(np.int64)

    def sleep(self, insts: np.ndarray) -> None:
        """Leave the allocated instances ``insts`` out of processing (state and parameters
        kept); their output rows read as silence until they run again."""
        self.asleep[insts] = True
        self.output[insts] = 0.0
        self._update_act()

    def wake(self, v: int) -> bool:
        """Process instance ``v`` again from the next block; whether it was asleep."""
        if not self.asleep[v]:
            return False
        self.asleep[v] = False
        self._update_act()
        return True

    def idle(self, insts: np.ndarray, settled: bool = True) -> np.ndarray:
        """Which of ``insts`` (instance indexes) are silent once their input is: every
        signal history below :data:`QUIET_FLOOR` and, with ``settled``, no parameter change
        pending and no ramp running. One numpy pass per node array, whatever the count."""
        ok = np.ones(insts.shape[0], dtype=np.bool_)
        if insts.shape[0] == 0:
            return ok
        for node in self.nodes:
            if settled and node.PARAMS:  # a kind without parameters never clears its flag
                ok &= ~node.dirty[insts]
                for a in node.ramps:
                    ok &= getattr(node, a)[insts] == 0
            for a in node.signal:
                hist = getattr(node, a)[insts].reshape(insts.shape[0], -1)
                ok &= np.abs(hist).max(axis=1, initial=0.0) < QUIET_FLOOR
        return ok

    def free_slots(self) -> np.ndarray:
        return np.flatnonzero(~self.active)

    def load_source(self, v: int, pcm: np.ndarray, sample_rate: float, wait: int) -> None:
        """Give voice instance ``v`` its mono float32 source at ``sample_rate`` Hz."""
        assert self._rsp is not None
        if self.src_off[v] >= 0:
            self.pool.release(int(self.src_off[v]))
        self.src_off[v] = self.pool.add(np.asarray(pcm, dtype=np.float32))
        self.src_len[v] = pcm.shape[0]
        self.src_sample_rate[v] = float(sample_rate)
        self.ipos[v] = self.frac[v] = 0
        self.wait[v] = wait
        self.rel_left[v] = 0
        self.ended_at[v] = -1

    def release(self, v: int, samples: int) -> None:
        """Fade instance ``v`` out linearly over ``samples`` samples, then end it."""
        if self.ended_at[v] < 0 and self.rel_left[v] == 0:
            self.rel_left[v] = max(int(samples), 1)
            self.rel_total[v] = max(int(samples), 1)

    # -- parameters --------------------------------------------------------------------
    def set(self, v: int, key: str, value: float) -> None:
        """Set ``"NODE.param"`` of instance ``v`` (applied at the next block boundary)."""
        self.set_params(v, {key: value})

    def set_params(self, v: int, params: Mapping[str, float]) -> None:
        """Set each ``"NODE.param"`` of ``params`` on instance ``v``, as :meth:`set` (each key
        resolved once per bank).

        Parameters
        ----------
        v:
            The instance.
        params:
            ``"NODE.param"`` values in each parameter's unit (Hz, dB, seconds; ``pitch`` in 1/4096).
        """
        keys = self._keys
        for key, value in params.items():
            target = keys.get(key)
            if target is None:
                target = keys[key] = self._resolve(key)
            arr, dirty = target
            value = float(value)
            if arr[v] != value or not dirty[v]:
                arr[v] = value
                dirty[v] = True

    def _resolve(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """The array of parameter ``key`` and its node's dirty flags, or a KeyError naming the
        graph's keys."""
        node_id, _, param = key.partition(".")
        try:
            node = self.by_id[node_id]
            return node.params[param], node.dirty
        except KeyError:
            raise KeyError(
                f"graph {self.spec.name!r} has no parameter {key!r} "
                f"(it has: {', '.join(self.spec.param_keys())})"
            ) from None

    def get(self, v: int, key: str) -> float:
        node_id, _, param = key.partition(".")
        return float(self.by_id[node_id].params[param][v])

    # -- processing --------------------------------------------------------------------
    def process(self, n: int, t0: int) -> None:
        """Run the graph over the active instances for ``n`` samples starting at ``t0``."""
        act = self.act
        if act.shape[0] == 0:
            return
        prog = self._program
        if prog is None:
            self.process_nodes(n, t0)
            return
        args = self._fused_args(prog)
        if self._entry is not None:
            self._entry(act, n, t0, self._sample_rate_hz, *args)
            return
        prog.fn(act, n, t0, self._sample_rate_hz, *args)
        self._entry = _entry_point(prog.fn, (act, n, t0, self._sample_rate_hz, *args))

    def warm(self) -> None:
        """Load the fused kernel now (from numba's cache, or compile it), so the first block
        that plays through this graph does not pay for it; no sample or state changes."""
        prog = self._program
        if prog is None:
            return
        prog.fn(self.act[:0], 0, 0, float(self.sample_rate), *self._fused_args(prog))

    def _fused_args(self, prog: FusedProgram) -> tuple:
        """The fused kernel's arrays, rebuilt after a re-wiring or when the sample pool grew."""
        if self._args is None or (self._rsp is not None and self._args_pool is not self.pool.data):
            self._entry = None
            self._args = prog.args(self)
            self._args_pool = self.pool.data if self._rsp is not None else None
        return self._args

    def process_nodes(self, n: int, t0: int) -> None:
        """The reference path: one compiled kernel call per node over all active instances."""
        act = self.act
        if act.shape[0] == 0:
            return
        for node in self.nodes:
            node.run(act, n, t0)
        if self._rsp is None:
            K.clear_rows(act, self.input, n)  # consumed: ready for the next block's sends

    def clear_input(self, n: int) -> None:
        """Zero the active instances' inputs (:meth:`process` does it once it has read them)."""
        K.clear_rows(self.act, self.input, n)

    def routes(self) -> list[tuple[Send, str]]:
        """Each send node with its destination string."""
        return [(s, s.spec.to) for s in self.sends]  # type: ignore[misc]
