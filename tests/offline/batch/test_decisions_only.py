"""--decisions-only gives a full render's decisions (and voice lifetimes) for both demos."""

from __future__ import annotations

import pytest

from audio.offline.batch.runner import simulate
from audio.offline.render import render_scenario
from audio.offline.scenario import demo_scenario


@pytest.mark.parametrize("demo", ["skate", "sylpheed"])
@pytest.mark.parametrize("seed", [7, 3])
def test_decisions_only_run_decides_exactly_like_a_full_render(demo, seed):
    path = demo_scenario(demo)
    full = render_scenario(path, seed=seed)
    dry = simulate(str(path), seed, decisions_only=True)
    assert dry.audio is None
    assert len(full.decisions) > 20
    assert dry.decisions == full.decisions
    lifetimes = [(tag, start, end) for tag, _, start, end in full.voices]
    start_silence = dry.engine.voices.start_silence
    assert [(v.tag, v.started_at + start_silence, v.ended_at) for v in dry.engine.voices.history] == lifetimes
    assert all(end is not None for _, _, end in lifetimes[:3])
