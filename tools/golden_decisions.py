#!/usr/bin/env python3
"""Golden decision logs of the batch path: per bundled demo and seed, the sha256 of the
decision log a ``barkbus batch`` run gives (decisions-only, and full for a few seeds).

    python tools/golden_decisions.py            # check against tests/golden/batch_decisions.json
    python tools/golden_decisions.py --update   # after an intended change to what a demo says

The seeds run one after another in one process, as on a batch worker, so the per-worker caches
(installs, take lengths, graphs, seed-independent ped geometry) are warm for all but the first:
a cache or a fast path that changed a decision fails ``tests/offline/batch/test_decision_golden.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "batch_decisions.json"
DRY_SEEDS = 48
"""Seeds per demo recorded decisions-only."""
FULL_SEEDS = 3
"""Seeds per demo recorded with the DSP on (their decisions must equal the decisions-only ones)."""


def log_hash(decisions: list) -> str:
    """sha256 (first 16 hex digits) of a decision log as JSON lines."""
    text = "".join(json.dumps(d.to_json(), separators=(",", ":")) + "\n" for d in decisions)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def decision_hashes(dry_seeds: int = DRY_SEEDS, full_seeds: int = FULL_SEEDS) -> dict[str, dict[str, str]]:
    """Per demo: ``{"dry SEED": hash, ..., "full SEED": hash}``, the seeds run as a batch worker
    runs them (one process, the per-worker memo on, full runs after the decisions-only ones)."""
    sys.path.insert(0, str(ROOT))
    from audio.core import memo
    from audio.offline.batch.runner import simulate
    from audio.offline.scenario import demo_names, demo_scenario

    out: dict[str, dict[str, str]] = {}
    with memo.enabled():
        for name in demo_names():
            path = str(demo_scenario(name))
            got = {f"dry {s}": log_hash(simulate(path, s, True).decisions) for s in range(dry_seeds)}
            got |= {f"full {s}": log_hash(simulate(path, s, False).decisions) for s in range(full_seeds)}
            out[name] = got
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--update", action="store_true", help=f"write the current hashes to {GOLDEN.name}")
    args = p.parse_args()
    current = decision_hashes()
    if args.update:
        GOLDEN.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN.relative_to(ROOT)} ({len(current)} demos)")
        return 0
    golden = json.loads(GOLDEN.read_text())
    bad = [
        f"{n} {k}"
        for n in sorted(set(golden) | set(current))
        for k in sorted(set(golden.get(n, {})) | set(current.get(n, {})))
        if golden.get(n, {}).get(k) != current.get(n, {}).get(k)
    ]
    print("\n".join(bad[:20]) if bad else "golden decisions: all runs match")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
