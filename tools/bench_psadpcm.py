"""Benchmark PS-ADPCM: our numba decoder (and encoder) against pyvgmstream, in multiples of real time.

A synthetic voice-like signal is encoded to a ``.vag`` by our encoder; both decoders read
the same file (ours: :func:`decode_vag`, float32; vgmstream: :func:`decode_buffer`,
int16 through a WAV in memory). The number of differing samples is printed too.

    python tools/bench_psadpcm.py [--seconds S] [--rate HZ] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_timing import best_time

from audio.codecs.psadpcm import encode_psadpcm
from audio.containers import vgmstream
from audio.containers.vag import decode_vag, encode_vag


def voice_like(n: int, sample_rate: int) -> np.ndarray:
    """A 120 Hz buzz with a moving formant and pauses, float64 within +-0.6."""
    t = np.arange(n) / sample_rate
    buzz = np.sign(np.sin(2 * np.pi * 120 * t)) * np.sin(2 * np.pi * (500 + 300 * np.sin(3 * t)) * t)
    gate = np.sin(2 * np.pi * 1.7 * t) > -0.4
    return 0.6 * buzz * gate + np.random.default_rng(0).normal(0, 0.01, n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="audio length in seconds (default 60)")
    ap.add_argument(
        "--rate",
        dest="sample_rate",
        metavar="HZ",
        type=int,
        default=22050,
        help="sample rate in Hz (default 22050)",
    )
    ap.add_argument("--repeat", type=int, default=5, help="runs per measurement, best kept (default 5)")
    args = ap.parse_args(argv)
    n = int(args.seconds * args.sample_rate)
    x = voice_like(n, args.sample_rate)
    encode_psadpcm(x[:280])  # compile (or load the numba cache)
    t_enc = best_time(lambda: encode_psadpcm(x), max(1, args.repeat // 2))
    data = encode_vag(x, args.sample_rate, "bench")
    decode_vag(data)
    t_ours = best_time(lambda: decode_vag(data), args.repeat)
    print(f"PS-ADPCM, {args.seconds:g} s at {args.sample_rate} Hz mono ({len(data)} bytes)")
    print(f"  our encoder        {t_enc * 1e3:9.1f} ms  {args.seconds / t_enc:10.0f}x real time")
    print(f"  our decoder        {t_ours * 1e3:9.1f} ms  {args.seconds / t_ours:10.0f}x real time")
    ok, reason = vgmstream.available()
    if not ok:
        print(f"  pyvgmstream: skipped ({reason})")
        return 0
    t_vgm = best_time(lambda: vgmstream.decode_buffer(data, "bench.vag"), args.repeat)
    print(f"  pyvgmstream        {t_vgm * 1e3:9.1f} ms  {args.seconds / t_vgm:10.0f}x real time")
    print(f"  ratio              ours is {t_vgm / t_ours:.2f}x the speed of pyvgmstream")
    ours = np.round(decode_vag(data)[0] * 32768).astype(np.int16)
    theirs, _ = vgmstream.decode_buffer(data, "bench.vag")
    print(f"  differing samples  {int(np.count_nonzero(ours != theirs))} of {ours.size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
