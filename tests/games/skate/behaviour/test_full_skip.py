"""Skipped frames in a full Skate render (``SkateSpeechSystem.next_tick`` with DSP on): while
no line plays and no ped has work, the system is not ticked, and the audio is the one ticking
every frame gives, sample for sample. A distance delay refreshed on a skipped frame is read
later from the ped's and the listener's positions on that frame: peds spawned after frames
with no peds (the live soak's fault of commit c52bf25), a moving listener, listener poses
posted between frames, and peds moved or respawned while nothing plays."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audio.core.crt import MsvcRand
from audio.core.engine import Engine
from audio.core.world import ListenerPose, Path3
from audio.dsp.mixer import Mixer
from audio.games.skate.events import PedMove, PedSpawn, PlayerSpeed, SpeechValue
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import SpeechTuning
from audio.games.skate.speech.voice import distance_delay
from audio.games.skate.system import SkateSpeechSystem

from .fakes import SynthSource, demo_headers, demo_table

SR = 48_000
PATH = ((0.0, 2.0, 0.0, 3.0), (1.5, -6.0, 0.0, 20.0), (3.0, 10.0, 0.0, 40.0))


def _render(
    skip: bool, posts: list, seconds: float, block: int = 256
) -> tuple[np.ndarray, list[str], Engine]:
    eng = Engine(seed=0, block=block, skip_ticks=skip)
    eng.add_system(
        SkateSpeechSystem(
            SpeechLibrary(demo_table(), demo_headers(), AwcGenerator()),
            SpeechTuning(),
            SynthSource(seconds=0.7),
            rng=MsvcRand(1),
        )
    )
    eng.prepare()
    # the listener moves all the time (1 m per 4 frames), so a delay refresh's frame matters
    eng.world.set_listener(path=Path3([(0.0, (0.0, 0.0, 0.0)), (10.0, (0.0, 0.0, 75.0))]))
    for ev in posts:
        eng.bus.post(ev)
    n = int(SR * seconds)
    audio = np.concatenate([eng.render(min(block, n - t)) for t in range(0, n, block)])
    assert eng.disabled == {}
    log = [json.dumps(d.to_json(), sort_keys=True) for d in eng.bus.decisions]
    return audio, log, eng


def _same(posts: list, seconds: float) -> Engine:
    """Render skipping and ticking every frame; the same samples and decisions."""
    every, every_log, eng_every = _render(False, posts, seconds)
    skipped, skipped_log, eng = _render(True, posts, seconds)
    assert sum('"Started"' in d for d in every_log) >= 2
    assert np.abs(every).max() > 0.01
    assert skipped_log == every_log
    assert np.array_equal(skipped, every)
    assert eng.ticks < eng_every.ticks * 3 / 4
    return eng


@pytest.mark.parametrize("spawn_t", [0.83, 0.9, 1.0, 1.07])
def test_a_ped_spawned_after_frames_with_no_peds_sounds_as_ticking_every_frame(spawn_t):
    _same(
        [
            PedSpawn(t=spawn_t, ped=1, voice=59, path=PATH),
            SpeechValue(t=spawn_t, ped=1, value=53),
            # a second line later, its delay refreshed on frames nobody ticked
            PedSpawn(t=2.31, ped=2, voice=75, position=(-4.0, 0.0, 25.0)),
            SpeechValue(t=2.9, ped=2, value=1),
        ],
        4.0,
    )


def test_peds_moved_and_respawned_while_nothing_plays_sound_as_ticking_every_frame():
    _same(
        [
            PedSpawn(t=0.0, ped=1, voice=59, position=(3.0, 0.0, 12.0)),
            PedSpawn(t=0.0, ped=2, voice=75, path=PATH),
            SpeechValue(t=0.1, ped=1, value=53),
            # the line ends near 0.8 s; the ped moves on frame 42 and again on frame 45, after
            # the refresh of frame 44, and speaks on frame 47 (a delay of frame 44's place)
            PedMove(t=1.41, ped=1, position=(-5.0, 0.0, 2.0)),
            PedMove(t=1.53, ped=1, position=(6.0, 0.0, 30.0)),
            SpeechValue(t=1.55, ped=1, value=1),
            # respawned on frame 73, after the refresh of frame 72, speaks on frame 74
            PedSpawn(t=2.45, ped=2, voice=75, position=(8.0, 0.0, 40.0)),
            SpeechValue(t=2.47, ped=2, value=1),
        ],
        3.6,
    )


def test_listener_poses_between_frames_sound_as_ticking_every_frame():
    _same(
        [
            PedSpawn(t=0.0, ped=1, voice=59, position=(3.0, 0.0, 12.0)),
            PedSpawn(t=0.0, ped=2, voice=75, path=PATH),
            # the listener jumps mid-frame, on a frame's first sample and again before a line
            ListenerPose(t=0.51, position=(0.0, 0.0, 30.0)),
            ListenerPose(t=0.6, position=(10.0, 0.0, -20.0), yaw_deg=90.0),
            ListenerPose(t=0.62, position=(-10.0, 0.0, 60.0)),
            SpeechValue(t=0.7, ped=1, value=53),
            # a pose on frame 49, after the refresh of frame 48, and a line on frame 50: the
            # delay is the one of the listener's place on frame 48
            ListenerPose(t=1.65, position=(0.0, 0.0, 5.0)),
            SpeechValue(t=1.68, ped=2, value=1),
        ],
        3.0,
    )


@pytest.mark.parametrize(("spawn_t", "start"), [(0.9, 27), (0.95, 29), (1.05, 32)])
def test_a_delay_refreshed_on_a_skipped_frame_is_the_distance_then(spawn_t, start, monkeypatch):
    # the countdown starts on the first frame after the spawn and refreshes every 4 frames;
    # the line starts 10.5 frames later, on the next frame, so its delay is of a frame nobody ticked
    ticked: list[int] = []
    tick = SkateSpeechSystem.tick
    monkeypatch.setattr(SkateSpeechSystem, "tick", lambda self, f, e: ticked.append(f) or tick(self, f, e))
    delays: list[float] = []
    set_submix = Mixer.set_submix

    def spy(self, graph, slot, **params):
        if "Del0.seconds" in params:
            delays.append(params["Del0.seconds"])
        return set_submix(self, graph, slot, **params)

    monkeypatch.setattr(Mixer, "set_submix", spy)
    position = (3.0, 0.0, 40.0)
    _, log, _ = _render(
        True,
        [
            PedSpawn(t=spawn_t, ped=1, voice=59, position=position),
            SpeechValue(t=spawn_t + 0.35, ped=1, value=53),
        ],
        spawn_t + 1.0,
    )
    line = math.ceil(round((spawn_t + 0.35) * 30, 6))
    refresh = start + (line - start) // 4 * 4
    assert any('"Started"' in d for d in log)
    assert refresh not in ticked and line in ticked
    listener_z = 75.0 * refresh / 30 / 10.0  # the listener's path: 7.5 m/s along +z
    assert delays[0] == distance_delay(1.0, float(np.hypot(3.0, 40.0 - listener_z)))


@pytest.mark.parametrize(("pose_t", "listener_z"), [(1.65, 12.0), (1.6, 5.0), (1.59, 5.0)])
def test_a_delay_refreshed_before_a_listener_pose_is_the_distance_to_the_listener_then(
    pose_t, listener_z, monkeypatch
):
    # refreshes on frames 0, 4, ... 48; the line starts on frame 51 with frame 48's delay: the
    # listener on its path (z = 7.5 m/s x 1.6 s) unless the pose came by frame 48's first sample
    delays: list[float] = []
    set_submix = Mixer.set_submix

    def spy(self, graph, slot, **params):
        if "Del0.seconds" in params:
            delays.append(params["Del0.seconds"])
        return set_submix(self, graph, slot, **params)

    monkeypatch.setattr(Mixer, "set_submix", spy)
    _, log, _ = _render(
        True,
        [
            PedSpawn(t=0.0, ped=1, voice=59, position=(3.0, 0.0, 40.0)),
            ListenerPose(t=pose_t, position=(0.0, 0.0, 5.0)),
            SpeechValue(t=1.68, ped=1, value=53),
        ],
        2.5,
    )
    assert [json.loads(d)["at"] for d in log if '"Started"' in d][:1] == [51 * 1600]
    assert delays[0] == distance_delay(1.0, float(np.hypot(3.0, 40.0 - listener_z)))


@pytest.mark.parametrize("block", [64, 1000, 3200])
def test_lines_written_frames_ahead_sound_as_ticking_every_frame_through_moves_poses_and_events(block):
    # a line plays from frame 3 to about frame 25 while the ped walks and the listener moves:
    # its writes are computed frames ahead (Engine.schedule); each event below comes while
    # writes wait to run
    posts = [
        PedSpawn(t=0.0, ped=1, voice=59, path=PATH),
        PedSpawn(t=0.0, ped=2, voice=75, position=(-4.0, 0.0, 25.0)),
        SpeechValue(t=0.1, ped=1, value=53),
        PlayerSpeed(t=0.27, speed=3.0),  # nothing the line reads: the writes ahead stand
        PedMove(t=0.352, ped=2, position=(6.0, 0.0, 12.0)),  # another ped: computed again
        PedMove(t=0.45, ped=1, position=(-3.0, 0.0, 14.0)),  # the speaker stops walking, elsewhere
        ListenerPose(t=0.5, position=(1.0, 0.0, 2.0), yaw_deg=40.0),  # on a frame's first sample
        ListenerPose(t=0.561, position=(1.0, 0.0, 9.0), yaw_deg=-75.0),  # the listener turns mid-frame
        SpeechValue(t=0.64, ped=2, value=1),  # a ped frame ticks; the line's writes go on
        SpeechValue(t=1.4, ped=1, value=53),
    ]
    every, every_log, eng_every = _render(False, posts, 2.5, block)
    ahead, ahead_log, eng = _render(True, posts, 2.5, block)
    assert sum('"Started"' in d for d in every_log) >= 2
    assert np.abs(every).max() > 0.01
    assert ahead_log == every_log
    assert ahead.tobytes() == every.tobytes()
    assert eng.rows_applied > 2 * eng.ticks  # most line frames ran as scheduled writes
    assert eng.ticks + eng.rows_applied < eng_every.ticks


def test_a_request_queued_while_both_streams_play_leaves_the_lines_writes_computed_ahead_standing(
    monkeypatch,
):
    # two lines fill the living-world channel's two streams; a third ped's request (frame 9)
    # is queued until the first line finishes (frame 25): nothing the lines read has changed
    posts = [
        PedSpawn(t=0.0, ped=1, voice=59, path=PATH),
        PedSpawn(t=0.0, ped=2, voice=75, position=(-4.0, 0.0, 25.0)),
        PedSpawn(t=0.0, ped=3, voice=59, position=(5.0, 0.0, 10.0)),
        SpeechValue(t=0.1, ped=1, value=53),
        SpeechValue(t=0.15, ped=2, value=1),
        SpeechValue(t=0.3, ped=3, value=53),
    ]
    every, every_log, _ = _render(False, posts, 2.0)
    recomputed: list[int] = []  # frames whose writes were computed again while computed ones stood
    schedule = SkateSpeechSystem._schedule

    def spy(self, lines, frame, end):
        w = self._window
        out = schedule(self, lines, frame, end)
        if self._window is not w and w is not None and w.first <= frame < w.first + len(w.rows):
            recomputed.append(frame)
        return out

    monkeypatch.setattr(SkateSpeechSystem, "_schedule", spy)
    ahead, ahead_log, _ = _render(True, posts, 2.0)
    assert ahead_log == every_log and ahead.tobytes() == every.tobytes()
    outcomes = [(json.loads(d)["outcome"], json.loads(d)["at"] // 1600) for d in ahead_log]
    assert ("Queued", 9) in outcomes and ("Started", 25) in outcomes
    assert not [f for f in recomputed if 9 <= f <= 25]
