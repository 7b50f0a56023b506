"""PS-ADPCM and .vag: the decoder against a per-sample reference from the spec and against vgmstream;
the encoder's quality on synthetic and espeak-ng speech; the VAGp header; fuzzing."""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.codecs.psadpcm import (
    COEFS,
    PsxSettings,
    adpcm_frame_flags,
    decode_psadpcm,
    decode_psadpcm_int16,
    encode_adpcm_frames,
    encode_psadpcm,
    loop_points,
)
from audio.containers import vgmstream
from audio.containers.vag import decode_vag, encode_vag, read_vag, write_vag
from audio.core.errors import BarkbusError, FormatError, UnsupportedError

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=examples(120), suppress_health_check=[HealthCheck.too_slow])
needs_vgmstream = pytest.mark.skipif(not vgmstream.available()[0], reason="pyvgmstream unavailable")
SPEC_COEFS = [(0, 0), (60, 0), (115, -52), (98, -55), (122, -60)]  # spec: (c1, c2) in 1/64 units


# ------------------------------------------------------------------------------------------- helpers
def reference_decode(data: bytes, rounding: str = "floor", clamp_history: bool = True) -> list[int]:
    """Straight from the spec: 16-byte frames, low nibble first, ``int16(n << 12) >> shift`` plus the
    prediction, clamped; shifts 13..15 as 9 and flags >= 7 silent (vgmstream's documented choices)."""
    h1 = h2 = 0
    out = []
    for f in range(len(data) // 16):
        frame = data[16 * f : 16 * f + 16]
        filt, shift, flag = frame[0] >> 4, frame[0] & 0xF, frame[1]
        c1, c2 = SPEC_COEFS[filt] if filt < 5 else ((30, 0) if filt == 5 else (0, 0))
        shift = 9 if shift > 12 else shift
        for i in range(28):
            raw = v = 0
            if flag < 7:
                nib = (frame[2 + i // 2] >> 4) if i % 2 else (frame[2 + i // 2] & 0xF)
                s = struct.unpack("<h", struct.pack("<H", (nib << 12) & 0xFFFF))[0] >> shift
                if rounding == "floor":
                    raw = s + (c1 * h1 + c2 * h2) // 64
                else:
                    raw = int(s + (c1 * h1 + c2 * h2) / 64)  # exact in double, int() truncates
                v = max(-32768, min(32767, raw))
            out.append(v)
            h2, h1 = h1, (v if clamp_history else raw)
    return out


def vag_bytes(body: bytes, sample_rate: int = 22050, name: bytes = b"probe") -> bytes:
    """A VAGp file built field by field from the spec (big-endian, 48-byte header)."""
    return (
        b"VAGp"
        + struct.pack(">III", 0x20, 0, len(body))
        + struct.pack(">I", sample_rate)
        + bytes(12)
        + name.ljust(16, b"\0")
        + body
    )


def random_frames(seed: int, n: int, filters: int = 5, shifts: int = 13, flag_rate: float = 0.0) -> bytes:
    rng = np.random.default_rng(seed)
    fr = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    fr[:, 0] = (rng.integers(0, filters, n) << 4) | rng.integers(0, shifts, n)
    fr[:, 1] = rng.integers(0, 16, n) * (rng.random(n) < flag_rate)
    return fr.tobytes()


def snr_db(ref: np.ndarray, test: np.ndarray) -> float:
    ref, test = np.asarray(ref, np.float64), np.asarray(test, np.float64)
    return float(10 * np.log10(np.sum(ref**2) / max(np.sum((ref - test) ** 2), 1e-20)))


def speech_like(n: int, sample_rate: int, seed: int) -> np.ndarray:
    """A 90-220 Hz pulse train through two formant resonances with pauses and noise, float64 +-0.6."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    t = np.arange(n) / sample_rate
    f0 = 90 + 130 * (0.5 + 0.5 * np.sin(2 * np.pi * 0.9 * t + seed))
    src = (np.diff(np.floor(np.cumsum(f0 / sample_rate)), prepend=0) > 0).astype(float)
    out = np.zeros(n)
    for formant, bw in ((600 + 100 * (seed % 3), 80), (1700, 120)):
        r = np.exp(-np.pi * bw / sample_rate)
        out += lfilter([1.0], [1.0, -2 * r * np.cos(2 * np.pi * formant / sample_rate), r * r], src)
    out = out * (np.sin(2 * np.pi * 2.3 * t + seed) > -0.3) + rng.normal(0, 0.01, n)
    return out / np.abs(out).max() * 0.6


@pytest.fixture(scope="module")
def espeak_line(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng not installed")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from speech_synth import speak
    finally:
        sys.path.remove(str(ROOT / "tools"))
    x = speak(
        "The bridge is out. We go round by the old mill.",
        ["-v", "en", "-s", "150"],
        tmp_path_factory.mktemp("speech"),
        22050,
    )
    return x / np.abs(x).max() * 0.7


# ------------------------------------------------------------------------------------------- decoder
def test_filter_table_is_the_spec_table() -> None:
    assert COEFS.tolist() == [list(p) for p in SPEC_COEFS]


def test_hand_computed_frame_filter1_accumulates_by_60_over_64() -> None:
    # filter 1, shift 8: nibble 1 -> s = 4096 >> 8 = 16; out = 16 + floor(60 * prev / 64)
    frame = bytes([0x18, 0x00]) + bytes([0x11] * 14)
    got = decode_psadpcm_int16(frame)[:4, 0].tolist()
    assert got == [16, 16 + 15, 16 + (60 * 31) // 64, 16 + (60 * 45) // 64]


def test_nibbles_are_low_first_and_sign_extended() -> None:
    # filter 0, shift 0: low nibble 7 -> 28672, high nibble 8 -> -32768; shift 4 divides by 16
    assert decode_psadpcm_int16(bytes([0x00, 0x00, 0x87] + [0] * 13))[:3, 0].tolist() == [28672, -32768, 0]
    assert decode_psadpcm_int16(bytes([0x04, 0x00, 0x87] + [0] * 13))[:2, 0].tolist() == [1792, -2048]


@pytest.mark.parametrize("rounding", ["floor", "trunc"])
@pytest.mark.parametrize("history", ["clamped", "raw"])
def test_decoder_matches_per_sample_reference(rounding: str, history: str) -> None:
    data = random_frames(3, 300, filters=16, shifts=16, flag_rate=0.2)
    ours = decode_psadpcm_int16(data, settings=PsxSettings(rounding=rounding, history=history))[:, 0]
    assert ours.tolist() == reference_decode(data, rounding, clamp_history=history == "clamped")


def test_float_output_is_int16_over_32768() -> None:
    data = random_frames(4, 50)
    f = decode_psadpcm(data)
    assert f.dtype == np.float32 and f.shape == (50 * 28, 1)
    assert np.array_equal(f * 32768, decode_psadpcm_int16(data).astype(np.float32))


def test_flag_7_and_above_decode_as_silence() -> None:
    data = bytearray(random_frames(5, 4, shifts=8))
    data[16 + 1] = 7
    data[48 + 1] = 12
    pcm = decode_psadpcm_int16(bytes(data))[:, 0]
    assert not pcm[28:56].any() and not pcm[84:].any() and pcm[:28].any() and pcm[56:84].any()


def test_stop_at_end_stops_after_the_end_marked_frame() -> None:
    data = bytearray(random_frames(6, 5, shifts=8))
    data[2 * 16 + 1] = 1
    assert len(decode_psadpcm_int16(bytes(data))) == 5 * 28
    assert len(decode_psadpcm_int16(bytes(data), settings=PsxSettings(stop_at_end=True))) == 3 * 28


def test_bad_filter_error_setting_names_the_frame_offset() -> None:
    data = bytearray(random_frames(7, 4))
    data[32] = 0x93
    with pytest.raises(UnsupportedError) as info:
        decode_psadpcm_int16(bytes(data), settings=PsxSettings(bad_filter="error"), path="x.vag")
    assert info.value.offset == 32 and info.value.found == 9
    zero = decode_psadpcm_int16(bytes(data), settings=PsxSettings(bad_filter="zero"))
    assert zero.shape == (4 * 28, 1)


def test_interleaved_channels_split_by_block() -> None:
    a, b = random_frames(8, 4, shifts=8), random_frames(9, 4, shifts=8)
    inter = b"".join(a[32 * i : 32 * i + 32] + b[32 * i : 32 * i + 32] for i in range(2))
    pcm = decode_psadpcm_int16(inter, 2, interleave=32)
    assert np.array_equal(pcm[:, 0], decode_psadpcm_int16(a)[:, 0])
    assert np.array_equal(pcm[:, 1], decode_psadpcm_int16(b)[:, 0])
    with pytest.raises(FormatError):
        decode_psadpcm_int16(inter[:-16], 2, interleave=32)


def test_settings_reject_unknown_values() -> None:
    for bad in ({"rounding": "nearest"}, {"history": "x"}, {"bad_filter": "x"}, {"bad_shift": 13}):
        with pytest.raises(ValueError):
            PsxSettings(**bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------- vgmstream
@needs_vgmstream
@pytest.mark.parametrize("filt", range(16))
def test_every_filter_and_shift_matches_vgmstream(filt: int) -> None:
    rng = np.random.default_rng(filt)
    adpcm_frames = rng.integers(0, 256, (16 * 3, 16), dtype=np.uint8)
    adpcm_frames[:, 1] = 0
    adpcm_frames[:, 0] = 0x14  # warm the history up with filter 1 ...
    adpcm_frames[16:32, 0] = (filt << 4) | np.arange(16)  # ... then every shift 0..15 with this filter
    data = adpcm_frames.tobytes()
    theirs, sample_rate = vgmstream.decode_buffer(vag_bytes(data), "probe.vag")
    assert sample_rate == 22050
    assert np.count_nonzero(decode_psadpcm_int16(data) != theirs) == 0


@needs_vgmstream
@pytest.mark.parametrize("flag", range(16))
def test_every_flag_value_matches_vgmstream(flag: int) -> None:
    adpcm_frames = np.frombuffer(random_frames(flag + 20, 12, shifts=8), np.uint8).reshape(-1, 16).copy()
    adpcm_frames[4:8, 1] = flag
    data = adpcm_frames.tobytes()
    theirs, _ = vgmstream.decode_buffer(vag_bytes(data), "probe.vag")
    assert np.count_nonzero(decode_psadpcm_int16(data) != theirs) == 0


@needs_vgmstream
def test_random_frames_with_clipping_match_vgmstream_only_in_its_rounding() -> None:
    data = random_frames(0, 4000, filters=16, shifts=16, flag_rate=0.2)
    theirs, _ = vgmstream.decode_buffer(vag_bytes(data), "probe.vag")
    assert np.count_nonzero(decode_psadpcm_int16(data) != theirs) == 0
    spec_clamped = decode_psadpcm_int16(data, settings=PsxSettings(rounding="floor", history="clamped"))
    assert np.count_nonzero(spec_clamped != theirs) > 0  # the documented difference is real


@needs_vgmstream
def test_our_encoded_vag_decodes_identically_in_vgmstream(espeak_line: np.ndarray) -> None:
    data = encode_vag(espeak_line, 22050, "mill")
    ours, sample_rate = decode_vag(data, "mill.vag")
    theirs, their_rate = vgmstream.decode_buffer(data, "mill.vag")
    assert (sample_rate, their_rate) == (22050, 22050)
    assert ours.shape == theirs.shape
    assert np.count_nonzero(np.round(ours * 32768).astype(np.int16) != theirs) == 0


@needs_vgmstream
def test_loop_flags_give_vgmstreams_loop_points() -> None:
    import pyvgmstream

    x = speech_like(6000, 22050, 1)
    data = encode_vag(x, 22050, "loop", loop_start=1000, loop_end=4000)
    info = pyvgmstream.probe_buffer(data, filename_hint="loop.vag")
    assert info.loop_flag and read_vag(data).loop == (info.loop_start, info.loop_end)
    assert read_vag(encode_vag(x, 22050)).loop is None


# ------------------------------------------------------------------------------------------- encoder
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_trip_snr_on_synthetic_speech(seed: int) -> None:
    x = speech_like(22050, 22050, seed)
    y = decode_psadpcm(encode_psadpcm(x))[: len(x), 0]
    assert snr_db(x, y) > 30.0


def test_round_trip_snr_on_a_sine_sweep() -> None:
    t = np.arange(16000) / 16000
    x = 0.5 * np.sin(2 * np.pi * (100 + 1500 * t) * t)
    assert snr_db(x, decode_psadpcm(encode_psadpcm(x))[: len(x), 0]) > 28.0


def test_round_trip_snr_on_espeak_speech(espeak_line: np.ndarray) -> None:
    y, sample_rate = decode_vag(encode_vag(espeak_line, 22050), "line.vag")
    assert sample_rate == 22050
    assert snr_db(espeak_line, y[28 : 28 + len(espeak_line), 0]) > 30.0  # after the lead-in frame


def test_silence_encodes_to_zero_nibbles_and_decodes_to_silence() -> None:
    adpcm_frames = encode_adpcm_frames(np.zeros(100, np.int16))
    assert adpcm_frames.shape == (4, 16) and not adpcm_frames[:, 2:].any()


def test_encoder_is_deterministic_and_pads_to_whole_frames() -> None:
    x = speech_like(1000, 22050, 3)
    a, b = encode_psadpcm(x), encode_psadpcm(x.copy())
    assert a == b and len(a) == 16 * -(-1000 // 28)


def test_encoder_uses_the_history_setting_it_is_given() -> None:
    x = np.clip(speech_like(4000, 22050, 4) * 3, -1, 1)  # clipped: raw and clamped part ways
    for history in ("raw", "clamped"):
        s = PsxSettings(history=history)
        y = decode_psadpcm(encode_psadpcm(x, settings=s), settings=s)[: len(x), 0]
        assert snr_db(x, y) > 15.0


def test_end_and_loop_flags_are_written_where_the_spec_puts_them() -> None:
    x = speech_like(28 * 10, 22050, 5)
    assert adpcm_frame_flags(encode_psadpcm(x)).tolist() == [0] * 9 + [1]
    assert adpcm_frame_flags(encode_psadpcm(x, end_flag=False)).tolist() == [0] * 10
    looped = encode_psadpcm(x, loop_start=28 * 2, loop_end=28 * 6)
    assert adpcm_frame_flags(looped).tolist() == [0, 0, 6, 2, 2, 3, 0, 0, 0, 0]
    assert loop_points(looped) == (56, 168)


def test_stereo_encode_interleaves_channels() -> None:
    x = np.stack([speech_like(2000, 22050, 6), speech_like(2000, 22050, 7)], axis=1)
    data = encode_psadpcm(x, interleave=64)
    y = decode_psadpcm(data, 2, interleave=64)[:2000]
    assert snr_db(x[:, 0], y[:, 0]) > 20 and snr_db(x[:, 1], y[:, 1]) > 20


# ------------------------------------------------------------------------------------------- .vag
def test_read_vag_reads_the_spec_header_fields() -> None:
    body = random_frames(10, 6, shifts=8)
    vag = read_vag(vag_bytes(body, 32000, b"HELLO") + b"\0" * 32, "a.vag")
    assert (vag.version, vag.sample_rate, vag.name, vag.data_size) == (0x20, 32000, "HELLO", 96)
    assert vag.data == body and vag.num_samples == 6 * 28 and vag.channels == 1


def test_write_vag_produces_the_spec_layout() -> None:
    body = random_frames(11, 3)
    assert write_vag(body, 44100, "clip") == vag_bytes(body, 44100, b"clip")
    with pytest.raises(ValueError):
        write_vag(body + b"x", 44100)
    with pytest.raises(ValueError):
        write_vag(body, 44100, "a name far too long")


def test_vag_round_trip_keeps_every_field() -> None:
    data = encode_vag(speech_like(3000, 16000, 8), 16000, "radi_001")
    vag = read_vag(data)
    assert write_vag(vag.data, vag.sample_rate, vag.name, version=vag.version, reserved=vag.reserved) == data
    assert vag.data[:16] == bytes(16) and vag.end_adpcm_frame == vag.adpcm_frame_count - 1


@pytest.mark.parametrize(
    "data, offset",
    [
        (b"VAGp" + bytes(20), 0),  # header cut short
        (b"RIFF" + bytes(60), 0),  # not a VAG
        (vag_bytes(bytes(32))[:-16], 0x0C),  # data size past the end
        (vag_bytes(bytes(32), sample_rate=0), 0x10),  # no sample rate
    ],
)
def test_malformed_vag_raises_format_error_with_offset(data: bytes, offset: int) -> None:
    with pytest.raises(FormatError) as info:
        read_vag(data, "bad.vag")
    assert info.value.offset == offset and "bad.vag" in str(info.value)


@pytest.mark.parametrize("magic", [b"VAGi", b"VAG1", b"pGAV"])
def test_other_vag_variants_are_unsupported(magic: bytes) -> None:
    with pytest.raises(UnsupportedError):
        read_vag(magic + vag_bytes(bytes(32))[4:])


def test_hevag_versions_are_unsupported() -> None:
    data = bytearray(vag_bytes(bytes(32)))
    data[4:8] = struct.pack(">I", 0x00020001)
    with pytest.raises(UnsupportedError):
        read_vag(bytes(data))


# ------------------------------------------------------------------------------------------- fuzzing
_VALID = encode_vag(speech_like(600, 22050, 9), 22050, "fuzz")


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_read_vag_arbitrary_bytes(data: bytes) -> None:
    try:
        decode_vag(data, "fuzz.vag")
    except BarkbusError:
        pass


@FUZZ
@given(
    st.lists(st.tuples(st.integers(0, len(_VALID) - 1), st.integers(0, 255)), max_size=12),
    st.integers(0, len(_VALID)),
)
def test_fuzz_read_vag_mutated_file(edits: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(_VALID)
    for pos, val in edits:
        data[pos] = val
    try:
        pcm, sample_rate = decode_vag(bytes(data[:cut]), "fuzz.vag")
    except BarkbusError:
        return
    assert pcm.dtype == np.float32 and pcm.shape[1] == 1 and sample_rate >= 1


@FUZZ
@given(st.binary(max_size=600), st.integers(1, 4), st.sampled_from([16, 32, 256]))
def test_fuzz_decode_psadpcm_any_bytes(data: bytes, channels: int, interleave: int) -> None:
    try:
        pcm = decode_psadpcm(data, channels, interleave=interleave)
    except BarkbusError:
        return
    rows = len(data) // 16 if channels == 1 else len(data) // (interleave * channels) * (interleave // 16)
    assert pcm.shape == (rows * 28, channels)
    assert np.all(np.abs(pcm) <= 1.0)
