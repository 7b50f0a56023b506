"""Skipped frames in a decisions-only Skate run (``SkateSpeechSystem.next_tick``): while lines
play and requests wait, the system ticks only where a line's level may cross the cut level, a
cut or an expiry falls due, a clip ends or a stream frees, and decides exactly as it does
ticking every frame, with peds and a listener moving across the cut distance, the listener
jumping, a ped moved, and requests queued behind full streams."""

from __future__ import annotations

import json
import math

from audio.core.crt import MsvcRand
from audio.core.engine import Engine
from audio.core.world import ListenerPose, Path3
from audio.games.skate.events import PedMove, PedSpawn, SpeechValue
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.mixcurves import DEFAULT_OUTPUTS, Curve
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import SpeechTuning
from audio.games.skate.system import SkateSpeechSystem

from .fakes import SynthSource, demo_headers, demo_table

SR = 48_000
CUT_NEAR = 45 + 25 * (3500 - 200) / 3500
"""Where a near clip's level (output 2: 3,500 at 45 m, 0 at 70 m) falls to the cut level 200."""
CUT_FAR = 55 + 25 * (4000 - 200) / 4000
"""Where a far clip's level (output 3: 4,000 at 55 m, 0 at 80 m) falls to the cut level 200."""


def _run(skip: bool) -> tuple[list[str], Engine]:
    eng = Engine(seed=0, dsp=False, skip_ticks=skip)
    system = SkateSpeechSystem(
        SpeechLibrary(demo_table(), demo_headers(), AwcGenerator.from_table(0)),
        SpeechTuning(),
        SynthSource(seconds=4.0),
        rng=MsvcRand(1),
    )
    eng.add_system(system)
    eng.prepare()
    # on towards +z at 15 m/s for 2 s, then still (two listener poses jump it later)
    eng.world.set_listener(path=Path3([(0.0, (0.0, 0.0, 0.0)), (2.0, (0.0, 0.0, 30.0))]))
    edge = 30.0 - CUT_FAR
    posts = [
        # walks away as the listener does: cut 61 frames after their distance crosses the cut
        PedSpawn(t=0.0, ped=1, voice=59, path=((0.0, 0.0, 0.0, -30.0), (2.0, 0.0, 0.0, -70.0))),
        SpeechValue(t=0.1, ped=1, value=53),
        # stands while the listener moves away: cut too
        PedSpawn(t=0.0, ped=5, voice=59, position=(0.0, 0.0, -50.0)),
        SpeechValue(t=0.15, ped=5, value=53),
        # two near peds ask while both streams play: one expires queued, one takes the cut stream
        PedSpawn(t=0.0, ped=3, voice=59, path=((0.0, 2.0, 0.0, 3.0), (2.0, 2.0, 0.0, 33.0))),
        PedSpawn(t=0.0, ped=4, voice=59, position=(-2.0, 0.0, 33.0)),
        SpeechValue(t=0.5, ped=3, value=53),
        SpeechValue(t=2.0, ped=4, value=53),
        # stands just inside the cut distance and is moved just beyond it; the listener's jump
        # to it starts the count of low frames again
        PedSpawn(t=0.0, ped=2, voice=59, position=(0.0, 0.0, edge + 0.01)),
        SpeechValue(t=4.2, ped=2, value=53),
        PedMove(t=4.9, ped=2, position=(0.0, 0.0, edge - 0.01)),
        ListenerPose(t=5.5, position=(0.0, 0.0, -40.0)),
        ListenerPose(t=5.7, position=(0.0, 0.0, 30.0)),
    ]
    for ev in posts:
        eng.bus.post(ev)
    eng.run_until(10 * SR)
    return [json.dumps(d.to_json(), sort_keys=True) for d in eng.bus.decisions], eng


def test_a_decisions_only_run_skipping_frames_decides_as_ticking_every_frame():
    ref, every = _run(False)
    got, skipped = _run(True)
    assert got == ref
    outcomes = [json.loads(d)["outcome"] for d in ref]
    assert outcomes.count("Cut") == 3 and "Expired" in outcomes and "Finished" in outcomes
    assert skipped.ticks < every.ticks // 3


def test_a_curve_crosses_a_level_where_its_segments_do():
    near = DEFAULT_OUTPUTS[2]
    (edge,) = near.crossings(200.0)
    assert math.isclose(edge, CUT_NEAR) and near(edge - 1e-9) > 200 >= near(edge + 1e-9)
    bump = Curve((0.0, 10.0, 10.0, 20.0), (0.0, 400.0, 100.0, 300.0))
    assert bump.crossings(200.0) == (5.0, 10.0, 15.0)
