"""Benchmark: index a Skate 3 speech bank the size of the real living world.

Generates an install with 3,011 clips and 20,096 takes (tiny fake take bodies: indexing decodes no
audio) in a temporary directory, then opens and indexes it several times and prints the median.
``--refpack`` also times the RefPack decoder on ~100 KB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audio.containers import refpack
from audio.games.skate.formats.evt import ClipRef, EvtEvent, EvtRecord, EvtTable, event_id
from audio.games.skate.formats.hdr import ClipHeader
from audio.games.skate.formats.install import SkateInstall, write_install

# SNR header: EA-XMA (codec 3), mono, 36,000 Hz, STREAM, 36,000 samples
SNR = bytes.fromhex("03008ca040008ca0")
VOICES = [
    (41, "adtm1", 0x1),
    (46, "adtf1", 0x2),
    (51, "grn1", 0x4),
    (55, "joc2", 0x8),
    (59, "busm1", 0x1000),
    (64, "busw1", 0x2000),
    (69, "tenm1", 0x20),
    (72, "tenf2", 0x10),
    (75, "secg1", 0x40),
    (82, "torm1", 0x80),
    (87, "bum1", 0x4000),
    (89, "sktm1", 0x200),
    (94, "sktf1", 0x400),
]


def make_bank(n_clips: int, n_takes: int, n_events: int, seed: int = 0):
    """(clips, evt) for :func:`write_install`: ``n_clips`` clips holding ``n_takes`` takes in all."""
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 13, n_clips)
    while per.sum() != n_takes:  # adjust to the exact total, keeping 1..48 per clip
        k = int(rng.integers(n_clips))
        step = 1 if per.sum() < n_takes else -1
        if 1 <= per[k] + step <= 48:
            per[k] += step
    event_numbers = [100 + 7 * k for k in range(n_events)]
    clips, refs = [], {}
    for i in range(n_clips):
        ev = event_numbers[i % n_events]
        vid, vname, tbit = VOICES[i % len(VOICES)]
        name = f"{ev}_{vid}_{vname}_Line_{i}"
        body = [(SNR, bytes([i & 0xFF, k & 0xFF]) * 8) for k in range(int(per[i]))]
        clips.append((name, ClipHeader.new(i + 1, int(per[i])), body))
        refs.setdefault(ev, []).append(((tbit, 1 << (i % 5)), i + 1))
    events = []
    for n, ev in enumerate(event_numbers):
        records = tuple(
            EvtRecord(0x39, 100, 0, 0, values, (ClipRef(cid),)) for values, cid in refs.get(ev, [])
        )
        events.append(
            EvtEvent(
                id=event_id(1, n),
                timeout=90,
                priority=520,
                flags=0x20,
                probability=100,
                flags2=0,
                byte11=0,
                fields=(1, 2),
                records=records,
                name=f"{ev}_event",
            )
        )
    return clips, EvtTable(bank=1, sub_bank=0, events=events)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=3011, help="clips in the bank (default 3011)")
    ap.add_argument("--takes", type=int, default=20096, help="takes in all (default 20096)")
    ap.add_argument("--events", type=int, default=81, help="events in the .evt (default 81)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs; the median is printed (default 5)")
    ap.add_argument(
        "--compression",
        default="none",
        help="compression of the hdr/sth/evt entries (none, refpack, chunkref-zlib, ...)",
    )
    ap.add_argument("--refpack", action="store_true", help="also time RefPack decoding of ~100 KB")
    args = ap.parse_args(argv)

    clips, evt = make_bank(args.clips, args.takes, args.events)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = write_install(tmp, "livingworld", clips, evt, compression=args.compression)
        print(f"wrote {path.name}: {path.stat().st_size / 1e6:.2f} MB in {time.perf_counter() - t0:.2f} s")
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            inst = SkateInstall.open(tmp)
            bank = inst.bank()
            n_clips, n_takes = len(bank.clips), bank.take_count
            n_events = len(bank.events.events)
            times.append(time.perf_counter() - t0)
            inst.close()
        print(
            f"indexed {n_clips} clips, {n_takes} takes, {n_events} events: "
            f"median {statistics.median(times) * 1e3:.1f} ms over {args.runs} runs "
            f"(min {min(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms)"
        )
    if args.refpack:
        rng = np.random.default_rng(1)
        pcm = np.cumsum(rng.integers(-3, 4, 50_000)).astype(">i2").tobytes()
        packed = refpack.encode(pcm)
        t0 = time.perf_counter()
        reps = 20
        for _ in range(reps):
            refpack.decode(packed)
        dec = (time.perf_counter() - t0) / reps
        t0 = time.perf_counter()
        refpack.encode(pcm)
        enc = time.perf_counter() - t0
        print(
            f"RefPack {len(pcm)} -> {len(packed)} bytes: decode {dec * 1e3:.1f} ms, encode {enc * 1e3:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
