"""``barkbus encode``: one command for every codec barkbus can write.

The output format follows OUT's extension where that is enough (``.xma``/``.wav``: RIFF
WAVE XMA2; ``.snr``/``.sns``: an EA SNR header + SNS body pair; ``.vag``: PS-ADPCM;
``.ut``: Starlancer); ``--codec`` picks otherwise (``.wav`` + ``pcm16`` = 16-bit PCM;
``.snr`` + ``xas1``/``pcm16`` = EA codec 4/2). A summary line gives the size, the
bitrate and the SNR of the written file decoded by barkbus's own decoders against the
input.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from audio.codecs.eaxma import split_streams
from audio.codecs.pcm import decode_pcm16be, encode_pcm16be
from audio.codecs.xas1 import decode_xas1, encode_xas1
from audio.codecs.xma2_decoder import decode_xma2
from audio.codecs.xma2_encoder import encode_xma2
from audio.containers import riff, vag
from audio.containers.snr import CODEC_PCM16BE, CODEC_XAS1, TYPE_STREAM, SnrHeader, eaxma_take
from audio.containers.sns import coded_blocks, write_blocks
from audio.core.errors import InputError
from audio.games.starlancer.formats.ut import decode_ut, encode_ut
from audio.core.outputs import atomic_path, check_writable

__all__ = ["CODECS", "register", "encode_file"]

CODECS = ("xma2", "ea-xma2", "xas1", "pcm16", "ps-adpcm", "ut")
_BY_EXTENSION = {
    ".xma": "xma2",
    ".wav": "xma2",
    ".snr": "ea-xma2",
    ".sns": "ea-xma2",
    ".vag": "ps-adpcm",
    ".ut": "ut",
}
_FORMATS = {  # codec -> extensions it can be written as
    "xma2": (".xma", ".wav"),
    "ea-xma2": (".snr", ".sns"),
    "xas1": (".snr", ".sns"),
    "pcm16": (".wav", ".snr", ".sns"),
    "ps-adpcm": (".vag",),
    "ut": (".ut",),
}
_STDOUT_EXT = {"xma2": ".xma", "pcm16": ".wav", "ps-adpcm": ".vag", "ut": ".ut"}


@dataclass(frozen=True)
class Encoded:
    """What :func:`encode_file` wrote: files (name -> bytes), the decoded result, its rate."""

    files: dict[str, bytes]
    decoded: np.ndarray
    rate: int
    codec: str


def _to_int16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def _ea_pair(stem: str, header: bytes, body: bytes) -> dict[str, bytes]:
    return {stem + ".snr": header, stem + ".sns": body}


def encode_file(
    pcm: np.ndarray, rate: int, codec: str, ext: str, stem: str, bitrate: float | None
) -> Encoded:
    """Encode float ``pcm`` (samples, channels) at ``rate`` Hz as ``codec`` in the ``ext`` format."""
    channels = pcm.shape[1]
    n = pcm.shape[0]
    if codec in ("ps-adpcm", "ut") and channels != 1:
        raise InputError(f"{codec} is mono; the input has {channels} channels (mix it down first)")
    if codec == "xma2":
        if channels > 2:
            raise InputError(f"a RIFF XMA2 file here holds 1 or 2 channels, not {channels} (use ea-xma2)")
        enc = encode_xma2(pcm, rate, bitrate=bitrate or 64.0 * channels)
        wav = riff.xma2_wav(enc.streams[0], channels, rate, n, enc.seek_table())
        return Encoded({stem + ext: wav}, decode_xma2(enc.streams[0], rate, channels), rate, codec)
    if codec == "ea-xma2":
        enc = encode_xma2(pcm, rate, bitrate=bitrate or 64.0 * channels)
        header, body = eaxma_take(enc.streams, channels, rate, n)
        parts = [
            decode_xma2([p for _, p in packets], rate, ch)
            for packets, ch in zip(split_streams(coded_blocks(body), channels), enc.stream_channels)
        ]
        return Encoded(_ea_pair(stem, header, body), np.concatenate(parts, axis=1), rate, codec)
    if codec == "xas1" or codec == "pcm16" and ext != ".wav":
        number, writer = (CODEC_XAS1, encode_xas1) if codec == "xas1" else (CODEC_PCM16BE, encode_pcm16be)
        body = write_blocks(writer(_to_int16(pcm)))
        header = SnrHeader(0, number, channels, rate, TYPE_STREAM, False, n).pack()
        reader: Callable[..., np.ndarray] = decode_xas1 if codec == "xas1" else decode_pcm16be
        decoded = reader(coded_blocks(body), channels, n).astype(np.float32) / 32768.0
        return Encoded(_ea_pair(stem, header, body), decoded, rate, codec)
    if codec == "pcm16":
        ints = _to_int16(pcm)
        wav = riff.build_wav(riff.pcm_fmt(channels, rate), ints.astype("<i2").tobytes())
        return Encoded({stem + ext: wav}, ints.astype(np.float32) / 32768.0, rate, codec)
    if codec == "ps-adpcm":
        data = vag.encode_vag(pcm[:, 0], rate, Path(stem).name[:16])
        decoded, _ = vag.decode_vag(data)
        return Encoded({stem + ext: data}, decoded[28:], rate, codec)  # skip the silent lead-in frame
    data = encode_ut(pcm[:, 0], rate)
    return Encoded({stem + ext: data}, decode_ut(data).reshape(-1, 1), 22050, codec)


def _snr_db(ref: np.ndarray, out: np.ndarray) -> float | None:
    if ref.shape[0] == 0:
        return None
    n = min(ref.shape[0], out.shape[0])
    err = float(np.sum((ref[:n].astype(np.float64) - out[:n]) ** 2))
    sig = float(np.sum(ref[:n].astype(np.float64) ** 2))
    return 10 * np.log10(max(sig, 1e-20) / max(err, 1e-20))


def _read_input(name: str, rate: int | None) -> tuple[np.ndarray, int]:
    import soundfile as sf

    source: object = io.BytesIO(sys.stdin.buffer.read()) if name == "-" else name
    try:
        x, sr = sf.read(source, dtype="float64", always_2d=True)
    except sf.LibsndfileError as exc:
        raise InputError(f"{name}: not an audio file soundfile can read ({exc})") from None
    sr = int(sr)
    if rate is not None and rate != sr:
        from math import gcd

        from scipy.signal import resample_poly

        g = gcd(rate, sr)
        x = resample_poly(x, rate // g, sr // g, axis=0)
        sr = rate
    if not np.isfinite(x).all():
        raise InputError(f"{name}: has NaN or infinite samples")
    return x.astype(np.float32), sr


def _run(args: argparse.Namespace) -> int:
    out = str(args.output)
    ext = ".xma" if out == "-" else Path(out).suffix.lower()
    codec = args.codec
    if out == "-":
        if codec is None or codec not in _STDOUT_EXT:
            raise InputError("-o - (stdout) needs --codec xma2, pcm16, ps-adpcm or ut (one-file formats)")
        ext = _STDOUT_EXT[codec]
    elif codec is None:
        codec = _BY_EXTENSION.get(ext)
        if codec is None:
            known = ", ".join(sorted(_BY_EXTENSION))
            raise InputError(f"{out}: cannot tell the format from {ext or 'no extension'!r}; use {known}")
    if ext not in _FORMATS[codec]:
        raise InputError(f"{out}: {codec} is written as {' or '.join(_FORMATS[codec])}, not {ext!r}")
    if args.bitrate is not None and codec not in ("xma2", "ea-xma2"):
        raise InputError(f"--bitrate applies to xma2 and ea-xma2; {codec} has a fixed rate")
    stem = "-" if out == "-" else str(Path(out).with_suffix(""))
    if out != "-":
        if args.input != "-" and Path(args.input).resolve() in {
            Path(stem + e).resolve() for e in (ext, ".snr", ".sns")
        }:
            raise InputError(f"{out}: would overwrite the input {args.input}")
        check_writable(*(stem + e for e in ((".snr", ".sns") if ext in (".snr", ".sns") else (ext,))))
    pcm, rate = _read_input(args.input, args.rate)
    result = encode_file(pcm, rate, codec, ext, stem, args.bitrate)
    if out == "-":
        sys.stdout.buffer.write(next(iter(result.files.values())))
        sys.stdout.buffer.flush()
    else:
        for name, data in result.files.items():
            with atomic_path(name) as tmp:
                tmp.write_bytes(data)
    seconds = pcm.shape[0] / rate
    size = sum(len(d) for d in result.files.values())
    kbps = 8 * size / max(seconds, 1e-9) / 1000
    snr = _snr_db(pcm, result.decoded) if result.rate == rate else None
    snr_text = "n/a (other rate)" if snr is None else f"{snr:.2f} dB"
    names = " + ".join(result.files) if out != "-" else "stdout"
    print(
        f"{names}: {codec}, {pcm.shape[1]} ch, {rate} Hz, {seconds:.3f} s, {size} bytes, "
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
        help="encode audio in a game codec (XMA2, EA-XMA2, XAS1, PCM16, PS-ADPCM, .ut)",
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
    p.add_argument("--codec", choices=CODECS, help="codec (default: from OUT's extension)")
    p.add_argument(
        "--bitrate",
        type=_positive(float),
        help="XMA2 target, kbit/s over all channels (default 64 per channel)",
    )
    p.add_argument("--rate", type=_positive(int), help="resample to this rate first, Hz")
    p.set_defaults(func=_run)
