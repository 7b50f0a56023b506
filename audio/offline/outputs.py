"""Outputs that are never lost: checked before rendering, streamed, renamed only when complete.

Every file a render writes (audio, stems, decision log, pictures) goes to a temporary name
beside its target (``.STEM.partial-PID.EXT``) and is renamed over the target only when it is
complete, so Ctrl-C, SIGTERM or a kill never leaves a partial file under the final name.
:func:`check_writable` proves every output can be created before any work starts.

Audio is written block by block (:class:`AudioSink`), so memory does not grow with the
duration. The format follows the extension, for what libsndfile writes (WAV, FLAC, OGG,
AIFF, CAF, MP3 where the library has it...); an extension it cannot write is an
:class:`OutputError` before rendering. Samples are quantised once, by us, for every 16-bit
format (``round(x * 32767)`` clipped), so a WAV and a FLAC of one render hold the same
samples. Files with more than two channels are WAVE_FORMAT_EXTENSIBLE with the channel mask
of their layout (0x3F for 5.1).
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numba as nb
import numpy as np
import soundfile as sf

from audio.core.errors import OutputError

__all__ = [
    "AudioSink",
    "AudioStats",
    "atomic_path",
    "audio_format",
    "check_writable",
    "terminate_as_interrupt",
]

_FORMATS = {
    ".wav": ("WAV", "PCM_16"),
    ".flac": ("FLAC", "PCM_16"),
    ".ogg": ("OGG", "VORBIS"),
    ".oga": ("OGG", "VORBIS"),
    ".aiff": ("AIFF", "PCM_16"),
    ".aif": ("AIFF", "PCM_16"),
    ".caf": ("CAF", "PCM_16"),
    ".au": ("AU", "PCM_16"),
    ".mp3": ("MP3", "MPEG_LAYER_III"),
    ".w64": ("W64", "PCM_16"),
    ".rf64": ("RF64", "PCM_16"),
}
CHANNEL_MASKS = {1: 0x4, 2: 0x3, 6: 0x3F}
"""WAVE_FORMAT_EXTENSIBLE channel masks by channel count (mono centre, stereo, 5.1)."""


def audio_format(path: str | Path, subtype: str | None = None) -> tuple[str, str]:
    """``(format, subtype)`` libsndfile writes ``path`` with; :class:`OutputError` if none."""
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise OutputError(
            f"{path}: cannot write audio with extension {suffix or '(none)'!r} "
            f"(use one of {', '.join(sorted(_FORMATS))})"
        )
    fmt, default = _FORMATS[suffix]
    if fmt not in sf.available_formats():
        raise OutputError(f"{path}: this libsndfile cannot write {fmt} files")
    sub = subtype or default
    if not sf.check_format(fmt, sub):
        raise OutputError(
            f"{path}: {fmt} cannot hold subtype {sub} (try {', '.join(sf.available_subtypes(fmt))})"
        )
    return fmt, sub


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def check_writable(*paths: str | Path | None) -> None:
    """Create each path's folder and prove a file can be written there; :class:`OutputError` if not."""
    for p in paths:
        if p is None:
            continue
        path = Path(p)
        if path.is_dir():
            raise OutputError(f"{path}: is a folder; give a file name")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            probe = _partial(path)
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise OutputError(f"{path}: cannot write here ({exc.strerror or exc})") from None


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` when the block completes,
    remove it when the block raises."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(final)
    try:
        yield tmp
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise KeyboardInterrupt (so partial outputs are removed)."""

    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {}
    try:
        for s in (signal.SIGTERM, signal.SIGHUP):
            old[s] = signal.signal(s, raise_interrupt)
    except ValueError:  # not the main thread: leave the handlers alone
        pass
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@nb.njit(cache=True, nogil=True, fastmath=False)
def _measure(x: np.ndarray) -> tuple[float, float]:
    """Peak magnitude and float64 sum of squares of a float32 array, in one pass."""
    peak = 0.0
    sq = 0.0
    for v in x.ravel():
        d = np.float64(v)
        peak = max(peak, abs(d))
        sq += d * d
    return peak, sq


@nb.njit(cache=True, nogil=True, fastmath=False)
def _to_pcm16(x: np.ndarray, q: np.ndarray) -> None:
    """``q = int16(clip(rint(x * 32767), -32768, 32767))`` with ``x * 32767`` in float32 and
    rint rounding half to even (numpy's expression, one pass); NaN becomes 0."""
    xs, qs = x.ravel(), q.ravel()
    for i in range(xs.shape[0]):
        v = np.rint(xs[i] * np.float32(32767.0))
        qs[i] = 0 if v != v else np.int16(min(max(v, np.float32(-32768.0)), np.float32(32767.0)))


def warm_output_kernels() -> None:
    """Load the statistics and PCM_16 kernels now (numba's cache), not at the first chunk."""
    _measure(np.zeros((0, 2), np.float32))
    _to_pcm16(np.zeros((0, 2), np.float32), np.zeros((0, 2), np.int16))


class AudioStats:
    """Peak and RMS of everything written, accumulated chunk by chunk (float64 sums)."""

    def __init__(self) -> None:
        self.peak = 0.0
        self.sum_sq = 0.0
        self.samples = 0

    def add(self, block: np.ndarray) -> None:
        if block.size:
            peak, sq = _measure(np.ascontiguousarray(block, dtype=np.float32))
            self.peak = max(self.peak, peak)
            self.sum_sq += sq
            self.samples += block.size

    @property
    def rms(self) -> float:
        return float(np.sqrt(self.sum_sq / self.samples)) if self.samples else 0.0


class AudioSink:
    """An audio file written block by block under a temporary name, renamed by :meth:`commit`.

    Parameters
    ----------
    path:
        The final file; its extension picks the format (see :func:`audio_format`).
    sample_rate:
        Hz.
    channels:
        1, 2 or 6 (5.1).
    subtype:
        libsndfile subtype (default PCM_16; FLOAT, PCM_24...).
    """

    def __init__(self, path: str | Path, sample_rate: int, channels: int, subtype: str | None = None) -> None:
        self.path = Path(path)
        self.format, self.subtype = audio_format(self.path, subtype)
        self.channels = channels
        fmt = "WAVEX" if self.format == "WAV" and channels > 2 else self.format
        self._tmp = _partial(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._file: Any = sf.SoundFile(
                str(self._tmp), "w", sample_rate, channels, self.subtype, format=fmt
            )
        except (sf.LibsndfileError, OSError) as exc:
            raise OutputError(f"{self.path}: cannot write: {exc}") from None
        self._int16 = self.subtype == "PCM_16"

    def write(self, block: np.ndarray) -> None:
        """Append ``(samples, channels)`` float32 samples."""
        if self._int16:
            q = np.empty(block.shape, np.int16)
            _to_pcm16(np.ascontiguousarray(block, dtype=np.float32), q)
            self._file.write(q)
        else:
            self._file.write(block)

    def commit(self) -> Path:
        """Close the file and rename it to its final name."""
        fmt = self._file.format
        self._file.close()
        if fmt == "WAVEX":
            _set_channel_mask(self._tmp, CHANNEL_MASKS.get(self.channels, 0))
        os.replace(self._tmp, self.path)
        return self.path

    def discard(self) -> None:
        """Close and remove the temporary file (the final name is never touched)."""
        with contextlib.suppress(Exception):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self._tmp.unlink()


def _set_channel_mask(path: Path, mask: int) -> None:
    """Write ``dwChannelMask`` into a WAVE_FORMAT_EXTENSIBLE file's fmt chunk."""
    with open(path, "r+b") as fh:
        head = fh.read(4096)
        at = head.find(b"fmt ")
        if at < 0 or struct.unpack_from("<H", head, at + 8)[0] != 0xFFFE:
            return
        fh.seek(at + 8 + 20)
        fh.write(struct.pack("<I", mask))
