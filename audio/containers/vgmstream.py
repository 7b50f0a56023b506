"""Adapter over pyvgmstream 0.1.1: vgmstream as an independent reference decoder.

The 0.1.1 Linux wheel's extension needs libogg, libvorbis and libvorbisfile loaded with
``RTLD_GLOBAL`` before import (else ``undefined symbol: ov_test_callbacks``); this
module does that through :func:`ctypes.util.find_library`. It is built without FFmpeg,
so it cannot decode EA-XMA; PCM16BE and XAS1 takes decode through a single-buffer
``.snu`` wrapper (16-byte header whose u32 at 0x08 is the body offset, the SNR header
at 0x10, then the SNS data).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import threading
from types import ModuleType

import numpy as np

from audio.containers.riff import read_riff
from audio.core.errors import FormatError

__all__ = ["available", "snu_wrap", "decode_buffer", "decode_path", "decode_take_vgmstream"]

_LIBS = ("ogg", "vorbis", "vorbisfile")
_lock = threading.Lock()
_state: dict[str, object] = {}


def _load() -> tuple[ModuleType | None, str]:
    with _lock:
        if "module" not in _state:
            module, reason = None, "pyvgmstream loaded"
            try:
                for name in _LIBS:
                    found = ctypes.util.find_library(name)
                    if found is None:
                        raise OSError(f"lib{name} not found (Debian: libogg0, libvorbis0a, libvorbisfile3)")
                    ctypes.CDLL(found, mode=ctypes.RTLD_GLOBAL)
                import pyvgmstream

                module = pyvgmstream
            except (OSError, ImportError) as exc:
                reason = f"pyvgmstream unavailable: {exc}"
            _state["module"], _state["reason"] = module, reason
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


def decode_path(path: str) -> tuple[np.ndarray, int]:
    """Decode a file by path (so vgmstream may open companion files, e.g. ``.snr`` + ``.sns``)
    to int16 ``(samples, channels)`` and the sample rate in Hz; loops are ignored (played once).

    Parameters
    ----------
    path:
        A file vgmstream reads.
    """
    module = _module()
    config = module.DecodeConfig(sample_format=module.SampleFormat.PCM16, ignore_loop=True)
    try:
        wav = module.decode_to_wav_bytes(str(path), config=config)
    except (module.PyVGMStreamError, ValueError, RuntimeError, OSError) as exc:
        raise FormatError(str(path), None, "a stream vgmstream can decode", str(exc)) from exc
    return _wav_pcm(wav, str(path))


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
