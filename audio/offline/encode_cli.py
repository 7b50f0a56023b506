"""``barkbus encode``: one command for every codec barkbus can write.

The output format follows OUT's extension where that is enough (``.xma``/``.wav``: RIFF
WAVE XMA2; ``.snr``/``.sns``: an EA SNR header + SNS body pair; ``.vag``: PS-ADPCM; a
game's own format, such as Starlancer's ``.ut``); ``--codec`` picks otherwise (``.wav`` +
``pcm16`` = 16-bit PCM; ``.snr`` + ``xas1``/``pcm16`` = EA codec 4/2). A summary line gives
the size, the bitrate and the SNR of the written file decoded by barkbus's own decoders
against the input.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from audio.core.errors import InputError
from audio.games import codec_names, game_codec

if TYPE_CHECKING:  # imported when a file is encoded, so ``encode --help`` loads no codec
    import numpy as np

__all__ = ["CODECS", "codecs", "register", "encode_file"]

XMA2_SYNTAXES = ("microsoft", "extended")
"""``--xma2-syntax`` values: :data:`audio.codecs.xma2_encoder.SYNTAXES`, named here so that
``encode --help`` loads no codec (a test keeps the two equal)."""
CODECS = ("xma2", "ea-xma2", "xas1", "pcm16", "ps-adpcm")
"""The codecs of the codec and container rooms; each registered game may add its own
(``Game.codecs``, e.g. Starlancer's ``ut``)."""
_BY_EXTENSION = {
    ".xma": "xma2",
    ".wav": "xma2",
    ".snr": "ea-xma2",
    ".sns": "ea-xma2",
    ".vag": "ps-adpcm",
}
_FORMATS = {  # codec -> extensions it can be written as
    "xma2": (".xma", ".wav"),
    "ea-xma2": (".snr", ".sns"),
    "xas1": (".snr", ".sns"),
    "pcm16": (".wav", ".snr", ".sns"),
    "ps-adpcm": (".vag",),
}
_STDOUT_EXT = {"xma2": ".xma", "pcm16": ".wav", "ps-adpcm": ".vag"}


def codecs() -> tuple[str, ...]:
    """Every codec ``barkbus encode`` writes: :data:`CODECS`, then the games' own."""
    return CODECS + tuple(codec_names())


def _formats(codec: str) -> tuple[str, ...]:
    return _FORMATS[codec] if codec in _FORMATS else game_codec(codec).extensions


def _by_extension(ext: str) -> str | None:
    if ext in _BY_EXTENSION:
        return _BY_EXTENSION[ext]
    return next((name for name in codec_names() if ext in game_codec(name).extensions), None)


@dataclass(frozen=True)
class Encoded:
    """What :func:`encode_file` wrote: files (name -> bytes), the decoded result and its
    sample rate (Hz)."""

    files: dict[str, bytes]
    decoded: np.ndarray
    sample_rate: int
    codec: str


def _to_int16(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def _ea_pair(stem: str, header: bytes, body: bytes) -> dict[str, bytes]:
    return {stem + ".snr": header, stem + ".sns": body}


def encode_file(
    pcm: np.ndarray,
    sample_rate: int,
    codec: str,
    ext: str,
    stem: str,
    bitrate: float | None,
    syntax: str = "microsoft",
) -> Encoded:
    """Encode float ``pcm`` as ``codec`` in the ``ext`` format.

    Parameters
    ----------
    pcm:
        float32 samples in [-1, 1), shape (samples, channels).
    sample_rate:
        Sample rate of ``pcm``, Hz.
    codec:
        A name of :func:`codecs` (``"xma2"``, ``"ut"``...).
    ext:
        The output extension with its dot (``".snr"``); picks the container.
    stem:
        Output path without the extension (an SNR/SNS pair is ``stem.snr`` + ``stem.sns``).
    bitrate:
        XMA2 target over all channels, kbit/s (``None``: 64 per channel).
    syntax:
        XMA2 syntax (:data:`XMA2_SYNTAXES`): ``"microsoft"``, the
        subset Microsoft's encoder writes, or ``"extended"`` (mixed subframe lengths, sent
        vector counts; FFmpeg decodes it, console acceptance unknown).
    """
    import numpy as np

    from audio.codecs.eaxma import split_streams
    from audio.codecs.pcm import decode_pcm16be, encode_pcm16be
    from audio.codecs.xas1 import decode_xas1, encode_xas1
    from audio.codecs.xma2_decoder import decode_xma2
    from audio.codecs.xma2_encoder import encode_xma2
    from audio.containers import riff, vag
    from audio.containers.snr import CODEC_PCM16BE, CODEC_XAS1, TYPE_STREAM, SnrHeader, eaxma_take
    from audio.containers.sns import coded_blocks, write_blocks

    channels = pcm.shape[1]
    n = pcm.shape[0]
    if codec not in _FORMATS:
        game = game_codec(codec)
        if game.channels is not None and channels != game.channels:
            raise InputError(
                f"{codec} holds {game.channels} channel(s); the input has {channels} (mix it down first)"
            )
        data = game.encode(pcm, sample_rate)
        decoded, decoded_sample_rate = game.decode(data)
        return Encoded({stem + ext: data}, decoded, decoded_sample_rate, codec)
    if codec == "ps-adpcm" and channels != 1:
        raise InputError(f"{codec} is mono; the input has {channels} channels (mix it down first)")
    if codec == "xma2":
        if channels > 2:
            raise InputError(f"a RIFF XMA2 file here holds 1 or 2 channels, not {channels} (use ea-xma2)")
        enc = encode_xma2(pcm, sample_rate, bitrate=bitrate or 64.0 * channels, syntax=syntax)
        wav = riff.xma2_wav(enc.streams[0], channels, sample_rate, n, enc.seek_table())
        return Encoded(
            {stem + ext: wav}, decode_xma2(enc.streams[0], sample_rate, channels), sample_rate, codec
        )
    if codec == "ea-xma2":
        enc = encode_xma2(pcm, sample_rate, bitrate=bitrate or 64.0 * channels, syntax=syntax)
        header, body = eaxma_take(enc.streams, channels, sample_rate, n)
        parts = [
            decode_xma2([p for _, p in packets], sample_rate, ch)
            for packets, ch in zip(split_streams(coded_blocks(body), channels), enc.stream_channels)
        ]
        return Encoded(_ea_pair(stem, header, body), np.concatenate(parts, axis=1), sample_rate, codec)
    if codec == "xas1" or codec == "pcm16" and ext != ".wav":
        number, writer = (CODEC_XAS1, encode_xas1) if codec == "xas1" else (CODEC_PCM16BE, encode_pcm16be)
        body = write_blocks(writer(_to_int16(pcm)))
        header = SnrHeader(0, number, channels, sample_rate, TYPE_STREAM, False, n).pack()
        reader: Callable[..., np.ndarray] = decode_xas1 if codec == "xas1" else decode_pcm16be
        decoded = reader(coded_blocks(body), channels, n).astype(np.float32) / 32768.0
        return Encoded(_ea_pair(stem, header, body), decoded, sample_rate, codec)
    if codec == "pcm16":
        ints = _to_int16(pcm)
        wav = riff.build_wav(riff.pcm_fmt(channels, sample_rate), ints.astype("<i2").tobytes())
        return Encoded({stem + ext: wav}, ints.astype(np.float32) / 32768.0, sample_rate, codec)
    data = vag.encode_vag(pcm[:, 0], sample_rate, Path(stem).name[:16])
    decoded, _ = vag.decode_vag(data)
    return Encoded({stem + ext: data}, decoded[28:], sample_rate, codec)  # skip the silent lead-in block


def _snr_db(ref: np.ndarray, out: np.ndarray) -> float | None:
    import numpy as np

    if ref.shape[0] == 0:
        return None
    n = min(ref.shape[0], out.shape[0])
    err = float(np.sum((ref[:n].astype(np.float64) - out[:n]) ** 2))
    sig = float(np.sum(ref[:n].astype(np.float64) ** 2))
    return 10 * np.log10(max(sig, 1e-20) / max(err, 1e-20))


def _read_input(name: str, sample_rate: int | None) -> tuple[np.ndarray, int]:
    import numpy as np
    import soundfile as sf

    source: object = io.BytesIO(sys.stdin.buffer.read()) if name == "-" else name
    try:
        x, file_sample_rate = sf.read(source, dtype="float64", always_2d=True)
    except sf.LibsndfileError as exc:
        raise InputError(f"{name}: not an audio file soundfile can read ({exc})") from None
    file_sample_rate = int(file_sample_rate)
    if sample_rate is not None and sample_rate != file_sample_rate:
        from math import gcd

        from scipy.signal import resample_poly

        g = gcd(sample_rate, file_sample_rate)
        x = resample_poly(x, sample_rate // g, file_sample_rate // g, axis=0)
        file_sample_rate = sample_rate
    if not np.isfinite(x).all():
        raise InputError(f"{name}: has NaN or infinite samples")
    return x.astype(np.float32), file_sample_rate


def _run(args: argparse.Namespace) -> int:
    from audio.core.outputs import atomic_path, check_writable

    out = str(args.output)
    ext = ".xma" if out == "-" else Path(out).suffix.lower()
    codec = args.codec
    one_file = {**_STDOUT_EXT, **{name: game_codec(name).extensions[0] for name in codec_names()}}
    if out == "-":
        if codec is None or codec not in one_file:
            raise InputError(f"-o - (stdout) needs --codec {', '.join(one_file)} (one-file formats)")
        ext = one_file[codec]
    elif codec is None:
        codec = _by_extension(ext)
        if codec is None:
            games = (e for name in codec_names() for e in game_codec(name).extensions)
            known = ", ".join(sorted({*_BY_EXTENSION, *games}))
            raise InputError(f"{out}: cannot tell the format from {ext or 'no extension'!r}; use {known}")
    if ext not in _formats(codec):
        raise InputError(f"{out}: {codec} is written as {' or '.join(_formats(codec))}, not {ext!r}")
    if args.bitrate is not None and codec not in ("xma2", "ea-xma2"):
        raise InputError(f"--bitrate applies to xma2 and ea-xma2; {codec} has a fixed rate")
    if args.xma2_syntax != "microsoft" and codec not in ("xma2", "ea-xma2"):
        raise InputError(f"--xma2-syntax applies to xma2 and ea-xma2, not {codec}")
    stem = "-" if out == "-" else str(Path(out).with_suffix(""))
    if out != "-":
        if args.input != "-" and Path(args.input).resolve() in {
            Path(stem + e).resolve() for e in (ext, ".snr", ".sns")
        }:
            raise InputError(f"{out}: would overwrite the input {args.input}")
        check_writable(*(stem + e for e in ((".snr", ".sns") if ext in (".snr", ".sns") else (ext,))))
    pcm, sample_rate = _read_input(args.input, args.sample_rate)
    result = encode_file(pcm, sample_rate, codec, ext, stem, args.bitrate, args.xma2_syntax)
    if out == "-":
        sys.stdout.buffer.write(next(iter(result.files.values())))
        sys.stdout.buffer.flush()
    else:
        for name, data in result.files.items():
            with atomic_path(name) as tmp:
                tmp.write_bytes(data)
    seconds = pcm.shape[0] / sample_rate
    size = sum(len(d) for d in result.files.values())
    kbps = 8 * size / max(seconds, 1e-9) / 1000
    snr = _snr_db(pcm, result.decoded) if result.sample_rate == sample_rate else None
    snr_text = "n/a (other rate)" if snr is None else f"{snr:.2f} dB"
    names = " + ".join(result.files) if out != "-" else "stdout"
    print(
        f"{names}: {codec}, {pcm.shape[1]} ch, {sample_rate} Hz, {seconds:.3f} s, {size} bytes, "
        f"{kbps:.1f} kbit/s, SNR {snr_text}",
        file=sys.stderr if out == "-" else sys.stdout,
    )
    return 0


def _positive(kind: type) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``encode`` command."""
    p = subparsers.add_parser(
        "encode",
        help="encode audio in a game codec (XMA2, EA-XMA2, XAS1, PCM16, PS-ADPCM, the games' own)",
        description=__doc__.split("\n\n", 1)[1].replace("``", "") if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  barkbus encode line.wav -o line.xma --bitrate 64\n"
        "  barkbus encode line.wav -o take.snr --codec ea-xma2 --rate 36000\n"
        "  barkbus encode line.wav -o line.vag",
    )
    p.add_argument("input", help="audio file soundfile can read (WAV, FLAC, ...); - for stdin")
    p.add_argument(
        "-o", "--output", required=True, help="file to write (extension picks the format); - for stdout"
    )
    p.add_argument("--codec", choices=codecs(), help="codec (default: from OUT's extension)")
    p.add_argument(
        "--bitrate",
        type=_positive(float),
        help="XMA2 target, kbit/s over all channels (default 64 per channel)",
    )
    p.add_argument(
        "--xma2-syntax",
        choices=XMA2_SYNTAXES,
        default="microsoft",
        help="microsoft (default): only what Microsoft's encoder writes (4 x 128 subframes); "
        "extended: 512/256/128 subframes and sent vector counts chosen per XMA frame, about "
        "3 dB more SNR, decoded by FFmpeg but never seen in console data",
    )
    p.add_argument(
        "--rate",
        dest="sample_rate",
        metavar="HZ",
        type=_positive(int),
        help="resample to this sample rate first, Hz",
    )
    p.set_defaults(func=_run)
