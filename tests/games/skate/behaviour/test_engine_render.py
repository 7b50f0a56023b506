"""Integration: the speech system through the real engine, and a scenario over a written install."""

import numpy as np
import pytest

from audio.containers.sns import write_blocks
from audio.core.crt import MsvcRand
from audio.core.engine import Engine
from audio.core.plugin import ScenarioContext
from audio.games.skate.events import PedSpawn, SpeechValue
from audio.games.skate.scenario import system_from_scenario
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import SpeechTuning
from audio.games.skate.system import SkateSpeechSystem

from .fakes import CLIP_NAMES, TAKES, SynthSource, demo_headers, demo_table


def render(block):
    eng = Engine(seed=0, block=block)
    system = SkateSpeechSystem(
        SpeechLibrary(demo_table(), demo_headers(), AwcGenerator()),
        SpeechTuning(),
        SynthSource(),
        rng=MsvcRand(1),
    )
    eng.add_system(system)
    eng.bus.post(PedSpawn(t=0.0, ped=1, voice=59, position=(3.0, 0.0, 5.0)))
    eng.bus.post(PedSpawn(t=0.0, ped=2, voice=75, position=(-4.0, 0.0, 25.0)))
    eng.bus.post(SpeechValue(t=0.2, ped=1, value=53))
    eng.bus.post(SpeechValue(t=0.3, ped=2, value=1))
    return eng.render(48000 * 2), eng


def test_lines_render_through_the_engine_block_size_invariant():
    a, eng = render(256)
    b, _ = render(100)
    assert np.array_equal(a, b)
    assert np.abs(a[: int(0.2 * 48000)]).max() == 0.0  # nothing before the first line
    assert np.abs(a[int(0.3 * 48000) : int(0.8 * 48000)]).max() > 0.01
    started = [d.detail["clip"] for d in eng.bus.decisions if d.outcome == "Started"]
    assert started[0] == "501_59_busm1_Warn_n" and started[1:] == [
        CLIP_NAMES[20],
        CLIP_NAMES[21],
        CLIP_NAMES[22],
    ]


def _write_game(tmp_path):
    from audio.codecs.pcm import encode_pcm16be
    from audio.containers.snr import CODEC_PCM16BE, TYPE_STREAM, SnrHeader
    from audio.games.skate.formats.hdr import ClipHeader
    from audio.games.skate.formats.install import write_install

    clips = []
    for cid, n in TAKES.items():
        takes = []
        for k in range(n):
            pcm = (np.sin(np.arange(9000) * (0.05 + 0.01 * k)) * 8000).astype(np.int16)
            head = SnrHeader(0, CODEC_PCM16BE, 1, 36000, TYPE_STREAM, False, len(pcm)).pack()
            takes.append((head, write_blocks(encode_pcm16be(pcm))))
        clips.append((CLIP_NAMES[cid], ClipHeader.new(cid, n), takes))
    write_install(tmp_path / "game", "livingworld", clips, demo_table())


def test_scenario_section_over_an_install_in_the_games_layout(tmp_path):
    _write_game(tmp_path)
    (tmp_path / "tune.toml").write_text(
        'format = "barkbus-skate-tuning"\nversion = 1\n[default]\nrepeat = 0.0\n'
    )
    ctx = ScenarioContext(tmp_path / "s.toml", 5, {})
    system = system_from_scenario({"install": "game", "tuning": "tune.toml", "streams_per_channel": 2}, ctx)
    eng = Engine(seed=5)
    eng.add_system(system)
    eng.bus.post(PedSpawn(t=0.0, ped=1, voice="busm1", position=(0.0, 0.0, 30.0)))
    eng.bus.post(SpeechValue(t=0.1, ped=1, value=53))
    out = eng.render(48000)
    started = [d.detail["clip"] for d in eng.bus.decisions if d.outcome == "Started"]
    assert started == ["501_59_busm1_Warn_f"] and np.abs(out).max() > 0.0


def test_prefetch_decodes_a_spawned_voices_takes_on_the_worker_once(tmp_path):
    import time

    _write_game(tmp_path)
    ctx = ScenarioContext(tmp_path / "s.toml", 5, {})
    system = system_from_scenario({"install": "game", "prefetch": True, "cache_mb": 8}, ctx)
    source = system.sources[1]
    eng = Engine(seed=5)
    eng.add_system(system)
    eng.bus.post(PedSpawn(t=0.0, ped=1, voice="busm1", position=(0.0, 0.0, 3.0)))
    eng.render(256)
    busm1 = [c for c in source.bank.clips if c.voice_id == 59]
    want = sum(len(c.takes) for c in busm1)
    deadline = time.monotonic() + 10
    while source.cache.stats().entries < want and time.monotonic() < deadline:
        time.sleep(0.01)
    assert source.cache.stats().entries == want
    misses = source.cache.stats().misses
    pcm, sample_rate = source.pcm(busm1[0].hdr_id, 0)
    assert sample_rate == 36000 and source.cache.stats().misses == misses  # served from the cache


def test_scenario_section_errors(tmp_path):
    from audio.core.errors import ScenarioError

    ctx = ScenarioContext(tmp_path / "s.toml", 0, {})
    with pytest.raises(ScenarioError, match=r"volume: unknown field"):
        system_from_scenario({"volume": 3}, ctx)
    with pytest.raises(ScenarioError, match="install"):
        system_from_scenario({"install": "nowhere"}, ctx)
