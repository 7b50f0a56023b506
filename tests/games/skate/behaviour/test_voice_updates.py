"""Per-frame voice updates: only changed parameters are rewritten (sends always), the output is
the same as rewriting everything, and a distance delay read late is the one the game's
per-frame countdown computed."""

import numpy as np
import pytest

from audio.core.crt import MsvcRand
from audio.core.engine import Engine
from audio.core.voices import ParamWriter, VoiceManager
from audio.games.skate.events import PedMove, PedSpawn, SpeechValue
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import SpeechTuning
from audio.games.skate.speech.voice import distance_delay
from audio.games.skate.system import VOICE_GRAPH, SkateSpeechSystem

from .fakes import SynthSource, demo_headers, demo_table
from .test_system import make

PATH = ((0.0, 2.0, 0.0, 3.0), (1.5, -6.0, 0.0, 20.0), (3.0, 10.0, 0.0, 40.0))


def _system() -> SkateSpeechSystem:
    return SkateSpeechSystem(
        SpeechLibrary(demo_table(), demo_headers(), AwcGenerator()),
        SpeechTuning(),
        SynthSource(seconds=2.0),
        rng=MsvcRand(1),
    )


def _render() -> tuple[np.ndarray, Engine]:
    eng = Engine(seed=0, block=256)
    eng.add_system(_system())
    eng.bus.post(PedSpawn(t=0.0, ped=1, voice=59, path=PATH))
    eng.bus.post(PedSpawn(t=0.0, ped=2, voice=75, position=(-4.0, 0.0, 25.0)))
    eng.bus.post(SpeechValue(t=0.2, ped=1, value=53))
    eng.bus.post(SpeechValue(t=0.3, ped=2, value=1))
    eng.bus.post(PedMove(t=1.0, ped=2, position=(6.0, 0.0, 12.0)))
    return eng.render(48000 * 3), eng


def test_unchanged_parameters_are_not_rewritten_and_sends_always_are():
    eng = Engine(seed=0)
    eng.mixer.prepare((VOICE_GRAPH,))
    voice = eng.voices.start(VOICE_GRAPH, np.zeros(4800, np.float32), 36000, params={"Gai0.gain": 0.5})
    bank = voice._bank
    for node in bank.by_id.values():
        node.dirty[voice.instance] = False
    writer = ParamWriter(eng.voices)
    writer.write(voice, {"Gai0.gain": 0.5, "HI20.cutoff_hz": 300.0, "Sen0_env.level": 0.25})
    dirty = {i for i, node in bank.by_id.items() if node.dirty[voice.instance]}
    assert dirty == {"HI20", "Sen0_env"}  # the gain is unchanged; the send is always written
    for node in bank.by_id.values():
        node.dirty[voice.instance] = False
    writer.write(voice, {"Gai0.gain": 0.25, "HI20.cutoff_hz": 300.0, "Sen0_env.level": 0.25})
    assert {i for i, node in bank.by_id.items() if node.dirty[voice.instance]} == {"Gai0", "Sen0_env"}
    assert bank.get(voice.instance, "Gai0.gain") == 0.25
    assert voice.written["Gai0.gain"] == 0.25


def test_skipping_unchanged_parameters_changes_no_sample(monkeypatch):
    written: list[int] = []
    set_params = VoiceManager.set
    monkeypatch.setattr(
        VoiceManager,
        "set",
        lambda self, voice, **params: written.append(len(params)) or set_params(self, voice, **params),
    )
    new, eng = _render()
    skipping = sum(written)
    written.clear()
    monkeypatch.setattr(ParamWriter, "write", lambda self, voice, params: self.voices.set(voice, **params))
    old, _ = _render()
    assert sum(d.outcome == "Started" for d in eng.bus.decisions) >= 2
    assert np.abs(old).max() > 0.01
    assert skipping < sum(written) / 2
    assert np.array_equal(new, old)


def test_a_delay_read_late_is_the_one_the_per_frame_countdown_computed(engine):
    make(engine, source=SynthSource(seconds=2.0))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, path=PATH))
    engine.bus.post(SpeechValue(t=1.0, ped=1, value=53))
    engine.run(2.0)
    started = [d for d in engine.bus.decisions if d.outcome == "Started"]
    frame = round(started[0].t * 30)
    # the game's countdown: decrement every frame from frame 0, reload 4 and recompute at <= 0
    count, refresh = 0, -1
    for f in range(frame + 1):
        count -= 1
        if count <= 0:
            count, refresh = 4, f
    assert refresh != frame  # the line starts between refreshes: the delay is an older frame's
    t = refresh / 30
    u = t / 1.5
    x, z = 2.0 + (-6.0 - 2.0) * u, 3.0 + (20.0 - 3.0) * u
    posted = [p["Del0.seconds"] for _, _, p in engine.mixer.submix if "Del0.seconds" in p]
    assert posted[0] == distance_delay(1.0, float(np.hypot(x, z)))
    assert posted[0] == pytest.approx(np.hypot(x, z) / 344.0, rel=1e-6)


def test_a_line_recomputes_its_voice_block_only_when_its_ped_moved(engine, monkeypatch):
    from audio.games.skate.speech.voice import VoiceMixer

    calls: list[float] = []
    block_of = VoiceMixer.block_of
    monkeypatch.setattr(
        VoiceMixer,
        "block_of",
        staticmethod(
            lambda shape, distance, *rest: calls.append(distance) or block_of(shape, distance, *rest)
        ),
    )
    make(engine, source=SynthSource(seconds=1.0))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 10.0)))
    engine.bus.post(SpeechValue(t=0.0, ped=1, value=53))
    engine.run(0.5)
    assert calls == [10.0]  # 15 frames of one static ped's line: one block
    engine.bus.post(PedMove(t=0.5, ped=1, position=(0.0, 0.0, 20.0)))
    engine.run(0.2)
    # the move, then the delay countdown's next refresh (a new delay): two blocks in 6 frames
    assert calls == [10.0, 20.0, 20.0]


@pytest.mark.parametrize("spawn_t", [0.83, 0.9, 1.0])
def test_a_ped_spawned_after_frames_with_no_peds_reads_its_delay_without_a_fault(spawn_t):
    # A full render with no peds at first: the system must still keep the listener's position
    # for every frame, since a ped spawned later reads its delay on an earlier refresh frame.
    eng = Engine(seed=0, block=256)
    eng.add_system(_system())
    eng.bus.post(PedSpawn(t=spawn_t, ped=1, voice=59, path=PATH))
    eng.bus.post(SpeechValue(t=spawn_t, ped=1, value=53))
    audio = eng.render(48000 * 3)
    assert eng.disabled == {}
    assert any(d.outcome == "Started" for d in eng.bus.decisions)
    assert np.abs(audio).max() > 0.01
