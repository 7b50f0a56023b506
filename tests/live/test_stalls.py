"""Nothing a client sends stalls or exhausts the engine: the issue-20 cases of tools/stalls.py,
each in its own process, within limits on wall time and peak memory.

Before the fixes: the FIFO play froze live for good (killed after 20 s, no metrics), the NUL
name disabled ``radiata.talk``, the flood queued 300,000 talks (342 MB, 70 s) and the burst
ended in 9,857 VoiceLimitError faults.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(case: str) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("stalls", ROOT / "tools" / "stalls.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["stalls"] = mod
    spec.loader.exec_module(mod)
    rec: dict[str, Any] = mod.run_case(case)
    assert "failed" not in rec, rec
    return rec


@pytest.mark.slow
def test_a_fifo_play_in_live_costs_one_fault_and_seconds_still_ends_the_run() -> None:
    r = _run("fifo-live")
    assert r["exit"] == 0 and r["metrics"], r
    assert r["ended_after_s"] < 20 and r["live_peak_rss_mb"] < 400, r
    assert "not a regular file (a FIFO)" in r["stderr"]


@pytest.mark.slow
def test_a_fifo_play_on_the_device_and_sigterm_ends_the_run(audio_device: None) -> None:
    r = _run("fifo-live-device-sigterm")
    assert r["exit"] == 0 and r["metrics"] and r["ended_after_s"] < 20, r


@pytest.mark.slow
def test_a_nul_talk_file_name_over_osc_is_one_fault_and_the_next_talk_plays() -> None:
    r = _run("nul-osc")
    # refused by the port's own check (an OSC rejection) or by the system (one Fault)
    assert r["disabled"] == {} and r["osc_rejected"] + r["outcomes"].get("radiata.talk:Fault", 0) == 1, r
    assert r["outcomes"]["radiata.talk:TalkStarted"] == 1
    assert r["seconds"] < 60 and r["peak_rss_mb"] < 300, r


@pytest.mark.slow
def test_a_300000_talk_flood_queues_sixteen_and_memory_stays_flat() -> None:
    r = _run("talk-flood")
    assert r["accepted"] == 300_000 and r["queued"] <= 16 and r["disabled"] == {}, r
    assert r["outcomes"] == {"radiata.talk:Dropped": r["kept"]}  # the last ones kept are all drops
    assert r["seconds"] < 240 and r["peak_rss_mb"] < 260, r


@pytest.mark.slow
def test_a_10000_play_burst_in_one_block_never_faults() -> None:
    r = _run("play-burst")
    assert r["raised"] == "" and r["disabled"] == {} and r["faults"] == {}, r
    assert "play:Fault" not in r["outcomes"]
    assert r["seconds"] < 240 and r["peak_rss_mb"] < 320, r
