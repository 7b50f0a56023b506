"""Sony ``.vag`` voice clips (``VAGp``): one mono channel of PS-ADPCM behind a 48-byte header.

Header, all big-endian: ``+0x00`` magic ``VAGp``; ``+0x04`` version (0x20 written by the
common PC tool, the value we write); ``+0x08`` reserved; ``+0x0C`` data size in bytes
(the ADPCM frames after the header); ``+0x10`` sample rate in Hz; ``+0x14..0x1F`` reserved;
``+0x20`` name, 16 bytes, NUL-padded. ADPCM frames start at ``+0x30``; by convention the first
one is all zeros (it primes the SPU) and is decoded like any other (28 zero samples), as
vgmstream does. Trailing bytes past the data size are ignored; a data size that is not a
multiple of 16 bytes loses its partial ADPCM frame.

Settings: sample rates outside 1..192000 Hz are rejected (:data:`MAX_SAMPLE_RATE`); the other
``VAG`` variants (``VAGi``, ``VAG1``, ``VAG2``, little-endian ``pGAV``) and the Vita/PS4
HEVAG versions (0x00020001, 0x00030000) are :class:`UnsupportedError`. Decoding takes a
:class:`~audio.codecs.psadpcm.PsxSettings` (defaults: what vgmstream decodes).

The container is Sony's SDK format, shared by many PS1/PS2/PS3 games, so it lives with the
codecs (the fallback decoder and Radiata's voice clips read it without a game importing another).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from audio.codecs.psadpcm import (
    ADPCM_FRAME_BYTES,
    ADPCM_FRAME_SAMPLES,
    VGMSTREAM,
    PsxSettings,
    adpcm_frame_flags,
    decode_psadpcm,
    encode_psadpcm,
    loop_points,
)
from audio.core.binary import Reader
from audio.core.errors import FormatError, UnsupportedError

__all__ = [
    "HEADER_SIZE",
    "MAGIC",
    "MAX_SAMPLE_RATE",
    "VERSION",
    "VagFile",
    "decode_vag",
    "encode_vag",
    "read_vag",
    "write_vag",
]

MAGIC = b"VAGp"
HEADER_SIZE = 0x30
VERSION = 0x20
MAX_SAMPLE_RATE = 192_000
NAME_SIZE = 16
_VARIANTS = {
    b"VAGi": "interleaved stereo VAGi",
    b"VAG1": "VAG1",
    b"VAG2": "VAG2",
    b"pGAV": "little-endian pGAV",
}
_HEVAG = {0x00020001, 0x00030000}


@dataclass(frozen=True)
class VagFile:
    """A parsed ``.vag``: header fields and the PS-ADPCM frames (``data``, ``data_size`` bytes)."""

    path: str
    version: int
    sample_rate: int
    name: str
    data: bytes
    data_size: int
    reserved: bytes = bytes(16)
    """The reserved header bytes ``+0x08..0x0B`` and ``+0x14..0x1F``, kept for a faithful rewrite."""

    @property
    def channels(self) -> int:
        return 1

    @property
    def adpcm_frame_count(self) -> int:
        return len(self.data) // ADPCM_FRAME_BYTES

    @property
    def num_samples(self) -> int:
        """Samples in the data (28 per whole ADPCM frame, lead-in ADPCM frame included)."""
        return self.adpcm_frame_count * ADPCM_FRAME_SAMPLES

    @property
    def duration(self) -> float:
        """Seconds."""
        return self.num_samples / self.sample_rate

    @property
    def flags(self) -> np.ndarray:
        """Each ADPCM frame's flag byte."""
        return adpcm_frame_flags(self.data)

    @property
    def loop(self) -> tuple[int, int] | None:
        """``(start, end)`` in samples from the loop flags (6 ... 3), or ``None``."""
        return loop_points(self.data)

    @property
    def end_adpcm_frame(self) -> int | None:
        """Index of the first ADPCM frame with an end mark (flag bit 0), or ``None``."""
        marks = np.flatnonzero(self.flags & 1)
        return int(marks[0]) if marks.size else None

    def decode(self, settings: PsxSettings = VGMSTREAM) -> np.ndarray:
        """float32 ``(num_samples, 1)`` in [-1, 1).

        Parameters
        ----------
        settings:
            Decoder choices the spec leaves open (:class:`PsxSettings`; default: vgmstream's).
        """
        return decode_psadpcm(self.data, 1, settings=settings, path=self.path)


def _check_magic(r: Reader) -> None:
    magic = r.bytes(0, 4, "VAG magic")
    if magic in _VARIANTS:
        raise UnsupportedError(r.path, 0, "a standard mono VAGp file", _VARIANTS[magic])
    if magic != MAGIC:
        raise FormatError(r.path, 0, "the magic 'VAGp'", magic)


def read_vag(data: bytes | memoryview, path: str = "<buffer>") -> VagFile:
    """Parse a ``.vag`` file; :class:`FormatError` (file + offset) on anything malformed.

    Parameters
    ----------
    data:
        A ``.vag`` file.
    path:
        Source name for error messages (file, or archive+member).
    """
    r = Reader(data, path, big=True)
    r.need(0, HEADER_SIZE, "a VAGp header")
    _check_magic(r)
    version = r.u32(0x04, "version")
    if version in _HEVAG:
        raise UnsupportedError(path, 0x04, "a PS-ADPCM VAG version (not Vita/PS4 HEVAG)", hex(version))
    size = r.u32(0x0C, "data size")
    room = len(r) - HEADER_SIZE
    if size > room:
        raise FormatError(
            path, 0x0C, f"a data size of at most {room} bytes (the bytes after the header)", size
        )
    sample_rate = r.u32(0x10, "sample rate")
    if not 1 <= sample_rate <= MAX_SAMPLE_RATE:
        raise FormatError(path, 0x10, f"a sample rate of 1..{MAX_SAMPLE_RATE} Hz", sample_rate)
    raw_name = r.bytes(0x20, NAME_SIZE, "name")
    name = raw_name.split(b"\0", 1)[0].decode("latin-1")
    reserved = r.bytes(0x08, 4, "reserved") + r.bytes(0x14, 12, "reserved")
    return VagFile(
        path, version, sample_rate, name, r.bytes(HEADER_SIZE, size, "PS-ADPCM data"), size, reserved
    )


def _name_bytes(name: str) -> bytes:
    try:
        raw = name.encode("ascii")
    except UnicodeEncodeError as exc:
        raise ValueError(f"a VAG name is ASCII: {name!r}") from exc
    if len(raw) > NAME_SIZE or b"\0" in raw:
        raise ValueError(f"a VAG name is at most {NAME_SIZE} bytes without NUL: {name!r}")
    return raw.ljust(NAME_SIZE, b"\0")


def write_vag(
    adpcm_frames: bytes,
    sample_rate: int,
    name: str = "",
    *,
    version: int = VERSION,
    reserved: bytes = bytes(16),
) -> bytes:
    """A ``.vag`` file around PS-ADPCM ``adpcm_frames`` (a whole number of 16-byte ADPCM frames).

    Parameters
    ----------
    adpcm_frames:
        PS-ADPCM data (16-byte ADPCM frames).
    sample_rate:
        Sample rate, Hz.
    name:
        Name field (16 bytes at most).
    version:
        Header version.
    reserved:
        The 16 reserved header bytes.
    """
    if len(adpcm_frames) % ADPCM_FRAME_BYTES:
        raise ValueError(f"PS-ADPCM data is whole 16-byte ADPCM frames, not {len(adpcm_frames)} bytes")
    if not 1 <= sample_rate <= MAX_SAMPLE_RATE:
        raise ValueError(f"sample rate must be 1..{MAX_SAMPLE_RATE} Hz, not {sample_rate}")
    if len(reserved) != 16:
        raise ValueError("reserved is the 16 reserved header bytes")
    head = (
        MAGIC + struct.pack(">I", version) + reserved[:4] + struct.pack(">II", len(adpcm_frames), sample_rate)
    )
    return head + reserved[4:] + _name_bytes(name) + bytes(adpcm_frames)


def decode_vag(
    data: bytes | memoryview, path: str = "<buffer>", settings: PsxSettings = VGMSTREAM
) -> tuple[np.ndarray, int]:
    """A ``.vag`` file to float32 ``(samples, 1)`` and its sample rate in Hz.

    Parameters
    ----------
    data:
        A ``.vag`` file.
    path:
        Source name for error messages (file, or archive+member).
    settings:
        Decoder choices the spec leaves open (:class:`PsxSettings`; default: vgmstream's).
    """
    vag = read_vag(data, path)
    return vag.decode(settings), vag.sample_rate


def encode_vag(
    pcm: np.ndarray,
    sample_rate: int,
    name: str = "",
    *,
    lead_in: bool = True,
    loop_start: int | None = None,
    loop_end: int | None = None,
    settings: PsxSettings = VGMSTREAM,
) -> bytes:
    """A mono ``.vag`` from ``pcm`` (float full scale 1.0 or int16, 1-D or ``(n, 1)``).

    ``lead_in`` puts the conventional all-zero ADPCM frame first (28 samples of silence on
    decode). Without a loop the last audio ADPCM frame carries the end flag (1); a loop
    (``loop_start``/``loop_end`` in samples of ``pcm``) is marked 6 ... 3 instead.

    Parameters
    ----------
    pcm:
        Mono float (full scale 1.0) or int16 samples.
    sample_rate:
        Sample rate, Hz.
    name:
        Name field (16 bytes at most).
    lead_in:
        Put the conventional all-zero ADPCM frame (28 silent samples) first.
    loop_start:
        First sample of the loop (``None``: no loop).
    loop_end:
        Sample after the loop's last (``None``: the end).
    settings:
        Rounding and history as the decoder will use them.
    """
    arr = np.asarray(pcm)
    if arr.ndim == 2 and arr.shape[1] != 1:
        raise ValueError(f"a VAGp file is mono; got {arr.shape[1]} channels")
    body = encode_psadpcm(arr.reshape(-1), loop_start=loop_start, loop_end=loop_end, settings=settings)
    return write_vag((bytes(ADPCM_FRAME_BYTES) if lead_in else b"") + body, sample_rate, name)
