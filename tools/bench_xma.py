#!/usr/bin/env python3
"""Benchmark the XMA2 encoder on speech, beside XAS1 and PS-ADPCM.

Two corpora, both the Skate demo's lines (no radio chirps) synthesised with espeak-ng at
36 kHz mono int16, concatenated:

- ``demo``: as ``tools/build_skate_demo.py`` makes them, before any codec (every line
  peak-normalised through a tanh saturation, the radio lines band-limited, driven and
  with hiss);
- ``clean``: the same lines peak-normalised linearly (no saturation, no radio processing).

In one run, per corpus:

- XMA2 at 32, 48, 64, 96 and 128 kbit/s in both syntaxes (``microsoft``, the default,
  and ``extended``): encode speed (x real time, CPU time of one core), the bitrate reached
  (whole 2048-byte packets), SNR and segmental SNR (1024-sample segments, silent ones left
  out, each clipped to -10..80 dB) of FFmpeg's decode;
- the bitrate each syntax needs for each SNR target (interpolated on the sweep in log
  bitrate, then encoded at that bitrate and measured);
- XAS1 (EA codec 4) and PS-ADPCM (VAG) at their fixed rates, same measures.

Targets (issue 23, benchmark not test): >= 35 dB at 48 kbit/s, >= 41 at 64, >= 50 at 96,
>= 20x real time.

    python tools/bench_xma.py [--voices N] [--bitrates 32,48,64,96,128] [--corpus demo,clean]
"""

from __future__ import annotations

import argparse
import os
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

from build_skate_demo import SAMPLE_RATE, TAKE_PEAK, clip_defs, synthesize
from speech_synth import speak

from audio.codecs.psadpcm import decode_psadpcm, encode_psadpcm
from audio.codecs.xas1 import decode_xas1, encode_xas1
from audio.codecs.xma import decode_xma
from audio.codecs.xma2_encoder import SYNTAXES, encode_xma2
from audio.containers.sns import coded_blocks, write_blocks

TARGETS = ((48.0, 35.0), (64.0, 41.0), (96.0, 50.0))
"""(kbit/s, SNR dB) targets of issue 23."""


def demo_speech(voices: int, clean: bool = False) -> np.ndarray:
    """The first ``voices`` voices' spoken lines (no radio chirps) as one float32 signal.

    ``clean``: espeak-ng's output peak-normalised linearly to the demo's take peak instead
    of the demo builder's saturation and radio processing.
    """
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for clip in clip_defs()[: max(1, voices) * 9]:
            if clip.line.endswith(("chirp_in", "chirp_out")):
                continue
            for k, text in enumerate(clip.texts):
                if clean:
                    y = speak(text, clip.espeak_args(k), Path(tmp), SAMPLE_RATE)
                    y = y / max(1e-9, float(np.max(np.abs(y)))) * TAKE_PEAK
                    parts.append(np.round(y * 32767.0).astype(np.int16))
                else:
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


def xma2_row(x: np.ndarray, kbps: float, syntax: str) -> tuple[float, float, float, float]:
    """(kbit/s reached, SNR dB, segmental SNR dB, x real time) of one XMA2 encode and FFmpeg decode."""
    enc, dt = timed(partial(encode_xma2, x, SAMPLE_RATE, bitrate=kbps, syntax=syntax))
    y = decode_xma(enc.streams[0], SAMPLE_RATE, 1)[:, 0]  # type: ignore[attr-defined]
    return enc.bitrate, snr_db(x, y), seg_snr_db(x, y), x.size / SAMPLE_RATE / dt  # type: ignore[attr-defined]


def needed(x: np.ndarray, curve: list[tuple[float, float]], target: float, syntax: str) -> str:
    """The bitrate ``syntax`` needs for ``target`` dB: interpolated on ``curve`` ((kbit/s, SNR)
    points, SNR linear in log bitrate), rounded up to 1 kbit/s, encoded and measured, and
    raised 1 kbit/s at a time (at most 3 times) while the SNR falls short."""
    rates = np.log([r for r, _ in curve])
    snrs = np.array([s for _, s in curve])
    order = np.argsort(snrs)
    if target > snrs.max():  # extrapolate from the last two points
        (r0, s0), (r1, s1) = sorted(curve)[-2:]
        guess = float(np.exp(np.log(r1) + (target - s1) * (np.log(r1) - np.log(r0)) / max(s1 - s0, 1e-9)))
    else:
        guess = float(np.exp(np.interp(target, snrs[order], rates[order])))
    kbps = float(np.ceil(guess))
    for _ in range(4):  # up 1 kbit/s at a time while the measured SNR falls short
        reached, snr, _, _ = xma2_row(x, kbps, syntax)
        if snr >= target:
            break
        kbps += 1
    return f"{kbps:.0f} kbit/s ({reached:.1f} reached, {snr:.2f} dB)"


def corpus_report(name: str, x: np.ndarray, bitrates: list[float]) -> None:
    """Print one corpus's table: XMA2 in both syntaxes, the bitrates the targets need, XAS1, PS-ADPCM."""
    seconds = x.size / SAMPLE_RATE
    print(f"\n{name} corpus: {seconds:.1f} s, {SAMPLE_RATE} Hz mono")
    print(f"{'codec':<28}{'kbit/s':>9}{'SNR dB':>9}{'segSNR':>9}{'x real time':>13}")
    curves: dict[str, list[tuple[float, float]]] = {}
    for kbps in bitrates:
        for syntax in SYNTAXES:
            rate, s, seg, speed = xma2_row(x, kbps, syntax)
            curves.setdefault(syntax, []).append((rate, s))
            print(f"{f'XMA2 {syntax} @ {kbps:g}':<28}{rate:>9.1f}{s:>9.2f}{seg:>9.2f}{speed:>13.1f}")
    ints = np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)
    body, dt = timed(lambda: write_blocks(encode_xas1(ints)))
    y = decode_xas1(coded_blocks(body), 1, x.size)[:, 0].astype(np.float32) / 32768  # type: ignore[arg-type]
    print(
        f"{'XAS1 (EA codec 4)':<28}{8 * len(body) / seconds / 1000:>9.1f}{snr_db(x, y):>9.2f}"  # type: ignore[arg-type]
        f"{seg_snr_db(x, y):>9.2f}{seconds / dt:>13.1f}"
    )
    frames, dt = timed(lambda: encode_psadpcm(ints))
    y = decode_psadpcm(frames, 1)[:, 0]  # type: ignore[arg-type]
    print(
        f"{'PS-ADPCM (VAG)':<28}{8 * len(frames) / seconds / 1000:>9.1f}{snr_db(x, y):>9.2f}"  # type: ignore[arg-type]
        f"{seg_snr_db(x, y):>9.2f}{seconds / dt:>13.1f}"
    )
    for kbps, target in TARGETS:
        found = ", ".join(f"{syntax} {needed(x, curves[syntax], target, syntax)}" for syntax in SYNTAXES)
        print(f"{target:g} dB (target at {kbps:g} kbit/s) needs: {found}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--voices", type=int, default=3, help="demo voices to synthesise (default 3)")
    ap.add_argument("--bitrates", default="32,48,64,96,128", help="XMA2 targets, kbit/s")
    ap.add_argument("--corpus", default="demo,clean", help="corpora to run: demo, clean or both (default)")
    args = ap.parse_args(argv)
    encode_xma2(np.zeros(4096, np.float32), SAMPLE_RATE, bitrate=64)  # compile the kernels outside the timing
    encode_xma2(np.zeros(4096, np.float32), SAMPLE_RATE, bitrate=64, syntax="extended")
    bitrates = [float(b) for b in args.bitrates.split(",")]
    print(f"{args.voices} demo voices; load average {os.getloadavg()[0]:.1f} at the start")
    for name in args.corpus.split(","):
        if name not in ("demo", "clean"):
            ap.error(f"unknown corpus {name!r} (demo, clean)")
        corpus_report(name, demo_speech(args.voices, clean=name == "clean"), bitrates)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
