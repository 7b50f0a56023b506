"""The demo scenario audio/games/skate/demo/plaza.toml renders and shows the speech system at work."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from audio.offline.render import render_scenario

PLAZA = Path(__file__).resolve().parents[4] / "audio" / "games" / "skate" / "demo" / "plaza.toml"


@pytest.fixture(scope="module")
def result():
    if not PLAZA.is_file():
        pytest.skip("the demo is not built (python tools/build_skate_demo.py)")
    return render_scenario(PLAZA)


@pytest.fixture(scope="module")
def speech(result):
    return [d for d in result.decisions if d.system == "skate.speech"]


def test_plaza_renders_finite_unclipped_audio_for_its_whole_duration(result):
    a = result.audio
    assert a.shape[1] == 2
    assert 25.0 <= a.shape[0] / result.sample_rate <= 30.0
    assert np.isfinite(a).all()
    assert np.abs(a).max() < 1.0
    assert np.sqrt(np.mean(a**2)) > 10 ** (-40 / 20)


def test_lines_start_with_their_clip_and_take_and_finish(speech):
    started = [d for d in speech if d.outcome == "Started"]
    assert len(started) >= 8
    assert all(isinstance(d.detail["clip"], str) and isinstance(d.detail["take"], int) for d in started)
    assert sum(d.outcome == "Finished" for d in speech) >= 6
    assert len({d.detail["ped"] for d in started}) >= 6


def test_the_gate_refuses_some_requests(speech):
    outcomes = Counter(d.outcome for d in speech)
    assert outcomes["Repeat"] + outcomes["Gap"] >= 2
    assert outcomes["Repeat"] >= 1


def test_the_bumped_business_man_warns_with_a_near_line_and_the_far_tourist_with_a_far_line(speech):
    clips = {(d.detail["ped"], d.detail["clip"]) for d in speech if d.outcome == "Started"}
    assert (1, "501_59_busm1_Warn_n") in clips
    assert (8, "501_53_Warn_f") in clips


def test_the_slam_draws_reactions_from_several_peds(speech):
    slam = {d.detail["ped"] for d in speech if d.outcome == "Started" and d.detail.get("event") == 8204}
    assert len(slam) >= 2


def test_guard_radio_lines_play_chirp_line_chirp_on_one_stream(speech):
    radio = [d for d in speech if d.outcome == "Started" and d.detail.get("event") == 8277]
    assert radio, "the guard never radioed"
    for k in range(0, len(radio) - len(radio) % 3, 3):
        three = radio[k : k + 3]
        lines = [d.detail["clip"].split("secg1_")[1] for d in three]
        assert lines == ["Radio_chirp_in", "Radio", "Radio_chirp_out"]
        assert len({d.detail["stream"] for d in three}) == 1


def test_a_batch_worker_shares_the_installs_lookups_and_lists_the_same_catalogue():
    from audio.core import memo
    from audio.offline.batch.runner import simulate

    if not PLAZA.is_file():
        pytest.skip("the demo is not built (python tools/build_skate_demo.py)")
    memo.clear()
    with memo.enabled():
        runs = [simulate(str(PLAZA), seed) for seed in (1, 2)]
    memo.clear()
    cold = simulate(str(PLAZA), 2)
    systems = [r.engine.system("skate.speech") for r in (*runs, cold)]
    libs = [s.libraries[1] for s in systems]
    assert libs[0]._events is libs[1]._events and libs[1]._events is not libs[2]._events
    assert libs[1]._events == libs[2]._events and libs[1]._header_index == libs[2]._header_index
    spawned = {d.detail["speaker"] for d in cold.decisions if d.outcome == "Spawned"}
    clips = systems[2].sources[1].bank.clips_by_hdr_id()
    expected = {  # every record's clips of the spawned voices
        (str(ev.id), clips[c.clip_id].name)
        for ev in libs[2].table.events
        for rec in ev.records
        for c in rec.clips
        if c.clip_id in clips and clips[c.clip_id].voice_id in spawned
    }
    assert expected and systems[1].catalogue(runs[1].decisions) == expected == systems[2].catalogue(
        cold.decisions
    )
    assert systems[1].voice_names == systems[2].voice_names
