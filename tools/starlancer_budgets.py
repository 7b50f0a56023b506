#!/usr/bin/env python3
"""Hostile Starlancer missions against the VM's budgets: time and peak RSS of each case.

    python tools/starlancer_budgets.py                 # every case, 60 s of mission each
    python tools/starlancer_budgets.py loop --seconds 600

Cases (each a mission built with barkbus's writers; decisions are kept in memory as an offline
render keeps them):

* ``loop``: the start part is a ``random_branch`` whose default target is 0, a one-instruction loop
  that never yields (the game hangs);
* ``fanout``: the start part spawns 30 threads, each calling a chain of 8 parts, each calling the
  next ten times (10^7 calls per thread), the leaf logging a skipped command;
* ``timers``: a timer part that makes three more timers each time it fires, plus a thread that
  spawns itself each frame making one more (the game's table has 16 slots).

Prints one line per case: mission seconds, wall time, peak RSS of a fresh process, decisions kept.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audio.core.crt import MsvcRand
from audio.games.starlancer.formats.dte import Dte, Global, ObjectEntry, Part, Ship, write_routine
from audio.games.starlancer.radio.radio import NullPresenter, Radio
from audio.games.starlancer.script.asm import Asm
from audio.games.starlancer.script.vm import Vm

CASES = ("loop", "fanout", "timers")


def _mission(parts: list[Asm]) -> Dte:
    blocks = [write_routine(a.code()) for a in parts]
    offs, at = [], 0
    for b in blocks:
        offs.append(at)
        at += len(b)
    ps = [Part(start=offs[i] // 2, flags=int(i == 0)) for i in range(len(parts))]
    return Dte(
        script=b"".join(blocks),
        parts=ps,
        globals=[Global(value=0)],
        ships=[Ship(object_id=0, pilot=3)],
        objects=[ObjectEntry()],
    )


def _timer(a: Asm) -> Asm:
    a.op("select_global", 0).push(("byte", 1)).op("add_assign")
    return a.call("CreateTimer", ("global", 0), ("byte", 2), ("byte", 1), ("byte", 0))


def case(name: str) -> Dte:
    """The hostile mission of case ``name``."""
    if name == "loop":
        return _mission([Asm().raw(bytes([0x51, 0, 0, 0])).ret()])
    if name == "fanout":
        start = Asm()
        for _ in range(30):
            start.op("spawn_part", 1)
        parts = [start.ret()]
        for k in range(1, 8):
            a = Asm()
            for _ in range(10):
                a.op("call_part", k + 1)
            parts.append(a.ret())
        parts.append(Asm().call("SetAI", ("ship", 0), ("byte", 6), ("byte", 1), None).ret())
        return _mission(parts)
    if name == "timers":
        start = _timer(Asm()).op("spawn_part", 1).ret()
        loop = _timer(Asm()).op("spawn_part", 1).ret()
        tick = _timer(_timer(_timer(Asm()))).call("DisableTaunts", ("byte", 1)).ret()
        return _mission([start, loop, tick])
    raise SystemExit(f"unknown case {name!r} (one of {', '.join(CASES)})")


def run(name: str, seconds: float) -> dict[str, float]:
    """Run case ``name`` for ``seconds`` of mission (100 Hz ticks, a VM frame every 4)."""
    kept: list[tuple[str, dict[str, object]]] = []

    def decide(outcome: str, **detail: object) -> None:
        kept.append((outcome, detail))

    radio = Radio(NullPresenter(), decide)
    vm = Vm(case(name), radio, decide, MsvcRand(1))
    t0 = time.perf_counter()
    vm.mission_start()
    for t in range(int(seconds * 100)):
        radio.tick(t)
        if t % 4 == 0:
            vm.frame(t)
            radio.frame(t)
    wall = time.perf_counter() - t0
    rss = _peak_rss_mb()
    return {"seconds": seconds, "wall_s": wall, "rss_mb": rss, "decisions": len(kept)}


def _peak_rss_mb() -> float:
    """Peak resident set of this program image, MB (Linux VmHWM; ``ru_maxrss`` carries the parent's
    size across fork and exec, so a case started by a long pytest session would report that)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cases", nargs="*", default=list(CASES), help=f"cases to run ({', '.join(CASES)})")
    p.add_argument("--seconds", type=float, default=60.0, help="mission seconds per case (default 60)")
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--inline", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.inline:
        print(json.dumps(run(args.cases[0], args.seconds)))
        return 0
    for name in args.cases:
        out = subprocess.run(
            [sys.executable, __file__, name, "--seconds", str(args.seconds), "--inline"],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(out.stdout)
        if args.json:
            print(json.dumps({"case": name, **got}))
        else:
            print(
                f"{name:<7s} {got['seconds']:6.0f} s of mission: {got['wall_s']:6.2f} s, "
                f"peak RSS {got['rss_mb']:5.0f} MB, {got['decisions']:,} decisions"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
