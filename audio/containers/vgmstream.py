"""Adapter over pyvgmstream 0.1.1: vgmstream as an independent reference decoder, and the last
step of the runtime fallback decoder.

Files from outside (:func:`decode_path`, what :mod:`audio.containers.fallback` calls) are
decoded in a child process (:mod:`audio.containers.vgmstream_child`, kept for the next file)
with a CPU budget of :data:`CPU_SECONDS` per file and :data:`MEMORY_BYTES` of address space:
vgmstream spends seconds on some short broken files (a 4-byte ``.vag`` took 1.6-3 s of CPU in
its VAG reader's loop scan), and a file past the budget, or one that crashes vgmstream, costs
that request (a :class:`FormatError`, so the voice's fault) and a new child, never the host.
Before that, :func:`vag_refusal` refuses in one line the ``VAG``-magic files vgmstream's VAG
reader cannot take, without the scan. Buffers barkbus made itself (:func:`decode_buffer`:
reference decodes in tests and benchmarks) are decoded in this process.

pyvgmstream is built without FFmpeg, so it cannot decode EA-XMA; PCM16BE and XAS1 takes decode
through a single-buffer ``.snu`` wrapper (16-byte header whose u32 at 0x08 is the body offset,
the SNR header at 0x10, then the SNS data).
"""

from __future__ import annotations

import atexit
import os
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import numpy as np

from audio.containers.riff import read_riff
from audio.containers.vgmstream_child import load_pyvgmstream
from audio.core.errors import FormatError

__all__ = [
    "CPU_SECONDS",
    "MEMORY_BYTES",
    "available",
    "snu_wrap",
    "decode_buffer",
    "decode_path",
    "decode_take_vgmstream",
    "vag_refusal",
]

CPU_SECONDS = 4.0
"""CPU budget of one file decoded by :func:`decode_path` (user + system time), s."""
MEMORY_BYTES = 2 << 30
"""Address-space limit of the decoding child process, bytes (2 GiB)."""
WALL_SECONDS = 60.0
"""Wall-clock limit of one file (a child blocked without using CPU), s."""
_IDLE_CHILDREN = 2
"""Children kept for the next files (more run at once when loader threads overlap)."""
_lock = threading.Lock()
_state: dict[str, object] = {}


def _load() -> tuple[ModuleType | None, str]:
    with _lock:
        if "module" not in _state:
            _state["module"], _state["reason"] = load_pyvgmstream()
        return _state["module"], str(_state["reason"])  # type: ignore[return-value]


def available() -> tuple[bool, str]:
    """``(True, reason)`` if pyvgmstream imports here, else ``(False, why not)``."""
    module, reason = _load()
    return module is not None, reason


def snu_wrap(header_bytes: bytes, body_bytes: bytes) -> bytes:
    """A ``.snu`` buffer: 16-byte header (big-endian body offset at 0x08), SNR header, SNS body.

    Parameters
    ----------
    header_bytes:
        The SNR header.
    body_bytes:
        The SNS body.
    """
    return struct.pack(">IIII", 0, 0, 16 + len(header_bytes), 0) + bytes(header_bytes) + bytes(body_bytes)


def _module() -> ModuleType:
    module, reason = _load()
    if module is None:
        raise RuntimeError(reason)
    return module


def _wav_pcm(wav: bytes, what: str) -> tuple[np.ndarray, int]:
    """int16 ``(samples, channels)`` and the sample rate of the WAV vgmstream wrote."""
    info = read_riff(wav, f"vgmstream output of {what}")
    body = wav[info.data_offset : info.data_offset + info.data_size]
    usable = len(body) // (2 * info.channels) * 2 * info.channels
    pcm = np.frombuffer(body[:usable], "<i2").astype(np.int16).reshape(-1, info.channels)
    return pcm, info.sample_rate


def decode_buffer(data: bytes, filename_hint: str) -> tuple[np.ndarray, int]:
    """Decode any buffer vgmstream recognises (by ``filename_hint``'s extension) to int16
    ``(samples, channels)`` and the sample rate in Hz; loops are ignored (played once).

    Parameters
    ----------
    data:
        A file vgmstream reads.
    filename_hint:
        A file name whose extension tells vgmstream the format.
    """
    module = _module()
    config = module.DecodeConfig(sample_format=module.SampleFormat.PCM16, ignore_loop=True)
    try:
        wav = module.decode_buffer_to_wav_bytes(bytes(data), filename_hint=filename_hint, config=config)
    except (module.PyVGMStreamError, ValueError, RuntimeError) as exc:
        raise FormatError(filename_hint, None, "a stream vgmstream can decode", str(exc)) from exc
    return _wav_pcm(wav, filename_hint)


_VAG_HEADER = 0x30
_MAX_CHANNELS = 64
"""vgmstream's channel limit (``VGMSTREAM_MAX_CHANNELS``)."""


def vag_refusal(data: bytes) -> str | None:
    """Why vgmstream's VAG reader cannot take ``data`` (one line), or ``None`` if it may.

    The reader (vgmstream ``meta/vag.c``) claims every file whose first 4 bytes, read big- or
    little-endian, start ``VAG`` (``VAGp``, ``VAGi``, ``VAG1``, ``VAG2``, ``pGAV``...). Every
    variant's samples start at 0x30 or later, and its last check refuses a per-channel data
    size (the u32 at 0x0C, big- or little-endian by variant, divided by at most 64 channels)
    above the file size per channel; the scan for loop marks before that check walks the
    claimed size, which is what costs seconds on a short file. So a file shorter than the
    0x30-byte header, or whose u32 at 0x0C exceeds the file size by more than 64 bytes in both
    byte orders, is refused here.

    Parameters
    ----------
    data:
        The file's bytes (the header is enough: the first 0x30 bytes and the size).
    """
    if not (data[:3] == b"VAG" or data[1:4] == b"GAV"):
        return None
    if len(data) < _VAG_HEADER:
        return f"a VAG header of {_VAG_HEADER} bytes; the file has {len(data)}"
    big, little = struct.unpack_from(">I", data, 0x0C)[0], struct.unpack_from("<I", data, 0x0C)[0]
    if min(big, little) > len(data) + _MAX_CHANNELS:
        return (
            f"a VAG data size within the file's {len(data)} bytes; "
            f"the u32 at 0x0C is {big} big-endian, {little} little-endian"
        )
    return None


class _Child:
    """One decoding process (:mod:`audio.containers.vgmstream_child`)."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("vgmstream_child.py")
        self.proc = subprocess.Popen(
            [sys.executable, "-P", str(script), str(MEMORY_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def decode(self, path: str) -> tuple[bytes, bytes]:
        """``(status, payload)`` for ``path``; OSError/EOFError if the child died."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        raw = path.encode("utf-8", "surrogateescape")
        self.proc.stdin.write(struct.pack(">dI", CPU_SECONDS, len(raw)) + raw)
        self.proc.stdin.flush()
        head = self.proc.stdout.read(9)
        if len(head) != 9:
            raise EOFError("the vgmstream child ended")
        size = struct.unpack(">Q", head[1:])[0]
        payload = self.proc.stdout.read(size)
        if len(payload) != size:
            raise EOFError("the vgmstream child ended")
        return head[:1], payload

    def death(self) -> str:
        """Why the child ended (after a broken pipe or an early end of its replies), in words."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # alive but not answering: end it
            self.proc.kill()
            code = self.proc.wait()
        if code == -signal.SIGPROF:
            return f"stopped after its CPU budget of {CPU_SECONDS:g} s"
        if code == -signal.SIGKILL:
            return f"stopped after {WALL_SECONDS:g} s (or killed)"
        if code < 0:
            return f"vgmstream crashed ({signal.Signals(-code).name})"
        return f"the vgmstream process ended (status {code})"

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_idle: list[_Child] = []


def _close_idle() -> None:
    with _lock:
        children, _idle[:] = list(_idle), []
    for child in children:
        child.close()


atexit.register(_close_idle)
os.register_at_fork(after_in_child=_idle.clear)  # a forked process starts its own children


def decode_path(path: str) -> tuple[np.ndarray, int]:
    """Decode a file by path (so vgmstream may open companion files, e.g. ``.snr`` + ``.sns``)
    to int16 ``(samples, channels)`` and the sample rate in Hz; loops are ignored (played once).

    The decode runs in a child process within :data:`CPU_SECONDS` of CPU, :data:`MEMORY_BYTES`
    and :data:`WALL_SECONDS` (module docstring); a file past them is a :class:`FormatError`.
    Safe to call from several threads (each call has a child to itself).

    Parameters
    ----------
    path:
        A file vgmstream reads.
    """
    with _lock:
        child = _idle.pop() if _idle else None
    if child is not None and child.proc.poll() is not None:  # died while idle
        child.close()
        child = None
    try:
        if child is None:
            child = _Child()
        timer = threading.Timer(WALL_SECONDS, child.proc.kill)
        timer.start()
        try:
            status, payload = child.decode(str(path))
        finally:
            timer.cancel()
    except (OSError, EOFError):
        found = child.death() if child is not None else "could not start the vgmstream process"
        if child is not None:
            child.close()
        budget = f"{CPU_SECONDS:g} s of CPU and {WALL_SECONDS:g} s"
        raise FormatError(str(path), None, f"a stream vgmstream decodes within {budget}", found) from None
    with _lock:
        keep = len(_idle) < _IDLE_CHILDREN
        if keep:
            _idle.append(child)
    if not keep:
        child.close()
    if status != b"W":
        raise FormatError(
            str(path), None, "a stream vgmstream can decode", payload.decode("utf-8", "replace")
        )
    return _wav_pcm(payload, str(path))


def decode_take_vgmstream(header_bytes: bytes, body_bytes: bytes) -> tuple[np.ndarray, int]:
    """Decode an SNR header + SNS body with vgmstream (via :func:`snu_wrap`) to int16.

    Parameters
    ----------
    header_bytes:
        The SNR header.
    body_bytes:
        The SNS body.
    """
    return decode_buffer(snu_wrap(header_bytes, body_bytes), "take.snu")
