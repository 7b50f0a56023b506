"""Hypothesis: only barkbus errors escape the RMF1 reader, the extraction and the voice table."""

from __future__ import annotations

import struct

from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from radiata_fixtures import spec_file

from audio.core.errors import BarkbusError
from audio.games.radiata.cli import dump_records
from audio.games.radiata.formats import rmf
from audio.games.radiata.formats.rmf import EN, JP, read_rmf, write_packet, write_rmf
from audio.games.radiata.formats.voicetable import read_voicetable
from audio.games.radiata.talk.typewriter import Typewriter, reveal_frames

FUZZ = settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])


def everything(data: bytes) -> None:
    """Parse, extract, dump and play every packet's typewriter to its end."""
    try:
        f = read_rmf(data, "fuzz.rmf")
    except BarkbusError:
        return
    for i, p in enumerate(f.packets):
        if p is None:
            continue
        s = f.script(i)
        s.mismatches()
        for m in s.messages:
            rmf.message_record(m, reveal_frames(m.steps, 3.0))
            tw, n = Typewriter(m.steps, 3.0), 0
            while not tw.done and n < 100_000:
                tw.run(n == 0)
                if tw.blocked is not None:
                    tw.resume()
                n += 1
            assert tw.done
    dump_records(data, "fuzz.rmf", default_speed=2.0)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_after_the_magic_only_raise_barkbus_errors(tail):
    everything(b"RMF1" + tail)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 0x9B), st.integers(0, 255)), min_size=1, max_size=8))
def test_mutated_spec_file_only_raises_barkbus_errors(edits):
    data = bytearray(spec_file())
    for pos, value in edits:
        data[pos] = value
    everything(bytes(data))


@FUZZ
@given(
    st.lists(st.binary(max_size=120) | st.none(), min_size=1, max_size=4),
    st.sampled_from([EN, JP]),
    st.binary(max_size=8).map(lambda b: bytes(512) if b else b""),
)
def test_random_token_streams_in_a_valid_container(streams, region, tiles):
    packets = [None if s is None else write_packet([12, 9901], s, end_token=len(s) % 3 != 0) for s in streams]
    data = write_rmf(packets, region, tiles=tiles)
    everything(data)
    if any(p is not None for p in packets):
        f = read_rmf(data, region=region)
        assert f.to_bytes() == data


ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.?!' "


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(1, 3),
            st.text(ALPHABET, max_size=30),
            st.sampled_from([1.0, 3.0, 4.0, 7.0]),
            st.none() | st.tuples(st.sampled_from([0x1F, 0, 5, 15]), st.integers(0, 0xFFFF)),
            st.sampled_from([(90, 2), (0xFFFF, 3), (60, 3)]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_built_messages_read_back_as_written(msgs):
    stream = b"".join(build(*m) for m in msgs)
    s = read_rmf(write_rmf([write_packet([12, 9901, 40], stream)])).script(0)
    assert s.ended and s.mismatches() == [] and len(s.messages) == len(msgs)
    for m, (idx, text, speed, voice, wait) in zip(s.messages, msgs):
        assert (m.speaker_index, m.character_id, m.text, m.speed) == (
            idx,
            [12, 9901, 40][idx - 1],
            text,
            speed,
        )
        assert [(v.channel_raw, v.sound_id) for v in m.voices] == ([voice] if voice else [])
        assert (m.wait.duration, m.wait.flags) == wait


def build(idx: int, text: str, speed: float, voice, wait) -> bytes:
    return rmf.build_message(idx, text, speed=speed, voice=voice, wait=wait)


@settings(max_examples=examples(100))
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=8),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["voice", "characters", "file", "packet", "sound_id", "character_id", "audio", "12", "x"]
                ),
                c,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_voice_table_only_raises_barkbus_errors(doc):
    import tomli_w

    if not isinstance(doc, dict):
        doc = {"voice": doc}
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError):
        return
    try:
        read_voicetable(text, "fuzz.toml", check_files=False)
    except BarkbusError:
        pass


def test_fuzz_helpers_see_the_spec_file():
    f = read_rmf(spec_file())
    assert struct.unpack_from("<I", spec_file(), 0x18)[0] == 0x1C and len(f.script(0).messages) == 3


@settings(max_examples=examples(60))
@given(
    st.binary(max_size=160),
    st.lists(st.tuples(st.integers(0, 300), st.sampled_from(["adv", "c0", "c1", "c9"])), max_size=6),
    st.booleans(),
)
def test_the_sequencer_survives_any_packet_and_any_input(stream, inputs, auto):
    from audio.games.radiata.events import Talk
    from audio.games.radiata.talk.sequencer import TalkSequencer
    from audio.games.radiata.talk.settings import TalkSettings

    f = read_rmf(write_rmf([write_packet([12, 9901], stream, end_token=len(stream) % 2 == 0)]), "f.rmf")

    class P:
        def start_clip(self, talk, clip, speaker):
            return {"end": seq.frame + 7}

        def clip_playing(self, h):
            return seq.frame < h["end"]

        def stop_clip(self, h):
            h["end"] = 0

        def post(self, ev):
            pass

        def label(self, cid):
            return str(cid)

        def plate_name(self, name_id):
            return f"plate{name_id}"

        def proper(self, key):
            return None

    seq = TalkSequencer(
        TalkSettings(auto_choose=0, auto_advance_frames=3),
        P(),
        lambda o, **d: None,
        lambda name, p: f.script(p),
    )
    seq.talk(Talk(file="f.rmf", packet=0, auto_advance=auto))
    todo = dict(inputs)
    for frame in range(400):
        act = todo.get(frame)
        if act == "adv":
            seq.advance()
        elif act:
            seq.choose(int(act[1]))
        seq.tick(frame)
