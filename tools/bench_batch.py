#!/usr/bin/env python3
"""Batch benchmark: plaza + dogfight on a LocalCluster of 1 and 2 workers, decisions-only and full.

For each mode and worker count it runs a fresh batch (chunked seeds, one single-threaded
worker process per core) and prints:

- runs per second (wall time from first submit to last file written; cluster start apart),
  and the scaling efficiency ``rate(N) / (N * rate(1))``;
- the work share: the runs' own time (sum of ``wall_s``) over ``workers * wall``; the rest is
  Dask scheduling, transfer and idle workers;
- the client's serial share: seconds writing Parquet per task;
- peak memory (max RSS) per worker process;
- the per-task Dask overhead (empty tasks, round trip) and the per-run data load
  (``load_scenario`` + ``build_engine``, measured in this process).

It ends with a projection for a 64-core cluster (see ``project``). Example::

    python tools/bench_batch.py --dry-seeds 1000 --full-seeds 200 --chunk 10
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audio.offline.batch.cluster import open_client, run_batch
from audio.offline.batch.report import load_frames
from audio.offline.batch.store import BatchStore
from audio.offline.scenario import build_engine, demo_scenario, load_scenario

DEMOS = {"plaza": str(demo_scenario("skate")), "dogfight": str(demo_scenario("sylpheed"))}


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _noop(x: int) -> int:
    return x


def _warm_up(decisions_only: bool) -> None:
    from audio.offline.batch.runner import run_one

    for key, path in DEMOS.items():
        run_one(key, path, 0, decisions_only)


def task_overhead(client, n: int = 300) -> float:
    """Seconds per empty task (submit -> result) when ``n`` are in flight together."""
    t0 = time.perf_counter()
    futs = client.map(_noop, range(n), pure=False)
    client.gather(futs)
    return (time.perf_counter() - t0) / n


def data_load(n: int = 10) -> dict[str, float]:
    """Seconds per run to load each scenario and build its engine (the per-run data load)."""
    out = {}
    for key, path in DEMOS.items():
        build_engine(load_scenario(path, 0))
        t0 = time.perf_counter()
        for s in range(n):
            build_engine(load_scenario(path, s), dsp=False)
        out[key] = (time.perf_counter() - t0) / n
    return out


def one(workers: int, seeds: int, decisions_only: bool, chunk: int, tmp: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    with open_client(workers, processes=True, quiet=True) as client:
        client.wait_for_workers(workers)
        client.run(_warm_up, decisions_only)  # imports, numba caches, first-run costs
        start = time.perf_counter() - t0
        over = task_overhead(client)
        root = tmp / f"{'dry' if decisions_only else 'full'}-{workers}"
        shutil.rmtree(root, ignore_errors=True)
        t1 = time.perf_counter()
        s = run_batch(
            client,
            BatchStore(root),
            DEMOS,
            range(seeds),
            decisions_only=decisions_only,
            chunk=chunk,
            progress=False,
        )
        wall = time.perf_counter() - t1
        rss = client.run(_max_rss_mb)
    runs = load_frames(root)["run"]
    work = float(runs["wall_s"].sum())
    n = s.done + s.failed
    return {
        "workers": workers,
        "runs": n,
        "failed": s.failed,
        "start_s": start,
        "wall_s": wall,
        "rate": n / wall,
        "work_share": work / (workers * wall),
        "run_ms": 1000 * work / n,
        "write_ms_per_task": 1000 * s.write_s / max(1, len(s.files)),
        "tasks": len(s.files),
        "rss_mb": max(rss.values()),
        "task_overhead_ms": 1000 * over,
    }


def project(r1: dict[str, float], chunk: int, cores: int = 64) -> str:
    """A 64-core estimate: workers scale on the work; the client (writes) and the scheduler
    (per-task overhead, serial) cap the task rate."""
    per_worker = 1000.0 / r1["run_ms"]  # runs/s of one busy worker
    work_rate = cores * per_worker
    serial_s = (r1["write_ms_per_task"] + r1["task_overhead_ms"]) / 1000.0
    cap = chunk / serial_s if serial_s > 0 else float("inf")
    rate = min(work_rate, cap)
    what = "the work itself" if work_rate <= cap else "the client/scheduler per task (raise --chunk)"
    return (
        f"{rate:,.0f} runs/s on {cores} cores (workers alone {work_rate:,.0f}/s, per-task serial cap "
        f"{cap:,.0f}/s at chunk {chunk}); dominated by {what}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-seeds", type=int, default=1000, help="seeds per scenario, decisions-only")
    ap.add_argument("--full-seeds", type=int, default=200, help="seeds per scenario, full render")
    ap.add_argument("--chunk", type=int, default=10, help="seeds per task")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args(argv)
    print(
        "data load per run (load_scenario + build_engine): "
        + ", ".join(f"{k} {1000 * v:.1f} ms" for k, v in data_load().items())
    )
    with tempfile.TemporaryDirectory(prefix="bench_batch-") as tmp:
        for decisions_only, seeds in ((True, args.dry_seeds), (False, args.full_seeds)):
            label = "decisions-only" if decisions_only else "full"
            res = [one(w, seeds, decisions_only, args.chunk, Path(tmp)) for w in args.workers]
            print(f"\n{label}: plaza + dogfight, {seeds} seeds each, chunk {args.chunk}")
            for r in res:
                eff = r["rate"] / (r["workers"] * res[0]["rate"] / res[0]["workers"])
                print(
                    f"  {r['workers']} worker(s): {r['runs']} runs in {r['wall_s']:.1f} s = "
                    f"{r['rate']:.1f} runs/s, efficiency {100 * eff:.0f}%, "
                    f"work share {100 * r['work_share']:.0f}%, "
                    f"run {r['run_ms']:.1f} ms, client write {r['write_ms_per_task']:.1f} ms/task, "
                    f"task overhead {r['task_overhead_ms']:.2f} ms, peak RSS/worker {r['rss_mb']:.0f} MB, "
                    f"cluster start {r['start_s']:.1f} s, failed {r['failed']}"
                )
            print("  projection: " + project(res[0], args.chunk))
    print(f"\nmachine: {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
