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
import glob
import os
import shutil
import signal
import stat
import struct
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import IO, Any

import numba as nb
import numpy as np
import soundfile as sf

from audio.core.errors import OutputError

__all__ = [
    "AudioSink",
    "AudioStats",
    "atomic_path",
    "audio_format",
    "check_outputs",
    "check_writable",
    "is_stdio",
    "magnitude_bits",
    "open_output",
    "picture_format",
    "remove_stale_partials",
    "terminate_as_interrupt",
    "write_audio",
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
    """``(format, subtype)`` libsndfile writes ``path`` with; :class:`OutputError` if none.

    Standard output (``-``) and a device or FIFO without an extension get WAV."""
    suffix = Path(path).suffix.lower()
    if not suffix and (is_stdio(path) or not _is_regular_or_missing(_target(Path(path)))):
        suffix = ".wav"
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


STDIO = "-"
"""The name that means standard output (or standard input, for a scenario or a capture)."""

PICTURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
"""Picture formats by extension; a picture name without an extension is PNG."""

_PARTIAL = ".partial-"


def is_stdio(path: str | Path | None) -> bool:
    """``path`` is ``-`` (standard output or input)."""
    return path is not None and str(path) == STDIO


def picture_format(path: str | Path) -> str:
    """The format a picture is drawn in: by extension, PNG without one; :class:`OutputError` if
    the extension names another format."""
    suffix = Path(path).suffix.lower()
    if is_stdio(path) or not suffix:
        return "png"
    if suffix not in PICTURE_FORMATS:
        raise OutputError(
            f"{path}: cannot draw a picture with extension {suffix!r} "
            f"(use {', '.join(PICTURE_FORMATS)}, or no extension for PNG)"
        )
    return PICTURE_FORMATS[suffix]


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.stem}{_PARTIAL}{os.getpid()}{path.suffix}")


def _target(path: Path) -> Path:
    """Where writing ``path`` lands: a symlink is followed to its target."""
    return Path(os.path.realpath(path))


def _is_regular_or_missing(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(path: str | Path) -> list[Path]:
    """Remove the partial files a killed run left for ``path`` (``.STEM.partial-PID.EXT`` whose
    process is gone); the removed files."""
    final = _target(Path(path))
    gone = []
    with contextlib.suppress(OSError):
        for p in final.parent.glob(f".{glob.escape(final.stem)}{_PARTIAL}*{glob.escape(final.suffix)}"):
            end = len(p.name) - len(final.suffix)
            pid = p.name[len(final.stem) + 1 + len(_PARTIAL) : end]
            if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
                    gone.append(p)
    return gone


def _check_place(path: Path) -> None:
    """``path`` can be created or written (its nearest existing folder is writable)."""
    target = _target(path)
    if target.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise OutputError(f"{path}: cannot write (Permission denied)")
        if not _is_regular_or_missing(target):
            return  # a device or a FIFO: written through, never replaced
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{path}: cannot write ({folder} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: cannot write ({folder}: Permission denied)")


def check_outputs(named: Mapping[str, tuple[str | Path | None, str]], subtype: str | None = None) -> None:
    """Check every output of a command before any work: one :class:`OutputError` line if not.

    Parameters
    ----------
    named:
        ``{label: (path or None, kind)}`` with label the option (``"--log"``) and kind one of
        ``"audio"``, ``"text"``, ``"picture"``, ``"folder"`` (stems). ``-`` is standard output
        for every kind but a folder.
    subtype:
        The audio files' libsndfile subtype.

    Two outputs that land on the same file (after following links), two on standard output, a
    format that cannot be written or a place that cannot be written are refused. Stale partial
    files of a killed earlier run for these names are removed.
    """
    seen: dict[str, str] = {}
    for label, (p, kind) in named.items():
        if p is None:
            continue
        if is_stdio(p):
            if kind == "folder":
                raise OutputError(f"{label} -: a folder cannot be standard output")
            if kind == "audio":
                audio_format(p, subtype)
            key = "<standard output>"
        else:
            path = Path(p)
            if kind == "audio":
                audio_format(path, subtype)
            elif kind == "picture":
                picture_format(path)
            if kind == "folder":
                target = _target(path)
                if target.exists() and not target.is_dir():
                    raise OutputError(f"{path}: {label} needs a folder, this is a file")
                probe = target / "probe"
                _check_place(probe)
                key = str(target)
            else:
                _check_place(path)
                key = str(_target(path))
                remove_stale_partials(path)
        if key in seen:
            raise OutputError(f"{p}: both {seen[key]} and {label} would write {key}; give each its own name")
        seen[key] = label


def check_writable(*paths: str | Path | None) -> None:
    """Prove each path can be written (see :func:`check_outputs`); :class:`OutputError` if not."""
    check_outputs({f"output {i + 1}": (p, "text") for i, p in enumerate(paths)})


def _write_error(path: str | Path, exc: BaseException, where: Path | None = None) -> OutputError:
    """The one line for a failed write: the system's reason (a full disk, a size limit...)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else None
    if reason is None and where is not None:
        reason = _probe_reason(where)
    return OutputError(f"{path}: cannot write ({reason or exc})")


def _probe_reason(where: Path) -> str | None:
    """Why writes to ``where``'s file fail (libsndfile says only "System error"): append to it."""
    try:
        with open(where, "ab") as fh:
            fh.write(bytes(65536))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        return exc.strerror
    return None


class _Output:
    """One output being written: a temporary name beside a regular file (renamed by
    :meth:`commit`), or a scratch file copied through to standard output, a device or a FIFO."""

    def __init__(self, path: str | Path) -> None:
        self.name = str(path)
        self.created: list[Path] = []
        if is_stdio(path):
            self.final: Path | None = None
            self.through = True
        else:
            self.final = _target(Path(path))
            self.through = not _is_regular_or_missing(self.final)
        if self.through:
            fd, tmp = tempfile.mkstemp(prefix=".barkbus-", suffix=Path(self.name).suffix)
            os.close(fd)
            self.tmp = Path(tmp)
        else:
            assert self.final is not None
            self._make_folders(self.final.parent)
            self.tmp = _partial(self.final)

    def _make_folders(self, folder: Path) -> None:
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        try:
            for f in reversed(missing):
                f.mkdir()
                self.created.append(f)
        except OSError as exc:
            self.discard()
            raise _write_error(self.name, exc) from None

    def commit(self) -> None:
        try:
            if self.final is not None and not self.through:
                os.replace(self.tmp, self.final)
                return
            if self.final is None:
                sys.stdout.flush()
                out = sys.stdout.buffer
                with open(self.tmp, "rb") as src:
                    shutil.copyfileobj(src, out)
                out.flush()
            else:
                with open(self.tmp, "rb") as src, open(self.final, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            self.tmp.unlink()
        except OSError as exc:
            self.discard()
            raise _write_error(self.name, exc) from None

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.tmp.unlink()
        for f in reversed(self.created):
            with contextlib.suppress(OSError):
                f.rmdir()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s content to; when the block completes it is
    renamed over ``path`` (or copied to standard output, a device or a FIFO); when it raises it
    is removed. A symlink is followed and its target written. A failed write is one
    :class:`OutputError` line naming ``path`` and the system's reason."""
    out = _Output(path)
    try:
        yield out.tmp
    except OSError as exc:
        out.discard()
        if isinstance(exc, OutputError):
            raise
        raise _write_error(path, exc, out.tmp) from None
    except BaseException:
        out.discard()
        raise
    out.commit()


@contextlib.contextmanager
def open_output(path: str | Path, binary: bool = False) -> Iterator[IO[Any]]:
    """Open an output for writing (text UTF-8 or ``binary``) as :func:`atomic_path` does;
    ``-`` streams to standard output, a device or a FIFO is written through directly."""
    if is_stdio(path):
        fh: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        try:
            yield fh
            fh.flush()
        except OSError as exc:
            raise _write_error(path, exc) from None
        return
    if not _is_regular_or_missing(_target(Path(path))):
        try:
            with open(
                _target(Path(path)), "wb" if binary else "w", encoding=None if binary else "utf-8"
            ) as fh:
                yield fh
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise _write_error(path, exc) from None
        return
    with (
        atomic_path(path) as tmp,
        open(tmp, "wb" if binary else "w", encoding=None if binary else "utf-8") as fh,
    ):
        yield fh


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


@nb.njit(cache=True, nogil=True)
def magnitude_bits(bits, mask, one, inf):  # pragma: no cover - compiled
    """The largest of ``bits & mask`` and how many lie in ``one..inf``: on a float array's bit
    patterns viewed as same-size integers (``mask`` clearing the sign bit, ``one`` and ``inf``
    the patterns of 1.0 and infinity), its peak magnitude's pattern (above ``inf``: a NaN) and
    the count of magnitudes >= 1.0, by integer comparisons (which vectorise)."""
    top = mask & 0
    clipped = 0
    for i in range(bits.shape[0]):
        b = bits[i] & mask
        top = max(top, b)
        clipped += (b >= one) & (b <= inf)
    return top, clipped


@nb.njit(cache=True, nogil=True, fastmath=False)
def _measure(x: np.ndarray) -> tuple[float, float, int, int]:
    """Peak magnitude (NaN if a sample is NaN), float64 sum of squares, count of full-scale
    samples (magnitude >= 1.0, clipped by every fixed-point format) and the sample index of
    the first (-1 if none) of a C-contiguous ``(samples, channels)`` float32 array. The squares
    are summed in 8 interleaved partial sums (a fixed order, so the same input gives the same
    sum; they vectorise where one running sum waits on each add), the peak and the count on
    the magnitudes' bit patterns (integer comparisons, which vectorise; a NaN's lie above
    infinity's)."""
    xs = x.ravel()
    n = xs.shape[0]
    acc = np.zeros(8)
    k = n - n % 8
    for i in range(0, k, 8):
        for j in range(8):
            d = np.float64(xs[i + j])
            acc[j] += d * d
    for i in range(k, n):
        d = np.float64(xs[i])
        acc[i - k] += d * d
    sq = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    bits = xs.view(np.int32)
    mask, one, inf = np.int32(0x7FFFFFFF), np.int32(0x3F800000), np.int32(0x7F800000)
    top, clipped = magnitude_bits(bits, mask, one, inf)
    first = -1
    if clipped:
        for i in range(n):
            b = bits[i] & mask
            if b >= one and b <= inf:
                first = i // x.shape[1]
                break
    peak = np.float64(np.array([top], dtype=np.int32).view(np.float32)[0])
    return (np.nan if top > inf else peak), sq, clipped, first


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
    """Peak, RMS and clipping of everything written, accumulated chunk by chunk (float64 sums)."""

    def __init__(self) -> None:
        self.peak = 0.0
        self.sum_sq = 0.0
        self.values = 0
        """Values written (samples x channels)."""
        self.length = 0
        """Samples (per channel) written."""
        self.clipped = 0
        """Samples (one channel each) at or over full scale (magnitude >= 1.0)."""
        self.first_clip: int | None = None
        """Sample index (from the start) of the first clipped sample, or None."""

    def add(self, block: np.ndarray) -> None:
        """Account a ``(samples, channels)`` block."""
        if block.size:
            x = np.ascontiguousarray(block, dtype=np.float32).reshape(block.shape[0], -1)
            peak, sq, clipped, first = _measure(x)
            if peak != peak or peak > self.peak:  # a NaN stays
                self.peak = peak
            self.sum_sq += sq
            self.values += block.size
            if clipped and self.first_clip is None:
                self.first_clip = self.length + first
            self.clipped += clipped
            self.length += block.shape[0]

    @property
    def rms(self) -> float:
        return float(np.sqrt(self.sum_sq / self.values)) if self.values else 0.0


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
        self._out = _Output(self.path)
        self._tmp = self._out.tmp
        try:
            self._file: Any = sf.SoundFile(
                str(self._tmp), "w", sample_rate, channels, self.subtype, format=fmt
            )
        except (sf.LibsndfileError, OSError) as exc:
            self._out.discard()
            raise _write_error(self.path, exc, self._tmp) from None
        self._int16 = self.subtype == "PCM_16"

    def write(self, block: np.ndarray) -> None:
        """Append ``(samples, channels)`` float32 samples."""
        try:
            if self._int16:
                q = np.empty(block.shape, np.int16)
                _to_pcm16(np.ascontiguousarray(block, dtype=np.float32), q)
                self._file.write(q)
            else:
                self._file.write(block)
        except (sf.LibsndfileError, OSError) as exc:
            raise _write_error(self.path, exc, self._tmp) from None

    def commit(self) -> Path:
        """Close the file and rename it to its final name (or copy it to standard output)."""
        fmt = self._file.format
        try:
            self._file.close()
            if fmt == "WAVEX":
                _set_channel_mask(self._tmp, CHANNEL_MASKS.get(self.channels, 0))
        except (sf.LibsndfileError, OSError) as exc:
            raise _write_error(self.path, exc, self._tmp) from None
        self._out.commit()
        return self.path

    def discard(self) -> None:
        """Close and remove the temporary file (the final name is never touched)."""
        with contextlib.suppress(Exception):
            self._file.close()
        self._out.discard()


def write_audio(path: str | Path, audio: np.ndarray, sample_rate: int, subtype: str | None = None) -> None:
    """Write ``audio`` (``(samples, channels)`` float32) by extension through :class:`AudioSink`
    (``-``: WAV to standard output)."""
    sink = AudioSink(path, sample_rate, audio.shape[1], subtype)
    try:
        sink.write(audio)
        sink.commit()
    except BaseException:
        sink.discard()
        raise


def _set_channel_mask(path: Path, mask: int) -> None:
    """Write ``dwChannelMask`` into a WAVE_FORMAT_EXTENSIBLE file's fmt chunk."""
    with open(path, "r+b") as fh:
        head = fh.read(4096)
        at = head.find(b"fmt ")
        if at < 0 or struct.unpack_from("<H", head, at + 8)[0] != 0xFFFE:
            return
        fh.seek(at + 8 + 20)
        fh.write(struct.pack("<I", mask))
