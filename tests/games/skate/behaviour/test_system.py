"""The speech system on a fake engine: lines, sequences, stops, cuts, submix posts, determinism."""

from collections import Counter
from pathlib import Path

import pytest

from audio.core.crt import MsvcRand
from audio.core.errors import ScenarioError
from audio.core.plugin import ScenarioContext
from audio.games.skate.events import PedMove, PedSpawn, PhotoFlag, PlayerSpeed, SpeechValue, ZombieMode
from audio.games.skate.scenario import scenario_events
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import EventTuning, SpeechTuning
from audio.games.skate.system import SkateSpeechSystem, format_summary, summarize

from .fakes import FakeEngine, SynthSource, demo_headers, demo_table


def make(engine, tuning=None, source=None, seed=0):
    system = SkateSpeechSystem(
        SpeechLibrary(demo_table(), demo_headers(), AwcGenerator.from_table(seed)),
        tuning or SpeechTuning(),
        source or SynthSource(),
        rng=MsvcRand(seed + 1),
    )
    engine.add_system(system)
    return system


def decisions(engine, outcome=None):
    return [d for d in engine.bus.decisions if outcome is None or d.outcome == outcome]


def test_near_and_far_peds_get_their_lines(engine):
    make(engine)
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 5.0)))
    engine.bus.post(PedSpawn(t=0.0, ped=2, voice=59, position=(0.0, 0.0, 30.0)))
    engine.bus.post(SpeechValue(t=0.5, ped=1, value=53))
    engine.bus.post(SpeechValue(t=0.5, ped=2, value=53))
    engine.run(1.0)
    started = {d.detail["ped"]: d.detail["clip"] for d in decisions(engine, "Started")}
    assert started == {1: "501_59_busm1_Warn_n", 2: "501_59_busm1_Warn_f"}
    tags = [v.tag for v in engine.voices.started]
    assert any("Warn_n" in t for t in tags) and any("Warn_f" in t for t in tags)
    assert all(v.graph == "skate_stream_voice" for v in engine.voices.started)
    assert sorted(v.slot for v in engine.voices.started) == [2, 3]


def test_guard_radio_plays_its_record_back_to_back(engine):
    source = SynthSource(seconds=0.3)
    make(engine, source=source)
    engine.bus.post(PedSpawn(t=0.0, ped=7, voice=75, position=(3.0, 0.0, 3.0)))
    engine.bus.post(SpeechValue(t=0.1, ped=7, value=1))
    engine.run(2.0)
    assert [c for c, _ in source.calls] == [20, 21, 22]
    v = engine.voices.started
    assert all(v[i + 1].started_at >= v[i].started_at + int(0.3 * 48000) for i in range(2))
    assert all(v[i + 1].started_at - v[i].started_at <= int(0.3 * 48000) + 1600 for i in range(2))
    assert len(decisions(engine, "Finished")) == 1


def test_a_new_value_stops_the_peds_line(engine):
    make(engine, source=SynthSource(seconds=3.0))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 5.0)))
    engine.bus.post(SpeechValue(t=0.2, ped=1, value=53))
    engine.bus.post(SpeechValue(t=1.0, ped=1, value=1))
    engine.run(1.5)
    stopped = decisions(engine, "Stopped")
    assert len(stopped) == 1 and stopped[0].t == pytest.approx(1.0, abs=0.04)
    assert engine.voices.stops == [0]


def test_a_silent_far_line_is_cut_after_60_frames(engine):
    make(engine, source=SynthSource(seconds=4.0))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 90.0)))
    engine.bus.post(SpeechValue(t=0.0, ped=1, value=53))
    engine.run(3.0)
    start = decisions(engine, "Started")[0].t
    cut = decisions(engine, "Cut")
    assert len(cut) == 1 and round((cut[0].t - start) * 30) == 60


def test_echo_submix_posted_only_when_changed(engine):
    make(engine, source=SynthSource(seconds=2.0))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 10.0)))
    engine.bus.post(SpeechValue(t=0.0, ped=1, value=53))
    engine.run(1.0)
    posts = [p for g, s, p in engine.mixer.submix if g == "skate_echo_submix" and s == 2]
    assert len(posts) == 1 and posts[0]["Del0.seconds"] == pytest.approx(10.0 / 344)
    engine.bus.post(PedMove(t=1.0, ped=1, position=(0.0, 0.0, 20.0)))
    engine.run(0.5)
    dels = [p["Del0.seconds"] for g, s, p in engine.mixer.submix if "Del0.seconds" in p]
    assert dels[-1] == pytest.approx(20.0 / 344) and len(dels) == 2
    # a static ped: after the start only the sends are rewritten, until the move changes the rest
    sets = [set(p) for _, p in engine.voices.sets]
    assert sets[0] == {"Sen0_echo.level", "Sen0_env.level"}
    moved = [k for k in sets if len(k) > 2]
    assert len(moved) == 1 and {"Gai0.gain", "HI20.cutoff_hz", "LI20.cutoff_hz"} <= moved[0]
    assert "Rsp0.pitch" not in moved[0] and "Pn21.angle_deg" not in moved[0]


def test_queue_and_gate_decisions_are_logged(engine):
    tuning = SpeechTuning(default=EventTuning(), events={8207: EventTuning(repeat=5.0)})
    make(engine, tuning=tuning, source=SynthSource(seconds=3.0))
    for p in range(4):
        engine.bus.post(PedSpawn(t=0.0, ped=p, voice=59, position=(0.0, 4.0 + p, 0.0)))
        engine.bus.post(SpeechValue(t=0.1, ped=p, value=53))
    engine.bus.post(SpeechValue(t=0.5, ped=3, value=6))
    engine.bus.post(ZombieMode(t=0.6, on=True))
    engine.bus.post(SpeechValue(t=0.7, ped=2, value=10))
    engine.bus.post(PlayerSpeed(t=0.0, speed=3.0))
    engine.bus.post(PhotoFlag(t=0.0, on=False))
    engine.run(4.5)
    c = Counter(d.outcome for d in engine.bus.decisions)
    assert c["Accepted"] == 4 and c["Queued"] == 2 and c["Repeat"] == 1 and c["Zombie"] == 1
    assert c["Expired"] == 2  # 60-frame timeout while 3 s lines hold both streams
    summary = summarize(engine.bus.decisions)
    assert summary[8210]["Accepted"] == 4 and "8210" in format_summary(engine.bus.decisions)


def scenario(seed):
    eng = FakeEngine()
    make(eng, seed=seed, source=SynthSource())
    for p in range(6):
        eng.bus.post(
            PedSpawn(t=0.0, ped=p, voice=59 if p % 2 else 75, position=(p * 4.0 - 10, 0.0, 8.0 + p * 3))
        )
    for k in range(30):
        eng.bus.post(SpeechValue(t=0.2 + 0.3 * k, ped=k % 6, value=(53, 10, 1, 6, 25)[k % 5]))
    eng.run(10.0)
    return [(d.at, d.outcome, sorted(d.detail.items(), key=str)) for d in eng.bus.decisions]


def test_same_seed_same_decisions():
    a, b, c = scenario(3), scenario(3), scenario(4)
    assert a == b and a != c
    assert any(o == "Started" for _, o, _ in a)


def test_scenario_event_factories_and_errors():
    f = scenario_events()
    assert set(f) == {
        "skate.spawn",
        "skate.value",
        "skate.move",
        "skate.speed",
        "skate.zombie",
        "skate.challenge",
        "skate.photo",
    }
    ctx = ScenarioContext(Path("s.toml"), 0, {})
    ev = f["skate.spawn"](
        {"type": "skate.spawn", "t": 1.0, "ped": 3, "voice": "busm1", "path": [[0, 1, 2, 3], [2, 5, 2, 3]]},
        ctx,
    )
    assert ev.path == ((0.0, 1.0, 2.0, 3.0), (2.0, 5.0, 2.0, 3.0)) and ev.voice == "busm1"
    assert f["skate.value"]({"t": 0.5, "ped": 1, "value": 53}, ctx).value == 53
    assert f["skate.challenge"]({"t": 0.5}, ctx).challenge is None
    with pytest.raises(ScenarioError, match="missing required field `value`"):
        f["skate.value"]({"t": 0.5, "ped": 1}, ctx)
    with pytest.raises(ScenarioError, match=r"volume: unknown field"):
        f["skate.value"]({"t": 0.5, "ped": 1, "value": 2, "volume": 3}, ctx)
    with pytest.raises(ScenarioError, match="s.toml"):
        f["skate.speed"]({"t": 0.5, "speed": "fast"}, ctx)
    with pytest.raises(ScenarioError, match="model"):
        f["skate.spawn"]({"t": 0.5, "ped": 1, "voice": 59, "model": "alien"}, ctx)


def test_a_spawned_ped_is_a_world_emitter_along_its_path(engine):
    make(engine)
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, path=((0.0, 0.0, 0.0, 10.0), (1.0, 0.0, 0.0, 40.0))))
    engine.bus.post(PedSpawn(t=0.0, ped=2, voice=59, position=(1.0, 2.0, 3.0)))
    engine.run(0.5)
    assert engine.world.emitters["skate.ped.1"].at(0.5)[2] == pytest.approx(10.0 + 30.0 * 0.5)
    assert engine.world.emitters["skate.ped.2"] == (1.0, 2.0, 3.0)


def test_timeline_png(tmp_path, engine):
    make(engine, source=SynthSource(seconds=0.5))
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 5.0)))
    engine.bus.post(SpeechValue(t=0.1, ped=1, value=53))
    engine.bus.post(SpeechValue(t=1.0, ped=1, value=25))
    engine.run(2.0)
    from audio.offline.timeline import timeline_png

    out = timeline_png(engine.bus.decisions, tmp_path / "t.png", 2.0)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_skate_events_round_trip_through_a_capture_record():
    from audio.core.capture import event_from_json, event_to_json

    ev = PedSpawn(
        t=1.5, ped=4, voice="busm1", path=((0.0, 1.0, 0.0, 2.0), (3.0, 1.0, 0.0, 9.0)), voice_float=1.2
    )
    back, at, origin = event_from_json(event_to_json(ev, 72000))
    assert back == ev and at == 72000


def test_interrupt_stops_the_lowest_priority_voice(engine):
    tuning = SpeechTuning(events={8207: EventTuning(priority=70, interrupt=True)})
    make(engine, tuning=tuning, source=SynthSource(seconds=3.0))
    for p in range(3):
        engine.bus.post(PedSpawn(t=0.0, ped=p, voice=59, position=(0.0, 0.0, 4.0 + p)))
    engine.bus.post(SpeechValue(t=0.1, ped=0, value=53))
    engine.bus.post(SpeechValue(t=0.2, ped=1, value=53))
    engine.bus.post(SpeechValue(t=0.3, ped=2, value=6))
    engine.run(0.5)
    inter = decisions(engine, "Interrupted")
    assert len(inter) == 1 and inter[0].detail["ped"] == 0 and inter[0].detail["stream"] == 2
    assert engine.voices.stops == [0] and engine.voices.started[-1].slot == 2


def test_phone_ring_then_greet_and_photographer_repeats(engine):
    make(engine)
    engine.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(0.0, 0.0, 5.0)))
    engine.bus.post(PedSpawn(t=0.0, ped=2, voice=59, position=(0.0, 0.0, 6.0)))
    engine.bus.post(SpeechValue(t=0.5, ped=1, value=49))
    engine.bus.post(PhotoFlag(t=0.0, on=True))
    engine.bus.post(SpeechValue(t=0.5, ped=2, value=29))
    engine.run(3.0)
    ring = decisions(engine, "PhoneRing")
    assert len(ring) == 1 and ring[0].t == pytest.approx(0.5, abs=0.04)
    greet = [d for d in engine.bus.decisions if d.detail.get("value") == 64]
    assert len(greet) == 1 and greet[0].t == pytest.approx(1.5, abs=0.04)
    assert greet[0].outcome == "UnknownEvent" and greet[0].detail["event"] == 8215  # not in the demo table
    photo = [d.t for d in decisions(engine, "NoEvent") if d.detail.get("value") == 29]
    assert photo == pytest.approx([0.5, 1.5, 2.5], abs=0.04)


def test_pros_take_the_main_cast_path(engine):
    from audio.games.skate.formats.evt import EvtTable

    from .fakes import Hdr, event, rec

    mc = SpeechLibrary(
        EvtTable(
            0,
            0,
            [
                event(77, [rec([501], (4,)), rec([500], (8,))], fields=(1,)),
                event(115, [rec([502], ())], fields=()),
                event(6, [rec([503], ())], fields=()),
            ],
            "mc.evt",
        ),
        [Hdr(500, 2, 2), Hdr(501, 2, 2), Hdr(502, 1, 1), Hdr(503, 1, 1)],
    )
    src = SynthSource(seconds=2.0)
    system = SkateSpeechSystem(
        SpeechLibrary(demo_table(), demo_headers()),
        SpeechTuning(),
        SynthSource(),
        maincast=mc,
        maincast_source=src,
        rng=MsvcRand(1),
    )
    engine.add_system(system)
    engine.bus.post(PedSpawn(t=0.0, ped=9, voice=31, model="pro", cast_bit=8, position=(0.0, 0.0, 10.0)))
    engine.bus.post(SpeechValue(t=0.2, ped=9, value=53))
    engine.bus.post(SpeechValue(t=1.0, ped=9, value=30))
    engine.run(1.5)
    started = decisions(engine, "Started")
    assert [c for c, _ in src.calls][0] == 500  # the record of this pro's cast bit
    assert started[0].detail["stream"] == 0 and started[0].detail["event"] == 77
    assert decisions(engine, "Stopped")[0].detail["ped"] == 9
    assert started[1].detail["event"] in (115, 6)
