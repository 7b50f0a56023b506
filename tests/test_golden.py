"""The bundled demos render to exactly the committed golden hashes (tools/golden.py --update
regenerates them when a change to a demo's speech or sound is intended)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _golden_tool():
    spec = importlib.util.spec_from_file_location("golden_tool", ROOT / "tools" / "golden.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_demo_renders_to_its_golden_samples_and_decision_log():
    golden = json.loads((ROOT / "tests" / "golden" / "demos.json").read_text())
    current = _golden_tool().demo_hashes()
    assert set(current) == set(golden), "a demo was added or removed: run python tools/golden.py --update"
    for name in sorted(golden):
        assert current[name] == golden[name], (
            f"demo {name!r} changed: run python tools/golden.py --update if intended"
        )
