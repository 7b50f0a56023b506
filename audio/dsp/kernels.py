"""Compiled (numba) block kernels, batched across every active instance of a graph.

Each kernel processes ``n`` samples for all instances listed in ``act`` in one call, so
the number of Python-level calls per block depends on the graph, never on the voice
count. Arrays are instance-major: signals ``(N, channels, max_block)`` float32, state
``(N, ...)``. Parameters arrive as targets plus a ``dirty`` flag and are applied at the
start of the call (a block boundary); ramps are counted in samples, so the output is
the same whatever the block size.

Levels (Gai0, Sen0, Pn21) ramp in float64; each sample's level is rounded to float32 and the
signal is multiplied by it in float32, and sends add into their destination in float32, in
instance order: single precision like the rest of the chain (spec 5.4 leaves the mixing
precision open), and float64 products cost three conversions per sample (about a third of a
send's time at 256 voices).
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from audio.dsp.filters import DENORMAL_BIAS, pass_coefs, peaking_coefs

_FLAGS: Any = dict(cache=True, nogil=True, fastmath=False, boundscheck=False, _nrt=False)
"""``_nrt=False``: no reference counting of array views across calls (it cost ~100 ns per
per-voice call); the kernels never allocate."""


# -------------------------------------------------------------------------------- float32 fma
@intrinsic
def fma32(typingctx, a, b, c):
    """Correctly rounded float32 ``a*b + c`` (one rounding): LLVM's ``llvm.fma.f32``, a hardware
    FMA where the CPU has one, else libm's ``fmaf``. Arguments must be float32."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        f = ir.FloatType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f, [f, f, f]), "llvm.fma.f32")
        return builder.call(fn, args)

    return sig, codegen


def _tile_masks(b: int) -> tuple[list[int], list[int]]:
    """The two shuffles of one butterfly stage of a 16 x 16 transpose: rows r and r + b (r
    without bit b) swap the upper-right and lower-left b x b blocks of each 2b x 2b diagonal block."""
    m1: list[int] = []
    m2: list[int] = []
    for base in range(0, 16, 2 * b):
        m1 += list(range(base, base + b)) + [16 + k for k in range(base, base + b)]
        m2 += list(range(base + b, base + 2 * b)) + [16 + k for k in range(base + b, base + 2 * b)]
    return m1, m2


def _transpose16(builder: Any, rows: list) -> list:
    """Sixteen ``<16 x float>`` rows transposed (row k of the result holds element k of every
    row): Eklundh's four butterfly stages of vector shuffles."""
    for b in (8, 4, 2, 1):
        m1, m2 = (ir.Constant(ir.VectorType(ir.IntType(32), 16), m) for m in _tile_masks(b))
        nxt = list(rows)
        for r in range(16):
            if not r & b:
                nxt[r] = builder.shuffle_vector(rows[r], rows[r + b], m1)
                nxt[r + b] = builder.shuffle_vector(rows[r], rows[r + b], m2)
        rows = nxt
    return rows


def _tile16(to_lanes: bool) -> Any:
    """A numba intrinsic ``(t, i0, x, c, rows, r0)`` moving one 16 x 16 float32 tile between the
    sample-major ``t[i0 : i0 + 16, 0:16]`` and the rows ``x[rows[r0 + k], c, i0 : i0 + 16]``,
    k < 16 (into ``t`` when ``to_lanes``): sixteen vector loads, four stages of vector shuffles
    (Eklundh's transpose), sixteen vector stores. Both sides must hold 16 contiguous float32
    from each tile row; nothing is computed, only moved."""

    @intrinsic
    def tile(typingctx, t, i0, x, c, rows, r0):
        sig = types.void(t, types.int64, x, types.int64, rows, types.int64)

        def codegen(context, builder, signature, args):
            tty, _, xty, _, rty, _ = signature.args
            ta = context.make_array(tty)(context, builder, args[0])
            xa = context.make_array(xty)(context, builder, args[2])
            ra = context.make_array(rty)(context, builder, args[4])
            i0, c, r0 = args[1], args[3], args[5]
            i64 = ir.IntType(64)
            v16 = ir.VectorType(ir.FloatType(), 16)

            def lane_row(k):  # t[i0 + k, 0]
                return cgutils.get_item_pointer(
                    context, builder, tty, ta, [builder.add(i0, i64(k)), i64(0)], wraparound=False
                )

            def inst_row(k):  # x[rows[r0 + k], c, i0]
                at = [builder.add(r0, i64(k))]
                r = builder.load(cgutils.get_item_pointer(context, builder, rty, ra, at, wraparound=False))
                return cgutils.get_item_pointer(context, builder, xty, xa, [r, c, i0], wraparound=False)

            src, dst = (inst_row, lane_row) if to_lanes else (lane_row, inst_row)
            rows = _transpose16(
                builder, [builder.load(builder.bitcast(src(k), v16.as_pointer()), align=4) for k in range(16)]
            )
            for k in range(16):
                builder.store(rows[k], builder.bitcast(dst(k), v16.as_pointer()), align=4)
            return context.get_dummy_value()

        return sig, codegen

    return tile


rows_to_lanes16 = _tile16(True)
"""``t[i0 : i0 + 16, j] = x[rows[r0 + j], c, i0 : i0 + 16]`` for j < 16 (see :func:`_tile16`)."""
lanes_to_rows16 = _tile16(False)
"""``x[rows[r0 + j], c, i0 : i0 + 16] = t[i0 : i0 + 16, j]`` for j < 16 (see :func:`_tile16`)."""

ROWS16 = np.arange(16, dtype=np.int64)
"""The identity row list: a group's own scratch rows 0..15."""


def _ring_tiles_codegen(to_lanes: bool) -> Any:
    """Code generator of :func:`ring_to_lanes16` (``to_lanes``) and :func:`lanes_to_rings16`:
    ``n`` samples moved between the sample-major lanes ``t[0:n, 0:16]`` and 16 ring rows, lane
    j's ``buf[v, c, (start + i) & (size - 1)]`` (i < n) of instance ``v = act[g0 + j]``, where
    ``size = buf.shape[2]`` is a power of two and ``start`` the lane's first ring index.

    Each 16-sample chunk whose 16 ring pieces lie inside their rings is one 16 x 16 tile:
    sixteen vector loads, :func:`_transpose16`, sixteen vector stores (into a ring only for a
    lane whose bit is set). A chunk that reaches round any of its rings' ends, and the last
    ``n % 16`` samples, are moved sample by sample. Nothing is computed, only moved."""

    def codegen(context, builder, signature, args):
        L = _Lanes(context, builder, 16)
        tty, bty, aty, wty = (signature.args[k] for k in (0, 2, 4, 7))
        ta, ba, aa, wa = L.arrays(signature, args, 0, 2, 4, 7)
        n, c, g0, mask = args[1], args[3], args[5], args[6]
        i64 = L.i64
        size = cgutils.unpack_tuple(builder, ba.shape, 3)[2]
        wrap = builder.sub(size, i64(1))

        def item(ty, arr, idx):
            return builder.load(cgutils.get_item_pointer(context, builder, ty, arr, idx, wraparound=False))

        if to_lanes:  # the delays, back from the write positions
            dty, da = signature.args[8], L.array(signature.args[8], args[8])
        lanes = []  # (on, ring row pointer, start)
        for on, v in _lane_item(context, builder, mask, aty, aa, g0):
            start = item(wty, wa, [v])
            if to_lanes:
                start = builder.sub(start, item(dty, da, [v]))
            row = cgutils.get_item_pointer(context, builder, bty, ba, [v, c, i64(0)], wraparound=False)
            lanes.append((on, row, start))

        def sample(i, k):  # t[i, k]
            return cgutils.get_item_pointer(context, builder, tty, ta, [i, i64(k)], wraparound=False)

        def plain(i0, count):
            """Samples i0 .. i0 + count one by one, each ring index wrapped."""
            for k, (on, row, start) in enumerate(lanes):
                with cgutils.for_range(builder, count) as loop:
                    i = builder.add(i0, loop.index)
                    at = builder.gep(row, [builder.and_(builder.add(start, i), wrap)])
                    if to_lanes:
                        builder.store(builder.load(at), sample(i, k))
                    else:
                        with builder.if_then(on):
                            builder.store(builder.load(sample(i, k)), at)

        def tile(i0, offs):
            vp = L.vt.as_pointer()
            ring = [builder.bitcast(builder.gep(row, [o]), vp) for (_, row, _), o in zip(lanes, offs)]
            lane = [builder.bitcast(sample(builder.add(i0, i64(k)), 0), vp) for k in range(16)]
            src, dst = (ring, lane) if to_lanes else (lane, ring)
            rows = _transpose16(builder, [builder.load(p, align=4) for p in src])
            for k, (on, _, _) in enumerate(lanes):
                if to_lanes:
                    builder.store(rows[k], dst[k], align=4)
                else:
                    with builder.if_then(on):
                        builder.store(rows[k], dst[k], align=4)

        e = builder.sub(n, builder.and_(n, i64(15)))
        last = builder.sub(size, i64(16))  # the last ring index a whole piece starts at
        ia = cgutils.alloca_once_value(builder, i64(0))

        def chunk(i0):
            offs = [builder.and_(builder.add(start, i0), wrap) for _, _, start in lanes]
            ends = [builder.icmp_signed(">", o, last) for o in offs]
            across = ends[0]
            for x in ends[1:]:
                across = builder.or_(across, x)
            with builder.if_else(across, likely=False) as (round_end, inside):
                with round_end:
                    plain(i0, i64(16))
                with inside:
                    tile(i0, offs)
            builder.store(builder.add(i0, i64(16)), ia)

        L.loop(ia, lambda i: builder.icmp_signed("<", i, e), chunk)
        plain(e, builder.sub(n, e))
        return context.get_dummy_value()

    return codegen


@intrinsic
def ring_to_lanes16(typingctx, t, n, buf, c, act, g0, mask, widx, back):
    """``t[i, j] = buf[v, c, (widx[v] - back[v] + i) & (size - 1)]`` for i < ``n``, j < 16,
    ``v = act[g0 + j]``, or ``act[g0]`` where bit j of ``mask`` is clear (a delay's taps
    into lanes: :func:`_ring_tiles_codegen`)."""
    if buf.layout != "C" or t.layout != "C":
        return None
    sig = types.void(t, types.int64, buf, types.int64, act, types.int64, types.int64, widx, back)
    return sig, _ring_tiles_codegen(True)


@intrinsic
def lanes_to_rings16(typingctx, t, n, buf, c, act, g0, mask, widx):
    """``buf[v, c, (widx[v] + i) & (size - 1)] = t[i, j]`` for i < ``n`` and each j < 16 whose
    bit in ``mask`` is set, ``v = act[g0 + j]`` (distinct instances): a delay's input from lanes
    into the rings (:func:`_ring_tiles_codegen`)."""
    if buf.layout != "C" or t.layout != "C":
        return None
    sig = types.void(t, types.int64, buf, types.int64, act, types.int64, types.int64, widx)
    return sig, _ring_tiles_codegen(False)


class _Lanes:
    """LLVM IR helpers for a kernel over ``<width x float>`` rows of sample-major float32
    ``(samples, lanes)`` arrays (lane 0 first, lanes contiguous)."""

    def __init__(self, context: Any, builder: Any, width: int) -> None:
        self.context, self.builder = context, builder
        self.i64 = ir.IntType(64)
        self.vt = ir.VectorType(ir.FloatType(), width)
        self.vb = ir.VectorType(ir.IntType(8), width)

    def array(self, aty: Any, val: Any) -> Any:
        return self.context.make_array(aty)(self.context, self.builder, val)

    def arrays(self, signature: Any, args: Any, *at: int) -> tuple:
        """The kernel's array arguments at positions ``at`` of ``args`` (typed by ``signature``)."""
        return tuple(self.array(signature.args[k], args[k]) for k in at)

    def ptr(self, aty: Any, arr: Any, idx: list, to: Any = None) -> Any:
        """A vector pointer to ``arr[idx]`` (ints or IR values)."""
        at = [i if isinstance(i, ir.Value) else self.i64(i) for i in idx]
        p = cgutils.get_item_pointer(self.context, self.builder, aty, arr, at, wraparound=False)
        return self.builder.bitcast(p, (to or self.vt).as_pointer())

    def load(self, aty: Any, arr: Any, idx: list) -> Any:
        return self.builder.load(self.ptr(aty, arr, idx), align=4)

    def store(self, val: Any, aty: Any, arr: Any, idx: list) -> None:
        self.builder.store(val, self.ptr(aty, arr, idx), align=4)

    def loop(self, ia: Any, cond_fn: Any, body_fn: Any) -> None:
        """``while cond_fn(i): body_fn(i)`` with ``i`` kept in the slot ``ia`` (the body advances it)."""
        b = self.builder
        head, body, done = (b.append_basic_block(nm) for nm in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(cond_fn(b.load(ia)), body, done)
        b.position_at_end(body)
        body_fn(b.load(ia))
        b.branch(head)
        b.position_at_end(done)


def _chain_codegen(filters: int, width: int, gain_at: int | None, parallel: bool = False) -> Any:
    """Code generator of :func:`lane_biquads`' kernels: ``filters`` biquads in series over
    ``width`` lanes (``parallel``: each on its own input), each sample through every filter in
    turn (the gain before filter ``gain_at``). Samples from a group-of-8 boundary
    (``(t0 + i) & 7 == 0``) on run 8 at a time with each sample's form of :func:`df1` known at
    compile time; the samples before and after test their position."""
    nf = filters
    # the positions of the inputs and outputs among the arguments, then of n
    xs_at = [2 * f for f in range(nf)] if parallel else [0]
    ys_at = [2 * f + 1 for f in range(nf)] if parallel else list(range(1, 1 + nf))
    a = 2 * nf if parallel else 1 + nf

    def codegen(context, builder, signature, args):
        tys = signature.args
        L = _Lanes(context, builder, width)
        i64, vt = L.i64, L.vt
        xtys, ytys = [tys[k] for k in xs_at], [tys[k] for k in ys_at]
        coty, stty, byty = tys[a + 2], tys[a + 3], tys[a + 4]
        xas = L.arrays(signature, args, *xs_at)
        # an output passed as None is not stored (only the next filter reads it)
        yas = [None if isinstance(tys[k], types.NoneType) else L.array(tys[k], args[k]) for k in ys_at]
        n, t0 = args[a], args[a + 1]
        coa, sta, bya = L.arrays(signature, args, a + 2, a + 3, a + 4)
        fma_fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vt, [vt] * 3), f"llvm.fma.v{width}f32"
        )

        def fma(a, b, c):
            return builder.call(fma_fn, [a, b, c])

        bias = ir.Constant(vt, [float(DENORMAL_BIAS)] * width)
        co = [[L.load(coty, coa, [f, k, 0]) for k in range(5)] for f in range(nf)]
        zero8 = ir.Constant(L.vb, [0] * width)
        by = [
            builder.icmp_unsigned("!=", builder.load(L.ptr(byty, bya, [f, 0], L.vb), align=1), zero8)
            for f in range(nf)
        ]
        hist = [[cgutils.alloca_once(builder, vt) for _ in range(4)] for _ in range(nf)]  # x1, x2, y1, y2
        for f in range(nf):
            for k in range(4):
                builder.store(L.load(stty, sta, [f, k, 0]), hist[f][k])

        def run(s, form, level, blend):
            """Sample s through every filter, with :func:`df1`'s form for position 0, 1 or other
            (``blend``: bypassed lanes pass their input through)."""
            x0 = L.load(xtys[0], xas[0], [s, 0])
            for f in range(nf):
                if parallel and f > 0:
                    x0 = L.load(xtys[f], xas[f], [s, 0])
                if f == gain_at:
                    x0 = builder.fmul(x0, level(s))
                b0, b1, b2, na1, na2 = co[f]
                x1, x2, y1, y2 = (builder.load(h) for h in hist[f])
                if form == 0:
                    t = fma(b1, x1, fma(b2, x2, builder.fadd(builder.fmul(b0, x0), bias)))
                elif form == 1:
                    t = fma(b2, x2, fma(b1, x1, builder.fadd(builder.fmul(b0, x0), bias)))
                else:
                    t = fma(b0, x0, fma(b2, x2, builder.fadd(builder.fmul(b1, x1), bias)))
                y0 = fma(na2, y2, fma(na1, y1, t))
                out = builder.select(by[f], x0, y0) if blend else y0
                if yas[f] is not None:
                    L.store(out, ytys[f], yas[f], [s, 0])
                for h, val in zip(hist[f], (x0, x1, y0, y1)):
                    builder.store(val, h)
                x0 = out

        def samples(level, blend):
            """The sample loops (``level(s)``: the gain vector of sample s, or None)."""
            ia = cgutils.alloca_once_value(builder, i64(0))

            def one(i):
                p = builder.and_(builder.add(t0, i), i64(7))
                with builder.if_else(builder.icmp_signed("==", p, i64(0))) as (then0, other0):
                    with then0:
                        run(i, 0, level, blend)
                    with other0, builder.if_else(builder.icmp_signed("==", p, i64(1))) as (then1, other1):
                        with then1:
                            run(i, 1, level, blend)
                        with other1:
                            run(i, 2, level, blend)
                builder.store(builder.add(i, i64(1)), ia)

            def eight(i):
                for u in range(8):
                    run(builder.add(i, i64(u)), min(u, 2), level, blend)
                builder.store(builder.add(i, i64(8)), ia)

            def before_aligned(i):
                unaligned = builder.icmp_signed("!=", builder.and_(builder.add(t0, i), i64(7)), i64(0))
                return builder.and_(builder.icmp_signed("<", i, n), unaligned)

            L.loop(ia, before_aligned, one)
            L.loop(ia, lambda i: builder.icmp_signed("<=", builder.add(i, i64(8)), n), eight)
            L.loop(ia, lambda i: builder.icmp_signed("<", i, n), one)

        # with no lane bypassed (a full group's usual case) the loops skip the blends
        flags = builder.or_(by[0], by[1]) if nf > 1 else by[0]
        for f in range(2, nf):
            flags = builder.or_(flags, by[f])
        any_by = builder.icmp_unsigned("!=", builder.bitcast(flags, ir.IntType(width)), ir.IntType(width)(0))

        def both(level):
            with builder.if_else(any_by) as (some, none):
                with some:
                    samples(level, True)
                with none:
                    samples(level, False)

        if gain_at is not None:
            gvty, gbty = tys[a + 5], tys[a + 6]
            gva, gba = L.arrays(signature, args, a + 5, a + 6)
            with builder.if_else(args[a + 7]) as (held, ramp):
                with held:
                    g = L.load(gvty, gva, [0])
                    both(lambda s: g)
                with ramp:
                    both(lambda s: L.load(gbty, gba, [s, 0]))
        else:
            both(None)
        for f in range(nf):
            for k in range(4):
                L.store(builder.load(hist[f][k]), stty, sta, [f, k, 0])
        return context.get_dummy_value()

    return codegen


def lane_biquads(filters: int, width: int, gain_at: int | None = None, parallel: bool = False) -> Any:
    """A numba intrinsic ``(x, y_0, ..., y_{filters-1}, n, t0, co, st, by)`` running ``filters``
    Direct Form I biquads in series over lanes ``0 .. width - 1`` of sample-major
    ``(samples, lanes)`` float32 buffers: filter f reads filter f-1's output (filter 0 reads
    ``x``) and writes ``y_f[:n, :width]`` (nothing when ``y_f`` is None; ``y_f`` may be ``x``).
    ``co`` ``(>= filters, 5, lanes)`` holds b0, b1, b2, -a1, -a2; ``st`` ``(>= filters, 4,
    lanes)`` x1, x2, y1, y2 (read, then updated); ``by`` ``(>= filters, lanes)`` bool: a
    bypassed lane's output is its input. ``t0`` is the absolute
    index of sample 0 (:func:`df1`'s position in its group of 8).

    With ``gain_at``, three more arguments ``(gv, gb, steady)``: filter ``gain_at``'s input
    (``x`` or the filter before's output) is multiplied by ``gv`` when ``steady``, else by
    ``gb[i]`` (a Gai0 between them, float32 products as :func:`gai0_voice`'s); the kernel does not
    store the product.

    With ``parallel`` (and no gain), the arguments are ``(x_0, y_0, ..., x_{filters-1},
    y_{filters-1}, n, t0, co, st, by)``: filter f reads ``x_f`` instead of the filter before's
    output, the filters being independent recursions that share the loop (the echo submix's
    HPF and LPF when the LPF's input, the delay taps, is known before the block).

    Each lane computes exactly :func:`df1`'s operations in its order (a vector fma rounds like a
    scalar one; nothing is reassociated), so every output is bit-identical to the scalar
    recursion. The sample loop is written in LLVM IR on ``<width x float>`` vectors, not left to
    the SLP vectoriser, so every filter of the chain stays one register-resident recursion and
    the filters' dependent fma pairs overlap."""
    assert not (parallel and gain_at is not None)
    ys = ", ".join(f"y{f}" for f in range(filters))
    xys = ", ".join(f"x{f}, y{f}" for f in range(filters)) if parallel else f"x, {ys}"
    more = ", gv, gb, steady" if gain_at is not None else ""
    src = (
        f"def kernel(typingctx, {xys}, n, t0, co, st, by{more}):\n"
        f"    sig = types.void({xys}, types.int64, types.int64, co, st, by{more})\n"
        "    return sig, codegen\n"
    )
    scope: dict[str, Any] = {"types": types, "codegen": _chain_codegen(filters, width, gain_at, parallel)}
    exec(src, scope)
    return intrinsic(scope["kernel"])


def lane_scale(width: int) -> Any:
    """A numba intrinsic ``(x, y, n, gv, gb, steady)``: ``y[i, :width] = x[i, :width] * gv``
    when ``steady``, else ``* gb[i, :width]``, for i < n (float32 products, ``<width x float>``
    vectors in LLVM IR)."""

    def codegen(context, builder, signature, args):
        xty, yty, _, gvty, gbty, _ = signature.args
        L = _Lanes(context, builder, width)
        xa, ya, gva, gba = (
            L.array(t, a) for t, a in zip((xty, yty, gvty, gbty), (args[0], args[1], args[3], args[4]))
        )
        n = args[2]

        def samples(level):
            ia = cgutils.alloca_once_value(builder, L.i64(0))

            def one(i):
                L.store(builder.fmul(L.load(xty, xa, [i, 0]), level(i)), yty, ya, [i, 0])
                builder.store(builder.add(i, L.i64(1)), ia)

            L.loop(ia, lambda i: builder.icmp_signed("<", i, n), one)

        with builder.if_else(args[5]) as (held, ramp):
            with held:
                g = L.load(gvty, gva, [0])
                samples(lambda s: g)
            with ramp:
                samples(lambda s: L.load(gbty, gba, [s, 0]))
        return context.get_dummy_value()

    @intrinsic
    def scale(typingctx, x, y, n, gv, gb, steady):
        return types.void(x, y, types.int64, gv, gb, types.boolean), codegen

    return scale


def _box_codegen(scaled: bool) -> Any:
    """Code generator of :data:`box_in16` (``scaled``) and :data:`box_out16`."""

    def codegen(context, builder, signature, args):
        xty, yty = signature.args[:2]
        L = _Lanes(context, builder, 16)
        xa, ya = L.arrays(signature, args, 0, 1)
        n = args[2]
        if scaled:
            g = L.load(signature.args[3], L.array(signature.args[3], args[3]), [0])
            zero = ir.Constant(L.vt, [0.0] * 16)
        ia = cgutils.alloca_once_value(builder, L.i64(0))

        def one(i):
            x = L.load(xty, xa, [i, 0])
            L.store(builder.fadd(zero, builder.fmul(x, g)) if scaled else x, yty, ya, [i, 0])
            builder.store(builder.add(i, L.i64(1)), ia)

        L.loop(ia, lambda i: builder.icmp_signed("<", i, n), one)
        return context.get_dummy_value()

    return codegen


@intrinsic
def box_in16(typingctx, x, y, n, g):
    """``y[i, :16] = 0 + x[i, :16] * g[:16]`` for i < ``n`` (float32, as a send adds its
    products into zeroed rows): a voice group's send into a submix's lane box."""
    return types.void(x, y, types.int64, g), _box_codegen(True)


@intrinsic
def box_out16(typingctx, x, y, n):
    """``y[i, :16] = x[i, :16]`` for i < ``n``: a submix's lane box block into its lanes."""
    return types.void(x, y, types.int64), _box_codegen(False)


@nb.njit(**_FLAGS)
def fma32_soft(a, b, c):
    """Correctly rounded float32 ``a*b + c`` from float64 arithmetic only (no FMA instruction).

    ``p = a*b`` is exact in float64 (24 + 24 bits); ``s = p + c`` is rounded once, its error
    ``e`` recovered exactly (TwoSum). Rounding ``s`` to float32 is then correct unless ``s``
    fell exactly on a float32 midpoint while ``e != 0`` (the double-rounding case): the
    exact sum lies on ``e``'s side of the midpoint, so take that neighbour."""
    p = np.float64(a) * np.float64(b)
    cd = np.float64(c)
    s = p + cd
    bb = s - p
    e = (p - (s - bb)) + (cd - bb)
    f = np.float32(s)
    fd = np.float64(f)
    if e == 0.0 or fd == s or s != s:
        return f
    g = np.nextafter(f, np.float32(np.inf) if s > fd else np.float32(-np.inf))
    gd = np.float64(g)
    if 2.0 * s != fd + gd:
        return f
    # s is the midpoint of f and g: the exact value s + e lies on e's side of it
    if (e > 0.0) == (gd > fd):
        return g
    return f


@nb.njit(**_FLAGS)
def round_half_away(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


# --------------------------------------------------------------------------------------- Rsp0
@nb.njit(inline="always", **_FLAGS)
def resample_step(src_sample_rate, sample_rate, pitch):
    """The 16.16 source step per output sample: round-half-away(f32(src_sample_rate /
    sample_rate) * f32(pitch / 4096) * 65536), clamped to 0..2^18 (``pitch`` 4096 = 1.0)."""
    ratio = np.float32(np.float32(src_sample_rate / sample_rate) * np.float32(pitch / 4096.0))
    return min(max(round_half_away(float(ratio) * 65536.0), 0), 1 << 18)


@nb.njit(inline="always", **_FLAGS)
def rsp0_voice(
    v,
    pool,
    src_off,
    src_len,
    out,
    n,
    t0,
    dirty,
    pitch,
    src_sample_rate,
    sample_rate,
    step,
    ipos,
    frac,
    wait,
    rel_left,
    rel_total,
    ended_at,
):
    """:func:`rsp0` for instance ``v`` into the 1-D ``out`` (the node kernels and the fused
    kernels share this code, so both compute the same bits)."""
    if dirty[v]:
        step[v] = resample_step(src_sample_rate[v], sample_rate, pitch[v])
        dirty[v] = False
    base = src_off[v]
    m = src_len[v]
    k, fr, st, wt, rl, rt, end = ipos[v], frac[v], step[v], wait[v], rel_left[v], rel_total[v], ended_at[v]
    i0 = 0
    if end < 0 and wt == 0 and rl == 0 and n > 0 and k + ((fr + st * (n - 1)) >> 16) + 1 < m:
        # the common case: playing, no release, the block ends before the source does
        for i in range(n):
            a = pool[base + k]
            b = pool[base + k + 1]
            out[i] = a + (b - a) * (fr / 65536.0)
            acc = fr + st
            k = k + (acc >> 16)
            fr = acc & 0xFFFF
        i0 = n
    for i in range(i0, n):
        if end >= 0:
            out[i] = 0.0
            continue
        if wt > 0:
            wt -= 1
            out[i] = 0.0
            continue
        if k >= m:
            end = t0 + i
            out[i] = 0.0
            continue
        a = pool[base + k]
        b = pool[base + k + 1] if k + 1 < m else np.float32(0.0)
        val = a + (b - a) * (fr / 65536.0)
        if rl > 0:
            val *= rl / rt
            rl -= 1
            if rl == 0:
                end = t0 + i + 1
        out[i] = val
        acc = fr + st
        k = k + (acc >> 16)
        fr = acc & 0xFFFF
    ipos[v], frac[v], wait[v], rel_left[v], ended_at[v] = k, fr, wt, rl, end


RSP0_LANES_MAX_STEP = 1 << 17
"""Largest 16.16 step :func:`rsp0_lanes16` takes: 16 output samples then read at most 32
consecutive source samples (two vectors)."""


def _host_permute() -> bool:
    """Whether this CPU has AVX-512F's two-source permute (``vpermi2ps``)."""
    from llvmlite import binding

    return "+avx512f" in binding.get_host_cpu_features().flatten().split(",")


def _rsp0_lanes_codegen(native: bool) -> Any:
    """Code generator of :func:`rsp0_lanes16` (``native``: the AVX-512F permute, else element
    extracts that any target lowers)."""

    def codegen(context, builder, signature, args):
        tty, _, pty, aty, _, oty, ity, fty, sty, _ = signature.args
        L = _Lanes(context, builder, 16)
        ta, pa, aa, oa, ia_, fa, sa = L.arrays(signature, args, 0, 2, 3, 5, 6, 7, 8)
        n, g0, mask = args[1], args[4], args[9]
        i64, i32 = L.i64, ir.IntType(32)
        vi = ir.VectorType(i32, 16)
        vd = ir.VectorType(ir.DoubleType(), 16)

        def item(aty_, arr, idx):
            return builder.load(
                cgutils.get_item_pointer(context, builder, aty_, arr, [idx], wraparound=False)
            )

        def splat(x):
            return builder.shuffle_vector(
                builder.insert_element(ir.Constant(vi, ir.Undefined), x, i32(0)),
                ir.Constant(vi, ir.Undefined),
                ir.Constant(vi, [0] * 16),
            )

        if native:
            perm_fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(L.vt, [L.vt, vi, L.vt]), "llvm.x86.avx512.vpermi2var.ps.512"
            )

            def permute(w0, idx, w1):
                return builder.call(perm_fn, [w0, idx, w1])

        else:

            def permute(w0, idx, w1):
                both = builder.shuffle_vector(w0, w1, ir.Constant(ir.VectorType(i32, 32), list(range(32))))
                out = ir.Constant(L.vt, ir.Undefined)
                for e in range(16):
                    out = builder.insert_element(
                        out, builder.extract_element(both, builder.extract_element(idx, i32(e))), i32(e)
                    )
                return out

        # per lane: on?, source position (pool index of sample k), fraction, step, step * (0..15)
        iota = ir.Constant(vi, list(range(16)))
        lanes = []
        for j in range(16):
            on = builder.icmp_unsigned("!=", builder.and_(builder.lshr(mask, i64(j)), i64(1)), i64(0))
            # an off lane reads the (valid) first active instance's arrays, with step 0 from pool[0]
            v = item(aty, aa, builder.add(g0, builder.select(on, i64(j), i64(0))))
            pos = builder.select(on, builder.add(item(oty, oa, v), item(ity, ia_, v)), i64(0))
            fr = builder.select(on, builder.trunc(item(fty, fa, v), i32), i32(0))
            st = builder.select(on, builder.trunc(item(sty, sa, v), i32), i32(0))
            slots = [cgutils.alloca_once_value(builder, x) for x in (pos, fr)]
            lanes.append((on, slots, st, builder.mul(splat(st), iota)))
        base = builder.bitcast(pa.data, ir.FloatType().as_pointer())
        zero = ir.Constant(L.vt, [0.0] * 16)
        one, low, sh = (ir.Constant(vi, [c] * 16) for c in (1, 0xFFFF, 16))
        scale = ir.Constant(vd, [1.0 / 65536.0] * 16)
        fma_fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vd, [vd] * 3), "llvm.fma.v16f64"
        )
        ia = cgutils.alloca_once_value(builder, i64(0))

        def chunk(i0):
            rows = []
            for on, (ps, fs), st, steps in lanes:
                pos, fr = builder.load(ps), builder.load(fs)
                acc = builder.add(splat(fr), steps)
                idx, frac = builder.lshr(acc, sh), builder.and_(acc, low)
                w0 = builder.load(builder.bitcast(builder.gep(base, [pos]), L.vt.as_pointer()), align=4)
                w1 = builder.load(
                    builder.bitcast(builder.gep(base, [builder.add(pos, i64(16))]), L.vt.as_pointer()),
                    align=4,
                )
                a = permute(w0, idx, w1)
                b = permute(w0, builder.add(idx, one), w1)
                # rsp0_voice's a + (b - a) * (fr / 65536.0): float32 difference, float64 rest;
                # the float64 product is exact (24 + 16 bits), so one fma rounds like its sum
                d = builder.fmul(builder.fpext(builder.fsub(b, a), vd), scale)
                s = builder.call(fma_fn, [d, builder.sitofp(frac, vd), builder.fpext(a, vd)])
                rows.append(builder.select(on, builder.fptrunc(s, L.vt), zero))
                nxt = builder.add(fr, builder.mul(st, i32(16)))
                builder.store(builder.add(pos, builder.zext(builder.lshr(nxt, i32(16)), i64)), ps)
                builder.store(builder.and_(nxt, i32(0xFFFF)), fs)
            for k, row in enumerate(_transpose16(builder, rows)):
                s = builder.add(i0, i64(k))
                with builder.if_then(builder.icmp_signed("<", s, n), likely=True):
                    L.store(row, tty, ta, [s, 0])
            builder.store(builder.add(i0, i64(16)), ia)

        L.loop(ia, lambda i: builder.icmp_signed("<", i, n), chunk)
        return context.get_dummy_value()

    return codegen


def _rsp0_lanes(native: bool) -> Any:
    @intrinsic
    def kernel(typingctx, t, n, pool, act, g0, src_off, ipos, frac, step, mask):
        sig = types.void(t, types.int64, pool, act, types.int64, src_off, ipos, frac, step, types.int64)
        return sig, _rsp0_lanes_codegen(native)

    return kernel


rsp0_lanes16 = _rsp0_lanes(_host_permute())
"""A numba intrinsic ``(t, n, pool, act, g0, src_off, ipos, frac, step, mask)``: the common case
of :func:`rsp0_voice` (playing, no release, the block inside the source) for the instances
``v = act[g0 + j]`` whose bit j of ``mask`` is set (j < 16), into lane j of the sample-major
``t[:n, 0:16]`` (the other lanes get 0); ``ipos``, ``frac`` are not advanced. Each step
(``step[v]`` <= :data:`RSP0_LANES_MAX_STEP`) must keep the source reads inside ``pool``:
``src_off[v] + ipos[v] + 32`` plus the block's advance.

Sixteen output samples of one instance are one vector: their source indices
``k + (frac + step * i) >> 16`` (the sequential 16.16 walk in closed form) select from two
vector loads of the source, the interpolation is :func:`rsp0_voice`'s operations in its order
(float32 difference, float64 product and sum, rounded to float32), and sixteen instances'
vectors are transposed into lanes in registers. Bit-identical to the scalar walk."""
rsp0_lanes16_portable = _rsp0_lanes(False)
""":data:`rsp0_lanes16` without the AVX-512 permute (element extracts; the tests compare both)."""


@nb.njit(**_FLAGS)
def rsp0(
    pool,
    src_off,
    src_len,
    act,
    y,
    n,
    t0,
    dirty,
    pitch,
    src_sample_rate,
    sample_rate,
    step,
    ipos,
    frac,
    wait,
    rel_left,
    rel_total,
    ended_at,
):
    """Linear 16.16 resampler: ``out = a + (b - a) * frac / 65536``.

    step = round-half-away(f32(src_sample_rate / sample_rate) * pitch / 4096 * 65536), clamped to 2^18.
    ``wait`` samples of silence precede the source (the first-block silence);
    ``rel_left > 0`` fades out linearly over ``rel_total`` samples, then the voice ends.
    ``ended_at`` receives the sample at which the instance went silent for good.
    """
    for v in act:
        rsp0_voice(
            v,
            pool,
            src_off,
            src_len,
            y[v, 0],
            n,
            t0,
            dirty,
            pitch,
            src_sample_rate,
            sample_rate,
            step,
            ipos,
            frac,
            wait,
            rel_left,
            rel_total,
            ended_at,
        )


# -------------------------------------------------------------------------------- biquads
@nb.njit(inline="always", **_FLAGS)
def refresh_peak_voice(v, dirty, centre, gain, q, sample_rate, coefs, bypass, state):
    """Recompute instance ``v``'s PI20 coefficients if dirty (clearing history on entering bypass)."""
    if dirty[v]:
        dirty[v] = False
        on = peaking_coefs(centre[v], gain[v], q[v], sample_rate, coefs[v])
        if not on and not bypass[v]:
            state[v, :, :] = 0.0
        bypass[v] = not on


@nb.njit(inline="always", **_FLAGS)
def refresh_pass_voice(v, dirty, cutoff, sample_rate, high, coefs, bypass, state):
    """Recompute instance ``v``'s HI20 (``high``) or LI20 coefficients if dirty."""
    if dirty[v]:
        dirty[v] = False
        on = pass_coefs(cutoff[v], sample_rate, high, coefs[v])
        if not on and not bypass[v]:
            state[v, :, :] = 0.0
        bypass[v] = not on


@nb.njit(**_FLAGS)
def refresh_peak(act, dirty, centre, gain, q, sample_rate, coefs, bypass, state):
    """Recompute PI20 coefficients of dirty instances (clearing history on entering bypass)."""
    for v in act:
        refresh_peak_voice(v, dirty, centre, gain, q, sample_rate, coefs, bypass, state)


@nb.njit(**_FLAGS)
def refresh_pass(act, dirty, cutoff, sample_rate, high, coefs, bypass, state):
    """Recompute HI20 (``high``) or LI20 coefficients of dirty instances."""
    for v in act:
        refresh_pass_voice(v, dirty, cutoff, sample_rate, high, coefs, bypass, state)


@nb.njit(inline="always", **_FLAGS)
def df1(x0, x1, x2, y1, y2, b0, b1, b2, na1, na2, pos):
    """One Direct Form I sample in float32 as the console computes it (spec 5.4).

    ``pos`` is the sample's position in its group of 8 (groups aligned to the 256-sample
    console block, i.e. ``pos = absolute sample index & 7``); the feed-forward sum is
    associated by position, its outer two steps are fused multiply-adds, and the denormal
    bias f32(1e-18) is added to the first product; ``na1``/``na2`` are ``-a1``/``-a2``."""
    bias = np.float32(DENORMAL_BIAS)
    if pos == 0:
        t = fma32(b1, x1, fma32(b2, x2, b0 * x0 + bias))
    elif pos == 1:
        t = fma32(b2, x2, fma32(b1, x1, b0 * x0 + bias))
    else:
        t = fma32(b0, x0, fma32(b2, x2, b1 * x1 + bias))
    return fma32(na2, y2, fma32(na1, y1, t))


@nb.njit(**_FLAGS)
def _biquad_one(xin, out, n, t0, co, st):
    b0, b1, b2, na1, na2 = co[0], co[1], co[2], -co[3], -co[4]
    x1, x2, y1, y2 = st[0], st[1], st[2], st[3]
    for i in range(n):
        x0 = xin[i]
        y0 = df1(x0, x1, x2, y1, y2, b0, b1, b2, na1, na2, (t0 + i) & 7)
        x2 = x1
        x1 = x0
        y2 = y1
        y1 = y0
        out[i] = y0
    st[0], st[1], st[2], st[3] = x1, x2, y1, y2


@nb.njit(**_FLAGS)
def _biquad_four(xa, xb, xc, xd, oa, ob, oc, od, n, t0, ca, cb, cc, cd, sa, sb, sc, sd):
    """Four independent biquads interleaved sample by sample (instruction-level parallelism);
    each one computes exactly what :func:`_biquad_one` would."""
    a_x1, a_x2, a_y1, a_y2 = sa[0], sa[1], sa[2], sa[3]
    b_x1, b_x2, b_y1, b_y2 = sb[0], sb[1], sb[2], sb[3]
    c_x1, c_x2, c_y1, c_y2 = sc[0], sc[1], sc[2], sc[3]
    d_x1, d_x2, d_y1, d_y2 = sd[0], sd[1], sd[2], sd[3]
    for i in range(n):
        p = (t0 + i) & 7
        a0 = xa[i]
        b0 = xb[i]
        c0 = xc[i]
        d0 = xd[i]
        ay = df1(a0, a_x1, a_x2, a_y1, a_y2, ca[0], ca[1], ca[2], -ca[3], -ca[4], p)
        by = df1(b0, b_x1, b_x2, b_y1, b_y2, cb[0], cb[1], cb[2], -cb[3], -cb[4], p)
        cy = df1(c0, c_x1, c_x2, c_y1, c_y2, cc[0], cc[1], cc[2], -cc[3], -cc[4], p)
        dy = df1(d0, d_x1, d_x2, d_y1, d_y2, cd[0], cd[1], cd[2], -cd[3], -cd[4], p)
        a_x2, a_x1, a_y2, a_y1 = a_x1, a0, a_y1, ay
        b_x2, b_x1, b_y2, b_y1 = b_x1, b0, b_y1, by
        c_x2, c_x1, c_y2, c_y1 = c_x1, c0, c_y1, cy
        d_x2, d_x1, d_y2, d_y1 = d_x1, d0, d_y1, dy
        oa[i] = ay
        ob[i] = by
        oc[i] = cy
        od[i] = dy
    sa[0], sa[1], sa[2], sa[3] = a_x1, a_x2, a_y1, a_y2
    sb[0], sb[1], sb[2], sb[3] = b_x1, b_x2, b_y1, b_y2
    sc[0], sc[1], sc[2], sc[3] = c_x1, c_x2, c_y1, c_y2
    sd[0], sd[1], sd[2], sd[3] = d_x1, d_x2, d_y1, d_y2


@nb.njit(inline="always", **_FLAGS)
def biquad_voice(v, x, y, n, t0, coefs, bypass, state):
    """:func:`biquad` for instance ``v``; ``x``/``y`` are its (channels, samples) signals."""
    for c in range(x.shape[0]):
        if bypass[v]:
            copy_row(x[c], y[c], n)
        else:
            _biquad_one(x[c], y[c], n, t0, coefs[v], state[v, c])


@nb.njit(**_FLAGS)
def biquad(act, x, y, n, t0, coefs, bypass, state):
    """Direct Form I biquad (float32, :func:`df1`) per instance and channel; exact pass-through
    when bypassed. ``t0`` is the absolute index of the block's first sample (it fixes each
    sample's position in its group of 8, so the output does not depend on the block size).

    Active, non-bypassed channels are processed four at a time, interleaved, which is
    bit-identical to one at a time (each recursion is computed in the same order)."""
    nch = x.shape[1]
    k = 0
    v0 = c0 = v1 = c1 = v2 = c2 = 0
    for v in act:
        if bypass[v]:
            for c in range(nch):
                copy_row(x[v, c], y[v, c], n)
            continue
        for c in range(nch):
            if k == 0:
                v0, c0 = v, c
            elif k == 1:
                v1, c1 = v, c
            elif k == 2:
                v2, c2 = v, c
            else:
                _biquad_four(
                    x[v0, c0],
                    x[v1, c1],
                    x[v2, c2],
                    x[v, c],
                    y[v0, c0],
                    y[v1, c1],
                    y[v2, c2],
                    y[v, c],
                    n,
                    t0,
                    coefs[v0],
                    coefs[v1],
                    coefs[v2],
                    coefs[v],
                    state[v0, c0],
                    state[v1, c1],
                    state[v2, c2],
                    state[v, c],
                )
                k = -1
            k += 1
    if k > 0:
        _biquad_one(x[v0, c0], y[v0, c0], n, t0, coefs[v0], state[v0, c0])
    if k > 1:
        _biquad_one(x[v1, c1], y[v1, c1], n, t0, coefs[v1], state[v1, c1])
    if k > 2:
        _biquad_one(x[v2, c2], y[v2, c2], n, t0, coefs[v2], state[v2, c2])


# ----------------------------------------------------------------------------------- ramps
@nb.njit(inline="always", **_FLAGS)
def _retarget(v, dirty, target, cur, step, left, init, divisor):
    """Apply a dirty target: the first value jumps; later ones ramp over 64 samples with a
    per-sample step of (target - current) / ``divisor`` (64: Gai0 lands on the target; 65:
    Sen0 stops 64/65 of the way there)."""
    if dirty[v]:
        dirty[v] = False
        if not init[v]:
            init[v] = True
            cur[v] = target[v]
            left[v] = 0
        else:
            step[v] = (target[v] - cur[v]) / divisor
            left[v] = 64


# ----------------------------------------------------------------------------------- Gai0
@nb.njit(inline="always", **_FLAGS)
def _scale_rows(x, y, r, n, g):
    """``y[c, i] = x[c, i] * f32(g)`` for i in r..n-1 (a float32 product)."""
    g = np.float32(g)
    for c in range(x.shape[0]):
        xc = x[c, r:n]  # slices indexed from 0: numba then knows i >= 0 and LLVM vectorises
        yc = y[c, r:n]
        for i in range(n - r):
            yc[i] = xc[i] * g


@nb.njit(inline="always", **_FLAGS)
def gai0_voice(v, x, y, n, dirty, target, cur, step, left, init):
    """:func:`gai0` for instance ``v``; ``x``/``y`` are its (channels, samples) signals.

    The ramp's samples are computed one by one; once it has landed the gain is constant
    and the rest of the block is one plain (vectorisable) loop: the same values."""
    nch = x.shape[0]
    _retarget(v, dirty, target, cur, step, left, init, 64.0)
    if left[v] == 0:
        _scale_rows(x, y, 0, n, cur[v])
        return
    g0, l0 = cur[v], left[v]
    r = min(l0, n)
    g, l = g0, l0
    for c in range(nch):
        g, l = g0, l0
        for i in range(r):
            l -= 1
            g = target[v] if l == 0 else g + step[v]
            y[c, i] = x[c, i] * np.float32(g)
    _scale_rows(x, y, r, n, g)
    cur[v], left[v] = g, l


@nb.njit(**_FLAGS)
def gai0(act, x, y, n, dirty, target, cur, step, left, init):
    """Gain: a target change ramps linearly over 64 samples; the first value jumps."""
    for v in act:
        gai0_voice(v, x[v], y[v], n, dirty, target, cur, step, left, init)


# ----------------------------------------------------------------------------------- Sen0
@nb.njit(inline="always", **_FLAGS)
def _send_rows(x, c_in, tgt, d, c_out, r, n, g, duck, band, has_duck):
    """``tgt[d, c_out, i] += x[c_in, i] * f32(g)`` (times the duck envelope) for i in r..n-1."""
    g = np.float32(g)
    xc = x[c_in, r:n]
    tc = tgt[d, c_out, r:n]
    if has_duck:
        dk = duck[band, r:n]
        for i in range(n - r):
            tc[i] += xc[i] * g * dk[i]
    else:
        for i in range(n - r):
            tc[i] += xc[i] * g


@nb.njit(inline="always", **_FLAGS)
def _send_split(x, tgt, d, r, n, g, duck, band, has_duck):
    """The mono-to-multichannel steady part: both channels get ``x * f32(g / sqrt 2)``."""
    gk = np.float32(g * 0.7071067811865476)
    xc = x[0, r:n]
    t0 = tgt[d, 0, r:n]
    t1 = tgt[d, 1, r:n]
    if has_duck:
        dk = duck[band, r:n]
        for i in range(n - r):
            s = xc[i] * gk * dk[i]
            t0[i] += s
            t1[i] += s
    else:
        for i in range(n - r):
            s = xc[i] * gk
            t0[i] += s
            t1[i] += s


@nb.njit(inline="always", **_FLAGS)
def sen0_voice(v, x, n, dirty, target, cur, step, left, init, dest, tgt, duck, band):
    """:func:`sen0` for instance ``v``; ``x`` is its (channels, samples) signal. The ramp's
    samples come one by one, the held level's as one plain loop (the same values)."""
    nch = x.shape[0]
    tch = tgt.shape[1]
    mono_split = nch == 1 and tch > 1
    has_duck = duck.shape[0] > 0
    k = 0.7071067811865476
    _retarget(v, dirty, target, cur, step, left, init, 65.0)
    d = dest[v]
    if d < 0:
        return
    g0, l0 = cur[v], left[v]
    r = min(l0, n)
    bv = band[v] if has_duck else 0
    g, l = g0, l0
    if mono_split:
        for i in range(r):
            l -= 1
            g += step[v]
            s = x[0, i] * np.float32(g * k)
            if has_duck:
                s *= duck[bv, i]
            tgt[d, 0, i] += s
            tgt[d, 1, i] += s
        _send_split(x, tgt, d, r, n, g, duck, bv, has_duck)
    else:
        for c in range(min(nch, tch)):
            g, l = g0, l0
            for i in range(r):
                l -= 1
                g += step[v]
                s = x[c, i] * np.float32(g)
                if has_duck:
                    s *= duck[bv, i]
                tgt[d, c, i] += s
            _send_rows(x, c, tgt, d, c, r, n, g, duck, bv, has_duck)
    cur[v], left[v] = g, l


def _splat16(builder: Any, x: Any) -> Any:
    """``<16 x T>`` of the scalar ``x``."""
    vt = ir.VectorType(x.type, 16)
    one = builder.insert_element(ir.Constant(vt, ir.Undefined), x, ir.IntType(32)(0))
    return builder.shuffle_vector(
        one, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), 16), [0] * 16)
    )


def _tile_rows_loop(L: _Lanes, tty: Any, ta: Any, n: Any, body: Any) -> None:
    """For each 16-sample chunk i0 < ``n`` of the sample-major ``t``: its 16 x 16 tile
    transposed in registers, ``body(i0, rows)`` with row j = lane j's samples i0 .. i0 + 15."""
    builder, i64 = L.builder, L.i64
    ia = cgutils.alloca_once_value(builder, i64(0))

    def chunk(i0):
        body(i0, _transpose16(builder, [L.load(tty, ta, [builder.add(i0, i64(k)), 0]) for k in range(16)]))
        builder.store(builder.add(i0, i64(16)), ia)

    L.loop(ia, lambda i: builder.icmp_signed("<", i, n), chunk)


def _lane_item(context: Any, builder: Any, mask: Any, aty: Any, aa: Any, g0: Any) -> Any:
    """Per lane j < 16: (on: bit j of ``mask``, its instance ``act[g0 + j]``, or act[g0] when off)."""
    i64 = ir.IntType(64)
    out = []
    for j in range(16):
        on = builder.icmp_unsigned("!=", builder.and_(builder.lshr(mask, i64(j)), i64(1)), i64(0))
        at = builder.add(g0, builder.select(on, i64(j), i64(0)))
        out.append(
            (on, builder.load(cgutils.get_item_pointer(context, builder, aty, aa, [at], wraparound=False)))
        )
    return out


class _RowSums:
    """Adds lane vectors into destination rows ``tgt[d, ch, i0 : i0 + 16]`` in lane order, one
    chunk of samples at a time: while consecutive lanes add into the same row the running sum
    stays in a register (loaded once, stored when the destination changes or the chunk ends),
    so many instances sending to one bus do not wait on a store per instance. The additions
    are the same, in the same order."""

    def __init__(self, L: _Lanes, gty: Any, ga: Any, chans: int) -> None:
        b = L.builder
        self.L, self.gty, self.ga = L, gty, ga
        self.acc = [cgutils.alloca_once(b, L.vt) for _ in range(chans)]
        self.dest = cgutils.alloca_once(b, L.i64)
        self.have = cgutils.alloca_once(b, ir.IntType(1))

    def _row(self, d: Any, ch: Any, i0: Any) -> Any:
        return self.L.ptr(self.gty, self.ga, [d, ch, i0])

    def start(self) -> None:
        self.L.builder.store(ir.IntType(1)(0), self.have)

    def add(self, d: Any, i0: Any, chans: list, vecs: list) -> None:
        """Lane's ``vecs[k]`` into row ``(d, chans[k])``."""
        b = self.L.builder
        have, prev = b.load(self.have), b.load(self.dest)
        same = b.and_(have, b.icmp_signed("==", prev, d))
        with b.if_then(b.not_(same)):
            with b.if_then(have):
                for acc, ch in zip(self.acc, chans):
                    b.store(b.load(acc), self._row(prev, ch, i0), align=4)
            for acc, ch in zip(self.acc, chans):
                b.store(b.load(self._row(d, ch, i0), align=4), acc)
        for acc, vec in zip(self.acc, vecs):
            b.store(b.fadd(b.load(acc), vec), acc)
        b.store(d, self.dest)
        b.store(ir.IntType(1)(1), self.have)

    def finish(self, i0: Any, chans: list) -> None:
        b = self.L.builder
        with b.if_then(b.load(self.have)):
            prev = b.load(self.dest)
            for acc, ch in zip(self.acc, chans):
                b.store(b.load(acc), self._row(prev, ch, i0), align=4)


def _send_lanes_codegen(split: bool) -> Any:
    """Code generator of :data:`send_lanes16` (``split``: one channel into channels 0 and 1
    at ``level / sqrt 2``, :func:`_send_split`'s products)."""

    def codegen(context, builder, signature, args):
        tty, _, gty, _, aty, _, dty, cty, _ = signature.args
        L = _Lanes(context, builder, 16)
        ta, ga, aa, da, ca = L.arrays(signature, args, 0, 2, 4, 6, 7)
        n, c, g0, mask = args[1], args[3], args[5], args[8]
        lanes = []
        for on, v in _lane_item(context, builder, mask, aty, aa, g0):
            level = builder.load(cgutils.get_item_pointer(context, builder, cty, ca, [v], wraparound=False))
            if split:
                level = builder.fmul(level, ir.Constant(ir.DoubleType(), 0.7071067811865476))
            d = builder.load(cgutils.get_item_pointer(context, builder, dty, da, [v], wraparound=False))
            lanes.append((on, d, _splat16(builder, builder.fptrunc(level, ir.FloatType()))))

        chans = [L.i64(0), L.i64(1)] if split else [c]
        sums = _RowSums(L, gty, ga, len(chans))

        def body(i0, rows):
            sums.start()
            for (on, d, gain), row in zip(lanes, rows):
                with builder.if_then(on):
                    s = builder.fmul(row, gain)
                    sums.add(d, i0, chans, [s] * len(chans))
            sums.finish(i0, chans)

        _tile_rows_loop(L, tty, ta, n, body)
        return context.get_dummy_value()

    return codegen


def _send_lanes(split: bool) -> Any:
    @intrinsic
    def kernel(typingctx, t, n, tgt, c, act, g0, dest, cur, mask):
        sig = types.void(t, types.int64, tgt, types.int64, act, types.int64, dest, cur, types.int64)
        return sig, _send_lanes_codegen(split)

    return kernel


send_lanes16 = _send_lanes(False)
"""A numba intrinsic ``(t, n, tgt, c, act, g0, dest, cur, mask)``: ``tgt[dest[v], c, i] +=
t[i, j] * f32(cur[v])`` for ``v = act[g0 + j]`` whose bit j of ``mask`` is set (j < 16) and
i < ``n`` (a multiple of 16): :func:`sen0_voice`'s held level on channel c, straight from the
sample-major ``t``. Each 16 x 16 tile is transposed in registers, then the instances add in
lane order, so every destination sample sums its float32 products in :func:`sen0_voice`'s
order (instance order)."""
send_split_lanes16 = _send_lanes(True)
""":data:`send_lanes16` for a one-channel input sent to more channels (``c`` unused): each
product ``t[i, j] * f32(cur[v] / sqrt 2)`` adds into channels 0 and 1 (:func:`_send_split`)."""


def _pan_send_lanes_codegen(env: bool) -> Any:
    """Code generator of :data:`pan_send_lanes16` (``env``: :data:`env_pan_send_lanes16`)."""

    def codegen(context, builder, signature, args):
        tty, _, aty, _, oty, pty, gty, dty, sty = signature.args[:9]
        L = _Lanes(context, builder, 16)
        ta, aa, oa, pa, ga, da, sa = L.arrays(signature, args, 0, 2, 4, 5, 6, 7, 8)
        n, g0, mask = args[1], args[3], args[9]
        i64, f32 = L.i64, ir.FloatType()
        keep = builder.icmp_unsigned("!=", args[14 if env else 10], i64(0))

        def item(ty, arr, idx):
            return builder.load(cgutils.get_item_pointer(context, builder, ty, arr, idx, wraparound=False))

        lanes = []
        for on, v in _lane_item(context, builder, mask, aty, aa, g0):
            pan = [_splat16(builder, builder.fptrunc(item(pty, pa, [v, i64(ch)]), f32)) for ch in range(2)]
            gs = _splat16(builder, builder.fptrunc(item(sty, sa, [v]), f32))
            lanes.append((on, v, item(dty, da, [v]), pan, gs))
        chans = [i64(0), i64(1)]
        sums = _RowSums(L, gty, ga, 2)
        sends = []
        if env:
            # the split send's lanes (:data:`send_split_lanes16`' products)
            ety, edty, ecty = signature.args[10:13]
            ea, eda, eca = L.arrays(signature, args, 10, 11, 12)
            for eon, v in _lane_item(context, builder, args[13], aty, aa, g0):
                level = builder.fmul(item(ecty, eca, [v]), ir.Constant(ir.DoubleType(), 0.7071067811865476))
                sends.append((eon, item(edty, eda, [v]), _splat16(builder, builder.fptrunc(level, f32))))
            esums = _RowSums(L, ety, ea, 2)

        def body(i0, rows):
            sums.start()
            if env:
                esums.start()
            for k, ((on, v, d, pan, gs), row) in enumerate(zip(lanes, rows)):
                if env:
                    eon, ed, gain = sends[k]
                    with builder.if_then(eon):
                        es = builder.fmul(row, gain)
                        esums.add(ed, i0, chans, [es, es])
                with builder.if_then(on):
                    ps = [builder.fmul(row, pan[ch]) for ch in range(2)]
                    with builder.if_then(keep):
                        for ch in range(2):
                            L.store(ps[ch], oty, oa, [v, i64(ch), i0])
                    sums.add(d, i0, chans, [builder.fmul(p, gs) for p in ps])
            sums.finish(i0, chans)
            if env:
                esums.finish(i0, chans)

        _tile_rows_loop(L, tty, ta, n, body)
        return context.get_dummy_value()

    return codegen


@intrinsic
def pan_send_lanes16(typingctx, t, n, act, g0, out, pan, tgt, dest, s_cur, mask, keep):
    """:func:`pn21_sen0_voice`'s one-pass case (both levels held, two channels, no ducking)
    straight from the sample-major ``t``: for ``v = act[g0 + j]`` whose bit j of ``mask`` is
    set and i < ``n`` (a multiple of 16), ``p = t[i, j] * f32(pan[v, c])`` is stored in
    ``out[v, c, i]`` when ``keep`` is nonzero (a metered bank) and ``p * f32(s_cur[v])`` added
    to ``tgt[dest[v], c, i]`` (c = 0, 1), tiles transposed in registers, instances in lane
    order (the destination sums as :func:`pn21_sen0_voice`'s)."""
    sig = types.void(t, types.int64, act, types.int64, out, pan, tgt, dest, s_cur, types.int64, types.int64)
    return sig, _pan_send_lanes_codegen(False)


@intrinsic
def env_pan_send_lanes16(
    typingctx, t, n, act, g0, out, pan, tgt, dest, s_cur, mask, etgt, edest, e_cur, emask, keep
):
    """:data:`send_split_lanes16` into ``etgt`` (``edest``, ``e_cur``, ``emask``) and
    :data:`pan_send_lanes16` from the same lanes in one pass: each tile is transposed once,
    each destination sums in instance order as with the two kernels (``etgt`` and ``tgt`` are
    different buses: a graph's sends never share one); ``out`` is written when ``keep``."""
    sig = types.void(
        t,
        types.int64,
        act,
        types.int64,
        out,
        pan,
        tgt,
        dest,
        s_cur,
        types.int64,
        etgt,
        edest,
        e_cur,
        types.int64,
        types.int64,
    )
    return sig, _pan_send_lanes_codegen(True)


@nb.njit(**_FLAGS)
def sen0(act, x, n, dirty, target, cur, step, left, init, dest, tgt, duck, band):
    """Send: adds ``level * x`` into ``tgt[dest[v]]`` (pass-through is the caller's view).

    The level reaches 64/65 of the way to a new target over 64 samples, then holds
    (the port's rule); the first value jumps. ``duck`` (bands, n) multiplies by the
    destination bus's ducking envelope of the instance's ``band`` (empty = no ducker).
    A mono signal into a multichannel destination goes to channels 0 and 1 at 1/sqrt(2).
    """
    for v in act:
        sen0_voice(v, x[v], n, dirty, target, cur, step, left, init, dest, tgt, duck, band)


# ----------------------------------------------------------------------------------- Del0
@nb.njit(inline="always", **_FLAGS)
def del0_retarget(v, dirty, seconds, sample_rate, size, cur, old, left):
    """Instance ``v``'s new delay (samples), when its parameter changed: a change starts the
    128-sample crossfade from the old tap. ``size`` is the ring length (samples)."""
    if dirty[v]:
        dirty[v] = False
        # the product in float32, as the port computes it (spec 5.4)
        d = min(max(round_half_away(np.float32(seconds[v]) * np.float32(sample_rate)), 0), size - 1)
        if d != cur[v]:
            old[v] = cur[v]
            cur[v] = d
            left[v] = 128


@nb.njit(inline="always", **_FLAGS)
def _ring_write(b, w, x, n, size):
    """``b[(w + i) % size] = x[i]`` for i < n, as two contiguous copies."""
    first = min(n, size - w)
    bs = b[w : w + first]
    for i in range(first):
        bs[i] = x[i]
    xs = x[first:n]
    for i in range(n - first):
        b[i] = xs[i]


@nb.njit(inline="always", **_FLAGS)
def _ring_read(b, r, y, n, size):
    """``y[i] = b[(r + i) % size]`` for i < n, as two contiguous copies."""
    first = min(n, size - r)
    bs = b[r : r + first]
    for i in range(first):
        y[i] = bs[i]
    ys = y[first:n]
    for i in range(n - first):
        ys[i] = b[i]


@nb.njit(inline="always", **_FLAGS)
def del0_voice(v, x, y, n, dirty, seconds, sample_rate, buf, widx, cur, old, left):
    """:func:`del0` for instance ``v``; ``x``/``y`` are its (channels, samples) signals."""
    nch = x.shape[0]
    size = buf.shape[2]
    mask = size - 1
    del0_retarget(v, dirty, seconds, sample_rate, size, cur, old, left)
    w0, l0, d, od = widx[v], left[v], cur[v], old[v]
    if l0 == 0 and d + n <= size:
        # held delay, and the block cannot wrap onto a tap it still has to read: writing the
        # whole block first, then reading its taps, moves the same samples as the loop below
        for c in range(nch):
            _ring_write(buf[v, c], w0, x[c], n, size)
            _ring_read(buf[v, c], (w0 - d) & mask, y[c], n, size)
        widx[v] = (w0 + n) & mask
        return
    for c in range(nch):
        w, l = w0, l0
        b = buf[v, c]
        for i in range(n):
            b[w] = x[c, i]
            tap = b[(w - d) & mask]
            if l > 0:
                g = (128 - l + 1) / 128.0
                tap = (1.0 - g) * b[(w - od) & mask] + g * tap
                l -= 1
            y[c, i] = tap
            w = (w + 1) & mask
        widx[v], left[v] = w, l


@nb.njit(**_FLAGS)
def del0(act, x, y, n, dirty, seconds, sample_rate, buf, widx, cur, old, left):
    """Whole-sample delay D = round-half-away(seconds * sample_rate); a change of D crossfades
    the old and new taps over 128 samples; D = 0 passes through (the buffer still fills).
    ``buf`` has a power-of-two length per channel."""
    for v in act:
        del0_voice(v, x[v], y[v], n, dirty, seconds, sample_rate, buf, widx, cur, old, left)


# ----------------------------------------------------------------------------------- Pn21
@nb.njit(**_FLAGS)
def pan_gains(angle_deg, level, layout, out):
    """Constant-power pairwise panning gains for one source.

    layout 0 = stereo (L, R): rear angles fold onto the front arc, then the angle is
    clamped to the speakers at +/-30 degrees. layout 1 = 5.1 (L, R, C, LFE, Ls, Rs) on
    the ring L +30, C 0, R -30, Rs -110, Ls +110 (LFE gets nothing). Angles: + = left.
    """
    a = ((angle_deg + 180.0) % 360.0) - 180.0
    for c in range(out.shape[0]):
        out[c] = 0.0
    if layout == 0:
        if a > 90.0:
            a = 180.0 - a
        elif a < -90.0:
            a = -180.0 - a
        a = min(max(a, -30.0), 30.0)
        f = (a + 30.0) / 60.0
        out[0] = level * math.sin(f * math.pi / 2.0)
        out[1] = level * math.cos(f * math.pi / 2.0)
        return
    # 5.1 ring in ascending angle: R(-30) C(0) L(30) Ls(110) Rs(250)
    angles = (-30.0, 0.0, 30.0, 110.0, 250.0)
    chans = (1, 2, 0, 4, 5)
    if a < -30.0:
        a += 360.0
    for j in range(5):
        lo = angles[j]
        hi = angles[(j + 1) % 5] + (360.0 if j == 4 else 0.0)
        if lo <= a <= hi:
            f = (a - lo) / (hi - lo)
            out[chans[j]] = level * math.cos(f * math.pi / 2.0)
            out[chans[(j + 1) % 5]] += level * math.sin(f * math.pi / 2.0)
            return


@nb.njit(inline="always", **_FLAGS)
def _pan_retarget(v, nch, dirty, angle, level, layout, cur, goal, step, left, init, scratch):
    """Apply instance ``v``'s dirty pan: the first matrix jumps, later ones ramp over 64 samples."""
    if dirty[v]:
        dirty[v] = False
        pan_gains(angle[v], level[v], layout, scratch)
        for c in range(nch):
            goal[v, c] = scratch[c]
        if not init[v]:
            init[v] = True
            for c in range(nch):
                cur[v, c] = scratch[c]
            left[v] = 0
        else:
            for c in range(nch):
                step[v, c] = (scratch[c] - cur[v, c]) / 64.0
            left[v] = 64


@nb.njit(inline="always", **_FLAGS)
def pn21_voice(v, x, y, n, dirty, angle, level, layout, cur, goal, step, left, init, scratch):
    """:func:`pn21` for instance ``v``; ``x`` (1, samples) -> ``y`` (channels, samples)."""
    nch = y.shape[0]
    _pan_retarget(v, nch, dirty, angle, level, layout, cur, goal, step, left, init, scratch)
    l0 = left[v]
    r = min(l0, n)
    for c in range(nch):
        g, l = cur[v, c], l0
        for i in range(r):
            l -= 1
            g = goal[v, c] if l == 0 else g + step[v, c]
            y[c, i] = x[0, i] * np.float32(g)
        yc = y[c, r:n]
        x0 = x[0, r:n]
        g32 = np.float32(g)
        for i in range(n - r):
            yc[i] = x0[i] * g32
        cur[v, c] = g
    left[v] = max(l0 - n, 0)


@nb.njit(inline="always", **_FLAGS)
def pn21_sen0_voice(
    v,
    x,
    y,
    n,
    dirty,
    angle,
    level,
    layout,
    cur,
    goal,
    step,
    left,
    init,
    scratch,
    s_dirty,
    s_target,
    s_cur,
    s_step,
    s_left,
    s_init,
    dest,
    tgt,
    duck,
    band,
):
    """:func:`pn21_voice` then :func:`sen0_voice` of its output (``s_*``: the send's arrays):
    when both levels hold and the send maps channel to channel, one pass computes each pan
    product, stores it and adds its send product to the destination (the same operations in
    the same order); otherwise the two run one after the other."""
    nch = y.shape[0]
    _pan_retarget(v, nch, dirty, angle, level, layout, cur, goal, step, left, init, scratch)
    _retarget(v, s_dirty, s_target, s_cur, s_step, s_left, s_init, 65.0)
    d = dest[v]
    if left[v] != 0 or s_left[v] != 0 or d < 0 or nch != tgt.shape[1]:
        pn21_voice(v, x, y, n, dirty, angle, level, layout, cur, goal, step, left, init, scratch)
        sen0_voice(v, y, n, s_dirty, s_target, s_cur, s_step, s_left, s_init, dest, tgt, duck, band)
        return
    gs = np.float32(s_cur[v])
    x0 = x[0, :n]
    if duck.shape[0] > 0:
        dk = duck[band[v], :n]
        for c in range(nch):
            gp = np.float32(cur[v, c])
            yc = y[c, :n]
            tc = tgt[d, c, :n]
            for i in range(n):
                p = x0[i] * gp
                yc[i] = p
                tc[i] += p * gs * dk[i]
    else:
        for c in range(nch):
            gp = np.float32(cur[v, c])
            yc = y[c, :n]
            tc = tgt[d, c, :n]
            for i in range(n):
                p = x0[i] * gp
                yc[i] = p
                tc[i] += p * gs


@nb.njit(**_FLAGS)
def pn21(act, x, y, n, dirty, angle, level, layout, cur, goal, step, left, init, scratch):
    """Mono -> multichannel pan; every matrix cell ramps over 64 samples on change."""
    for v in act:
        pn21_voice(v, x[v], y[v], n, dirty, angle, level, layout, cur, goal, step, left, init, scratch)


# --------------------------------------------------------------------------------- ducker
@nb.njit(**_FLAGS)
def duck_envelope(env, held, hold_left, n, floor, down_step, up_step, recovery, out):
    """Per-band bus ducking envelopes (linear gain) for the next ``n`` samples.

    A band is ducked while ``held[b] > 0`` (some trigger of a higher band is active) and
    for ``recovery`` samples after release; it fades to ``floor`` by ``down_step`` per
    sample and back to 1.0 by ``up_step`` per sample. Returns whether every band is at rest
    afterwards (held at the floor with its recovery full, or released, recovered and at 1.0).
    """
    rest = True
    for b in range(env.shape[0]):
        g = env[b]
        h = hold_left[b]
        if (held[b] > 0 and g == floor) or (held[b] == 0 and h == 0 and g == 1.0):
            # at rest (held at the floor, or released and recovered): the steps leave g as it is
            if held[b] > 0:
                hold_left[b] = recovery
            for i in range(n):
                out[b, i] = g
            continue
        for i in range(n):
            if held[b] > 0:
                h = recovery
                g = max(g - down_step, floor)
            elif h > 0:
                h -= 1
                g = max(g - down_step, floor)
            else:
                g = min(g + up_step, 1.0)
            out[b, i] = g
        env[b] = g
        hold_left[b] = h
        if held[b] > 0:
            rest = rest and g == floor and h == recovery
        else:
            rest = rest and h == 0 and g == 1.0
    return rest


@nb.njit(inline="always", **_FLAGS)
def copy_row(x, y, n):
    """``y[:n] = x[:n]`` (a loop: array-to-array slice assignment would allocate)."""
    for i in range(n):
        y[i] = x[i]


@nb.njit(inline="always", **_FLAGS)
def zero_row(x, n):
    for i in range(n):
        x[i] = 0.0


@nb.njit(**_FLAGS)
def copy_rows(act, x, y, n):
    """y[v] = x[v] for the active instances (a submix or bus input)."""
    for v in act:
        for c in range(x.shape[1]):
            for i in range(n):
                y[v, c, i] = x[v, c, i]


@nb.njit(**_FLAGS)
def clear_rows(act, x, n):
    for v in act:
        for c in range(x.shape[1]):
            for i in range(n):
                x[v, c, i] = 0.0


# ------------------------------------------------------------------------- submix boxes
@nb.njit(**_FLAGS)
def spill_box(box, boxed, inp, q, n):
    """Block ``q`` of a submix's lane box (instances ``16q .. 16q + 15``, sample-major: one
    sender's sums ``0 + x * level``, written while their input rows held zeros) added into
    those rows, and emptied: the rows then hold what the sends would have added to them."""
    if boxed[q]:
        bq = box[q]
        for j in range(16):
            row = inp[16 * q + j, 0]
            for i in range(n):
                row[i] += bq[i, j]
        boxed[q] = False


@nb.njit(**_FLAGS)
def spill_boxes(box, boxed, inp, n):
    """Every full block of a submix's lane box into its input rows (:func:`spill_box`)."""
    for q in range(boxed.shape[0]):
        spill_box(box, boxed, inp, q, n)
