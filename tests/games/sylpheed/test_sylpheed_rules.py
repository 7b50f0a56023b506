"""The rule loader and the phase merge (seed 000)."""

from __future__ import annotations

from sylpheed_fakes import ev, table

from audio.games.sylpheed.chatter.rules import load_rules, merge_phases, pattern_code


def test_loader_converts_seconds_to_60_hz_frames():
    r = load_rules(table("T", [ev("LOCKON_1", interval=120, fluctuation=2, effective=3)]))["LOCKON_1"]
    assert (r.interval, r.fluctuation, r.effective_time) == (7200, 120, 180)


def test_probability_zero_never_loads_even_with_lines():
    rules = load_rules(table("T", [ev("TALK", [("MSG_A_1", False)], probability=0), ev("DAMAGED")]))
    assert "TALK" not in rules and "DAMAGED" in rules


def test_message_count_is_clamped_to_32_and_yes_mask_built_from_odd_slots():
    lines = [(f"MSG_A_{i:03d}", i % 5 == 0) for i in range(40)]
    r = load_rules(table("T", [ev("KILLED", lines)]))["KILLED"]
    assert len(r.messages) == 32
    assert r.yes_mask == sum(1 << i for i in range(32) if i % 5 == 0)
    assert r.used == 0


def test_pattern_strings_map_to_the_loader_enum():
    assert [pattern_code(p) for p in ("Log", "Window", "Demo", "Sound", "")] == [2, 3, 4, 1, 1]


def test_runtime_object_mirrors_the_byte_fields():
    rules = load_rules(table("T", [ev("FOUND_PLAYER", probability=40, priority=7, pattern="Window")]))
    r = rules["FOUND_PLAYER"]
    assert (r.probability, r.priority, r.pattern) == (40, 7, 3)


def test_phase_one_wins_every_collision_and_a_mismatch_clears_the_flag():
    p1 = table("P1", [ev("LOCKON_1", [("MSG_A_1", False)], priority=3), ev("DAMAGED")])
    p2 = table("P2", [ev("LOCKON_1", [("MSG_A_2", False)], priority=5), ev("DAMAGED"), ev("KILL_UNIT")])
    res = merge_phases([p1, p2])
    assert res.rules["LOCKON_1"].messages == ("MSG_A_1",) and res.rules["LOCKON_1"].priority == 3
    assert res.rules["LOCKON_1"].source == "P1"
    assert "KILL_UNIT" in res.rules  # new keys from later phases still load
    assert not res.flag
    assert [c.event for c in res.mismatches] == ["LOCKON_1"]
    assert len(res.collisions) == 2


def test_later_phase_never_overrides_even_when_phase_one_is_missing_a_field_difference():
    p1 = table("P1", [ev("DAMAGED", interval=5)])
    p3 = table("P3", [ev("DAMAGED", interval=30)])
    res = merge_phases([p1, p1, p3])
    assert res.rules["DAMAGED"].interval == 300


def test_comparator_ignores_the_yes_mask():
    p1 = table("P1", [ev("KILLED", [("MSG_A_1", True)])])
    p2 = table("P2", [ev("KILLED", [("MSG_A_1", False)])])
    res = merge_phases([p1, p2])
    assert res.flag and res.collisions[0].same
    assert res.rules["KILLED"].yes_mask == 1


def test_each_comparator_field_alone_clears_the_flag():
    base = dict(probability=50, priority=3, interval=5, fluctuation=2, effective=3, pattern="Sound")
    for key, value in [
        ("probability", 60),
        ("priority", 4),
        ("interval", 30),
        ("fluctuation", 0),
        ("effective", 5),
        ("pattern", "Window"),
    ]:
        other = {**base, key: value}
        res = merge_phases([table("A", [ev("E", **base)]), table("B", [ev("E", **other)])])
        assert not res.flag, key
