"""Hostile missions stay inside the VM's budgets (issue 20's Starlancer cases): a self-looping
``random_branch``, a call fan-out over 30 threads and a timer storm, each for 10 minutes of mission,
in a fresh process (tools/starlancer_budgets.py), with limits on time, memory and decisions kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[3] / "tools" / "starlancer_budgets.py"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["loop", "fanout", "timers"])
def test_a_hostile_mission_is_bounded_in_time_memory_and_decisions(case):
    out = subprocess.run(
        [sys.executable, str(TOOL), case, "--seconds", "600", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    got = json.loads(out.stdout)
    assert got["wall_s"] < 60 and got["rss_mb"] < 400
    # loop and fanout end their threads at once (one NoProgress each); the storm's 16 timers fire
    # every second for the whole mission, so its decisions grow with the mission, never faster
    limit = {"loop": 1_000, "fanout": 10_000, "timers": 600 * 16 * 20}[case]
    assert got["decisions"] < limit
