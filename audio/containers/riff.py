"""RIFF/WAVE (and big-endian RIFX) reader and writer for PCM, MS-ADPCM and XMA fmt chunks.

Format tags understood: 0x0001 PCM (8/16-bit), 0x0002 MS-ADPCM, 0x0165 XMA1
(XMAWAVEFORMAT), 0x0166 XMA2 (WAVEFORMATEX + 34-byte XMA2 extension). FFmpeg's wav
demuxer only parses little-endian fmt chunks, so XMA is decoded here through
:func:`~audio.codecs.xma.decode_xma` with extradata taken from the fmt chunk.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field

import numpy as np

from audio.codecs.blocks import pcm16_to_float32
from audio.codecs.xma import XMA2_BLOCK_SIZE, decode_xma, split_packets, xma2_extradata
from audio.core.binary import Reader
from audio.core.docs import share_parameters
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "TAG_PCM",
    "TAG_MSADPCM",
    "TAG_XMA1",
    "TAG_XMA2",
    "MSADPCM_COEFS",
    "RiffWave",
    "read_riff",
    "decode_riff",
    "build_wav",
    "pcm_fmt",
    "msadpcm_fmt",
    "xma2_fmt",
    "decode_with_ffmpeg",
    "xma2_wav",
    "xma2_raw_samples",
]

TAG_PCM, TAG_MSADPCM, TAG_XMA1, TAG_XMA2 = 0x0001, 0x0002, 0x0165, 0x0166
MSADPCM_COEFS = ((256, 0), (512, -256), (0, 0), (192, 64), (240, 0), (460, -208), (392, -232))
"""The seven standard MS-ADPCM predictor pairs."""
_MAX_CHUNKS = 4096


@dataclass(frozen=True)
class RiffWave:
    """A parsed RIFF/RIFX WAVE: the fmt fields, the raw fmt body and where the data lies.

    ``data_offset`` is absolute in the buffer passed to :func:`read_riff`. For XMA1,
    ``channels`` and ``sample_rate`` are summed/taken from the stream records.
    """

    path: str
    big_endian: bool
    format_tag: int
    channels: int
    sample_rate: int
    block_align: int
    bits_per_sample: int
    fmt: bytes = field(repr=False)
    data_offset: int
    data_size: int
    chunks: dict[str, tuple[int, int]] = field(default_factory=dict)
    xma_streams: tuple[int, ...] = ()

    @property
    def extension(self) -> bytes:
        """The fmt bytes after the 18-byte WAVEFORMATEX (cbSize bytes), b'' if none."""
        if len(self.fmt) < 18:
            return b""
        size = struct.unpack_from(">H" if self.big_endian else "<H", self.fmt, 16)[0]
        return self.fmt[18 : 18 + size]


def read_riff(data: bytes | memoryview, path: str = "<buffer>", base_offset: int = 0) -> RiffWave:
    """Parse a RIFF (little-endian) or RIFX (big-endian) WAVE at ``base_offset`` of ``data``.

    Parameters
    ----------
    data:
        A RIFF/WAVE file.
    path:
        Source name for error messages (file, or archive+member).
    base_offset:
        Byte offset of ``data`` in its file, so errors name the real offset.
    """
    data = bytes(data)
    magic = Reader(data, path).bytes(base_offset, 4, "RIFF magic")
    if magic not in (b"RIFF", b"RIFX"):
        raise FormatError(path, base_offset, "'RIFF' or 'RIFX'", magic)
    r = Reader(data, path, magic == b"RIFX")
    riff_size = r.u32(base_offset + 4, "RIFF size")
    r.magic(base_offset + 8, b"WAVE", "'WAVE' form type")
    end = min(len(data), base_offset + 8 + riff_size)
    pos = base_offset + 12
    chunks: dict[str, tuple[int, int]] = {}
    while pos + 8 <= end and len(chunks) < _MAX_CHUNKS:
        cid = r.bytes(pos, 4, "chunk id").decode("latin-1")
        size = r.u32(pos + 4, "chunk size")
        chunks.setdefault(cid, (pos + 8, size))
        pos += 8 + size + (size & 1)
    if "fmt " not in chunks:
        raise FormatError(path, base_offset + 12, "a 'fmt ' chunk")
    if "data" not in chunks:
        raise FormatError(path, base_offset + 12, "a 'data' chunk")
    fo, fsize = chunks["fmt "]
    fmt = r.bytes(fo, fsize, "fmt chunk")
    data_at, data_size = chunks["data"]
    data_size = min(data_size, len(data) - data_at)
    tag = r.u16(fo, "format tag")
    streams: tuple[int, ...] = ()
    if tag == TAG_XMA1:
        n = r.u16(fo + 8, "XMA1 stream count")
        if not 1 <= n <= 8 or fsize < 12 + 20 * n:
            raise FormatError(path, fo + 8, "1..8 XMA1 streams inside the fmt chunk", n)
        streams = tuple(r.u8(fo + 12 + 20 * i + 17, "XMA1 stream channels") for i in range(n))
        channels, sample_rate = sum(streams), r.u32(fo + 16, "XMA1 sample rate")
        block_align, bits = 2048, 16
    else:
        if fsize < 16:
            raise FormatError(path, fo, "a fmt chunk of at least 16 bytes", fsize)
        channels, sample_rate = r.u16(fo + 2, "channels"), r.u32(fo + 4, "sample rate")
        block_align, bits = r.u16(fo + 12, "block align"), r.u16(fo + 14, "bits per sample")
    if not 1 <= channels <= 16 or not 1 <= sample_rate <= 384_000:
        raise FormatError(path, fo, "1..16 channels and a 1..384000 Hz sample rate", (channels, sample_rate))
    return RiffWave(
        path,
        magic == b"RIFX",
        tag,
        channels,
        sample_rate,
        block_align,
        bits,
        fmt,
        data_at,
        data_size,
        chunks,
        streams,
    )


def decode_riff(wave: RiffWave, data: bytes | memoryview) -> tuple[np.ndarray, int]:
    """Decode ``wave`` (read from ``data``) to float32 ``(samples, channels)`` and its sample rate in Hz.

    Parameters
    ----------
    wave:
        The parsed file (:func:`read_riff`).
    data:
        The bytes it was read from.
    """
    body = bytes(data[wave.data_offset : wave.data_offset + wave.data_size])
    if wave.format_tag == TAG_PCM:
        if wave.bits_per_sample == 16:
            usable = len(body) // (2 * wave.channels) * 2 * wave.channels
            pcm = pcm16_to_float32(np.frombuffer(body[:usable], ">i2" if wave.big_endian else "<i2"))
        elif wave.bits_per_sample == 8:
            usable = len(body) // wave.channels * wave.channels
            pcm = (np.frombuffer(body[:usable], np.uint8).astype(np.float32) - 128) / 128
        else:
            raise UnsupportedError(wave.path, wave.data_offset, "8- or 16-bit PCM", wave.bits_per_sample)
        return pcm.reshape(-1, wave.channels), wave.sample_rate
    if wave.format_tag == TAG_XMA2:
        ext = wave.extension
        if len(ext) < 34:
            raise FormatError(wave.path, wave.data_offset, "a 34-byte XMA2 fmt extension", len(ext))
        if wave.big_endian:
            ext = struct.pack("<HIIIIIIIBBH", *struct.unpack(">HIIIIIIIBBH", ext[:34]))
        out = decode_xma(
            split_packets(body, wave.data_offset, path=wave.path),
            wave.sample_rate,
            wave.channels,
            extradata=ext[:34],
            path=wave.path,
            base_offset=wave.data_offset,
        )
        return out, wave.sample_rate
    if wave.format_tag == TAG_XMA1:
        if wave.big_endian:
            raise UnsupportedError(wave.path, wave.data_offset, "a little-endian XMA1 fmt chunk", "RIFX")
        out = decode_xma(
            split_packets(body, wave.data_offset, path=wave.path),
            wave.sample_rate,
            wave.channels,
            version=1,
            extradata=wave.fmt[4 : 4 + 8 + 20 * len(wave.xma_streams)],
            path=wave.path,
            base_offset=wave.data_offset,
        )
        return out, wave.sample_rate
    if wave.format_tag == TAG_MSADPCM and not wave.big_endian:
        return decode_with_ffmpeg(build_wav(wave.fmt, body), path=wave.path), wave.sample_rate
    raise UnsupportedError(
        wave.path, wave.data_offset, "PCM, MS-ADPCM, XMA1 or XMA2", f"format tag {wave.format_tag:#06x}"
    )


def build_wav(fmt: bytes, data: bytes, extra_chunks: dict[str, bytes] | None = None) -> bytes:
    """A little-endian RIFF/WAVE from a fmt body and data (plus optional chunks, word-padded).

    Parameters
    ----------
    fmt:
        The ``fmt `` chunk's body.
    data:
        The ``data`` chunk's body.
    extra_chunks:
        More chunks (id -> body), written between them.
    """
    parts = [b"WAVE", b"fmt ", struct.pack("<I", len(fmt)), fmt, b"\0" * (len(fmt) & 1)]
    for cid, body in (extra_chunks or {}).items():
        pad = b"\0" * (len(body) & 1)
        parts += [cid.encode("latin-1")[:4].ljust(4), struct.pack("<I", len(body)), body, pad]
    parts += [b"data", struct.pack("<I", len(data)), data, b"\0" * (len(data) & 1)]
    body = b"".join(parts)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pcm_fmt(channels: int, sample_rate: int, bits: int = 16) -> bytes:
    """A 16-byte PCM WAVEFORMAT body.

    Parameters
    ----------
    channels:
        Channel count.
    sample_rate:
        Sample rate, Hz.
    bits:
        Bits per sample.
    """
    ba = channels * bits // 8
    return struct.pack("<HHIIHH", TAG_PCM, channels, sample_rate, sample_rate * ba, ba, bits)


@share_parameters(pcm_fmt, "channels", "sample_rate")
def msadpcm_fmt(channels: int, sample_rate: int, block_align: int) -> bytes:
    """An MS-ADPCM WAVEFORMATEX (tag 2) with the standard seven coefficient pairs.

    Parameters
    ----------
    block_align:
        Bytes per MS-ADPCM block.
    """
    spb = (block_align - 7 * channels) * 2 // channels + 2
    coefs = b"".join(struct.pack("<hh", *c) for c in MSADPCM_COEFS)
    ext = struct.pack("<HH", spb, len(MSADPCM_COEFS)) + coefs
    return (
        struct.pack(
            "<HHIIHHH",
            TAG_MSADPCM,
            channels,
            sample_rate,
            sample_rate * block_align // spb,
            block_align,
            4,
            len(ext),
        )
        + ext
    )


@share_parameters(pcm_fmt, "channels", "sample_rate")
def xma2_fmt(channels: int, sample_rate: int, extension: bytes) -> bytes:
    """An XMA2 WAVEFORMATEX (tag 0x0166) carrying the 34-byte ``extension``.

    Parameters
    ----------
    extension:
        The XMA2WAVEFORMATEX extension (:func:`audio.codecs.xma.xma2_extradata`).
    """
    return (
        struct.pack(
            "<HHIIHHH", TAG_XMA2, channels, sample_rate, sample_rate * 2 * channels, 2048, 16, len(extension)
        )
        + extension
    )


def decode_with_ffmpeg(wav: bytes, path: str = "<buffer>") -> np.ndarray:
    """Decode a RIFF/WAVE buffer with FFmpeg's wav demuxer to float32 ``(samples, channels)``.

    Parameters
    ----------
    wav:
        A RIFF/WAVE file.
    path:
        Source name for error messages (file, or archive+member).
    """
    import av.error  # PyAV loads on first use

    chunks = []
    try:
        with av.open(io.BytesIO(wav), "r", format="wav") as container:
            stream = container.streams.audio[0]
            channels = stream.codec_context.channels
            for av_frame in container.decode(stream):
                arr = av_frame.to_ndarray()
                arr = arr.T if av_frame.format.is_planar else arr.reshape(-1, channels)
                if arr.dtype == np.int16:
                    arr = pcm16_to_float32(arr)
                chunks.append(arr.astype(np.float32, copy=False))
    except (av.error.FFmpegError, IndexError) as exc:
        raise FormatError(path, None, "audio FFmpeg can decode", str(exc)) from exc
    return np.concatenate(chunks) if chunks else np.zeros((0, 1), np.float32)


def xma2_wav(
    packets: list[bytes], channels: int, sample_rate: int, num_samples: int, seek_table: tuple[int, ...]
) -> bytes:
    """A RIFF WAVE holding one XMA2 stream (1 or 2 channels): fmt 0x0166 with the 34-byte
    XMA2 extension, a big-endian ``seek`` chunk (cumulative samples per 64 KiB block),
    then the packets.

    ``num_samples`` is the audible length (PlayLength); SamplesEncoded is the raw count
    ``seek_table[-1]`` (512 x XMA frames).

    Parameters
    ----------
    packets:
        2048-byte XMA2 packets of one stream.
    channels:
        Channels, 1 or 2.
    sample_rate:
        Sample rate, Hz.
    num_samples:
        Samples to play.
    seek_table:
        Cumulative raw samples at the end of each 64 KiB block.
    """
    samples_encoded = xma2_raw_samples(channels, seek_table)
    data = b"".join(packets)
    ext = xma2_extradata(
        channels,
        samples_encoded=samples_encoded,
        block_count=-(-len(data) // XMA2_BLOCK_SIZE),
        play_length=num_samples,
    )
    seek = struct.pack(f">{len(seek_table)}I", *seek_table)
    return build_wav(xma2_fmt(channels, sample_rate, ext), data, {"seek": seek})


@share_parameters(xma2_wav, "channels", "seek_table")
def xma2_raw_samples(channels: int, seek_table: tuple[int, ...]) -> int:
    """The raw sample count of one XMA2 stream (SamplesEncoded, 512 x XMA frames: the seek
    table's last entry, 0 without one), for the RIFF and XWB writers; ValueError unless the
    stream holds 1 or 2 channels."""
    if channels not in (1, 2):
        raise ValueError(f"one XMA2 stream holds 1 or 2 channels, got {channels}")
    return seek_table[-1] if seek_table else 0
