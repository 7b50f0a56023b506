"""Decode any audio file a ``play`` event or a cue table names: soundfile, then our codecs, then vgmstream.

The chain, first success wins:

1. **soundfile** (libsndfile): WAV, FLAC, OGG, AIFF... read exactly as before the chain existed.
2. **barkbus codecs**, chosen by the file's signature: RIFF/RIFX WAVE (XMA1/XMA2, MS-ADPCM,
   big-endian PCM; :mod:`audio.containers.riff`), ``VAGp`` PS-ADPCM (:mod:`audio.containers.vag`),
   XACT wave banks ``WBND``/``DNBW`` (the first entry; :mod:`audio.containers.xwb`), EA SPS
   (``0x48`` header block) and ``.snr`` with a sibling ``.sns`` (:mod:`audio.containers.snr`).
3. **vgmstream** (pyvgmstream, by path so companion files are found): ADX, PS-ADPCM variants,
   XWB PCM, hundreds of game formats. Loops are played once. It runs in a child process with a
   CPU and memory budget, and a ``VAG``-magic file its VAG reader cannot take is refused before
   it (:mod:`audio.containers.vgmstream`), so a broken file costs one request, not the host.

The result is float32 ``(samples, channels)`` in [-1, 1] and the sample rate in Hz. A file nobody
decodes raises one :class:`FormatError` (or :class:`UnsupportedError` when one of our
codecs recognised it as well-formed but unimplemented) naming the file and every step's
reason. Files above :data:`MAX_FILE_BYTES` are refused before reading.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from pathlib import Path

import numpy as np
import soundfile as sf

from audio.codecs.blocks import pcm16_to_float32
from audio.containers import riff, snr, vag, vgmstream, xwb
from audio.core.errors import BarkbusError, FormatError, UnsupportedError

__all__ = ["MAX_FILE_BYTES", "decode_file", "decode_file_step"]

MAX_FILE_BYTES = 1 << 30
"""Largest file the chain reads into memory (1 GiB)."""

Decoded = tuple[np.ndarray, int]


def _float2d(pcm: np.ndarray, sample_rate: int, path: str) -> Decoded:
    """float32 ``(samples, channels)`` from int16 (scaled by 1/32768) or float samples."""
    arr = np.asarray(pcm)
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    if arr.dtype == np.int16:
        out = pcm16_to_float32(arr)
    else:
        out = arr.astype(np.float32, copy=False)
    if not 1 <= int(sample_rate) <= 384_000 or out.shape[1] < 1:
        raise FormatError(
            path, None, "1..384000 Hz and at least one channel", (int(sample_rate), out.shape[1])
        )
    return out, int(sample_rate)


def _soundfile(path: Path) -> Decoded:
    data, sample_rate = sf.read(str(path), dtype="float32", always_2d=True)
    return data, int(sample_rate)


def _riff(data: bytes, path: Path) -> Decoded:
    return riff.decode_riff(riff.read_riff(data, str(path)), data)


def _vag(data: bytes, path: Path) -> Decoded:
    return vag.decode_vag(data, str(path))


def _xwb(data: bytes, path: Path) -> Decoded:
    bank = xwb.read_wavebank(data, str(path))
    if not bank.entries:
        raise FormatError(str(path), None, "a wave bank with at least one entry", 0)
    return xwb.decode_entry(bank, 0)


def _sps(data: bytes, path: Path) -> Decoded:
    header, offset = snr.split_sps(data, str(path))
    return snr.decode_take(header.pack(), data[offset:], str(path))


def _snr_sns(data: bytes, path: Path) -> Decoded:
    return snr.decode_take(data, _read(path.with_suffix(".sns")), str(path))


_OWN: list[tuple[str, Callable[[bytes, Path], bool], Callable[[bytes, Path], Decoded]]] = [
    ("barkbus RIFF", lambda d, p: d[:4] in (b"RIFF", b"RIFX") and d[8:12] == b"WAVE", _riff),
    ("barkbus VAG", lambda d, p: d[:3] == b"VAG" or d[:4] == b"pGAV", _vag),
    ("barkbus XWB", lambda d, p: d[:4] in (b"WBND", b"DNBW"), _xwb),
    ("barkbus SPS", lambda d, p: d[:1] == b"\x48", _sps),
    (
        "barkbus SNR+SNS",
        lambda d, p: p.suffix.lower() == ".snr" and p.with_suffix(".sns").is_file(),
        _snr_sns,
    ),
]


def _read(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FormatError(str(path), None, f"an audio file of at most {MAX_FILE_BYTES} bytes", size)
        return path.read_bytes()
    except OSError as exc:
        raise FormatError(str(path), None, "a readable audio file", exc.strerror or str(exc)) from None


def _own_codecs(data: bytes, path: Path, tried: list[str]) -> tuple[Decoded, str] | None:
    """Our decoders whose signature matches, in turn; failures are appended to ``tried``."""
    matched = False
    for name, matches, decode in _OWN:
        if not matches(data, path):
            continue
        matched = True
        try:
            pcm, sample_rate = decode(data, path)
            return _float2d(pcm, sample_rate, str(path)), name
        except BarkbusError as exc:
            tried.append(f"{name}: {'unsupported: ' if isinstance(exc, UnsupportedError) else ''}{exc}")
    if not matched:
        tried.append("barkbus codecs: no known signature (RIFF/RIFX, VAGp, WBND/DNBW, SPS, .snr+.sns)")
    return None


def _vgmstream(data: bytes, path: Path, tried: list[str]) -> Decoded | None:
    ok, reason = vgmstream.available()
    if not ok:
        tried.append(f"vgmstream: {reason}")
        return None
    refusal = vgmstream.vag_refusal(data)
    if refusal is not None:
        tried.append(f"vgmstream: not tried: expected {refusal}")
        return None
    try:
        pcm, sample_rate = vgmstream.decode_path(str(path))
    except BarkbusError as exc:
        tried.append(f"vgmstream: {exc.found if isinstance(exc, FormatError) else exc}")
        return None
    if not pcm.size:
        tried.append("vgmstream: no samples")
        return None
    return _float2d(pcm, sample_rate, str(path))


def decode_file_step(path: str | PathLike[str]) -> tuple[np.ndarray, int, str]:
    """As :func:`decode_file`, plus the name of the step that decoded it (``"soundfile"``,
    ``"barkbus RIFF"``, ``"barkbus VAG"``, ``"barkbus XWB"``, ``"barkbus SPS"``,
    ``"barkbus SNR+SNS"`` or ``"vgmstream"``).

    Parameters
    ----------
    path:
        An audio file (a barkbus container, else what vgmstream or libsndfile reads).
    """
    p = Path(path)
    tried: list[str] = []
    try:
        pcm, sample_rate = _soundfile(p)
        return pcm, sample_rate, "soundfile"
    except (sf.SoundFileError, RuntimeError, TypeError) as exc:
        tried.append(f"soundfile: {str(exc).rsplit(': ', 1)[-1]}")
    data = _read(p)
    own = _own_codecs(data, p, tried)
    if own is not None:
        (pcm, sample_rate), name = own
        return pcm, sample_rate, name
    got = _vgmstream(data, p, tried)
    if got is not None:
        return got[0], got[1], "vgmstream"
    kind = UnsupportedError if any(": unsupported: " in t for t in tried) else FormatError
    raise kind(
        str(p), None, "an audio file that soundfile, barkbus's codecs or vgmstream decodes", "; ".join(tried)
    )


def decode_file(path: str | PathLike[str]) -> tuple[np.ndarray, int]:
    """Decode an audio file to float32 ``(samples, channels)`` and its sample rate in Hz
    through soundfile, our codecs, then vgmstream (module docstring).

    Parameters
    ----------
    path:
        An audio file (a barkbus container, else what vgmstream or libsndfile reads).
    """
    pcm, sample_rate, _ = decode_file_step(path)
    return pcm, sample_rate
