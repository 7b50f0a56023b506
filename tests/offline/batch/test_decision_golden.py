"""The batch path's decision logs equal the ones recorded before its per-worker caches and the
decisions-only fast paths existed (tests/golden/batch_decisions.json, written by
``tools/golden_decisions.py --update`` from the uncached engine, every seed a fresh process
state). The seeds run one after another with the memo on, as on a worker: a cache or a
skipped computation that changed one decision fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = json.loads((ROOT / "tests" / "golden" / "batch_decisions.json").read_text())


def _tool():
    spec = importlib.util.spec_from_file_location("golden_decisions", ROOT / "tools" / "golden_decisions.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check(dry: int, full: int) -> None:
    current = _tool().decision_hashes(dry, full)
    assert set(current) == set(GOLDEN), "a demo was added or removed: tools/golden_decisions.py --update"
    bad = [f"{n} {k}" for n in sorted(current) for k, h in sorted(current[n].items()) if GOLDEN[n][k] != h]
    assert bad == []


def test_the_first_seeds_of_every_demo_decide_as_recorded_decisions_only_and_full():
    _check(dry=4, full=1)


@pytest.mark.slow
def test_every_recorded_seed_of_every_demo_decides_as_recorded():
    _check(dry=_tool().DRY_SEEDS, full=_tool().FULL_SEEDS)
