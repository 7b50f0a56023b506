"""Starlancer ``.ut`` speech files: the CB00/CB97 container around a Digital Anvil LPC stream.

Layout (spec 7, little-endian): u32 length of the file past this field (file size - 4); tag ``CB00``
(radio line) or ``CB97`` (scene / ``.box`` briefing), the game plays either; u32 size of the decoded
speech in bytes (2 x samples); the codec stream to the end of the file.

Scrambling: the stream is XORed with the repeating key ``AB 2D 9A AA`` (key index = byte offset from
the stream start mod 4) over every byte except the last 8, which are plain. A file whose first bytes
are ``man`` (the game's mark after unscrambling in place) or ``CB`` is taken as already plain.

Settings (spec 10):

``game_faithful_tail`` (default off)
    The game unscrambles only ``length - 0x18`` bytes (stream length - 16), so it decodes the last 8
    scrambled bytes as noise; off = unscramble all but the last 8 (OpenReliant's fix).
``wrap17`` (default off)
    The game reads 17 bits of each rounded sample, so peaks past +-65536 wrap; off = hold.
``max_overrun_lpc_frames`` (default 8)
    Ours: shipped streams run out a few bytes before their samples do and bits past the end read as
    zero, but a declared size needing more than ``stream bits / 200 + max_overrun_lpc_frames`` LPC frames
    (200 bits is the smallest LPC frame) is rejected as implausible, so a hostile size field cannot make
    the decoder run for minutes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from audio.codecs import da_lpc
from audio.core.errors import FormatError
from audio.core.plugin import GameCodec

__all__ = [
    "KEY",
    "MAX_OVERRUN_LPC_FRAMES",
    "PLAIN_TAIL",
    "TAGS",
    "UT_CODEC",
    "UtFile",
    "decode_ut",
    "decode_ut_int16",
    "encode_ut",
    "read_ut",
    "scramble",
    "write_ut",
]

TAGS = ("CB00", "CB97")
KEY = bytes.fromhex("AB2D9AAA")
PLAIN_TAIL = 8
"""Stream bytes left plain at the end of every shipped file."""
HEADER_SIZE = 12
MAX_OVERRUN_LPC_FRAMES = 8


@dataclass(frozen=True)
class UtFile:
    """A parsed ``.ut`` file: ``length`` field as stored (file size - 4 in a well-formed file), ``tag``,
    ``size`` (decoded bytes = 2 x samples), ``scrambled`` (as found), ``payload`` (plain codec stream)."""

    tag: str
    length: int
    size: int
    scrambled: bool
    payload: bytes
    path: str = "<buffer>"

    @property
    def num_samples(self) -> int:
        """Samples the line plays (size / 2), at 22,050 Hz."""
        return self.size // 2

    @property
    def num_lpc_frames(self) -> int:
        """LPC frames to decode: ceil(samples / 432)."""
        return da_lpc.lpc_frames_for(self.num_samples)


def scramble(stream: bytes, count: int | None = None) -> bytes:
    """XOR the first ``count`` bytes of ``stream`` (default: all but the last 8) with the key; the same
    call unscrambles."""
    n = max(0, len(stream) - PLAIN_TAIL) if count is None else max(0, min(count, len(stream)))
    buf = np.frombuffer(bytes(stream), np.uint8).copy()
    key = np.resize(np.frombuffer(KEY, np.uint8), n)
    buf[:n] ^= key
    return buf.tobytes()


def _is_plain(data: bytes) -> bool:
    """The game's test: a file beginning ``man`` or ``CB`` is not unscrambled."""
    return data[:3] == b"man" or data[:2] == b"CB"


def read_ut(data: bytes, path: str = "<buffer>", *, game_faithful_tail: bool = False) -> UtFile:
    """Parse a ``.ut`` file and unscramble its codec stream. FormatError on a short file. Any tag is
    read (the game plays a file whatever bytes 4..7 hold; ``CB00``/``CB97`` are what shipped files
    carry, spec 11.16)."""
    data = bytes(data)
    if len(data) < HEADER_SIZE:
        raise FormatError(path, 0, f"a {HEADER_SIZE}-byte .ut header", f"{len(data)} bytes")
    length, raw_tag, size = struct.unpack_from("<I4sI", data, 0)
    tag = raw_tag.decode("latin-1")
    stream = data[HEADER_SIZE:]
    scrambled = not _is_plain(data)
    if scrambled:
        count = length - 0x18 if game_faithful_tail else None
        stream = scramble(stream, count)
    return UtFile(tag, length, size, scrambled, stream, str(path))


def write_ut(payload: bytes, tag: str = "CB00", *, num_samples: int, scramble_stream: bool = True) -> bytes:
    """A ``.ut`` file around the plain codec stream ``payload`` decoding to ``num_samples`` samples.

    Scrambles all but the last 8 stream bytes. If the length field would begin with ``CB`` or ``man``
    (which the game would take as "already plain"), one zero byte is appended to the stream first."""
    if len(tag.encode("latin-1", "replace")) != 4:
        raise ValueError(f"a tag is 4 bytes (shipped files: {TAGS}), not {tag!r}")
    if not 0 <= num_samples <= 0x7FFFFFFF:
        raise ValueError(f"num_samples out of range: {num_samples}")
    payload = bytes(payload)
    while True:
        length = len(payload) + HEADER_SIZE - 4
        head = struct.pack("<I", length)
        if not (scramble_stream and _is_plain(head)):
            break
        payload += b"\0"
    body = scramble(payload) if scramble_stream else payload
    return head + tag.encode("latin-1") + struct.pack("<I", 2 * num_samples) + body


def _check_plausible(ut: UtFile, max_overrun_lpc_frames: int) -> None:
    """FormatError if the declared size needs far more LPC frames than the stream can hold."""
    limit = len(ut.payload) * 8 // da_lpc.MIN_LPC_FRAME_BITS + max_overrun_lpc_frames
    if ut.num_lpc_frames > limit:
        raise FormatError(
            ut.path,
            8,
            f"a speech size of at most {limit * da_lpc.LPC_FRAME_SAMPLES * 2} bytes "
            f"for a {len(ut.payload)}-byte stream",
            ut.size,
        )


def decode_ut_int16(
    data: bytes,
    path: str = "<buffer>",
    *,
    game_faithful_tail: bool = False,
    wrap17: bool = False,
    max_overrun_lpc_frames: int = MAX_OVERRUN_LPC_FRAMES,
) -> np.ndarray:
    """Decode a ``.ut`` file to int16 mono samples at 22,050 Hz."""
    ut = read_ut(data, path, game_faithful_tail=game_faithful_tail)
    _check_plausible(ut, max_overrun_lpc_frames)
    return da_lpc.decode(ut.payload, ut.num_samples, wrap17=wrap17)


def decode_ut(
    data: bytes,
    path: str = "<buffer>",
    *,
    game_faithful_tail: bool = False,
    wrap17: bool = False,
    max_overrun_lpc_frames: int = MAX_OVERRUN_LPC_FRAMES,
) -> np.ndarray:
    """Decode a ``.ut`` file to float32 mono at 22,050 Hz in [-1, 1) (int16 / 32768)."""
    pcm = decode_ut_int16(
        data,
        path,
        game_faithful_tail=game_faithful_tail,
        wrap17=wrap17,
        max_overrun_lpc_frames=max_overrun_lpc_frames,
    )
    return pcm.astype(np.float32) / np.float32(32768.0)


def _to_line_pcm(pcm: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono int16-scale float64 samples at 22,050 Hz from float ([-1, 1)) or integer (int16) input."""
    x = np.asarray(pcm)
    if x.ndim == 2:
        x = x.mean(axis=1) if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64).mean(axis=1)
    if x.ndim != 1:
        raise ValueError(f"pcm must be 1-D (mono) or 2-D (samples, channels), not {x.ndim}-D")
    x = x.astype(np.float64) * (32768.0 if np.issubdtype(np.asarray(pcm).dtype, np.floating) else 1.0)
    if sample_rate != da_lpc.SAMPLE_RATE:
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be > 0, not {sample_rate}")
        from scipy.signal import resample_poly

        g = int(np.gcd(da_lpc.SAMPLE_RATE, int(sample_rate)))
        x = resample_poly(x, da_lpc.SAMPLE_RATE // g, int(sample_rate) // g)
    return np.clip(np.rint(x), -32768, 32767)


def encode_ut(
    pcm: np.ndarray,
    sample_rate: int = da_lpc.SAMPLE_RATE,
    tag: str = "CB00",
    header: da_lpc.StreamHeader = da_lpc.SHIPPED_HEADER,
    *,
    lowpass_hz: float | None = None,
) -> bytes:
    """A ``.ut`` file from mono speech: float in [-1, 1) or int16, at ``sample_rate`` Hz (resampled to
    22,050 Hz first), encoded by analysis by synthesis with the shipped header (``F1 38``).

    ``lowpass_hz`` (ours, not the spec's encoder; default off): a zero-phase 8th-order Butterworth
    low-pass before encoding. The stepped excitation codes content above ~5.5 kHz poorly and it drags
    the whole LPC frame's fit down: on espeak-ng lines 6000 Hz raises the waveform SNR against the
    unfiltered input by 1-3 dB."""
    x = _to_line_pcm(pcm, sample_rate)
    if lowpass_hz is not None and x.size > 60:
        from scipy.signal import butter, sosfiltfilt

        sos = butter(8, float(lowpass_hz), fs=da_lpc.SAMPLE_RATE, output="sos")
        x = np.clip(np.rint(sosfiltfilt(sos, x)), -32768, 32767)
    return write_ut(da_lpc.encode(x, header), tag, num_samples=x.size)


def _encode_file(pcm: np.ndarray, sample_rate: int) -> bytes:
    return encode_ut(pcm[:, 0] if pcm.ndim == 2 else pcm, sample_rate)


def _decode_file(data: bytes) -> tuple[np.ndarray, int]:
    return decode_ut(data).reshape(-1, 1), da_lpc.SAMPLE_RATE


UT_CODEC = GameCodec("ut", (".ut",), 1, _encode_file, _decode_file)
"""``barkbus encode``'s ``ut`` codec: mono speech in, a CB00 file at 22,050 Hz out (the game's
record lists it, so the encode command never names Starlancer)."""
