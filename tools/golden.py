#!/usr/bin/env python3
"""Golden outputs of the bundled demos: the sha256 of each demo's 16-bit samples and decision log.

    python tools/golden.py            # check: render every demo and compare with tests/golden/demos.json
    python tools/golden.py --update   # after an intended change: write the new hashes

``tests/test_golden.py`` runs the check, so a change that alters what a demo says or sounds
like fails until the hashes are regenerated on purpose (and the reason goes in the commit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "demos.json"


def demo_hashes() -> dict[str, dict[str, str]]:
    """Per demo: ``{"samples": sha256 of the int16 PCM, "decisions": sha256 of the JSONL log}``."""
    from audio.offline.render import render_scenario
    from audio.offline.scenario import demo_names, demo_scenario

    out = {}
    for name in demo_names():
        res = render_scenario(demo_scenario(name), keep_audio=True)
        assert res.audio is not None
        pcm = np.clip(np.rint(res.audio * np.float32(32767.0)), -32768, 32767).astype("<i2")
        log = "".join(json.dumps(d.to_json(), separators=(",", ":")) + "\n" for d in res.decisions)
        out[name] = {
            "samples": hashlib.sha256(pcm.tobytes()).hexdigest(),
            "decisions": hashlib.sha256(log.encode()).hexdigest(),
        }
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--update", action="store_true", help="write the current hashes to tests/golden/demos.json"
    )
    args = p.parse_args()
    current = demo_hashes()
    if args.update:
        GOLDEN.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN.relative_to(ROOT)} ({len(current)} demos)")
        return 0
    golden = json.loads(GOLDEN.read_text())
    bad = [n for n in sorted(set(golden) | set(current)) if golden.get(n) != current.get(n)]
    for n in bad:
        print(f"{n}: golden {golden.get(n)} != now {current.get(n)}")
    print("golden: all demos match" if not bad else f"golden: {len(bad)} demos differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
