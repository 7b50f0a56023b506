"""Benchmark Starlancer's ``.ut`` speech codec: decode and encode speed in multiples of real time.

The input is espeak-ng speech (tools/speech_synth.py) repeated to ``--seconds``, or, without
espeak-ng, a deterministic vowel-like signal (pulse train through resonances). Compilation
(numba, cached) is done before timing.

    python tools/bench_ut.py [--seconds S] [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_timing import best_time

from audio.games.starlancer.formats.ut import decode_ut_int16, encode_ut

SAMPLE_RATE = 22050
TEXT = "Alpha wing, form up on me. Enemy fighters inbound, break and attack."


def speech(seconds: float) -> tuple[np.ndarray, str]:
    """int16 mono speech at 22,050 Hz, ``seconds`` long, and where it came from."""
    if shutil.which("espeak-ng"):
        sys.path.insert(0, str(ROOT / "tools"))
        from speech_synth import speak

        with tempfile.TemporaryDirectory() as tmp:
            x = speak(TEXT, ["-v", "en-us"], Path(tmp), SAMPLE_RATE)
        src = "espeak-ng"
    else:
        from scipy.signal import lfilter

        t = np.zeros(int(SAMPLE_RATE * 2.0))
        t[:: SAMPLE_RATE // 120] = 1.0
        x = lfilter([1.0], [1.0, -1.3, 0.8], t)
        src = "synthetic vowel"
    x = np.tile(x, int(np.ceil(seconds * SAMPLE_RATE / x.size)))[: int(seconds * SAMPLE_RATE)]
    return np.rint(x / np.abs(x).max() * 0.7 * 32767).astype(np.int16), src


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of the test line (s)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    args = ap.parse_args(argv)
    pcm, src = speech(args.seconds)
    dur = pcm.size / SAMPLE_RATE
    decode_ut_int16(encode_ut(pcm[:SAMPLE_RATE]))  # compile (or load the numba cache)
    t0 = time.perf_counter()
    data = encode_ut(pcm)
    enc = time.perf_counter() - t0
    dec = best_time(lambda: decode_ut_int16(data), args.repeat)
    out = decode_ut_int16(data).astype(np.float64)
    ref = pcm.astype(np.float64)
    snr = 10 * np.log10(np.sum(ref**2) / np.sum((ref - out) ** 2))
    print(
        f"input: {src}, {dur:.1f} s at {SAMPLE_RATE} Hz; file {len(data)} bytes "
        f"({(len(data) - 12) * 8 / dur / 1000:.1f} kbit/s), waveform SNR {snr:.2f} dB"
    )
    print(f"decode: {dur / dec:8.1f} x real time ({dec * 1000:.1f} ms)")
    print(f"encode: {dur / enc:8.1f} x real time ({enc:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
