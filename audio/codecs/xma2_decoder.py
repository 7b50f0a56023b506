"""A strict XMA2 parser and an FFmpeg-free decoder (numpy, the spec's synthesis model).

:func:`parse_xma2` walks one stream's 2048-byte packets and checks every field that
FFmpeg ignores but a console may not (``shared/specs/xma2-encoding.md`` sections 2, 4,
8): packet XMA frame counts, first-XMA-frame offsets, packet skip 0, XMA frames inside
one 64 KiB block, 1-bit padding, the XMA-frame-length prefix, the skipped bit and the
trailer rule (1 iff another XMA frame starts later in the packet where this one starts).
:func:`decode_xma2` then rebuilds the audio: dequantisation, the middle half of the
IMDCT, the sine-window overlap of ``min(previous, current)`` block lengths, and the
trims (FFmpeg's output timeline: model time 576 on, ``512 N - 64 - max(0, start + end
- 192)`` samples). Every problem is a :class:`~audio.core.errors.FormatError` naming
the packet's byte offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from audio.codecs import xma2_tables as T
from audio.codecs.xma import XMA_PACKET_SIZE, XmaPacketHeader
from audio.codecs.xma2_bitstream import (
    PACKETS_PER_BLOCK,
    PAYLOAD_BITS,
    XMA_FRAME_LENGTH_BITS,
    XMA_FRAME_SAMPLES,
    BitReader,
    band_edges,
    vlc_tables,
)
from audio.core.errors import FormatError, UnsupportedError

__all__ = ["Xma2Frame", "Xma2Stream", "parse_xma2", "decode_xma2"]


@dataclass
class _Sub:
    """One subframe of one XMA frame: per channel its dequantised coefficients (or None)."""

    length: int
    offset: int
    coeffs: list[np.ndarray | None]


@dataclass
class Xma2Frame:
    """One parsed XMA frame: where it starts (payload bit), its length (bits), trims, subframes."""

    start_bit: int
    length_bits: int
    start_skip: int | None
    end_skip: int | None
    subframes: list[_Sub] = field(default_factory=list)


@dataclass
class Xma2Stream:
    """A parsed stream: its XMA frames and per packet the XMA frame starts found."""

    xma_frames: list[Xma2Frame]
    channels: int
    sample_rate: int

    @property
    def num_samples(self) -> int:
        """Samples per channel a trimming decoder outputs (FFmpeg's count)."""
        if not self.xma_frames:
            return 0
        start = self.xma_frames[0].start_skip or 0
        end = self.xma_frames[-1].end_skip or 0
        return max(0, XMA_FRAME_SAMPLES * len(self.xma_frames) - 64 - max(0, start + end - 192))


@cache
def _sf_map(sample_rate: int) -> dict[tuple[int, int], tuple[int, ...]]:
    """(current size index, saved size index) -> per current band, the saved band it reuses."""
    edges = {i: band_edges(XMA_FRAME_SAMPLES >> i, sample_rate) for i in range(3)}
    out = {}
    for i in range(3):
        for x in range(3):
            row = []
            for b in range(len(edges[i]) - 1):
                mid = ((edges[i][b] + edges[i][b + 1] - 1) << i) >> 1
                v = 0
                while (edges[x][v + 1] << x) < mid:
                    v += 1
                row.append(v)
            out[(i, x)] = tuple(row)
    return out


class _XmaFrameParser:
    """Parses one XMA frame's bits (after the 15-bit length) for a stream of 1 or 2 channels."""

    def __init__(self, channels: int, sample_rate: int, path: str) -> None:
        self.channels = channels
        self.sample_rate = sample_rate
        self.path = path
        self.vlc = vlc_tables()

    def _fail(self, r: BitReader, what: str, found: object) -> FormatError:
        return FormatError(self.path, self.at + r.pos // 8, what, found)

    def parse(self, r: BitReader, at: int) -> tuple[int | None, int | None, list[_Sub]]:
        self.at = at
        ch = self.channels
        if r.read(1) != 1:
            raise UnsupportedError(
                self.path, at, "an XMA2 frame with one subframe layout for all channels", 0
            )
        lengths: list[int] = []
        total = 0
        while total < XMA_FRAME_SAMPLES:
            if total == XMA_FRAME_SAMPLES - 128:
                size = 128
            elif r.read(1) == 0:
                size = 512
            else:
                size = 256 if r.read(1) == 0 else 128
            if total + size > XMA_FRAME_SAMPLES:
                raise self._fail(r, "subframe lengths that sum to 512", lengths + [size])
            lengths.append(size)
            total += size
        if ch == 2 and r.read(1):
            raise UnsupportedError(self.path, at, "no XMA2 post-processing transform", 1)
        r.read(8)  # DRC gain: any value is valid syntax
        start = end = None
        if r.read(1):
            if r.read(1):
                start = r.read(10)
            if r.read(1):
                end = r.read(10)
        subs: list[_Sub] = []
        saved: list[list[int] | None] = [None] * ch
        saved_idx = [0] * ch
        step = [1] * ch
        offset = 0
        for sub_no, size in enumerate(lengths):
            subs.append(self._subframe(r, sub_no, size, offset, saved, saved_idx, step))
            offset += size
        return start, end, subs

    def _subframe(
        self,
        r: BitReader,
        sub_no: int,
        size: int,
        offset: int,
        saved: list[list[int] | None],
        saved_idx: list[int],
        sf_step: list[int],
    ) -> _Sub:
        ch = self.channels
        size_idx = {512: 0, 256: 1, 128: 2}[size]
        edges = band_edges(size, self.sample_rate)
        bands = len(edges) - 1
        if r.read(1):  # extended header: fill bits
            n = r.read(2)
            if n == 0:
                n = r.read(r.read(4)) + 1
            r.read(n) if n <= 64 else [r.read(1) for _ in range(n)]
        if r.read(1):
            raise self._fail(r, "the reserved subframe bit 0", 1)
        ms_bands: list[bool] | None = None
        if ch == 2:
            if r.read(1):
                raise self._fail(r, "the channel-transform bit 0", 1)
            if r.read(1):
                if r.read(1):
                    raise self._fail(r, "a channel transform type 0 or 10", "11")
            elif r.read(1):
                ms_bands = [True] * bands
            else:
                ms_bands = [bool(r.read(1)) for _ in range(bands)]
        transmit = [bool(r.read(1)) for _ in range(ch)]
        out: list[np.ndarray | None] = [None] * ch
        if not any(transmit):
            return _Sub(size, offset, out)
        nvec = [size] * ch
        tnv = bool(r.read(1))
        if tnv:
            bits = (size + 3) // 4
            width = bits.bit_length()
            for c in range(ch):
                nvec[c] = r.read(width) << 2
                if nvec[c] > size:
                    raise self._fail(r, f"a vector-coded count <= {size}", nvec[c])
        s = r.read(6)
        s = s - 64 if s >= 32 else s
        quant = 90 + s
        if s in (31, -32):
            extra = 0
            while (v := r.read(5)) == 31:
                extra += 31
            quant += extra + v if s == 31 else -(extra + v)
        qsteps = [quant] * ch
        if ch == 2:
            mod_len = r.read(3)
            for c in range(ch):
                if r.read(1):
                    qsteps[c] += (r.read(mod_len) + 1) if mod_len else 1
        sfs: list[list[int]] = []
        for c in range(ch):
            cur: list[int] | None = None
            prev = saved[c]
            if prev is not None:
                cur = [prev[v] for v in _sf_map(self.sample_rate)[(size_idx, saved_idx[c])]]
            if sub_no == 0 or r.read(1):
                if prev is None:
                    sf_step[c] = r.read(2) + 1
                    val = 45 // sf_step[c]
                    cur = []
                    for _ in range(bands):
                        val += r.read_vlc(self.vlc["scale"], "scale-factor DPCM") - 60
                        cur.append(val)
                else:
                    assert cur is not None
                    i = 0
                    while i < bands:
                        idx = r.read_vlc(self.vlc["scale_rl"], "scale-factor run-level")
                        if idx == 1:
                            break
                        if idx == 0:
                            code = r.read(14)
                            level, skip, sign = code >> 6, (code & 0x3F) >> 1, code & 1
                        else:
                            skip, level, sign = T.SCALE_RL_RUN[idx], T.SCALE_RL_LEVEL[idx], r.read(1)
                        i += skip
                        if i >= bands:
                            raise self._fail(r, f"a scale-factor run inside {bands} bands", i)
                        cur[i] += level if sign else -level
                        i += 1
                saved[c], saved_idx[c] = cur, size_idx
            elif cur is None:
                raise self._fail(r, "new scale factors before the first reuse in an XMA frame", "reuse bit 0")
            sfs.append(cur)
        raw = [self._coeffs(r, size, nvec[c], tnv) if transmit[c] else np.zeros(size) for c in range(ch)]
        if ms_bands is not None:  # on the quantised values, before each channel's scaling
            a, b = raw
            on = np.repeat(np.asarray(ms_bands), np.diff(edges))
            raw = [np.where(on, a - b, a * (181 / 128)), np.where(on, a + b, b * (181 / 128))]
        for c in range(ch):
            sf = np.asarray(sfs[c])
            exps = qsteps[c] - (sf.max() - sf) * sf_step[c]
            out[c] = raw[c] * np.repeat(10.0 ** (exps / 20.0), np.diff(edges))
        return _Sub(size, offset, out)

    def _large(self, r: BitReader) -> int:
        n = 8
        if r.read(1):
            n += 8
            if r.read(1):
                n += 8
                if r.read(1):
                    n += 7
        return r.read(n)

    def _coeffs(self, r: BitReader, size: int, nvec: int, tnv: bool) -> np.ndarray:
        """One channel's coefficients: ``nvec`` vector-coded when ``tnv`` (the count was sent,
        possibly the whole subframe), else vector-coded until the automatic switch."""
        v = self.vlc
        q = np.zeros(size)
        table = r.read(1)
        runs, levels = (T.COEF1_RUN, T.COEF1_LEVEL) if table else (T.COEF0_RUN, T.COEF0_LEVEL)
        cur = zeros = 0
        rl_mode = False
        while (tnv or not rl_mode) and cur + 3 < nvec:
            sym = r.read_vlc(v["vec4"], "vec4")
            if sym:
                packed = sym - 1
                mags = [(packed >> sh) & 15 for sh in (12, 8, 4, 0)]
            else:
                mags = []
                for _ in range(2):
                    s2 = r.read_vlc(v["vec2"], "vec2")
                    if s2:
                        mags += [(s2 - 1) >> 4, (s2 - 1) & 15]
                    else:
                        for _ in range(2):
                            s1 = r.read_vlc(v["vec1"], "vec1")
                            mags.append(s1 + self._large(r) if s1 == 100 else s1)
            for m in mags:
                if m:
                    q[cur] = m if r.read(1) else -m
                    zeros = 0
                else:
                    zeros += 1
                    rl_mode |= zeros > size >> 8
                cur += 1
        if cur < size:
            esc = (size - 1).bit_length()
            vlc = v["coef1"] if table else v["coef0"]
            pos = cur
            while pos < size:
                sym = r.read_vlc(vlc, "coefficient run-level")
                if sym == 1:
                    break
                if sym > 1:
                    pos += runs[sym]
                    level = levels[sym]
                else:
                    level = self._large(r)
                    if r.read(1):
                        if r.read(1):
                            if r.read(1):
                                raise self._fail(r, "an escape run code 0, 10 or 110", "111")
                            pos += r.read(esc) + 4
                        else:
                            pos += r.read(2) + 1
                if pos >= size:
                    raise self._fail(r, f"a coefficient run inside {size} coefficients", pos)
                q[pos] = level if r.read(1) else -level
                pos += 1
        return q


def _payload(packets: Sequence[bytes], path: str, base_offset: int) -> tuple[bytes, list[XmaPacketHeader]]:
    headers = []
    for p, pkt in enumerate(packets):
        at = base_offset + p * XMA_PACKET_SIZE
        if len(pkt) != XMA_PACKET_SIZE:
            raise FormatError(path, at, "a 2048-byte XMA2 packet", f"{len(pkt)} bytes")
        hdr = XmaPacketHeader.unpack(int.from_bytes(pkt[:4], "big"))
        if hdr.packet_skip != 0:
            raise UnsupportedError(path, at, "XMA2 packet skip 0 (one stream)", hdr.packet_skip)
        headers.append(hdr)
    return b"".join(bytes(p[4:]) for p in packets), headers


def _ones(payload: bytes, start: int, end: int) -> bool:
    """Whether every payload bit in [start, end) is 1."""
    if end <= start:
        return True
    a, b = start >> 3, (end + 7) >> 3
    chunk = int.from_bytes(payload[a:b], "big")
    width = (b - a) * 8
    chunk >>= width - (end - a * 8)
    n = end - start
    return chunk & ((1 << n) - 1) == (1 << n) - 1


def parse_xma2(
    packets: Sequence[bytes],
    sample_rate: int,
    channels: int,
    *,
    path: str = "<buffer>",
    base_offset: int = 0,
) -> Xma2Stream:
    """Strictly parse one XMA2 stream (1 or 2 channels) of 2048-byte packets.

    Parameters
    ----------
    packets:
        2048-byte XMA2 packets of one stream.
    sample_rate:
        The stream's sample rate, Hz (band tables depend on it).
    channels:
        The stream's channels, 1 or 2.
    path:
        Source name for error messages (file, or archive+member).
    base_offset:
        Byte offset of the first packet in its file.

    Raises
    ------
    FormatError
        Any field FFmpeg would ignore or choke on, naming the packet's byte offset.
    """
    if channels not in (1, 2):
        raise FormatError(path, base_offset, "an XMA2 stream of 1 or 2 channels", channels)
    if not packets:
        return Xma2Stream([], channels, sample_rate)
    payload, headers = _payload(packets, path, base_offset)
    total = len(payload) * 8
    parser = _XmaFrameParser(channels, sample_rate, path)
    xma_frames: list[Xma2Frame] = []
    starts_in: dict[int, list[int]] = {}

    def at(bit: int) -> int:
        return base_offset + (bit // PAYLOAD_BITS) * XMA_PACKET_SIZE + 4 + (bit % PAYLOAD_BITS) // 8

    if headers[0].xma_frame_count == 0 or headers[0].first_xma_frame_bit_offset != 0:
        raise FormatError(
            path, base_offset, "a first XMA2 packet that starts an XMA frame at bit 0", headers[0]
        )
    pos = 0
    block = PACKETS_PER_BLOCK * PAYLOAD_BITS
    while True:
        if pos + XMA_FRAME_LENGTH_BITS > total:
            raise FormatError(path, at(pos), "an XMA-frame-length prefix inside the stream", "end of data")
        length = int.from_bytes(payload[pos >> 3 : (pos >> 3) + 3], "big") >> (9 - (pos & 7)) & 0x7FFF
        if length <= XMA_FRAME_LENGTH_BITS + 2 or pos + length > total:
            raise FormatError(path, at(pos), "an XMA2 frame length inside the stream", length)
        if pos // block != (pos + length - 1) // block:
            raise FormatError(path, at(pos), "an XMA2 frame inside one 64 KiB block", f"{length} bits")
        chunk = payload[pos >> 3 : ((pos + length + 7) >> 3)]
        r = BitReader(chunk, (pos & 7) + length, path=path)
        r.read((pos & 7) + XMA_FRAME_LENGTH_BITS)
        start, end, subs = parser.parse(r, at(pos))
        if r.pos != (pos & 7) + length - 2:
            raise FormatError(
                path, at(pos), f"an XMA frame of {length} bits (prefix)", f"{r.pos - (pos & 7) + 2} bits"
            )
        if r.read(1) != 1:
            raise FormatError(path, at(pos), "the skipped XMA frame bit 1 (as Microsoft's encoder writes)", 0)
        trailer = r.read(1)
        xma_frames.append(Xma2Frame(pos, length, start, end, subs))
        packet = pos // PAYLOAD_BITS
        starts_in.setdefault(packet, []).append(pos)
        nxt = pos + length
        if trailer:
            if nxt // PAYLOAD_BITS != packet:
                raise FormatError(
                    path, at(pos), "trailer 0 on an XMA frame whose successor starts in a later packet", 1
                )
            pos = nxt
            continue
        # the next XMA frame starts in a later packet: the first one whose count is not 0
        follow = next((p for p in range(packet + 1, len(headers)) if headers[p].xma_frame_count), None)
        if follow is None:
            if not _ones(payload, nxt, total):
                raise FormatError(path, at(nxt), "1-bit padding after the last XMA frame", "0 bits")
            break
        new = follow * PAYLOAD_BITS + headers[follow].first_xma_frame_bit_offset
        if new < nxt or not _ones(payload, nxt, new):
            raise FormatError(
                path, at(nxt), f"1-bit padding up to the next XMA frame at payload bit {new}", "data bits"
            )
        pos = new
    for p, hdr in enumerate(headers):
        found = starts_in.get(p, [])
        where = base_offset + p * XMA_PACKET_SIZE
        if hdr.xma_frame_count != len(found):
            raise FormatError(path, where, f"packet XMA frame count {len(found)}", hdr.xma_frame_count)
        if found and hdr.first_xma_frame_bit_offset != found[0] - p * PAYLOAD_BITS:
            raise FormatError(
                path,
                where,
                f"first-XMA-frame offset {found[0] - p * PAYLOAD_BITS}",
                hdr.first_xma_frame_bit_offset,
            )
        if not found and hdr.first_xma_frame_bit_offset < PAYLOAD_BITS:
            raise FormatError(
                path,
                where,
                f"first-XMA-frame offset >= {PAYLOAD_BITS} (no XMA frame starts)",
                hdr.first_xma_frame_bit_offset,
            )
    return Xma2Stream(xma_frames, channels, sample_rate)


@cache
def _imdct_basis(size: int) -> np.ndarray:
    m = np.arange(size)[:, None]
    k = np.arange(size)[None, :] + 0.5
    return -(2.0 / (size * 32768.0)) * np.cos(np.pi / size * (m + size + 0.5) * k)


@cache
def _sine(n: int) -> np.ndarray:
    return np.sin((np.arange(n) + 0.5) * np.pi / (2 * n))


def synthesise(stream: Xma2Stream) -> np.ndarray:
    """The model output of a parsed stream before any trim: 512 x (XMA frames + 1) samples.

    The extra XMA frame is what a decoder emits at the end of the stream: the last block's
    unwindowed second half (256 samples), then zeros.
    """
    ch = stream.channels
    n = len(stream.xma_frames)
    result = np.zeros((XMA_FRAME_SAMPLES * (n + 1), ch))
    out = np.zeros((ch, XMA_FRAME_SAMPLES + XMA_FRAME_SAMPLES // 2))
    prev = [XMA_FRAME_SAMPLES] * ch
    for f, xma_frame in enumerate(stream.xma_frames):
        for sub in xma_frame.subframes:
            size, o = sub.length, sub.offset
            at = XMA_FRAME_SAMPLES // 2 + o
            for c in range(ch):
                coeffs = sub.coeffs[c]
                out[c, at : at + size] = 0.0 if coeffs is None else _imdct_basis(size) @ coeffs
                win = min(prev[c], size)
                half = win // 2
                w = _sine(win)
                s0 = out[c, at - half : at].copy()
                s1 = out[c, at : at + half][::-1].copy()
                wi, wj = w[:half], w[::-1][:half]
                out[c, at - half : at] = s0 * wj - s1 * wi
                out[c, at : at + half] = (s0 * wi + s1 * wj)[::-1]
                prev[c] = size
        result[f * XMA_FRAME_SAMPLES : (f + 1) * XMA_FRAME_SAMPLES] = out[:, :XMA_FRAME_SAMPLES].T
        out[:, : XMA_FRAME_SAMPLES // 2] = out[:, XMA_FRAME_SAMPLES:]
        out[:, XMA_FRAME_SAMPLES // 2 :] = 0.0
    result[n * XMA_FRAME_SAMPLES : n * XMA_FRAME_SAMPLES + XMA_FRAME_SAMPLES // 2] = out[
        :, : XMA_FRAME_SAMPLES // 2
    ].T
    return result


def decode_xma2(
    packets: Sequence[bytes],
    sample_rate: int,
    channels: int,
    *,
    path: str = "<buffer>",
    base_offset: int = 0,
) -> np.ndarray:
    """Strictly parse and decode one XMA2 stream to float32 (samples, channels).

    The output matches FFmpeg's ``xma2`` decoder: model time 576 on, trimmed by the
    stream's start and end skips (:attr:`Xma2Stream.num_samples`).

    Parameters
    ----------
    packets:
        2048-byte XMA2 packets of one stream.
    sample_rate:
        The stream's sample rate, Hz (band tables depend on it).
    channels:
        The stream's channels, 1 or 2.
    path:
        Source name for error messages (file, or archive+member).
    base_offset:
        Byte offset of the first packet in its file.
    """
    stream = parse_xma2(packets, sample_rate, channels, path=path, base_offset=base_offset)
    model = synthesise(stream)
    n = stream.num_samples
    padded = np.zeros((576 + n, channels))
    take = min(len(model), 576 + n)
    padded[:take] = model[:take]
    return padded[576:].astype(np.float32)
