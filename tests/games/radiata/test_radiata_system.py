"""The talk system on the real engine: clips in time with the text, queries, port, scenario keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from radiata_fixtures import spec_file

from audio.core.errors import BarkbusError, ScenarioError
from audio.games.radiata.formats.voicetable import VoiceEntry, write_voicetable
from audio.offline.scenario import build_engine, scenario_from_doc

SAMPLE_RATE = 22_050
FRAME = 800  # samples per 60 Hz frame at 48 kHz


def install(tmp: Path, seconds: float = 0.5) -> Path:
    """town.rmf (the spec packet) and two tone clips: sound 291 by line, sound 7 by character 12."""
    (tmp / "v").mkdir(parents=True, exist_ok=True)
    (tmp / "town.rmf").write_bytes(spec_file())
    n = int(SAMPLE_RATE * seconds)
    for name, hz in (("hi", 440.0), ("go", 660.0)):
        sf.write(
            tmp / "v" / f"{name}.wav", 0.5 * np.sin(2 * np.pi * hz * np.arange(n) / SAMPLE_RATE), SAMPLE_RATE
        )
    rows = [
        VoiceEntry(291, tmp / "v" / "hi.wav", "town.rmf", 0),
        VoiceEntry(7, tmp / "v" / "go.wav", character_id=12),
    ]
    (tmp / "voices.toml").write_text(write_voicetable(rows, {12: "Jack", 40: "Ridley"}, tmp))
    return tmp


def engine(tmp: Path, events: list[dict], **section):
    doc = {
        "scenario": {"name": "t", "duration": 10.0},
        "radiata": {"install": str(tmp), **section},
        "event": events,
    }
    return build_engine(scenario_from_doc(doc, tmp / "t.toml"))


def decisions(eng, outcome):
    return [d for d in eng.bus.decisions if d.system == "radiata.talk" and d.outcome == outcome]


TALK = [
    {"t": 0.1, "type": "radiata.talk", "file": "town.rmf", "packet": 0},
    {"t": 3.0, "type": "radiata.advance"},
    {"t": 4.0, "type": "radiata.choose", "option": 0},
]


def test_clips_start_with_their_messages_and_the_talk_ends_on_the_choice(tmp_path):
    eng = engine(install(tmp_path), TALK, party=[40])
    out = eng.render(48_000 * 5)
    f0 = 4800 // FRAME  # the talk opens on the frame at t = 0.1 s
    assert [d.at for d in decisions(eng, "Message")] == [f0 * FRAME, (f0 + 1 + 90) * FRAME, 3 * 48_000]
    assert [(d.at, d.detail["sound_id"], d.detail["lip_sync"]) for d in decisions(eng, "Started")] == [
        (f0 * FRAME, 291, True),
        ((f0 + 91) * FRAME, 7, False),
    ]
    assert decisions(eng, "Started")[0].detail["speaker"] == "Ridley"  # 9901 -> party slot 1
    assert [d.at for d in decisions(eng, "TalkEnd")] == [4 * 48_000]
    start = f0 * FRAME + eng.voices.start_silence
    clip = int(0.5 * 48_000)
    assert np.abs(out[start + 100 : start + clip - 100]).max() > 0.1
    assert np.abs(out[start + clip + 200 : (f0 + 91) * FRAME]).max() < 1e-6  # silence until the next clip
    assert np.abs(out[(f0 + 91) * FRAME + 400 : (f0 + 91) * FRAME + clip - 400]).max() > 0.1


def test_speaking_and_talk_active_follow_the_clip_and_the_talk(tmp_path):
    eng = engine(install(tmp_path), TALK, party=[40])
    sys = eng.system("radiata.talk")
    eng.render(6000)
    assert sys.talk_active() and sys.speaking(9901) and sys.speaking(40) and sys.speaking("Ridley")
    assert not sys.speaking(12)
    eng.render(48_000)
    assert not sys.speaking(9901) and sys.talk_active()
    eng.render(48_000 * 4)
    assert not sys.talk_active()
    assert "talk" in sys.snapshot() and sys.summary(eng.bus.decisions)


def test_same_scenario_renders_bit_identically_whatever_the_block(tmp_path):
    e1, e2 = engine(install(tmp_path), TALK), engine(install(tmp_path), TALK)
    out1 = np.concatenate([e1.render(256) for _ in range(48_000 * 4 // 256)])
    out2 = np.concatenate([e2.render(1000) for _ in range(48_000 * 4 // 1000)])
    n = min(len(out1), len(out2))
    assert np.array_equal(out1[:n], out2[:n])


def test_a_missing_clip_keeps_the_timing_and_logs_no_clip(tmp_path):
    root = install(tmp_path)
    (root / "voices.toml").write_text("")
    eng = engine(root, TALK)
    eng.render(48_000 * 5)
    assert len(decisions(eng, "NoClip")) == 2 and len(decisions(eng, "Message")) == 3
    assert decisions(eng, "TalkEnd")


def test_port_starts_talks_answers_queries_and_forwards_subtitles(tmp_path):
    from audio.port import open_system

    port = open_system(game="radiata", install=str(install(tmp_path)))
    subs = []
    port.on_subtitle(subs.append)
    port.emit("radiata.talk", file="town.rmf", packet=0)
    port.advance(0.1)
    assert port.is_speaking(9901) and port.engine.system("radiata.talk").talk_active()
    port.advance(2.0)
    port.emit("radiata.advance")
    port.advance(0.2)
    port.emit("radiata.choose", option=1)
    port.advance(0.2)
    assert [s.text for s in subs][:2] == ["Hi!", "Go."]
    assert not port.engine.system("radiata.talk").talk_active()


@pytest.mark.parametrize(
    "section,problem",
    [
        ({"fps": 0}, "fps"),
        ({"on_busy": "wait"}, "on_busy"),
        ({"speed": 3}, "unknown"),
        ({"voices": "nope.toml"}, "voice table"),
    ],
)
def test_bad_sections_are_scenario_errors(tmp_path, section, problem):
    with pytest.raises(ScenarioError):
        engine(install(tmp_path), [], **section)


def test_bad_events_are_scenario_errors(tmp_path):
    with pytest.raises(BarkbusError, match="option"):
        engine(install(tmp_path), [{"t": 1.0, "type": "radiata.choose", "option": -1}])
    with pytest.raises(BarkbusError, match="file"):
        engine(install(tmp_path), [{"t": 1.0, "type": "radiata.talk", "packet": 0}])
    with pytest.raises(ScenarioError, match="no .rmf"):
        engine(tmp_path / "empty", [])
