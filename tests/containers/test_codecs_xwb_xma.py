"""XACT wave banks, XMA through FFmpeg and EA-XMA, on the real Xbox 360 fixture and on written banks."""

from __future__ import annotations

import dataclasses
import io
import struct
from pathlib import Path

import av
import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.codecs.eaxma import decode_eaxma, eaxma_extradata, encode_eaxma, split_streams
from audio.codecs.xma import (
    XmaPacketHeader,
    decode_xma,
    parse_xma2_packet_header,
    split_packets,
    xma1_extradata,
    xma2_extradata,
)
from audio.containers import riff, xwb
from audio.containers.snr import CODEC_EAXMA, TYPE_STREAM, SnrHeader, decode_take
from audio.containers.sns import coded_blocks, write_blocks
from audio.core.errors import FormatError, UnsupportedError

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures"
XWB = FIXTURES / "xmadroid.xwb"


@pytest.fixture(scope="module")
def bank_bytes() -> bytes:
    if not XWB.is_file():
        pytest.skip(f"real XMA fixture absent: {XWB}")
    return XWB.read_bytes()


@pytest.fixture(scope="module")
def bank(bank_bytes) -> xwb.WaveBank:
    return xwb.read_wavebank(bank_bytes, str(XWB))


def test_fixture_parses_as_v46_big_endian_bank_of_14_xma2_entries(bank):
    assert (bank.big_endian, bank.version, bank.header_version, bank.name) == (True, 46, 44, "Wave Bank")
    assert len(bank.entries) == 14 and bank.alignment == 0x800 and not bank.compact
    assert {e.codec for e in bank.entries} == {xwb.CODEC_XMA2}
    assert sorted({e.channels for e in bank.entries}) == [1, 2]
    assert all(43000 < e.sample_rate < 45000 for e in bank.entries)
    for e in bank.entries:  # the XMA seek table ends at the entry's duration
        assert e.seek_table and e.seek_table[-1] == e.num_samples
        assert e.data_offset % 0x800 == 0 and e.data_size % 2048 == 0


def test_every_fixture_entry_decodes_to_raw_duration_minus_384_to_768(bank):
    for e in bank.entries:
        pcm, sample_rate = xwb.decode_entry(bank, e.index)
        assert sample_rate == e.sample_rate and pcm.dtype == np.float32 and pcm.shape[1] == e.channels
        assert 384 <= e.num_samples - pcm.shape[0] <= 768, e.index
        assert 0.05 < np.abs(pcm).max() < 1.5


def test_bank_embedded_at_an_offset_reads_the_same(bank, bank_bytes):
    inner = xwb.read_wavebank(b"\xaa" * 777 + bank_bytes, "outer.slb", base_offset=777)
    assert inner.entries[5].data_offset == bank.entries[5].data_offset + 777
    np.testing.assert_array_equal(xwb.decode_entry(inner, 5)[0], xwb.decode_entry(bank, 5)[0])


def test_written_bank_of_fixture_entries_reads_back_and_decodes_identically(bank):
    waves = [
        dataclasses.replace(xwb.NewWave.of_entry(bank, e.index), name=f"wave{e.index}")
        for e in bank.entries[:6]
    ]
    for big in (True, False):
        again = xwb.read_wavebank(xwb.write_wavebank(waves, big_endian=big), "rewritten")
        assert [e.name for e in again.entries] == [f"wave{i}" for i in range(6)]
        for e in again.entries:
            assert e.seek_table == bank.entries[e.index].seek_table
            np.testing.assert_array_equal(
                xwb.decode_entry(again, e.index)[0], xwb.decode_entry(bank, e.index)[0]
            )


def test_writer_reproduces_the_fixture_segment_layout(bank, bank_bytes):
    waves = [xwb.NewWave.of_entry(bank, e.index) for e in bank.entries]
    out = xwb.write_wavebank(waves)
    assert out[:0x8C] == bank_bytes[:0x8C]  # header, segment table, bank data up to the build time
    assert out[0x94:0x1E4] == bank_bytes[0x94:0x1E4]  # entry metadata, word for word
    assert out[0x1E4:0x30C] == bank_bytes[0x1E4:0x30C]  # seek tables
    assert out[0x800:] == bank_bytes[0x800:]


@settings(max_examples=examples(60))
@given(
    version=st.integers(34, 46),
    big=st.booleans(),
    compact=st.booleans(),
    named=st.booleans(),
    lengths=st.lists(st.integers(0, 3000), min_size=1, max_size=5),
    sample_rate=st.integers(8000, 96000),
    channels=st.integers(1, 3),
    seed=st.integers(0, 99),
)
def test_pcm_bank_write_read_round_trip(version, big, compact, named, lengths, sample_rate, channels, seed):
    rng = np.random.default_rng(seed)
    clips = [rng.integers(-32768, 32767, size=(n, channels), dtype=np.int16) for n in lengths]
    waves = [
        xwb.NewWave.pcm16(c, sample_rate, big_endian=big, name=f"c{i}" if named else None)
        for i, c in enumerate(clips)
    ]
    blob = xwb.write_wavebank(waves, big_endian=big, version=version, compact=compact, alignment=0x200)
    got = xwb.read_wavebank(blob, "rt.xwb")
    assert (got.version, got.big_endian, got.compact, len(got.entries)) == (version, big, compact, len(clips))
    for e, c in zip(got.entries, clips):
        assert (e.codec, e.channels, e.sample_rate) == (xwb.CODEC_PCM, channels, sample_rate)
        assert e.name == (f"c{e.index}" if named else None)
        assert e.num_samples == (0 if compact else len(c))
        pcm, _ = xwb.decode_entry(got, e.index)
        np.testing.assert_array_equal(np.round(pcm * 32768).astype(np.int16), c)


def test_tag_1_is_xma1_up_to_version_38_and_xma2_from_39():
    wave = xwb.NewWave(xwb.CODEC_XMA2, 1, 44100, b"\xff" * 2048, 512)
    assert xwb.read_wavebank(xwb.write_wavebank([wave], version=38)).entries[0].codec == xwb.CODEC_XMA1
    assert xwb.read_wavebank(xwb.write_wavebank([wave], version=39)).entries[0].codec == xwb.CODEC_XMA2


def test_loop_region_round_trips_and_xwma_is_recognised_but_unsupported():
    w = xwb.NewWave(xwb.CODEC_XWMA, 2, 44100, b"\0" * 100, 4096, loop_start=10, loop_length=2000)
    bank = xwb.read_wavebank(xwb.write_wavebank([w], big_endian=False))
    e = bank.entries[0]
    assert (e.codec, e.loop_start, e.loop_length, e.loops) == ("xwma", 10, 2000, True)
    assert e.loop_in_samples
    with pytest.raises(UnsupportedError, match="xwma"):
        xwb.decode_entry(bank, 0)


def test_msadpcm_entry_decodes_through_ffmpeg():
    sample_rate, n = 22050, 22000
    x = (np.sin(np.arange(n) * 2 * np.pi * 440 / sample_rate) * 12000).astype(np.int16)
    ctx = av.CodecContext.create("adpcm_ms", "w")
    ctx.sample_rate, ctx.layout, ctx.format = sample_rate, "mono", "s16"
    ctx.options = {"block_size": "256"}
    ctx.open()
    packets = []
    for i in range(0, n, ctx.frame_size):
        av_frame = av.AudioFrame.from_ndarray(x[None, i : i + ctx.frame_size], format="s16", layout="mono")
        av_frame.sample_rate = sample_rate
        packets += [bytes(p) for p in ctx.encode(av_frame)]
    packets += [bytes(p) for p in ctx.encode(None)]
    wave = xwb.NewWave(xwb.CODEC_MSADPCM, 1, sample_rate, b"".join(packets), n, block_align=256 - 22)
    bank = xwb.read_wavebank(xwb.write_wavebank([wave], big_endian=False))
    pcm, got_rate = xwb.decode_entry(bank, 0)
    err = pcm[:n, 0] * 32768 - x
    assert got_rate == sample_rate and pcm.shape[0] >= n
    assert 10 * np.log10((x.astype(float) ** 2).sum() / (err**2).sum()) > 20


def test_xma2_packet_header_fields_round_trip():
    h = XmaPacketHeader(xma_frame_count=5, first_xma_frame_bit_offset=1234, metadata=3, packet_skip=7)
    assert XmaPacketHeader.unpack(h.pack()) == h
    assert parse_xma2_packet_header(struct.pack(">I", h.pack()) + bytes(2044)) == h


def test_fixture_packet_headers_are_consistent(bank, bank_bytes):
    e = bank.entries[1]
    for off, pkt in split_packets(xwb.entry_data(bank, 1), e.data_offset):
        hdr = parse_xma2_packet_header(pkt, "xmadroid.xwb", off)
        assert hdr.xma_frame_count <= 63


def test_packet_header_pointing_outside_the_packet_is_rejected():
    bad = XmaPacketHeader(1, 0x7FFF, 0, 0).pack()
    with pytest.raises(FormatError, match="bit offset"):
        parse_xma2_packet_header(struct.pack(">I", bad) + bytes(2044), "f", 4096)


def test_extradata_layouts():
    ext = xma2_extradata(2, samples_encoded=1000, block_count=3)
    assert len(ext) == 34
    assert struct.unpack("<HIIIIIIIBBH", ext) == (1, 3, 1000, 0x10000, 0, 0, 0, 0, 0, 4, 3)
    x1 = xma1_extradata(36000, 3)
    assert len(x1) == 8 + 20 * 2 and x1[4] == 2
    assert struct.unpack_from("<I", x1, 12)[0] == 36000 and x1[8 + 17] == 2 and x1[8 + 20 + 17] == 1


def test_corrupt_xma_packet_is_a_format_error_with_its_offset(bank):
    e = bank.entries[0]
    raw = bytearray(xwb.entry_data(bank, 0))
    raw[4:2048] = np.random.default_rng(3).integers(0, 256, 2044, dtype=np.uint8).tobytes()
    with pytest.raises(FormatError) as err:
        decode_xma(
            split_packets(bytes(raw), e.data_offset),
            e.sample_rate,
            1,
            path="xmadroid.xwb",
            samples_range=(e.num_samples - 2048, e.num_samples),
        )
    assert err.value.path == "xmadroid.xwb"
    assert e.data_offset <= err.value.offset < e.data_offset + len(raw)


def test_truncated_stream_is_a_format_error(bank):
    e = bank.entries[1]
    raw = xwb.entry_data(bank, 1)
    with pytest.raises(FormatError, match="XMA"):
        decode_xma(
            split_packets(raw[: len(raw) // 2]),
            e.sample_rate,
            1,
            samples_range=(e.num_samples - 2048, e.num_samples + 2048),
        )


def _entry_packets(bank, i):
    raw = xwb.entry_data(bank, i)
    return [raw[p : p + 2048] for p in range(0, len(raw), 2048)]


@pytest.mark.parametrize("per_block", [32, 5])
def test_eaxma_of_fixture_entries_equals_ffmpeg_on_the_raw_stream(bank, per_block):
    for e in bank.entries:
        if e.channels != 1 and per_block != 32:
            continue
        packets = _entry_packets(bank, e.index)
        body = write_blocks(encode_eaxma([packets], packets_per_block=per_block))
        assert len(body) < len(b"".join(packets)) + 64  # padding was cut
        header = SnrHeader(0, CODEC_EAXMA, e.channels, e.sample_rate, TYPE_STREAM, False, e.num_samples)
        got, sample_rate = decode_take(header.pack(), body, "take")
        ref = decode_xma(packets, e.sample_rate, e.channels, extradata=eaxma_extradata(e.channels))
        want = np.zeros((e.num_samples, e.channels), np.float32)
        want[: min(len(ref), e.num_samples)] = ref[: e.num_samples]
        assert sample_rate == e.sample_rate
        np.testing.assert_array_equal(got, want)


def test_eaxma_three_channels_are_two_streams(bank):
    stereo = _entry_packets(bank, 6)
    mono = _entry_packets(bank, 7)
    e6, e7 = bank.entries[6], bank.entries[7]
    assert e6.sample_rate == e7.sample_rate
    n = min(e6.num_samples, e7.num_samples)
    body = write_blocks(encode_eaxma([stereo, mono]))
    assert [len(s) for s in split_streams(coded_blocks(body), 3)] == [len(stereo), len(mono)]
    got = decode_eaxma(coded_blocks(body), 3, e6.sample_rate, n, slack=200000)
    ref = decode_xma(mono, e7.sample_rate, 1)
    assert len(ref) < n
    np.testing.assert_array_equal(got[: len(ref), 2], ref[:, 0])
    assert not got[len(ref) :, 2].any()


def test_eaxma_bad_chunk_word_is_rejected(bank):
    body = bytearray(write_blocks(encode_eaxma([_entry_packets(bank, 3)])))
    struct.pack_into(">I", body, 8, 4 * 0x100000)
    with pytest.raises(FormatError, match="chunk word") as err:
        decode_eaxma(coded_blocks(bytes(body)), 1, 44100, 9216, path="x.dat")
    assert err.value.offset == 8


def test_riff_xma2_wrapper_decodes_like_the_direct_path_and_ffmpeg_wav_demuxer(bank):
    e = bank.entries[2]
    raw = xwb.entry_data(bank, 2)
    ext = xma2_extradata(1, samples_encoded=e.num_samples, block_count=1)
    wav = riff.build_wav(riff.xma2_fmt(1, e.sample_rate, ext), raw)
    info = riff.read_riff(wav, "w.wav")
    assert (info.format_tag, info.channels, info.sample_rate) == (riff.TAG_XMA2, 1, e.sample_rate)
    ours, _ = riff.decode_riff(info, wav)
    np.testing.assert_array_equal(ours, xwb.decode_entry(bank, 2)[0])
    with av.open(io.BytesIO(wav), format="wav") as c:
        demuxed = np.concatenate([f.to_ndarray() for f in c.decode(audio=0)], axis=1).T
    np.testing.assert_array_equal(ours, demuxed)


def test_riff_pcm_round_trip():
    x = np.arange(-300, 300, dtype=np.int16).reshape(-1, 2)
    wav = riff.build_wav(riff.pcm_fmt(2, 8000), x.astype("<i2").tobytes(), {"LIST": b"abc"})
    info = riff.read_riff(b"junk" + wav, "p.wav", base_offset=4)
    pcm, sample_rate = riff.decode_riff(info, b"junk" + wav)
    assert sample_rate == 8000 and "LIST" in info.chunks
    np.testing.assert_array_equal(np.round(pcm * 32768).astype(np.int16), x)


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_xma1_extradata_opens_ffmpegs_xma1_decoder(channels):
    out = decode_xma([b"\xff" * 2048] * 2, 36000, channels, version=1)  # padding only: no XMA frames
    assert out.shape == (0, channels)


def test_riff_xma1_fmt_is_parsed_per_stream():
    fmt = struct.pack("<HH", riff.TAG_XMA1, 16) + xma1_extradata(36000, 3)
    info = riff.read_riff(riff.build_wav(fmt, b"\xff" * 2048), "x1.wav")
    assert (info.format_tag, info.xma_streams) == (riff.TAG_XMA1, (2, 1))
    assert (info.channels, info.sample_rate) == (3, 36000)
    pcm, sample_rate = riff.decode_riff(info, riff.build_wav(fmt, b"\xff" * 2048))
    assert pcm.shape == (0, 3) and sample_rate == 36000
