"""XMA2 encoder: float PCM to 2048-byte XMA2 packets (one packet list per stream).

Two syntaxes (``syntax``). The default, ``"microsoft"``, is the subset of
``shared/specs/xma2-encoding.md`` section 12, copying the choices that Microsoft's
encoder was observed to make (section 11), because those are the only ones known to
occur in real console data:

- every XMA frame is four 128-sample subframes with one layout for all channels
  (tile header ``1 11 11 11``), DRC gain 0, post-processing off, the skipped bit 1;
- no extended subframe header, no vector-count field (tnv 0: the decoder switches to
  run-level coding by itself), no channel transform (stereo is two independent
  channels, ``10``), per-channel quantisation through the step modifiers;
- scale factors with step 2 dB: one DPCM set per XMA frame and channel in the first
  subframe that carries coefficients, reused by the later subframes; flat except one step
  (2 dB) coarser in the loud bands (``loud_db`` above the quantiser level: their magnitudes
  take escaped vector codes, ~2 bits per doubling) and two steps in the bands 14 dB louder
  still, optionally following the band energies (``shaping`` x their level in dB);
- per channel and subframe the cheaper of the two coefficient tables;
- start skip 512 in the first XMA frame and end skip ``512 N - 384 - S`` in the last, so a
  decoder outputs exactly the input length; XMA frames packed back to back, never across
  a 64 KiB block, at most 63 XMA frame starts per packet, 1-bit padding, packet header
  with the correct XMA frame count and first-XMA-frame offset, metadata 1.

``"extended"`` departs from those choices within syntax FFmpeg decodes: per XMA frame the
subframe tiling (:data:`~audio.codecs.xma2_tiling.TILINGS`: 512, 256 and 128 mixes) and per
subframe the vector-coded count (sent, up to the whole subframe, or the automatic switch)
of least cost with the real code lengths, flat scale factors, windows of the shorter
neighbour's slope where block lengths change (:mod:`audio.codecs.xma2_tiling`).

The bitrate target (kbit/s, counted in whole packets with the packetiser's own layout) is
met by searching the finest uniform quantiser level that fits, in 1 dB steps (secant steps
on the log bitrate), then giving each subframe (its own quant step) the level within 4 dB
(extended syntax: 2 dB) of it of least ``squared error + mu x bits``, one multiplier ``mu``
for the whole stream, the smallest that fits (the extended syntax's tilings and the default
syntax's loud bands are decided once, near the target level, so every subframe's bits and
error depend only on its own level; an XMA frame's scale-factor set is counted once, in its
first subframe with coefficients); the coefficients are rounded to nearest and then lowered
where a rate-distortion test with the real code lengths says the bits are worth more than
the error (``rdo``). The forward transform is the exact adjoint of the decoder's windowed
IMDCT (spec section 6), so without quantisation the decoder
reconstructs the input. Console acceptance is not verified (no console here).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numba as nb
import numpy as np

from audio.codecs import xma2_tables as T
from audio.codecs.xma import XMA_PACKET_SIZE, XmaPacketHeader, xma_stream_channels
from audio.codecs.xma2_bitstream import (
    MAX_XMA_FRAMES_PER_PACKET,
    PACKET_BITS,
    PACKETS_PER_BLOCK,
    PAYLOAD_BITS,
    XMA_FRAME_LENGTH_BITS,
    XMA_FRAME_SAMPLES,
    band_edges,
    vlc_tables,
)
from audio.codecs.xma2_tiling import MODEL_OFFSET, TILINGS, analyse_blocks, block_windows, layout
from audio.core.errors import InputError

__all__ = [
    "SUBFRAME",
    "SYNTAXES",
    "MIN_RATE",
    "MAX_RATE",
    "Xma2Encoding",
    "xma_frames_for",
    "end_skip",
    "analysis",
    "encode_xma2",
]

SUBFRAME = 128
"""Subframe (block) length of this encoder, samples (four per XMA frame)."""
SYNTAXES = ("microsoft", "extended")
"""Values of :func:`encode_xma2`'s ``syntax``."""
MIN_RATE = 1000
"""Lowest sample rate accepted, Hz."""
MAX_RATE = 96000
"""Highest sample rate accepted, Hz (the spec's checks cover up to 96 kHz)."""
_SF_STEP = 2
_SF_TOP = 22  # 45 // sf_step: the DPCM start value, used as every set's maximum
_SF_RANGE = 15  # scale factors span at most 15 steps (30 dB) below the XMA frame's loudest band
_MAX_XMA_FRAME_BITS = (1 << XMA_FRAME_LENGTH_BITS) - 1
_XMA_FRAME_BYTES = _MAX_XMA_FRAME_BITS // 8 + 64  # room for the longest XMA frame kept
_SCRATCH_BYTES = 1 << 15  # > the longest XMA frame the syntax can produce at 2 channels
_LEVEL_LO, _LEVEL_HI = -40, 200
_LEVEL_GUESS = 60  # first level the bitrate search tries, dB
_LOG_RATE_PER_DB = -0.05  # d ln(kbit/s) / d level before two levels were measured
_LATER_GROUPS = 3  # the switch moved later by up to this many groups ending the vector part in one move
_LOUD_DB = 28.0  # default loud_db: the best SNR measured at 48-96 kbit/s on both bench corpora (24-32 tried)
_LOUDER_DB = 14.0  # a second step this far above loud_db (38-46 tried: +0.03-0.04 dB at 96 kbit/s)
# per-subframe levels range over the uniform level found +- this, dB, per syntax (the default
# syntax's +-2 -> +-4: +0.04 dB at 96 kbit/s on clean speech; +-3 gave the extended one 0)
_ALLOCATION_SPAN = {"microsoft": 4, "extended": 2}
_ALLOCATION_STEPS = 24  # bisection steps on the log of the error-per-bit multiplier


@dataclass(frozen=True)
class Xma2Encoding:
    """The result of :func:`encode_xma2`.

    Attributes
    ----------
    streams:
        Per XMA stream (stereo pairs, the last mono if the channel count is odd) its
        2048-byte packets.
    stream_channels:
        Channels of each stream.
    sample_rate:
        Hz.
    num_samples:
        Input samples per channel; a decoder applying the trims outputs exactly this.
    xma_frames:
        XMA frames per stream (``512 * xma_frames`` = the containers' raw sample count).
    level:
        The coarsest quantiser level of any subframe (dB; lower = finer; the levels differ per
        subframe when a bitrate is met).
    """

    streams: list[list[bytes]]
    stream_channels: list[int]
    sample_rate: int
    num_samples: int
    xma_frames: int
    level: int

    def seek_table(self, stream: int = 0) -> tuple[int, ...]:
        """Cumulative raw samples (512 x XMA frames started) at the end of each 64 KiB block.

        The last entry is ``512 * xma_frames``, as in Microsoft's XWB/RIFF seek tables.

        Parameters
        ----------
        stream:
            Index of the XMA stream.
        """
        out, total = [], 0
        packets = self.streams[stream]
        for b in range(0, len(packets), PACKETS_PER_BLOCK):
            for p in packets[b : b + PACKETS_PER_BLOCK]:
                total += (
                    XMA_FRAME_SAMPLES * XmaPacketHeader.unpack(int.from_bytes(p[:4], "big")).xma_frame_count
                )
            out.append(total)
        return tuple(out)

    @property
    def bitrate(self) -> float:
        """Average bitrate in kbit/s, counting whole 2048-byte packets."""
        seconds = self.num_samples / self.sample_rate
        if seconds <= 0:
            return 0.0
        return sum(len(s) for s in self.streams) * XMA_PACKET_SIZE * 8 / seconds / 1000


def xma_frames_for(num_samples: int) -> int:
    """XMA frames needed for ``num_samples`` samples: ``ceil((S + 384) / 512)``.

    Parameters
    ----------
    num_samples:
        Samples of one channel.
    """
    return -(-(num_samples + 384) // XMA_FRAME_SAMPLES)


def end_skip(num_samples: int) -> int:
    """End skip of the last XMA frame, samples: ``512 N - 384 - S`` (0..511).

    Parameters
    ----------
    num_samples:
        Samples of one channel.
    """
    return XMA_FRAME_SAMPLES * xma_frames_for(num_samples) - 384 - num_samples


@cache
def _mdct_basis() -> np.ndarray:
    """(256, 128) analysis matrix: sine window x MDCT kernel x -32768 (spec section 6)."""
    n = 2 * SUBFRAME
    u = np.arange(n)[:, None] + 0.5
    k = np.arange(SUBFRAME)[None, :] + 0.5
    window = np.sin(u * np.pi / n)
    return -32768.0 * window * np.cos(np.pi / SUBFRAME * (u + SUBFRAME / 2) * k)


def analysis(pcm: np.ndarray) -> np.ndarray:
    """MDCT coefficients of one channel, shape (XMA frames, 4, 128), decoder scale.

    The input sits at model time 576; block ``j`` (4 per XMA frame) has its 256-sample
    window starting at model time ``128 j + 192``.

    Parameters
    ----------
    pcm:
        One channel of float samples (full scale 1.0).
    """
    n_xma_frames = xma_frames_for(len(pcm))
    model = np.zeros(XMA_FRAME_SAMPLES * n_xma_frames + 320, np.float64)
    model[576 : 576 + len(pcm)] = pcm
    blocks = np.lib.stride_tricks.sliding_window_view(model[192:], 2 * SUBFRAME)[::SUBFRAME]
    coeffs = blocks[: 4 * n_xma_frames] @ _mdct_basis()
    return coeffs.reshape(n_xma_frames, 4, SUBFRAME)


# ---------------------------------------------------------------- numba tables
@cache
def _coding_tables() -> tuple[np.ndarray, ...]:
    """Dense lookup arrays for the compiled writer.

    Returns ``(scale_code, scale_len, vec4_code, vec4_len, vec2_code, vec2_len,
    vec1_code, vec1_len, coef_code, coef_len, rl_sym)``: vec4/vec2 indexed by the packed
    magnitudes (length 0 = not codable), coef by (table, symbol), rl_sym by
    (table, run, level) giving the symbol or -1.
    """
    v = vlc_tables()
    vec4_code = np.zeros(1 << 16, np.int64)
    vec4_len = np.zeros(1 << 16, np.int64)
    for sym in range(1, len(v["vec4"].length)):
        if v["vec4"].length[sym]:
            vec4_code[sym - 1], vec4_len[sym - 1] = v["vec4"].code[sym], v["vec4"].length[sym]
    vec2_code = np.zeros(257, np.int64)
    vec2_len = np.zeros(257, np.int64)
    for sym in range(1, len(v["vec2"].length)):
        if v["vec2"].length[sym]:
            vec2_code[sym - 1], vec2_len[sym - 1] = v["vec2"].code[sym], v["vec2"].length[sym]
    # escapes at the last index
    vec4_code = np.append(vec4_code, v["vec4"].code[0])
    vec4_len = np.append(vec4_len, v["vec4"].length[0])
    vec2_code[256], vec2_len[256] = v["vec2"].code[0], v["vec2"].length[0]
    coef_code = np.zeros((2, 272), np.int64)
    coef_len = np.zeros((2, 272), np.int64)
    rl_sym = -np.ones((2, 130, 64), np.int64)
    for t, (name, runs, levels) in enumerate(
        (("coef0", T.COEF0_RUN, T.COEF0_LEVEL), ("coef1", T.COEF1_RUN, T.COEF1_LEVEL))
    ):
        vlc = v[name]
        coef_code[t, : len(vlc.code)] = vlc.code
        coef_len[t, : len(vlc.length)] = vlc.length
        for sym in range(2, len(runs)):
            run, level = runs[sym], levels[sym]
            if run < 130 and level < 64 and rl_sym[t, run, level] < 0:
                rl_sym[t, run, level] = sym
    return (
        v["scale"].code,
        v["scale"].length,
        vec4_code,
        vec4_len,
        vec2_code,
        vec2_len,
        v["vec1"].code,
        v["vec1"].length,
        coef_code,
        coef_len,
        rl_sym,
    )


# ---------------------------------------------------------------- compiled writer
@nb.njit(cache=True, nogil=True)
def _put(buf: np.ndarray, pos: int, value: int, n: int) -> int:  # pragma: no cover - numba
    """Write ``n`` bits of ``value`` MSB first at bit ``pos`` (buffer starts zeroed)."""
    while n > 0:
        free = 8 - (pos & 7)
        take = free if free < n else n
        bits = (value >> (n - take)) & ((1 << take) - 1)
        buf[pos >> 3] |= bits << (free - take)
        pos += take
        n -= take
    return pos


@nb.njit(cache=True, nogil=True)
def _put_large(buf: np.ndarray, pos: int, v: int) -> int:  # pragma: no cover - numba
    if v < 256:
        pos = _put(buf, pos, 0, 1)
        return _put(buf, pos, v, 8)
    if v < 65536:
        pos = _put(buf, pos, 2, 2)
        return _put(buf, pos, v, 16)
    if v < 1 << 24:
        pos = _put(buf, pos, 6, 3)
        return _put(buf, pos, v, 24)
    pos = _put(buf, pos, 7, 3)
    return _put(buf, pos, v, 31)


@nb.njit(cache=True, nogil=True)
def _large_bits(v: int) -> int:  # pragma: no cover - numba
    if v < 256:
        return 9
    if v < 65536:
        return 18
    if v < 1 << 24:
        return 27
    return 34


@nb.njit(cache=True, nogil=True)
def _put_vec1(buf, pos, v, vec1_code, vec1_len):  # type: ignore[no-untyped-def]  # pragma: no cover
    if v < 100:
        return _put(buf, pos, vec1_code[v], vec1_len[v])
    pos = _put(buf, pos, vec1_code[100], vec1_len[100])
    return _put_large(buf, pos, v - 100)


@nb.njit(cache=True, nogil=True)
def _escape_bits(n):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of an escaped run longer than 4 in a block of ``n`` coefficients: '110' + run bits."""
    bits = 0
    while (1 << bits) <= n - 1:
        bits += 1
    return 3 + bits


@nb.njit(cache=True, nogil=True)
def _sym_bits(t, run, a, esc, coef_len, rl_sym):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of one run-level pair (``run`` zeros, then magnitude ``a``) with coefficient table
    ``t``, sign included; ``esc`` = bits of an escaped run longer than 4."""
    sym = -1
    if a < 64 and run < 130:
        sym = rl_sym[t, run, a]
    if sym >= 0:
        return coef_len[t, sym] + 1
    bits = coef_len[t, 0] + _large_bits(a) + 1
    if run == 0:
        return bits + 1
    if run <= 4:
        return bits + 4
    return bits + esc


@nb.njit(cache=True, nogil=True)
def _rl_bits(q, start, t, coef_len, rl_sym):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of the run-level part of ``q[start:]`` with coefficient table ``t``."""
    n = q.shape[0]
    esc = _escape_bits(n)
    bits = 0
    last = start - 1
    for p in range(start, n):
        if q[p] != 0:
            bits += _sym_bits(t, p - last - 1, abs(q[p]), esc, coef_len, rl_sym)
            last = p
    if last != n - 1:
        bits += coef_len[t, 1]
    return bits


@nb.njit(cache=True, nogil=True)
def _put_rl(buf, pos, q, start, t, coef_code, coef_len, rl_sym):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = q.shape[0]
    esc_len = _escape_bits(n) - 3
    last = start - 1
    for p in range(start, n):
        v = q[p]
        if v == 0:
            continue
        a = abs(v)
        run = p - last - 1
        sym = -1
        if a < 64 and run < 130:
            sym = rl_sym[t, run, a]
        if sym >= 0:
            pos = _put(buf, pos, coef_code[t, sym], coef_len[t, sym])
        else:
            pos = _put(buf, pos, coef_code[t, 0], coef_len[t, 0])
            pos = _put_large(buf, pos, a)
            if run == 0:
                pos = _put(buf, pos, 0, 1)
            elif run <= 4:
                pos = _put(buf, pos, 2, 2)
                pos = _put(buf, pos, run - 1, 2)
            else:
                pos = _put(buf, pos, 6, 3)
                pos = _put(buf, pos, run - 4, esc_len)
        pos = _put(buf, pos, 1 if v > 0 else 0, 1)
        last = p
    if last != n - 1:
        pos = _put(buf, pos, coef_code[t, 1], coef_len[t, 1])
    return pos


@nb.njit(cache=True, nogil=True)
def _vector_end(q):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Index (coefficients) where a subframe's vector part ends: the decoder switches to
    run-level coding after the 4-coefficient group holding the zero that makes the running
    zero count exceed ``len(q) >> 8``."""
    n = q.shape[0]
    threshold = n >> 8
    cur = 0
    zeros = 0
    rl_mode = False
    while not rl_mode and cur + 3 < n:
        for i in range(4):
            if q[cur + i] != 0:
                zeros = 0
            else:
                zeros += 1
                if zeros > threshold:
                    rl_mode = True
        cur += 4
    return cur


@nb.njit(cache=True, nogil=True)
def _put_coeffs(buf, pos, q, nvec, tabs):  # type: ignore[no-untyped-def]  # pragma: no cover
    """One channel's coefficients of one subframe: table bit, vector part, run-level part.

    ``nvec``: vector-coded coefficients (a multiple of 4, sent in the subframe header), or
    -1 when the decoder's automatic switch to run-level coding ends the vector part.
    """
    (_, _, vec4_code, vec4_len, vec2_code, vec2_len, vec1_code, vec1_len, coef_code, coef_len, rl_sym) = tabs
    n = q.shape[0]
    start = _vector_end(q) if nvec < 0 else nvec
    t = 1
    if start < n and _rl_bits(q, start, 0, coef_len, rl_sym) < _rl_bits(q, start, 1, coef_len, rl_sym):
        t = 0
    pos = _put(buf, pos, t, 1)
    for g in range(0, start, 4):
        m0, m1, m2, m3 = abs(q[g]), abs(q[g + 1]), abs(q[g + 2]), abs(q[g + 3])
        done = False
        if m0 < 16 and m1 < 16 and m2 < 16 and m3 < 16:
            packed = (m0 << 12) | (m1 << 8) | (m2 << 4) | m3
            if vec4_len[packed]:
                pos = _put(buf, pos, vec4_code[packed], vec4_len[packed])
                done = True
        if not done:
            pos = _put(buf, pos, vec4_code[65536], vec4_len[65536])
            for h in range(2):
                a, b = abs(q[g + 2 * h]), abs(q[g + 2 * h + 1])
                if a < 16 and b < 16 and vec2_len[(a << 4) | b]:
                    pos = _put(buf, pos, vec2_code[(a << 4) | b], vec2_len[(a << 4) | b])
                else:
                    pos = _put(buf, pos, vec2_code[256], vec2_len[256])
                    pos = _put_vec1(buf, pos, a, vec1_code, vec1_len)
                    pos = _put_vec1(buf, pos, b, vec1_code, vec1_len)
        for i in range(4):
            v = q[g + i]
            if v != 0:
                pos = _put(buf, pos, 1 if v > 0 else 0, 1)
    if start < n:
        pos = _put_rl(buf, pos, q, start, t, coef_code, coef_len, rl_sym)
    return pos


@nb.njit(cache=True, nogil=True)
def _put_quant(buf, pos, s):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Quantiser step offset ``s = quant_step - 90``: 6-bit two's complement, escapes beyond."""
    if -31 <= s <= 30:
        return _put(buf, pos, s & 63, 6)
    if s >= 31:
        pos = _put(buf, pos, 31, 6)
        extra = s - 31
    else:
        pos = _put(buf, pos, 32, 6)
        extra = -32 - s
    while extra >= 31:
        pos = _put(buf, pos, 31, 5)
        extra -= 31
    return _put(buf, pos, extra, 5)


@nb.njit(cache=True, nogil=True)
def _encode_xma_frame(buf, q, sizes, qstep, sf, nvec, cbits, bands, start_skip, end_skip_, tabs, parts):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Write one XMA frame at bit 0 of the zeroed ``buf``; returns its length in bits.

    q: (C, 512) int64 quantised coefficients, subframes back to back; sizes: subframe
    lengths in time order (0 = no more subframes); qstep: (subframes, C) quantiser step
    per subframe and channel; sf: (C, >= bands) scale factors (maximum ``_SF_TOP``), sent
    once per XMA frame in the first subframe that carries coefficients and reused after;
    nvec: (subframes, C) vector-coded counts, -1 in every channel = the decoder's
    automatic switch (tnv 0); cbits: (subframes, C) -1 = write the coefficients, else
    their known length in bits, skipped unwritten (only the length is wanted); bands:
    band count per subframe length 512/256/128; skips < 0 = absent. The trailer bit is
    written 0 (the packetiser sets it). ``parts`` (9,) gets each subframe's bits without the
    scale-factor set (0-3), the set's bits (4) and whether each subframe transmits (5-8).
    """
    scale_code, scale_len = tabs[0], tabs[1]
    channels = q.shape[0]
    pos = XMA_FRAME_LENGTH_BITS
    pos = _put(buf, pos, 1, 1)  # one subframe layout for all channels
    offset = 0
    for size in sizes:
        if size == 0:
            break
        if offset != XMA_FRAME_SAMPLES - 128:
            pos = _put(buf, pos, 0 if size == 512 else (2 if size == 256 else 3), 1 if size == 512 else 2)
        offset += size
    if channels == 2:
        pos = _put(buf, pos, 0, 1)  # no post-processing transform
    pos = _put(buf, pos, 0, 8)  # DRC gain
    if start_skip >= 0 or end_skip_ >= 0:
        pos = _put(buf, pos, 1, 1)
        if start_skip >= 0:
            pos = _put(buf, pos, 1, 1)
            pos = _put(buf, pos, start_skip, 10)
        else:
            pos = _put(buf, pos, 0, 1)
        if end_skip_ >= 0:
            pos = _put(buf, pos, 1, 1)
            pos = _put(buf, pos, end_skip_, 10)
        else:
            pos = _put(buf, pos, 0, 1)
    else:
        pos = _put(buf, pos, 0, 1)
    sf_sent = False
    offset = 0
    parts[:] = 0
    for sub in range(sizes.shape[0]):
        size = sizes[sub]
        if size == 0:
            break
        lo, hi = offset, offset + size
        offset = hi
        mark = pos
        pos = _put(buf, pos, 0, 2)  # no extended header, reserved 0
        if channels == 2:
            pos = _put(buf, pos, 0b010, 3)  # transform bit 0, group: '10' = no transform
        transmit = False
        for c in range(channels):
            any_nz = False
            for k in range(lo, hi):
                if q[c, k] != 0:
                    any_nz = True
                    break
            pos = _put(buf, pos, 1 if any_nz else 0, 1)
            transmit = transmit or any_nz
        if not transmit:
            parts[sub] = pos - mark
            continue
        parts[5 + sub] = 1
        if nvec[sub, 0] < 0:
            pos = _put(buf, pos, 0, 1)  # tnv 0
        else:
            pos = _put(buf, pos, 1, 1)
            width = 0
            while (1 << width) <= (size + 3) // 4:
                width += 1
            for c in range(channels):
                pos = _put(buf, pos, nvec[sub, c] >> 2, width)
        base = qstep[sub].min()
        max_mod = qstep[sub].max() - base
        pos = _put_quant(buf, pos, base - 90)
        if channels == 2:
            mod_len = 0
            if max_mod > 1:
                while (1 << mod_len) <= max_mod - 1:
                    mod_len += 1
            pos = _put(buf, pos, mod_len, 3)
            for c in range(channels):
                m = qstep[sub, c] - base
                if m > 0:
                    pos = _put(buf, pos, 1, 1)
                    if mod_len:
                        pos = _put(buf, pos, m - 1, mod_len)
                else:
                    pos = _put(buf, pos, 0, 1)
        n_bands = bands[0 if size == 512 else (1 if size == 256 else 2)]
        set_here = 0
        for c in range(channels):
            if sf_sent and sub > 0:
                pos = _put(buf, pos, 0, 1)  # reuse this XMA frame's set
                continue
            if sub > 0:
                pos = _put(buf, pos, 1, 1)  # new set (the first of the XMA frame: DPCM)
            set_start = pos
            pos = _put(buf, pos, _SF_STEP - 1, 2)
            val = 45 // _SF_STEP
            for b in range(n_bands):
                sym = sf[c, b] - val + 60
                pos = _put(buf, pos, scale_code[sym], scale_len[sym])
                val = sf[c, b]
            set_here += pos - set_start
        parts[4] += set_here
        sf_sent = True
        for c in range(channels):
            nz = False
            for k in range(lo, hi):
                if q[c, k] != 0:
                    nz = True
                    break
            if nz:
                if cbits[sub, c] < 0:
                    pos = _put_coeffs(buf, pos, q[c, lo:hi], nvec[sub, c], tabs)
                else:
                    pos += cbits[sub, c]  # priced, not written
        parts[sub] = pos - mark - set_here
    pos = _put(buf, pos, 1, 1)  # the bit decoders skip
    pos = _put(buf, pos, 0, 1)  # trailer (set by the packetiser)
    # XMA frame length prefix
    for i in range(XMA_FRAME_LENGTH_BITS):
        if (pos >> (XMA_FRAME_LENGTH_BITS - 1 - i)) & 1:
            buf[i >> 3] |= 0x80 >> (i & 7)
    return pos


@nb.njit(cache=True, nogil=True)
def _take_bytes(row, scratch, nbits):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Copy an XMA frame of ``nbits`` bits from ``scratch`` into ``row`` (as far as ``row``
    reaches: an empty row keeps only the length) and zero the scratch bytes it used."""
    used = (nbits + 7) >> 3
    keep = min(used, row.shape[0])
    row[:keep] = scratch[:keep]
    scratch[:used] = 0


@nb.njit(cache=True, nogil=True)
def _encode_xma_frames(out, nbits, parts, q, qstep, sf, skips, bands, tabs):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Encode Microsoft-subset XMA frames (4 x 128): ``out[f]`` gets XMA frame f's bytes,
    ``nbits[f]`` its length (bits), ``parts[f]`` :func:`_encode_xma_frame`'s parts. With an
    empty ``out`` the coefficients are priced, not written (the same ``nbits``).

    q: (F, 4, C, 128); qstep: (F, 4, C); skips: (F, 2) start and end skip, -1 = absent.
    """
    scratch = np.zeros(_SCRATCH_BYTES, np.uint8)
    channels = q.shape[2]
    sizes = np.full(4, SUBFRAME, np.int64)
    nvec = -np.ones((4, channels), np.int64)
    write = -np.ones((4, channels), np.int64)
    flat = np.empty((channels, XMA_FRAME_SAMPLES), np.int64)
    steps = np.empty((4, channels), np.int64)
    price = out.shape[1] == 0
    for f in range(q.shape[0]):
        for s in range(4):
            for c in range(channels):
                flat[c, s * SUBFRAME : (s + 1) * SUBFRAME] = q[f, s, c]
                steps[s, c] = qstep[f, s, c]
                if price:
                    write[s, c] = _auto_bits(q[f, s, c], tabs)
        nbits[f] = _encode_xma_frame(
            scratch, flat, sizes, steps, sf[f], nvec, write, bands, skips[f, 0], skips[f, 1], tabs, parts[f]
        )
        _take_bytes(out[f], scratch, nbits[f])


@nb.njit(cache=True, nogil=True)
def _copy_bits(dst, dst_pos, src, nbits):  # type: ignore[no-untyped-def]  # pragma: no cover
    """OR ``nbits`` bits of ``src`` (from bit 0) into ``dst`` at ``dst_pos`` (dst bits there are 0)."""
    for i in range(nbits):
        if (src[i >> 3] >> (7 - (i & 7))) & 1:
            p = dst_pos + i
            dst[p >> 3] |= 0x80 >> (p & 7)


@cache
def _bands(sample_rate: int) -> np.ndarray:
    """Scale-factor band count for subframe lengths 512, 256 and 128 at ``sample_rate``."""
    return np.array([len(band_edges(size, sample_rate)) - 1 for size in (512, 256, 128)], np.int64)


# ---------------------------------------------------------------- quantisation
class _Stream:
    """One XMA stream's analysis: coefficients and band layout, ready to quantise at any level."""

    def __init__(
        self, pcm: np.ndarray, sample_rate: int, shaping: float, loud_db: float | None = None
    ) -> None:
        self.sample_rate = sample_rate
        self.coeffs = np.stack([analysis(pcm[:, c]) for c in range(pcm.shape[1])], axis=2)  # (F, 4, C, 128)
        self.edges = np.asarray(band_edges(SUBFRAME, sample_rate))
        bands = len(self.edges) - 1
        self.band_of = np.repeat(np.arange(bands), np.diff(self.edges))
        onehot = (self.band_of[:, None] == np.arange(bands)[None, :]) / np.diff(self.edges)
        energy = (self.coeffs**2).mean(axis=1) @ onehot  # (F, C, bands): mean power per band
        self.level_db = 10 * np.log10(energy + 1e-3)
        self.shaping = shaping
        self.loud_db = loud_db
        self._shaped_at: tuple[int | None, ...] = ()
        self.shape(None)

    def shape(self, level: int | None) -> bool:
        """Set the scale factors for quantiser levels near ``level`` (dB; ``None``: no loud-band
        step); False if they were already set for it.

        Per band ``shaping`` x its mean power (dB), plus one step (2 dB coarser) where the mean
        power is more than ``loud_db`` above ``level`` and another where it is more than
        ``loud_db + 14`` dB above: such bands' magnitudes are mostly coded by escaped vector
        codes, whose lengths grow about 2 bits per doubling of the magnitude (the vec1 table)
        instead of the 1 bit an ideal code needs, so a coarser step there costs less error per
        bit saved than anywhere else (the rate-distortion optimum is ~3 dB coarser; one
        scale-factor step is 2 dB, and the loudest bands' mean power is carried by fewer,
        larger magnitudes).
        """
        if self.loud_db is None:
            level = None
        if self._shaped_at == (level,):
            return False
        sf_abs = np.round(self.shaping * self.level_db / _SF_STEP).astype(np.int64)
        if level is not None and self.loud_db is not None:
            above = self.level_db - level - self.loud_db
            sf_abs += (above > 0).astype(np.int64) + (above > _LOUDER_DB)
        top = sf_abs.max(axis=2, keepdims=True)
        sf_abs = np.maximum(sf_abs, top - _SF_RANGE)
        self.sf = _SF_TOP + sf_abs - top  # (F, C, bands), maximum _SF_TOP
        self.top = top[..., 0]  # (F, C) in sf steps
        # per-coefficient step exponent relative to the XMA frame's level: 2 dB x (sf - top)
        self.band_db = (_SF_STEP * (self.sf - _SF_TOP))[..., self.band_of]  # (F, C, 128)
        self._shaped_at = (level,)
        return True

    def set_bits(self) -> np.ndarray:
        """(F, 4) bits of the XMA frame's DPCM scale-factor sets (all channels), whichever
        subframe carries them."""
        scale_len = _coding_tables()[1]
        deltas = np.diff(self.sf, axis=2, prepend=_SF_TOP)
        bits = (2 + scale_len[deltas + 60].sum(axis=2)).sum(axis=1)  # 2: the sf_step field
        return np.repeat(bits[:, None], 4, axis=1)

    def quantise(
        self, level: np.ndarray, rounding: float, lam: float = 0.0, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Quantised coefficients (R, 4, C, 128), per-channel quant steps (R, 4, C) and each
        subframe's squared error (R, 4) in decoder-scale coefficient units of the XMA frames
        ``rows`` (R of them; all by default).

        ``level`` (F, 4): quantiser level per subframe of every XMA frame, dB. A band's step
        is ``level + 2 dB x sf_abs``; the transmitted quant step is ``level + 2 top``.
        """
        coeffs, top, band_db = self.coeffs, self.top, self.band_db
        if rows is not None:
            coeffs, top, band_db, level = coeffs[rows], top[rows], band_db[rows], level[rows]
        qstep = (level[:, :, None] + _SF_STEP * top[:, None, :]).astype(np.int64)
        q = np.empty(coeffs.shape, np.int64)
        dist = np.zeros(level.shape)
        tabs = _coding_tables()
        _quantise(coeffs, qstep, band_db, rounding, lam, tabs, q, dist)
        return q, qstep, dist


@nb.njit(cache=True, nogil=True)
def _quantise(coeffs, qstep, band_db, rounding, lam, tabs, q, dist):  # type: ignore[no-untyped-def]  # pragma: no cover
    xma_frames, subs, channels, n = coeffs.shape
    coef_len, rl_sym = tabs[9], tabs[10]
    mag = np.empty(n, np.float64)
    inv = np.empty(n, np.float64)
    sign = np.empty(n, np.int64)
    work = _block_scratch()
    for f in range(xma_frames):
        for c in range(channels):
            for s in range(subs):
                last = np.nan
                for k in range(n):  # the step is constant within a band: one power per band
                    e = qstep[f, s, c] + band_db[f, c, k]
                    if e != last:
                        step, last = 10.0 ** (-e / 20.0), e
                    inv[k] = step
                nonzero = False
                for k in range(n):
                    x = coeffs[f, s, c, k]
                    mag[k] = abs(x) * inv[k]
                    m = np.int64(np.floor(mag[k] + rounding))
                    q[f, s, c, k] = m if x >= 0 else -m
                    nonzero = nonzero or m != 0
                if lam > 0 and nonzero:  # (no RDO move pays in a subframe of zeros)
                    _rdo(q[f, s, c], mag, lam, coef_len, rl_sym)
                    for k in range(n):
                        sign[k] = 1 if coeffs[f, s, c, k] >= 0 else -1
                    _rdo_switch(q[f, s, c], mag, sign, lam, tabs, work)
                for k in range(n):
                    dist[f, s] += ((mag[k] - abs(q[f, s, c, k])) / inv[k]) ** 2


@nb.njit(cache=True, nogil=True)
def _rdo(q, mag, lam, coef_len, rl_sym):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Rate-distortion pass over the run-level part of one subframe's coefficients (in place).

    From the last coefficient down, each nonzero magnitude ``a`` is lowered to ``a - 1``
    (1 -> 0 merges two runs) when the added squared error, in quantiser steps squared,
    is below ``lam`` x the bits saved (table-1 code lengths; the vector part is kept).
    """
    n = q.shape[0]
    esc = _escape_bits(n)
    start = _vector_end(q)
    nxt = n  # next nonzero position above p (n = none)
    for p in range(n - 1, start - 1, -1):
        a = abs(q[p])
        if a == 0:
            continue
        prev = p - 1
        while prev >= start and q[prev] == 0:
            prev -= 1
        run = p - prev - 1
        v = mag[p]
        d_down = (v - (a - 1)) ** 2 - (v - a) ** 2
        if a == 1:
            now = _sym_bits(1, run, 1, esc, coef_len, rl_sym)
            if nxt < n:
                an = abs(q[nxt])
                now += _sym_bits(1, nxt - p - 1, an, esc, coef_len, rl_sym)
                new = _sym_bits(1, nxt - prev - 1, an, esc, coef_len, rl_sym)
            else:
                new = coef_len[1, 1] if p == n - 1 else 0
            saved = now - new
        else:
            saved = _sym_bits(1, run, a, esc, coef_len, rl_sym) - _sym_bits(
                1, run, a - 1, esc, coef_len, rl_sym
            )
        if saved > 0 and d_down < lam * saved:
            a -= 1
            q[p] = a if q[p] > 0 else -a
        if a != 0:
            nxt = p


@nb.njit(cache=True, nogil=True)
def _auto_bits(q, tabs):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of one channel's coefficients with the automatic vector/run-level switch: table
    bit, vector codes, signs and the run-level part in the cheaper table (what
    :func:`_put_coeffs` writes with ``nvec`` -1)."""
    n = q.shape[0]
    start = _vector_end(q)
    bits = 1
    for g in range(0, start, 4):
        bits += _group_bits(q, g, tabs)
    if start < n:
        bits += min(_rl_bits(q, start, 0, tabs[9], tabs[10]), _rl_bits(q, start, 1, tabs[9], tabs[10]))
    return bits


@nb.njit(cache=True, nogil=True)
def _rdo_switch(q, mag, sign, lam, tabs, scratch):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Move the decoder's automatic switch to run-level coding (in place) where that saves
    more bits than ``lam`` x the squared error it adds (quantiser steps): earlier, by lowering
    a 1 to 0 in an earlier group of 4, or later, by raising to 1 the zeros of the group that
    ends the vector part and of the next ones that then end it, up to ``_LATER_GROUPS``
    groups (a single group often pays only together with the next: the vector part then
    reaches past the following zero; ``sign``: the coefficients' signs). The best move is
    taken while one pays, at most 4 times. For 128-coefficient subframes: the decoder's
    zero threshold ``n >> 8`` is 0, so the first group holding a zero ends the vector part.
    ``scratch``: :func:`_block_scratch` (its vector prefix and run-level arrays price every
    move at once: a run-level part from a start depends only on the coefficients after it;
    the groups past the switch are priced only as far as a later move reaches)."""
    n = q.shape[0]
    coef_len, rl_sym = tabs[9], tabs[10]
    _, vec, rl0, rl1, nz, suffix = scratch
    raised = np.zeros(n, np.bool_)
    best_top = 0
    for _ in range(4):
        m = 0
        for k in range(n):
            if q[k] != 0:
                nz[m] = k
                m += 1
        end = _vector_end(q)
        vec[0] = 0
        for g in range(end >> 2):  # the vector prefix up to the switch (later groups: below)
            vec[g + 1] = vec[g] + _group_bits(q, 4 * g, tabs)
        _rl_from_starts(q, 0, coef_len, rl_sym, nz, m, suffix, rl0)
        _rl_from_starts(q, 1, coef_len, rl_sym, nz, m, suffix, rl1)
        bits = 1 + vec[end >> 2] + min(rl0[end >> 2], rl1[end >> 2])
        best_gain, best_p, best_g = 0.0, -1, -1
        for g in range(0, end - 4, 4):  # earlier: the cheapest 1 of group g becomes 0
            p, d = -1, 0.0
            for i in range(g, g + 4):
                if abs(q[i]) == 1 and (p < 0 or 2 * mag[i] - 1 < d):
                    p, d = i, 2 * mag[i] - 1
            if p < 0:
                continue
            old = q[p]
            q[p] = 0
            new_end = (g >> 2) + 1  # the groups before ``end`` hold no zero: g's zero ends the part
            changed = _group_bits(q, g, tabs) - (vec[(g >> 2) + 1] - vec[g >> 2])
            q[p] = old
            trial = 1 + vec[new_end] + changed + min(rl0[new_end], rl1[new_end])
            gain = lam * (bits - trial) - d
            if gain > best_gain:
                best_gain, best_p, best_g = gain, p, -1
        if 4 <= end < n:  # later: the zeros of the groups ending the vector part become 1
            g = end - 4
            d, groups = 0.0, vec[end >> 2] - vec[g >> 2]  # groups: bits of the groups g..new_end
            top = g
            for _k in range(_LATER_GROUPS):
                groups -= _group_bits(q, top, tabs)
                for i in range(top, top + 4):
                    if q[i] == 0:
                        d += 1 - 2 * mag[i]
                        q[i] = sign[i]
                        raised[i] = True
                groups += _group_bits(q, top, tabs)
                new_end = top + 4  # the next group holding a zero ends the vector part
                while new_end < n and q[new_end] and q[new_end + 1] and q[new_end + 2] and q[new_end + 3]:
                    groups += _group_bits(q, new_end, tabs)
                    new_end += 4
                if new_end < n:
                    groups += _group_bits(q, new_end, tabs)
                    new_end += 4
                trial = 1 + vec[g >> 2] + groups + min(rl0[new_end >> 2], rl1[new_end >> 2])
                gain = lam * (bits - trial) - d
                if gain > best_gain:
                    best_gain, best_p, best_g, best_top = gain, -1, g, top
                top = new_end - 4
                if new_end == n:
                    break
            for i in range(g, n):
                if raised[i]:
                    q[i] = 0
                    raised[i] = False
        if best_p >= 0:
            q[best_p] = 0
        elif best_g >= 0:
            for i in range(best_g, best_top + 4):
                if q[i] == 0:
                    q[i] = sign[i]
        else:
            return


def _encode_stream_xma_frames(
    stream: _Stream, level: np.ndarray, last_skip: int, rounding: float, lam: float, keep_bytes: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """XMA frame bytes (F, bytes; none without ``keep_bytes``), lengths (bits), their parts
    (F, 9, :func:`_encode_xma_frame`) and each subframe's squared error (F, 4, decoder-scale
    coefficient units) at the given per-subframe levels (F, 4, dB).

    XMA frames longer than the 15-bit length field allows are re-quantised 1 dB coarser
    (only those).
    """
    tabs = _coding_tables()
    level = level.copy()
    n = stream.coeffs.shape[0]
    skips = -np.ones((n, 2), np.int64)
    skips[0, 0] = 512
    if last_skip > 0:
        skips[n - 1, 1] = last_skip
    out = np.zeros((n, _XMA_FRAME_BYTES if keep_bytes else 0), np.uint8)
    nbits = np.zeros(n, np.int64)
    parts = np.zeros((n, 9), np.int64)
    dist = np.zeros((n, 4))
    todo = np.arange(n)
    while len(todo):
        q, qstep, dist[todo] = stream.quantise(level, rounding, lam, None if len(todo) == n else todo)
        sub_out = np.zeros((len(todo), out.shape[1]), np.uint8)
        sub_bits = np.zeros(len(todo), np.int64)
        sub_parts = np.zeros((len(todo), 9), np.int64)
        _encode_xma_frames(
            sub_out,
            sub_bits,
            sub_parts,
            q,
            qstep,
            stream.sf[todo],
            skips[todo],
            _bands(stream.sample_rate),
            tabs,
        )
        out[todo], nbits[todo], parts[todo] = sub_out, sub_bits, sub_parts
        todo = todo[sub_bits > _MAX_XMA_FRAME_BITS]
        level[todo] += 1
    return out, nbits, parts, dist


# ---------------------------------------------------------------- extended syntax
@nb.njit(cache=True, nogil=True)
def _group_bits(q, g, tabs):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of the vector-coded group ``q[g:g + 4]``: its code(s) and sign bits."""
    vec4_len, vec2_len, vec1_len = tabs[3], tabs[5], tabs[7]
    m0, m1, m2, m3 = abs(q[g]), abs(q[g + 1]), abs(q[g + 2]), abs(q[g + 3])
    signs = (m0 != 0) + (m1 != 0) + (m2 != 0) + (m3 != 0)
    if m0 < 16 and m1 < 16 and m2 < 16 and m3 < 16:
        packed = (m0 << 12) | (m1 << 8) | (m2 << 4) | m3
        if vec4_len[packed]:
            return vec4_len[packed] + signs
    bits = vec4_len[65536] + signs
    for h in range(2):
        a, b = abs(q[g + 2 * h]), abs(q[g + 2 * h + 1])
        if a < 16 and b < 16 and vec2_len[(a << 4) | b]:
            bits += vec2_len[(a << 4) | b]
        else:
            bits += vec2_len[256]
            for v in (a, b):
                bits += vec1_len[v] if v < 100 else vec1_len[100] + _large_bits(v - 100)
    return bits


@nb.njit(cache=True, nogil=True)
def _rl_from_starts(q, t, coef_len, rl_sym, nz, m, suffix, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``out[s // 4]`` = bits of the run-level part of ``q[s:]`` (table ``t``) for every
    ``s = 0, 4, ..., len(q)`` (0 for the empty part); ``nz[:m]`` = positions of the nonzero
    values, ``suffix`` scratch (>= m + 1)."""
    n = q.shape[0]
    esc = _escape_bits(n)
    suffix[m] = 0  # suffix[i]: bits of nonzeros i.. with runs from their predecessor
    if m > 0:
        suffix[m - 1] = 0
    for i in range(m - 1, 0, -1):
        suffix[i] = suffix[i + 1] + _sym_bits(t, nz[i] - nz[i - 1] - 1, abs(q[nz[i]]), esc, coef_len, rl_sym)
    eob = coef_len[t, 1] if m == 0 or nz[m - 1] != n - 1 else 0
    j = 0
    for s in range(0, n + 1, 4):
        while j < m and nz[j] < s:
            j += 1
        if s == n:
            out[s >> 2] = 0
        elif j == m:
            out[s >> 2] = coef_len[t, 1]
        else:
            out[s >> 2] = _sym_bits(t, nz[j] - s, abs(q[nz[j]]), esc, coef_len, rl_sym) + suffix[j + 1] + eob


@nb.njit(cache=True, nogil=True)
def _code_block(x, inv_step, lam, tabs, q, scratch):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Quantise one channel's block ``x`` into ``q`` and price its coding.

    Rounds ``|x| * inv_step`` to nearest, then runs the rate-distortion pass (``lam``).
    Returns (squared error in quantiser steps, bits with the automatic vector/run-level
    switch, bits with the best transmitted vector count, that count); bits include the
    table bit and the signs, 0 for a block of zeros. ``scratch``: :func:`_block_scratch`.
    """
    n = x.shape[0]
    coef_len, rl_sym = tabs[9], tabs[10]
    mag, vec, rl0, rl1, nz, suffix = scratch
    nonzero = False
    for k in range(n):
        mag[k] = abs(x[k]) * inv_step
        m = np.int64(np.floor(mag[k] + 0.5))
        q[k] = m if x[k] >= 0 else -m
        nonzero = nonzero or m != 0
    if lam > 0 and nonzero:
        _rdo(q, mag, lam, coef_len, rl_sym)
    err = 0.0
    m = 0
    for k in range(n):
        err += (mag[k] - abs(q[k])) ** 2
        if q[k] != 0:
            nz[m] = k
            m += 1
    if m == 0:
        return err, 0, 0, 0
    groups = n >> 2
    vec[0] = 0
    for g in range(groups):
        vec[g + 1] = vec[g] + _group_bits(q, 4 * g, tabs)
    _rl_from_starts(q, 0, coef_len, rl_sym, nz, m, suffix, rl0)
    _rl_from_starts(q, 1, coef_len, rl_sym, nz, m, suffix, rl1)
    best, best_s = -1, 0
    for g in range(groups + 1):
        bits = vec[g] + min(rl0[g], rl1[g])
        if best < 0 or bits < best:
            best, best_s = bits, 4 * g
    auto = _vector_end(q) >> 2
    return err, 1 + vec[auto] + min(rl0[auto], rl1[auto]), 1 + best, best_s


@nb.njit(cache=True, nogil=True)
def _block_scratch():  # type: ignore[no-untyped-def]  # pragma: no cover
    """Work arrays of :func:`_code_block` for blocks of up to 512 coefficients."""
    n = XMA_FRAME_SAMPLES
    return (
        np.empty(n, np.float64),
        np.empty(n // 4 + 1, np.int64),
        np.empty(n // 4 + 1, np.int64),
        np.empty(n // 4 + 1, np.int64),
        np.empty(n, np.int64),
        np.empty(n + 1, np.int64),
    )


@nb.njit(cache=True, nogil=True)
def _nvec_width(size):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bits of a transmitted vector count (count / 4) for a subframe of ``size``."""
    width = 0
    while (1 << width) <= (size + 3) // 4:
        width += 1
    return width


@nb.njit(cache=True, nogil=True)
def _code_subframe(x, qstep, lam, tabs, q, nvec, scratch, cbits):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Quantise one subframe of every channel (``x``: (C, L)) into ``q`` (C, L) and choose
    between the automatic switch and transmitted vector counts by their real bits
    (``nvec`` (C,) gets the counts or -1, ``cbits`` (C, 2) scratch, then each channel's
    coefficient bits in ``cbits[:, 0]``). Returns (squared error in steps, bits of the
    coefficients and the vector-count field)."""
    channels, size = x.shape
    inv = 10.0 ** (-qstep / 20.0)
    err, auto, sent = 0.0, 0, channels * _nvec_width(size)
    for c in range(channels):
        e, a, s, n = _code_block(x[c], inv, lam, tabs, q[c], scratch)
        err += e
        auto += a
        sent += s
        nvec[c] = n
        cbits[c, 0], cbits[c, 1] = a, s
    if auto <= sent:
        nvec[:] = -1
        return err, auto
    cbits[:, 0] = cbits[:, 1]
    return err, sent


@nb.njit(cache=True, nogil=True)
def _block_costs(x, qstep, lam, weight, tabs, cost):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Rate-distortion cost of candidate blocks ``x`` (B, C, L) at quant steps ``qstep`` (B,):
    ``weight`` x squared error (steps) + ``lam`` x bits (coefficients and the subframe's
    own header) into ``cost`` (B,)."""
    blocks, channels, size = x.shape
    q = np.empty((channels, size), np.int64)
    nvec = np.empty(channels, np.int64)
    cbits = np.empty((channels, 2), np.int64)
    scratch = _block_scratch()
    for b in range(blocks):
        err, bits = _code_subframe(x[b], qstep[b], lam, tabs, q, nvec, scratch, cbits)
        header = 2 + channels + (1 + 6 + channels if bits > 0 else 0)
        cost[b] = weight * err + lam * (bits + header)


@nb.njit(cache=True, nogil=True)
def _encode_ext_xma_frames(out, nbits, parts, dist, x, sizes, qstep, lam, sf, skips, bands, tabs):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Encode extended-syntax XMA frames: ``x`` (F, C, 512) coefficients with subframes
    back to back, ``sizes`` (F, 4) their lengths (0 = none), ``qstep`` (F, 4) quant step per
    subframe; writes ``out[f]``, ``nbits[f]`` and ``parts[f]`` as :func:`_encode_xma_frames`
    and ``dist[f, s]``, the squared error of subframe s's coefficients scaled to 128-line
    blocks. With an empty ``out`` the coefficients are priced, not written (the same
    ``nbits``)."""
    scratch = np.zeros(_SCRATCH_BYTES, np.uint8)
    xma_frames, channels, _ = x.shape
    q = np.empty((channels, XMA_FRAME_SAMPLES), np.int64)
    nvec = np.empty((4, channels), np.int64)
    cbits = -np.ones((4, channels), np.int64)
    priced = np.empty((channels, 2), np.int64)
    write = out.shape[1] > 0
    steps = np.empty((4, channels), np.int64)
    work = _block_scratch()
    for f in range(xma_frames):
        lo = 0
        for s in range(4):
            size = sizes[f, s]
            if size == 0:
                break
            err, _ = _code_subframe(
                x[f, :, lo : lo + size], qstep[f, s], lam, tabs, q[:, lo : lo + size], nvec[s], work, priced
            )
            if not write:
                cbits[s, :] = priced[:, 0]
            dist[f, s] = err * 10.0 ** (qstep[f, s] / 10.0) * SUBFRAME / size
            steps[s, :] = qstep[f, s]
            lo += size
        nbits[f] = _encode_xma_frame(
            scratch, q, sizes[f], steps, sf, nvec, cbits, bands, skips[f, 0], skips[f, 1], tabs, parts[f]
        )
        _take_bytes(out[f], scratch, nbits[f])


_SIZE_DB = {512: 6, 256: 3, 128: 0}  # quant step offset: equal noise per sample across block lengths
_TILE_BITS = (1, 4, 4, 6, 4, 6)  # tile-header codes of each of TILINGS


def _tiling_blocks(tiling: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """(size, offset, left slope, right slope) of each block of ``tiling`` (samples): slopes
    inside the XMA frame from the neighbours (:func:`~audio.codecs.xma2_tiling.block_windows`'s
    rule), the block's own size at the XMA frame's edges (the neighbours' tilings unknown)."""
    blocks, o = [], 0
    for i, size in enumerate(tiling):
        left = min(size, tiling[i - 1]) if i else size
        right = min(size, tiling[i + 1]) if i + 1 < len(tiling) else size
        blocks.append((size, o, left, right))
        o += size
    return blocks


class _ExtStream:
    """One XMA stream for the extended syntax: adaptive tiling, flat scale factors."""

    def __init__(self, pcm: np.ndarray, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.channels = pcm.shape[1]
        self.n_xma_frames = xma_frames_for(len(pcm))
        self.models = []
        for c in range(self.channels):
            model = np.zeros(XMA_FRAME_SAMPLES * self.n_xma_frames + 2 * XMA_FRAME_SAMPLES, np.float64)
            model[MODEL_OFFSET : MODEL_OFFSET + len(pcm)] = pcm[:, c]
            self.models.append(model)
        # candidate blocks for the tiling decision: (size, offset, left slope, right slope) ->
        # (F, C, size), with the slopes each tiling gives its blocks inside the XMA frame
        self.candidates: dict[tuple[int, int, int, int], np.ndarray] = {}
        xma_frame_starts = XMA_FRAME_SAMPLES * np.arange(self.n_xma_frames) + XMA_FRAME_SAMPLES // 2
        for size, o, left, right in sorted({b for t in TILINGS for b in _tiling_blocks(t)}):
            full = np.ones(self.n_xma_frames, np.int64)
            per_channel = [
                analyse_blocks(m, xma_frame_starts + o, size * full, left * full, right * full).reshape(
                    -1, size
                )
                for m in self.models
            ]
            self.candidates[(size, o, left, right)] = np.stack(per_channel, axis=1)
        self._fixed: tuple[int | None, ...] = ()  # (level,) of the tilings in use
        self.x = np.zeros((0, self.channels, XMA_FRAME_SAMPLES))
        self.sizes = np.zeros((0, 4), np.int64)
        self.size_db = np.zeros((0, 4), np.int64)
        bands = _bands(sample_rate)
        self.sf_bits = {512: 2 + int(bands[0]), 256: 2 + int(bands[1]), 128: 2 + int(bands[2])}

    def fix_tiling(self, level: int | None, lam: float) -> bool:
        """Decide every XMA frame's tiling at the uniform ``level`` (dB) and analyse the blocks;
        False if they were already decided at that level. ``None``: one 512-sample block per
        XMA frame, no decision (for a first size estimate).

        Later encodes at any per-subframe levels reuse these blocks, so a subframe's bits
        and error then depend only on its own level (the bitrate search and the allocation
        compare levels subframe by subframe).
        """
        if self._fixed == (level,):
            return False
        if level is None:
            tiling = np.zeros(self.n_xma_frames, np.int64)
        else:
            tiling = self._uniform_tiling(level, lam)
        starts, sizes = layout(tiling)
        left, right = block_windows(sizes)
        x = np.stack([analyse_blocks(m, starts, sizes, left, right) for m in self.models])
        self.x = x.reshape(self.channels, self.n_xma_frames, XMA_FRAME_SAMPLES).transpose(1, 0, 2).copy()
        self.sizes = np.zeros((self.n_xma_frames, 4), np.int64)
        for f, t in enumerate(tiling):
            self.sizes[f, : len(TILINGS[int(t)])] = TILINGS[int(t)]
        self.size_db = np.select([self.sizes == 512, self.sizes == 256], [_SIZE_DB[512], _SIZE_DB[256]], 0)
        self._fixed = (level,)
        return True

    def _uniform_tiling(self, level: int, lam: float) -> np.ndarray:
        """Per XMA frame the index into :data:`TILINGS` of least rate-distortion cost at ``level``."""
        tabs = _coding_tables()
        cost: dict[tuple[int, int, int, int], np.ndarray] = {}
        for key, x in self.candidates.items():
            size = key[0]
            c = np.empty(self.n_xma_frames)
            weight = 10 ** (_SIZE_DB[size] / 10) * SUBFRAME / size
            steps = np.full(self.n_xma_frames, level + _SIZE_DB[size], np.float64)
            _block_costs(x, steps, lam, weight, tabs, c)
            cost[key] = c
        totals = []
        for tiling, tile_bits in zip(TILINGS, _TILE_BITS):
            total = lam * (tile_bits + self.channels * self.sf_bits[tiling[0]])
            for block in _tiling_blocks(tiling):
                total = total + cost[block]
            totals.append(total)
        return np.argmin(np.stack(totals), axis=0)

    def encode(
        self, level: np.ndarray, last_skip: int, lam: float, keep_bytes: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """XMA frame bytes, lengths, parts and squared errors as :func:`_encode_stream_xma_frames`
        at per-subframe levels (F, 4, dB), with the tiling of :meth:`fix_tiling`."""
        tabs = _coding_tables()
        level = level.copy()
        skips = -np.ones((self.n_xma_frames, 2), np.int64)
        skips[0, 0] = 512
        if last_skip > 0:
            skips[-1, 1] = last_skip
        sf = np.full((self.channels, XMA_FRAME_SAMPLES), _SF_TOP, np.int64)
        out = np.zeros((self.n_xma_frames, _XMA_FRAME_BYTES if keep_bytes else 0), np.uint8)
        nbits = np.zeros(self.n_xma_frames, np.int64)
        parts = np.zeros((self.n_xma_frames, 9), np.int64)
        dist = np.zeros((self.n_xma_frames, 4))
        todo = np.arange(self.n_xma_frames)
        while len(todo):
            steps = level[todo] + self.size_db[todo]
            sub_out = np.zeros((len(todo), out.shape[1]), np.uint8)
            sub_bits = np.zeros(len(todo), np.int64)
            sub_parts = np.zeros((len(todo), 9), np.int64)
            sub_dist = np.zeros((len(todo), 4))
            _encode_ext_xma_frames(
                sub_out,
                sub_bits,
                sub_parts,
                sub_dist,
                self.x[todo],
                self.sizes[todo],
                steps,
                lam,
                sf,
                skips[todo],
                _bands(self.sample_rate),
                tabs,
            )
            out[todo], nbits[todo], parts[todo], dist[todo] = sub_out, sub_bits, sub_parts, sub_dist
            todo = todo[sub_bits > _MAX_XMA_FRAME_BITS]
            level[todo] += 1
        return out, nbits, parts, dist

    def set_bits(self) -> np.ndarray:
        """(F, 4) bits of the XMA frame's flat scale-factor set (all channels) if subframe s
        is the first to carry coefficients: 2 + one bit per band (delta 0) per channel."""
        bands = _bands(self.sample_rate)
        per_size = np.select([self.sizes == 512, self.sizes == 256], [bands[0], bands[1]], bands[2])
        return self.channels * (2 + per_size)


@nb.njit(cache=True, nogil=True)
def _xma_frame_starts(nbits, starts):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Payload bit where each XMA frame of ``nbits`` bits starts (into ``starts``): back to
    back, never across a 64 KiB block, at most 63 XMA frame starts per packet. Returns the
    payload bits used."""
    block_bits = PACKETS_PER_BLOCK * PAYLOAD_BITS
    pos = 0
    current, count = -1, 0  # the packet of the last start and the starts in it
    for f in range(nbits.shape[0]):
        bits = nbits[f]
        while True:
            packet = pos // PAYLOAD_BITS
            if packet == current and count >= MAX_XMA_FRAMES_PER_PACKET:
                pos = (packet + 1) * PAYLOAD_BITS
                continue
            if pos // block_bits != (pos + bits - 1) // block_bits:
                pos = (pos // block_bits + 1) * block_bits
                continue
            break
        starts[f] = pos
        if packet == current:
            count += 1
        else:
            current, count = packet, 1
        pos += bits
    return pos


def _packet_count(nbits: np.ndarray) -> int:
    """2048-byte packets that XMA frames of ``nbits`` bits fill (:func:`_packetise`'s count)."""
    pos = _xma_frame_starts(nbits, np.empty(len(nbits), np.int64))
    return max(1, -(-int(pos) // PAYLOAD_BITS))


def _packetise(xma_frames: np.ndarray, nbits: np.ndarray) -> list[bytes]:
    """Pack XMA frames back to back into 2048-byte packets (block, 63-frame and trailer rules)."""
    n = len(nbits)
    starts = np.zeros(n, np.int64)
    pos = _xma_frame_starts(nbits, starts)
    n_packets = max(1, -(-pos // PAYLOAD_BITS))
    payload = np.zeros(n_packets * PAYLOAD_BITS // 8, np.uint8)
    for f in range(n):
        _copy_bits(payload, int(starts[f]), xma_frames[f], int(nbits[f]))
        # trailer: 1 iff the next XMA frame starts in the packet where this one starts
        if f + 1 < n and starts[f + 1] // PAYLOAD_BITS == starts[f] // PAYLOAD_BITS:
            p = int(starts[f] + nbits[f] - 1)
            payload[p >> 3] |= 0x80 >> (p & 7)
    # padding = 1-bits: set every bit outside an XMA frame
    used = np.zeros(n_packets * PAYLOAD_BITS, bool)
    for f in range(n):
        used[starts[f] : starts[f] + nbits[f]] = True
    pad = np.packbits(~used)
    payload |= pad
    packets = []
    count = np.bincount(starts // PAYLOAD_BITS, minlength=n_packets)
    first_in = {int(s) // PAYLOAD_BITS: int(s) % PAYLOAD_BITS for s in starts[::-1]}
    for p in range(n_packets):
        offset = first_in.get(p, PAYLOAD_BITS)
        header = XmaPacketHeader(int(count[p]), offset, 1, 0).pack()
        body = payload[p * PAYLOAD_BITS // 8 : (p + 1) * PAYLOAD_BITS // 8].tobytes()
        packets.append(header.to_bytes(4, "big") + body)
    return packets


def _check_input(pcm: np.ndarray, sample_rate: int) -> np.ndarray:
    arr = np.asarray(pcm)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] < 1 or arr.shape[1] > 8:
        raise InputError(f"XMA2 input must be (samples, 1..8 channels), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise InputError(f"XMA2 input must be float PCM (-1..1), got {arr.dtype}")
    if not isinstance(sample_rate, (int, np.integer)) or not MIN_RATE <= sample_rate <= MAX_RATE:
        raise InputError(f"XMA2 sample rate must be {MIN_RATE}..{MAX_RATE} Hz, got {sample_rate!r}")
    if not np.isfinite(arr).all():
        bad = int(np.argmax(~np.isfinite(arr).all(axis=1)))
        raise InputError(f"XMA2 input has a NaN or infinite sample at sample {bad}")
    return arr.astype(np.float64)


def encode_xma2(
    pcm: np.ndarray,
    sample_rate: int,
    *,
    bitrate: float | None = 64.0,
    level: int | None = None,
    shaping: float = 0.0,
    loud_db: float | None = _LOUD_DB,
    rounding: float = 0.5,
    rdo: float = 0.1,
    syntax: str = "microsoft",
) -> Xma2Encoding:
    """Encode float PCM to XMA2 packets.

    Parameters
    ----------
    pcm:
        float array (samples,) or (samples, channels), nominally -1..1 (keep peaks
        below ~0.95: decoders do not clip the quantisation overshoot).
    sample_rate:
        Hz, ``MIN_RATE..MAX_RATE``; written nowhere here but picks the band layout.
    bitrate:
        Target average bitrate over all channels, kbit/s (whole packets counted): the
        per-subframe quantiser levels of least squared error that stay at or under it
        are chosen. Ignored if ``level`` is given.
    level:
        A fixed global quantiser level, dB (lower = finer, larger output).
    shaping:
        How much the band scale factors follow the band energies (0 = flat steps, the
        best SNR measured; 1 = steps proportional to the band level).
    loud_db:
        dB: bands whose mean power over the XMA frame is more than this above the
        quantiser level that fits the bitrate with flat scale factors and no RDO (or
        ``level``) are quantised one scale-factor step (2 dB) coarser, two steps where it is
        more than ``loud_db + 14``, where long escaped vector codes make the bits dearest
        (``"microsoft"`` syntax; ``None``: off).
    rounding:
        Quantiser rounding offset (0.5 = nearest; smaller values widen the dead zone).
    rdo:
        Rate-distortion weight lambda, in squared quantiser steps per bit: a magnitude
        of the run-level part is lowered by one (1 -> 0 joins two zero runs) when that
        adds less squared error than ``rdo`` x the bits it saves, counted with the
        real code lengths of coefficient table 1; then the automatic switch to run-level
        coding is moved (a 1 of an earlier group of 4 lowered to 0, or the zeros of the
        group ending the vector part, and of up to two more groups that then end it, raised
        to 1) by the same test with the real bits of the whole subframe (``"microsoft"``
        syntax; the extended one sends the vector count instead). 0 = plain rounding.
    syntax:
        ``"microsoft"`` (default): the subset Microsoft's encoder writes (4 x 128
        subframes, automatic vector/run-level switch, band scale factors). ``"extended"``:
        valid XMA2 syntax that FFmpeg decodes but Microsoft's encoder was never seen to
        write (console acceptance unknown): per XMA frame the subframe tiling (512, 256,
        128 mixes) and per subframe the vector-coded count (sent, or the automatic
        switch) of least rate-distortion cost with the real code lengths, flat scale
        factors (``shaping`` and ``rounding`` do not apply; ``rdo`` is also the
        tiling decision's bits-to-error weight).

    Raises
    ------
    InputError
        NaN/inf samples, a rate outside the allowed range, a bad shape or bitrate.
    """
    arr = _check_input(pcm, sample_rate)
    if level is None and (bitrate is None or not np.isfinite(bitrate) or bitrate <= 0):
        raise InputError(f"XMA2 bitrate must be a positive number of kbit/s, got {bitrate!r}")
    if syntax not in SYNTAXES:
        raise InputError(f"XMA2 syntax must be one of {', '.join(SYNTAXES)}, got {syntax!r}")
    split = xma_stream_channels(arr.shape[1])
    streams: list[_Stream | _ExtStream] = []
    col = 0
    for ch in split:
        part = arr[:, col : col + ch]
        streams.append(
            _Stream(part, int(sample_rate), shaping, loud_db)
            if syntax == "microsoft"
            else _ExtStream(part, int(sample_rate))
        )
        col += ch
    n_samples = arr.shape[0]
    n_xma_frames = xma_frames_for(n_samples)
    last_skip = end_skip(n_samples)
    seconds = max(n_samples, 1) / sample_rate

    lam = [rdo]  # the RDO weight of the encodes measured (0 in the default syntax's rough search)

    def encode(
        s: _Stream | _ExtStream, lv: np.ndarray, keep_bytes: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if isinstance(s, _Stream):
            return _encode_stream_xma_frames(s, lv, last_skip, rounding, lam[0], keep_bytes)
        return s.encode(lv, last_skip, lam[0], keep_bytes)

    # Every subframe's bits (without the XMA frame's scale-factor set) and error depend only on
    # its own level (the extended syntax's tilings are fixed first), so each uniform level is
    # encoded once and any per-subframe mix of levels is priced from those: per level the
    # subframe bits and transmit flags (streams, F, 4) and the squared error (F, 4) summed over
    # the streams; an XMA frame's length is its fixed header, its subframes and the set of the
    # first subframe that carries coefficients.
    sub_at: dict[int, np.ndarray] = {}
    sends_at: dict[int, np.ndarray] = {}
    dist_at: dict[int, np.ndarray] = {}
    fixed: list[np.ndarray] = []  # header bits (streams, F), set bits (streams, F, 4)

    def measure(lv: int) -> None:
        if lv in sub_at:
            return
        res = [encode(s, np.full((n_xma_frames, 4), lv, np.int64)) for s in streams]
        sub_at[lv] = np.stack([p[:, :4] for _, _, p, _ in res])
        sends_at[lv] = np.stack([p[:, 5:] for _, _, p, _ in res]).astype(bool)
        dist_at[lv] = np.sum([d for _, _, _, d in res], axis=0)
        if not fixed:
            fixed.append(np.stack([nb_ - p[:, :5].sum(axis=1) for _, nb_, p, _ in res]))
            fixed.append(np.stack([s.set_bits() for s in streams]))

    def fix_decisions(lv: int | None) -> None:
        """Decide what the encodes at levels near ``lv`` keep fixed: the extended syntax's
        tilings, the default syntax's loud-band scale factors."""
        changed = [s.fix_tiling(lv, rdo) if isinstance(s, _ExtStream) else s.shape(lv) for s in streams]
        if any(changed):
            forget()

    def forget() -> None:
        for cache_ in (sub_at, sends_at, dist_at):
            cache_.clear()
        fixed.clear()

    def xma_frame_bits(lv: np.ndarray) -> np.ndarray:
        """(streams, F) XMA frame lengths at per-subframe levels ``lv`` (F, 4), bits."""
        sub = np.zeros((len(streams), n_xma_frames, 4), np.int64)
        sends = np.zeros(sub.shape, bool)
        for v in np.unique(lv):
            measure(int(v))
            pick = lv == v
            sub[:, pick] = sub_at[int(v)][:, pick]
            sends[:, pick] = sends_at[int(v)][:, pick]
        first = np.argmax(sends, axis=2)
        header, set_bits = fixed
        carried = np.take_along_axis(set_bits, first[..., None], axis=2)[..., 0] * sends.any(axis=2)
        return header + sub.sum(axis=2) + carried

    def estimate(lv: np.ndarray) -> float:
        """kbit/s in whole packets at per-subframe levels (exact: the packetiser's layout)."""
        packets = sum(_packet_count(nb_) for nb_ in xma_frame_bits(lv))
        return packets * PACKET_BITS / seconds / 1000

    if level is not None:
        fix_decisions(int(level))
        levels = np.full((n_xma_frames, 4), int(level), np.int64)
    else:
        assert bitrate is not None
        # the decisions are made near the level that fits without them: extended tilings 1 dB
        # below the level that fits with one 512-sample block per XMA frame (priced encodes
        # only; decided tilings spend more bits where their shorter blocks pay), default loud
        # bands relative to the level that fits with flat scale factors and no RDO (a rough
        # search: encodes ~3x cheaper)
        fix_decisions(None)
        rough = syntax == "microsoft" and loud_db is not None and rdo > 0
        if rough:
            lam[0] = 0.0
        start = _search(estimate, n_xma_frames, bitrate, _LEVEL_GUESS)
        if syntax == "extended":
            start = max(start - 1, _LEVEL_LO + 1)
        fix_decisions(start)
        if rough:
            lam[0] = rdo
            forget()
        # (RDO and the loud bands typically fit ~2 dB finer than the rough level)
        hi = _search(estimate, n_xma_frames, bitrate, max(start - 2, _LEVEL_LO + 1) if rough else start)
        if syntax == "extended" and abs(hi - start) > 1:
            # tilings decided at the level found (when more than 1 dB off), the search again
            fix_decisions(hi)
            hi = _search(estimate, n_xma_frames, bitrate, hi)
        levels = _allocate(estimate, measure, sub_at, dist_at, hi, _ALLOCATION_SPAN[syntax], bitrate)
    # the estimates are exact, so the packets fit the bitrate (unless even _LEVEL_HI does not)
    packets = [_packetise(*encode(s, levels, True)[:2]) for s in streams]
    return Xma2Encoding(packets, split, int(sample_rate), n_samples, n_xma_frames, int(levels.max()))


def _search(estimate, n_xma_frames: int, bitrate: float, start: int) -> int:  # type: ignore[no-untyped-def]
    """The finest uniform level (dB) whose estimated size fits ``bitrate``.

    Secant steps on log(bitrate) against the level from ``start``, each step forced to
    cross towards the target, inside the bracket of levels known to fit and not to fit:
    typically 3-5 estimates instead of the 8 of a bisection of the whole range (the same
    level where the size falls with the level).
    """
    lo, hi = _LEVEL_LO, _LEVEL_HI  # invariant: hi fits (or is the coarsest), lo does not
    lv, slope = start, _LOG_RATE_PER_DB
    last: tuple[int, float] | None = None
    while hi - lo > 1:
        kbps = estimate(np.full((n_xma_frames, 4), lv, np.int64))
        if kbps <= bitrate:
            hi = lv
        else:
            lo = lv
        if hi - lo <= 1:
            break
        here = np.log(max(kbps, 1e-9))
        if last is not None and last[1] != here and (here - last[1]) / (lv - last[0]) < 0:
            slope = (here - last[1]) / (lv - last[0])
        last = (lv, here)
        guess = int(np.round(lv + (np.log(bitrate) - here) / slope))
        guess = min(guess, lv - 1) if kbps <= bitrate else max(guess, lv + 1)
        lv = min(max(guess, lo + 1), hi - 1)
    return hi


def _allocate(estimate, measure, sub_at, dist_at, hi: int, span: int, bitrate: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per-subframe levels (F, 4) of least total squared error whose estimated size fits
    ``bitrate``.

    Each subframe takes, among the levels ``hi - span .. hi + span`` (dB; ``hi``: the finest
    uniform level that fits), the one of least ``error + mu x bits``; the multiplier ``mu`` (squared
    error per bit, the same for every subframe: where a bit buys the most error) is the
    smallest that fits, found by bisection on its logarithm. Never worse than ``hi``
    everywhere, which fits.
    """
    window = [v for v in range(hi - span, hi + span + 1) if _LEVEL_LO <= v <= _LEVEL_HI]
    for v in window:
        measure(v)
    shape = dist_at[window[0]].shape
    bits = np.stack([sub_at[v].sum(axis=0).ravel() for v in window]).astype(np.float64)
    dist = np.stack([dist_at[v].ravel() for v in window])
    choice = np.asarray(window, np.int64)
    columns = np.arange(bits.shape[1])
    # the exchange rates between neighbouring levels bound the useful multipliers
    d_dist, d_bits = np.diff(dist, axis=0), -np.diff(bits, axis=0)
    rates = d_dist[(d_bits > 0) & (d_dist > 0)] / d_bits[(d_bits > 0) & (d_dist > 0)]
    uniform = np.full(shape, hi, np.int64)
    if not rates.size or hi not in window:
        return uniform
    log_lo, log_hi = np.log(rates.min()) - 1, np.log(rates.max()) + 1
    best, best_dist = uniform, float(dist[window.index(hi)].sum())
    for _ in range(_ALLOCATION_STEPS):
        mid = (log_lo + log_hi) / 2
        pick = np.argmin(dist + np.exp(mid) * bits, axis=0)
        levels = choice[pick].reshape(shape)
        if estimate(levels) <= bitrate:
            log_hi = mid
            total = float(dist[pick, columns].sum())
            if total < best_dist:
                best, best_dist = levels, total
        else:
            log_lo = mid
    return best
