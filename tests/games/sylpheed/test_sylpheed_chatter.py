"""The chatter queue: roll, pick, enqueue, tick, cooldown, one-shot lines, pool (seed 000)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
from sylpheed_fakes import ev, table

from audio.games.sylpheed.chatter.queue import (
    STATE_COOLING,
    ChatterQueue,
    Node,
    cooldown_frames,
    frames_of,
    pick_index,
)
from audio.games.sylpheed.chatter.rand import GameRand
from audio.games.sylpheed.chatter.rules import load_rules


@dataclass
class Recorder:
    frames: int = 30
    started: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    ducks: list[tuple[str, int, bool]] = field(default_factory=list)
    decisions: list[tuple[str, dict]] = field(default_factory=list)

    def start_line(self, node: Node) -> int:
        self.started.append(node.message)
        return self.frames

    def stop_line(self, node: Node) -> None:
        self.stopped.append(node.message)

    def duck(self, node: Node, on: bool) -> None:
        self.ducks.append((node.message, node.priority, on))

    def decide(self, outcome: str, **detail) -> None:
        self.decisions.append((outcome, detail))

    def outcomes(self, name: str) -> list[dict]:
        return [d for o, d in self.decisions if o == name]


def make_queue(events, speakers=("TEST",), seed=1, frames=30, **kw):
    rec = Recorder(frames)
    q = ChatterQueue(GameRand(seed), rec, rec.decide, **kw)
    rules = load_rules(table("T", events))
    for s in speakers:
        q.set_speaker(s, [rules])
    return q, rec, rules


def test_rand01_is_two_msvc_rand_calls_folded_hi8lo8():
    g = GameRand(0)
    s, outs = 0, []
    for _ in range(2):
        s = (s * 214013 + 2531011) & 0xFFFFFFFF
        outs.append((s >> 16) & 0x7FFF)
    assert GameRand(0).rand01() == ((outs[0] & 0xFF) << 8 | (outs[1] & 0xFF)) / 65536.0
    assert g.rand01() < 1.0 and g.calls == 2


def test_rand_settings_are_validated():
    with pytest.raises(ValueError):
        GameRand(0, generator="glibc")
    with pytest.raises(ValueError):
        GameRand(0, fold="sum")
    assert GameRand(5, "ansi", "xor16").rand01() != GameRand(5).rand01()


def test_roll_fires_at_the_rule_percentage_over_many_draws():
    n = 4000
    q, rec, _ = make_queue(
        [ev("DAMAGED", probability=30)], speakers=[f"S{i}" for i in range(n)], pool_size=n + 1
    )
    outcomes = Counter(q.fire(f"S{i}", "DAMAGED") for i in range(n))
    assert set(outcomes) == {"Queued", "RollFailed"}
    assert abs(outcomes["Queued"] / n - 0.30) < 0.03
    assert all(d["roll"] > 30 for d in rec.outcomes("RollFailed"))


def test_probability_100_always_passes_the_roll():
    q, rec, _ = make_queue(
        [ev("DAMAGED", probability=100)], speakers=[f"S{i}" for i in range(500)], pool_size=600
    )
    assert {q.fire(f"S{i}", "DAMAGED") for i in range(500)} == {"Queued"}


def test_unknown_speaker_event_phase_or_disabled_is_not_loaded():
    q, rec, _ = make_queue([ev("DAMAGED")])
    assert q.fire("NOBODY", "DAMAGED") == "NotLoaded"
    assert q.fire("TEST", "NO_SUCH_EVENT") == "NotLoaded"
    q.phase = 2
    assert q.fire("TEST", "DAMAGED") == "NotLoaded"
    q.phase, q.enabled = 1, False
    assert q.fire("TEST", "DAMAGED") == "NotLoaded"
    assert [d["reason"] for d in rec.outcomes("NotLoaded")] == ["speaker", "event", "phase", "disabled"]
    q.enabled = True
    assert q.fire("CharacterTEST", "DAMAGED") == "Queued"


def test_duplicate_suppressed_while_pending_and_while_cooling():
    q, rec, _ = make_queue([ev("DAMAGED", interval=1)], frames=10)
    assert q.fire("TEST", "DAMAGED") == "Queued"
    assert q.fire("TEST", "DAMAGED") == "Duplicate"  # pending, before it plays
    q.tick(0)
    assert q.fire("TEST", "DAMAGED") == "Duplicate"  # playing
    for f in range(1, 11):
        q.tick(f)
    assert q.nodes[0].state == STATE_COOLING
    assert q.fire("TEST", "DAMAGED") == "Duplicate"  # cooling down
    assert [d["detail"] for d in rec.outcomes("Duplicate")] == ["pending", "pending", "cooling"]


def test_duplicate_is_per_speaker_and_rule():
    q, rec, _ = make_queue([ev("DAMAGED"), ev("KILLED")], speakers=("A", "B"))
    assert [q.fire("A", "DAMAGED"), q.fire("A", "KILLED"), q.fire("B", "DAMAGED")] == ["Queued"] * 3


def test_cooldown_lasts_interval_plus_jitter_frames_per_speaker_and_event():
    q, rec, _ = make_queue([ev("DAMAGED", interval=5, fluctuation=2), ev("KILLED")], frames=6, seed=9)
    gaps, finished_at, frame, other = [], None, 0, Counter()
    while len(gaps) < 40:
        seen = len(rec.decisions)
        q.tick(frame)
        if any(o == "Finished" and d["event"] == "DAMAGED" for o, d in rec.decisions[seen:]):
            finished_at = frame
        if finished_at is not None:
            other[q.fire("TEST", "KILLED")] += 1  # another event of the same speaker
        if q.fire("TEST", "DAMAGED") == "Queued" and finished_at is not None:
            gaps.append(frame - finished_at)
            finished_at = None
        frame += 1
    assert all(300 <= g < 420 for g in gaps)
    assert len(set(gaps)) > 10  # the jitter is really drawn
    assert other["Queued"] > 40  # KILLED is not held by DAMAGED's cooldown
    cooldowns = [d["frames"] for o, d in rec.decisions if o == "Cooldown" and d["event"] == "DAMAGED"]
    assert sorted(cooldowns[:40]) == sorted(gaps)


def test_cooldown_formula_is_interval_plus_fluctuation_times_rand01():
    rule = load_rules(table("T", [ev("E", interval=120, fluctuation=2)]))["E"]
    assert cooldown_frames(rule, 0.0) == 7200
    assert cooldown_frames(rule, 0.5) == 7260
    assert cooldown_frames(rule, 65535 / 65536) == 7319


def test_pick_walk_is_uniform_over_eligible_lines():
    used = 0b0101  # lines 0 and 2 are spent
    counts = Counter(pick_index(used, 6, k / 65536) for k in range(65536))
    assert set(counts) == {1, 3, 4, 5}
    assert max(counts.values()) - min(counts.values()) <= 4
    assert pick_index(0b111, 3, 0.5) is None


def test_one_shot_line_never_repeats_while_no_lines_do():
    lines = [("MSG_YES", True), ("MSG_NO1", False), ("MSG_NO2", False)]
    q, rec, rules = make_queue([ev("KILL_UNIT", lines)], frames=2, seed=3)
    for frame in range(3000):
        q.tick(frame)
        q.fire("TEST", "KILL_UNIT")
    said = Counter(rec.started)
    assert said["MSG_YES"] == 1
    assert said["MSG_NO1"] > 50 and said["MSG_NO2"] > 50
    assert rules["KILL_UNIT"].used == 0b001
    assert len(rec.outcomes("OneShotSpent")) == 1


def test_all_lines_one_shot_then_nothing_eligible():
    q, rec, rules = make_queue([ev("HP_LESS_10", [("MSG_A", True), ("MSG_B", True)])], frames=1)
    for frame in range(40):
        q.tick(frame)
        q.fire("TEST", "HP_LESS_10")
    assert sorted(rec.started) == ["MSG_A", "MSG_B"]
    assert q.fire("TEST", "HP_LESS_10") == "NoEligible"


def test_pool_exhaustion_drops_the_129th_bark():
    q, rec, _ = make_queue([ev("DAMAGED")], speakers=[f"S{i}" for i in range(129)])
    out = [q.fire(f"S{i}", "DAMAGED") for i in range(129)]
    assert out[:128] == ["Queued"] * 128 and out[128] == "PoolFull"
    assert q.live == 128


def test_cooling_node_keeps_its_pool_slot_until_the_cooldown_ends():
    q, rec, _ = make_queue([ev("DAMAGED", interval=1), ev("KILLED")], speakers=("A",), frames=1, pool_size=1)
    q.fire("A", "DAMAGED")
    q.tick(0)
    q.tick(1)  # finished, now cooling for 60 frames
    assert q.fire("A", "KILLED") == "PoolFull"
    for f in range(2, 62):
        q.tick(f)
    assert q.fire("A", "KILLED") == "Queued"


def test_queue_orders_by_priority_with_front_push_at_10_and_above():
    pris = [3, 5, 3, 1, 12, 5, 10]
    events = [ev(f"E{i}", priority=p) for i, p in enumerate(pris)]
    q, rec, _ = make_queue(events)
    for i in range(len(pris)):
        assert q.fire("TEST", f"E{i}") == "Queued"
    # below 10: before the first strictly smaller (FIFO among equals); >= 10: pushed to the front
    assert [n.rule.event for n in q.nodes] == ["E6", "E4", "E1", "E5", "E0", "E2", "E3"]


def test_lines_play_one_at_a_time_per_path_in_queue_order():
    q, rec, _ = make_queue(
        [ev("LOW", priority=1), ev("HIGH", priority=6), ev("WIN", priority=2, pattern="Window")], frames=5
    )
    q.fire("TEST", "LOW")
    q.fire("TEST", "HIGH")
    q.fire("TEST", "WIN")
    q.tick(0)
    assert rec.started == ["MSG_TEST_HIGH", "MSG_TEST_WIN"]  # sound path busy with HIGH
    for f in range(1, 6):
        q.tick(f)
    assert rec.started[-1] == "MSG_TEST_LOW"


def test_a_line_lasts_its_audio_frames_or_effective_time():
    assert frames_of(24_000, 24_000) == 60 and frames_of(24_001, 24_000) == 61 and frames_of(0, 24_000) == 1
    q, rec, _ = make_queue([ev("E", effective=1)], frames=10)
    q.fire("TEST", "E")
    f = 0
    while not rec.outcomes("Finished"):
        q.tick(f)
        f += 1
    assert f - 1 == 60  # held for EffectiveTime (60 frames) > audio (10)


def test_ducking_raised_for_a_higher_priority_waiting_line_and_released_when_it_retires():
    q, rec, _ = make_queue([ev("LOW", priority=2), ev("HIGH", priority=6)], frames=10)
    q.fire("TEST", "LOW")
    q.tick(0)
    q.fire("TEST", "HIGH")
    q.tick(1)
    assert rec.ducks == [("MSG_TEST_HIGH", 6, True)]
    low = q.playing()[0]
    assert q.ducking_query(low) == 1 and low.ducked
    f = 2
    while not any(d["message"] == "MSG_TEST_HIGH" for d in rec.outcomes("Finished")):
        q.tick(f)
        f += 1
    assert rec.ducks[-1] == ("MSG_TEST_HIGH", 6, False)
    assert len(rec.outcomes("Ducked")) == 1


def test_ducking_when_a_window_line_starts_over_a_lower_sound_line():
    q, rec, _ = make_queue([ev("LOW", priority=1), ev("WIN", priority=5, pattern="Window")], frames=20)
    q.fire("TEST", "LOW")
    q.tick(0)
    q.fire("TEST", "WIN")
    q.tick(1)
    assert rec.ducks == [("MSG_TEST_WIN", 5, True)]
    assert next(n for n in q.playing() if n.rule.event == "LOW").ducked


def test_same_seed_same_decisions_different_seed_differs():
    def run(seed):
        a = ev("A", [(f"M{i}", i == 0) for i in range(6)], probability=50, interval=1, fluctuation=2)
        q, rec, _ = make_queue([a, ev("B", probability=20)], speakers=("X", "Y"), seed=seed, frames=7)
        for f in range(2000):
            q.tick(f)
            if f % 13 == 0:
                q.fire("X", "A")
                q.fire("Y", "B")
        return rec.decisions

    assert run(5) == run(5)
    assert run(5) != run(6)
