"""The embedded Skate 3 demo install (audio/games/skate/demo): layout, event table, records, takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audio.games.skate.formats.install import SPEECH_DIR, SkateInstall
from audio.games.skate.formats.names import parse_clip_name

DEMO = Path(__file__).resolve().parents[4] / "audio" / "games" / "skate" / "demo"

#: Speaker type bits of the voices, from the spec's table (shared/specs/skate3-speech.md 1.4).
SPEC_TYPE_BITS = {
    41: 0x1,
    42: 0x1,
    43: 0x1,
    46: 0x2,
    47: 0x2,
    49: 0x2,
    51: 0x4,
    52: 0x4,
    55: 0x8,
    56: 0x8,
    72: 0x10,
    73: 0x10,
    74: 0x10,
    69: 0x20,
    70: 0x20,
    71: 0x20,
    75: 0x40,
    76: 0x40,
    77: 0x40,
    82: 0x80,
    83: 0x80,
    84: 0x80,
    85: 0x100,
    53: 0x100,
    89: 0x200,
    91: 0x200,
    92: 0x200,
    90: 0x200,
    94: 0x400,
    95: 0x400,
    96: 0x400,
    93: 0x400,
    59: 0x1000,
    60: 0x1000,
    61: 0x1000,
    64: 0x2000,
    65: 0x2000,
    66: 0x2000,
    87: 0x4000,
    88: 0x4000,
    86: 0x4000,
}
#: Real living-world event ids and names (spec 2.3).
SPEC_EVENTS = {
    8210: "501_warn",
    8204: "104_spec_slam",
    8207: "202_impact_react",
    8209: "205_spec_collision",
    8220: "203_concern",
    8202: "101_pos",
    8194: "603_Chase_Start",
    8198: "607_chase_join",
    8224: "108_flee",
    8217: "109_help",
    8214: "1901_shout",
    8277: "102_Radio",
    8208: "204_gasp",
    8206: "201_grunt",
}
#: Events whose third request word is the near/far flag (spec 2.4).
NEAR_FAR_EVENTS = {8194, 8202, 8204, 8207, 8210, 8220}


@pytest.fixture(scope="module")
def bank():
    if not (DEMO / SPEECH_DIR / "livingworldspeech.big").is_file():
        pytest.skip("the demo install is not built (python tools/build_skate_demo.py)")
    inst = SkateInstall.open(DEMO)
    yield inst.bank("livingworld")
    inst.close()


def test_demo_install_opens_in_the_game_layout_and_indexes_cleanly(bank):
    assert Path(bank.path).name == "livingworldspeech.big"
    assert bank.problems == []
    assert len(bank.clips) >= 30
    for c in bank.clips:
        assert parse_clip_name(c.name + ".dat") is not None
        assert c.header is not None and c.takes


def test_every_take_decodes_to_finite_36khz_audio_in_the_games_ea_xma2_codec(bank):
    for c in bank.clips:
        for t in c.takes:
            assert (t.codec, t.channels, t.sample_rate) == (3, 1, 36_000), c.name
            pcm, sample_rate = bank.decode_take(c, t.index)
            assert sample_rate == 36_000
            assert pcm.shape == (t.num_samples,)
            assert np.isfinite(pcm).all()
            assert 0.15 < pcm.size / sample_rate < 4.0, (
                f"{c.name}#{t.index} lasts {pcm.size / sample_rate:.2f} s"
            )
            assert 0.05 < np.abs(pcm).max() <= 1.0, f"{c.name}#{t.index} is silent or clipped"


def test_clip_headers_keep_a_history_as_long_as_the_take_count(bank):
    for c in bank.clips:
        assert c.header.take_count == len(c.takes) == c.header.history_len
        assert 2 <= len(c.takes) <= 4, c.name


def test_at_least_six_voices_of_different_types_carry_their_real_type_bits(bank):
    bits = {v: bank.voice_bits(v) for v in bank.voice_ids()}
    assert None not in bits.values()
    types = {v: b[0] for v, b in bits.items()}
    assert types == {v: SPEC_TYPE_BITS[v] for v in types}
    assert len(set(types.values())) >= 6
    assert all(b[1] in (1, 2, 4, 8, 16) for b in bits.values())
    assert {c.voice_id for c in bank.clips if c.voice_name is None}, "no generic (unnamed) voice clip"


def test_event_table_is_the_living_world_bank_with_the_real_ids_and_names(bank):
    table = bank.events
    assert (table.bank, table.sub_bank) == (1, 0)
    by_id = table.by_id()
    for eid, name in SPEC_EVENTS.items():
        assert by_id[eid].name == name
    for ev in table.events:
        assert 0x2000 <= ev.id < 0x4000
        assert ev.fields == tuple(range(1, len(ev.fields) + 1))
        assert 60 <= ev.timeout <= 180 and 500 <= ev.priority <= 550 and ev.probability == 100
        assert ev.unsupported() == []


def test_every_record_names_clips_of_its_event_and_matches_their_voice(bank):
    by_hdr = bank.clips_by_hdr_id()
    played = 0
    for ev in bank.events.events:
        number = int(ev.name.split("_", 1)[0])
        for rec in ev.records:
            played += 1
            assert (rec.weight_code, rec.probability, rec.mode, rec.locals) == (0x39, 100, 0, 0)
            clips = [by_hdr[c.clip_id] for c in rec.clips]
            assert all(c.event == number for c in clips)
            voice = clips[0].voice_id
            assert rec.values[0] == SPEC_TYPE_BITS[voice]
            assert rec.values[1] == bank.voice_bits(voice)[1]
            if ev.id in NEAR_FAR_EVENTS:
                line = clips[0].line
                assert rec.values[2] == (2 if line.endswith("_n") else 1 if line.endswith("_f") else 0), line
    assert played >= 40


def test_warn_has_near_and_far_lines_for_every_voice(bank):
    warn = [c for c in bank.clips if c.event == 501]
    voices = {c.voice_id for c in warn}
    assert len(voices) >= 6
    for v in voices:
        assert {c.line for c in warn if c.voice_id == v} == {"Warn_n", "Warn_f"}


def test_guard_radio_is_one_record_playing_chirp_line_chirp(bank):
    radio = bank.events.by_id()[8277]
    by_hdr = bank.clips_by_hdr_id()
    assert len(radio.records) == 1
    names = [by_hdr[c.clip_id].line for c in radio.records[0].clips]
    assert names == ["Radio_chirp_in", "Radio", "Radio_chirp_out"]
    assert radio.records[0].values[0] == 0x40


def test_the_event_table_and_nested_archives_are_compressed(bank):
    outer = {e.name: e for e in bank.archive.entries}
    for name in ("livingworld_Events.evt", "livingworldhdr.big", "livingworldsth.big"):
        assert outer[name].compression != 0
        assert outer[name].stored_size < outer[name].unpacked_size
    assert all(e.compression != 0 for e in bank.hdr_archive.entries)


def test_install_stays_small(bank):
    size = (DEMO / SPEECH_DIR / "livingworldspeech.big").stat().st_size
    assert size < 5 << 20


def test_readme_says_how_each_take_was_made(bank):
    text = (DEMO / "README.txt").read_text(encoding="utf-8")
    assert "tools/build_skate_demo.py" in text and "espeak-ng" in text
    for c in bank.clips:
        for t in c.takes:
            assert f"{c.name}#{t.index} " in text


def test_demo_takes_pass_the_strict_xma2_parser_and_decode_like_ffmpeg(bank):
    """An FFmpeg-free decoder as the independent reference (the pyvgmstream wheel is built without
    FFmpeg, so vgmstream cannot decode EA-XMA)."""
    from audio.codecs.eaxma import split_streams
    from audio.codecs.xma2_decoder import decode_xma2
    from audio.containers.snr import parse_snr
    from audio.containers.sns import coded_blocks

    for name in ("501_59_busm1_Warn_n", "102_75_secg1_Radio", "102_75_secg1_Radio_chirp_out"):
        clip = bank.clip(name)
        head, body = bank.take_bytes(clip, 0)
        h = parse_snr(head)
        packets = [p for _, p in split_streams(coded_blocks(bytes(body)), h.channels)[0]]
        ref = decode_xma2(packets, h.sample_rate, h.channels)[:, 0]
        ours, our_rate = bank.decode_take(clip, 0)
        assert our_rate == h.sample_rate == 36_000
        assert ref.shape == ours.shape == (h.num_samples,)
        assert np.abs(ref - ours).max() < 1e-5


def test_an_ea_xma2_bank_loads_ffmpeg_on_the_take_cache_worker_not_at_the_first_take(bank, monkeypatch):
    import sys

    from audio.codecs.xma import load_ffmpeg
    from audio.containers.cache import TakeCache
    from audio.games.skate.system import BankTakeSource

    warmed = []
    monkeypatch.setattr(TakeCache, "warm", lambda self, fn: warmed.append(fn))
    assert bank.take_codecs() == {3}
    av = sys.modules.get("av")
    monkeypatch.delitem(sys.modules, "av", raising=False)  # a process that has not loaded FFmpeg
    BankTakeSource(bank).cache.close()
    assert warmed == [load_ffmpeg]

    warmed.clear()  # once FFmpeg is loaded, a later source (the process's next render) warms nothing
    monkeypatch.setitem(sys.modules, "av", av if av is not None else object())
    BankTakeSource(bank).cache.close()
    assert warmed == []

    class Xas1Bank:
        def clips_by_hdr_id(self):
            return {}

        def take_codecs(self):
            return {4}

    warmed.clear()
    BankTakeSource(Xas1Bank()).cache.close()
    assert warmed == []
