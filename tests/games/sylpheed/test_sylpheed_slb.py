"""The .slb probing reader over the codec layer."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from sylpheed_fakes import FIXTURES

from audio.containers.riff import build_wav, pcm_fmt
from audio.containers.xwb import NewWave, write_wavebank
from audio.core.errors import FormatError, UnsupportedError
from audio.games.sylpheed.formats.slb import decode_slb, probe_slb

XWB = FIXTURES / "xmadroid.xwb"
needs_fixture = pytest.mark.skipif(
    not XWB.exists(), reason=f"fixture {XWB} absent (shared/ not beside the repo)"
)


def _pcm_bank(version=37, big=True):
    x = (np.sin(np.arange(2400) * 0.05) * 12000).astype(np.int16)
    return write_wavebank(
        [NewWave.pcm16(x, 24_000, big_endian=big, name="VOICE_BIRD_020")], big_endian=big, version=version
    ), x


@needs_fixture
def test_xmadroid_probes_as_a_v46_big_endian_bank_and_every_entry_decodes():
    data = XWB.read_bytes()
    rep = probe_slb(data, "xmadroid.slb")
    [f] = [f for f in rep.findings if f.kind == "xwb"]
    assert (f.magic, f.version, f.entries, f.offset) == ("DNBW", 46, 14, 0)
    assert any(c.startswith("xma2/") for c in f.codecs)
    for i in range(f.entries):
        pcm, sample_rate = decode_slb(data, "xmadroid.slb", i)
        assert pcm.shape[0] > 1000 and 40_000 < sample_rate < 48_000 and np.abs(pcm).max() > 0.01


@needs_fixture
def test_embedded_bank_is_found_at_an_aligned_offset_behind_a_header():
    data = b"SLB?" + struct.pack(">III", 1, 2, 3) + b"\0" * 48 + XWB.read_bytes()
    rep = probe_slb(data)
    assert [(f.kind, f.offset) for f in rep.findings] == [("xwb", 64)]
    assert rep.unrecognised[0] == (0, 64)
    pcm, sample_rate = decode_slb(data, entry=3)
    assert pcm.shape[0] > 1000


@pytest.mark.parametrize("version,big", [(34, True), (37, True), (46, True), (40, False)])
def test_pcm_bank_round_trips_through_the_probe(version, big):
    bank, x = _pcm_bank(version, big)
    rep = probe_slb(bank)
    assert rep.findings[0].version == version and rep.findings[0].magic == ("DNBW" if big else "WBND")
    pcm, sample_rate = decode_slb(bank)
    assert sample_rate == 24_000 and np.array_equal(np.round(pcm[:, 0] * 32768).astype(np.int16), x)


def test_a_false_magic_is_rejected_and_the_real_bank_still_found():
    bank, _ = _pcm_bank()
    data = b"DNBW" + b"\xff" * 60 + bank
    rep = probe_slb(data)
    assert [f.offset for f in rep.findings] == [64]
    assert rep.rejected and "0x0" in rep.rejected[0]


def test_riff_pcm_wave_is_recognised_and_decoded():
    x = (np.arange(1000) % 50 * 300).astype("<i2")
    wav = build_wav(pcm_fmt(1, 22_050, 16), x.tobytes())
    rep = probe_slb(wav)
    assert rep.findings[0].kind == "riff" and rep.findings[0].codecs == ("pcm/1ch/22050Hz",)
    pcm, sample_rate = decode_slb(wav)
    assert sample_rate == 22_050 and pcm.shape == (1000, 1)


def test_sound_bank_magic_is_reported_but_not_decodable():
    rep = probe_slb(b"KBDS" + b"\0" * 100)
    assert rep.findings[0].kind == "xact" and not rep.recognised
    with pytest.raises(UnsupportedError):
        decode_slb(b"KBDS" + b"\0" * 100)


def test_garbage_is_reported_as_unrecognised():
    rep = probe_slb(bytes(range(256)) * 10, "x.slb")
    assert not rep.recognised and rep.unrecognised == ((0, 2560),)
    assert "no decodable audio" in rep.text()


def test_raw_xma_needs_a_rate_and_bad_packets_are_rejected():
    pkt = bytearray(b"\0" * 2048)
    struct.pack_into(">I", pkt, 0, (1 << 26) | (0 << 11))  # 1 frame, offset 0
    pkt[4:6] = b"\x40\x00"  # 15-bit frame length 0x2000
    rep = probe_slb(bytes(pkt))
    assert rep.findings and rep.findings[0].kind == "xma"
    with pytest.raises(UnsupportedError, match="raw_sample_rate"):
        decode_slb(bytes(pkt))
    bad = bytearray(pkt)
    struct.pack_into(">I", bad, 0, (1 << 26) | (0x7FF0 << 11))
    assert not probe_slb(bytes(bad)).recognised


@settings(max_examples=examples(120))
@given(st.binary(max_size=600), st.sampled_from([b"", b"DNBW", b"WBND", b"RIFF", b"RIFX"]))
def test_probe_fuzz_never_raises_and_decode_raises_only_format_errors(tail, magic):
    data = magic + tail
    probe_slb(data)
    try:
        decode_slb(data, raw_sample_rate=24_000)
    except FormatError:
        pass
