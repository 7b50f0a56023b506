"""Probing reader for Project Sylpheed ``.slb`` banks.

The ``.slb`` layout is not public (``shared/specs/sylpheed-chatter.md`` section 5): the game's
sound library sits on XACT, so the likely content is an XACT wave bank. :func:`probe_slb`
therefore looks for, in order:

1. an XACT wave bank (``DNBW`` big-endian or ``WBND`` little-endian, versions 34-46) at
   offset 0, else embedded: the magic is scanned at 4-byte alignment within the first
   ``window`` bytes and accepted only if the whole header parses (segments inside the
   file, sane entry table) through :func:`audio.containers.xwb.read_wavebank`;
2. a RIFF/RIFX WAVE (XMA1, XMA2 or PCM), at 0 or embedded, validated by
   :func:`audio.containers.riff.read_riff`;
3. raw 2048-byte XMA packets, accepted only if every packet header is a valid XMA2
   packet header and the first packet starts an XMA frame.

Other XACT magics (sound bank ``SDBK``/``KBDS``, global settings ``XGSF``/``FSGX``) are
reported as seen but not decoded. The :class:`ProbeReport` lists what was found where,
what was rejected and why, and the byte ranges nothing accounted for. Decoding goes
through the codec layer (:mod:`audio.codecs`); this module parses no audio itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from audio.codecs.xma import XMA_PACKET_SIZE, decode_xma, parse_xma2_packet_header, split_packets
from audio.containers import riff, xwb
from audio.core.errors import FormatError, UnsupportedError

__all__ = ["SCAN_WINDOW", "ProbeReport", "SlbFinding", "decode_slb", "probe_slb", "replace_slb_entry"]

SCAN_WINDOW = 0x10000
"""Bytes scanned for an embedded magic (4-byte steps)."""
_BANK_MAGICS = (b"DNBW", b"WBND")
_RIFF_MAGICS = (b"RIFF", b"RIFX")
_OTHER_MAGICS = {
    b"SDBK": "XACT sound bank (LE)",
    b"KBDS": "XACT sound bank (BE)",
    b"XGSF": "XACT global settings (LE)",
    b"FSGX": "XACT global settings (BE)",
}


@dataclass(frozen=True)
class SlbFinding:
    """One recognised structure: ``kind`` is ``xwb``, ``riff``, ``xma`` (raw packets) or ``xact``."""

    kind: str
    offset: int
    end: int
    magic: str
    version: int | None = None
    entries: int = 0
    codecs: tuple[str, ...] = ()
    detail: str = ""

    @property
    def decodable(self) -> bool:
        return self.kind in ("xwb", "riff", "xma")


@dataclass(frozen=True)
class ProbeReport:
    path: str
    size: int
    findings: tuple[SlbFinding, ...]
    rejected: tuple[str, ...]
    unrecognised: tuple[tuple[int, int], ...]

    @property
    def recognised(self) -> bool:
        return any(f.decodable for f in self.findings)

    def summary(self) -> str:
        """One line: the size and what was found (for listing many banks)."""
        found = [
            f"{f.kind} {f.magic!r}".replace(" ''", "")
            + (f" v{f.version}" if f.version is not None else "")
            + f", {f.entries} entr{'y' if f.entries == 1 else 'ies'}"
            + (f" {'/'.join(f.codecs)}" if f.codecs else "")
            for f in self.findings
        ]
        extra = sum(b - a for a, b in self.unrecognised)
        return (
            f"{self.size} bytes: "
            + ("; ".join(found) or "no decodable audio recognised")
            + (f"; {extra} bytes unrecognised" if extra else "")
        )

    def text(self) -> str:
        lines = [f"{self.path}: {self.size} bytes"]
        for f in self.findings:
            v = f" v{f.version}" if f.version is not None else ""
            lines.append(
                f"  {f.kind} {f.magic!r}{v} at 0x{f.offset:X}..0x{f.end:X}: {f.entries} entries"
                + (f", codecs {', '.join(f.codecs)}" if f.codecs else "")
                + (f" ({f.detail})" if f.detail else "")
            )
        for r in self.rejected:
            lines.append(f"  rejected: {r}")
        for a, b in self.unrecognised:
            lines.append(f"  unrecognised bytes 0x{a:X}..0x{b:X} ({b - a} bytes)")
        if not self.recognised:
            lines.append("  no decodable audio recognised")
        return "\n".join(lines)


def _bank_finding(data: bytes, path: str, off: int) -> tuple[SlbFinding, xwb.WaveBank]:
    bank = xwb.read_wavebank(data, path, off)
    end = max([e.data_offset + e.data_size for e in bank.entries] + [off + 0x34])
    codecs = tuple(sorted({f"{e.codec}/{e.channels}ch/{e.sample_rate}Hz" for e in bank.entries}))
    return SlbFinding(
        "xwb",
        off,
        end,
        bank.data[off : off + 4].decode("latin-1"),
        bank.version,
        len(bank.entries),
        codecs,
        f"{'big' if bank.big_endian else 'little'}-endian, name {bank.name!r}",
    ), bank


def _riff_finding(data: bytes, path: str, off: int) -> SlbFinding:
    w = riff.read_riff(data, path, off)
    if w.format_tag not in (riff.TAG_PCM, riff.TAG_MSADPCM, riff.TAG_XMA1, riff.TAG_XMA2):
        raise UnsupportedError(path, off, "a RIFF wave with PCM, MS-ADPCM or XMA", f"tag {w.format_tag:#06x}")
    codec = {riff.TAG_PCM: "pcm", riff.TAG_MSADPCM: "msadpcm", riff.TAG_XMA1: "xma1", riff.TAG_XMA2: "xma2"}[
        w.format_tag
    ]
    return SlbFinding(
        "riff",
        off,
        w.data_offset + w.data_size,
        data[off : off + 4].decode("latin-1"),
        None,
        1,
        (f"{codec}/{w.channels}ch/{w.sample_rate}Hz",),
    )


def _raw_xma(data: bytes, path: str) -> SlbFinding:
    n = len(data) // XMA_PACKET_SIZE
    if n == 0:
        raise FormatError(path, 0, "at least one 2048-byte XMA packet", f"{len(data)} bytes")
    first = parse_xma2_packet_header(data[:XMA_PACKET_SIZE], path, 0)
    if first.xma_frame_count == 0:
        raise FormatError(path, 0, "a first XMA packet that starts an XMA frame", first)
    bit = 32 + first.first_xma_frame_bit_offset
    word = int.from_bytes(data[bit // 8 : bit // 8 + 3], "big")
    length = (word >> (9 - bit % 8)) & 0x7FFF
    if length in (0, 0x7FFF) or length > XMA_PACKET_SIZE * 8 * 16:
        raise FormatError(path, bit // 8, "a plausible first XMA frame length (bits)", length)
    for k in range(1, n):
        pkt = data[k * XMA_PACKET_SIZE : (k + 1) * XMA_PACKET_SIZE]
        if pkt == b"\xff" * XMA_PACKET_SIZE:
            continue
        parse_xma2_packet_header(pkt, path, k * XMA_PACKET_SIZE)
    return SlbFinding(
        "xma",
        0,
        n * XMA_PACKET_SIZE,
        "",
        None,
        1,
        ("xma2/?ch/?Hz",),
        f"{n} packets; the sample rate and channel count are not stored",
    )


def _scan(data: bytes, magics: tuple[bytes, ...], window: int) -> list[int]:
    out = []
    for m in magics:
        pos = data.find(m, 0, min(len(data), window) + 4)
        while pos >= 0:
            if pos % 4 == 0:
                out.append(pos)
            pos = data.find(m, pos + 1, min(len(data), window) + 4)
    return sorted(set(out))


def probe_slb(data: bytes, path: str = "<slb>", window: int = SCAN_WINDOW) -> ProbeReport:
    """Say what an ``.slb`` holds; never raises for bad content (it is reported)."""
    data = bytes(data)
    findings: list[SlbFinding] = []
    rejected: list[str] = []
    for off in _scan(data, _BANK_MAGICS, window):
        if any(f.offset <= off < f.end for f in findings):
            continue
        try:
            findings.append(_bank_finding(data, path, off)[0])
        except FormatError as exc:
            rejected.append(f"{data[off : off + 4]!r} at 0x{off:X}: {exc}")
    for off in _scan(data, _RIFF_MAGICS, window):
        if any(f.offset <= off < f.end for f in findings):
            continue
        try:
            findings.append(_riff_finding(data, path, off))
        except FormatError as exc:
            rejected.append(f"{data[off : off + 4]!r} at 0x{off:X}: {exc}")
    for off in _scan(data, tuple(_OTHER_MAGICS), window):
        if not any(f.offset <= off < f.end for f in findings):
            m = data[off : off + 4]
            findings.append(
                SlbFinding(
                    "xact",
                    off,
                    off + 4,
                    m.decode("latin-1"),
                    None,
                    0,
                    (),
                    f"{_OTHER_MAGICS[m]}: recognised, not decoded",
                )
            )
    if not any(f.decodable for f in findings):
        try:
            findings.append(_raw_xma(data, path))
        except FormatError as exc:
            rejected.append(f"raw XMA packets: {exc}")
    findings.sort(key=lambda f: f.offset)
    gaps: list[tuple[int, int]] = []
    pos = 0
    for start, end in [(f.offset, f.end) for f in findings] + [(len(data), len(data))]:
        if start > pos and data[pos:start].strip(b"\0\xff"):  # padding is not reported
            gaps.append((pos, start))
        pos = max(pos, end)
    return ProbeReport(path, len(data), tuple(findings), tuple(rejected), tuple(gaps))


def decode_slb(
    data: bytes,
    path: str = "<slb>",
    entry: int = 0,
    *,
    raw_sample_rate: int | None = None,
    raw_channels: int = 1,
) -> tuple[np.ndarray, int]:
    """Decode entry ``entry`` of the first decodable structure: float32 ``(samples, channels)``, Hz.

    Raw XMA packets carry no sample rate: pass ``raw_sample_rate`` (Hz) to decode them.
    """
    data = bytes(data)
    rep = probe_slb(data, path)
    for f in rep.findings:
        if f.kind == "xwb":
            bank = xwb.read_wavebank(data, path, f.offset)
            if not 0 <= entry < len(bank.entries):
                raise FormatError(path, f.offset, f"an entry index below {len(bank.entries)}", entry)
            return xwb.decode_entry(bank, entry)
        if f.kind == "riff":
            if entry != 0:
                raise FormatError(path, f.offset, "entry 0 (a RIFF wave holds one)", entry)
            return riff.decode_riff(riff.read_riff(data, path, f.offset), data)
        if f.kind == "xma":
            if raw_sample_rate is None:
                raise UnsupportedError(path, 0, "a sample rate for raw XMA packets (raw_sample_rate)")
            out = decode_xma(
                split_packets(data[: f.end], 0, path=path), raw_sample_rate, raw_channels, path=path
            )
            return out, raw_sample_rate
    raise UnsupportedError(path, 0, "a recognised .slb layout", rep.text())


def replace_slb_entry(
    data: bytes,
    entry: int,
    pcm: np.ndarray,
    *,
    path: str = "<slb>",
    bitrate: float = 64.0,
    codec: str = xwb.CODEC_XMA2,
) -> bytes:
    """A new ``.slb`` whose wave bank entry ``entry`` holds ``pcm``, encoded as XMA2 or PCM16.

    Only an ``.slb`` that is an XACT wave bank from offset 0 to its end can be rewritten
    (anything around an embedded bank has an unknown layout). ``pcm`` is float32
    ``(samples, channels)`` in -1..1 at the entry's sample rate and channel count (1 or 2); the new
    entry keeps the old one's name and flags, loops are dropped; every other entry's data,
    format and seek table are kept as stored. ``bitrate`` is XMA2 kbit/s per channel.
    ``codec`` is ``"xma2"`` (only in banks of version 39 and later: before that an XMA
    entry is XMA1, which barkbus does not encode) or ``"pcm"`` (16-bit, the bank's byte order).
    """
    data = bytes(data)
    bank = xwb.read_wavebank(data, path)
    if not 0 <= entry < len(bank.entries):
        raise FormatError(path, 0, f"an entry index below {len(bank.entries)}", entry)
    if bank.compact:
        raise UnsupportedError(path, 0, "a wave bank with full (not compact) entries", "compact entries")
    if codec not in (xwb.CODEC_XMA2, xwb.CODEC_PCM):
        raise ValueError(f"codec must be {xwb.CODEC_XMA2!r} or {xwb.CODEC_PCM!r}, not {codec!r}")
    if codec == xwb.CODEC_XMA2 and bank.version <= xwb.XMA1_MAX_VERSION:
        raise UnsupportedError(
            path,
            4,
            f"a wave bank of version {xwb.XMA1_MAX_VERSION + 1} or later for an XMA2 entry",
            f"version {bank.version}, whose XMA entries are XMA1 (not encoded by barkbus; "
            "write the line as PCM with --codec pcm)",
        )
    old = bank.entries[entry]
    arr = np.asarray(pcm, np.float32)
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    if arr.shape[1] != old.channels or old.channels > 2:
        raise FormatError(
            path, old.data_offset, f"audio with the entry's {old.channels} channel(s)", arr.shape[1]
        )
    if codec == xwb.CODEC_PCM:
        ints = np.clip(np.round(arr * 32767.0), -32768, 32767).astype(np.int16)
        new = xwb.NewWave.pcm16(ints, old.sample_rate, big_endian=bank.big_endian, name=old.name)
    else:
        from audio.codecs.xma2_encoder import encode_xma2  # the encoder and scipy.fft: 0.1 s to import

        enc = encode_xma2(arr, old.sample_rate, bitrate=bitrate * old.channels)
        new = xwb.xma2_wave(enc.streams[0], old.channels, old.sample_rate, enc.seek_table(), name=old.name)
    waves = []
    for e in bank.entries:
        if e.index == entry:
            waves.append(replace(new, flags=e.flags & ~xwb.ENTRY_FLAG_IGNORE_LOOP))
            continue
        waves.append(xwb.NewWave.of_entry(bank, e.index))
    return xwb.write_wavebank(
        waves,
        big_endian=bank.big_endian,
        version=bank.version,
        name=bank.name,
        alignment=bank.alignment,
        header_version=bank.header_version or 44,
    )
