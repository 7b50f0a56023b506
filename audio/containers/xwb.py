"""XACT wave banks (``.xwb``): reader, entry decoder and writer.

Layout (versions 34-46): magic ``WBND`` (little-endian platforms) or ``DNBW`` (Xbox 360,
big-endian), u32 version, for version >= 42 a u32 header version, then five
``(offset, size)`` segments: BANKDATA, ENTRYMETADATA, then ENTRYNAMES and EXTRA (up to
version 38) or EXTRA (XMA seek tables) and ENTRYNAMES (from version 39), then
ENTRYWAVEDATA. Entries are 24-byte records or 4-byte compact sector offsets; each
carries (or, compact, shares) a MINIWAVEFORMAT word.

Codec tags: 0 PCM (8-bit unsigned or 16-bit in the bank's byte order), 1 XMA (XMA1 up
to ``xma1_max_version``, by default 38 as our codecs spec states, XMA2 after), 2
MS-ADPCM, 3 xWMA (recognised, not decoded: :class:`~audio.core.errors.UnsupportedError`).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from audio.codecs.blocks import pcm16_to_float32
from audio.codecs.xma import XMA2_BLOCK_SIZE, XMA_LENGTH_SLACK, decode_xma, split_packets, xma2_extradata
from audio.containers import riff
from audio.core.binary import Reader, align
from audio.core.docs import share_parameters
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "CODEC_PCM",
    "CODEC_XMA1",
    "CODEC_XMA2",
    "XMA1_MAX_VERSION",
    "CODEC_MSADPCM",
    "CODEC_XWMA",
    "WaveEntry",
    "WaveBank",
    "NewWave",
    "read_wavebank",
    "entry_data",
    "decode_entry",
    "write_wavebank",
    "xma2_wave",
    "pack_miniwaveformat",
    "unpack_miniwaveformat",
]

CODEC_PCM, CODEC_XMA1, CODEC_XMA2, CODEC_MSADPCM, CODEC_XWMA = "pcm", "xma1", "xma2", "msadpcm", "xwma"
XMA1_MAX_VERSION = 38
"""Last bank version whose XMA entries (codec tag 1) are XMA1 (codecs spec); XMA2 after."""
MIN_VERSION, MAX_VERSION = 34, 46
FLAG_COMPACT = 0x00020000
FLAG_SEEKTABLES = 0x00080000
ENTRY_FLAG_IGNORE_LOOP = 0x8
_BANKDATA_SIZE = 0x60
_ENTRY_SIZE = 24
_NAME_SIZE = 64
_MAX_ENTRIES = 1 << 16


def unpack_miniwaveformat(word: int, version: int) -> tuple[int, int, int, int, int]:
    """Split a MINIWAVEFORMAT word into ``(tag, channels, sample rate Hz, block_align, bits flag)``.

    Parameters
    ----------
    word:
        The MINIWAVEFORMAT word.
    version:
        Bank version (the field widths depend on it).
    """
    if version <= 34:
        return word & 1, (word >> 1) & 7, (word >> 4) & 0x7FFFF, (word >> 23) & 0xFF, word >> 31
    return word & 3, (word >> 2) & 7, (word >> 5) & 0x3FFFF, (word >> 23) & 0xFF, word >> 31


def pack_miniwaveformat(
    tag: int, channels: int, sample_rate: int, block_align: int, bits: int, version: int
) -> int:
    """Inverse of :func:`unpack_miniwaveformat` (fields are checked against their widths).

    Parameters
    ----------
    tag:
        Codec tag (see the module docstring; its width depends on ``version``).
    channels:
        Channel count.
    sample_rate:
        Sample rate, Hz.
    block_align:
        Block alignment field.
    bits:
        Bits flag (1: 16-bit PCM).
    version:
        Bank version (the field widths depend on it).
    """
    tag_bits, sample_rate_bits = (1, 19) if version <= 34 else (2, 18)
    if not (
        0 <= tag < 1 << tag_bits
        and 0 <= channels < 8
        and 0 <= sample_rate < 1 << sample_rate_bits
        and 0 <= block_align < 256
        and bits in (0, 1)
    ):
        raise ValueError(
            f"MINIWAVEFORMAT fields out of range: {(tag, channels, sample_rate, block_align, bits)}"
        )
    return (
        tag | channels << tag_bits | sample_rate << (tag_bits + 3) | block_align << 23 | bits << 31
    ) & 0xFFFFFFFF


def _codec_of(tag: int, version: int, xma1_max_version: int) -> str:
    if tag == 1:
        return CODEC_XMA1 if version <= xma1_max_version else CODEC_XMA2
    return {0: CODEC_PCM, 2: CODEC_MSADPCM, 3: CODEC_XWMA}[tag]


@dataclass(frozen=True)
class WaveEntry:
    """One wave of a bank.

    ``data_offset`` is absolute in the buffer given to :func:`read_wavebank`;
    ``num_samples`` is the header's duration (0 for compact entries); loop fields are
    samples from version 39 on, bytes before (``loop_in_samples`` says which).
    """

    index: int
    codec: str
    tag: int
    channels: int
    sample_rate: int
    block_align: int
    bits_flag: int
    flags: int
    num_samples: int
    loop_start: int
    loop_length: int
    loop_in_samples: bool
    data_offset: int
    data_size: int
    name: str | None = None
    seek_table: tuple[int, ...] = ()

    @property
    def loops(self) -> bool:
        """True if the entry has a loop region that is not flagged to be ignored."""
        return self.loop_length > 0 and not self.flags & ENTRY_FLAG_IGNORE_LOOP


@dataclass(frozen=True)
class WaveBank:
    """A parsed wave bank; ``data`` is the buffer it was read from."""

    path: str
    big_endian: bool
    version: int
    header_version: int | None
    flags: int
    name: str
    alignment: int
    entries: tuple[WaveEntry, ...]
    data: bytes = field(repr=False)
    base_offset: int = 0

    @property
    def compact(self) -> bool:
        return bool(self.flags & FLAG_COMPACT)


def _segments(r: Reader, data: bytes, b: int, seg_at: int, path: str) -> list[tuple[int, int]]:
    """The five segments as (absolute offset, size), each checked to lie inside the data."""
    segs = []
    for k in range(5):
        off, size = r.u32(seg_at + 8 * k, "segment offset"), r.u32(seg_at + 8 * k + 4, "segment size")
        if size and b + off + size > len(data):
            raise FormatError(
                path,
                seg_at + 8 * k,
                f"segment {k} inside the data",
                f"{off:#x}+{size:#x} past {len(data) - b:#x}",
            )
        segs.append((b + off, size))
    return segs


@dataclass(frozen=True)
class _Layout:
    """Where and how a bank's entry records are laid out."""

    meta_at: int
    entry_size: int
    count: int
    compact: bool
    compact_format: int
    alignment: int
    wave_at: int
    wave_size: int
    version: int
    xma1_max_version: int


def _read_entry(
    r: Reader, lay: _Layout, i: int, name: str | None, seek: tuple[int, ...], path: str
) -> WaveEntry:
    """Entry ``i``: its format, loop and wave-data slice, checked against the wave segment."""
    eo = lay.meta_at + i * lay.entry_size
    if lay.compact:
        word = r.u32(eo, "compact entry")
        start = (word & 0x1FFFFF) * lay.alignment
        if i + 1 < lay.count:
            end = (r.u32(eo + 4, "next compact entry") & 0x1FFFFF) * lay.alignment
        else:
            end = lay.wave_size
        size = end - start - (word >> 21)
        fmt, flags_duration, loop = lay.compact_format, 0, (0, 0)
    else:
        flags_duration, fmt, start, size = (r.u32(eo + 4 * k, "entry field") for k in range(4))
        loop = (r.u32(eo + 16, "loop start"), r.u32(eo + 20, "loop length"))
    if size < 0 or start + size > lay.wave_size:
        raise FormatError(
            path, eo, f"wave data inside the {lay.wave_size}-byte wave segment", f"{start:#x}+{size:#x}"
        )
    tag, channels, sample_rate, block_align, bits = unpack_miniwaveformat(fmt, lay.version)
    if not 1 <= channels <= 7 or not 1 <= sample_rate <= 200_000:
        raise FormatError(
            path,
            eo + (0 if lay.compact else 4),
            "1..7 channels and a 1..200000 Hz sample rate",
            (channels, sample_rate),
        )
    return WaveEntry(
        index=i,
        codec=_codec_of(tag, lay.version, lay.xma1_max_version),
        tag=tag,
        channels=channels,
        sample_rate=sample_rate,
        block_align=block_align,
        bits_flag=bits,
        flags=flags_duration & 0xF,
        num_samples=flags_duration >> 4,
        loop_start=loop[0],
        loop_length=loop[1],
        loop_in_samples=lay.version >= 39,
        data_offset=lay.wave_at + start,
        data_size=size,
        name=name,
        seek_table=seek,
    )


def read_wavebank(
    data: bytes | memoryview,
    path: str = "<buffer>",
    base_offset: int = 0,
    *,
    xma1_max_version: int = XMA1_MAX_VERSION,
) -> WaveBank:
    """Parse a wave bank starting at ``base_offset`` of ``data`` (segment offsets are relative to it).

    Raises FormatError (with file and absolute offset) for anything truncated or inconsistent.

    Parameters
    ----------
    data:
        The bytes holding the bank.
    path:
        Source name for error messages (file, or archive+member).
    base_offset:
        Where the bank starts in ``data``.
    xma1_max_version:
        Highest bank version whose XMA entries are XMA1.
    """
    data = bytes(data)
    if base_offset < 0 or base_offset > len(data):
        raise FormatError(path, base_offset, "a wave bank inside the data", f"{len(data)} bytes")
    magic = Reader(data, path).bytes(base_offset, 4, "wave bank magic")
    if magic not in (b"DNBW", b"WBND"):
        raise FormatError(path, base_offset, "wave bank magic 'DNBW' or 'WBND'", magic)
    big = magic == b"DNBW"
    r = Reader(data, path, big)
    b = base_offset
    version = r.u32(b + 4, "wave bank version")
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise UnsupportedError(path, b + 4, f"wave bank version {MIN_VERSION}..{MAX_VERSION}", version)
    header_version = r.u32(b + 8, "wave bank header version") if version >= 42 else None
    seg_at = b + (0x0C if version >= 42 else 0x08)
    segs = _segments(r, data, b, seg_at, path)
    bank_seg, meta_seg = segs[0], segs[1]
    names_seg, extra_seg = (segs[2], segs[3]) if version <= 38 else (segs[3], segs[2])
    wave_at, wave_size = segs[4]
    bo, bsize = bank_seg
    if bsize < 0x58:
        raise FormatError(path, seg_at, "a BANKDATA segment of at least 0x58 bytes", bsize)
    flags = r.u32(bo, "bank flags")
    count = r.u32(bo + 4, "entry count")
    bank_name = r.bytes(bo + 8, 64, "bank name").split(b"\0", 1)[0].decode("latin-1")
    entry_size = r.u32(bo + 0x48, "entry metadata size")
    name_size = r.u32(bo + 0x4C, "entry name size")
    alignment = r.u32(bo + 0x50, "alignment")
    compact_format = r.u32(bo + 0x54, "compact format")
    compact = bool(flags & FLAG_COMPACT)
    if compact and entry_size != 4 or not compact and not _ENTRY_SIZE <= entry_size <= 256:
        raise FormatError(path, bo + 0x48, "entry size 4 (compact) or 24..256", entry_size)
    if count > _MAX_ENTRIES or count * entry_size > meta_seg[1]:
        raise FormatError(
            path, bo + 4, f"an entry count fitting the {meta_seg[1]}-byte metadata segment", count
        )
    if compact and not 1 <= alignment <= 0x800:
        raise FormatError(path, bo + 0x50, "a compact-bank alignment of 1..2048 bytes", alignment)
    names = _read_names(r, names_seg, name_size, count)
    seeks = _read_seek_tables(r, extra_seg, count) if version >= 39 else [()] * count
    layout = _Layout(
        meta_seg[0],
        entry_size,
        count,
        compact,
        compact_format,
        alignment,
        wave_at,
        wave_size,
        version,
        xma1_max_version,
    )
    entries = [_read_entry(r, layout, i, names[i], seeks[i], path) for i in range(count)]
    return WaveBank(
        path, big, version, header_version, flags, bank_name, alignment, tuple(entries), data, base_offset
    )


def _read_names(r: Reader, seg: tuple[int, int], name_size: int, count: int) -> list[str | None]:
    at, size = seg
    if not size or not count:
        return [None] * count
    if not 1 <= name_size <= 256 or name_size * count > size:
        raise FormatError(r.path, at, f"{count} entry names fitting {size} bytes", name_size)
    return [
        r.bytes(at + i * name_size, name_size, "entry name").split(b"\0", 1)[0].decode("latin-1")
        for i in range(count)
    ]


def _read_seek_tables(r: Reader, seg: tuple[int, int], count: int) -> list[tuple[int, ...]]:
    """XMA seek tables: ``count`` u32 offsets (0xFFFFFFFF = none), then per entry u32 n + n u32
    cumulative sample counts at the end of each 64 KiB XMA block."""
    at, size = seg
    if not size or not count:
        return [()] * count
    if size < 4 * count:
        raise FormatError(r.path, at, f"a seek-table index of {count} offsets", f"{size} bytes")
    base, end = at + 4 * count, at + size
    tables: list[tuple[int, ...]] = []
    for i in range(count):
        rel = r.u32(at + 4 * i, "seek table offset")
        if rel == 0xFFFFFFFF:
            tables.append(())
            continue
        pos = base + rel
        if pos + 4 > end:
            raise FormatError(r.path, at + 4 * i, "a seek table inside the seek segment", rel)
        n = r.u32(pos, "seek table count")
        if pos + 4 + 4 * n > end:
            raise FormatError(r.path, pos, "seek entries inside the seek segment", n)
        tables.append(struct.unpack_from((">" if r.big else "<") + f"{n}I", r.data, pos + 4))
    return tables


def entry_data(bank: WaveBank, index: int) -> bytes:
    """The raw stored bytes of entry ``index``.

    Parameters
    ----------
    bank:
        The parsed bank.
    index:
        Entry index.
    """
    e = _entry(bank, index)
    return bank.data[e.data_offset : e.data_offset + e.data_size]


def _entry(bank: WaveBank, index: int) -> WaveEntry:
    if not 0 <= index < len(bank.entries):
        raise IndexError(f"{bank.path}: no entry {index} (bank has {len(bank.entries)})")
    return bank.entries[index]


@share_parameters(entry_data)
def decode_entry(bank: WaveBank, index: int) -> tuple[np.ndarray, int]:
    """Decode entry ``index`` to float32 ``(samples, channels)`` in -1..1 and its sample rate in Hz.

    PCM and MS-ADPCM decode exactly; XMA goes through FFmpeg (its length is checked
    against the header within :data:`XMA_LENGTH_SLACK`); xWMA raises UnsupportedError.
    """
    e = _entry(bank, index)
    raw = entry_data(bank, index)
    where = f"{bank.path} entry {index}"
    if e.codec == CODEC_PCM:
        if e.bits_flag:
            usable = len(raw) // (2 * e.channels) * 2 * e.channels
            pcm = np.frombuffer(raw[:usable], ">i2" if bank.big_endian else "<i2")
            out = pcm16_to_float32(pcm)
        else:
            usable = len(raw) // e.channels * e.channels
            out = (np.frombuffer(raw[:usable], np.uint8).astype(np.float32) - 128.0) / 128.0
        return out.reshape(-1, e.channels), e.sample_rate
    if e.codec in (CODEC_XMA1, CODEC_XMA2):
        version = 1 if e.codec == CODEC_XMA1 else 2
        extradata = None
        if version == 2:
            extradata = xma2_extradata(
                e.channels, samples_encoded=e.num_samples, block_count=-(-e.data_size // XMA2_BLOCK_SIZE)
            )
        bounds = None
        if e.num_samples:
            bounds = (max(1, e.num_samples - XMA_LENGTH_SLACK), e.num_samples + XMA_LENGTH_SLACK)
        out = decode_xma(
            split_packets(raw, e.data_offset, path=where),
            e.sample_rate,
            e.channels,
            version=version,
            extradata=extradata,
            path=bank.path,
            base_offset=e.data_offset,
            samples_range=bounds,
        )
        return out, e.sample_rate
    if e.codec == CODEC_MSADPCM:
        block = (e.block_align + 22) * e.channels
        wav = riff.build_wav(riff.msadpcm_fmt(e.channels, e.sample_rate, block), raw)
        return riff.decode_with_ffmpeg(wav, path=where), e.sample_rate
    raise UnsupportedError(
        bank.path, e.data_offset, "a decodable codec (PCM, XMA, MS-ADPCM)", f"{e.codec} (tag {e.tag})"
    )


@dataclass(frozen=True)
class NewWave:
    """One wave to write with :func:`write_wavebank`.

    ``data`` is stored verbatim: 16-bit PCM in the bank's byte order, whole 2048-byte
    XMA packets, or MS-ADPCM blocks. ``num_samples`` is the duration written to the entry;
    ``bits_flag`` is MINIWAVEFORMAT bit 31 (1 = 16-bit PCM; XACT also sets it for XMA).
    """

    codec: str
    channels: int
    sample_rate: int
    data: bytes
    num_samples: int
    loop_start: int = 0
    loop_length: int = 0
    name: str | None = None
    seek_table: tuple[int, ...] = ()
    block_align: int | None = None
    flags: int = 0
    bits_flag: int = 1

    @classmethod
    @share_parameters(entry_data)
    def of_entry(cls, bank: WaveBank, index: int) -> NewWave:
        """Entry ``index`` of ``bank`` as it is stored (data, duration, loop, name, seek table,
        block align and flags), to write again."""
        e = _entry(bank, index)
        return cls(
            e.codec,
            e.channels,
            e.sample_rate,
            entry_data(bank, index),
            e.num_samples,
            e.loop_start,
            e.loop_length,
            e.name,
            e.seek_table,
            e.block_align,
            e.flags,
            e.bits_flag,
        )

    @classmethod
    def pcm16(
        cls, samples: np.ndarray, sample_rate: int, *, big_endian: bool = True, name: str | None = None
    ) -> NewWave:
        """A PCM16 wave from int16 ``(samples, channels)`` (or 1-D mono) samples.

        Parameters
        ----------
        samples:
            int16 ``(samples, channels)`` or 1-D mono.
        sample_rate:
            Sample rate, Hz.
        big_endian:
            Store the samples big-endian (Xbox 360 banks).
        name:
            Entry name (``None``: none).
        """
        arr = np.asarray(samples, np.int16)
        arr = arr if arr.ndim == 2 else arr.reshape(-1, 1)
        return cls(
            CODEC_PCM,
            arr.shape[1],
            sample_rate,
            arr.astype(">i2" if big_endian else "<i2").tobytes(),
            arr.shape[0],
            name=name,
        )


@share_parameters(riff.xma2_wav, "packets", "channels", "sample_rate", "seek_table")
def xma2_wave(
    packets: Sequence[bytes],
    channels: int,
    sample_rate: int,
    seek_table: tuple[int, ...],
    *,
    name: str | None = None,
) -> NewWave:
    """A :class:`NewWave` holding one XMA2 stream (1 or 2 channels) as Microsoft's banks do:
    whole 2048-byte packets, duration = raw samples (512 x XMA frames = the seek table's last
    entry), one seek entry per 64 KiB block.

    Parameters
    ----------
    name:
        Entry name (``None``: none).
    """
    return NewWave(
        CODEC_XMA2,
        channels,
        sample_rate,
        b"".join(packets),
        riff.xma2_raw_samples(channels, seek_table),
        name=name,
        seek_table=tuple(seek_table),
    )


def _tag_of(codec: str) -> int:
    return {CODEC_PCM: 0, CODEC_XMA1: 1, CODEC_XMA2: 1, CODEC_MSADPCM: 2, CODEC_XWMA: 3}[codec]


def _entry_records(
    waves: Sequence[NewWave], fmts: list[int], offsets: list[int], e: str, compact: bool, alignment: int
) -> bytes:
    """The metadata segment: 4-byte compact entries or 24-byte full ones."""
    if compact:
        return b"".join(
            struct.pack(
                e + "I", (o // alignment) | ((align(len(w.data), alignment) - len(w.data)) % alignment) << 21
            )
            for w, o in zip(waves, offsets)
        )
    return b"".join(
        struct.pack(
            e + "6I",
            (w.num_samples << 4 | w.flags & 0xF) & 0xFFFFFFFF,
            f,
            o,
            len(w.data),
            w.loop_start,
            w.loop_length,
        )
        for w, f, o in zip(waves, fmts, offsets)
    )


def _seek_tables(waves: Sequence[NewWave], e: str) -> bytes:
    """The XMA seek-table segment: an offset per wave (0xFFFFFFFF for none), then the tables."""
    idx, body = [], b""
    for w in waves:
        if w.seek_table:
            idx.append(len(body))
            body += struct.pack(e + f"{len(w.seek_table) + 1}I", len(w.seek_table), *w.seek_table)
        else:
            idx.append(0xFFFFFFFF)
    return struct.pack(e + f"{len(waves)}I", *idx) + body


def write_wavebank(
    waves: Sequence[NewWave],
    *,
    big_endian: bool = True,
    version: int = 46,
    name: str = "Wave Bank",
    alignment: int = 0x800,
    compact: bool = False,
    header_version: int = 44,
) -> bytes:
    """Build a wave bank holding ``waves`` (each aligned to ``alignment`` in the wave segment).

    Writes entry names when any wave has one and XMA seek tables (version >= 39) when any
    wave has one. ``compact`` writes 4-byte entries (all waves must share one format and
    ``alignment`` must be at most 2048).

    Parameters
    ----------
    waves:
        The entries.
    big_endian:
        Write a big-endian (Xbox 360) bank.
    version:
        Bank tool version.
    name:
        Bank name (64 bytes at most).
    alignment:
        Alignment of each wave in the wave segment, bytes.
    compact:
        Write 4-byte compact entries.
    header_version:
        Header version.
    """
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ValueError(f"version must be {MIN_VERSION}..{MAX_VERSION}, got {version}")
    if alignment < 1 or compact and alignment > 0x800:
        raise ValueError(f"bad alignment {alignment}")
    e = ">" if big_endian else "<"
    fmts = []
    for w in waves:
        ba = w.block_align if w.block_align is not None else (2 * w.channels if w.codec == CODEC_PCM else 0)
        fmts.append(
            pack_miniwaveformat(_tag_of(w.codec), w.channels, w.sample_rate, ba & 0xFF, w.bits_flag, version)
        )
    if compact and len(set(fmts)) > 1:
        raise ValueError("a compact bank needs one shared format")
    offsets, cursor = [], 0
    for w in waves:
        offsets.append(cursor)
        cursor = align(cursor + len(w.data), alignment)
    wave_blob = bytearray(cursor)
    for w, o in zip(waves, offsets):
        wave_blob[o : o + len(w.data)] = w.data
    meta = _entry_records(waves, fmts, offsets, e, compact, alignment)
    names = b""
    if any(w.name for w in waves):
        names = b"".join(
            (w.name or "").encode("latin-1")[: _NAME_SIZE - 1].ljust(_NAME_SIZE, b"\0") for w in waves
        )
    extra = _seek_tables(waves, e) if version >= 39 and any(w.seek_table for w in waves) else b""
    bank_flags = (FLAG_COMPACT if compact else 0) | (FLAG_SEEKTABLES if extra else 0)
    bank = struct.pack(e + "II", bank_flags, len(waves))
    bank += name.encode("latin-1")[:63].ljust(64, b"\0")
    bank += struct.pack(
        e + "IIII", 4 if compact else _ENTRY_SIZE, _NAME_SIZE, alignment, fmts[0] if compact and fmts else 0
    )
    bank += b"\0" * (_BANKDATA_SIZE - len(bank))
    head_len = (0x0C if version >= 42 else 0x08) + 5 * 8
    pos = head_len
    blobs = {}
    for key, blob in (("bank", bank), ("meta", meta), ("extra", extra), ("names", names)):
        blobs[key] = (pos if blob else 0, len(blob))
        pos = align(pos + len(blob), 4)
    wave_at = align(pos, alignment)
    order = ["bank", "meta", "names", "extra"] if version <= 38 else ["bank", "meta", "extra", "names"]
    head = (b"DNBW" if big_endian else b"WBND") + struct.pack(e + "I", version)
    if version >= 42:
        head += struct.pack(e + "I", header_version)
    for key in order:
        head += struct.pack(e + "II", *blobs[key])
    head += struct.pack(e + "II", wave_at, len(wave_blob))
    out = bytearray(wave_at + len(wave_blob))
    out[: len(head)] = head
    for key, blob in (("bank", bank), ("meta", meta), ("extra", extra), ("names", names)):
        if blob:
            out[blobs[key][0] : blobs[key][0] + len(blob)] = blob
    out[wave_at:] = wave_blob
    return bytes(out)
