"""The speech manager: value -> event, request words, the nine-step gate, timers."""

import pytest

from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.manager import (
    SpeechManager,
    living_events_for_value,
    living_request_words,
    maincast_events_for_value,
    maincast_request_words,
)
from audio.games.skate.speech.tuning import EventTuning, SpeechTuning

from .fakes import BUSM, demo_headers, demo_table


class Scripted:
    """rand() returning scripted values (then 0)."""

    def __init__(self, *values):
        self.values = list(values)
        self.calls = 0

    def rand(self):
        self.calls += 1
        return self.values.pop(0) if self.values else 0


def mgr(tuning: EventTuning, rng=None, event=8207):
    t = SpeechTuning(events={event: tuning})
    return SpeechManager(t, SpeechLibrary(demo_table(), demo_headers()), rng=rng or Scripted())


WORDS = [BUSM, 1, 2]


def test_value_to_event_with_coin_flips_and_the_bum_draw():
    assert living_events_for_value(10, BUSM, Scripted(1)) == [8220]
    assert living_events_for_value(10, BUSM, Scripted(2)) == [8209]
    assert living_events_for_value(14, BUSM, Scripted(3)) == [8194]
    assert living_events_for_value(21, BUSM, Scripted(4)) == [8217]
    r = Scripted()
    assert living_events_for_value(53, BUSM, r) == [8210] and r.calls == 0
    assert living_events_for_value(1, 0x40, r) == [8277] and r.calls == 0
    assert living_events_for_value(3, BUSM, r) == []
    assert [living_events_for_value(1, 0x4000, Scripted(v))[0] for v in (3, 4, 5)] == [8214, 8247, 8248]
    assert living_events_for_value(29, BUSM, r) == [] and living_events_for_value(99, BUSM, r) == []


def test_request_words_per_event():
    block = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    assert living_request_words(8194, block) == [10, 11, 12, 19]
    assert living_request_words(8214, block) == [10, 11, 19]
    assert living_request_words(8210, block) == [10, 11, 12]
    assert living_request_words(8212, block) == [10, 11, 13]
    assert living_request_words(8272, block) == [10, 11, 14]
    assert living_request_words(8291, block) == [10, 11, 17]
    assert living_request_words(8277, block) == [10, 11]
    mc = list(range(100, 114))
    assert maincast_request_words(0, mc) == [101, 100, 102]
    assert maincast_request_words(254, mc) == [101, 105, 100, 104]
    assert maincast_request_words(288, mc) == [101, 100, 104, 105]
    assert maincast_request_words(77, mc) == [100, 101]


def test_maincast_values():
    assert maincast_events_for_value(29, Scripted(), False) == (False, [141, 136])
    assert maincast_events_for_value(28, Scripted(), True) == (False, [])
    assert maincast_events_for_value(28, Scripted(), False) == (False, [11])
    assert maincast_events_for_value(30, Scripted(1), False) == (True, [115])
    assert maincast_events_for_value(51, Scripted(0), False) == (True, [6])


def test_timers_start_at_zero_so_repeat_holds_from_the_start():
    m = mgr(EventTuning(repeat=3.0))
    assert m.request(59, 8207, WORDS, 2.9).outcome == "Repeat"
    assert m.request(59, 8207, WORDS, 3.0).outcome == "Accepted"


def test_repeat_counts_from_the_line_start_only():
    m = mgr(EventTuning(repeat=3.0))
    assert m.request(59, 8207, WORDS, 5.0).accepted  # not started: timers unchanged
    assert m.request(59, 8207, WORDS, 5.5).accepted
    m.line_started(59, 8207, 6.0)
    assert m.request(59, 8207, WORDS, 8.9).outcome == "Repeat"
    assert m.request(60, 8207, WORDS, 8.9).accepted  # another speaker slot
    assert m.request(59, 8207, WORDS, 9.0).accepted


def test_gap_blocks_any_event_of_the_same_speaker():
    m = mgr(EventTuning(gap=2.0), event=8209)
    m.line_started(59, 8207, 10.0)
    assert m.request(59, 8209, WORDS, 11.9).outcome == "Gap"
    assert m.request(59, 8209, WORDS, 12.0).accepted


def test_not_follow_needs_strictly_more_than_its_time_and_skips_listed_ids():
    m = mgr(EventTuning(not_follow=((8207, 1.0), (294, 100.0))), event=8209)
    m.line_started(59, 8207, 10.0)
    r = m.request(59, 8209, WORDS, 11.0)
    assert r.outcome == "NotFollow" and "8207" in r.reason
    assert m.request(59, 8209, WORDS, 11.01).accepted


@pytest.mark.parametrize(
    "p, value, ok",
    [
        (0.0, 998, False),
        (0.0, 999, True),
        (0.0, 1999, True),
        (50.0, 499, True),
        (50.0, 500, False),
        (100.0, 998, True),
        (10.0, 99, True),
        (10.0, 100, False),
    ],
)
def test_probability_roll_edges(p, value, ok):
    m = mgr(EventTuning(probability=p), Scripted(value))
    assert m.request(59, 8207, WORDS, 100.0).accepted is ok


def test_speed_window_in_kmh():
    m = mgr(EventTuning(min_kmh=10.0, max_kmh=20.0))
    for mps, ok in ((2.7, False), (2.8, True), (5.5, True), (5.6, False)):
        m.player_speed = mps
        assert (m.request(59, 8207, WORDS, 100.0).outcome == "Accepted") is ok, mps


def test_challenge_timers_flags_zombie():
    m = mgr(EventTuning(challenge_exclude=(3,)))
    m.challenge = 3
    assert m.request(59, 8207, WORDS, 100.0).outcome == "Challenge"
    m.challenge = 4
    assert m.request(59, 8207, WORDS, 100.0).accepted
    m = mgr(EventTuning(timer_a=5.0))
    m.reset_timer("a", 98.0)
    assert m.request(59, 8207, WORDS, 100.0).outcome == "Timers"
    assert m.request(59, 8207, WORDS, 103.0).accepted
    m = mgr(EventTuning(blocked_flags=(7,)))
    m.game_flags.add(7)
    assert m.request(59, 8207, WORDS, 100.0).outcome == "Flags"
    m = mgr(EventTuning())
    m.zombie = True
    assert m.request(59, 8207, WORDS, 100.0).outcome == "Zombie"
    m = mgr(EventTuning(zombie_allowed=True))
    m.zombie = True
    assert m.request(59, 8207, WORDS, 100.0).accepted


def test_gate_order_repeat_before_probability_draw():
    rng = Scripted(999)
    m = mgr(EventTuning(repeat=10.0, probability=0.0), rng)
    assert m.request(59, 8207, WORDS, 1.0).outcome == "Repeat" and rng.calls == 0
    assert m.request(59, 8207, WORDS, 11.0).accepted and rng.calls == 1


def test_unknown_event_and_library_outcomes():
    m = mgr(EventTuning())
    assert m.request(59, 1234, WORDS, 100.0).outcome == "UnknownEvent"
    r = m.request(59, 8207, [0x2, 1, 2], 100.0)  # no record for this type
    assert r.outcome == "NoRecord" and r.stage == "library"


def test_maincast_repeat_for_slots_30_and_31():
    from audio.games.skate.formats.evt import EvtTable

    from .fakes import Hdr, event, rec

    lib = SpeechLibrary(EvtTable(0, 0, [event(77, [rec([1], ())], fields=())], "mc.evt"), [Hdr(1, 2, 2)])
    t = SpeechTuning(events={77: EventTuning(repeat=1.0, maincast_repeat_31=5.0, maincast_repeat_30=2.0)})
    m = SpeechManager(t, None, lib, rng=Scripted())
    for slot in (30, 31, 12):
        m.line_started(slot, 77, 10.0)
    assert m.request(31, 77, [], 14.0, channel=0).outcome == "Repeat"
    assert m.request(30, 77, [], 12.5, channel=0).accepted
    assert m.request(12, 77, [], 11.5, channel=0).accepted
    stop, results = m.request_maincast_value(31, 53, [0] * 14, 20.0)
    assert not stop and results[0].event == 77 and results[0].accepted
