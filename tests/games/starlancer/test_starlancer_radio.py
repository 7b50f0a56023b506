"""The radio: modes, the 5-line queue, expiry, pre-roll, film flags, gates, volume."""

from __future__ import annotations

import pytest

from audio.games.starlancer.radio.radio import Line, NullPresenter, Radio, RadioSettings


class Log:
    def __init__(self):
        self.items = []

    def __call__(self, outcome, **d):
        self.items.append((outcome, d))

    def outcomes(self, name):
        return [d for o, d in self.items if o == name]


def make(seconds=None, **settings):
    log = Log()
    r = Radio(NullPresenter(seconds=seconds or {}, default=1.0), log, RadioSettings(**settings))
    return r, log


def run(r, start, stop, frame_ticks=4):
    for t in range(start, stop):
        r.tick(t)
        if t % frame_ticks == 0:
            r.frame(t)


def ship(speech, flags=5, expiry=-1):
    return Line(speech, "Naginata", "ship", 3, "pilots\\face.fm8", flags, expiry)


def test_mode_now_waits_the_92_tick_preroll_with_the_film_held():
    r, log = make()
    r.say(ship("a.ut"), "now")
    assert r.film_playing() and not r.speech_playing()
    run(r, 0, 92)
    assert not r.speech_playing()
    run(r, 92, 93)
    assert r.speech_playing() and log.outcomes("Started")[0]["file"] == "a.ut"


def test_preroll_is_a_setting():
    r, _ = make(preroll_ticks=33)
    r.say(ship("a.ut"), "now")
    run(r, 0, 33)
    assert not r.speech_playing()
    run(r, 33, 34)
    assert r.speech_playing()


def test_line_starts_at_once_when_a_film_is_already_playing():
    r, log = make()
    r.say(ship("a.ut"), "now")
    run(r, 0, 10)
    r.say(ship("b.ut"), "now")
    assert r.speech_playing() and r.speech.speech == "b.ut"
    assert log.outcomes("Said")[1]["preroll"] == 0


def test_line_end_closes_the_window_and_stops_the_film():
    r, log = make(seconds={"a.ut": 1.0})
    r.say(ship("a.ut"), "now")
    run(r, 0, 92 + 100)  # 1 s = 100 ticks of speech
    assert r.speech_playing() and r.film_playing()
    run(r, 192, 193)
    assert not r.speech_playing() and not r.film_playing()
    assert log.outcomes("WindowClosed")[0]["reason"] == "the line ended"


def test_queue_holds_five_and_drops_the_sixth():
    r, log = make()
    r.say(ship("long.ut"), "now")
    for i in range(6):
        r.say(ship(f"q{i}.ut"), "queued")
    assert len(r.queue) == 5
    dropped = log.outcomes("Dropped")
    assert len(dropped) == 1 and dropped[0]["file"] == "q5.ut" and "queue full" in dropped[0]["reason"]


def test_queued_lines_play_in_order_after_the_window_shuts():
    r, log = make(seconds={"a.ut": 0.5, "b.ut": 0.5, "c.ut": 0.5})
    r.say(ship("a.ut"), "now")
    r.say(ship("b.ut"), "queued")
    r.say(ship("c.ut"), "queued")
    run(r, 0, 1000)
    assert [d["file"] for d in log.outcomes("Started")] == ["a.ut", "b.ut", "c.ut"]


def test_if_idle_appends_only_when_nothing_plays_or_waits():
    r, log = make()
    assert r.say(ship("a.ut"), "if_idle") == "Queued"  # idle: appended
    assert r.say(ship("b.ut"), "if_idle") == "Dropped"  # the queue is not empty: busy
    assert log.outcomes("Dropped")[0]["reason"].startswith("not idle")


def test_expired_line_is_dropped_when_taken():
    r, log = make(seconds={"long.ut": 3.0})
    r.say(ship("long.ut"), "now")
    r.say(ship("late.ut", expiry=200), "queued")  # expires at tick 200; long.ut ends at 392
    r.say(ship("next.ut"), "queued")
    run(r, 0, 900)
    assert [d["file"] for d in log.outcomes("Expired")] == ["late.ut"]
    assert [d["file"] for d in log.outcomes("Started")] == ["long.ut", "next.ut"]


def test_expiry_not_yet_passed_plays():
    r, log = make(seconds={"a.ut": 0.5})
    r.say(ship("a.ut"), "now")
    r.say(ship("b.ut", expiry=10_000), "queued")
    run(r, 0, 600)
    assert [d["file"] for d in log.outcomes("Started")] == ["a.ut", "b.ut"]


def test_once_flags_hold_the_dead_channel_film_silently_until_the_line_ends():
    r, log = make(seconds={"a.ut": 3.0}, once_film_ticks=100)
    r.say(ship("a.ut", flags=6), "now")
    run(r, 0, 92 + 100)
    assert not log.outcomes("Static")
    run(r, 192, 193)
    assert log.outcomes("Static")[0]["ticks"] == 200 and r.film_playing()
    run(r, 193, 392)
    assert r.film_playing()
    run(r, 392, 393)
    assert not r.film_playing() and not [e for e in r.p.log if e[0].startswith("static")]  # a film: no sound


def test_remark_gates_mute_remarks_but_never_script_comms():
    r, log = make()
    r.set_gate("generic", True)
    assert r.remark(ship("g.ut"), "generic") == "Gated"
    assert r.remark(ship("j.ut"), "jump") == "Queued"  # jump reminders pass DisableGenericComms
    assert r.remark(ship("t.ut"), "taunt") == "Queued"
    r.set_gate("taunts", True)
    assert r.remark(ship("t2.ut"), "taunt") == "Gated"
    assert r.say(ship("script.ut"), "now") == "Said"  # a script line ignores both gates
    assert "DisableGenericComms" in log.outcomes("Gated")[0]["reason"]


def test_reset_clears_queue_and_gates():
    r, _ = make()
    r.set_gate("generic", True)
    r.say(ship("a.ut"), "queued")
    r.reset()
    assert not r.queue and not r.generic_disabled and not r.busy()


@pytest.mark.parametrize(
    "speech, master, volume", [(127, 127, 127), (100, 64, 50), (64, 64, 32), (0, 127, 0)]
)
def test_volume_is_speech_times_master_over_127(speech, master, volume):
    assert RadioSettings(speech_volume=speech, master_volume=master).volume() == volume


def test_missing_speech_still_opens_the_window_which_closes_after_the_preroll():
    log = Log()
    r = Radio(NullPresenter(missing={"gone.ut"}), log)
    assert r.say(ship("gone.ut"), "now") == "Said"
    assert r.film_playing() and log.outcomes("MissingSpeech")
    run(r, 0, 93)
    assert not r.film_playing() and not r.speech_playing()


def test_play_speech_has_its_own_buffer_and_the_waiting_line_keeps_its_own():
    r, log = make()
    r.say(ship("a.ut"), "now")  # waits 92 ticks for the window
    r.play_speech("p.ut")
    assert r.speech_playing() and r.film_playing() and r.speech.speech == "p.ut"
    run(r, 0, 93)
    assert r.speech.speech == "a.ut"  # its pre-roll ended: it starts, ending PlaySpeech's line
    assert log.outcomes("Interrupted")[0]["file"] == "p.ut"
