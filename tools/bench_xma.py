#!/usr/bin/env python3
"""Benchmark the XMA2 encoder on the Skate demo's speech, beside XAS1 and PS-ADPCM.

The demo's lines are synthesised as ``tools/build_skate_demo.py`` makes them (espeak-ng,
36 kHz mono int16, before any codec), concatenated; then, in one run:

- XMA2 at 32, 48, 64, 96 and 128 kbit/s: encode speed (x real time, CPU time of one
  core), the bitrate reached (whole 2048-byte packets), SNR and segmental SNR (1024-sample
  segments, silent ones left out, each clipped to -10..80 dB) of FFmpeg's decode;
- XAS1 (EA codec 4) and PS-ADPCM (VAG) at their fixed rates, same measures.

Targets (issue 23, benchmark not test): >= 35 dB at 48 kbit/s, >= 41 at 64, >= 50 at 96,
>= 20x real time.

    python tools/bench_xma.py [--voices N] [--bitrates 32,48,64,96,128]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_skate_demo import RATE, clip_defs, synthesize

from audio.codecs.psadpcm import decode_psadpcm, encode_psadpcm
from audio.codecs.xas1 import decode_xas1, encode_xas1
from audio.codecs.xma import decode_xma
from audio.codecs.xma2_encoder import encode_xma2
from audio.containers.sns import coded_blocks, write_blocks


def demo_speech(voices: int) -> np.ndarray:
    """The first ``voices`` voices' spoken lines (no radio chirps) as one float32 signal."""
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for clip in clip_defs()[: max(1, voices) * 9]:
            if clip.line.endswith(("chirp_in", "chirp_out")):
                continue
            for k, text in enumerate(clip.texts):
                parts.append(synthesize(text, clip.espeak_args(k), Path(tmp), radio=clip.line == "Radio"))
    return (np.concatenate(parts).astype(np.float32) / 32768.0) if parts else np.zeros(0, np.float32)


def snr_db(x: np.ndarray, y: np.ndarray) -> float:
    n = min(x.size, y.size)
    err = float(np.sum((x[:n].astype(np.float64) - y[:n]) ** 2))
    return 10 * np.log10(float(np.sum(x[:n].astype(np.float64) ** 2)) / max(err, 1e-20))


def seg_snr_db(x: np.ndarray, y: np.ndarray, seg: int = 1024) -> float:
    n = min(x.size, y.size) // seg * seg
    a = x[:n].astype(np.float64).reshape(-1, seg)
    e = a - y[:n].reshape(-1, seg)
    s = 10 * np.log10((a**2).sum(1) + 1e-12) - 10 * np.log10((e**2).sum(1) + 1e-12)
    keep = (a**2).mean(1) > 1e-5
    return float(np.mean(np.clip(s[keep], -10, 80))) if keep.any() else float("nan")


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--voices", type=int, default=3, help="demo voices to synthesise (default 3)")
    ap.add_argument("--bitrates", default="32,48,64,96,128", help="XMA2 targets, kbit/s")
    ap.add_argument(
        "--flat",
        action="store_true",
        help="also encode with flat scale factors (shaping 0: the SNR-optimal setting, not the default)",
    )
    args = ap.parse_args(argv)
    x = demo_speech(args.voices)
    seconds = x.size / RATE
    print(f"demo speech: {seconds:.1f} s, {RATE} Hz mono ({args.voices} voices)")
    encode_xma2(x[:4096], RATE, bitrate=64)  # compile the kernels outside the timing
    rows = []
    for shaping in (None, 0.0) if args.flat else (None,):
        extra = {} if shaping is None else {"shaping": shaping}
        for kbps in (float(b) for b in args.bitrates.split(",")):
            enc, dt = timed(partial(encode_xma2, x, RATE, bitrate=kbps, **extra))
            y = decode_xma(enc.streams[0], RATE, 1)[:, 0]  # type: ignore[attr-defined]
            label = f"XMA2 @ {kbps:g}" + ("" if shaping is None else " flat")
            rows.append((label, enc.bitrate, snr_db(x, y), seg_snr_db(x, y), seconds / dt))  # type: ignore[attr-defined]
    ints = np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)
    body, dt = timed(lambda: write_blocks(encode_xas1(ints)))
    y = decode_xas1(coded_blocks(body), 1, x.size)[:, 0].astype(np.float32) / 32768  # type: ignore[arg-type]
    rows.append(
        ("XAS1 (EA codec 4)", 8 * len(body) / seconds / 1000, snr_db(x, y), seg_snr_db(x, y), seconds / dt)
    )  # type: ignore[arg-type]
    frames, dt = timed(lambda: encode_psadpcm(ints))
    y = decode_psadpcm(frames, 1)[:, 0]  # type: ignore[arg-type]
    rows.append(
        ("PS-ADPCM (VAG)", 8 * len(frames) / seconds / 1000, snr_db(x, y), seg_snr_db(x, y), seconds / dt)
    )  # type: ignore[arg-type]
    print(f"{'codec':<20}{'kbit/s':>9}{'SNR dB':>9}{'segSNR':>9}{'x real time':>13}")
    for name, rate, s, seg, speed in rows:
        print(f"{name:<20}{rate:>9.1f}{s:>9.2f}{seg:>9.2f}{speed:>13.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
