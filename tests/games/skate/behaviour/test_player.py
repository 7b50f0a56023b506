"""The player: free streams, interrupts, the 16-request queue, expiry, sequences, cuts."""

from collections import Counter

from audio.games.skate.speech.player import LineRequest, SpeechPlayer


def req(ped, priority=50, timeout=60, clips=1, interrupt=False, when_full=False, channel=1, event=8210):
    return LineRequest(
        ped=ped,
        speaker=ped,
        event=event,
        channel=channel,
        priority=priority,
        picks=tuple((c, 0) for c in range(clips)),
        timeout=timeout,
        interrupt=interrupt,
        interrupt_when_full=when_full,
    )


def outcomes(events):
    return [e.outcome for e in events]


def test_first_free_stream_k0_first_then_queue_then_drop():
    p = SpeechPlayer()
    a, b = p.request(req(1)), p.request(req(2))
    assert a[0].slot == 2 and b[0].slot == 3  # channel 1: slots 2, 3
    got = Counter()
    for i in range(20):
        got.update(outcomes(p.request(req(10 + i))))
    assert got == Counter(Queued=16, Dropped=4)


def test_interrupt_takes_the_lowest_priority_stream_only_when_allowed_and_higher():
    p = SpeechPlayer()
    p.request(req(1, priority=40))
    p.request(req(2, priority=30))
    assert outcomes(p.request(req(3, priority=60))) == ["Queued"]  # no interrupt flag
    assert outcomes(p.request(req(4, priority=30, interrupt=True))) == ["Queued"]  # not higher
    ev = p.request(req(5, priority=60, when_full=True))
    assert outcomes(ev) == ["Interrupted", "Started"]
    assert ev[0].request.ped == 2 and ev[1].slot == 3
    p2 = SpeechPlayer()
    p2.request(req(1, priority=30))
    p2.request(req(2, priority=30))
    ev = p2.request(req(3, priority=31, interrupt=True))
    assert ev[0].request.ped == 1 and ev[1].slot == 2  # ties -> lowest k


def test_queued_requests_expire_after_their_timeout_in_frames():
    p = SpeechPlayer()
    p.request(req(1))
    p.request(req(2))
    p.request(req(3, timeout=5))
    p.request(req(4, timeout=10))
    expired_at = {}
    for f in range(1, 20):
        for e in p.frame():
            if e.outcome == "Expired":
                expired_at[e.request.ped] = f
    assert expired_at == {3: 6, 4: 11}


def test_free_streams_take_highest_priority_then_newest():
    p = SpeechPlayer()
    a = p.request(req(1))[0]
    p.request(req(2))
    p.request(req(3, priority=50))
    p.request(req(4, priority=70))
    p.request(req(5, priority=70))
    line = next(ln for ln in p.lines() if ln.slot == a.slot)
    assert p.clip_done(line).outcome == "Finished"
    started = [e for e in p.frame() if e.outcome == "Started"]
    assert [e.request.ped for e in started] == [5]


def test_sequence_plays_each_clip_then_finishes():
    p = SpeechPlayer()
    p.request(req(1, clips=3))
    line = next(p.lines())
    seen = [p.clip_done(line) for _ in range(3)]
    assert [(e.outcome, e.clip_index) for e in seen] == [("Started", 1), ("Started", 2), ("Finished", 2)]
    assert list(p.lines()) == []


def test_cut_after_more_than_60_low_frames():
    p = SpeechPlayer()
    p.request(req(1))
    line = next(p.lines())
    assert p.level(line, 150) is None
    assert p.level(line, 201) is None  # a loud frame resets the count
    results = [p.level(line, 200) for _ in range(61)]
    assert all(r is None for r in results[:60]) and results[60].outcome == "Cut"


def test_stop_ped_stops_only_that_peds_line():
    p = SpeechPlayer()
    p.request(req(1))
    p.request(req(2))
    assert [(e.outcome, e.request.ped) for e in p.stop_ped(1)] == [("Stopped", 1)]
    assert [ln.request.ped for ln in p.lines()] == [2]


def test_streams_per_channel_setting():
    p = SpeechPlayer(streams_per_channel=8)
    slots = [p.request(req(i))[0].slot for i in range(8)]
    assert slots == list(range(8, 16)) and outcomes(p.request(req(9))) == ["Queued"]
