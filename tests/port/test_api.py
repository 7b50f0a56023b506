"""The embedding API: game-timed events, the port's clock, speech queries, subtitles."""

from __future__ import annotations

import numpy as np
import pytest

from audio.core.bus import Decision
from audio.core.outcomes import QUIET, Outcome
from audio.port import PortError, SpeechTracker, open_system
from audio.port.api import Subtitle


@pytest.fixture
def port():
    return open_system(game="tone", seed=1)


def _onset(x: np.ndarray) -> int:
    return int(np.flatnonzero(np.abs(x).max(axis=1) > 0)[0])


def test_advance_renders_exactly_the_elapsed_samples_without_drift(port):
    total = sum(port.advance(1 / 30).shape[0] for _ in range(90))
    assert total == 144_000 and port.now_samples == 144_000 and port.now == pytest.approx(3.0)
    assert port.advance_to(2.0).shape == (0, 2)  # the past renders nothing


def test_an_event_with_a_game_timestamp_sounds_at_that_sample_whatever_the_pull_size():
    outs = []
    for step in (100, 256, 1000):
        p = open_system(game="tone", seed=1)
        p.emit("tone.on", speaker="a", line="x", t=0.3)
        outs.append(np.concatenate([p.pull(step) for _ in range(0, 24_000, step)])[:24_000])
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    start = _onset(outs[0])
    assert 0.3 * 48000 <= start <= 0.3 * 48000 + 256 + 1  # the engine's start silence is one block


def test_an_event_without_a_time_takes_effect_at_the_next_block_boundary(port):
    port.advance(0.1)
    port.emit("tone.on", speaker="a", line="x")
    port.advance(0.1)
    d = next(d for d in port.bus.decisions if d.outcome == "Started")
    assert d.at == 4800


def test_speech_queries_follow_a_line_from_start_to_finish(port):
    port.emit("tone.on", speaker="ann", line="L1", seconds=0.5, t=0.2)
    port.advance(0.1)
    assert not port.is_speaking("ann") and not port.line_active("L1")
    port.advance(0.2)
    assert port.is_speaking("ann") and port.line_active("L1") and port.speaking() == {"ann": "L1"}
    assert not port.is_speaking("bob") and not port.line_active("L2")
    port.advance(0.6)
    assert not port.is_speaking("ann") and not port.line_active("L1")


def test_a_stopped_line_is_no_longer_active(port):
    port.emit("tone.on", speaker="ann", line="L1", seconds=5.0)
    port.advance(0.2)
    port.emit("tone.stop", speaker="ann")
    port.advance(0.1)
    assert not port.is_speaking("ann")


def test_tracker_matches_every_speaker_and_line_alias_of_a_started_line():
    tr = SpeechTracker()
    tr(Decision(0, 0.0, "skate.speech", "Started", {"ped": 7, "speaker": 41, "event": 8207, "stream": 2}))
    assert tr.is_speaking(7) and tr.is_speaking(41) and tr.line_active(8207)
    tr(Decision(10, 0.1, "skate.speech", "Queued", {"ped": 7, "speaker": 41, "event": 8210}))
    assert tr.is_speaking(41)
    tr(Decision(20, 0.2, "skate.speech", "Finished", {"ped": 7, "speaker": 41, "event": 8207}))
    assert not tr.is_speaking(7) and not tr.line_active(8207)


class Shown(Outcome):
    Shown = "Shown", QUIET


def test_decision_and_subtitle_subscriptions(port):
    seen: list[Decision] = []
    subs: list[Subtitle] = []
    port.on_decision(seen.append)
    port.on_subtitle(subs.append)
    port.emit("tone.on", speaker="ann", line="L1", seconds=0.1)
    port.advance(0.05)
    port.bus.decide("test", Shown.Shown, speaker="ann", text="Enemy locked!", line="L1")
    port.advance(0.3)
    assert [d.outcome for d in seen if d.system == "tone"] == ["Started", "Finished"]
    assert [(s.speaker, s.text, s.line) for s in subs] == [("ann", "Enemy locked!", "L1")]


def test_bad_requests_are_refused_with_a_reason(port):
    with pytest.raises(PortError, match="unknown event kind"):
        port.emit("nope.nothing")
    with pytest.raises(PortError, match="freq_hz"):
        port.emit("tone.on", freq_hz="loud")
    with pytest.raises(PortError, match="negative"):
        port.advance(-1.0)
    with pytest.raises(PortError, match="unknown game"):
        open_system(game="halo")


def test_out_of_range_tone_is_rejected_by_the_system_not_a_crash(port):
    port.emit("tone.on", speaker="a", seconds=1e9)
    port.advance(0.1)
    assert [d.outcome for d in port.bus.decisions] == ["Rejected"]


def test_a_game_system_on_a_missing_install_is_a_port_error(tmp_path):
    with pytest.raises(PortError, match="skate"):
        open_system(game="skate", install=str(tmp_path / "no-such-install"))


def test_wait_for_speech_on_a_skate_ped_in_the_demo_install():
    try:
        port = open_system(game="skate", install="demo")
    except PortError as exc:
        pytest.skip(f"the Skate demo install is not available: {exc}")
    port.emit("skate.spawn", ped=7, voice=51, position=[0.0, 0.0, 5.0])
    port.emit("skate.value", ped=7, value=53, t=4.0)  # 501_warn
    port.advance(3.9)
    assert not port.is_speaking(7)
    port.advance(0.3)
    started = [d for d in port.bus.decisions if d.outcome == "Started"]
    assert (
        started
        and port.is_speaking(7)
        and port.is_speaking(51)
        and port.line_active(started[0].detail["event"])
    )
    for _ in range(100):  # a mission script's WaitForSpeech(ped 7)
        if not port.is_speaking(7):
            break
        port.advance(0.1)
    assert not port.is_speaking(7)
    assert any(d.outcome == "Finished" for d in port.bus.decisions)


def test_readme_embedding_example_speaks():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = re.search(r"```python\n(from audio.port import open_system.*?)```", readme, re.S).group(1)
    code = code.replace("print(port.is_speaking(1))", "speaking = port.is_speaking(1)")
    scope: dict = {}
    exec(code, scope)
    assert scope["speaking"] is True and abs(scope["audio"]).max() > 0.01
