"""Skipped frames in a talk (``TalkSequencer.next_change``): while a message reveals, the frames
that only show more text are not ticked, and the talk decides, posts and shows exactly what
ticking every frame does: slow and changing speeds, a signal after some glyphs, a prohibited
skip, an advance and a choice in the middle of a reveal, lip-sync clips ending mid-reveal."""

from __future__ import annotations

import pytest
from radiata_fixtures import spec_file
from test_radiata_sequencer import Fake, make

from audio.games.radiata.events import Talk
from audio.games.radiata.formats import rmf
from audio.games.radiata.formats.rmf import write_packet, write_rmf

NEVER = 1 << 62


class Clock(Fake):
    """Its clips play by the frame the harness is at (the engine's sample clock), not by the
    sequencer's last tick."""

    now = 0

    def clip_playing(self, h):
        return not h["stopped"] and self.now < h["end"]


def _ticks(seq, fake, until, actions, skip):
    """Tick as the engine does: every frame, or (``skip``) where :meth:`next_change` says,
    asking again after every tick, every action (an event) and a clip's end."""
    due, ticks = 0, []
    for f in range(until):
        fake.now = f
        news = bool(actions.get(f)) or any(h["end"] == f for h in fake.started)
        for act in actions.get(f, []):
            act(seq)
        if not skip or (news and due != f and (seq.next_change(f) or NEVER) <= f):
            due = f
        if due == f:
            seq.tick(f)
            ticks.append(f)
            news = True
        if skip and news:
            due = max(seq.next_change(f + 1) or NEVER, f + 1)
    return ticks


def _run(data, actions, skip, **settings):
    seq, fake, log = make(data, clip_frames=37, **settings)
    clock = Clock(fake.clip_frames)
    clock.seq = seq
    seq.presenter = clock
    shown = []
    actions = {**actions, 0: [lambda s: s.talk(Talk(file="t.rmf", packet=0)), *actions.get(0, [])]}
    for f in range(0, 400, 7):  # the text shown as a UI reads it, between ticks
        actions.setdefault(f, []).append(lambda s, f=f: shown.append((f, s.shown_at(f))))
    ticks = _ticks(seq, clock, 400, actions, skip)
    return log, [(f, repr(e)) for f, e in clock.events], shown, ticks


SLOW = (
    rmf.sentence(12)
    + rmf.speaker(1)
    + rmf.text_speed(0.25)
    + rmf.encode_text("abc def")
    + rmf.signal(3)
    + rmf.encode_text("ghij")
    + rmf.text_speed(1.5)
    + rmf.encode_text("klmnopqrstu")
    + rmf.record(0x0F, 3, 1)
    + rmf.encode_text("vwxyz")
    + rmf.wait_time(40, 2)
)


RUN_ON = (  # a message whose text ends it (no wait): the next one opens in the same frame
    rmf.sentence(12)
    + rmf.speaker(1)
    + rmf.text_speed(0.5)
    + rmf.encode_text("abcdefgh")
    + rmf.sentence(20)
    + rmf.speaker(1)
    + rmf.text_speed(0.75)
    + rmf.encode_text("ijklmn")
    + rmf.wait_time(30, 2)
)


@pytest.mark.parametrize(
    ("data", "actions"),
    [
        (None, {200: [lambda s: s.advance()], 250: [lambda s: s.choose(1)]}),
        (None, {3: [lambda s: s.advance()], 120: [lambda s: s.advance()], 130: [lambda s: s.choose(0)]}),
        (write_rmf([write_packet([12], SLOW)]), {}),
        (write_rmf([write_packet([12], SLOW)]), {17: [lambda s: s.advance()]}),
        (write_rmf([write_packet([12, 20], RUN_ON)]), {}),
    ],
)
def test_a_talk_decides_posts_and_shows_the_same_with_reveal_frames_skipped(data, actions):
    every = _run(data or spec_file(), actions, skip=False)
    skipped = _run(data or spec_file(), actions, skip=True)
    assert skipped[:3] == every[:3]
    assert len(skipped[3]) < len(every[3]) // 2
    assert any(text for _, text in every[2])
