"""DSP node kinds: one class per kind, holding everything the kind is and does.

A kind class carries

* its parameters (:class:`Param`: default, range, unit) and a msgspec struct of them
  (:meth:`Node.params_struct`), from which a graph file's ``params`` table is validated;
* its runtime state over all instances of a graph bank (``__init__``, :meth:`Node.reset`);
* its node-path step (:meth:`Node.run`: one compiled kernel of :mod:`audio.dsp.kernels` over
  the active instances; the reference path);
* its fused-kernel emitter (:meth:`Node.emit`: the source lines :mod:`audio.dsp.fused` puts in
  a graph's generated function, calling the per-instance forms of the same kernels) and the
  arrays those lines use (:attr:`Node.arrays`).

:data:`NODE_KINDS` maps a kind's name (as graph files spell it) to its class.
"""

from __future__ import annotations

import mmap
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, ClassVar, Protocol

import msgspec
import numpy as np

from audio.dsp import kernels as K
from audio.dsp.pool import SamplePool

__all__ = [
    "NODE_KINDS",
    "Param",
    "NodeSpecLike",
    "Slot",
    "Site",
    "Node",
    "Resampler",
    "Biquad",
    "Peak",
    "HighPass",
    "LowPass",
    "Gain",
    "Send",
    "Delay",
    "Pan",
    "SubmixInput",
    "pan_send_lines",
]

_NO_DUCK = np.ones((0, 1), dtype=np.float32)
_NO_BOX = np.zeros((0, 1, 16), dtype=np.float32)
_NO_BOXED = np.zeros(0, dtype=np.bool_)
_NO_NBOX = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Param:
    """One node parameter: float, ``lo <= value <= hi``, ``default`` when a graph omits it."""

    default: float
    lo: float
    hi: float
    unit: str
    doc: str


class NodeSpecLike(Protocol):
    """What a node needs of its graph-file entry (:class:`audio.dsp.graph.NodeSpec`)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def params(self) -> Mapping[str, float]: ...
    @property
    def input(self) -> str | None: ...
    @property
    def to(self) -> str | None: ...


@dataclass(frozen=True)
class Slot:
    """A signal in a generated function: ``rows`` (instance rows ``[index, channel, sample]``,
    ``index`` ``j`` for a group's scratch rows, ``v`` for the bank's output) and ``lanes``
    (sample-major ``[channel, sample, lane]``)."""

    rows: str
    lanes: str
    index: str = "j"

    def row(self, *more: str) -> str:
        """This instance's row (``more``: further indexes, e.g. a channel)."""
        return f"{self.rows}[{', '.join((self.index, *more))}]"


@dataclass(frozen=True)
class Site:
    """Where a node's fused code runs: its arrays' name ``prefix``, the slot it reads (``src``)
    and writes (``dst``), whether it works sample-major (``lanes``), the output layout code
    and the lane widths a group of this bank can have (narrowest first)."""

    prefix: str
    src: Slot | None
    dst: Slot
    lanes: bool
    layout: int
    widths: tuple[int, ...]

    def a(self, attr: str) -> str:
        """The name of this node's array ``attr`` in the generated function."""
        return self.prefix + attr


_EACH = ["        for j in range(m):", "            v = act[g0 + j]"]


def branches(cases: list[tuple[str, list[str]]], ind: str) -> list[str]:
    """``if``/``elif``/``else`` over ``cases`` (condition, body lines); the last case is the
    ``else`` and a single case is its body alone, so no branch is unreachable."""
    if len(cases) == 1:
        return cases[0][1]
    out: list[str] = []
    for i, (cond, body) in enumerate(cases):
        head = "else:" if i == len(cases) - 1 else f"{'if' if i == 0 else 'elif'} {cond}:"
        out.append(ind + head)
        out += ["    " + line for line in body]
    return out


def width_expr(widths: tuple[int, ...], lanes: str = "m") -> str:
    """The expression for a group's lane width ``w`` (one of ``widths``) from the number of
    lanes it fills (``lanes``: an expression, by default the group's size ``m``)."""
    if len(widths) == 1:
        return str(widths[0])
    rest = width_expr(widths[1:], lanes)
    return f"{widths[0]} if {lanes} <= {widths[0]} else " + (f"({rest})" if len(widths) > 2 else rest)


_MAPPED_BYTES = 1 << 18
"""Zeroed float32 arrays from this size up are mapped pages (:func:`untouched_zeros`)."""


def untouched_zeros(shape: tuple[int, ...]) -> np.ndarray:
    """A zeroed float32 array that costs nothing until its pages are written: from
    :data:`_MAPPED_BYTES` up, anonymous mapped memory (zero pages the kernel provides on first
    touch) instead of ``numpy.zeros``, which memsets memory the allocator reuses. A bank's
    per-node rows (``capacity x channels x max_block``, megabytes per bank) are mostly never
    touched: the fused kernel writes only the graph's output rows, and only the active ones."""
    size = int(np.prod(shape)) * 4
    if size < _MAPPED_BYTES:
        return np.zeros(shape, dtype=np.float32)
    return np.frombuffer(mmap.mmap(-1, size), dtype=np.float32).reshape(shape)


class Node(ABC):
    """A node kind and, as an instance, one node's state across every instance of a bank.

    Parameters
    ----------
    spec : NodeSpecLike
        The node's graph-file entry (id, kind, parameter values, input, destination).
    cap : int
        Instances in the bank.
    ch_in, ch_out : int
        Channels read and written.
    sample_rate : int
        Engine sample rate (Hz).
    layout : int
        Output layout code (0 stereo, 1 5.1).
    max_block : int
        Largest block (samples).
    inp : numpy.ndarray or None
        The rows this node reads ``(cap, ch_in, max_block)`` (None for a resampler).
    """

    kind: ClassVar[str]
    doc: ClassVar[str]
    PARAMS: ClassVar[dict[str, Param]] = {}
    """The parameters by name (graph files set them as ``params = { name = value }``)."""
    arrays: ClassVar[tuple[str, ...]] = ()
    """Arrays the fused code passes (state attributes and parameter names), in order."""
    lane_input: ClassVar[bool] = False
    """Whether the fused form can read its input sample-major."""
    first: ClassVar[bool] = False
    """A graph's first node (a source): Rsp0 or Sub0."""
    passes_input: ClassVar[bool] = False
    """Its output is its input (a send)."""
    signal: ClassVar[tuple[str, ...]] = ()
    """State arrays holding signal history (float32, instance first): an instance with zero
    input is idle once all of them are below :data:`audio.dsp.bank.QUIET_FLOOR`."""
    ramps: ClassVar[tuple[str, ...]] = ()
    """Int arrays counting the samples a parameter ramp still runs (0: settled)."""

    def __init__(
        self,
        spec: NodeSpecLike,
        cap: int,
        ch_in: int,
        ch_out: int,
        sample_rate: int,
        layout: int,
        max_block: int,
        inp: np.ndarray | None,
    ) -> None:
        self.spec = spec
        self.ch_out = ch_out
        self.sample_rate = sample_rate
        self.layout = layout
        self.defaults = dict(spec.params)
        self.params = {p: np.full(cap, self.defaults[p], dtype=np.float64) for p in self.PARAMS}
        self.dirty = np.ones(cap, dtype=np.bool_)
        self.inp = inp
        if self.passes_input:
            assert inp is not None, "a send always has an input"
            self.out: np.ndarray = inp
        else:
            self.out = untouched_zeros((cap, ch_out, max_block))
        self._state(cap, ch_in, ch_out, max_block)

    @staticmethod
    def channels_out(ch_in: int, layout_channels: int) -> int:
        """Channels written, from channels read and the layout's channel count."""
        return ch_in

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        """Allocate the kind's state arrays."""
        return None  # a kind without state arrays keeps this default

    def reset(self, v: int) -> None:
        """Put instance ``v`` back to the defaults, with cleared history."""
        for p, arr in self.params.items():
            arr[v] = self.defaults[p]
        self.dirty[v] = True

    @abstractmethod
    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        """The node-path step: ``n`` samples from ``t0`` for the instances ``act``."""

    @abstractmethod
    def emit(self, s: Site) -> list[str]:
        """Source lines of the fused form, inside a graph function's group loop."""

    def array(self, name: str) -> Any:
        """Array ``name`` of :attr:`arrays` (a parameter or a state attribute)."""
        return self.params[name] if name in self.params else getattr(self, name)

    @classmethod
    @cache
    def params_struct(cls) -> type[msgspec.Struct]:
        """A msgspec struct of the parameters (names, float type, ranges, defaults; unknown
        names refused), to validate a graph file's ``params`` table against."""
        fields = [
            (
                name,
                Annotated[float, msgspec.Meta(ge=p.lo, le=p.hi, description=f"{p.doc} ({p.unit})")],
                p.default,
            )
            for name, p in cls.PARAMS.items()
        ]
        return msgspec.defstruct(f"{cls.__name__}Params", fields, kw_only=True, forbid_unknown_fields=True)


class Resampler(Node):
    kind = "Rsp0"
    doc = "Linear 16.16 resampler from the source's sample rate to the engine's; pitch 4096 = 1.0."
    PARAMS = {
        "pitch": Param(4096.0, 0.0, 1 << 20, "1/4096 (4096 = 1.0)", "playback-rate ratio (pitch and speed)")
    }
    arrays = (
        "pool",
        "src_off",
        "src_len",
        "src_sample_rate",
        "rstep",
        "ipos",
        "frac",
        "wait",
        "rel_left",
        "rel_total",
        "ended_at",
        "dirty",
        "pitch",
    )
    first = True

    source: SamplePool
    """The bank's sample pool (the bank sets it)."""

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        self.src_off = np.full(cap, -1, dtype=np.int64)
        self.src_len = np.zeros(cap, dtype=np.int64)
        self.src_sample_rate = np.full(cap, float(self.sample_rate))
        self.ipos = np.zeros(cap, dtype=np.int64)
        self.frac = np.zeros(cap, dtype=np.int64)
        self.rstep = np.zeros(cap, dtype=np.int64)
        self.wait = np.zeros(cap, dtype=np.int64)
        self.rel_left = np.zeros(cap, dtype=np.int64)
        self.rel_total = np.ones(cap, dtype=np.int64)
        self.ended_at = np.full(cap, -1, dtype=np.int64)

    @property
    def pool(self) -> np.ndarray:
        """The sample pool's current storage."""
        return self.source.data

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        K.rsp0(
            self.source.data,
            self.src_off,
            self.src_len,
            act,
            self.out,
            n,
            t0,
            self.dirty,
            self.params["pitch"],
            self.src_sample_rate,
            float(self.sample_rate),
            self.rstep,
            self.ipos,
            self.frac,
            self.wait,
            self.rel_left,
            self.rel_total,
            self.ended_at,
        )

    def emit(self, s: Site) -> list[str]:
        a = s.a
        out = f"{s.dst.lanes}[0, :, j]" if s.lanes else s.dst.row("0")
        each = _EACH + [
            f"            K.rsp0_voice(v, {a('pool')}, {a('src_off')}, {a('src_len')}, {out}, n, t0, "
            f"{a('dirty')}, {a('pitch')}, {a('src_sample_rate')}, sample_rate, {a('rstep')}, "
            f"{a('ipos')}, {a('frac')}, "
            f"{a('wait')}, {a('rel_left')}, {a('rel_total')}, {a('ended_at')})"
        ]
        if not s.lanes or 16 not in s.widths:
            return each
        # a full-width group runs the vector kernel (narrower ones keep the per-instance loop)
        full = (
            f"        LN.rsp0_lanes(act, g0, m, w, {s.dst.lanes}[0], n, t0, {a('pool')}, {a('src_off')}, "
            f"{a('src_len')}, {a('dirty')}, {a('pitch')}, {a('src_sample_rate')}, sample_rate, "
            f"{a('rstep')}, {a('ipos')}, {a('frac')}, {a('wait')}, {a('rel_left')}, {a('rel_total')}, "
            f"{a('ended_at')})"
        )
        if len(s.widths) == 1:
            return [full]
        return ["        if w == 16:", "    " + full, "        else:", *("    " + line for line in each)]


class SubmixInput(Node):
    kind = "Sub0"
    doc = "Submix/bus input: the sum of everything sent to this instance."
    arrays = ("inp", "box", "boxed")
    first = True

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        # the lane box of a mono submix: block q holds instances 16q .. 16q + 15 sample-major,
        # filled straight from a voice group's lanes by the submix's only send (the mixer wires
        # it: Mixer._wire_boxes) when that group sends to exactly those instances, in order
        nb = cap // 16 if ch_in == 1 else 0
        self.box: np.ndarray = untouched_zeros((nb, max_block, 16)) if nb else _NO_BOX
        self.boxed: np.ndarray = np.zeros(nb, dtype=np.bool_)

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        K.spill_boxes(self.box, self.boxed, self.inp, n)
        K.copy_rows(act, self.inp, self.out, n)

    def emit(self, s: Site) -> list[str]:
        inp, box, boxed = s.a("inp"), s.a("box"), s.a("boxed")
        if s.lanes:
            return [f"        LN.inputs_to_lanes(act, g0, m, {inp}, {s.dst.lanes}, n, {box}, {boxed})"]
        return (
            [f"        LN.spill_group(act, g0, m, {box}, {boxed}, {inp}, n)"]
            + _EACH
            + [
                f"            for c in range({inp}.shape[1]):",
                f"                K.copy_row({inp}[v, c], {s.dst.row('c')}, n)",
                f"                K.zero_row({inp}[v, c], n)",
            ]
        )

    def tail(self, s: Site) -> str:
        """After the group loop: a block of the box no group took (its instances not all
        running) goes to the rows, where the sends would have left it."""
        return f"    K.spill_boxes({s.a('box')}, {s.a('boxed')}, {s.a('inp')}, n)"


class Biquad(Node):
    """An RBJ biquad (Direct Form I, float32 step by step as the console computes it)."""

    lane_input = True
    signal = ("state",)

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        self.coefs = np.zeros((cap, 5), dtype=np.float32)  # b0, b1, b2, a1, a2
        self.bypass = np.ones(cap, dtype=np.bool_)
        self.state = np.zeros((cap, ch_in, 4), dtype=np.float32)  # x1, x2, y1, y2

    def reset(self, v: int) -> None:
        super().reset(v)
        self.state[v] = 0.0
        self.bypass[v] = True

    @abstractmethod
    def refresh(self, act: np.ndarray) -> None:
        """Recompute the coefficients of the dirty instances of ``act``."""

    @abstractmethod
    def refresh_line(self, s: Site) -> str:
        """The per-instance coefficient refresh (inside ``for j in range(m)``)."""

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        self.refresh(act)
        K.biquad(act, self.inp, self.out, n, t0, self.coefs, self.bypass, self.state)

    def gather_line(self, s: Site, f: int) -> str:
        """Load this filter's coefficients and channel-c history into lane scratch ``f``."""
        a = s.a
        return (
            f"LN.gather(act, g0, m, {a('coefs')}, {a('bypass')}, {a('state')}, c, CO[{f}], ST[{f}], BY[{f}])"
        )

    def scatter_line(self, s: Site, f: int) -> str:
        """Store lane scratch ``f``'s history."""
        return f"LN.scatter(act, g0, m, {s.a('state')}, c, ST[{f}], BY[{f}])"

    def emit(self, s: Site) -> list[str]:
        a = s.a
        assert s.src is not None and not s.lanes, "lane biquads are emitted by audio.dsp.fused's chains"
        return _EACH + [
            self.refresh_line(s),
            f"            K.biquad_voice(v, {s.src.row()}, {s.dst.row()}, n, t0, {a('coefs')}, "
            f"{a('bypass')}, {a('state')})",
        ]


class Peak(Biquad):
    kind = "PI20"
    doc = "RBJ peaking EQ (the PEAK head shadow); gain is linear and equals the response at the centre."
    PARAMS = {
        "centre_hz": Param(96000.0, 0.0, 1e6, "Hz", "centre frequency"),
        "gain": Param(1.0, 0.0, 64.0, "linear", "response at the centre"),
        "q": Param(3.0, 0.0, 100.0, "Q", "bandwidth"),
    }
    arrays = ("dirty", "centre_hz", "gain", "q", "coefs", "bypass", "state")

    def refresh(self, act: np.ndarray) -> None:
        p = self.params
        K.refresh_peak(
            act,
            self.dirty,
            p["centre_hz"],
            p["gain"],
            p["q"],
            float(self.sample_rate),
            self.coefs,
            self.bypass,
            self.state,
        )

    def refresh_line(self, s: Site) -> str:
        a = s.a
        return (
            f"            K.refresh_peak_voice(v, {a('dirty')}, {a('centre_hz')}, {a('gain')}, {a('q')}, "
            f"sample_rate, {a('coefs')}, {a('bypass')}, {a('state')})"
        )


class _Pass(Biquad):
    """An RBJ high- or low-pass at Q = 1."""

    high: ClassVar[bool]
    arrays = ("dirty", "cutoff_hz", "coefs", "bypass", "state")

    def refresh(self, act: np.ndarray) -> None:
        K.refresh_pass(
            act,
            self.dirty,
            self.params["cutoff_hz"],
            float(self.sample_rate),
            self.high,
            self.coefs,
            self.bypass,
            self.state,
        )

    def refresh_line(self, s: Site) -> str:
        a = s.a
        return (
            f"            K.refresh_pass_voice(v, {a('dirty')}, {a('cutoff_hz')}, sample_rate, {self.high}, "
            f"{a('coefs')}, {a('bypass')}, {a('state')})"
        )


class HighPass(_Pass):
    kind = "HI20"
    doc = "RBJ high-pass at Q = 1; exact bypass at w <= pi/1000 (<= 24 Hz at 48 kHz)."
    PARAMS = {"cutoff_hz": Param(0.0, 0.0, 1e6, "Hz", "cutoff frequency")}
    high = True


class LowPass(_Pass):
    kind = "LI20"
    doc = "RBJ low-pass at Q = 1; exact bypass at w >= 0.999*pi (>= 23,976 Hz at 48 kHz)."
    PARAMS = {"cutoff_hz": Param(96000.0, 0.0, 1e6, "Hz", "cutoff frequency")}
    high = False


class _Ramped(Node):
    """A gain-like node whose level moves over 64 samples; the first value jumps."""

    ramps = ("left",)

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        self.cur = np.zeros(cap)
        self.step = np.zeros(cap)
        self.left = np.zeros(cap, dtype=np.int64)
        self.init = np.zeros(cap, dtype=np.bool_)

    def reset(self, v: int) -> None:
        super().reset(v)
        self.init[v] = False
        self.left[v] = 0


class Gain(_Ramped):
    kind = "Gai0"
    doc = "Linear gain; a change ramps linearly over 64 samples; the first value jumps."
    PARAMS = {"gain": Param(1.0, 0.0, 64.0, "linear", "gain")}
    arrays = ("dirty", "gain", "cur", "step", "left", "init")
    lane_input = True

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        K.gai0(
            act,
            self.inp,
            self.out,
            n,
            self.dirty,
            self.params["gain"],
            self.cur,
            self.step,
            self.left,
            self.init,
        )

    def emit(self, s: Site) -> list[str]:
        a = s.a
        assert s.src is not None
        tail = f"{a('dirty')}, {a('gain')}, {a('cur')}, {a('step')}, {a('left')}, {a('init')}"
        if s.lanes:
            return [f"        LN.gain_lanes(act, g0, m, w, {s.src.lanes}, {s.dst.lanes}, n, {tail}, GB, GV)"]
        return _EACH + [f"            K.gai0_voice(v, {s.src.row()}, {s.dst.row()}, n, {tail})"]

    def levels_line(self, s: Site) -> str:
        """The lane form's levels only (``steady``, ``GV``/``GB``), for a biquad kernel that
        multiplies its input by them (:func:`audio.dsp.kernels.lane_biquads` with ``gain``)."""
        a = s.a
        tail = f"{a('dirty')}, {a('gain')}, {a('cur')}, {a('step')}, {a('left')}, {a('init')}"
        return f"steady = LN.gain_levels(act, g0, m, w, n, {tail}, GB, GV)"


class Send(_Ramped):
    kind = "Sen0"
    doc = (
        "Send to a bus or to the voice's submix slot; the level moves 64/65 of the way over 64 "
        "samples, then holds; the first value jumps. Passes its input through."
    )
    PARAMS = {"level": Param(1.0, 0.0, 64.0, "linear", "send level")}
    arrays = (
        "dirty", "level", "cur", "step", "left", "init", "dest", "target", "duck", "band", "box", "boxed",
        "nbox", "bgain",
    )  # fmt: skip
    passes_input = True

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        super()._state(cap, ch_in, ch_out, max_block)
        self.dest = np.zeros(cap, dtype=np.int64)
        self.target: np.ndarray = np.zeros((1, ch_in, max_block), dtype=np.float32)
        self.duck: np.ndarray = _NO_DUCK
        self.band: np.ndarray = np.zeros(cap, dtype=np.int64)
        self.unbox()
        self.bgain = np.zeros(16, dtype=np.float32)
        """A group's float32 levels (the lane box path's scratch)."""

    def unbox(self) -> None:
        """Send through the destination's input rows only (no lane box: :meth:`box_into`)."""
        self.box: np.ndarray = _NO_BOX
        self.boxed: np.ndarray = _NO_BOXED
        self.nbox: np.ndarray = _NO_NBOX

    def box_into(self, sub0: SubmixInput) -> None:
        """Send into the lane box of ``sub0`` (a submix's input) where a full voice group goes
        to one block of it in order; this send must be the submix's only sender."""
        self.box, self.boxed = sub0.box, sub0.boxed
        self.nbox = np.zeros(sub0.boxed.shape[0], dtype=np.int64)
        """Per block of the box, how many running instances send into it (each call)."""

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        K.sen0(
            act,
            self.inp,
            n,
            self.dirty,
            self.params["level"],
            self.cur,
            self.step,
            self.left,
            self.init,
            self.dest,
            self.target,
            self.duck,
            self.band,
        )

    def emit(self, s: Site) -> list[str]:
        a = s.a
        assert s.src is not None
        return _EACH + [
            f"            K.sen0_voice(v, {s.src.row()}, n, {a('dirty')}, {a('level')}, {a('cur')}, "
            f"{a('step')}, {a('left')}, {a('init')}, {a('dest')}, {a('target')}, {a('duck')}, {a('band')})"
        ]

    @property
    def to_submix(self) -> bool:
        """Whether it sends to a submix (whose lane box it may fill)."""
        return (self.spec.to or "").startswith("submix:")

    def lanes_line(self, s: Site, have_rows: str) -> str:
        """The send reading its input's lanes (rows ``s.src.rows`` only as the fallback's
        scratch, already filled when ``have_rows``): ``LN.send_lanes`` for the group
        (``LN.send_lanes_box`` into a submix)."""
        a = s.a
        assert s.src is not None
        line = (
            f"        LN.send_lanes(act, g0, m, w, {s.src.lanes}, {s.src.rows}, n, {a('dirty')}, "
            f"{a('level')}, {a('cur')}, {a('step')}, {a('left')}, {a('init')}, {a('dest')}, {a('target')}, "
            f"{a('duck')}, {a('band')}, {have_rows})"
        )
        if self.to_submix:
            line = line.replace("LN.send_lanes(", "LN.send_lanes_box(")
            line = line[:-1] + f", {a('box')}, {a('boxed')}, {a('nbox')}, {a('bgain')})"
        return line

    def count_line(self, s: Site) -> str:
        """Before the group loop of a send into a submix: its running instances per block of
        the destination's lane box (``nbox``)."""
        return f"    LN.count_boxes(act, {s.a('dest')}, {s.a('nbox')})"


class Delay(Node):
    kind = "Del0"
    doc = "Whole-sample delay; a change crossfades old and new taps over 128 samples; 0 bypasses."
    PARAMS = {
        "seconds": Param(0.0, 0.0, 10.0, "s", "delay"),
        "max_seconds": Param(0.17, 0.001, 10.0, "s", "longest delay (sizes the buffer)"),
    }
    arrays = ("dirty", "seconds", "buf", "widx", "dcur", "dold", "left")
    signal = ("buf",)
    ramps = ("left",)
    SKEW = 272
    """Samples (17 cache lines of float32) between consecutive instances' first write
    positions. The rings lie a power of two apart, so rings all written from index 0 would keep
    every instance's current samples in the same few cache sets; an odd number of whole lines
    per instance puts 64 consecutive instances in 64 different sets of a 64-set cache (and
    keeps each 16-sample piece on its ring's line boundaries). The ring is zeroed and every
    read is relative to the write position, so no output depends on it."""

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        size = 1 << int(np.ceil(np.log2(np.ceil(self.defaults["max_seconds"] * self.sample_rate) + 1)))
        self.buf = np.zeros((cap, ch_in, size), dtype=np.float32)
        self.widx = np.zeros(cap, dtype=np.int64)
        self.dcur = np.zeros(cap, dtype=np.int64)
        self.dold = np.zeros(cap, dtype=np.int64)
        self.left = np.zeros(cap, dtype=np.int64)

    def reset(self, v: int) -> None:
        super().reset(v)
        self.buf[v] = 0.0
        self.widx[v] = (v * self.SKEW) & (self.buf.shape[2] - 1)
        self.dcur[v] = self.dold[v] = self.left[v] = 0

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        K.del0(
            act,
            self.inp,
            self.out,
            n,
            self.dirty,
            self.params["seconds"],
            float(self.sample_rate),
            self.buf,
            self.widx,
            self.dcur,
            self.dold,
            self.left,
        )

    def emit(self, s: Site) -> list[str]:
        a = s.a
        assert s.src is not None
        # rows, also between lane biquads: its ring buffers are rows, and two tile transposes
        # plus contiguous ring copies cost half what copying strided lane columns does
        return _EACH + [
            f"            K.del0_voice(v, {s.src.row()}, {s.dst.row()}, n, {a('dirty')}, {a('seconds')}, "
            f"sample_rate, {a('buf')}, {a('widx')}, {a('dcur')}, {a('dold')}, {a('left')})"
        ]


class Pan(Node):
    kind = "Pn21"
    doc = (
        "Constant-power pairwise pan of a mono signal to the output layout (+ angle = left); "
        "matrix changes ramp over 64 samples."
    )
    PARAMS = {
        "angle_deg": Param(0.0, -3600.0, 3600.0, "degrees", "direction, + = left"),
        "level": Param(1.0, 0.0, 64.0, "linear", "level"),
    }
    arrays = ("dirty", "angle_deg", "level", "cur", "goal", "step", "left", "init", "scratch")
    ramps = ("left",)

    @staticmethod
    def channels_out(ch_in: int, layout_channels: int) -> int:
        return layout_channels

    def _state(self, cap: int, ch_in: int, ch_out: int, max_block: int) -> None:
        self.cur = np.zeros((cap, ch_out))
        self.goal = np.zeros((cap, ch_out))
        self.step = np.zeros((cap, ch_out))
        self.left = np.zeros(cap, dtype=np.int64)
        self.init = np.zeros(cap, dtype=np.bool_)
        self.scratch = np.zeros(ch_out)

    def reset(self, v: int) -> None:
        super().reset(v)
        self.init[v] = False
        self.left[v] = 0

    def run(self, act: np.ndarray, n: int, t0: int) -> None:
        p = self.params
        K.pn21(
            act,
            self.inp,
            self.out,
            n,
            self.dirty,
            p["angle_deg"],
            p["level"],
            self.layout,
            self.cur,
            self.goal,
            self.step,
            self.left,
            self.init,
            self.scratch,
        )

    def emit(self, s: Site) -> list[str]:
        a = s.a
        assert s.src is not None
        return _EACH + [
            f"            K.pn21_voice(v, {s.src.row()}, {s.dst.row()}, n, {a('dirty')}, {a('angle_deg')}, "
            f"{a('level')}, {s.layout}, {a('cur')}, {a('goal')}, {a('step')}, {a('left')}, {a('init')}, "
            f"{a('scratch')})"
        ]


def pan_send_lines(pan: Site, send: Site, have_rows: str | None = None, keep: str = "True") -> list[str]:
    """A Pn21 and the Sen0 reading its output as one per-instance call
    (:func:`audio.dsp.kernels.pn21_sen0_voice`) on rows, or with ``have_rows`` (whether its
    fallback finds the rows filled) one group call reading the pan's input from lanes
    (``LN.pan_send_lanes``; the pan writes the bank's output rows when ``keep``, an
    expression of the generated function)."""
    a, b = pan.a, send.a
    assert pan.src is not None
    args = (
        f"n, {a('dirty')}, {a('angle_deg')}, "
        f"{a('level')}, {pan.layout}, {a('cur')}, {a('goal')}, {a('step')}, {a('left')}, {a('init')}, "
        f"{a('scratch')}, {b('dirty')}, {b('level')}, {b('cur')}, {b('step')}, {b('left')}, {b('init')}, "
        f"{b('dest')}, {b('target')}, {b('duck')}, {b('band')}"
    )
    if have_rows is not None:
        args += f", {have_rows}, {keep})"
        return [
            f"        LN.pan_send_lanes(act, g0, m, w, {pan.src.lanes}, {pan.src.rows}, {pan.dst.rows}, "
            + args
        ]
    return _EACH + [f"            K.pn21_sen0_voice(v, {pan.src.row()}, {pan.dst.row()}, " + args + ")"]


NODE_KINDS: dict[str, type[Node]] = {
    k.kind: k for k in (Resampler, Peak, HighPass, LowPass, Gain, Send, Delay, Pan, SubmixInput)
}
"""Every node kind by the name graph files use."""
