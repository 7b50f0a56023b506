"""The engine system: events in, voices and ducks out; scenario hooks; the demo install."""

from __future__ import annotations

from pathlib import Path

import pytest
from sylpheed_fakes import DEMO, FakeEngine, SilentLines, ev, table

from audio.core.bus import Event
from audio.core.errors import ScenarioError
from audio.core.plugin import ScenarioContext
from audio.games.sylpheed.events import Bark, ChatterEnable, CrewSetup, PhaseChange, Subtitle
from audio.games.sylpheed.formats.presets import Message, MessagePage, MessageTable
from audio.games.sylpheed.scenario import scenario_events, system_from_scenario
from audio.games.sylpheed.system import SylpheedChatterSystem


def scn(path: str | Path) -> ScenarioContext:
    """A scenario context for a scenario file at ``path`` (seed 0)."""
    return ScenarioContext(Path(path), 0, {})


class Tables:
    """A minimal TableSource over in-memory rule tables."""

    def __init__(self, *tables, msgs=()):
        self.tables = {t.name: t for t in tables}
        self.msgs = {m.name: m for m in msgs}

    def rule_table(self, name):
        return self.tables[name]

    def message_table(self, name):
        return self.msgs.get(name + "_msg")

    def unit_message_set(self, stage):
        raise ValueError("no UnitMessageSet here")

    def unit_group(self, stage):
        raise ValueError("no UnitGroup here")


def make_system(events, lines=None, seed=0, msgs=()):
    t = table("PresetMessage_T", events, ("CharacterELLEN", "CharacterBOB"))
    sysm = SylpheedChatterSystem(
        lines or SilentLines(0.5), Tables(t, msgs=msgs), crews=[CrewSetup(tables=("PresetMessage_T",))]
    )
    eng = FakeEngine(seed)
    eng.add_system(sysm)
    return eng, sysm


def post(eng, ev_):
    eng.bus.post(ev_)


def test_bark_plays_a_voice_on_the_radio_graph_with_band_priority():
    eng, sysm = make_system([ev("LOCKON_1", [("MSG_BIRD_020", False)], priority=4)])
    post(eng, Bark(t=0.1, speaker="ELLEN", event="LOCKON_1"))
    eng.run_frames(12)
    assert eng.voices.started == [("sylpheed_radio_voice", 4, 12_000, "sylpheed:ELLEN:MSG_BIRD_020")]
    started = eng.outcomes("Started")
    assert started[0].detail["message"] == "MSG_BIRD_020" and started[0].detail["frames"] == 30
    assert [d.detail["speakers"] for d in eng.outcomes("CrewLoaded")] == [["CharacterELLEN", "CharacterBOB"]]


def test_line_finishes_after_its_audio_and_logs_cooldown():
    eng, sysm = make_system([ev("DAMAGED", interval=3)])
    post(eng, Bark(t=0.0, speaker="BOB", event="DAMAGED"))
    eng.run_frames(40)
    fin, cool = eng.outcomes("Finished"), eng.outcomes("Cooldown")
    assert fin[0].detail["frame"] - eng.outcomes("Started")[0].detail["frame"] == 30
    assert cool[0].detail["frames"] == 180


def test_ducking_applied_while_a_higher_priority_line_plays_and_released_after():
    lines = SilentLines({"MSG_LOW": 2.0, "MSG_HIGH": 0.5})
    eng, sysm = make_system(
        [
            ev("LOW", [("MSG_LOW", False)], priority=2),
            ev("HIGH", [("MSG_HIGH", False)], priority=6, pattern="Window"),
        ],
        lines,
    )
    post(eng, Bark(t=0.0, speaker="ELLEN", event="LOW"))
    post(eng, Bark(t=0.2, speaker="BOB", event="HIGH"))
    eng.run_frames(20)
    assert len(eng.mixer.ducks) == 1
    bus, key, band, on = eng.mixer.ducks[0]
    assert (bus, band, on) == ("radio", 6, True)
    assert eng.mixer.held() == {key: 6}
    eng.run_frames(60)
    assert eng.mixer.ducks[-1] == ("radio", key, 6, False) and eng.mixer.held() == {}
    assert eng.outcomes("Ducked")[0].detail["lines"] == ["ELLEN:MSG_LOW"]


def test_window_line_emits_a_subtitle_with_the_msg_table_text():
    msgs = [
        MessageTable(
            "PresetMessage_T_msg",
            (),
            (
                Message(
                    "Message_000",
                    "MSG_W",
                    (MessagePage(("Shields are failing!", "ELLEN", "0", "0", "0", "0", "0", "0", "0")),),
                ),
            ),
        )
    ]
    eng, sysm = make_system([ev("PLAYER_HP_LESS_50", [("MSG_W", False)], pattern="Window")], msgs=msgs)
    post(eng, Bark(t=0.0, speaker="ELLEN", event="PLAYER_HP_LESS_50"))
    eng.run_frames(3)
    subs = [p for p in eng.posted if p["kind"] == "sylpheed.subtitle"]
    assert len(subs) == 1 and subs[0]["pages"] == ["Shields are failing!"] and subs[0]["speaker"] == "ELLEN"
    assert subs[0]["origin"] == "internal"


def test_sound_line_has_no_subtitle():
    eng, sysm = make_system([ev("DAMAGED")])
    post(eng, Bark(t=0.0, speaker="ELLEN", event="DAMAGED"))
    eng.run_frames(3)
    assert not [p for p in eng.posted if p["kind"] == "sylpheed.subtitle"]


def test_phase_and_enable_events_gate_firing():
    eng, sysm = make_system([ev("DAMAGED")])
    post(eng, ChatterEnable(t=0.0, enabled=False))
    post(eng, Bark(t=0.01, speaker="ELLEN", event="DAMAGED"))
    post(eng, ChatterEnable(t=0.02, enabled=True))
    post(eng, PhaseChange(t=0.03, phase=4))
    post(eng, Bark(t=0.04, speaker="ELLEN", event="DAMAGED"))
    post(eng, PhaseChange(t=0.05, phase=3))
    post(eng, Bark(t=0.06, speaker="ELLEN", event="DAMAGED"))
    eng.run_frames(5)
    assert [d.detail["reason"] for d in eng.outcomes("NotLoaded")] == ["disabled", "phase"]
    assert len(eng.outcomes("Queued")) == 1


def test_missing_audio_still_plays_silently_for_the_documented_time():
    class NoLines:
        line_errors: dict[str, str] = {}  # a LineSource: no line has audio, none failed to read

        def line(self, message_id):
            return None

    eng, sysm = make_system([ev("DAMAGED")], lines=NoLines())
    post(eng, Bark(t=0.0, speaker="ELLEN", event="DAMAGED"))
    eng.run_frames(3)
    assert eng.voices.started == [] and eng.outcomes("Started")[0].detail["frames"] == 120


def test_crew_error_is_logged_not_raised():
    sysm = SylpheedChatterSystem(SilentLines(), Tables(), crews=[CrewSetup(crew="MessageSet_X", stage="S02")])
    eng = FakeEngine()
    eng.add_system(sysm)
    assert eng.outcomes("CrewError")


def test_system_is_deterministic_per_engine_seed():
    def run(seed):
        eng, _ = make_system([ev("A", [(f"M{i}", False) for i in range(5)], probability=50)], seed=seed)
        for k in range(60):
            post(eng, Bark(t=k * 0.25, speaker="ELLEN", event="A"))
        eng.run_frames(60 * 16)
        return [(d.outcome, d.at, tuple(sorted(d.detail.items(), key=str))) for d in eng.bus.decisions]

    assert run(1) == run(1)
    assert run(1) != run(2)


# -- scenario hooks --------------------------------------------------------------------------------
def test_scenario_event_builders_make_sylpheed_events():
    b = scenario_events()
    CTX = scn("s.toml")
    assert b["sylpheed.bark"]({"t": 1.5, "speaker": "ELLEN", "event": "LOCKON_1"}, CTX) == Bark(
        t=1.5, speaker="ELLEN", event="LOCKON_1"
    )
    assert b["sylpheed.phase"]({"t": 2.0, "phase": 2}, CTX) == PhaseChange(t=2.0, phase=2)
    assert b["sylpheed.disable"]({"t": 3.0}, CTX) == ChatterEnable(t=3.0, enabled=False)
    crew = b["sylpheed.crew"]({"t": 0.0, "stage": 2, "crew": "MessageSet_Ellen"}, CTX)
    assert isinstance(crew, Event) and crew.stage == "S02"
    with pytest.raises(ScenarioError):
        b["sylpheed.bark"]({"t": 1.0, "speaker": "ELLEN"}, CTX)
    with pytest.raises(ScenarioError):
        b["sylpheed.crew"]({"stage": "S02"}, CTX)


def test_system_from_scenario_rejects_unknown_keys_and_missing_install(tmp_path):
    with pytest.raises(ScenarioError, match=r"sylpheed.instal: unknown field \(did you mean 'install'\?\)"):
        system_from_scenario({"instal": "demo"}, scn(tmp_path / "s.toml"))
    with pytest.raises(ScenarioError, match="no dat/"):
        system_from_scenario({"install": "nowhere"}, scn(tmp_path / "s.toml"))


@pytest.mark.parametrize(
    "crew,match",
    [
        ({"stage": "X2", "crew": "MessageSet_Ellen"}, r"sylpheed\.crew\[0\]\.stage: expected `str` matching"),
        (
            {"stage": 2, "crews": "MessageSet_Ellen"},
            r"sylpheed\.crew\[0\]\.crews: unknown field \(did you mean 'crew'\?\)",
        ),
        (
            {"stage": 2, "crew": "a", "squadron": "b"},
            r"sylpheed\.crew\[0\]: give exactly one of crew, squadron, tables",
        ),
        ({"tables": ["T"], "phases": [4]}, r"sylpheed\.crew\[0\]\.phases\[0\]: expected `int` <= 3"),
    ],
)
def test_a_bad_section_crew_is_one_error_naming_the_entry(tmp_path, crew, match):
    with pytest.raises(ScenarioError, match=match):
        system_from_scenario({"install": "demo", "crew": [crew]}, scn(tmp_path / "s.toml"))


def test_subtitle_event_kind():
    assert Subtitle.KIND == "sylpheed.subtitle" and Bark.KIND == "sylpheed.bark"


# -- the demo install (built by tools/build_sylpheed_demo.py) -------------------------------------
needs_demo = pytest.mark.skipif(
    not (DEMO / "dat" / "sound.pak").exists(),
    reason="demo install not built (python tools/build_sylpheed_demo.py)",
)


@needs_demo
def test_demo_install_resolves_all_but_the_deliberately_missing_line():
    from audio.games.sylpheed.formats.install import SylpheedInstall

    inst = SylpheedInstall(DEMO)
    ids = [m for n in inst.reachable_rule_tables() for e in inst.rule_table(n).events for m, _ in e.lines]
    rep = inst.cues(ids)
    assert [r.message_id for r in rep.unresolved()] == ["MSG_ADAN_789"]
    pcm, sample_rate = inst.line("MSG_BIRD_010")
    assert sample_rate == 24_000 and pcm.ndim == 1 and 0.3 < len(pcm) / sample_rate < 4.0
    assert inst.line("MSG_ADAN_789") is None and "MSG_ADAN_789" in inst.line_errors


@needs_demo
def test_demo_scenario_runs_on_the_fake_engine():
    import tomllib

    doc = tomllib.loads((DEMO / "dogfight.toml").read_text())
    sysm = system_from_scenario(doc["sylpheed"], scn(DEMO / "dogfight.toml"))
    eng = FakeEngine(7)
    eng.add_system(sysm)
    builders = scenario_events()
    for e in doc["event"]:
        eng.bus.post(builders[e["type"]](e, scn("s.toml")))
    eng.run_frames(60 * 40)
    assert len(eng.outcomes("Started")) >= 8
    assert eng.outcomes("OneShotSpent") and eng.outcomes("Duplicate")
    assert not eng.outcomes("CrewError")


@needs_demo
def test_section_without_crews_loads_every_crew_of_the_install_and_empty_list_none():
    sysm = system_from_scenario({"install": "demo"}, scn(DEMO / "x.toml"))
    eng = FakeEngine()
    eng.add_system(sysm)
    assert set(sysm.speakers()) == {"ELLEN", "RAYMOND", "ADANPLA", "ADANPLB"}
    none = system_from_scenario({"install": "demo", "crew": []}, scn(DEMO / "x.toml"))
    eng2 = FakeEngine()
    eng2.add_system(none)
    assert none.speakers() == []
