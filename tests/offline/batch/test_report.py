"""Report aggregation on hand-made decisions: counts, shares, repeats, refusals, never played, bytes."""

from __future__ import annotations

import random

import pytest

from audio.core.bus import Decision
from audio.games.skate.system import SkateOutcome
from audio.games.sylpheed.system import SylpheedOutcome
from audio.offline.batch.report import load_frames, plays_table, refusals_table, repeats_table, write_report
from audio.offline.batch.runner import decision_rows
from audio.offline.batch.store import BatchStore, table_from_rows

SK = "skate.speech"


def _skate_run(takes: list[int], clip: str = "501_59_Warn_n") -> list[Decision]:
    """One line per take of one clip, with a Repeat refusal and a second-clip continuation."""
    out = [Decision(0, 0.0, SK, SkateOutcome.Spawned, {"ped": 1, "speaker": 59})]
    for i, take in enumerate(takes):
        at = 1000 * (i + 1)
        out.append(
            Decision(
                at,
                at / 48000,
                SK,
                SkateOutcome.Accepted,
                {"ped": 1, "speaker": 59, "event": 8210, "record": 0, "words": [4096, 1, 2]},
            )
        )
        out.append(
            Decision(
                at,
                at / 48000,
                SK,
                SkateOutcome.Started,
                {"ped": 1, "speaker": 59, "event": 8210, "clip": clip, "take": take, "clip_index": 0},
            )
        )
        out.append(
            Decision(
                at + 1,
                at / 48000,
                SK,
                SkateOutcome.Started,
                {"ped": 1, "speaker": 59, "event": 8210, "clip": "tail", "take": 0, "clip_index": 1},
            )
        )
    out.append(
        Decision(
            99_000,
            2.0,
            SK,
            SkateOutcome.Repeat,
            {"ped": 1, "speaker": 59, "event": 8210, "reason": "1.000 s < repeat 6.0 s"},
        )
    )
    out.append(
        Decision(
            99_000,
            2.0,
            "sylpheed.chatter",
            SylpheedOutcome.NotLoaded,
            {"speaker": "X", "event": "E", "reason": "phase"},
        )
    )
    return out


def _rows(key: str, seed: int, takes: list[int]) -> list[dict]:
    rows = [
        {
            "scenario": key,
            "seed": seed,
            "kind": "run",
            "status": "ok",
            "mode": "decisions",
            "decisions": 9,
            "voices": 3,
            "wall_s": random.random(),
        }
    ]
    rows += decision_rows(
        key, seed, _skate_run(takes), {SK: {"8210": "501_warn"}}, {SkateOutcome: ("clip", "take")}
    )
    rows += [
        {
            "scenario": key,
            "seed": seed,
            "kind": "expect",
            "system": SK,
            "event": "8210",
            "clip": "501_59_Warn_n",
            "value": float(len(takes)),
        },
        {"scenario": key, "seed": seed, "kind": "catalog", "system": SK, "event": "8210", "clip": "never"},
    ]
    return rows


RUNS = {0: [0, 1, 0, 2], 1: [1, 1], 2: [2]}


def _store(tmp_path, chunks: list[list[int]]):
    store = BatchStore(tmp_path)
    store.open({"plaza": "/p.toml"}, "decisions", resume=False)
    for seeds in chunks:
        store.write("plaza", seeds, table_from_rows([r for s in seeds for r in _rows("plaza", s, RUNS[s])]))
    return store


def test_plays_count_clip_starts_against_the_lines_and_expected_plays(tmp_path):
    f = load_frames(_store(tmp_path, [[0, 1, 2]]).root)
    t = plays_table(f["decision"], f["expect"], f["catalog"]).set_index("clip")
    assert t.loc["501_59_Warn_n", ["lines", "plays", "expected"]].tolist() == [7, 7, 7.0]
    assert t.loc["tail", "plays"] == 7 and t.loc["tail", "lines"] == 7 and t.loc["tail", "expected"] == 0
    assert t.loc["never", "plays"] == 0 and bool(t.loc["never", "listed"])
    assert t.loc["501_59_Warn_n", "event_name"] == "501_warn"


def test_take_repeats_count_within_the_last_k_plays_of_the_same_run(tmp_path):
    f = load_frames(_store(tmp_path, [[0, 1, 2]]).root)
    rep = repeats_table(f["decision"], 3).set_index("group").loc["501_59_Warn_n"]
    # run 0: 0,1,0,2 -> play 3 repeats within 2 and 3; run 1: 1,1 -> repeat within 1; run 2: one play
    assert rep["plays"] == 7 and rep["followups"] == 3 + 1
    assert (rep["repeats_k1"], rep["repeats_k2"], rep["repeats_k3"]) == (1, 2, 2)
    assert rep["rate_k2"] == 0.5


def test_refusals_group_by_rule_with_one_word_reasons(tmp_path):
    f = load_frames(_store(tmp_path, [[0, 1, 2]]).root)
    t = refusals_table(f["decision"])
    got = {(r.system, r.rule, r.event): r.count for r in t.itertuples()}
    assert got == {(SK, "Repeat", "8210"): 3, ("sylpheed.chatter", "NotLoaded: phase", "E"): 3}


def test_the_report_bytes_do_not_depend_on_chunking_or_completion_order(tmp_path):
    a = write_report(_store(tmp_path / "a", [[0, 1, 2]]).root).parent
    b = write_report(_store(tmp_path / "b", [[2], [0], [1]]).root).parent
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert {"index.html", "plays.csv", "repeats.csv", "refusals.csv", "never_played.csv"} <= set(names)
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n
    assert "never" in (a / "never_played.csv").read_text()


def _demo_batch(tmp_path, names: tuple[str, ...]):
    """A one-seed batch of the named games' demos, and each run's start-class decisions."""
    import json

    from audio.games import game, outcome_table
    from audio.offline.batch.runner import run_one
    from audio.offline.batch.shares import PLAY_CLASS

    demos = {name: str(game(name).demo_path()) for name in names}
    store = BatchStore(tmp_path)
    store.open(demos, "decisions", resume=False)
    starts = {}
    for key, path in demos.items():
        rows = run_one(key, path, 0)
        store.write(key, [0], table_from_rows(rows))
        starts[key] = [
            json.loads(r["detail"])
            for r in rows
            if r["kind"] == "decision" and outcome_table()[str(r["outcome"].value)] is PLAY_CLASS
        ]
    return store, starts


def _check_plays(store, starts) -> None:
    f = load_frames(store.root)
    t = plays_table(f["decision"], f["expect"], f["catalog"])
    for key in starts:
        mine = t[t["scenario"] == key]
        assert starts[key] and int(mine["plays"].sum()) == len(starts[key]), key
    lancer = t[(t["scenario"] == "starlancer") & (t["plays"] > 0)]
    assert set(lancer["clip"]) == {d["file"] for d in starts["starlancer"]}


def test_starlancer_and_radiata_demos_fill_the_plays_table_with_each_line_start(tmp_path):
    """Starlancer names its clip ``file`` (its play_key) and Radiata's script lines have no
    event: both count, one play per start-class decision of the run (counted from the rows)."""
    _check_plays(*_demo_batch(tmp_path, ("sylpheed", "starlancer", "radiata")))


@pytest.mark.slow
def test_every_demo_fills_the_plays_table_and_the_report_of_all_four_games(tmp_path):
    store, starts = _demo_batch(tmp_path, ("skate", "sylpheed", "starlancer", "radiata"))
    _check_plays(store, starts)
    page = write_report(store.root)  # the whole report (CSV, plots, HTML) over the four games
    plays = (page.parent / "plays.csv").read_text()
    assert all(key in plays for key in starts) and "ms99_ins_001.ut" in plays
