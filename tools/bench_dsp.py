#!/usr/bin/env python3
"""Benchmark: N voices through the full Skate stream-voice chain plus an echo submix each.

Side by side in one run, three implementations of the same per-voice work
(resample 36 -> 48 kHz, PEAK, echo send -> HPF -> distance delay -> LPF, gain, HPF, LPF,
environment send, pan to stereo, mix):

* barkbus   -- the engine's batched numba kernels (graphs/skate_stream_voice.toml +
               graphs/skate_echo_submix.toml), one call per node per block for all voices;
* scipy     -- a per-voice ``scipy.signal.sosfilt`` chain with carried state;
* pedalboard -- a per-voice pedalboard chain (PeakFilter, filters, Delay, Gain).

Prints ms per 256-sample block, real-time voices per core (how many voices one core could
run in real time at this cost), the ratios to barkbus, and the peak RSS of each run (each
N and implementation runs in its own process). Target: 256 voices <= 2.67 ms per block
(50 % of one core) and < 200 MB RSS.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

SR = 48_000
RATE = 36_000
BUDGET_MS = 256 / SR * 1000


def _source(seconds: float = 12.0) -> np.ndarray:
    rng = np.random.default_rng(0)
    return (0.1 * rng.standard_normal(int(RATE * seconds))).astype(np.float32)


def run_barkbus(n: int, block: int, min_seconds: float) -> float:
    from audio.core.engine import Engine
    e = Engine(block=block, voice_budget=n, voice_headroom=0, submix_slots=n, start_silence=0)
    src = _source()
    for i in range(n):
        e.voices.start("skate_stream_voice", src, RATE, slot=i, params={
            "PI20.centre_hz": 1800.0 + i, "PI20.gain": 0.3, "PI20.q": 3.0, "Sen0_echo.level": 0.3,
            "Gai0.gain": 0.8, "HI20.cutoff_hz": 120.0, "LI20.cutoff_hz": 9000.0, "Sen0_env.level": 0.2,
            "Pn21.angle_deg": (i * 37) % 360})
        e.mixer.set_submix("skate_echo_submix", i, **{"HI20.cutoff_hz": 200.0, "LI20.cutoff_hz": 6000.0,
                                                        "Del0.seconds": 0.01 + (i % 10) * 0.01})
    e.render(block * 8)  # compile + warm up
    return _time(lambda: e.render(block), min_seconds)


def _time(fn, min_seconds: float) -> float:
    count, t0 = 0, time.perf_counter()
    while True:
        fn()
        count += 1
        el = time.perf_counter() - t0
        if el >= min_seconds and count >= 5:
            return el / count * 1000.0


def _lerp(src: np.ndarray, pos: float, step: float, idx: np.ndarray) -> np.ndarray:
    """Linear-interpolation resampling of one block (the peers' equivalent of Rsp0)."""
    p = (pos + idx * step) % (src.shape[0] - 1)
    i = p.astype(np.int64)
    f = p - i
    return src[i] * (1 - f) + src[i + 1] * f


def _biquads():
    from audio.dsp.filters import highpass, lowpass, peaking
    def sos(*ba):
        return np.array([np.concatenate([b, a]) for b, a in ba])
    return (sos(peaking(1800.0, 0.3, 3.0)), sos(highpass(120.0), lowpass(9000.0)),
            sos(highpass(200.0)), sos(lowpass(6000.0)))


def run_scipy(n: int, block: int, min_seconds: float) -> float:
    from scipy import signal
    peak, main, ehp, elp = _biquads()
    src = _source()
    step = RATE / SR
    voices = []
    for i in range(n):
        voices.append({"pos": 0.0, "zp": np.zeros((1, 2)), "zm": np.zeros((2, 2)), "zh": np.zeros((1, 2)),
                       "zl": np.zeros((1, 2)), "dl": np.zeros(8192, np.float32), "w": 0,
                       "d": int((0.01 + (i % 10) * 0.01) * SR), "g": np.array([0.7, 0.7])})
    out = np.zeros((2, block))
    env = np.zeros(block)
    idx = np.arange(block)

    def one_block():
        out[:] = 0
        env[:] = 0
        for v in voices:
            x = _lerp(src, v["pos"], step, idx)
            v["pos"] += block * step
            x, v["zp"] = signal.sosfilt(peak, x, zi=v["zp"])
            e, v["zh"] = signal.sosfilt(ehp, 0.3 * x, zi=v["zh"])
            w = (v["w"] + idx) % 8192
            v["dl"][w] = e
            e = v["dl"][(w - v["d"]) % 8192]
            v["w"] = (v["w"] + block) % 8192
            e, v["zl"] = signal.sosfilt(elp, e, zi=v["zl"])
            y, v["zm"] = signal.sosfilt(main, 0.8 * x, zi=v["zm"])
            env[:] += 0.2 * y + e
            out[:] += v["g"][:, None] * y
    one_block()
    return _time(one_block, min_seconds)


def run_pedalboard(n: int, block: int, min_seconds: float) -> float:
    import pedalboard as pb
    src = _source()
    step = RATE / SR
    idx = np.arange(block)
    voices = []
    for i in range(n):
        voices.append({
            "pos": 0.0,
            "peak": pb.Pedalboard([pb.PeakFilter(1800.0, 20 * np.log10(0.3), 3.0)]),
            "main": pb.Pedalboard([pb.Gain(20 * np.log10(0.8)), pb.HighpassFilter(120.0), pb.LowpassFilter(9000.0)]),
            "echo": pb.Pedalboard([pb.HighpassFilter(200.0), pb.Delay(0.01 + (i % 10) * 0.01, 0.0, 1.0),
                                   pb.LowpassFilter(6000.0)]),
            "g": np.array([0.7, 0.7], np.float32)})
    out = np.zeros((2, block), np.float32)
    env = np.zeros(block, np.float32)

    def one_block():
        out[:] = 0
        env[:] = 0
        for v in voices:
            x = _lerp(src, v["pos"], step, idx).astype(np.float32)[None, :]
            v["pos"] += block * step
            x = v["peak"](x, SR, reset=False)
            e = v["echo"](0.3 * x, SR, reset=False)
            y = v["main"](x, SR, reset=False)
            env[:] += 0.2 * y[0] + e[0]
            out[:] += v["g"][:, None] * y[0]
    one_block()
    return _time(one_block, min_seconds)


IMPLS = {"barkbus": run_barkbus, "scipy": run_scipy, "pedalboard": run_pedalboard}


def child(impl: str, n: int, block: int, min_seconds: float) -> None:
    ms = IMPLS[impl](n, block, min_seconds)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"impl": impl, "n": n, "ms": ms, "rss_mb": rss_mb}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--voices", type=int, nargs="+", default=[1, 16, 64, 256, 1024], help="voice counts N")
    ap.add_argument("--impls", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    ap.add_argument("--block", type=int, default=256, help="block size in samples (default 256)")
    ap.add_argument("--seconds", type=float, default=1.5, help="minimum timed seconds per run")
    ap.add_argument("--peer-max", type=int, default=256, help="skip peers above this N (they are slow)")
    ap.add_argument("--child", nargs=2, metavar=("IMPL", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), args.block, args.seconds)
        return 0
    budget = args.block / SR * 1000
    print(f"block {args.block} samples = {budget:.2f} ms budget; one process per run; times are per block")
    print(f"{'N':>5} {'impl':>11} {'ms/block':>9} {'% core':>7} {'RT voices/core':>15} {'x barkbus':>10} {'RSS MB':>7}")
    ok = True
    for n in args.voices:
        base = None
        for impl in args.impls:
            if impl != "barkbus" and n > args.peer_max:
                print(f"{n:>5} {impl:>11} {'skipped (N > --peer-max)':>40}")
                continue
            proc = subprocess.run([sys.executable, __file__, "--child", impl, str(n), "--block", str(args.block),
                                   "--seconds", str(args.seconds)], capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{n:>5} {impl:>11} failed: {proc.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            ms = r["ms"]
            if impl == "barkbus":
                base = ms
            ratio = f"{ms / base:.1f}x" if base else "-"
            print(f"{n:>5} {impl:>11} {ms:>9.3f} {100 * ms / budget:>6.1f}% {n * budget / ms:>15.0f} "
                  f"{ratio:>10} {r['rss_mb']:>7.0f}")
            if impl == "barkbus" and n == 256:
                ok = ms <= budget / 2 and r["rss_mb"] < 200
    print("target (256 voices <= 50 % of a core, < 200 MB):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
