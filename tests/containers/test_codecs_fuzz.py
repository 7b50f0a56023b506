"""Truncated and corrupted input: every parser raises FormatError only (never IndexError, struct.error,
MemoryError or a hang)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.codecs.eaxma import encode_eaxma
from audio.codecs.pcm import encode_pcm16be
from audio.codecs.xas1 import encode_xas1
from audio.codecs.xma import parse_xma2_packet_header
from audio.containers import riff, xwb
from audio.containers.snr import SnrHeader, decode_take, parse_snr, split_sps, write_sps
from audio.containers.sns import walk_blocks, write_blocks
from audio.core.errors import FormatError

FIXTURE = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "xmadroid.xwb"
FUZZ = settings(max_examples=examples(120), suppress_health_check=[HealthCheck.too_slow])

_rng = np.random.default_rng(11)
_PCM = _rng.integers(-20000, 20000, size=(900, 2), dtype=np.int16)
_PCM_TAKE = (
    SnrHeader(0, 2, 2, 32000, 1, False, 900).pack(),
    write_blocks(encode_pcm16be(_PCM, block_samples=256)),
)
_XAS_TAKE = (
    SnrHeader(0, 4, 2, 32000, 1, True, 900, 0, 0).pack(),
    write_blocks(encode_xas1(_PCM, block_samples=256)),
)
_SPS = write_sps(
    SnrHeader(0, 4, 2, 32000, 0, False, 900), write_blocks(encode_xas1(_PCM, block_samples=256), version=1)
)
_BANK = xwb.write_wavebank(
    [xwb.NewWave.pcm16(_PCM[:300], 22050, name="a"), xwb.NewWave.pcm16(_PCM[:100, :1], 8000, name="b")],
    alignment=64,
)
_COMPACT = xwb.write_wavebank(
    [xwb.NewWave.pcm16(_PCM[:300], 22050), xwb.NewWave.pcm16(_PCM[:50], 22050)],
    big_endian=False,
    version=40,
    compact=True,
    alignment=64,
)
_WAV = riff.build_wav(riff.pcm_fmt(2, 8000), _PCM[:200].astype("<i2").tobytes())


def _xma_inputs():
    if not FIXTURE.is_file():
        return None
    bank = xwb.read_wavebank(FIXTURE.read_bytes(), "xmadroid.xwb")
    e = bank.entries[3]  # 9216 samples, one packet
    raw = xwb.entry_data(bank, 3)
    small = xwb.write_wavebank([xwb.NewWave(e.codec, 1, e.sample_rate, raw, e.num_samples)])
    take = (
        SnrHeader(0, 3, 1, e.sample_rate, 1, False, e.num_samples).pack(),
        write_blocks(encode_eaxma([[raw[i : i + 2048] for i in range(0, len(raw), 2048)]])),
    )
    return small, take


_XMA = _xma_inputs()


def mutate(data: bytes, draw) -> bytes:
    """Truncate and/or overwrite a few bytes (biased towards the headers)."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        if not buf:
            break
        limit = draw(st.sampled_from([min(len(buf), 64), min(len(buf), 512), len(buf)]))
        pos = draw(st.integers(0, limit - 1))
        buf[pos] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        buf = buf[: draw(st.integers(0, len(buf)))]
    return bytes(buf)


def only_format_errors(fn, *args) -> None:
    try:
        fn(*args)
    except FormatError:
        pass


@FUZZ
@given(st.data())
def test_snr_header_fuzz(data):
    only_format_errors(parse_snr, mutate(_XAS_TAKE[0], data.draw), "f")


@FUZZ
@given(st.data(), st.sampled_from([0, 1]))
def test_sns_block_walk_fuzz(data, version):
    only_format_errors(lambda b: walk_blocks(b, "f", version=version), mutate(_XAS_TAKE[1], data.draw))


@FUZZ
@given(st.data(), st.sampled_from(["pcm", "xas", "hdr"]))
def test_take_decode_fuzz(data, which):
    header, body = _PCM_TAKE if which == "pcm" else _XAS_TAKE
    if which == "hdr":
        header = mutate(header, data.draw)
    else:
        body = mutate(body, data.draw)
    only_format_errors(decode_take, header, body, "take")


@FUZZ
@given(st.data())
def test_sps_fuzz(data):
    def run(blob):
        h, at = split_sps(blob, "f.sps")
        decode_take(h.pack(), blob[at:], "f.sps")

    only_format_errors(run, mutate(_SPS, data.draw))


@FUZZ
@given(st.data(), st.booleans())
def test_wavebank_fuzz(data, compact):
    def run(blob):
        bank = xwb.read_wavebank(blob, "f.xwb")
        for e in bank.entries:
            xwb.decode_entry(bank, e.index)

    only_format_errors(run, mutate(_COMPACT if compact else _BANK, data.draw))


@FUZZ
@given(st.data())
def test_riff_fuzz(data):
    def run(blob):
        info = riff.read_riff(blob, "f.wav")
        riff.decode_riff(info, blob)

    only_format_errors(run, mutate(_WAV, data.draw))


@settings(max_examples=examples(40))
@given(st.binary(max_size=8))
def test_packet_header_fuzz(blob):
    only_format_errors(parse_xma2_packet_header, blob, "f", 0)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_xma_bank_and_eaxma_take_fuzz(data, take):
    if _XMA is None:
        pytest.skip(f"real XMA fixture absent: {FIXTURE}")
    small, (header, body) = _XMA
    if take:
        only_format_errors(decode_take, header, mutate(body, data.draw), "take")
    else:

        def run(blob):
            bank = xwb.read_wavebank(blob, "f.xwb")
            for e in bank.entries:
                xwb.decode_entry(bank, e.index)

        only_format_errors(run, mutate(small, data.draw))
