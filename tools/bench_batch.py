#!/usr/bin/env python3
"""Batch benchmark: runs per second per core of every game's demo, decisions-only and full,
this tree against a baseline tree side by side, then Dask scaling on 1 and 2 workers.

Parts (each prints its peers in one table, measured in the same run):

1. **Per core** (no Dask: what one worker does): each demo's runs through
   :func:`audio.offline.batch.runner.run_task` in one process, seeds one after another,
   after one warm-up task, timed in CPU seconds of that process (runs/s per core stays
   comparable on a shared machine, where wall time varies with the others' load).
   ``--baseline DIR`` runs the same in a second interpreter on another tree (e.g.
   ``git archive <commit> | tar -x -C DIR``: the code before a change), game by game in
   turn with this one. Targets: decisions-only
   >= 100 runs/s and full >= 20 runs/s per core, for each game's demo (``--modes dry`` measures
   decisions-only alone).
   Then the control points and system ticks of one decisions-only run of each demo, ticking
   every frame against skipping the ticks that change nothing (``BARKBUS_SKIP_TICKS``).
2. **Real-size install**: the plaza on an install padded to 3,011 clips and 20,096 takes
   (the demo's clips plus filler clips of other events, :func:`padded_install`) against the
   demo install. Target: within 1.5x of the demo's per-run cost.
3. **Profile** (``--profile``): where a run's time goes now, per demo and mode (cProfile,
   the functions with the most own time and their share).
4. **The machine's own scaling** (``--machine-seeds``): the same demo batch in 2 plain
   processes at once against 1, no Dask, in ``--dask-rounds`` ABBA rounds: the most 2 workers
   can reach here.
5. **Dask**: ``--dask-rounds`` passes (default 4) over the worker counts in ABBA order (1, 2,
   then 2, 1 workers, ...), so the machine's drift in speed over the minutes of a run cancels out;
   each pass opens one LocalCluster per count, reused for every mode and demo (its start is
   printed apart); each demo and mode one batch of ``--dask-dry-seeds`` / ``--dask-full-seeds``
   seeds (a QA batch of thousands of runs, not the per-core sample); runs/s over the passes,
   scaling ``rate(2) / rate(1)`` per demo (target >= 1.8x), work share.

Example (the machine is shared: prefix ``nice``, compare within one run)::

    git archive aec87d3 | tar -x -C /tmp/base
    nice python tools/bench_batch.py --baseline /tmp/base --profile
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGETS = {"dry": 100.0, "full": 20.0}
"""Runs per second per core of each game's demo (issue 25)."""

_PER_CORE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from audio.offline.batch.runner import Task, run_task
from audio.offline.scenario import demo_scenario
plan = json.loads(sys.argv[2])
out = {}
for name, path, dry, seeds in plan:
    path = path or str(demo_scenario(name))
    run_task(Task(name, path, (10_000,), dry))  # warm-up: imports, numba caches, first loads
    t0 = time.process_time()  # CPU seconds: the machine's other load does not count
    table = run_task(Task(name, path, tuple(range(seeds)), dry))
    wall = time.process_time() - t0
    runs = [r for r in table.to_pylist() if r["kind"] == "run"]
    failed = sum(r["status"] != "ok" for r in runs)
    out[f"{name} {'dry' if dry else 'full'}"] = {"ms": 1000 * wall / seeds, "failed": failed}
print(json.dumps(out))
"""

_TOGETHER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from audio.offline.batch.runner import Task, run_task
from audio.offline.scenario import demo_scenario
name, dry, seeds = sys.argv[2], sys.argv[3] == "dry", int(sys.argv[4])
path = str(demo_scenario(name))
run_task(Task(name, path, (10_000,), dry))  # warm-up: imports, numba caches, first loads
print("ready", flush=True)
sys.stdin.readline()  # every process of a round starts its runs when all are warm
t0 = time.perf_counter()
run_task(Task(name, path, tuple(range(seeds)), dry))
print(json.dumps({"wall": time.perf_counter() - t0}))
"""


def machine_scaling(plan: list[tuple[str, str | None, bool, int]], procs: int, rounds: int) -> None:
    """What the machine itself gives ``procs`` processes running the same batch at once, with no
    Dask: ``procs`` independent single-threaded interpreters, each running ``seeds`` runs of a
    demo from one start moment, against one interpreter alone, in ABBA rounds (1, ``procs``,
    ``procs``, 1); the ratio of runs per wall second is the most a ``procs``-worker cluster can
    reach on this machine (shared caches, memory bandwidth, the host's scheduling of vCPUs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    for demo, _, dry, seeds in plan:
        walls: dict[int, list[float]] = {1: [], procs: []}
        for r in range(rounds):
            for k in (1, procs) if r % 2 == 0 else (procs, 1):
                args = [
                    sys.executable,
                    "-c",
                    _TOGETHER,
                    str(ROOT),
                    demo,
                    "dry" if dry else "full",
                    str(seeds),
                ]
                ps = [
                    subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
                    for _ in range(k)
                ]
                for p in ps:  # each warm: then all go at once
                    assert p.stdout is not None
                    p.stdout.readline()
                for p in ps:
                    assert p.stdin is not None
                    p.stdin.write("go\n")
                    p.stdin.close()
                outs = [p.stdout.read() for p in ps if p.stdout is not None]
                for p in ps:
                    p.wait()
                if any(p.returncode for p in ps):
                    raise SystemExit(f"machine scaling: {demo} failed")
                walls[k].append(max(json.loads(o.strip().splitlines()[-1])["wall"] for o in outs))
        one = rounds * seeds / sum(walls[1])
        many = rounds * procs * seeds / sum(walls[procs])
        mode = "decisions-only" if dry else "full"
        print(
            f"    {demo:<12}{mode:>15}: 1 process {one:.1f} runs/s, {procs} at once {many:.1f} runs/s "
            f"= {many / one:.2f}x"
        )


def per_core(tree: Path, plan: list[tuple[str, str | None, bool, int]]) -> dict[str, dict[str, float]]:
    """``{"DEMO dry|full": {"ms": per run, "failed": n}}`` of ``tree``, measured in a fresh
    single-threaded interpreter (one core)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    res = subprocess.run(
        [sys.executable, "-c", _PER_CORE, str(tree), json.dumps(plan)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if res.returncode != 0:
        raise SystemExit(f"{tree}: {res.stderr.strip().splitlines()[-1] if res.stderr else 'failed'}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def control_points(name: str, skip: str) -> tuple[int, int]:
    """``(control points, system ticks)`` of one decisions-only run of demo ``name`` (seed 0)
    with ``$BARKBUS_SKIP_TICKS=skip`` (``"0"``: every system ticks every frame)."""
    from audio.offline.batch.runner import simulate
    from audio.offline.scenario import demo_scenario

    before = os.environ.get("BARKBUS_SKIP_TICKS")
    os.environ["BARKBUS_SKIP_TICKS"] = skip
    try:
        eng = simulate(str(demo_scenario(name)), 0, decisions_only=True).engine
    finally:
        if before is None:
            del os.environ["BARKBUS_SKIP_TICKS"]
        else:
            os.environ["BARKBUS_SKIP_TICKS"] = before
    return eng.control_points, eng.ticks


def padded_install(dest: Path, clips_total: int = 3011, takes_total: int = 20096) -> Path:
    """The Skate demo install padded to ``clips_total`` clips and ``takes_total`` takes: the
    demo's own clips and events, plus filler clips (tiny fake take bodies) in filler events the
    plaza never requests. Returns the plaza scenario on it (``dest/plaza.toml``)."""
    import tomllib

    from audio.games.skate.formats.evt import EvtTable, event_id
    from audio.games.skate.formats.hdr import ClipHeader
    from audio.games.skate.formats.install import SkateInstall, write_install
    from audio.games.skate.system import DEMO_INSTALL

    sys.path.insert(0, str(ROOT / "tools"))
    from bench_skate_index import make_bank

    demo = SkateInstall.open(DEMO_INSTALL)
    bank = demo.bank("livingworld")
    own = []
    for c in bank.clips:
        assert c.header is not None
        own.append((c.name, c.header, [bank.take_bytes(c, k) for k in range(len(c.takes))]))
    n_own_takes = sum(len(t) for _, _, t in own)
    filler, filler_evt = make_bank(clips_total - len(own), takes_total - n_own_takes, 81)
    top = max(h.id for _, h, _ in own)
    moved = []
    for name, h, takes in filler:
        ev, rest = name.split("_", 1)
        moved.append((f"{int(ev) + 5000}_{rest}", ClipHeader.new(h.id + top, h.take_count), takes))
    events = list(bank.events.events)
    for n, e in enumerate(filler_evt.events):
        records = tuple(
            replace(r, clips=tuple(replace(c, clip_id=c.clip_id + top) for c in r.clips)) for r in e.records
        )
        events.append(replace(e, id=event_id(1, 1000 + n), records=records, name=f"filler_{n}"))
    write_install(dest, "livingworld", own + moved, EvtTable(bank.events.bank, bank.events.sub_bank, events))
    demo.close()
    doc = (DEMO_INSTALL / "plaza.toml").read_text()
    assert 'install = "."' in doc or "[skate]" in tomllib.loads(doc)
    scenario = dest / "plaza.toml"
    scenario.write_text(doc)
    return scenario


AREAS = (
    ("engine loop", ("core/engine.py", "core/bus.py", "dsp/skip.py", "core/voices.py", "core/faults.py")),
    ("DSP", ("dsp/", "barkbus_graph_", "barkbus_lanes")),
    ("decode", ("codecs/", "containers/", "av/", "'av.", "soundfile")),
    ("loudness", ("offline/loudness.py",)),
    ("game", ("games/", "core/world.py")),
    (
        "set-up",
        ("offline/scenario.py", "core/schema.py", "tomllib", "msgspec", "core/memo.py"),
    ),
    ("rows", ("offline/batch/", "pyarrow")),
)
"""Where a function's own time is counted (first match of its file name, or for a compiled
function, whose file is ``~``, of its name: a fused graph kernel is DSP), for the profile."""


def _area(filename: str) -> str:
    for area, marks in AREAS:
        if any(m in filename for m in marks):
            return area
    return "other (Python, NumPy)"


def profile(name: str, path: str, dry: bool, seeds: int, top: int = 6) -> tuple[dict[str, float], list]:
    """Shares of a warm run's own time per area (:data:`AREAS`) and the ``top`` functions,
    over ``seeds`` runs, each run once before (cProfile). A worker deep in a batch has decoded
    every take the scenario plays; the warm-up runs the same seeds, so the profile counts no
    first decode (with other seeds it would catch a few, and on a decode thread they show as
    the main thread's wait)."""
    import cProfile
    import pstats

    from audio.core import memo
    from audio.offline.batch.runner import run_one

    with memo.enabled():
        for s in range(seeds):  # warm: imports, numba caches, the memo (every take these runs play)
            run_one(name, path, s, dry)
        prof = cProfile.Profile()
        prof.enable()
        for s in range(seeds):
            run_one(name, path, s, dry)
        prof.disable()
    rows = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in rows.values())
    areas: dict[str, float] = {}
    for (f, _, fn), v in rows.items():
        area = _area(fn if f == "~" else f)
        areas[area] = areas.get(area, 0.0) + v[2] / total
    best = sorted(rows.items(), key=lambda kv: -kv[1][2])[:top]
    return areas, [(f"{Path(f).name}:{ln}({fn})", v[2] / total) for (f, ln, fn), v in best]


def _noop(x: int) -> int:
    return x


def dask_scaling(
    workers: list[int], plan: list[tuple[str, str, bool, int]], chunk: int | None, tmp: Path, rounds: int
) -> None:
    """Runs/s of each demo and mode per worker count. The machine's speed drifts by up to a third
    from minute to minute, so the counts take turns: ``rounds`` passes, each opening one cluster
    per count in turn (ABBA order: forwards, then backwards, ...), reused for every mode and demo
    (each demo and mode its own batch, as a QA run of one scenario would be); a count's rate is
    its runs over its wall time summed over the passes, so a steady drift cancels out."""
    from audio.offline.batch.cluster import open_client, run_batch
    from audio.offline.batch.report import load_frames
    from audio.offline.batch.runner import Task, run_task
    from audio.offline.batch.store import BatchStore

    runs_of: dict[tuple[int, str, bool], list[tuple[int, float, float]]] = {}
    for r in range(rounds):
        for n in workers if r % 2 == 0 else workers[::-1]:
            t0 = time.perf_counter()
            with open_client(n, processes=True, quiet=True) as client:
                client.wait_for_workers(n)
                start = time.perf_counter() - t0
                # every worker loads every demo's install and kernels before the clock starts (a
                # real batch of thousands of seeds pays that once per worker; left to the
                # scheduler, one worker could take every warm-up task and the other pay its own
                # inside the timing)
                addresses = list(client.scheduler_info()["workers"])
                warm = [
                    client.submit(
                        run_task, Task(k, p, (10_000,), d), pure=False, workers=[a], allow_other_workers=False
                    )
                    for a in addresses
                    for k, p, d, _ in plan
                ]
                client.gather(warm)
                print(f"  pass {r + 1}, {n} worker(s): cluster start {start:.1f} s")
                for demo, path, dry, seeds in plan:
                    root = tmp / f"dask-{n}-{demo}-{dry}"
                    shutil.rmtree(root, ignore_errors=True)
                    t1 = time.perf_counter()
                    s = run_batch(
                        client,
                        BatchStore(root),
                        {demo: path},
                        range(seeds),
                        decisions_only=dry,
                        chunk=chunk,
                        progress=False,
                        workers_write=True,
                    )
                    wall = time.perf_counter() - t1
                    work = float(load_frames(root)["run"]["wall_s"].sum())
                    runs_of.setdefault((n, demo, dry), []).append((s.done + s.failed, wall, work))
    print(f"  runs/s summed over {rounds} pass(es) (each pass's own rate in brackets); work share")
    base_n = workers[0]
    for demo, _, dry, _ in plan:
        cells = []
        for n in workers:
            got = runs_of[(n, demo, dry)]
            runs, wall, work = (sum(g[i] for g in got) for i in range(3))
            rate = runs / wall
            each = ", ".join(f"{g[0] / g[1]:.1f}" for g in got)
            cell = f"{n} worker(s) {rate:.1f} ({each}), {100 * work / (n * wall):.0f}%"
            if n != base_n:
                b = runs_of[(base_n, demo, dry)]
                base = sum(g[0] for g in b) / sum(g[1] for g in b)
                cell += f" = {rate / base:.2f}x of {base_n} (target >= 1.8x)"
            cells.append(cell)
        mode = "decisions-only" if dry else "full"
        print(f"    {demo:<12}{mode:>15}: " + "; ".join(cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, help="another tree to measure side by side (the code before)")
    ap.add_argument("--dry-seeds", type=int, default=40, help="seeds per demo, decisions-only (default 40)")
    ap.add_argument("--full-seeds", type=int, default=10, help="seeds per demo, full (default 10)")
    ap.add_argument(
        "--dask-dry-seeds", type=int, default=2000, help="seeds per demo, Dask decisions-only (default 2000)"
    )
    ap.add_argument(
        "--dask-full-seeds", type=int, default=200, help="seeds per demo, Dask full (default 200)"
    )
    ap.add_argument("--demos", nargs="+", help="demo names (default: every game's demo)")
    ap.add_argument("--profile", action="store_true", help="print where each demo's run time goes")
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="Dask worker counts ([] skips)")
    ap.add_argument(
        "--chunk", type=int, help="seeds per Dask task (default: the batch command's automatic size)"
    )
    ap.add_argument(
        "--machine-seeds",
        type=int,
        default=400,
        help="seeds per process, decisions-only, of the machine's own scaling (a tenth full; 0 skips)",
    )
    ap.add_argument(
        "--dask-rounds",
        type=int,
        default=4,
        help="Dask passes over the worker counts, in ABBA order (default 4)",
    )
    ap.add_argument("--no-install", action="store_true", help="skip the real-size install comparison")
    ap.add_argument(
        "--modes",
        choices=("dry", "full", "both"),
        default="both",
        help="decisions-only (dry), full or both (default)",
    )
    args = ap.parse_args(argv)

    from audio.offline.scenario import demo_names, demo_scenario

    demos = args.demos or [n for n in demo_names() if n != "basic"]
    modes = {"dry": (True,), "full": (False,), "both": (True, False)}[args.modes]
    plan = [(d, None, dry, args.dry_seeds if dry else args.full_seeds) for d in demos for dry in modes]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (compare within this run)\n")

    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    got: dict[str, dict[str, dict[str, float]]] = {label: {} for label, _ in trees}
    for d in demos:  # game by game, the trees in turn: both see the same load
        for label, tree in trees:
            got[label].update(per_core(tree, [p for p in plan if p[0] == d]))
    print("1. per core (runs per CPU second of one process; CPU ms per run)")
    head = "".join(f"{label:>22}" for label, _ in trees)
    print(f"  {'demo':<12}{'mode':<16}{head}{'  speed-up' if args.baseline else ''}  target")
    for d, _, dry, _ in plan:
        key = f"{d} {'dry' if dry else 'full'}"
        cells = "".join(
            f"{1000 / got[label][key]['ms']:>9.1f}/s {got[label][key]['ms']:>7.1f} ms"
            + ("!" if got[label][key]["failed"] else " ")
            for label, _ in trees
        )
        ratio = f"{got['baseline'][key]['ms'] / got['this tree'][key]['ms']:>9.2f}x" if args.baseline else ""
        mode = "decisions-only" if dry else "full"
        target = f">= {TARGETS['dry' if dry else 'full']:.0f}/s"
        print(f"  {d:<12}{mode:<16}{cells}{ratio}  {target}")
    print(f"  ('!': some runs failed; load average now {os.getloadavg()[0]:.1f})")

    print("\n   control points and system ticks per decisions-only run (seed 0; this tree)")
    print(f"  {'demo':<12}{'every frame':>22}{'skipped ticks':>22}")
    for d in demos:
        cells = []
        for skip in ("0", "1"):
            cp, ticks = control_points(d, skip)
            cells.append(f"{cp:>10,} / {ticks:>8,}")
        print(f"  {d:<12}" + "".join(f"{c:>22}" for c in cells))

    with tempfile.TemporaryDirectory(prefix="bench_batch-") as tmp:
        if not args.no_install:
            t0 = time.perf_counter()
            big = padded_install(Path(tmp) / "real-size")
            built = time.perf_counter() - t0
            print(f"\n2. real-size install (3,011 clips, 20,096 takes; built in {built:.1f} s)")
            pairs = [
                [("skate", None, dry, seeds), ("skate", str(big), dry, seeds)]
                for dry, seeds in ((True, args.dry_seeds), (False, args.full_seeds))
                if dry in modes
            ]
            for label, tree in trees:
                rows = []
                for pair in pairs:
                    a = per_core(tree, [pair[0]])
                    b = per_core(tree, [pair[1]])
                    (ka, va), (_, vb) = next(iter(a.items())), next(iter(b.items()))
                    rows.append(
                        f"{ka.split()[1]:>4}: demo {va['ms']:.1f} ms, real-size {vb['ms']:.1f} ms per run "
                        f"= {vb['ms'] / va['ms']:.2f}x"
                    )
                print(f"  {label:<10} " + "; ".join(rows) + "  (target <= 1.5x)")

        if args.profile:
            print("\n3. where a run's time goes now (cProfile own time by area, warm worker, this tree)")
            names = [a for a, _ in AREAS] + ["other (Python, NumPy)"]
            print(f"  {'demo':<12}{'mode':<16}" + "".join(f"{a[:12]:>13}" for a in names))
            tops = []
            for d in demos:
                for dry in modes:
                    areas, top = profile(d, str(demo_scenario(d)), dry, 8 if dry else 3)
                    mode = "decisions-only" if dry else "full"
                    print(
                        f"  {d:<12}{mode:<16}" + "".join(f"{100 * areas.get(a, 0.0):>12.0f}%" for a in names)
                    )
                    tops.append(f"  {d} {mode}: " + ", ".join(f"{fn} {100 * sh:.0f}%" for fn, sh in top))
            print("  top functions (own time):")
            print("\n".join(tops))

        if args.workers and args.machine_seeds:
            most = max(args.workers)
            print(f"\n4. the machine's own scaling: {most} plain processes at once against one (no Dask)")
            machine_scaling(
                [
                    (d, None, dry, args.machine_seeds if dry else max(1, args.machine_seeds // 10))
                    for d, _, dry, _ in plan
                ],
                most,
                args.dask_rounds,
            )
        if args.workers:
            print("\n5. Dask (this tree)")
            demo_plan = [
                (d, str(demo_scenario(d)), dry, args.dask_dry_seeds if dry else args.dask_full_seeds)
                for d, _, dry, _ in plan
            ]
            dask_scaling(args.workers, demo_plan, args.chunk, Path(tmp), args.dask_rounds)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
