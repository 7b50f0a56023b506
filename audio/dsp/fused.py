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
  sample-major ``(max_block, LANES)`` buffer (16 x 16 tiles of vector shuffles:
  :data:`audio.dsp.kernels.rows_to_lanes16`), where each lane is one independent Direct Form I
  recursion with exactly :func:`audio.dsp.kernels.df1`'s operations, run on ``<width x float>``
  vectors by a sample loop written in LLVM IR (:func:`audio.dsp.kernels.lane_biquads`; a vector
  fma rounds like a scalar one), and transposed back; bypassed and empty lanes get zero
  coefficients and pass their input through exactly;
* up to :data:`CHAIN` biquads in series (HPF -> LPF, or a radio voice's HPF -> LPF -> PEAK)
  share one sample loop: a recursion is latency-bound (two dependent fmas per sample), so the
  filters' recursions overlap instead of running one after another. The loop also runs through
  sends between the filters (they run after it, on the filter's stored output; a send's
  destination is its own, so the order of sends into it is unchanged) and through one lane
  gain whose output nothing else reads (its float32 product is taken in the loop): the Skate
  stream voice's PI20 -> Sen0 -> Gai0 -> HI20 -> LI20 is one loop. A filter's output that only
  the loop reads is not stored, and the last one is written over the loop's input when
  nothing else reads that (fewer lane buffers in the cache);
* an HPF -> Del0 -> LPF (the echo submix) whose group's delays are held runs both filters as
  independent lanes of one sample loop, over runs no longer than the shortest delay: the
  LPF's input over such a run is already in the delay rings, so it is read before the HPF's
  output is written (a group of more than half the lanes, every delay at least a block long:
  the two filters as two 16-lane recursions of one loop, :func:`audio.dsp.kernels.lane_biquads`
  with ``parallel``, the taps and the HPF's output moved between the rings and the lanes as
  16 x 16 tiles, :func:`audio.dsp.kernels.ring_to_lanes16`);
* a Pn21 on rows and the send reading its output run as one per-instance pass
  (:func:`audio.dsp.kernels.pn21_sen0_voice`) while both levels hold; in a full group reading
  lanes, a send splitting the pan's input into two channels just before it joins that pass
  (:func:`audio.dsp.kernels.env_pan_send_lanes16`: each tile transposed once); a lane pan
  stores the bank's output rows only while the bank is metered (``METER``: nothing else
  reads them);
* a send into a submix whose only sender it is hands a full group going to 16 of the
  submix's instances in order over in lanes (the submix's lane box: ``send_lanes_box``,
  ``inputs_to_lanes``), without the rows.

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
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numba

from audio.dsp.nodes import (
    Biquad,
    Delay,
    Gain,
    Node,
    Pan,
    Send,
    Site,
    Slot,
    SubmixInput,
    branches,
    pan_send_lines,
    width_expr,
)

__all__ = ["LANES", "FusedPlan", "FusedProgram", "cache_dir", "compile_graph", "graph_source", "plan_graph"]

LANES = 16
"""Instances processed together (two AVX registers of float32)."""
ROW_PAD = 48
"""Extra samples per lane row, so lane rows do not sit a multiple of 4 KiB apart (which would
put them all in the same cache sets)."""
_VERSION = 1

# LLVM's SLP vectoriser packs the lane loops (gains, copies) into SIMD instructions. It never
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


CHAIN = 3
"""Longest run of consecutive lane biquads run in one sample loop (``biquad{K}_lanes_{L}``)."""


def _lane_source() -> str:
    """The lane kernels (see the module docstring)."""
    out = [
        '"""Generated by audio.dsp.fused: lane kernels (do not edit)."""',
        "import numba as nb",
        "import numpy as np",
        "from audio.dsp import kernels as K",
        "",
        "_F = dict(cache=True, nogil=True, boundscheck=False, fastmath=False, _nrt=False)",
        "",
        "",
    ]
    for k in range(1, CHAIN + 1):
        ys = ", ".join(f"y{f}" for f in range(k))
        for g in (None, *range(k)):
            more = "" if g is None else ", gv, gb, steady"
            params = f"x, {ys}, n, t0, co, st, by{more}"
            for L in WIDTHS:
                # each kernel its own compiled function: inlined into a graph's function at each
                # width, the loops of a long chain lose their registers
                name = f"biquad{k}_lanes_{L}" if g is None else f"gained{g}_biquad{k}_lanes_{L}"
                out += [
                    f"_{name} = K.lane_biquads({k}, {L}, gain_at={g})",
                    "",
                    "",
                    "@nb.njit(**_F)",
                    f"def {name}({params}):",
                    f"    _{name}({params})",
                    "",
                    "",
                ]
    # the echo submix's HPF and LPF as independent recursions in one loop, for full groups
    out += [
        f"_pair_lanes_{LANES} = K.lane_biquads(2, {LANES}, parallel=True)",
        "",
        "",
        "@nb.njit(**_F)",
        f"def pair_lanes_{LANES}(x0, y0, x1, y1, n, t0, co, st, by):",
        f"    _pair_lanes_{LANES}(x0, y0, x1, y1, n, t0, co, st, by)",
        "",
        "",
    ]
    out += [f"scale_lanes_{L} = K.lane_scale({L})" for L in WIDTHS]
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
def gain_levels(act, g0, m, w, n, dirty, target, cur, step, left, init, gb, gv):
    """Gai0's levels for a group, sample-major: each lane's gain sequence is exactly
    :func:`audio.dsp.kernels.gai0_voice`'s. Returns whether every gain is held: then the
    per-lane float32 vector ``gv`` holds them, else ``gb`` holds each sample's (the ramp runs
    in float64); empty lanes get 0."""
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
        return True
    for j in range(w):
        g = cur[act[g0 + j]] if j < m else 0.0
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
    return False


@nb.njit(**_F)
def gain_lanes(act, g0, m, w, x, y, n, dirty, target, cur, step, left, init, gb, gv):
    """Gai0 for a group, sample-major: :func:`gain_levels`, then float32 products."""
    steady = gain_levels(act, g0, m, w, n, dirty, target, cur, step, left, init, gb, gv)
    for c in range(x.shape[0]):
        if w == 4:
            scale_lanes_4(x[c], y[c], n, gv, gb, steady)
        elif w == 8:
            scale_lanes_8(x[c], y[c], n, gv, gb, steady)
        else:
            scale_lanes_16(x[c], y[c], n, gv, gb, steady)


@nb.njit(**_F)
def rsp0_lanes(
    act, g0, m, w, t, n, t0, pool, src_off, src_len, dirty, pitch, src_sample_rate, sample_rate, step, ipos,
    frac, wait, rel_left, rel_total, ended_at
):
    """Rsp0 for a group into the sample-major ``t[:n, j]``: in a full-width group the instances
    in the common case (playing, no release, the block inside the source, a step the vector
    kernel takes) run together in :func:`audio.dsp.kernels.rsp0_lanes16`, the others one by one
    in :func:`audio.dsp.kernels.rsp0_voice`; the same bits either way."""
    mask = 0
    if w == 16 and n > 0:
        for j in range(m):
            v = act[g0 + j]
            if dirty[v]:
                step[v] = K.resample_step(src_sample_rate[v], sample_rate, pitch[v])
                dirty[v] = False
            st = step[v]
            last = ipos[v] + ((frac[v] + st * (n - 1)) >> 16)
            if (
                ended_at[v] < 0
                and wait[v] == 0
                and rel_left[v] == 0
                and last + 1 < src_len[v]
                and st <= K.RSP0_LANES_MAX_STEP
                and src_off[v] + last + 32 <= pool.shape[0]
            ):
                mask |= 1 << j
        if mask != 0:
            K.rsp0_lanes16(t, n, pool, act, g0, src_off, ipos, frac, step, mask)
    for j in range(m):
        v = act[g0 + j]
        if (mask >> j) & 1:
            acc = frac[v] + step[v] * n
            ipos[v] += acc >> 16
            frac[v] = acc & 0xFFFF
        else:
            K.rsp0_voice(
                v, pool, src_off, src_len, t[:, j], n, t0, dirty, pitch, src_sample_rate, sample_rate,
                step, ipos, frac, wait, rel_left, rel_total, ended_at
            )


@nb.njit(**_F)
def spill_group(act, g0, m, box, boxed, inp, n):
    """The full lane-box blocks of a group's instances into their input rows
    (:func:`audio.dsp.kernels.spill_box`)."""
    for j in range(m):
        q = act[g0 + j] >> 4
        if q < boxed.shape[0]:
            K.spill_box(box, boxed, inp, q, n)


@nb.njit(**_F)
def count_boxes(act, dest, nbox):
    """How many running instances send into each block of the destination's lane box."""
    nb_ = nbox.shape[0]
    for q in range(nb_):
        nbox[q] = 0
    if nb_ == 0:
        return
    for v in act:
        q = dest[v] >> 4
        if dest[v] >= 0 and q < nb_:
            nbox[q] += 1


@nb.njit(**_F)
def send_lanes_box(
    act, g0, m, w, t, x, n, dirty, target, cur, step, left, init, dest, tgt, duck, band, have_rows, box,
    boxed, nbox, bgain
):
    """A send into a submix for a group whose input is the sample-major ``t[0, :n, j]``: when
    the group is full, sends one channel to one, every level holds, nothing ducks and its
    instances go to instances ``16q + j`` of the submix in order with no other running
    instance sending into that block ``q`` (``nbox[q] == 16``; the mixer wires a box only to a
    submix's only sender), the products go straight into block ``q`` of the submix's lane box,
    ``0 + x * level`` as the rows would have summed them (:func:`audio.dsp.kernels.box_in16`;
    the rows of those instances hold zeros: a running submix instance's rows are zeroed as it
    reads them, and the submix runs after its senders in every block), and the submix reads
    them as its group's lanes (:func:`inputs_to_lanes`). Otherwise :func:`send_lanes`."""
    if boxed.shape[0] > 0 and w == 16 and m == 16 and t.shape[0] == 1 and tgt.shape[1] == 1:
        d0 = dest[act[g0]]
        q = d0 >> 4
        ok = duck.shape[0] == 0 and d0 >= 0 and d0 & 15 == 0 and q < boxed.shape[0]
        ok = ok and nbox[q] == 16
        if ok:
            for j in range(16):
                v = act[g0 + j]
                K._retarget(v, dirty, target, cur, step, left, init, 65.0)
                if left[v] != 0 or dest[v] != d0 + j:
                    ok = False
                bgain[j] = np.float32(cur[v])
        if ok and not boxed[q]:
            K.box_in16(t[0], box[q], n, bgain)
            boxed[q] = True
            return have_rows
    return send_lanes(
        act, g0, m, w, t, x, n, dirty, target, cur, step, left, init, dest, tgt, duck, band, have_rows
    )


@nb.njit(**_F)
def send_lanes(
    act, g0, m, w, t, x, n, dirty, target, cur, step, left, init, dest, tgt, duck, band, have_rows
):
    """Sen0 for a group whose input is the sample-major ``t[c, :n, j]``: when the group is full
    width, every level holds, channels map one to one (or one channel splits into two) and
    nothing ducks, the products add into the destinations straight from the lanes
    (:func:`audio.dsp.kernels.send_lanes16`, the last ``n % 16`` samples in the same order
    here); otherwise the rows ``x[j]`` are filled (:func:`from_lanes`, unless ``have_rows``:
    an earlier call filled them) and :func:`audio.dsp.kernels.sen0_voice` runs per instance.
    Returns whether the rows hold the lanes afterwards."""
    nch, tch = t.shape[0], tgt.shape[1]
    split = nch == 1 and tch > 1
    mask = 0
    ok = w == 16 and duck.shape[0] == 0 and (split or nch == tch)
    if ok:
        for j in range(m):
            v = act[g0 + j]
            K._retarget(v, dirty, target, cur, step, left, init, 65.0)
            if left[v] != 0:
                ok = False
            elif dest[v] >= 0:
                mask |= 1 << j
    if ok:
        e = n - n % 16
        if split:
            K.send_split_lanes16(t[0], e, tgt, 0, act, g0, dest, cur, mask)
            for i in range(e, n):
                for j in range(m):
                    if (mask >> j) & 1:
                        v = act[g0 + j]
                        s = t[0, i, j] * np.float32(cur[v] * 0.7071067811865476)
                        tgt[dest[v], 0, i] += s
                        tgt[dest[v], 1, i] += s
            return have_rows
        for c in range(nch):
            K.send_lanes16(t[c], e, tgt, c, act, g0, dest, cur, mask)
            for i in range(e, n):
                for j in range(m):
                    if (mask >> j) & 1:
                        v = act[g0 + j]
                        tgt[dest[v], c, i] += t[c, i, j] * np.float32(cur[v])
        return have_rows
    if not have_rows:
        for c in range(nch):
            from_lanes(t[c], x, c, n, w, m)
    for j in range(m):
        v = act[g0 + j]
        K.sen0_voice(v, x[j], n, dirty, target, cur, step, left, init, dest, tgt, duck, band)
    return True


@nb.njit(**_F)
def pan_send_lanes(
    act, g0, m, w, t, x, out, n, dirty, angle, level, layout, cur, goal, step, left, init, scratch,
    s_dirty, s_target, s_cur, s_step, s_left, s_init, dest, tgt, duck, band, have_rows, keep
):
    """A Pn21 (one channel to two, the bank's output rows ``out[v]``) and the Sen0 reading its
    output, for a group whose input is the sample-major ``t[0, :n, j]``: when the group is full
    width, every pan and send level holds, every instance has a destination of two channels
    and nothing ducks, :func:`audio.dsp.kernels.pan_send_lanes16` (the last ``n % 16`` samples
    in the same order here; the output rows are written only when ``keep``: nothing else
    reads them but a meter); otherwise the rows ``x[j]`` are filled (:func:`from_lanes`,
    unless ``have_rows``) and :func:`audio.dsp.kernels.pn21_sen0_voice` runs per instance."""
    ok = w == 16 and duck.shape[0] == 0 and t.shape[0] == 1 and out.shape[1] == 2 and tgt.shape[1] == 2
    if ok:
        for j in range(m):
            v = act[g0 + j]
            K._pan_retarget(v, 2, dirty, angle, level, layout, cur, goal, step, left, init, scratch)
            K._retarget(v, s_dirty, s_target, s_cur, s_step, s_left, s_init, 65.0)
            if left[v] != 0 or s_left[v] != 0 or dest[v] < 0:
                ok = False
    if ok:
        e = n - n % 16
        K.pan_send_lanes16(t[0], e, act, g0, out, cur, tgt, dest, s_cur, (1 << m) - 1, keep)
        for i in range(e, n):
            pan_send_sample(t, i, act, g0, m, out, cur, tgt, dest, s_cur, keep)
        return
    if not have_rows:
        from_lanes(t[0], x, 0, n, w, m)
    for j in range(m):
        v = act[g0 + j]
        K.pn21_sen0_voice(
            v, x[j], out[v], n, dirty, angle, level, layout, cur, goal, step, left, init, scratch, s_dirty,
            s_target, s_cur, s_step, s_left, s_init, dest, tgt, duck, band
        )


@nb.njit(**_F)
def env_pan_send_lanes(
    act, g0, m, w, t, x, n, e_dirty, e_target, e_cur, e_step, e_left, e_init, e_dest, e_tgt, e_duck, e_band,
    out, dirty, angle, level, layout, cur, goal, step, left, init, scratch, s_dirty, s_target, s_cur, s_step,
    s_left, s_init, dest, tgt, duck, band, have_rows, keep
):
    """A send of one channel into two (``e_*``) and a pan with the send reading its output,
    both reading the sample-major ``t[0, :n, j]``: when both would take their lane path in
    :func:`send_lanes` and :func:`pan_send_lanes`, one pass over the lanes
    (:func:`audio.dsp.kernels.env_pan_send_lanes16`, the last ``n % 16`` samples in the same
    order here; the output rows written only when ``keep``); otherwise those two in turn."""
    ok = (
        w == 16 and e_duck.shape[0] == 0 and duck.shape[0] == 0 and t.shape[0] == 1
        and e_tgt.shape[1] == 2 and out.shape[1] == 2 and tgt.shape[1] == 2
    )
    emask = 0
    if ok:
        for j in range(m):
            v = act[g0 + j]
            K._retarget(v, e_dirty, e_target, e_cur, e_step, e_left, e_init, 65.0)
            K._pan_retarget(v, 2, dirty, angle, level, layout, cur, goal, step, left, init, scratch)
            K._retarget(v, s_dirty, s_target, s_cur, s_step, s_left, s_init, 65.0)
            if e_left[v] != 0 or left[v] != 0 or s_left[v] != 0 or dest[v] < 0:
                ok = False
            elif e_dest[v] >= 0:
                emask |= 1 << j
    if not ok:
        rows = send_lanes(
            act, g0, m, w, t, x, n, e_dirty, e_target, e_cur, e_step, e_left, e_init, e_dest, e_tgt, e_duck,
            e_band, have_rows
        )
        pan_send_lanes(
            act, g0, m, w, t, x, out, n, dirty, angle, level, layout, cur, goal, step, left, init, scratch,
            s_dirty, s_target, s_cur, s_step, s_left, s_init, dest, tgt, duck, band, rows, keep
        )
        return
    e = n - n % 16
    every = (1 << m) - 1
    K.env_pan_send_lanes16(
        t[0], e, act, g0, out, cur, tgt, dest, s_cur, every, e_tgt, e_dest, e_cur, emask, keep
    )
    for i in range(e, n):
        for j in range(m):
            v = act[g0 + j]
            if (emask >> j) & 1:
                s = t[0, i, j] * np.float32(e_cur[v] * 0.7071067811865476)
                e_tgt[e_dest[v], 0, i] += s
                e_tgt[e_dest[v], 1, i] += s
        pan_send_sample(t, i, act, g0, m, out, cur, tgt, dest, s_cur, keep)


@nb.njit(**_F)
def pan_send_sample(t, i, act, g0, m, out, cur, tgt, dest, s_cur, keep):
    """Sample ``i`` of the lane pan with its send (the tail after the 16-sample tiles of
    :func:`audio.dsp.kernels.pan_send_lanes16`, in its order): each instance's two pan
    products into its output rows (when ``keep``) and, times the send level, into its
    destination."""
    for j in range(m):
        v = act[g0 + j]
        gs = np.float32(s_cur[v])
        for c in range(2):
            p = t[0, i, j] * np.float32(cur[v, c])
            if keep:
                out[v, c, i] = p
            tgt[dest[v], c, i] += p * gs


@nb.njit(**_F)
def to_lanes(x, c, t, n, w, m):
    """Channel ``c`` of a group's rows ``x[j, c, :n]`` into the sample-major ``t[:n, j]`` for the
    group's ``m`` instances: 16 x 16 tiles by vector shuffles at width 16 (all 16 lanes), the
    rest row by row (contiguous loads), only for j < m (the other lanes of the width ``w``
    are never read into an instance's result)."""
    e = n - n % 16 if w == 16 else 0
    for i0 in range(0, e, 16):
        K.rows_to_lanes16(t, i0, x, c, K.ROWS16, 0)
    for j in range(m):
        xr = x[j, c]
        for i in range(e, n):
            t[i, j] = xr[i]


@nb.njit(**_F)
def inputs_to_lanes(act, g0, m, inp, t, n, box, boxed):
    """Sub0 for a group: instance ``act[g0 + j]``'s input rows into the sample-major
    ``t[c, :n, j]`` (tiles when the group is full), then zeroed for the next block's sends.
    A full group of instances ``16q .. 16q + 15`` whose block ``q`` of the lane box is full
    (:func:`send_lanes_box`: its rows are zeros) takes the box's lanes instead; a box block
    of another group's instances goes to their rows first (:func:`spill_group`)."""
    if boxed.shape[0] > 0:
        d0 = act[g0]
        q = d0 >> 4
        if m == 16 and d0 & 15 == 0 and q < boxed.shape[0] and boxed[q] and act[g0 + 15] == d0 + 15:
            K.box_out16(box[q], t[0], n)
            boxed[q] = False
            return
        spill_group(act, g0, m, box, boxed, inp, n)
    e = n - n % 16 if m == 16 else 0
    for c in range(inp.shape[1]):
        for i0 in range(0, e, 16):
            K.rows_to_lanes16(t[c], i0, inp, c, act, g0)
        for j in range(m):
            xr = inp[act[g0 + j], c]
            for i in range(e, n):
                t[c, i, j] = xr[i]
    for j in range(m):
        for c in range(inp.shape[1]):
            K.zero_row(inp[act[g0 + j], c], n)


@nb.njit(**_F)
def from_lanes(t, x, c, n, w, m):
    """The sample-major ``t[:n, j]`` back into the rows ``x[j, c, :n]``: tiles as
    :func:`to_lanes` at width 16, else only the group's ``m`` instances' rows."""
    e = n - n % 16 if w == 16 else 0
    for i0 in range(0, e, 16):
        K.lanes_to_rows16(t, i0, x, c, K.ROWS16, 0)
    for j in range(m):
        xr = x[j, c]
        for i in range(e, n):
            xr[i] = t[i, j]


@nb.njit(**_F)
def gather_at(act, g0, m, j0, coefs, bypass, state, c, co, st, by):
    """:func:`gather` into lanes ``j0 + j`` (j < m), the other lanes untouched."""
    for j in range(m):
        v = act[g0 + j]
        on = not bypass[v]
        by[j0 + j] = not on
        if on:
            co[0, j0 + j] = coefs[v, 0]
            co[1, j0 + j] = coefs[v, 1]
            co[2, j0 + j] = coefs[v, 2]
            co[3, j0 + j] = -coefs[v, 3]
            co[4, j0 + j] = -coefs[v, 4]
            for k in range(4):
                st[k, j0 + j] = state[v, c, k]
        else:
            for k in range(5):
                co[k, j0 + j] = 0.0
            for k in range(4):
                st[k, j0 + j] = 0.0


@nb.njit(**_F)
def scatter_at(act, g0, m, j0, state, c, st, by):
    """:func:`scatter` from lanes ``j0 + j`` (j < m)."""
    for j in range(m):
        if not by[j0 + j]:
            v = act[g0 + j]
            for k in range(4):
                state[v, c, k] = st[k, j0 + j]


@nb.njit(**_F)
def delay_chunk(act, g0, m, n, dirty, seconds, sample_rate, buf, cur, old, left):
    """Del0's delay changes for a group (:func:`audio.dsp.kernels.del0_retarget`). Returns the
    longest run of samples, at most ``n``, whose delay taps were all written before it when
    every delay is held (no crossfade): the shortest delay, and none reaching round the ring
    onto the run; 0 when a delay crossfades or is shorter than 16 samples."""
    size = buf.shape[2]
    run = n
    for j in range(m):
        v = act[g0 + j]
        K.del0_retarget(v, dirty, seconds, sample_rate, size, cur, old, left)
        if left[v] != 0 or cur[v] < 16:
            return 0
        run = min(run, cur[v])
    for j in range(m):
        if cur[act[g0 + j]] + run > size:
            return 0
    return run


@nb.njit(**_F)
def taps_to_lanes(act, g0, m, buf, widx, cur, c, t, i0, k):
    """Del0's output for samples ``i0 .. i0 + k`` of a group whose taps there are all written
    (:func:`delay_chunk`): instance ``act[g0 + j]``'s channel-c taps into lane ``m + j`` of ``t``."""
    size = buf.shape[2]
    for j in range(m):
        v = act[g0 + j]
        b = buf[v, c]
        r = (widx[v] + i0 - cur[v]) & (size - 1)
        first = min(k, size - r)  # up to the ring's end, then from its start
        for i in range(first):
            t[i0 + i, m + j] = b[r + i]
        for i in range(first, k):
            t[i0 + i, m + j] = b[i - first]


@nb.njit(**_F)
def lanes_to_ring(act, g0, m, t, buf, widx, c, i0, k):
    """Del0's input for samples ``i0 .. i0 + k`` of a group: lane ``j`` of ``t`` into instance
    ``act[g0 + j]``'s channel-c ring (its write position advanced by :func:`advance_rings`)."""
    size = buf.shape[2]
    for j in range(m):
        v = act[g0 + j]
        b = buf[v, c]
        w = (widx[v] + i0) & (size - 1)
        first = min(k, size - w)  # up to the ring's end, then from its start
        for i in range(first):
            b[w + i] = t[i0 + i, j]
        for i in range(first, k):
            b[i - first] = t[i0 + i, j]


@nb.njit(**_F)
def taps_to_lanes16(act, g0, m, buf, widx, cur, c, t, n):
    """Del0's output for a block of a group of more than 8 whose taps are all written
    (:func:`delay_chunk` returned ``n``): instance ``act[g0 + j]``'s channel-c taps straight
    from its ring into lane ``j`` of the sample-major ``t`` (16 x 16 tiles:
    :func:`audio.dsp.kernels.ring_to_lanes16`; lanes ``m`` .. 15 get ``act[g0]``'s, which no
    result reads)."""
    K.ring_to_lanes16(t, n, buf, c, act, g0, (1 << m) - 1, widx, cur)


@nb.njit(**_F)
def lanes_to_rings16(act, g0, m, t, buf, widx, c, n):
    """Del0's input for a block of a group of more than 8: lane ``j`` of the sample-major ``t``
    straight into instance ``act[g0 + j]``'s channel-c ring, j < ``m`` (16 x 16 tiles:
    :func:`audio.dsp.kernels.lanes_to_rings16`; the write positions advanced by
    :func:`advance_rings`)."""
    K.lanes_to_rings16(t, n, buf, c, act, g0, (1 << m) - 1, widx)


@nb.njit(**_F)
def advance_rings(act, g0, m, widx, n, size):
    """Move a group's ring write positions on by the ``n`` samples written."""
    for j in range(m):
        v = act[g0 + j]
        widx[v] = (widx[v] + n) & (size - 1)


@nb.njit(**_F)
def lanes_at_to_rows(t, j0, x, c, n, m):
    """Lanes ``j0 + j`` of the sample-major ``t`` into the rows ``x[j, c, :n]`` (j < m)."""
    for j in range(m):
        xr = x[j, c]
        for i in range(n):
            xr[i] = t[i, j0 + j]


@nb.njit(**_F)
def scatter(act, g0, m, state, c, st, by):
    """Store the filtering lanes' history (a bypassed lane's has no use: it stays cleared)."""
    for j in range(m):
        if not by[j]:
            v = act[g0 + j]
            for k in range(4):
                state[v, c, k] = st[k, j]
'''


def lanes_module() -> ModuleType:
    src = _lane_source() + _SHARED
    return _load("barkbus_lanes", src)


# --------------------------------------------------------------------------- graph programs
class FusedProgram:
    """A compiled graph: ``fn(*args)`` plus how to build ``args`` from a bank."""

    def __init__(self, fn: Callable[..., None], getters: list[Callable[[Any], Any]]) -> None:
        self.fn = fn
        self.getters = getters

    def args(self, bank: Any) -> tuple:
        return tuple(g(bank) for g in self.getters)


@dataclass(frozen=True)
class FusedPlan:
    """How a graph runs fused: per node its input (node index), output slot (the node whose
    output it writes; a send's is its input's), whether it works sample-major, and its name in
    the generated code (the node id, made an identifier); the lane widths a group can have;
    and the scratch arrays the bank allocates (``slots``: name -> (node index, rows?))."""

    graph: str
    graph_kind: str
    capacity: int
    nodes: tuple[Node, ...]
    inputs: tuple[int | None, ...]
    slot: tuple[int, ...]
    lanes: tuple[bool, ...]
    idents: tuple[str, ...]
    widths: tuple[int, ...]
    layout: int
    slots: dict[str, tuple[int, bool]]


def _idents(ids: list[str]) -> tuple[str, ...]:
    """Each node id as a unique Python identifier (other characters become ``_``)."""
    out: list[str] = []
    for nid in ids:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in nid)
        base = base if base[:1].isalpha() else f"n_{base}"
        name, i = base, 2
        while name in out:
            name, i = f"{base}_{i}", i + 1
        out.append(name)
    return tuple(out)


def _widths(capacity: int) -> tuple[int, ...]:
    """The lane widths a group of at most ``min(LANES, capacity)`` instances can have."""
    most = min(LANES, capacity)
    return tuple(w for w in WIDTHS if w < most) + (next(w for w in WIDTHS if w >= most),)


def _lane_plan(nodes: list[Node], inputs: list[int | None], use_lanes: bool) -> tuple[list[int], list[bool]]:
    """Each node's output slot and whether it works sample-major: biquads always (unless
    ``use_lanes`` is off: a one-instance bus stays in rows); a source when all its readers can;
    a gain as decided by :func:`graph_source`."""
    slot: list[int] = []
    for k, node in enumerate(nodes):
        slot.append(slot[inputs[k]] if node.passes_input else k)  # type: ignore[index]
    lanes: list[bool] = []
    for k, node in enumerate(nodes):
        if node.first:
            readers = [nodes[r] for r in range(len(nodes)) if inputs[r] == k]
            lanes.append(use_lanes and bool(readers) and all(r.lane_input for r in readers))
        else:
            lanes.append(use_lanes and isinstance(node, Biquad))
    return slot, lanes


@dataclass
class _Chain:
    """Lane biquads run in one sample loop: ``filters`` (node indexes, each reading the one
    before), a lane gain ``gain`` multiplying filter ``gain_at``'s input, and the sends that
    read a filter's output in between (``sends``: emitted after the loop, in graph order)."""

    filters: list[int]
    gain: int | None = None
    gain_at: int | None = None
    sends: list[int] = field(default_factory=list)


class _Body:
    """The group loop of a graph's function, emitted node by node (:func:`graph_source`)."""

    def __init__(self, p: FusedPlan, out_rows: bool) -> None:
        self.p = p
        self.out_rows = out_rows
        self.lanes = list(p.lanes)
        self.have: dict[int, set[str]] = {}
        self.spent: set[tuple[int, str]] = set()
        self.flags: set[int] = set()
        self.alias: dict[int, int] = {}
        """Slots whose lanes live in another slot's buffer (a chain's output written over its input)."""
        self.tail: list[str] = []
        """Lines after the group loop (a submix input's leftover box blocks)."""
        self.lines = [
            "    na = act.shape[0]",
            f"    for g0 in range(0, na, {LANES}):",
            f"        m = min({LANES}, na - g0)",
        ]
        if any(p.lanes):
            self.lines.append(f"        w = {width_expr(p.widths)}")
        for k, node in enumerate(p.nodes):
            if isinstance(node, Send) and node.to_submix:
                self.lines.insert(1, node.count_line(self.site(k, None, False)))
            elif isinstance(node, SubmixInput):
                self.tail.append(node.tail(self.site(k, None, False)))

    def used(self) -> list[tuple[int, str]]:
        """Every slot layout the emitted code uses (slot, ``S`` or ``P``): those available at
        the end and those no longer valid there (``spent``); lanes under their buffer's slot."""
        both = self.spent | {(k, lt) for k, lts in self.have.items() for lt in lts}
        return sorted({(self.alias.get(k, k) if lt == "P" else k, lt) for k, lt in both})

    def slot(self, sl: int) -> Slot:
        """Slot ``sl``'s names; the graph's output slot is the bank's output rows when
        ``out_rows`` (its producer and readers then write and read ``OUT`` directly)."""
        name, lanes = self.p.idents[sl], self.p.idents[self.alias.get(sl, sl)]
        if self.out_rows and sl == self.p.slot[-1]:
            return Slot("OUT", f"P_{lanes}", "v")
        return Slot(f"S_{name}", f"P_{lanes}")

    def site(self, k: int, src: int | None, lanes: bool) -> Site:
        p = self.p
        return Site(
            f"{p.idents[k]}_",
            None if src is None else self.slot(src),
            self.slot(p.slot[k]),
            lanes,
            p.layout,
            p.widths,
        )

    def need(self, sl: int, layout: str) -> None:
        """Make slot ``sl`` available as rows (``S``) or sample-major (``P``)."""
        if layout in self.have[sl]:
            return
        s = self.slot(sl)
        if layout == "P":
            self.lines += [
                f"        for c in range({s.rows}.shape[1]):",
                f"            LN.to_lanes({s.rows}, c, {s.lanes}[c], n, w, m)",
            ]
        else:
            self.lines += [
                f"        for c in range({s.lanes}.shape[0]):",
                f"            LN.from_lanes({s.lanes}[c], {s.rows}, c, n, w, m)",
            ]
        self.have[sl].add(layout)

    def chain(self, ch: _Chain, src: int, in_place: bool = True) -> None:
        """The chain ``ch`` (its first node reading slot ``src``): coefficients refreshed per
        instance, the gain's levels computed, then per channel one sample loop through all
        of its filters at the group's width, then its sends. With ``in_place``, when nothing
        else reads slot ``src``, the last filter's output is written over its lanes (each
        sample is read before it is written; a smaller working set)."""
        p = self.p
        ks = ch.filters
        first = {ks[0], *self._gain_before(ch, 0)}
        if in_place and self._read_only_by(src, first) and self.slot(src).index == "j":
            self.alias[p.slot[ks[-1]]] = self.alias.get(src, src)
            self.have[src].discard("P")
        ins = [src, *ks[:-1]]
        if ch.gain is not None and ch.gain_at is not None:
            ins[ch.gain_at] = ch.gain
        sites = [self.site(k, ins[f], True) for f, k in enumerate(ks)]
        filters = [bq for bq in (p.nodes[k] for k in ks) if isinstance(bq, Biquad)]
        self.lines += ["        for j in range(m):", "            v = act[g0 + j]"]
        self.lines += [bq.refresh_line(st) for bq, st in zip(filters, sites)]
        kernel, more = f"biquad{len(ks)}_lanes", ""
        if ch.gain is not None:
            g = p.nodes[ch.gain]
            assert isinstance(g, Gain)
            gain_src = p.slot[p.inputs[ch.gain]]  # type: ignore[index]
            self.lines.append("        " + g.levels_line(self.site(ch.gain, gain_src, True)))
            kernel, more = f"gained{ch.gain_at}_{kernel}", ", GV, GB, steady"
        x = self.slot(src).lanes
        self.lines.append(f"        for c in range({x}.shape[0]):")
        self.lines += [
            "            " + bq.gather_line(st, f) for f, (bq, st) in enumerate(zip(filters, sites))
        ]
        # a filter's output only the next filter (or the gain before it) reads is not stored
        inside = [{ks[f + 1], *self._gain_before(ch, f + 1)} for f in range(len(ks) - 1)]
        kept = [f == len(ks) - 1 or not self._read_only_by(ks[f], inside[f]) for f in range(len(ks))]
        for k, keep in zip(ks, kept):
            if not keep:
                self.have[p.slot[k]] = set()
        ys = ", ".join(f"{st.dst.lanes}[c]" if keep else "None" for st, keep in zip(sites, kept))
        cases = [(f"w == {L}", [f"LN.{kernel}_{L}({x}[c], {ys}, n, t0, CO, ST, BY{more})"]) for L in p.widths]
        self.lines += ["            " + line for line in branches(cases, "")]
        self.lines += [
            "            " + bq.scatter_line(st, f) for f, (bq, st) in enumerate(zip(filters, sites))
        ]
        handled = {*ch.filters, *ch.sends, *([ch.gain] if ch.gain is not None else [])}
        for k in ch.sends:
            if not self._lane_send(k, handled):
                self.node(k)

    @staticmethod
    def _gain_before(ch: _Chain, f: int) -> list[int]:
        """The chain's gain, if it multiplies filter ``f``'s input."""
        return [ch.gain] if ch.gain is not None and ch.gain_at == f else []

    def _read_only_by(self, k: int, readers: set[int]) -> bool:
        """Whether node ``k``'s output slot is read by no node outside ``readers`` and is not
        the graph's output."""
        p = self.p
        sl = p.slot[k]
        if sl == p.slot[-1]:
            return False
        return all(r in readers for r, i in enumerate(p.inputs) if i is not None and p.slot[i] == sl)

    def _from_lanes(self, k: int, handled: set[int]) -> int | None:
        """Node ``k``'s input slot when ``k`` can read it straight from lanes: it is only in
        lanes, not the graph's output rows, and every other node reading it is emitted
        (``handled`` or earlier), a lane biquad, or a pan and send that read lanes too."""
        p = self.p
        inp = p.inputs[k]
        if inp is None:
            return None
        src = p.slot[inp]
        if self.have.get(src) != {"P"} or self.slot(src).index != "j":
            return None
        for r, i in enumerate(p.inputs):
            if r <= k or r in handled or i is None or p.slot[i] != src:
                continue
            if not isinstance(p.nodes[r], Biquad) and not self._pan_send_lanes(r):
                return None
        return src

    def _pan_send_lanes(self, k: int) -> bool:
        """Whether node ``k`` is a pan writing the graph's output rows whose send reads its
        output (:meth:`_pan_send`): the two can read the pan's input from lanes."""
        return self._pan_send(k) and self.slot(self.p.slot[k]).index == "v"

    def _lane_send(self, k: int, handled: set[int]) -> bool:
        """Emit send ``k`` reading its input straight from lanes (see :meth:`_from_lanes`);
        returns whether it did."""
        node = self.p.nodes[k]
        if not isinstance(node, Send):
            return False
        src = self._from_lanes(k, handled)
        if src is None:
            return False
        self.spent.add((src, "S"))
        flag = self._rows_flag(src)
        self.lines.append(f"        {flag} = " + node.lanes_line(self.site(k, src, False), flag).lstrip())
        return True

    def _env_pan_send(self, k: int, handled: set[int]) -> bool:
        """Emit send ``k`` and the pan and send after it (:meth:`_pan_send_lanes`) as one call
        when both read the same slot straight from lanes (``LN.env_pan_send_lanes``: one pass
        when the send splits one channel into two); returns whether it did."""
        p = self.p
        node = p.nodes[k]
        if (
            not isinstance(node, Send)
            or node.to_submix
            or k + 2 >= len(p.nodes)
            or not self._pan_send_lanes(k + 1)
        ):
            return False
        src = self._from_lanes(k, handled)
        if src is None or p.slot[p.inputs[k + 1]] != src or self._from_lanes(k + 1, handled | {k}) is None:  # type: ignore[index]
            return False
        self.spent.add((src, "S"))
        flag = self._rows_flag(src)
        send = node.lanes_line(self.site(k, src, False), flag).rsplit(", ", 1)[0]
        pan = self.site(k + 1, src, False)
        line = pan_send_lines(pan, self.site(k + 2, p.slot[k + 1], False), flag, self._keep(k + 1))[0]
        out, rest = line.split(f"{pan.src.rows}, ", 1)[1].split(", n, ", 1)  # type: ignore[union-attr]
        self.lines.append(send.replace("LN.send_lanes(", "LN.env_pan_send_lanes(") + f", {out}, {rest}")
        self.have[p.slot[k + 1]] = {"S"}
        return True

    def _rows_flag(self, src: int) -> str:
        """The group-local flag telling whether a lane send's fallback filled slot ``src``'s
        rows (set False before the slot's first lane send in the group)."""
        flag = f"rows_{self.p.idents[src]}"
        if src not in self.flags:
            self.flags.add(src)
            self.lines.append(f"        {flag} = False")
        return flag

    def _keep(self, k: int) -> str:
        """Whether lane pan ``k`` stores its output: ``METER[0]`` (the bank's meter switch,
        :attr:`audio.dsp.bank.GraphBank.meter`) when its output is a voice's or submix's
        output rows and no node but its send reads them, else always (``True``)."""
        p = self.p
        if p.graph_kind == "bus" or self.slot(p.slot[k]).rows != "OUT" or self._readers(k) != [k + 1]:
            return "True"
        return "METER[0]"

    def _readers(self, k: int) -> list[int]:
        """The nodes reading node ``k``'s output slot."""
        p = self.p
        return [r for r, i in enumerate(p.inputs) if i is not None and p.slot[i] == p.slot[k]]

    def _pan_send(self, k: int) -> bool:
        """Whether node ``k`` is a Pn21 on rows whose output the next node, a send, reads
        (the two then run as one call)."""
        p = self.p
        return (
            isinstance(p.nodes[k], Pan)
            and not self.lanes[k]
            and p.inputs[k] is not None
            and k + 1 < len(p.nodes)
            and isinstance(p.nodes[k + 1], Send)
            and p.inputs[k + 1] == k
        )

    def _only_reader(self, k: int) -> int | None:
        """The one node reading node ``k``'s output slot, if exactly one does and it is not
        the graph's output."""
        readers = self._readers(k)
        return readers[0] if len(readers) == 1 and self.p.slot[-1] != self.p.slot[k] else None

    def _chain_from(self, k: int) -> _Chain | None:
        """The chain starting at node ``k`` (a lane biquad, or a lane gain whose one reader is
        a biquad): biquads each reading the one before, at most :data:`CHAIN`; between them
        sends (run after the loop, on the stored output) and one gain whose output nothing
        else reads (folded into the loop)."""
        p = self.p
        node = p.nodes[k]
        if not self.lanes[k] or not isinstance(node, (Biquad, Gain)):
            return None
        if isinstance(node, Gain):
            r = self._only_reader(k)
            if r is None or not isinstance(p.nodes[r], Biquad):
                return None
        ch = _Chain([k]) if isinstance(node, Biquad) else _Chain([], k, 0)
        cur = k
        for j in range(k + 1, len(p.nodes)):
            nd, i = p.nodes[j], p.inputs[j]
            if i is None or p.slot[i] != p.slot[cur] or len(ch.filters) == CHAIN:
                break
            if isinstance(nd, Biquad):
                ch.filters.append(j)
                cur = j
            elif nd.passes_input:
                ch.sends.append(j)
            elif isinstance(nd, Gain) and ch.gain is None and (r := self._only_reader(j)) is not None:
                if not isinstance(p.nodes[r], Biquad) or p.inputs[r] != j:
                    break
                ch.gain, ch.gain_at, cur = j, len(ch.filters), j
            else:
                break
        ch.sends = [j for j in ch.sends if j < ch.filters[-1]]  # later sends run on their own
        return ch if ch.filters else None

    def _echo(self, k: int) -> bool:
        """Whether nodes ``k``, ``k + 1``, ``k + 2`` are a lane biquad, a Del0 that alone reads
        it and a lane biquad that alone reads the delay, each filter a chain on its own, and
        the last filter's output is not the graph's output (the echo submix's HPF -> Del0 -> LPF)."""
        p = self.p
        if k + 2 >= len(p.nodes) or not isinstance(p.nodes[k + 1], Delay):
            return False
        if self._only_reader(k) != k + 1 or self._only_reader(k + 1) != k + 2 or p.slot[-1] == p.slot[k + 2]:
            return False
        for f in (k, k + 2):
            ch = self._chain_from(f)
            if ch is None or ch.filters != [f] or ch.sends or ch.gain is not None:
                return False
        return True

    @staticmethod
    def _echo_head(hq: Biquad, hp: Site, lq: Biquad, lp: Site, x: str) -> list[str]:
        """The head of an echo branch: the group's HPF and LPF coefficients refreshed per
        instance, then the per-channel loop over lanes ``x`` opening with the HPF's gather
        into lanes 0.."""
        return [
            "            for j in range(m):",
            "                v = act[g0 + j]",
            "    " + hq.refresh_line(hp),
            "    " + lq.refresh_line(lp),
            f"            for c in range({x}.shape[0]):",
            "                " + hq.gather_line(hp, 0),
        ]

    def echo(self, k: int, src: int) -> list[int]:
        """The HPF -> Del0 -> LPF at ``k`` (:meth:`_echo`; the HPF reading slot ``src``). When
        a group's delays are held, the LPF's input over a run of samples no longer than the
        shortest delay (:func:`delay_chunk`) is already in the rings: both filters then run
        as independent recursions in one sample loop run by run, the HPF in lanes ``j`` and
        the LPF in lanes ``m + j`` (the LPF's input read into the free lanes of the HPF's),
        and the HPF's output is written to the rings after each run. A wider group whose
        delays are held and at least a block long runs the two filters side by side over 16
        lanes each (:meth:`_echo_pair`). Otherwise the three run one after another. A pan (the
        graph's output) alone reading the LPF, with the send reading the pan, runs in every
        branch (from lanes but in the first: :func:`pan_send_lanes`); returns the nodes
        emitted after ``k``."""
        p = self.p
        pan = k + 3 if self._only_reader(k + 2) == k + 3 and self._pan_send_lanes(k + 3) else None
        hp, lp = self.site(k, src, True), self.site(k + 2, p.slot[k + 1], True)
        d = self.site(k + 1, p.slot[k], False)
        hq, lq = p.nodes[k], p.nodes[k + 2]
        assert isinstance(hq, Biquad) and isinstance(lq, Biquad)
        a = d.a
        x, y, rows = self.slot(src).lanes, self.slot(k + 2).lanes, self.slot(k + 2).rows
        most = max(p.widths)
        self.lines += [
            f"        run = LN.delay_chunk(act, g0, m, n, {a('dirty')}, {a('seconds')}, sample_rate, "
            f"{a('buf')}, {a('dcur')}, {a('dold')}, {a('left')})",
            f"        if run > 0 and 2 * m <= {most}:",
            f"            w2 = {width_expr(p.widths, '2 * m')}",
            *self._echo_head(hq, hp, lq, lp, x),
            f"                LN.gather_at(act, g0, m, m, {lp.a('coefs')}, {lp.a('bypass')}, "
            f"{lp.a('state')}, c, CO[0], ST[0], BY[0])",
            f"                LN.taps_to_lanes(act, g0, m, {a('buf')}, {a('widx')}, {a('dcur')}, "
            f"c, {x}[c], 0, run)",
        ]
        cases = [
            (f"w2 == {L}", [f"LN.biquad1_lanes_{L}({x}[c], {y}[c], run, t0, CO, ST, BY)"]) for L in p.widths
        ]
        self.lines += ["                " + line for line in branches(cases, "")]
        self.lines += [
            f"                LN.lanes_to_ring(act, g0, m, {y}[c], {a('buf')}, {a('widx')}, c, 0, run)",
            # the rest of the block, when the shortest delay is shorter, in further runs (the
            # first run apart: on whole slots its loop runs faster)
            "                for i0 in range(run, n, run):",
            "                    k = min(run, n - i0)",
            f"                    LN.taps_to_lanes(act, g0, m, {a('buf')}, {a('widx')}, {a('dcur')}, "
            f"c, {x}[c], i0, k)",
        ]
        cases = [
            (f"w2 == {L}", [f"LN.biquad1_lanes_{L}({x}[c][i0:], {y}[c][i0:], k, t0 + i0, CO, ST, BY)"])
            for L in p.widths
        ]
        self.lines += ["                    " + line for line in branches(cases, "")]
        self.lines += [
            f"                    LN.lanes_to_ring(act, g0, m, {y}[c], {a('buf')}, {a('widx')}, c, i0, k)",
            "                " + hq.scatter_line(hp, 0),
            f"                LN.scatter_at(act, g0, m, m, {lp.a('state')}, c, ST[0], BY[0])",
            f"                LN.lanes_at_to_rows({y}[c], m, {rows}, c, n, m)",
            f"            LN.advance_rings(act, g0, m, {a('widx')}, n, {a('buf')}.shape[2])",
        ]
        if pan is not None:
            sites = (self.site(pan, p.slot[k + 2], False), self.site(pan + 1, p.slot[pan], False))
            self.lines += ["    " + line for line in pan_send_lines(*sites)]
        if LANES in p.widths:
            self._echo_pair(k, src, pan)
        self.lines.append("        else:")
        start = len(self.lines)
        for f in (k, k + 2):
            if f == k + 2:
                self.node(k + 1)
            fsrc = src if f == k else p.slot[k + 1]
            self.need(fsrc, "P")
            self.have[p.slot[f]] = {"P"}
            self.chain(_Chain([f]), fsrc, in_place=False)  # the other branches use the slots' names
        if pan is None:
            self.need(p.slot[k + 2], "S")
        else:
            self.lines += pan_send_lines(*sites, "False", self._keep(pan))
        self.lines[start:] = ["    " + line for line in self.lines[start:]]
        # the first branch leaves the HPF's output in the LPF's lanes: only the rows are valid
        # (with the pan, the second may leave only the lanes: neither then)
        self.spent.update({(p.slot[k + 2], "P"), (p.slot[k + 2], "S")})
        self.have[p.slot[k + 2]] = {"S"} if pan is None else set()
        if pan is None:
            return [k + 1, k + 2]
        self.have[p.slot[pan]] = {"S"}
        return [k + 1, k + 2, pan, pan + 1]

    def _echo_pair(self, k: int, src: int, pan: int | None) -> None:
        """The branch of :meth:`echo` for a group wider than half the lanes whose delays are
        held and at least a block long (:func:`delay_chunk` returned ``n``): the taps are read
        from the rings straight into the delay's lanes (:func:`taps_to_lanes16`), the HPF
        (lanes of slot ``src``) and the LPF (the taps' lanes) run as two independent
        recursions in one sample loop (``pair_lanes_16``), then the HPF's output goes from its
        lanes straight into the rings (:func:`lanes_to_rings16`); the LPF's output stays in
        lanes for the pan and send (``pan``), else is moved to rows."""
        p = self.p
        hp, lp = self.site(k, src, True), self.site(k + 2, p.slot[k + 1], True)
        hq, lq = p.nodes[k], p.nodes[k + 2]
        assert isinstance(hq, Biquad) and isinstance(lq, Biquad)
        a = self.site(k + 1, p.slot[k], False).a
        x, h, d, y = (self.slot(sl).lanes for sl in (src, p.slot[k], p.slot[k + 1], p.slot[k + 2]))
        rows = self.slot(p.slot[k + 2]).rows
        self.lines += [
            f"        elif run == n and w == {LANES}:",
            *self._echo_head(hq, hp, lq, lp, x),
            "                " + lq.gather_line(lp, 1),
            f"                LN.taps_to_lanes16(act, g0, m, {a('buf')}, {a('widx')}, {a('dcur')}, c, "
            f"{d}[c], n)",
            f"                LN.pair_lanes_{LANES}({x}[c], {h}[c], {d}[c], {y}[c], n, t0, CO, ST, BY)",
            "                " + hq.scatter_line(hp, 0),
            "                " + lq.scatter_line(lp, 1),
            f"                LN.lanes_to_rings16(act, g0, m, {h}[c], {a('buf')}, {a('widx')}, c, n)",
            f"            LN.advance_rings(act, g0, m, {a('widx')}, n, {a('buf')}.shape[2])",
        ]
        if pan is None:
            self.lines += [
                f"            for c in range({y}.shape[0]):",
                f"                LN.from_lanes({y}[c], {rows}, c, n, w, m)",
            ]
        else:
            sites = (self.site(pan, p.slot[k + 2], False), self.site(pan + 1, p.slot[pan], False))
            self.lines += ["    " + line for line in pan_send_lines(*sites, "False", self._keep(pan))]

    def node(self, k: int) -> None:
        """Node ``k`` on its own."""
        p = self.p
        inp = p.inputs[k]
        src = p.slot[inp] if inp is not None else None
        if src is not None:
            self.need(src, "P" if self.lanes[k] else "S")
        if not p.nodes[k].passes_input:
            self.have[p.slot[k]] = {"P" if self.lanes[k] else "S"}
        self.lines += p.nodes[k].emit(self.site(k, src, self.lanes[k]))

    def emit(self) -> None:
        p = self.p
        done: set[int] = set()
        for k, node in enumerate(p.nodes):
            if k in done:
                continue
            inp = p.inputs[k]
            src = p.slot[inp] if inp is not None else None
            if src is not None and node.lane_input and not isinstance(node, Biquad):
                self.lanes[k] = "P" in self.have[src]  # a gain keeps its input's layout
            if self._pan_send(k):
                assert src is not None
                lanes = self._pan_send_lanes(k) and self._from_lanes(k, done) is not None
                if lanes:
                    self.spent.add((src, "S"))
                else:
                    self.need(src, "S")
                self.have[p.slot[k]] = {"S"}
                pan, send = self.site(k, src, False), self.site(k + 1, p.slot[k], False)
                flag = f"rows_{p.idents[src]}" if src in self.flags else "False"
                self.lines += pan_send_lines(pan, send, flag if lanes else None, self._keep(k))
                done.add(k + 1)
                continue
            if src is not None and self.lanes[k] and self._echo(k):
                self.need(src, "P")
                done.update(self.echo(k, src))
                continue
            ch = self._chain_from(k) if src is not None else None
            if ch is None or src is None:
                if self._env_pan_send(k, done):
                    done.update((k + 1, k + 2))
                elif not self._lane_send(k, done):
                    self.node(k)
                continue
            self.need(src, "P")
            for r in ch.filters:
                self.have[p.slot[r]] = {"P"}
            self.chain(ch, src)
            done.update(ch.filters + ch.sends + ([ch.gain] if ch.gain is not None else []))


def _fetch(table: str, key: str) -> Callable[[Any], Any]:
    """Fetch entry ``key`` of a bank's dict ``table`` (``slots``, ``lane_scratch``, ``packed``)."""
    return lambda b: getattr(b, table)[key]


def _node_array(k: int, attr: str) -> Callable[[Any], Any]:
    """Fetch node ``k``'s array ``attr`` (read at each call: the sample pool may grow)."""
    return lambda b: b.nodes[k].array(attr)


def _body(p: FusedPlan) -> _Body:
    """The emitted group loop, ending with the graph's output in the bank's output rows."""
    last = p.slot[-1]
    body = _Body(p, out_rows=False)
    body.emit()
    if body.have[last] == {"S"}:
        # the graph's output is produced in rows: its producer and readers use the instance's
        # row of the bank's output directly (no copy)
        body = _Body(p, out_rows=True)
        body.emit()
        body.have[last] = set()
    else:
        body.need(last, "S")
        rows = body.slot(last).rows
        body.lines += [
            "        for j in range(m):",
            "            v = act[g0 + j]",
            f"            for c in range({rows}.shape[1]):",
            f"                K.copy_row({rows}[j, c], OUT[v, c], n)",
        ]
    return body


def graph_source(
    bank: Any, p: FusedPlan, lanes_name: str
) -> tuple[str, list[str], list[Callable[[Any], Any]]]:
    """Source of the fused function of ``bank``'s graph (importing the lane kernels as module
    ``lanes_name``), its argument names and how to fetch each argument from the bank. Arrays
    the bank packed (``bank.pack_index``) are passed as their packed array and indexed inside.
    Slot ``S_<id>`` holds node ``<id>``'s output as instance rows, ``P_<id>`` sample-major; a
    layout is converted when a reader needs it."""
    body = _body(p)
    getters: dict[str, Callable[[Any], Any]] = {"OUT": lambda b: b.output, "METER": lambda b: b.meter}
    for nm in ("CO", "ST", "BY", "GB", "GV"):
        getters[nm] = _fetch("lane_scratch", nm)
    for k, lt in body.used():
        nm = f"{lt}_{p.idents[k]}"
        getters[nm] = _fetch("slots", nm)
    for k, node in enumerate(p.nodes):
        for attr in node.arrays:
            getters[f"{p.idents[k]}_{attr}"] = _node_array(k, attr)
    # only what the code names: each array argument costs the call its unboxing
    text = "\n".join(body.lines + body.tail)
    getters = {nm: g for nm, g in getters.items() if re.search(rf"\b{nm}\b", text)}
    packed: dict[str, str] = {}
    for nm, g in getters.items():
        where = bank.pack_index.get(id(g(bank)))
        if where is not None:
            packed[nm] = f"{where[0]}[{where[1]}]"
    args = ["act", "n", "t0", "sample_rate"] + [nm for nm in getters if nm not in packed]
    arrays = sorted({packed[nm].partition("[")[0] for nm in packed})
    head = [
        f'"""Generated by audio.dsp.fused from graph {p.graph!r} (do not edit)."""',
        f"# graph {p.graph}: {p.graph_kind}, {p.capacity} instance(s), lane widths {p.widths}",
        "# nodes: " + ", ".join(f"{p.idents[k]} ({n.kind})" for k, n in enumerate(p.nodes)),
        "import numba as nb",
        "from audio.dsp import kernels as K",
        f"import {lanes_name} as LN",
        "",
        "",
        "@nb.njit(cache=True, nogil=True, boundscheck=False, fastmath=False, _nrt=False)",
        "def fused(" + ", ".join(args + arrays) + "):",
    ]
    head += [f"    {nm} = {packed[nm]}" for nm in getters if nm in packed]
    fetch = [getters[nm] for nm in args[4:]] + [_fetch("packed", a) for a in arrays]
    return "\n".join(head + body.lines + body.tail) + "\n", args + arrays, fetch


def plan_graph(bank: Any) -> FusedPlan | None:
    """How ``bank``'s graph runs fused (the bank allocates :attr:`FusedPlan.slots`), or None
    when it must keep the node path: two sends of one graph into the same destination would
    sum in a different order."""
    nodes: list[Node] = bank.nodes
    tos = [n.spec.to for n in nodes if n.passes_input]
    if len(set(tos)) != len(tos):
        return None
    index = {n.spec.id: i for i, n in enumerate(nodes)}
    inputs = [index[n.spec.input] if n.spec.input is not None else None for n in nodes]
    slot, lanes = _lane_plan(nodes, inputs, bank.capacity > 1)
    p = FusedPlan(
        bank.spec.name,
        bank.spec.kind,
        bank.capacity,
        tuple(nodes),
        tuple(inputs),
        tuple(slot),
        tuple(lanes),
        _idents([n.spec.id for n in nodes]),
        _widths(bank.capacity),
        nodes[0].layout,
        {},
    )
    body = _body(p)
    for k, lt in body.used():
        p.slots[f"{lt}_{p.idents[k]}"] = (k, lt == "S")
    return p


def compile_graph(bank: Any, p: FusedPlan) -> FusedProgram:
    """The fused program of ``bank``'s graph (``p`` from :func:`plan_graph`, its slots
    allocated by the bank)."""
    lanes = lanes_module()
    src, _, fetch = graph_source(bank, p, lanes.__name__)
    mod = _load("barkbus_graph", src)
    return FusedProgram(mod.fused, fetch)
