#!/usr/bin/env python3
"""Snapshots of the fused kernels' generated source, one per shipped graph (``graphs/*.toml``).

    python tools/fused_snapshots.py            # check: generate and compare with tests/dsp/fused_snapshots/
    python tools/fused_snapshots.py --update   # after an intended change to the generator: rewrite them

Each snapshot is what :mod:`audio.dsp.fused` generates for the graph at the engine's default
capacities (voice graphs: voice budget + headroom instances, submixes: the submix slots, buses:
one), stereo, with the lane-kernel module named ``barkbus_lanes``. ``tests/dsp/test_fused_snapshots.py``
runs the check, so a change to the generated code shows up as a reviewable diff of these files.
Nothing is compiled.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "dsp" / "fused_snapshots"


def snapshots() -> dict[str, str]:
    """Per shipped graph that runs fused: the generated source."""
    from audio.core.engine import EngineConfig
    from audio.dsp.bank import GraphBank
    from audio.dsp.graph import available_graphs, load_graph

    cfg = EngineConfig()
    capacity = {"voice": cfg.voice_budget + cfg.voice_headroom, "submix": cfg.submix_slots, "bus": 1}
    out = {}
    for name in available_graphs():
        spec = load_graph(name)
        bank = GraphBank(spec, capacity[spec.kind], cfg.sample_rate, cfg.layout, cfg.block)
        src = bank.fused_source()
        if src is not None:
            out[name] = src
    return out


def stored() -> dict[str, str]:
    """The committed snapshots."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(SNAPSHOTS.glob("*.txt"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="rewrite the snapshots instead of checking them")
    args = ap.parse_args(argv)
    current, old = snapshots(), stored()
    if args.update:
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        for name in set(old) - set(current):
            (SNAPSHOTS / f"{name}.txt").unlink()
        for name, src in current.items():
            (SNAPSHOTS / f"{name}.txt").write_text(src, encoding="utf-8")
        print(f"wrote {len(current)} snapshots to {SNAPSHOTS.relative_to(ROOT)}")
        return 0
    bad = 0
    for name in sorted(set(current) | set(old)):
        a, b = old.get(name, ""), current.get(name, "")
        if a != b:
            bad += 1
            sys.stdout.writelines(
                difflib.unified_diff(
                    a.splitlines(True), b.splitlines(True), f"stored/{name}", f"generated/{name}"
                )
            )
    print(
        f"{bad} of {len(set(current) | set(old))} snapshots differ" + (" (run with --update)" if bad else "")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
