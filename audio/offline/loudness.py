"""Integrated loudness (ITU-R BS.1770-4 gating, LUFS) in one vectorised pass.

The batch report measures every full-mode run; pyloudnorm's meter loops over 400 ms blocks and
channels in Python (30 % of a run's cost) and refuses more than five channels, so a 5.1 render had
no loudness. This meter does the same arithmetic in one compiled pass over the samples (both
filters, the square and the channel weights per sample) and keeps the running sum of the power only
at the block bounds (no float64 copy of the input, no per-sample array for mono and stereo).
:class:`LoudnessMeter` takes the input chunk by chunk (a batch run is measured as it renders,
with its sample peak and full-scale count in the same call), carrying the filter states and the
running sum, so its result is bit for bit that of the whole input at once:

* K-weighting as pyloudnorm builds it (its ``"K-weighting"`` filter class, kept so reports stay
  comparable): an RBJ-cookbook high shelf (+4 dB, Q = 1/sqrt(2), 1500 Hz) then an RBJ high-pass
  (Q = 0.5, 38 Hz), in float64. The ITU's own 48 kHz coefficients differ from these by about
  0.04 LU (the RLB stage's passband gain).
* 400 ms blocks with 75 % overlap, the block bounds computed with pyloudnorm's float expressions,
  mean square per block, channel weights (1.0 for L, R, C; 1.41 for the surrounds; 0 for LFE),
  then the absolute gate (-70 LUFS, ``>=``) and the relative gate (-10 LU, ``>``), as BS.1770-4.

:func:`integrated_loudness` agrees with ``pyloudnorm.Meter(rate).integrated_loudness`` to well under
0.01 LU on mono, stereo and five-channel input (``tests/offline/test_loudness.py``).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from audio.core.outputs import magnitude_bits

__all__ = [
    "BLOCK_SECONDS",
    "OVERLAP",
    "LoudnessMeter",
    "channel_weights",
    "integrated_loudness",
    "k_weighting_sos",
]

BLOCK_SECONDS = 0.4
"""Gating block length, seconds."""
OVERLAP = 0.75
"""Overlap of consecutive gating blocks."""
ABSOLUTE_GATE = -70.0
"""LUFS."""
RELATIVE_GATE = -10.0
"""LU below the absolutely gated loudness."""


def k_weighting_sos(sample_rate: int) -> np.ndarray:
    """The two K-weighting biquads as second-order sections ``(2, 6)`` for ``sample_rate`` Hz."""
    a = 10.0 ** (4.0 / 40.0)
    w0 = 2.0 * math.pi * 1500.0 / sample_rate
    cw, alpha = math.cos(w0), math.sin(w0) / (2.0 * (1.0 / math.sqrt(2.0)))
    sa = 2.0 * math.sqrt(a) * alpha
    shelf_b = (
        a * ((a + 1) + (a - 1) * cw + sa),
        -2.0 * a * ((a - 1) + (a + 1) * cw),
        a * ((a + 1) + (a - 1) * cw - sa),
    )
    shelf_a = ((a + 1) - (a - 1) * cw + sa, 2.0 * ((a - 1) - (a + 1) * cw), (a + 1) - (a - 1) * cw - sa)
    w0 = 2.0 * math.pi * 38.0 / sample_rate
    cw, alpha = math.cos(w0), math.sin(w0) / (2.0 * 0.5)
    hp_b = ((1 + cw) / 2.0, -(1 + cw), (1 + cw) / 2.0)
    hp_a = (1.0 + alpha, -2.0 * cw, 1.0 - alpha)
    rows = []
    for b, den in ((shelf_b, shelf_a), (hp_b, hp_a)):
        rows.append([b[0] / den[0], b[1] / den[0], b[2] / den[0], 1.0, den[1] / den[0], den[2] / den[0]])
    return np.array(rows, dtype=np.float64)


def channel_weights(channels: int) -> np.ndarray:
    """BS.1770 channel weights for barkbus's layouts: mono and stereo 1.0 each; 5.1 in barkbus's order
    (L, R, C, LFE, Ls, Rs) 1, 1, 1, 0, 1.41, 1.41; five channels in pyloudnorm's order (L, R, C, Ls,
    Rs). Other counts weigh every channel 1.0."""
    if channels == 6:
        return np.array([1.0, 1.0, 1.0, 0.0, 1.41, 1.41])
    if channels == 5:
        return np.array([1.0, 1.0, 1.0, 1.41, 1.41])
    return np.ones(channels)


def integrated_loudness(audio: np.ndarray, sample_rate: int, weights: np.ndarray | None = None) -> float:
    """Integrated gated loudness of ``audio`` (samples, or (samples, channels)) in LUFS.

    Parameters
    ----------
    audio:
        Samples in full scale (float; any dtype is read as float64).
    sample_rate:
        Hz.
    weights:
        Per-channel weights; default :func:`channel_weights`.

    Returns
    -------
    float
        LUFS; ``-inf`` when every block is gated out (silence); ``nan`` when the input is shorter
        than one 400 ms block.
    """
    x = np.asarray(audio)
    if x.ndim == 1:
        x = x[:, None]
    meter = LoudnessMeter(sample_rate, x.shape[1], x.shape[0], weights)
    meter.add(x)
    return meter.integrated()


class LoudnessMeter:
    """BS.1770 integrated loudness, sample peak and full-scale count of audio fed chunk by chunk
    (a render measured as it is made, no copy of it kept). The result is bit for bit that of
    :func:`integrated_loudness` on the whole: the filter states and the running power sum carry
    from one chunk to the next, and the sums are added in the same order.

    Parameters
    ----------
    sample_rate:
        Hz.
    channels:
        Channels of every chunk.
    samples:
        Samples (per channel) that will be fed in all (the 400 ms block bounds depend on it).
    weights:
        Per-channel weights; default :func:`channel_weights`.
    """

    def __init__(
        self, sample_rate: int, channels: int, samples: int, weights: np.ndarray | None = None
    ) -> None:
        self.sample_rate = sample_rate
        self.samples = samples
        self.fed = 0
        """Samples fed so far."""
        self.peak = 0.0
        """Largest magnitude fed so far (NaN once a NaN was fed)."""
        self.clipped = 0
        """Samples (one channel each) fed at or over full scale (magnitude >= 1.0)."""
        self._block = BLOCK_SECONDS * sample_rate
        self._measured = samples >= self._block and channels > 0
        g = channel_weights(channels) if weights is None else np.asarray(weights, dtype=np.float64)
        self._g = g
        live = [c for c in range(channels) if g[c] != 0.0]
        # channel pairs whose recursions overlap: (a, b) with b = -1 for a lone channel
        pairs = [(live[k], live[k + 1] if k + 1 < len(live) else -1) for k in range(0, len(live), 2)]
        self._pairs = np.array(pairs or [(0, -1)], dtype=np.int64)
        self._running = len(live) <= 2
        self._sos = k_weighting_sos(sample_rate)
        self._state = np.zeros((self._pairs.shape[0], 8))
        """Per pair: both channels' shelf and high-pass states."""
        self._total = np.zeros(1)
        self._next_mark = np.zeros(1, dtype=np.int64)
        self._count = 0
        self._where = np.zeros(0, dtype=np.int64)
        self._marks = np.zeros(0, dtype=np.int64)
        if self._measured:
            step = 1.0 - OVERLAP
            n = samples
            count = int(np.round((n / sample_rate - BLOCK_SECONDS) / (BLOCK_SECONDS * step))) + 1
            j = np.arange(count, dtype=np.float64)
            lo = np.minimum((BLOCK_SECONDS * (j * step) * sample_rate).astype(np.int64), n)
            hi = np.minimum((BLOCK_SECONDS * (j * step + 1) * sample_rate).astype(np.int64), n)
            # the running sum of the weighted power, kept only at the block bounds
            self._marks, self._where = np.unique(np.concatenate([lo, hi]), return_inverse=True)
            self._count = count
        self._sums = np.empty(self._marks.shape[0])

    def add(self, chunk: np.ndarray) -> None:
        """Measure the next ``(samples, channels)`` chunk (float; any dtype is read as float64).

        Parameters
        ----------
        chunk:
            The samples that follow the ones fed so far, in full scale.
        """
        m = chunk.shape[0]
        if self.fed + m > self.samples:
            raise ValueError(f"{self.fed + m} samples fed to a meter of {self.samples}")
        if m == 0:
            return
        peak, clipped = _peak(chunk)
        if math.isnan(peak):
            self.peak = math.nan
        elif peak > self.peak:  # False once the peak is NaN
            self.peak = peak
        self.clipped += clipped
        if self._measured:
            p = np.empty(0) if self._running else np.zeros(m)
            _power_sums(
                chunk, self._sos, self._g, self._pairs, self._state, p, self.fed,
                self._marks, self._sums, self._next_mark, self._total,
            )  # fmt: skip
        self.fed += m

    def integrated(self) -> float:
        """LUFS of everything fed (every sample must have been): ``-inf`` when every block is
        gated out (silence); ``nan`` when the input is shorter than one 400 ms block."""
        if self.fed != self.samples:
            raise ValueError(f"{self.fed} of the meter's {self.samples} samples fed")
        if not self._measured:
            return math.nan
        self._sums[self._next_mark[0] :] = self._total[0]  # the bounds at the last sample
        count, where = self._count, self._where
        z = (self._sums[where[count:]] - self._sums[where[:count]]) / self._block
        with np.errstate(divide="ignore"):
            lk = -0.691 + 10.0 * np.log10(z)
        above = z[lk >= ABSOLUTE_GATE]
        if above.size == 0:
            return -math.inf
        gamma_r = -0.691 + 10.0 * math.log10(float(np.mean(above))) + RELATIVE_GATE
        gated = z[(lk > gamma_r) & (lk > ABSOLUTE_GATE)]
        if gated.size == 0:
            return -math.inf
        return -0.691 + 10.0 * math.log10(float(np.mean(gated)))


_SETTLED = 1e-100
"""A filter stage's states under this magnitude are set to zero at an exactly silent sample
(both channels 0.0). Left alone they would decay for about 3 s, the last 6,000 samples or so
through subnormals, which cost about twice as much; the demos' mixes are 47-73 % exact zeros.
Why the measures stay the same (the power sums are bit-identical on the four demos' mixes and
in ``tests/offline/test_loudness.py``): the states start at zero and only a non-zero sample
makes them non-zero, and that sample's own output (``c0 * b0 * x``, float32 ``x`` of magnitude
>= 1.4e-45) already put at least about 1e-90 into the running sum, which only grows. Left
alone, the rested stage's outputs would stay under about 1e-98 (such states times the
cascade's gain), whose squares (< 1e-195) are below half a unit in the last place of a sum
of 1e-90, so the sum rounds to the same value. At the next non-zero sample (its products and
their non-zero differences lie on a grid of step >= 1e-61) a residue under 1e-98 is likewise
below half a unit in the last place of what it is added to. Only an exact cancellation to
0.0 could let a residue through, and then as a power change of order 1e-90 relative: far
below the 0.001 LU the reports print."""

_SETTLE_EVERY_MASK = 63
"""The silent samples that may set a stage to rest are those whose index (in the whole input)
plus one is a multiple of 64: testing every silent sample costs more than the rests save on
short silences."""

_MAGNITUDE: dict[np.dtype, tuple[type[np.signedinteger], int, int, int]] = {
    np.dtype(np.float32): (np.int32, 0x7FFFFFFF, 0x3F800000, 0x7F800000),
    np.dtype(np.float64): (np.int64, 0x7FFFFFFFFFFFFFFF, 0x3FF0000000000000, 0x7FF0000000000000),
}
"""Per float type: the same-size integer type, the mask that clears the sign bit, and the bit
patterns of 1.0 and of infinity. A float's magnitude bits order as the magnitudes do (a NaN's
lie above infinity's), so the peak and the full-scale count are integer comparisons, which
vectorise (a float maximum that must keep NaN does not)."""


def _peak(x: np.ndarray) -> tuple[float, int]:
    """Largest magnitude (NaN if any sample is NaN) of a ``(samples, channels)`` chunk and the
    count of its magnitudes >= 1.0."""
    if x.dtype not in _MAGNITUDE:
        x = x.astype(np.float64)
    kind, mask, one, inf = _MAGNITUDE[x.dtype]
    top, clipped = magnitude_bits(x.reshape(-1).view(kind), kind(mask), kind(one), kind(inf))
    if top > inf:
        return math.nan, clipped
    return float(np.array(top, dtype=kind).view(x.dtype)), clipped


@nb.njit(cache=True, nogil=True)
def _power_sums(x, sos, g, pairs, state, p, pos, marks, sums, next_mark, total):  # pragma: no cover
    """Carry ``sums[k] = sum(p[:marks[k]])`` over the chunk ``x`` (its first sample is sample
    ``pos`` of the whole), for ``p[i] = sum_c g[c] * kw(x[:, c])[i] ** 2``: both K-weighting
    biquads (transposed direct form II, float64), the weighted square and its running sum
    ``total[0]``, added sample by sample in order (as ``numpy.cumsum`` would); ``next_mark[0]``
    is the first bound not reached yet. Channels run two at a time so that their recursions
    overlap; with more than two (``p`` not empty) the chunk's per-sample power sums the pairs
    first."""
    n = x.shape[0]
    if p.shape[0] == 0:
        a, b = pairs[0, 0], pairs[0, 1]
        _pair(x, sos, a, g[a], b, g[b] if b >= 0 else 0.0, state[0], p, pos, marks, sums, next_mark, total)
        return
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        _pair(x, sos, a, g[a], b, g[b] if b >= 0 else 0.0, state[k], p, pos, marks, sums, next_mark, total)
    t = total[0]
    m = next_mark[0]
    for i in range(n):
        while m < marks.shape[0] and marks[m] == pos + i:
            sums[m] = t
            m += 1
        t += p[i]
    total[0] = t
    next_mark[0] = m


@nb.njit(cache=True, nogil=True, inline="always")
def _pair(x, sos, a, ga, b, gb, st, p, pos, marks, sums, next_mark, total):  # pragma: no cover - compiled
    """Channels ``a`` and ``b`` (``b < 0``: only ``a``) through the cascade from states ``st``
    (kept for the next chunk): weighted squares added into ``p`` (per sample), or, when ``p``
    is empty, their running sum ``total[0]`` written to ``sums`` at ``marks``.

    At every 64th sample (of the whole input, so chunks do not matter) that is exactly zero on
    both channels, a stage whose two states both lie under :data:`_SETTLED` is set to rest
    (zero states), and while both stages of both
    channels rest the loop passes over the exact zeros that follow: they add nothing and leave
    the states at zero, as computing them would. See :data:`_SETTLED` for why this changes no
    measure."""
    n = x.shape[0]
    b0, b1, b2, a1, a2 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
    c0, c1, c2, d1, d2 = sos[1, 0], sos[1, 1], sos[1, 2], sos[1, 4], sos[1, 5]
    p0, p1, q0, q1 = st[0], st[1], st[2], st[3]  # channel a: shelf and high-pass states
    r0, r1, u0, u1 = st[4], st[5], st[6], st[7]  # channel b
    bb = b if b >= 0 else a
    running = p.shape[0] == 0
    t = total[0]
    m = next_mark[0]
    i = 0
    while i < n:
        if running:
            while m < marks.shape[0] and marks[m] == pos + i:
                sums[m] = t
                m += 1
        va = float(x[i, a])
        vb = float(x[i, bb])
        ya = b0 * va + p0
        yb = b0 * vb + r0
        p0 = b1 * va - a1 * ya + p1
        r0 = b1 * vb - a1 * yb + r1
        p1 = b2 * va - a2 * ya
        r1 = b2 * vb - a2 * yb
        za = c0 * ya + q0
        zb = c0 * yb + u0
        q0 = c1 * ya - d1 * za + q1
        u0 = c1 * yb - d1 * zb + u1
        q1 = c2 * ya - d2 * za
        u1 = c2 * yb - d2 * zb
        if running:
            t += ga * za * za + gb * zb * zb
        else:
            p[i] += ga * za * za + gb * zb * zb
        i += 1
        if ((pos + i) & _SETTLE_EVERY_MASK) == 0 and va == 0.0 and vb == 0.0:
            if abs(p0) < _SETTLED and abs(p1) < _SETTLED:
                p0 = p1 = 0.0
            if abs(r0) < _SETTLED and abs(r1) < _SETTLED:
                r0 = r1 = 0.0
            if abs(q0) < _SETTLED and abs(q1) < _SETTLED:
                q0 = q1 = 0.0
            if abs(u0) < _SETTLED and abs(u1) < _SETTLED:
                u0 = u1 = 0.0
            rest_a = p0 == 0.0 and p1 == 0.0 and q0 == 0.0 and q1 == 0.0
            if rest_a and r0 == 0.0 and r1 == 0.0 and u0 == 0.0 and u1 == 0.0:
                while i < n and x[i, a] == 0.0 and x[i, bb] == 0.0:
                    i += 1
                if running:
                    while m < marks.shape[0] and marks[m] < pos + i:
                        sums[m] = t
                        m += 1
    st[0], st[1], st[2], st[3] = p0, p1, q0, q1
    st[4], st[5], st[6], st[7] = r0, r1, u0, u1
    if running:
        total[0] = t
        next_mark[0] = m
