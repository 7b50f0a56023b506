"""Benchmark the codecs layer: decode speed in multiples of real time.

EA-XMA (our SNS walk + FFmpeg xma2 per packet) against the same XMA through FFmpeg's
own wav demuxer (a RIFF wrapper with fmt tag 0x0166), on the real fixture's entries;
and our vectorised XAS1 decoder against pyvgmstream on a take we encode.

    python tools/bench_codecs.py [--fixture PATH] [--repeat N] [--seconds S]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import av
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_timing import best_time

from audio.codecs.eaxma import encode_eaxma
from audio.codecs.xas1 import encode_xas1
from audio.codecs.xma import xma2_extradata
from audio.containers import riff, vgmstream, xwb
from audio.containers.snr import CODEC_EAXMA, CODEC_XAS1, TYPE_STREAM, SnrHeader, decode_take
from audio.containers.sns import write_blocks

DEFAULT_FIXTURE = ROOT / ".." / "shared" / "fixtures" / "xmadroid.xwb"


def wav_demuxer_decode(wav: bytes) -> np.ndarray:
    """Decode a RIFF/WAVE through FFmpeg's demuxer to float32 (samples, channels), as our path returns."""
    with av.open(io.BytesIO(wav), format="wav") as container:
        planar = np.concatenate([f.to_ndarray() for f in container.decode(audio=0)], axis=1)
    return np.column_stack(tuple(planar))


def bench_eaxma(fixture: Path, repeat: int) -> list[tuple[str, float, float]]:
    bank = xwb.read_wavebank(fixture.read_bytes(), str(fixture))
    takes, wavs, seconds = [], [], 0.0
    for e in bank.entries:
        raw = xwb.entry_data(bank, e.index)
        packets = [raw[i : i + 2048] for i in range(0, len(raw), 2048)]
        header = SnrHeader(0, CODEC_EAXMA, e.channels, e.sample_rate, TYPE_STREAM, False, e.num_samples)
        takes.append((header.pack(), write_blocks(encode_eaxma([packets]))))
        ext = xma2_extradata(e.channels, samples_encoded=e.num_samples, block_count=-(-len(raw) // 0x10000))
        wavs.append(riff.build_wav(riff.xma2_fmt(e.channels, e.sample_rate, ext), raw))
        seconds += e.num_samples / e.sample_rate
    t_ea = best_time(lambda: [decode_take(h, b) for h, b in takes], repeat)
    t_wav = best_time(lambda: [wav_demuxer_decode(w) for w in wavs], repeat)
    return [
        ("EA-XMA (SNS walk + FFmpeg xma2)", seconds, t_ea),
        ("XMA via FFmpeg wav demuxer (0x0166)", seconds, t_wav),
    ]


def bench_xas1(seconds: float, repeat: int) -> tuple[list[tuple[str, float, float]], str]:
    sample_rate = 48000
    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    x = 9000 * np.sin(2 * np.pi * 180 * t) * np.sin(2 * np.pi * 1.3 * t) + rng.normal(0, 800, t.size)
    pcm = x.astype(np.int16)
    header = SnrHeader(0, CODEC_XAS1, 1, sample_rate, TYPE_STREAM, False, len(pcm)).pack()
    body = write_blocks(encode_xas1(pcm))
    rows = [("XAS1 (ours, numpy)", seconds, best_time(lambda: decode_take(header, body), repeat))]
    ok, reason = vgmstream.available()
    if ok:
        rows.append(
            (
                "XAS1 (pyvgmstream, incl. WAV wrap)",
                seconds,
                best_time(lambda: vgmstream.decode_take_vgmstream(header, body), repeat),
            )
        )
    return rows, reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Prints x real time (audio seconds / wall seconds) and ratios.",
    )
    parser.add_argument(
        "--fixture",
        type=Path,
        default=DEFAULT_FIXTURE,
        help="XACT wave bank with XMA2 entries (default: shared/fixtures/xmadroid.xwb)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per case; the best is kept (default 5)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="length of the synthetic XAS1 take in seconds (default 60)",
    )
    args = parser.parse_args(argv)
    groups = []
    if args.fixture.is_file():
        groups.append(("EA-XMA vs FFmpeg wav demuxer", bench_eaxma(args.fixture, args.repeat)))
    else:
        print(f"fixture not found, skipping XMA: {args.fixture}")
    xas_rows, reason = bench_xas1(args.seconds, args.repeat)
    groups.append(("XAS1 vs vgmstream", xas_rows))
    if len(xas_rows) == 1:
        print(f"vgmstream skipped: {reason}")
    print(f"{'decoder':40s} {'audio s':>9s} {'wall ms':>9s} {'x real time':>12s} {'ratio':>7s}")
    for title, rows in groups:
        print(f"-- {title}")
        base = rows[0][2]
        for name, audio_s, wall in rows:
            print(f"{name:40s} {audio_s:9.1f} {wall * 1000:9.1f} {audio_s / wall:12.0f} {wall / base:7.2f}")
    print("ratio = wall time / first row's wall time (below 1: faster than the first row)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
