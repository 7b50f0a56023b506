"""The mixer: graph banks for voices and submixes, the buses, routing and ducking.

Processing order per block: ducking envelopes, voice banks, submix banks, then buses in
dependency order, the ``master`` bus last. Every send adds into its destination's input in
instance order, so the sum is the same for the same set of voices whatever the block size.

:meth:`Mixer.sleep_idle` (the engine calls it on a fixed sample grid) puts to sleep every
submix slot no playing voice sends to and every bus nothing awake sends to (the master too:
a sleeping bus's output rows are silence) once they are idle (:meth:`GraphBank.idle`); a
voice start or a parameter set wakes what it reaches.
"""

from __future__ import annotations

import os

import numpy as np

from audio.core.errors import GraphError
from audio.dsp import kernels as K
from audio.dsp.bank import LAYOUTS, GraphBank
from audio.dsp.graph import GraphSpec, load_graph
from audio.dsp.nodes import Send, SubmixInput
from audio.dsp.pool import SamplePool

__all__ = ["Mixer", "Ducker"]


class Ducker:
    """A bus-level ducker with ``bands`` priority bands.

    While a trigger ``key`` held at band ``b`` is on, every band below ``b`` fades to
    ``volume_db`` over ``fade_out_ms``; after the last trigger above it is released the band
    holds for ``recovery_ms`` and fades back over ``fade_in_ms`` (linear in gain). The state
    lives on the bus, so a duck outlives the voice that caused it.
    """

    def __init__(self, spec, sample_rate: int, max_block: int) -> None:
        self.spec = spec
        b = spec.bands
        self.floor = float(10.0 ** (spec.volume_db / 20.0))
        ms = sample_rate / 1000.0
        self.down = (1.0 - self.floor) / max(spec.fade_out_ms * ms, 1.0)
        self.up = (1.0 - self.floor) / max(spec.fade_in_ms * ms, 1.0)
        self.recovery = int(round(spec.recovery_ms * ms))
        self.env = np.ones(b)
        self.held = np.zeros(b, dtype=np.int64)
        self.hold_left = np.zeros(b, dtype=np.int64)
        self.buf = np.ones((b, max_block), dtype=np.float32)
        self.keys: dict[str, int] = {}
        self._still = True
        """Every band at rest (released and recovered, or held at the floor) and ``buf`` filled
        with its gains: running changes nothing until a trigger changes."""
        self._settled = False
        """Every band came to rest in the last run (whose block still reads ``buf``)."""

    def set(self, key: str, band: int, on: bool) -> None:
        if on:
            self.keys[key] = int(band)
        else:
            self.keys.pop(key, None)
        self.held[:] = 0
        for kb in self.keys.values():
            self.held[: max(0, min(kb, self.held.shape[0]))] += 1
        self._still = self._settled = False

    def gain(self, band: int) -> float:
        """Current linear gain of ``band``."""
        return float(self.env[band])

    @property
    def still(self) -> bool:
        """Every band at rest and ``buf`` holding their gains: :meth:`run` changes nothing."""
        return self._still

    def run(self, n: int) -> None:
        if self._still:
            return
        if self._settled:  # at rest since the last run: every run from now on writes these gains
            self.buf[:] = self.env.astype(np.float32)[:, None]
            self._still = True
            return
        self._settled = K.duck_envelope(
            self.env, self.held, self.hold_left, n, self.floor, self.down, self.up, self.recovery, self.buf
        )


class Mixer:
    """All DSP state of an engine.

    Parameters
    ----------
    sample_rate: Hz (48,000 by default).
    layout: ``"stereo"`` or ``"5.1"`` (the master's channels).
    max_block: largest block in samples.
    voice_capacity: instances per voice graph (the voice budget plus steal headroom).
    submix_slots: instances per submix graph (Skate: stream slots, channel * 2 + k).
    pool_samples: initial size of the sample pool holding the playing sources (samples).
    fused: run each graph as one fused kernel (bit-identical to the node-by-node path, which
        ``fused=False`` or ``$BARKBUS_FUSED=0`` selects).
    dsp: False for a decisions-only engine, which only advances the sources' positions
        (:mod:`audio.dsp.skip`): no fused kernel is planned, compiled or loaded and the
        sample pool keeps lengths, not samples; the banks' buffers are one sample long
        (nothing is processed).
    meters: keep the voice and submix banks' output rows for meters (:attr:`meters`).
    """

    def __init__(
        self,
        sample_rate: int = 48_000,
        layout: str = "stereo",
        max_block: int = 4096,
        voice_capacity: int = 144,
        submix_slots: int = 16,
        pool_samples: int = 1 << 22,
        fused: bool | None = None,
        dsp: bool = True,
        meters: bool = False,
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
        self.sample_rate = sample_rate
        self.layout = layout
        self.channels = LAYOUTS[layout]
        self.max_block = max_block if dsp else 1
        self.voice_capacity = voice_capacity
        self.submix_slots = submix_slots
        self.dsp = dsp
        self.pool = SamplePool(pool_samples, keep_samples=dsp)
        self.fused = dsp and (os.environ.get("BARKBUS_FUSED", "1") != "0" if fused is None else fused)
        self.voice_banks: dict[str, GraphBank] = {}
        self.submix_banks: dict[str, GraphBank] = {}
        self.buses: dict[str, GraphBank] = {}
        self.duckers: dict[str, Ducker] = {}
        self._bus_order: list[GraphBank] = []
        self.banks: tuple[GraphBank, ...] = ()
        """Every bank in processing order: voice banks, submix banks, buses (master last)."""
        self._ducker_list: tuple[Ducker, ...] = ()
        self._bus_edges: dict[str, set[str]] = {}
        self._meters = meters
        self._master = self.bus("master")

    @property
    def meters(self) -> bool:
        """Whether the voice and submix banks keep their output rows, which only meters read
        (:attr:`audio.dsp.bank.GraphBank.metered`: ``Voice.peak_dbfs``, the profiler's
        peaks). Off, a many-voice block skips storing them; the mix is the same. Setting it
        takes effect from the next block (the live player sets it from another thread)."""
        return self._meters

    @meters.setter
    def meters(self, on: bool) -> None:
        self._meters = on
        for bank in (*self.voice_banks.values(), *self.submix_banks.values()):
            bank.metered = on

    # -- loading -----------------------------------------------------------------------
    def _wire(self, bank: GraphBank) -> None:
        for node, to in bank.routes():
            kind, _, name = to.partition(":")
            if kind == "bus":
                if bank.spec.kind == "bus" and name == bank.spec.name:
                    raise GraphError(bank.spec.path, node.spec.id, "to", "a bus cannot send to itself")
                dst = self.bus(name)
                node.target = dst.input
                node.dest[:] = 0
                if name in self.duckers:
                    node.duck = self.duckers[name].buf
                if bank.spec.kind == "bus":
                    self._bus_edges.setdefault(bank.spec.name, set()).add(name)
            else:
                if bank.spec.kind != "voice":
                    raise GraphError(bank.spec.path, node.spec.id, "to", "only voice graphs send to submixes")
                sub = self.submix(name)
                node.target = sub.input
                node.dest[:] = -1
        bank.invalidate()
        self._wire_boxes()
        if bank.spec.kind == "bus":
            self._order_buses()
        self.banks = (*self.voice_banks.values(), *self.submix_banks.values(), *self._bus_order)
        self._ducker_list = tuple(self.duckers.values())

    def _wire_boxes(self) -> None:
        """Give each submix whose only sender is one send of one voice graph, both fused, its
        lane box (:meth:`audio.dsp.nodes.Send.box_into`: a full voice group sending to 16 of
        its instances in order hands its lanes over without the rows); every other send into
        a submix sends through the rows. Sums of several senders keep the rows' order."""
        for name, sub in self.submix_banks.items():
            senders = [
                (vb, node)
                for vb in self.voice_banks.values()
                for node, to in vb.routes()
                if to == f"submix:{name}"
            ]
            sub0 = sub.nodes[0]
            if not isinstance(sub0, SubmixInput):
                continue
            boxed = len(senders) == 1 and sub.fused and senders[0][0].fused and sub0.boxed.shape[0] > 0
            for vb, node in senders:
                assert isinstance(node, Send)
                if boxed and node.box is not sub0.box:
                    node.box_into(sub0)
                elif not boxed and node.boxed.shape[0]:
                    node.unbox()
                else:
                    continue
                vb.invalidate()

    def _order_buses(self) -> None:
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(b: str) -> None:
            if state.get(b) == 2:
                return
            if state.get(b) == 1:
                raise GraphError(self.buses[b].spec.path, None, "to", f"bus routing cycle through {b!r}")
            state[b] = 1
            for c in self._bus_edges.get(b, ()):
                visit(c)
            state[b] = 2
            order.append(b)

        for b in self.buses:
            visit(b)
        self._bus_order = [self.buses[b] for b in reversed(order)]

    def bus(self, name: str) -> GraphBank:
        """The bus ``name`` (loaded from ``graphs/NAME.toml`` on first use)."""
        if name not in self.buses:
            spec = load_graph(name)
            self._check_kind(spec, "bus")
            bank = GraphBank(
                spec, 1, self.sample_rate, self.layout, self.max_block, fused=self.fused, pack=self.dsp
            )
            bank.alloc(0)
            self.buses[name] = bank
            if spec.ducker is not None:
                self.duckers[name] = Ducker(spec.ducker, self.sample_rate, self.max_block)
            self._wire(bank)
        return self.buses[name]

    def submix(self, name: str) -> GraphBank:
        if name not in self.submix_banks:
            spec = load_graph(name)
            self._check_kind(spec, "submix")
            bank = GraphBank(
                spec,
                self.submix_slots,
                self.sample_rate,
                self.layout,
                self.max_block,
                fused=self.fused,
                pack=self.dsp,
            )
            bank.metered = self._meters
            self.submix_banks[name] = bank
            self._wire(bank)
        return self.submix_banks[name]

    def voice_bank(self, name: str) -> GraphBank:
        if name not in self.voice_banks:
            spec = load_graph(name)
            self._check_kind(spec, "voice")
            bank = GraphBank(
                spec,
                self.voice_capacity,
                self.sample_rate,
                self.layout,
                self.max_block,
                self.pool,
                fused=self.fused,
                pack=self.dsp,
            )
            bank.metered = self._meters
            self.voice_banks[name] = bank
            self._wire(bank)
        return self.voice_banks[name]

    @staticmethod
    def _check_kind(spec: GraphSpec, kind: str) -> None:
        if spec.kind != kind:
            raise GraphError(
                spec.path, None, "graph.kind", f"used as a {kind} graph but declares {spec.kind!r}"
            )

    def prepare(self, voice_graphs: list[str] | tuple[str, ...] = ()) -> None:
        """Load ``voice_graphs`` (and the submixes and buses they send to) and every bank's
        compiled kernel now, before the first block: a graph's first voice then costs no
        loading (offline, no first-block stall; live, none on the render thread). A
        decisions-only mixer loads the graphs only."""
        for name in voice_graphs:
            self.voice_bank(name)
        if not self.dsp:
            return
        for bank in self.banks:
            bank.warm()

    # -- control -----------------------------------------------------------------------
    def submix_instance(self, name: str, slot: int) -> GraphBank:
        """Make sure slot ``slot`` of submix ``name`` is running (its state then persists)."""
        bank = self.submix(name)
        if not 0 <= slot < bank.capacity:
            raise ValueError(f"submix slot {slot} outside 0..{bank.capacity - 1}")
        if not bank.active[slot]:
            bank.alloc(slot)
        elif bank.wake(slot):
            self.wake_downstream(bank)
        return bank

    def wake_downstream(self, bank: GraphBank) -> None:
        """Wake every bus ``bank`` reaches through its sends (through submixes too), so the
        signal it is about to send is processed all the way to the master."""
        for _node, to in bank.routes():
            kind, _, name = to.partition(":")
            if kind == "bus":
                dst = self.buses[name]
                dst.wake(0)
                self.wake_downstream(dst)
            else:
                self.wake_downstream(self.submix_banks[name])

    def sleep_idle(self) -> None:
        """Put to sleep the submix slots no active voice sends to and the buses no awake
        instance sends to, when they are idle (:meth:`GraphBank.idle`). Their
        skipped output would be below :data:`audio.dsp.bank.QUIET_FLOOR`; whether one sleeps
        depends only on the state at this sample, so it is the same whatever the block size."""
        fed = self._fed_slots()
        for name, sb in self.submix_banks.items():
            cand = sb.act
            if name in fed:
                cand = cand[~np.isin(cand, np.concatenate(fed[name]))]
            if cand.shape[0]:
                quiet = cand[sb.idle(cand)]
                if quiet.shape[0]:
                    sb.sleep(quiet)
        feeding = self._bus_senders()
        for bus in self._bus_order:
            name = bus.spec.name
            if bus.act.shape[0] == 0:
                continue
            if name not in feeding and bus.idle(bus.act)[0]:
                bus.sleep(bus.act)
            else:
                feeding.update(to[4:] for _n, to in bus.routes() if to.startswith("bus:"))

    def _bus_senders(self) -> set[str]:
        """The buses an active voice or submix instance sends to."""
        return {
            to[4:]
            for b in [*self.voice_banks.values(), *self.submix_banks.values()]
            if b.act.shape[0]
            for _n, to in b.routes()
            if to.startswith("bus:")
        }

    def _fed_slots(self) -> dict[str, list[np.ndarray]]:
        """Per submix graph, the slots its active voices send to (arrays, may repeat)."""
        fed: dict[str, list[np.ndarray]] = {}
        for vb in self.voice_banks.values():
            for node, to in vb.routes():
                if to.startswith("submix:") and vb.act.shape[0]:
                    fed.setdefault(to[7:], []).append(node.dest[vb.act])  # type: ignore[attr-defined]
        return fed

    def all_fed(self) -> bool:
        """Whether every awake submix slot has an active voice sending to it and every awake
        bus an awake sender: then :meth:`sleep_idle` would put nothing to sleep, however
        idle anything is (and until a voice ends or a control point changes who sends)."""
        fed = self._fed_slots()
        for name, sb in self.submix_banks.items():
            if sb.act.shape[0] and (
                name not in fed or not set(sb.act.tolist()) <= {s for d in fed[name] for s in d.tolist()}
            ):
                return False
        feeding = self._bus_senders()
        for bus in self._bus_order:
            if bus.act.shape[0]:
                if bus.spec.name not in feeding:
                    return False
                feeding.update(to[4:] for _n, to in bus.routes() if to.startswith("bus:"))
        return True

    def set_submix(self, name: str, slot: int, **params: float) -> None:
        """Set parameters (``"NODE.param"`` keys) of one submix instance."""
        self.submix_instance(name, slot).set_params(slot, params)

    def set_bus(self, name: str, **params: float) -> None:
        bank = self.bus(name)
        bank.set_params(0, params)
        bank.wake(0)
        self.wake_downstream(bank)

    def duck(self, bus: str, key: str, band: int, on: bool) -> None:
        """Hold (``on``) or release the trigger ``key`` at ``band`` on ``bus``'s ducker."""
        self.bus(bus)
        if bus not in self.duckers:
            raise GraphError(self.buses[bus].spec.path, None, "ducker", f"bus {bus!r} has no [ducker]")
        self.duckers[bus].set(key, band, on)

    # -- processing --------------------------------------------------------------------
    def process(self, n: int, t0: int) -> np.ndarray:
        """Render ``n`` samples starting at sample ``t0``; returns a (channels, n) view."""
        if not 0 < n <= self.max_block:
            raise ValueError(f"block of {n} samples outside 1..{self.max_block}")
        for d in self._ducker_list:
            d.run(n)
        for b in self.banks:  # processing order, kept by _wire
            b.process(n, t0)
        return self._master.output[0, :, :n]
