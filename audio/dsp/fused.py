"""Fused kernels: one compiled call per graph per sub-block, for all of its active instances.

:func:`compile_graph` turns a graph's node list into the source of one numba function, writes it
to a cache directory (``$BARKBUS_CACHE_DIR`` or ``~/.cache/barkbus``; numba caches the machine
code beside it) and imports it. The function walks the active instances in groups of
:data:`LANES` ("voice-major": a group's samples stay in small lane-interleaved scratch buffers
``(LANES, channels, max_block)`` across every node, no full-size intermediate buffer):

* Rsp0, Gai0, Sen0, Del0 and Pn21 run per instance through the SAME per-voice functions the
  node-by-node kernels call (:mod:`audio.dsp.kernels`), on a lane's contiguous
  ``(channels, samples)`` rows, exactly as the node path's;
* the biquads run LANES instances at once: the group's rows are transposed into a
  sample-major ``(max_block, LANES)`` buffer, where each lane is one independent Direct Form I
  recursion with exactly :func:`audio.dsp.kernels.df1`'s operations, written out per lane so
  LLVM's SLP vectoriser packs the lanes into SIMD registers (a vector fma rounds like a scalar
  one), and transposed back; bypassed and empty lanes get zero coefficients and are then
  overwritten with their input;
* up to :data:`CHAIN` biquads in series (HPF -> LPF, or a radio voice's HPF -> LPF -> PEAK)
  share one sample loop at 4 and 8 lanes: a recursion is latency-bound (two dependent fmas per
  sample), so with few voices the filters' recursions overlap instead of running one after
  another (``tools/bench_dsp.py``: 481 real-time voices per core at 1 voice, was 390; 1,442 at
  4, was 991); each filter's operations and bypass are as above.

Parameters are applied at the start of the call exactly as in the node path, sends add into
their destinations in instance order, and the graph's last node is copied to ``bank.output``,
so the result is bit-identical to :meth:`GraphBank.process_nodes`, the test oracle. One
exception is checked at compile time: two sends of one graph into the same destination would
sum in a different order, so such a graph keeps the node path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numba

__all__ = ["LANES", "compile_graph", "cache_dir", "FusedProgram"]

LANES = 16
"""Instances processed together (two AVX registers of float32)."""
ROW_PAD = 48
"""Extra samples per lane row, so lane rows do not sit a multiple of 4 KiB apart (which would
put them all in the same cache sets)."""
_VERSION = 1

# LLVM's SLP vectoriser packs the per-lane recursions into SIMD instructions. It never
# reassociates floating-point arithmetic (fastmath stays off), so results are unchanged.
# (set at run time: not in numba's type stubs)
numba.config.SLP_VECTORIZE = 1  # type: ignore[attr-defined]


def cache_dir() -> Path:
    """Where generated kernel modules live (``$BARKBUS_CACHE_DIR`` or ``~/.cache/barkbus/fused``)."""
    env = os.environ.get("BARKBUS_CACHE_DIR")
    base = Path(env) if env else Path.home() / ".cache" / "barkbus"
    return base / f"fused{_VERSION}"


def _kernel_digest() -> str:
    """Digest of the kernel sources the generated code calls: numba's cache does not notice
    when a callee in another file changes, so their digest is part of every generated module."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for f in ("kernels.py", "filters.py", "fused.py"):
        h.update((here / f).read_bytes())
    return h.hexdigest()[:16]


def _load(prefix: str, source: str) -> ModuleType:
    """Write ``source`` as a module in the cache directory (once) and import it; its name is
    ``prefix`` + a digest of the source and of the kernels it calls."""
    source = f"# kernels {_kernel_digest()}\n" + source
    name = f"{prefix}_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != source:
        tmp = d / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------- the lane biquad
WIDTHS = (4, 8, LANES)
"""A group of m instances runs its biquads at the narrowest of these widths >= m."""


def _biquad_source(L: int) -> list[str]:
    """The L-wide biquad on (max_block, LANES) buffers, one explicit recursion per lane."""
    out = [
        "@nb.njit(**_F)",
        f"def biquad_lanes_{L}(x, y, n, t0, co, st):",
        f'    """Lanes 0..{L - 1}: x[:n, j] -> y[:n, j] (sample-major); co (5, LANES) = b0, b1, b2, -a1,',
        '    -a2; st (4, LANES) = x1, x2, y1, y2."""',
        "    bias = np.float32(1e-18)",
    ]
    for j in range(L):
        out.append(
            f"    b0_{j} = co[0, {j}]; b1_{j} = co[1, {j}]; b2_{j} = co[2, {j}]; "
            f"na1_{j} = co[3, {j}]; na2_{j} = co[4, {j}]"
        )
        out.append(f"    x1_{j} = st[0, {j}]; x2_{j} = st[1, {j}]; y1_{j} = st[2, {j}]; y2_{j} = st[3, {j}]")
    out += ["    for i in range(n):", "        p = (t0 + i) & 7"]
    out += [f"        x0_{j} = x[i, {j}]" for j in range(L)]
    forms = {
        "p == 0": "fma32(b1_{j}, x1_{j}, fma32(b2_{j}, x2_{j}, b0_{j} * x0_{j} + bias))",
        "p == 1": "fma32(b2_{j}, x2_{j}, fma32(b1_{j}, x1_{j}, b0_{j} * x0_{j} + bias))",
        "": "fma32(b0_{j}, x0_{j}, fma32(b2_{j}, x2_{j}, b1_{j} * x1_{j} + bias))",
    }
    for k, (cond, expr) in enumerate(forms.items()):
        out.append(f"        {'if' if k == 0 else 'elif'} {cond}:" if cond else "        else:")
        out += [f"            t_{j} = " + expr.format(j=j) for j in range(L)]
    for j in range(L):
        out.append(f"        y0_{j} = fma32(na2_{j}, y2_{j}, fma32(na1_{j}, y1_{j}, t_{j}))")
        out.append(f"        x2_{j} = x1_{j}; x1_{j} = x0_{j}; y2_{j} = y1_{j}; y1_{j} = y0_{j}")
    out += [f"        y[i, {j}] = y0_{j}" for j in range(L)]
    out += [
        f"    st[0, {j}] = x1_{j}; st[1, {j}] = x2_{j}; st[2, {j}] = y1_{j}; st[3, {j}] = y2_{j}"
        for j in range(L)
    ]
    return out + ["", ""]


CHAIN = 3
"""Longest run of consecutive biquads run in one sample loop (``biquad{K}_lanes_{L}``)."""
CHAIN_WIDTHS = WIDTHS[:2]
"""Widths the chained loop is generated for (at 16 lanes the separate loops already keep the
core busy, and three filters' 16-lane state would not fit in registers)."""


def _chain_source(K: int, L: int) -> list[str]:
    """K biquads in series, L lanes, in one sample loop: filter f reads filter f-1's output of
    the same sample, so the K recursions overlap instead of running one after the other. The
    arithmetic of each filter is :func:`_biquad_source`'s; a bypassed lane passes its input
    (``by[f, j]``), as :func:`scatter` does after a single biquad."""
    ys = ", ".join(f"y{f}" for f in range(K))
    out = [
        "@nb.njit(**_F)",
        f"def biquad{K}_lanes_{L}(x, {ys}, n, t0, co, st, by):",
        f'    """Filters 0..{K - 1} in series over lanes 0..{L - 1}: x -> y0 -> ... (sample-major);',
        '    co (CHAIN, 5, LANES), st (CHAIN, 4, LANES), by (CHAIN, LANES) per filter."""',
        "    bias = np.float32(1e-18)",
    ]
    for f in range(K):
        for j in range(L):
            v = f"{f}_{j}"
            out.append(
                f"    b0_{v} = co[{f}, 0, {j}]; b1_{v} = co[{f}, 1, {j}]; b2_{v} = co[{f}, 2, {j}]; "
                f"na1_{v} = co[{f}, 3, {j}]; na2_{v} = co[{f}, 4, {j}]; by_{v} = by[{f}, {j}]"
            )
            out.append(
                f"    x1_{v} = st[{f}, 0, {j}]; x2_{v} = st[{f}, 1, {j}]; "
                f"y1_{v} = st[{f}, 2, {j}]; y2_{v} = st[{f}, 3, {j}]"
            )
    out += ["    for i in range(n):", "        p = (t0 + i) & 7"]
    out += [f"        x0_0_{j} = x[i, {j}]" for j in range(L)]
    forms = {
        "p == 0": "fma32(b1_{v}, x1_{v}, fma32(b2_{v}, x2_{v}, b0_{v} * x0_{v} + bias))",
        "p == 1": "fma32(b2_{v}, x2_{v}, fma32(b1_{v}, x1_{v}, b0_{v} * x0_{v} + bias))",
        "": "fma32(b0_{v}, x0_{v}, fma32(b2_{v}, x2_{v}, b1_{v} * x1_{v} + bias))",
    }
    for f in range(K):
        for k, (cond, expr) in enumerate(forms.items()):
            out.append(f"        {'if' if k == 0 else 'elif'} {cond}:" if cond else "        else:")
            out += [f"            t_{f}_{j} = " + expr.format(v=f"{f}_{j}") for j in range(L)]
        for j in range(L):
            v = f"{f}_{j}"
            nxt = f"x0_{f + 1}_{j}" if f + 1 < K else f"o_{j}"
            out.append(f"        y0_{v} = fma32(na2_{v}, y2_{v}, fma32(na1_{v}, y1_{v}, t_{v}))")
            out.append(f"        {nxt} = x0_{v} if by_{v} else y0_{v}")
            out.append(f"        x2_{v} = x1_{v}; x1_{v} = x0_{v}; y2_{v} = y1_{v}; y1_{v} = y0_{v}")
            out.append(f"        y{f}[i, {j}] = {nxt}")
    for f in range(K):
        out += [
            f"    st[{f}, 0, {j}] = x1_{f}_{j}; st[{f}, 1, {j}] = x2_{f}_{j}; "
            f"st[{f}, 2, {j}] = y1_{f}_{j}; st[{f}, 3, {j}] = y2_{f}_{j}"
            for j in range(L)
        ]
    return out + ["", ""]


def _lane_source() -> str:
    """The lane kernels (see the module docstring)."""
    out = [
        '"""Generated by audio.dsp.fused: lane kernels (do not edit)."""',
        "import numba as nb",
        "import numpy as np",
        "from audio.dsp import kernels as K",
        "from audio.dsp.kernels import fma32",
        "",
        "_F = dict(cache=True, nogil=True, boundscheck=False, fastmath=False, _nrt=False)",
        "",
        "",
    ]
    for L in WIDTHS:
        out += _biquad_source(L)
    for K in range(2, CHAIN + 1):
        for L in CHAIN_WIDTHS:
            out += _chain_source(K, L)
    return "\n".join(out) + "\n"


_SHARED = '''

@nb.njit(**_F)
def gather(act, g0, m, coefs, bypass, state, c, co, st, by):
    """Load a group's coefficients (b0, b1, b2, -a1, -a2) and channel-c history into lanes;
    bypassed and empty lanes get zeros (their output is overwritten by :func:`scatter`)."""
    for j in range(co.shape[1]):
        on = False
        if j < m:
            v = act[g0 + j]
            on = not bypass[v]
        by[j] = not on
        if on:
            co[0, j] = coefs[v, 0]
            co[1, j] = coefs[v, 1]
            co[2, j] = coefs[v, 2]
            co[3, j] = -coefs[v, 3]
            co[4, j] = -coefs[v, 4]
            for k in range(4):
                st[k, j] = state[v, c, k]
        else:
            for k in range(5):
                co[k, j] = 0.0
            for k in range(4):
                st[k, j] = 0.0


@nb.njit(**_F)
def gain_lanes(act, g0, m, w, x, y, n, dirty, target, cur, step, left, init, gb, gv):
    """Gai0 for a group, sample-major: each lane's gain sequence is exactly
    :func:`audio.dsp.kernels.gai0_voice`'s; held gains multiply by the per-lane vector ``gv``,
    ramps by the per-sample, per-lane ``gb``."""
    steady = True
    for j in range(gv.shape[0]):
        gv[j] = 0.0
        if j < m:
            v = act[g0 + j]
            K._retarget(v, dirty, target, cur, step, left, init, 64.0)
            gv[j] = cur[v]
            if left[v] != 0:
                steady = False
    if steady:
        for c in range(x.shape[0]):
            for i in range(n):
                for j in range(w):
                    y[c, i, j] = x[c, i, j] * gv[j]
        return
    for j in range(w):
        g = gv[j]
        l = left[act[g0 + j]] if j < m else 0
        if l == 0:
            for i in range(n):
                gb[i, j] = g
            continue
        v = act[g0 + j]
        for i in range(n):
            if l > 0:
                l -= 1
                g = target[v] if l == 0 else g + step[v]
            gb[i, j] = g
        cur[v], left[v] = g, l
    for c in range(x.shape[0]):
        for i in range(n):
            for j in range(w):
                y[c, i, j] = x[c, i, j] * gb[i, j]


@nb.njit(**_F)
def to_lanes(x, c, t, n, w):
    """Channel ``c`` of a group's rows ``x[j, c, :n]`` into the sample-major ``t[:n, j]``, j < w."""
    for i in range(n):
        for j in range(w):
            t[i, j] = x[j, c, i]


@nb.njit(**_F)
def from_lanes(t, x, c, n, w):
    """The sample-major ``t[:n, j]`` back into the rows ``x[j, c, :n]``, j < w."""
    for j in range(w):
        for i in range(n):
            x[j, c, i] = t[i, j]


@nb.njit(**_F)
def scatter(act, g0, m, state, c, st, by, x, y, n):
    """Store the filtering lanes' history; bypassed lanes pass their input through exactly
    (``x``/``y`` sample-major ``(max_block, LANES)``)."""
    for j in range(m):
        v = act[g0 + j]
        if by[j]:
            for i in range(n):
                y[i, j] = x[i, j]
        else:
            for k in range(4):
                state[v, c, k] = st[k, j]
'''


def lanes_module() -> ModuleType:
    src = _lane_source() + _SHARED
    return _load("barkbus_lanes", src)


# --------------------------------------------------------------------------- graph programs
class FusedProgram:
    """A compiled graph: ``fn(*args)`` plus how to build ``args`` from a bank."""

    def __init__(
        self, fn: Callable[..., None], getters: list[Callable[[Any], Any]], slot_names: list[str]
    ) -> None:
        self.fn = fn
        self.getters = getters
        self.slot_names = slot_names

    def args(self, bank: Any) -> tuple:
        return tuple(g(bank) for g in self.getters)


def _node_args(kind: str) -> list[str]:
    """The per-node arrays the generated code refers to, in argument order."""
    return {
        "Rsp0": ["dirty", "p:pitch"],
        "PI20": ["dirty", "p:centre_hz", "p:gain", "p:q", "coefs", "bypass", "state"],
        "HI20": ["dirty", "p:cutoff_hz", "coefs", "bypass", "state"],
        "LI20": ["dirty", "p:cutoff_hz", "coefs", "bypass", "state"],
        "Gai0": ["dirty", "p:gain", "cur", "step", "left", "init"],
        "Sen0": ["dirty", "p:level", "cur", "step", "left", "init", "dest", "target", "duck", "band"],
        "Del0": ["dirty", "p:seconds", "buf", "widx", "dcur", "dold", "left"],
        "Pn21": ["dirty", "p:angle_deg", "p:level", "cur", "goal", "step", "left", "init", "scratch"],
        "Sub0": ["inp"],
    }[kind]


def _getter(i: int, attr: str) -> Callable[[Any], Any]:
    if attr.startswith("p:"):
        key = attr[2:]
        return lambda b: b.nodes[i].params[key]
    return lambda b: getattr(b.nodes[i], attr)


_BANK = [
    "pool",
    "src_off",
    "src_len",
    "rate",
    "rstep",
    "ipos",
    "frac",
    "wait",
    "rel_left",
    "rel_total",
    "ended_at",
]


def _bank_getter(attr: str) -> Callable[[Any], Any]:
    if attr == "pool":
        return lambda b: b.pool.data
    return lambda b: getattr(b, attr)


_LANE_IN = ("PI20", "HI20", "LI20", "Gai0", "Del0")  # kinds that can read the sample-major layout


def _emit_node(k: int, kind: str, src: int | None, dst: int, lay: int, lanes: bool) -> list[str]:
    """Source lines (inside the group loop) for node ``k`` reading slot ``src``, writing ``dst``;
    ``lanes``: the node works on the sample-major buffers ``P`` (else on the rows ``S``)."""
    a = f"n{k}_"
    each = ["        for j in range(m):", "            v = act[g0 + j]"]
    if kind == "Rsp0":
        out = f"P{dst}[0, :, j]" if lanes else f"S{dst}[j, 0]"
        return each + [
            f"            K.rsp0_voice(v, pool, src_off, src_len, {out}, n, t0, {a}dirty, "
            f"{a}pitch, rate, fs, rstep, ipos, frac, wait, rel_left, rel_total, ended_at)"
        ]
    if kind == "Sub0":
        out = f"P{dst}[c, :, j]" if lanes else f"S{dst}[j, c]"
        return each + [
            f"            for c in range({a}inp.shape[1]):",
            f"                K.copy_row({a}inp[v, c], {out}, n)",
            f"                K.zero_row({a}inp[v, c], n)",
        ]
    if kind in ("PI20", "HI20", "LI20"):
        ref = _refresh_line(k, kind)
        if not lanes:
            return each + [
                ref,
                f"            K.biquad_voice(v, S{src}[j], S{dst}[j], n, t0, {a}coefs, {a}bypass, {a}state)",
            ]
        assert src is not None
        return each + [
            ref,
            f"        for c in range(P{src}.shape[0]):",
            f"            LN.gather(act, g0, m, {a}coefs, {a}bypass, {a}state, c, {_lane(0)})",
            *_single_biquad(src, dst, "            "),
            "            " + _scatter(k, 0, src),
        ]
    if kind == "Gai0" and lanes:
        return [
            f"        LN.gain_lanes(act, g0, m, w, P{src}, P{dst}, n, {a}dirty, {a}gain, {a}cur, "
            f"{a}step, {a}left, {a}init, GB, GV)"
        ]
    if kind == "Gai0":
        return each + [
            f"            K.gai0_voice(v, S{src}[j], S{dst}[j], n, {a}dirty, {a}gain, "
            f"{a}cur, {a}step, {a}left, {a}init)"
        ]
    if kind == "Sen0":
        return each + [
            f"            K.sen0_voice(v, S{src}[j], n, {a}dirty, {a}level, {a}cur, {a}step, "
            f"{a}left, {a}init, {a}dest, {a}target, {a}duck, {a}band)"
        ]
    if kind == "Del0":
        x, y = (f"P{src}[:, :, j]", f"P{dst}[:, :, j]") if lanes else (f"S{src}[j]", f"S{dst}[j]")
        return each + [
            f"            K.del0_voice(v, {x}, {y}, n, {a}dirty, {a}seconds, "
            f"fs, {a}buf, {a}widx, {a}dcur, {a}dold, {a}left)"
        ]
    if kind == "Pn21":
        return each + [
            f"            K.pn21_voice(v, S{src}[j], S{dst}[j], n, {a}dirty, "
            f"{a}angle_deg, {a}level, {lay}, {a}cur, {a}goal, {a}step, {a}left, {a}init, "
            f"{a}scratch)"
        ]
    raise ValueError(f"no fused form for node kind {kind!r}")


def _refresh_line(k: int, kind: str) -> str:
    """The per-instance coefficient refresh of biquad node ``k`` (inside ``for j in range(m)``)."""
    a = f"n{k}_"
    if kind == "PI20":
        return (
            f"            K.refresh_peak_voice(v, {a}dirty, {a}centre_hz, {a}gain, {a}q, fs, "
            f"{a}coefs, {a}bypass, {a}state)"
        )
    return (
        f"            K.refresh_pass_voice(v, {a}dirty, {a}cutoff_hz, fs, {kind == 'HI20'}, "
        f"{a}coefs, {a}bypass, {a}state)"
    )


def _single_biquad(src: int, dst: int, ind: str, f: int = 0) -> list[str]:
    """One lane biquad ``P{src}[c] -> P{dst}[c]`` at the group's width, filter ``f`` of the
    scratch (``CO[f]``, ``ST[f]``)."""
    return [
        f"{ind}if w == {WIDTHS[0]}:",
        f"{ind}    LN.biquad_lanes_{WIDTHS[0]}(P{src}[c], P{dst}[c], n, t0, CO[{f}], ST[{f}])",
        f"{ind}elif w == {WIDTHS[1]}:",
        f"{ind}    LN.biquad_lanes_{WIDTHS[1]}(P{src}[c], P{dst}[c], n, t0, CO[{f}], ST[{f}])",
        f"{ind}else:",
        f"{ind}    LN.biquad_lanes_{WIDTHS[2]}(P{src}[c], P{dst}[c], n, t0, CO[{f}], ST[{f}])",
    ]


def _emit_chain(ks: list[int], kinds: list[str], src: int) -> list[str]:
    """Source lines for the consecutive lane biquads ``ks`` (each reading the one before, the
    first reading slot ``src``): coefficients refreshed per instance, then per channel one
    chained loop at widths :data:`CHAIN_WIDTHS`, else the single loops one after another."""
    out = ["        for j in range(m):", "            v = act[g0 + j]"]
    out += [_refresh_line(k, kinds[k]) for k in ks]
    ins = [src, *ks[:-1]]
    ys = ", ".join(f"P{k}[c]" for k in ks)
    out.append(f"        for c in range(P{src}.shape[0]):")
    for f, k in enumerate(ks):
        out.append(f"            LN.gather(act, g0, m, n{k}_coefs, n{k}_bypass, n{k}_state, c, {_lane(f)})")
    for i, L in enumerate(CHAIN_WIDTHS):
        out.append(f"            {'if' if i == 0 else 'elif'} w == {L}:")
        out.append(f"                LN.biquad{len(ks)}_lanes_{L}(P{src}[c], {ys}, n, t0, CO, ST, BY)")
    out.append("            else:")
    for f, k in enumerate(ks):
        out += _single_biquad(ins[f], k, "                ", f)
        out.append("                " + _scatter(k, f, ins[f]))
    out.append(f"            if w <= {CHAIN_WIDTHS[-1]}:")
    out += ["                " + _scatter(k, f, ins[f]) for f, k in enumerate(ks)]
    return out


def _lane(f: int) -> str:
    """Filter ``f``'s lane scratch: coefficients, history, bypass flags."""
    return f"CO[{f}], ST[{f}], BY[{f}]"


def _scatter(k: int, f: int, src: int) -> str:
    return f"LN.scatter(act, g0, m, n{k}_state, c, ST[{f}], BY[{f}], P{src}[c], P{k}[c], n)"


def _plan(kinds: list[str], inputs: list[int | None], use_lanes: bool) -> tuple[list[int], list[bool]]:
    """Each node's output slot and whether it works sample-major (``lanes``): biquads always
    (unless ``use_lanes`` is off: a one-instance bus stays in rows); a source (Rsp0/Sub0) when
    all its readers can; a gain or a delay as decided by :func:`graph_source`."""
    slot: list[int] = []
    for k, kind in enumerate(kinds):
        slot.append(slot[inputs[k]] if kind == "Sen0" else k)  # type: ignore[index]
    lanes: list[bool] = []
    for k, kind in enumerate(kinds):
        if kind in ("Rsp0", "Sub0"):
            readers = [kinds[r] for r in range(len(kinds)) if inputs[r] == k]
            lanes.append(use_lanes and bool(readers) and all(r in _LANE_IN for r in readers))
        elif kind in ("PI20", "HI20", "LI20"):
            lanes.append(use_lanes)
        else:
            lanes.append(False)
    return slot, lanes


def _biquad_run(k: int, kinds: list[str], inputs: list[int | None], lanes: list[bool]) -> list[int]:
    """Node ``k`` and the lane biquads after it that each read the one before (at most
    :data:`CHAIN`); a single node when ``k`` starts no such run."""
    bq = ("PI20", "HI20", "LI20")
    run = [k]
    if kinds[k] not in bq or not lanes[k]:
        return run
    while (
        len(run) < CHAIN
        and run[-1] + 1 < len(kinds)
        and kinds[run[-1] + 1] in bq
        and lanes[run[-1] + 1]
        and inputs[run[-1] + 1] == run[-1]
    ):
        run.append(run[-1] + 1)
    return run


def graph_source(
    kinds: list[str],
    inputs: list[int | None],
    lay: int,
    lanes_name: str,
    packed: dict[str, str] | None = None,
    use_lanes: bool = True,
) -> tuple[str, list[str]]:
    """Source of the fused function for nodes ``kinds`` (``inputs[k]`` = index of node k's input)
    and its argument names. Slot k holds node k's output (a send's slot is its input's), as
    rows ``S{k}`` and/or sample-major ``P{k}``; a layout is converted when a reader needs it."""
    slot, lanes = _plan(kinds, inputs, use_lanes)
    have: dict[int, set[str]] = {}
    body = [
        "    na = act.shape[0]",
        f"    for g0 in range(0, na, {LANES}):",
        f"        m = min({LANES}, na - g0)",
        f"        w = {WIDTHS[0]} if m <= {WIDTHS[0]} else "
        f"({WIDTHS[1]} if m <= {WIDTHS[1]} else {WIDTHS[2]})",
    ]

    def need(sl: int, layout: str) -> None:
        if layout in have[sl]:
            return
        if layout == "P":
            body.extend(
                [
                    f"        for c in range(S{sl}.shape[1]):",
                    f"            LN.to_lanes(S{sl}, c, P{sl}[c], n, w)",
                ]
            )
        else:
            body.extend(
                [
                    f"        for c in range(P{sl}.shape[0]):",
                    f"            LN.from_lanes(P{sl}[c], S{sl}, c, n, w)",
                ]
            )
        have[sl].add(layout)

    chained: set[int] = set()
    for k, kind in enumerate(kinds):
        if k in chained:
            continue
        src = slot[inputs[k]] if inputs[k] is not None else None  # type: ignore[index]
        run = _biquad_run(k, kinds, inputs, lanes)
        if len(run) > 1 and src is not None:
            need(src, "P")
            for r in run:
                have[slot[r]] = {"P"}
            body += _emit_chain(run, kinds, src)
            chained.update(run)
            continue
        if kind in ("Gai0", "Del0") and src is not None:
            lanes[k] = "P" in have[src]  # these work in whichever layout their input already has
        if src is not None:
            need(src, "P" if lanes[k] else "S")
        if kind != "Sen0":
            have[slot[k]] = {"P" if lanes[k] else "S"}
        body += _emit_node(k, kind, src, slot[k], lay, lanes[k])
    last = slot[-1]
    if have[last] == {"S"}:
        # the graph's output is produced in rows: its producer and readers use the instance's
        # row of the bank's output directly (no copy)
        row = re.compile(rf"\bS{last}\[j(?=[,\]])")
        body = [row.sub("OUT[v", line) for line in body]
        have[last] = set()
    else:
        need(last, "S")
        body += [
            "        for j in range(m):",
            "            v = act[g0 + j]",
            f"            for c in range(S{last}.shape[1]):",
            f"                K.copy_row(S{last}[j, c], OUT[v, c], n)",
        ]
    names = ["act", "n", "t0", "fs", "OUT", "CO", "ST", "BY", "GB", "GV"]
    names += [f"{lt}{k}" for k in sorted(have) for lt in sorted(have[k])]
    assert not any(re.search(rf"\bS{last}\b", line) for line in body) or "S" in have[last]
    if kinds[0] == "Rsp0":
        names += list(_BANK)
    for k, kind in enumerate(kinds):
        names += [f"n{k}_" + a.removeprefix("p:") for a in _node_args(kind)]
    packed = packed or {}
    args = [nm for nm in names if nm not in packed] + sorted({packed[nm].partition("[")[0] for nm in packed})
    head = [
        '"""Generated by audio.dsp.fused from a graph file (do not edit)."""',
        "import numba as nb",
        "from audio.dsp import kernels as K",
        f"import {lanes_name} as LN",
        "",
        "",
        "@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath=False, _nrt=False)",
        "def fused(" + ", ".join(args) + "):",
    ]
    head += [f"    {nm} = {packed[nm]}" for nm in names if nm in packed]
    return "\n".join(head + body) + "\n", args


def _structure(bank: Any) -> tuple[list[str], list[int | None]] | None:
    nodes = bank.nodes
    tos = [n.spec.to for n in nodes if n.kind == "Sen0"]
    if len(set(tos)) != len(tos):
        return None
    index = {n.spec.id: i for i, n in enumerate(nodes)}
    return [n.kind for n in nodes], [index[n.spec.input] if n.spec.input is not None else None for n in nodes]


def plan_graph(bank: Any) -> list[str] | None:
    """The argument names the fused function of ``bank``'s graph will need (the bank allocates
    the slots among them), or None when the graph must keep the node path."""
    st = _structure(bank)
    if st is None:
        return None
    return graph_source(st[0], st[1], bank.nodes[0].layout, "LN", use_lanes=bank.capacity > 1)[1]


def compile_graph(bank: Any, names: list[str]) -> FusedProgram:
    """The fused program of ``bank``'s graph (``names`` from :func:`plan_graph`); arrays the
    bank packed (``bank.pack_index``) are passed as their packed array and indexed inside."""
    st = _structure(bank)
    assert st is not None
    kinds, inputs = st
    lanes = lanes_module()
    getter = {name: _arg_getter(name, kinds) for name in names[4:]}
    packed: dict[str, str] = {}
    for name, g in getter.items():
        if name == "pool":
            continue
        where = bank.pack_index.get(id(g(bank)))
        if where is not None:
            packed[name] = f"{where[0]}[{where[1]}]"
    src, args = graph_source(
        kinds, inputs, bank.nodes[0].layout, lanes.__name__, packed, use_lanes=bank.capacity > 1
    )
    mod = _load("barkbus_graph", src)
    getters: list[Any] = [getter[nm] if nm in getter else (lambda b, g=nm: b.packed[g]) for nm in args[4:]]
    slots = [nm for nm in names if nm[0] in "SP" and nm[1:].isdigit()]
    return FusedProgram(mod.fused, getters, slots)


def _arg_getter(name: str, kinds: list[str]) -> Callable[[Any], Any]:
    """How to fetch argument ``name`` of a generated function from a bank."""
    if name == "OUT":
        return lambda b: b.output
    if name in ("CO", "ST", "BY", "GB", "GV"):
        return lambda b: b.lane_scratch[name]
    if name[0] in "SP" and name[1:].isdigit():
        return lambda b: b.slots[name]
    if name.startswith("n") and "_" in name and name[1:].partition("_")[0].isdigit():
        k, _, attr = name[1:].partition("_")
        full = next(a for a in _node_args(kinds[int(k)]) if a.removeprefix("p:") == attr)
        return _getter(int(k), full)
    return _bank_getter(name)
