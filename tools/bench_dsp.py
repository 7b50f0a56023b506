#!/usr/bin/env python3
"""Benchmark: N voices through the full Skate stream-voice chain plus an echo submix each.

Side by side in one run, three implementations of the same per-voice work
(resample 36 -> 48 kHz, PEAK, echo send -> HPF -> distance delay -> LPF, gain, HPF, LPF,
environment send, pan to stereo, mix):

* barkbus    -- the engine's fused kernels (graphs/skate_stream_voice.toml +
                graphs/skate_echo_submix.toml): one compiled call per graph per block;
* bb-nodes   -- the same engine on its node-by-node path (one call per node; the oracle);
* scipy      -- a per-voice ``scipy.signal.sosfilt`` chain with carried state;
* pedalboard -- a per-voice pedalboard chain (PeakFilter, filters, Delay, Gain).

Prints CPU ms per 256-sample block (process CPU time, so a shared machine does not skew the
ratios), real-time voices per core (how many voices one core could run in real time at this
cost), the ratios to barkbus, and the peak RSS of each run (each N and implementation runs in
its own process). Targets at 256 voices (issue 25): >= 30x the pedalboard chain and >= 8,000
real-time voices per core. ``--profile`` adds where the time goes: per node (node path),
per graph (fused), per voice-sample, against the arithmetic count. ``--stages`` times each
statement of the fused kernels' group loop in place (the CPU's cycle counter read around it,
in a copy of the generated source), so a stage's cost includes the cache state the stages
before it leave; the least over many short windows is kept, which a shared machine disturbs
less than a total.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SAMPLE_RATE = 48_000
SRC_SAMPLE_RATE = 36_000
BUDGET_MS = 256 / SAMPLE_RATE * 1000
ROOT = Path(__file__).resolve().parents[1]


def _source(seconds: float = 12.0) -> np.ndarray:
    rng = np.random.default_rng(0)
    return (0.1 * rng.standard_normal(int(SRC_SAMPLE_RATE * seconds))).astype(np.float32)


METERS = False
"""``--meters``: the engines keep the voices' and submix slots' output rows for meters, as the
live player's TUI and profiler do (off, as renders and batch runs are, the fused pans skip
storing them)."""


def _engine(n: int, block: int, game_banks: bool = False):
    from audio.core.engine import Engine, EngineConfig

    if game_banks:
        cfg = EngineConfig()
        sizes = dict(voice_budget=max(n, cfg.voice_budget), voice_headroom=cfg.voice_headroom)
        sizes["submix_slots"] = max(n, cfg.submix_slots)
    else:
        sizes = dict(voice_budget=n, voice_headroom=0, submix_slots=n)
    if METERS and "meters" in EngineConfig.__dataclass_fields__:  # a tree before them always kept the rows
        sizes["meters"] = True
    e = Engine(block=block, start_silence=0, **sizes)
    src = _source()
    for i in range(n):
        e.voices.start(
            "skate_stream_voice",
            src,
            SRC_SAMPLE_RATE,
            slot=i,
            params={
                "PI20.centre_hz": 1800.0 + i,
                "PI20.gain": 0.3,
                "PI20.q": 3.0,
                "Sen0_echo.level": 0.3,
                "Gai0.gain": 0.8,
                "HI20.cutoff_hz": 120.0,
                "LI20.cutoff_hz": 9000.0,
                "Sen0_env.level": 0.2,
                "Pn21.angle_deg": (i * 37) % 360,
            },
        )
        e.mixer.set_submix(
            "skate_echo_submix",
            i,
            **{"HI20.cutoff_hz": 200.0, "LI20.cutoff_hz": 6000.0, "Del0.seconds": 0.01 + (i % 10) * 0.01},
        )
    e.render(block * 8)  # compile + warm up
    return e


def run_barkbus(n: int, block: int, min_seconds: float, game_banks: bool = False) -> float:
    """CPU ms per block, timed only while every voice still plays: the sources last 12 s and an
    ended voice leaves its bank (the engine's idle skipping), so each fresh engine is timed for
    at most 10 s of audio, and engines are built until ``min_seconds`` of CPU are timed."""
    spent, calls = 0.0, 0
    while spent < min_seconds or calls < 5:
        e = _engine(n, block, game_banks)
        window = int(10 * SAMPLE_RATE / block) - 8
        t0 = time.process_time()
        for _ in range(window):
            e.render(block)
            calls += 1
            if spent + time.process_time() - t0 >= min_seconds and calls >= 5:
                break
        spent += time.process_time() - t0
    return spent / calls * 1000.0


# float operations per voice-sample of each node in this chain (biquad: 2 + 4 fma; send:
# multiply + add per channel (+ the 1/sqrt 2 multiply for mono -> stereo); pan: one multiply per channel)
OPS = {"Rsp0": 4, "PI20": 6, "HI20": 6, "LI20": 6, "Gai0": 1, "Del0": 0, "Sub0": 0, "Pn21": 2}


def profile(n: int, block: int, min_seconds: float, game_banks: bool) -> None:
    """Where the time goes: per node on the node path, per graph fused, per voice-sample."""

    e = _engine(n, block, game_banks)
    m = e.mixer
    vs = n * block
    t = [10**7]

    def step(fn):
        def run():
            t[0] += block
            fn(t[0])

        return run

    whole = _time(lambda: e.render(block), min(min_seconds, 0.5))  # first: while every voice plays
    print(f"{n} voices x {block} samples = {vs} voice-samples per block")
    print(f"{'graph':>20} {'node':>10} {'ms/block':>9} {'ns/v-sample':>12} {'ops/v-sample':>13}")
    total_ops = 0
    for bank in (m.voice_banks["skate_stream_voice"], m.submix_banks["skate_echo_submix"]):
        fused_ms = _time(step(lambda t0, b=bank: b.process(block, t0)), min_seconds)
        node_sum = 0.0
        for node in bank.nodes:
            fn = lambda t0, b=bank, nd=node: nd.run(b.act, block, t0)  # noqa: E731
            ms = _time(step(fn), min_seconds / 4)
            node_sum += ms
            ops = OPS.get(node.kind, 0)
            if node.kind == "Sen0":
                ops = 2 * node.target.shape[1] + (
                    1 if node.inp.shape[1] == 1 and node.target.shape[1] > 1 else 0
                )
            total_ops += ops
            print(
                f"{bank.spec.name[:20]:>20} {node.spec.id[:10]:>10} {ms:>9.3f} "
                f"{ms * 1e6 / vs:>12.2f} {ops:>13}"
            )
        print(f"{bank.spec.name[:20]:>20} {'nodes sum':>10} {node_sum:>9.3f} {node_sum * 1e6 / vs:>12.2f}")
        print(f"{bank.spec.name[:20]:>20} {'FUSED':>10} {fused_ms:>9.3f} {fused_ms * 1e6 / vs:>12.2f}")
    print(f"{'whole engine block':>31} {whole:>9.3f} {whole * 1e6 / vs:>12.2f} {total_ops:>13}")
    print(
        f"arithmetic: {total_ops} float ops per voice-sample; at 16 float32 lanes x 2 FMA ports per cycle "
        f"(~2.6 GHz) that is {total_ops / (16 * 2 * 2.6):.2f} ns per voice-sample"
    )


def _cycle_counter():
    """A numba intrinsic reading the CPU's cycle counter (``llvm.readcyclecounter``)."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def cycles(typingctx):
        def codegen(context, builder, signature, args):
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter"
            )
            return builder.call(fn, [])

        return types.int64(), codegen

    return cycles


def _instrumented(src: str) -> tuple[str, list[str]]:
    """The generated source with every statement of the group loop (indent 8, with its nested
    block and its ``elif``/``else`` branches) wrapped in cycle-counter reads that add into
    ``TT[k]``; and each statement's text."""
    lines = src.split("\n")
    out: list[str] = []
    labels: list[str] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        i += 1
        if ln.startswith("def fused("):
            out.append(ln.replace("):", ", TT):"))
            continue
        top = ln.startswith(" " * 8) and not ln.startswith(" " * 9)
        if not top or ln.strip().startswith(("m = ", "w = ")):
            out.append(ln.replace("cache=True", "cache=False"))
            continue
        block = [ln]
        while i < len(lines) and (
            lines[i].startswith(" " * 9) or lines[i].startswith(("        else:", "        elif "))
        ):
            block.append(lines[i])
            i += 1
        out += ["        T_ = CYCLES()", *block, f"        TT[{len(labels)}] += CYCLES() - T_"]
        labels.append(" ".join(part.strip() for part in block))
    return "\n".join(out), labels


def stages(n: int, block: int, min_seconds: float, game_banks: bool) -> None:
    """Where the fused kernels' time goes, statement by statement of their group loop."""
    import types as pytypes

    from audio.dsp import fused as F

    e = _engine(n, block, game_banks)
    m = e.mixer
    import numba

    cycles = _cycle_counter()
    read = numba.njit(lambda: cycles())
    read()  # compile
    t0, c0 = time.perf_counter(), read()
    while time.perf_counter() - t0 < 0.2:
        pass
    ghz = (read() - c0) / (time.perf_counter() - t0) / 1e9
    vs = n * block
    print(f"{n} voices x {block} samples; cycle counter {ghz:.2f} GHz (ticks); least of 8-block windows")
    for bank in (m.voice_banks["skate_stream_voice"], m.submix_banks["skate_echo_submix"]):
        plan = bank.prepare_fused()
        src, _, fetch = F.graph_source(bank, plan, F.lanes_module().__name__)
        code, labels = _instrumented(src)
        mod = pytypes.ModuleType(f"stages_{bank.spec.name}")
        mod.__dict__["CYCLES"] = cycles
        exec(compile(code, mod.__name__, "exec"), mod.__dict__)
        args = tuple(g(bank) for g in fetch)
        tt = np.zeros(len(labels), np.int64)
        t = 10**7
        mod.fused(bank.act, block, t, float(SAMPLE_RATE), *args, tt)
        best = None
        end = time.process_time() + min_seconds
        while time.process_time() < end:
            tt[:] = 0
            for _ in range(8):
                t += block
                mod.fused(bank.act, block, t, float(SAMPLE_RATE), *args, tt)
            if best is None or tt.sum() < best.sum():
                best = tt.copy()
        assert best is not None
        per = best / (8 * vs)
        print(f"{bank.spec.name}: {per.sum() / ghz:.2f} ns per voice-sample in its group loop")
        for lab, c in zip(labels, per):
            print(f"{c / ghz:7.2f} ns {c:6.2f} ticks  {lab[:100]}")


def _time(fn, min_seconds: float) -> float:
    """CPU milliseconds per call (process CPU time: the machine may be shared)."""
    count, t0 = 0, time.process_time()
    while True:
        fn()
        count += 1
        el = time.process_time() - t0
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

    return (
        sos(peaking(1800.0, 0.3, 3.0)),
        sos(highpass(120.0), lowpass(9000.0)),
        sos(highpass(200.0)),
        sos(lowpass(6000.0)),
    )


def run_scipy(n: int, block: int, min_seconds: float, game_banks: bool = False) -> float:
    from scipy import signal

    peak, main, ehp, elp = _biquads()
    src = _source()
    step = SRC_SAMPLE_RATE / SAMPLE_RATE
    voices = []
    for i in range(n):
        voices.append(
            {
                "pos": 0.0,
                "zp": np.zeros((1, 2)),
                "zm": np.zeros((2, 2)),
                "zh": np.zeros((1, 2)),
                "zl": np.zeros((1, 2)),
                "dl": np.zeros(8192, np.float32),
                "w": 0,
                "d": int((0.01 + (i % 10) * 0.01) * SAMPLE_RATE),
                "g": np.array([0.7, 0.7]),
            }
        )
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


def run_pedalboard(n: int, block: int, min_seconds: float, game_banks: bool = False) -> float:
    import pedalboard as pb

    src = _source()
    step = SRC_SAMPLE_RATE / SAMPLE_RATE
    idx = np.arange(block)
    voices = []
    for i in range(n):
        voices.append(
            {
                "pos": 0.0,
                "peak": pb.Pedalboard([pb.PeakFilter(1800.0, 20 * np.log10(0.3), 3.0)]),
                "main": pb.Pedalboard(
                    [pb.Gain(20 * np.log10(0.8)), pb.HighpassFilter(120.0), pb.LowpassFilter(9000.0)]
                ),
                "echo": pb.Pedalboard(
                    [
                        pb.HighpassFilter(200.0),
                        pb.Delay(0.01 + (i % 10) * 0.01, 0.0, 1.0),
                        pb.LowpassFilter(6000.0),
                    ]
                ),
                "g": np.array([0.7, 0.7], np.float32),
            }
        )
    out = np.zeros((2, block), np.float32)
    env = np.zeros(block, np.float32)

    def one_block():
        out[:] = 0
        env[:] = 0
        for v in voices:
            x = _lerp(src, v["pos"], step, idx).astype(np.float32)[None, :]
            v["pos"] += block * step
            x = v["peak"](x, SAMPLE_RATE, reset=False)
            e = v["echo"](0.3 * x, SAMPLE_RATE, reset=False)
            y = v["main"](x, SAMPLE_RATE, reset=False)
            env[:] += 0.2 * y[0] + e[0]
            out[:] += v["g"][:, None] * y[0]

    one_block()
    return _time(one_block, min_seconds)


IMPLS = {"barkbus": run_barkbus, "bb-nodes": run_barkbus, "scipy": run_scipy, "pedalboard": run_pedalboard}


def child(impl: str, n: int, block: int, min_seconds: float, game_banks: bool) -> None:
    import audio

    ms = IMPLS[impl](n, block, min_seconds, game_banks)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    tree = str(Path(audio.__file__).resolve().parents[1])
    print(json.dumps({"impl": impl, "n": n, "ms": ms, "rss_mb": rss_mb, "tree": tree}))


def _run_child(impl: str, n: int, args: argparse.Namespace, root: Path) -> dict | None:
    """One measurement in a fresh process, importing ``audio`` from the tree ``root``."""
    env = dict(os.environ, BARKBUS_FUSED="0" if impl == "bb-nodes" else "1", PYTHONPATH=str(root))
    cmd = [sys.executable, __file__, "--child", impl, str(n), "--block", str(args.block)]
    cmd += ["--seconds", str(args.seconds)] + (["--game-banks"] if args.game_banks else [])
    cmd += ["--meters"] if args.meters else []
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(f"{n:>5} {impl:>16} failed: {proc.stderr.strip().splitlines()[-1:]}")
        return None
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(r["tree"]).resolve() == root.resolve(), f"the child imported audio from {r['tree']}"
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--voices", type=int, nargs="+", default=[1, 16, 64, 256, 1024], help="voice counts N")
    ap.add_argument("--impls", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    ap.add_argument("--block", type=int, default=256, help="block size in samples (default 256)")
    ap.add_argument("--seconds", type=float, default=1.5, help="minimum timed seconds per run")
    ap.add_argument("--peer-max", type=int, default=256, help="skip peers above this N (they are slow)")
    ap.add_argument("--profile", type=int, metavar="N", help="print where the time goes at N voices")
    ap.add_argument(
        "--stages", type=int, metavar="N", help="time each statement of the fused kernels at N voices"
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="another tree (e.g. a worktree at main) measured alternately with this one, same N and impl",
    )
    ap.add_argument("--rounds", type=int, default=3, help="runs per tree with --baseline (medians compared)")
    ap.add_argument(
        "--game-banks",
        action="store_true",
        help="play the N voices in banks of the engine's default sizes (144 voice instances, 32 "
        "submix slots, as a game render does) instead of banks of exactly N",
    )
    ap.add_argument(
        "--meters",
        action="store_true",
        help="engines with meters on (the voices' output rows kept, as for the live TUI and "
        "profiler); off by default, as in renders and batch runs",
    )
    ap.add_argument("--child", nargs=2, metavar=("IMPL", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global METERS
    METERS = args.meters
    if args.stages:
        stages(args.stages, args.block, args.seconds, args.game_banks)
        return 0
    if args.profile:
        profile(args.profile, args.block, args.seconds, args.game_banks)
        return 0
    if args.child:
        child(args.child[0], int(args.child[1]), args.block, args.seconds, args.game_banks)
        return 0
    budget = args.block / SAMPLE_RATE * 1000
    print(f"block {args.block} samples = {budget:.2f} ms budget; one process per run; CPU ms per block")
    print(
        f"{'N':>5} {'impl':>16} {'ms/block':>9} {'% core':>7} {'RT voices/core':>15} "
        f"{'x barkbus':>10} {'RSS MB':>7}"
    )
    at256: dict[str, float] = {}
    trees = [("", ROOT)] + ([("base", args.baseline.resolve())] if args.baseline else [])
    for n in args.voices:
        bases: dict[str, float] = {}
        for impl in args.impls:
            if impl in ("scipy", "pedalboard") and n > args.peer_max:
                print(f"{n:>5} {impl:>11} {'skipped (N > --peer-max)':>40}")
                continue
            peer = impl in ("scipy", "pedalboard")  # does not run barkbus code: this tree only
            runs: dict[str, list[float]] = {label: [] for label, _ in trees}
            for _ in range(args.rounds if args.baseline and not peer else 1):
                for label, root in reversed(trees[:1] if peer else trees):  # the baseline first
                    r = _run_child(impl, n, args, root)
                    if r is None:
                        continue
                    ms = r["ms"]
                    runs[label].append(ms)
                    if impl == "barkbus":
                        bases[label] = ms
                    ratio = f"{ms / bases[label]:.1f}x" if label in bases else "-"
                    name = f"{impl}{' ' + label if label else ''}"
                    print(
                        f"{n:>5} {name:>16} {ms:>9.3f} {100 * ms / budget:>6.1f}% {n * budget / ms:>15.0f} "
                        f"{ratio:>10} {r['rss_mb']:>7.0f}",
                        flush=True,
                    )
            if args.baseline and runs[""] and runs["base"]:
                new, old = float(np.median(runs[""])), float(np.median(runs["base"]))
                print(f"{n:>5} {impl:>16} median {old:.3f} -> {new:.3f} ms/block: {old / new:.2f}x faster")
            if n == 256 and runs[""]:
                at256[impl] = float(np.median(runs[""]))
    if "barkbus" in at256:
        rt = 256 * budget / at256["barkbus"]
        print(
            f"target >= 8,000 real-time voices per core at 256 voices: {rt:,.0f} -> "
            f"{'met' if rt >= 8000 else 'NOT met'} (load average {os.getloadavg()[0]:.2f})"
        )
        if "pedalboard" in at256:
            x = at256["pedalboard"] / at256["barkbus"]
            print(
                f"target >= 30x the pedalboard chain at 256 voices: {x:.1f}x -> "
                f"{'met' if x >= 30 else 'NOT met'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
