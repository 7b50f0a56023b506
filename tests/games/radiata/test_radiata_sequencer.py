"""The talk sequencer in game frames: reveal, signals, waits, presses, choices, channels, lip-sync."""

from __future__ import annotations

import math

import pytest
from radiata_fixtures import spec_file

from audio.games.radiata.events import Chosen, SignalPosted, Subtitle, Talk, TalkEnd
from audio.games.radiata.formats import rmf
from audio.games.radiata.formats.rmf import read_rmf, write_packet, write_rmf
from audio.games.radiata.talk.sequencer import TalkSequencer
from audio.games.radiata.talk.settings import TalkSettings


class Fake:
    """A presenter whose clips last ``clip_frames`` frames."""

    def __init__(self, clip_frames: int = 50) -> None:
        self.clip_frames, self.seq = clip_frames, None
        self.events, self.started, self.stopped = [], [], []

    def start_clip(self, talk, clip, speaker):
        h = {
            "sound": clip.sound_id,
            "start": self.seq.frame,
            "end": self.seq.frame + self.clip_frames,
            "stopped": False,
            "speaker": speaker,
        }
        self.started.append(h)
        return h

    def clip_playing(self, h):
        return not h["stopped"] and self.seq.frame < h["end"]

    def stop_clip(self, h):
        h["stopped"] = True
        self.stopped.append((self.seq.frame, h["sound"]))

    def post(self, ev):
        self.events.append((self.seq.frame, ev))

    def label(self, cid):
        return str(cid)

    def plate_name(self, name_id):
        return f"plate{name_id}"

    def proper(self, key):
        return None

    def of(self, kind):
        return [(f, e) for f, e in self.events if isinstance(e, kind)]


def make(data: bytes | None = None, clip_frames: int = 50, **settings):
    files = {"t.rmf": read_rmf(data if data is not None else spec_file(), "t.rmf")}
    fake = Fake(clip_frames)
    log = []
    seq = TalkSequencer(
        TalkSettings(**settings),
        fake,
        lambda outcome, **d: log.append((seq.frame, outcome, d)),
        lambda f, p: files[f].script(p) if f in files else read_rmf(b"", f),
    )
    fake.seq = seq
    return seq, fake, log


def run(seq, until, actions=None):
    """Tick frames 0..until-1; ``actions[frame]`` runs before that frame's tick."""
    for f in range(until):
        for act in (actions or {}).get(f, []):
            act(seq)
        seq.tick(f)


def frames_of(log, outcome):
    return [f for f, o, _ in log if o == outcome]


def test_spec_packet_plays_in_frames_the_spec_formula_gives():
    seq, fake, log = make()
    adv_at, choose_at = 200, 250
    run(
        seq,
        300,
        {
            0: [lambda s: s.talk(Talk(file="t.rmf", packet=0))],
            adv_at: [lambda s: s.advance()],
            choose_at: [lambda s: s.choose(1)],
        },
    )
    r0 = math.ceil(3 * 256 / 0x400)  # message 0: 3 glyphs at 4.0
    sig = math.ceil(2 * 256 / 0x400)  # the signal after 2 glyphs
    m1 = r0 + 90  # wait 90 frames from the record
    r1 = math.ceil(3 * 256 / 0x300)
    r2a, r2 = math.ceil(3 * 256 / 0x300), math.ceil(5 * 256 / 0x300)
    assert [f for f, e in fake.of(Subtitle)] == [0, m1, adv_at]
    assert [e.text for _, e in fake.of(Subtitle)] == ["Hi!", "Go.", ""]
    assert [(h["sound"], h["start"]) for h in fake.started] == [(291, 0), (7, m1)]
    assert [(f, e.value) for f, e in fake.of(SignalPosted)] == [(sig, 5)]
    assert frames_of(log, "Wait") == [r0, m1 + r1]
    assert frames_of(log, "WaitDone") == [m1] and frames_of(log, "Advanced") == [adv_at]
    assert frames_of(log, "ChoiceOpen") == [adv_at + r2] and r2a < r2
    assert [(f, e.option, e.text) for f, e in fake.of(Chosen)] == [(choose_at, 1, "No")]
    assert [(f, e.reason) for f, e in fake.of(TalkEnd)] == [(choose_at, "End")]
    assert not seq.talk_active()


def test_auto_channel_clip_binds_the_speakers_lip_sync_and_explicit_ones_do_not():
    seq, _fake, _ = make(clip_frames=50, party=(40,))
    seq.talk(Talk(file="t.rmf", packet=0))
    seen = {}
    for f in range(160):
        seq.tick(f)
        seen[f] = (seq.speaking(9901), seq.speaking(40), seq.speaking(12))
    assert (
        seen[0] == (True, True, False)
        and seen[49] == (True, True, False)
        and seen[50] == (False, False, False)
    )
    assert seen[91 + 10] == (False, False, False)  # channel 2 clip of character 12: no lip-sync


def test_explicit_channel_replaces_its_slot_and_auto_clips_overlap():
    msgs = (
        rmf.build_message(1, "A.", voice=(2, 10), wait=(5, 2))
        + rmf.build_message(1, "B.", voice=(2, 11), wait=(5, 2))
        + rmf.build_message(1, "C.", voice=(0x1F, 12), wait=(5, 2))
        + rmf.build_message(1, "D.", voice=(0x1F, 13))
    )
    seq, fake, log = make(write_rmf([write_packet([12], msgs)]), clip_frames=100)
    seq.talk(Talk(file="t.rmf", packet=0))
    run(seq, 40)
    assert [s for _, s in fake.stopped] == [10]  # only the channel-2 clip was cut
    assert len(frames_of(log, "Replaced")) == 1


def test_voice_off_plays_no_clip_but_keeps_the_timing():
    seq, fake, log = make()
    seq.talk(Talk(file="t.rmf", packet=0, voice=False))
    run(seq, 100)
    assert fake.started == [] and len(frames_of(log, "VoiceOff")) == 2
    assert [f for f, _ in fake.of(Subtitle)] == [0, 91]


def test_auto_advance_closes_an_infinite_box_after_its_clip_and_the_set_frames():
    seq, fake, log = make(clip_frames=120, auto_advance_frames=30)
    seq.talk(Talk(file="t.rmf", packet=0, auto_advance=True))
    run(seq, 400)
    # message 1 opens at 91, its clip (120 frames) ends at 211, the box was up since 92
    assert frames_of(log, "AutoAdvanced") == [91 + 120]
    assert fake.of(Chosen) == []  # choices still wait for radiata.choose


def test_auto_choose_takes_the_set_option_with_auto_advance():
    seq, fake, _log = make(clip_frames=1, auto_advance_frames=10, auto_choose=0)
    seq.talk(Talk(file="t.rmf", packet=0, auto_advance=True))
    run(seq, 300)
    assert [e.text for _, e in fake.of(Chosen)] == ["Yes"] and fake.of(TalkEnd)


def test_wait_may_count_from_the_message_start():
    seq, fake, _ = make(wait_starts="at_message_start")
    seq.talk(Talk(file="t.rmf", packet=0))
    run(seq, 100)
    assert [f for f, _ in fake.of(Subtitle)] == [0, 90]


@pytest.mark.parametrize("waits,expect", [(True, None), (False, 1 + 60)])
def test_press_to_continue_box_with_a_duration(waits, expect):
    data = write_rmf(
        [
            write_packet(
                [12], rmf.build_message(1, "Ok.", speed=3.0, wait=(60, 3)) + rmf.build_message(1, "Go.")
            )
        ]
    )
    seq, fake, _ = make(data, cursor_waits_for_press=waits)
    seq.talk(Talk(file="t.rmf", packet=0))
    run(seq, 200)
    opens = [f for f, _ in fake.of(Subtitle)]
    assert opens == ([0] if expect is None else [0, expect])


def test_advance_during_the_reveal_shows_the_rest_unless_skipping_is_prohibited():
    text = "abcdefghijkl"
    slow = (
        rmf.sentence(12)
        + rmf.speaker(1)
        + rmf.text_speed(0.25)
        + rmf.encode_text(text[:6])
        + rmf.signal(3)
        + rmf.encode_text(text[6:])
        + rmf.wait_time(0xFFFF, 3)
    )
    seq, fake, log = make(write_rmf([write_packet([12], slow)]))
    run(seq, 10, {0: [lambda s: s.talk(Talk(file="t.rmf", packet=0))], 5: [lambda s: s.advance()]})
    assert frames_of(log, "RevealSkipped") == [5] and [f for f, _ in fake.of(SignalPosted)] == [5]
    assert frames_of(log, "Wait") == [5]
    locked = slow.replace(rmf.text_speed(0.25), rmf.text_speed(0.25) + rmf.record(0x0F, 3, 0))
    locked = (
        rmf.sentence(12)
        + rmf.speaker(1)
        + rmf.text_speed(0.25)
        + rmf.encode_text("ab")
        + rmf.record(0x0F, 3, 0)
        + rmf.encode_text("cd")
        + rmf.wait_time(0xFFFF, 3)
    )
    seq, fake, log = make(write_rmf([write_packet([12], locked)]))
    run(seq, 10, {0: [lambda s: s.talk(Talk(file="t.rmf", packet=0))], 3: [lambda s: s.advance()]})
    assert frames_of(log, "RevealSkipped") == [3]  # ProhibitSkip 0 clears: skipping allowed


def test_prohibit_skip_finishes_the_text_at_once_and_blocks_advance():
    data = (
        rmf.sentence(6)
        + rmf.speaker(1)
        + rmf.text_speed(0.25)
        + rmf.encode_text("ab")
        + rmf.record(0x0F, 3, 1)
        + rmf.encode_text("cdef")
        + rmf.wait_time(30, 2)
    )
    seq, _fake, log = make(write_rmf([write_packet([12], data)]))
    run(seq, 12, {0: [lambda s: s.talk(Talk(file="t.rmf", packet=0))]})
    assert frames_of(log, "Wait") == [math.ceil(2 * 256 / 64)]  # "ab" at 0.25, then the rest at once


def test_choice_time_limit_takes_the_timeout_option():
    data = (
        rmf.sentence(2)
        + rmf.speaker(1)
        + rmf.text_speed(3.0)
        + rmf.wait_select2(2, time_limit=20)
        + rmf.encode_text("A")
        + rmf.end()
        + rmf.encode_text("B")
        + rmf.end()
    )
    seq, fake, _log = make(write_rmf([write_packet([12], data)]), choice_timeout_option=1)
    seq.talk(Talk(file="t.rmf", packet=0))
    run(seq, 40)
    assert [(f, e.text, e.timeout) for f, e in fake.of(Chosen)] == [(1 + 20, "B", True)]


def test_errors_and_missing_end_still_close_the_talk():
    no_end = write_packet([12], rmf.build_message(1, "A.", wait=(2, 2)), end_token=False)
    seq, fake, log = make(write_rmf([no_end, None]))
    run(
        seq,
        20,
        {
            0: [lambda s: s.talk(Talk(file="t.rmf", packet=0))],
            10: [lambda s: s.talk(Talk(file="t.rmf", packet=1))],
            12: [lambda s: s.talk(Talk(file="nope.rmf", packet=0))],
        },
    )
    assert [(f, e.reason) for f, e in fake.of(TalkEnd)] == [(1 + 2, "NoEnd"), (10, "Error"), (12, "Error")]
    assert len(frames_of(log, "TalkError")) == 2


def test_a_second_talk_queues_behind_the_first():
    short = write_rmf([write_packet([12], rmf.build_message(1, "A.", speed=3.0, wait=(10, 2)))])
    seq, fake, log = make(short)
    seq.talk(Talk(file="t.rmf", packet=0))
    seq.talk(Talk(file="t.rmf", packet=0))
    run(seq, 40)
    assert [f for f, e in fake.of(TalkEnd)] == [11, 23] and frames_of(log, "TalkQueued") == [0]


def test_settings_are_validated():
    with pytest.raises(
        ValueError, match=r"wait_starts: expected one of 'at_record', 'at_message_start', got 'later'"
    ):
        TalkSettings(wait_starts="later").checked()
    with pytest.raises(ValueError, match=r"voice_gian: unknown field \(did you mean 'voice_gain'\?\)"):
        TalkSettings.from_dict({"voice_gian": 3})
    with pytest.raises(ValueError, match=r"end_stops_voices: expected `bool`, got `int`"):
        TalkSettings.from_dict({"end_stops_voices": 1})
    with pytest.raises(ValueError, match=r"voice_gain: expected a finite number, got nan"):
        TalkSettings.from_dict({"voice_gain": float("nan")})
    with pytest.raises(ValueError, match=r"party: expected `array` of length <= 5"):
        TalkSettings.from_dict({"party": [1, 2, 3, 4, 5, 6]})
    assert TalkSettings.from_dict({"party": [40, 41]}).resolve(9902) == 41
