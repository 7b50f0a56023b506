"""The engine system and the scenario hooks, on the demo install (built by tools/build_starlancer_demo.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audio.core.engine import Engine
from audio.core.errors import ScenarioError
from audio.core.plugin import ScenarioContext
from audio.games.starlancer.actions import ACTIONS
from audio.games.starlancer.events import Gate, Say, Trigger
from audio.games.starlancer.scenario import demo_root, scenario_events, system_from_scenario
from audio.offline.scenario import scenario_from_doc


def scn(path: str | Path) -> ScenarioContext:
    """A scenario context for a scenario file at ``path`` (seed 0)."""
    return ScenarioContext(Path(path), 0, {})


DEMO = demo_root()
needs_demo = pytest.mark.skipif(not (DEMO / "resource.hog").exists(), reason="demo not built")


def engine_with(section=None):
    eng = Engine(seed=3)
    sys_ = system_from_scenario({"install": "demo", **(section or {})}, scn(DEMO / "mission.toml"))
    eng.add_system(sys_)
    return eng, sys_


def outcomes(eng, system="starlancer.radio"):
    return [(d.outcome, d.detail) for d in eng.bus.decisions if d.system == system]


@needs_demo
def test_start_part_plays_the_instructor_with_generic_comms_muted():
    eng, s = engine_with({"pilots": {"82": "Instructor"}})
    eng.bus.post(Say(t=1.0, speech="vip_res_002.ut", speaker="ship:Naginata", remark="generic"))
    eng.run_until(48_000 * 2)
    got = outcomes(eng)
    said = next(d for o, d in got if o == "Said")
    assert said["speaker"] == "Instructor" and said["flags"] == 6
    assert any(o == "Gated" and "DisableGenericComms" in d["reason"] for o, d in got)
    assert s.film_playing() and s.speech_playing() and s.busy()


@needs_demo
def test_trigger_by_name_and_port_queries_differ_in_the_preroll():
    eng, s = engine_with({"start": False, "created": ["Naginata"]})
    eng.bus.post(Trigger(t=0.5, condition="Destroyed", subject="Bandit"))
    eng.run_until(int(48_000 * 0.6))
    assert s.film_playing() and not s.speech_playing()  # the pre-roll holds the film
    eng.run_until(int(48_000 * 1.5))
    assert s.speech_playing()
    assert any(o == "TriggerFired" and d["subject"] == "Bandit" for o, d in outcomes(eng, "starlancer.vm"))


@needs_demo
def test_speech_voice_volume_follows_speech_times_master():
    eng, _s = engine_with(
        {"start": False, "created": ["Naginata"], "speech_volume": 100, "master_volume": 64}
    )
    eng.bus.post(Say(t=0.1, speech="ms99_nag_001.ut", speaker="ship:Naginata", mode="now"))
    eng.run_until(48_000 * 2)
    assert next(d for o, d in outcomes(eng) if o == "Started")["volume"] == 50


@needs_demo
def test_gate_event_and_unknown_subject_are_logged():
    eng, s = engine_with({"start": False})
    eng.bus.post(Gate(t=0.1, gate="taunts", disabled=True))
    eng.bus.post(Trigger(t=0.2, condition="Destroyed", subject="Nobody-such"))
    eng.run_until(48_000)
    assert s.radio.taunts_disabled
    assert any(o == "TriggerIgnored" for o, _ in outcomes(eng, "starlancer.vm"))


def test_scenario_rejects_bad_entries():
    ev = scenario_events()
    with pytest.raises(ScenarioError):
        ev["starlancer.say"]({"speech": "x.ut", "mode": "loud"}, scn("s.toml"))
    with pytest.raises(ScenarioError):
        ev["starlancer.trigger"]({"condition": "NotACondition", "subject": 1}, scn("s.toml"))
    with pytest.raises(ScenarioError):
        system_from_scenario({"install": "demo", "bogus": 1}, scn("s.toml"))


@needs_demo
def test_scenario_global_override_must_name_a_mission_global():
    with pytest.raises(ScenarioError, match="no such global"):
        system_from_scenario(
            {"install": "demo", "globals": {"(GV)nothing": 1}},
            scn(DEMO / "mission.toml"),
        )


def test_port_actions_build_events():
    by = {a.name: a for a in ACTIONS}
    e = by["starlancer/say"].build(["ship:Naginata", "x.ut", "if_idle", 6, 300])
    assert (e.speaker, e.mode, e.film_flags, e.expiry) == ("ship:Naginata", "if_idle", 6, 300)
    assert by["starlancer/trigger"].build(["Destroyed", "Bandit"]).subject == "Bandit"
    assert by["starlancer/gate"].build(["generic"]).disabled is True


@needs_demo
@pytest.mark.slow
def test_demo_renders_with_a_drop_an_expiry_and_a_gate():
    import tomllib

    path = DEMO / "mission.toml"
    doc = tomllib.loads(path.read_text())
    doc["scenario"]["duration"] = 16.0
    doc["event"] = [e for e in doc["event"] if e["t"] < 16.0]
    from audio.offline.scenario import build_engine

    scn = scenario_from_doc(doc, Path(path))
    eng = build_engine(scn)
    eng.run_until(48_000 * 16)
    got = [o for o, _ in outcomes(eng)]
    assert "Dropped" in got and "Expired" in got and "Gated" in got


@needs_demo
def test_bad_port_events_cost_one_decision_and_never_the_system():
    from audio.games.starlancer.events import Happen

    eng, s = engine_with({"start": False})
    for ev in (
        Say(t=0.1, speech="x.ut", speaker="pilot:abc", mode="now"),
        Happen(t=0.1, what="wingman", ship="Naginata", kind="dance"),
        Happen(t=0.1, what="hit", ship="Nobody-such"),
        Happen(t=0.1, what="variable", kind="nope", value=1),
        Trigger(t=0.1, condition="ShotAt", subject="Bandit", locals=("Nobody-such", 2**40, -1)),
    ):
        eng.bus.post(ev)
    eng.run_until(48_000)
    bad = [o for o, _ in outcomes(eng) + outcomes(eng, "starlancer.vm") if o == "BadEvent"]
    assert len(bad) == 4 and not eng.disabled


@needs_demo
def test_the_rescuer_setting_names_wing_place_5_and_a_pod_explosion_cancels_the_rescue():
    from audio.games.starlancer.events import Happen

    eng, _s = engine_with({"start": False, "rescuer": "Naginata", "player_voice": "female"})
    eng.bus.post(Happen(t=0.5, what="eject", ship="Bandit"))  # rescue due after 10.00 s + 0.5 s
    eng.bus.post(Happen(t=1.0, what="wingman", ship="Naginata", kind="status", value=1))
    eng.run_until(48_000 * 11)
    remarks = [d for o, d in outcomes(eng) if o == "Remark" and d.get("rule") == "rescue"]
    assert len(remarks) == 1 and remarks[0]["file"][:6] == "vipres"  # Naginata's pilot 7: vip
    assert any(d.get("file") == "fphud_004.ut" for _o, d in outcomes(eng))
    eng, _s = engine_with({"start": False, "rescuer": "Naginata"})
    eng.bus.post(Happen(t=0.5, what="eject", ship="Bandit"))
    eng.bus.post(Happen(t=2.0, what="explode", ship="Bandit", kind="pod"))
    eng.bus.post(Happen(t=2.0, what="explode", ship="Bandit", kind="pdo"))
    eng.run_until(48_000 * 12)
    got = outcomes(eng) + outcomes(eng, "starlancer.vm")
    assert not [d for o, d in got if o == "Remark" and "file" in d and d.get("rule") == "rescue"]
    assert [o for o, _d in got if o == "BadEvent"] == ["BadEvent"]
    assert not [d for o, d in got if o == "TriggerFired"]  # a pod's explosion is not the ship's


@needs_demo
def test_an_unknown_rescuer_or_player_voice_is_one_clear_scenario_error():
    with pytest.raises(ScenarioError, match="did you mean"):
        system_from_scenario({"install": "demo", "rescuer": "Naginta"}, scn(DEMO / "mission.toml"))
    with pytest.raises(ScenarioError):
        system_from_scenario({"install": "demo", "player_voice": "robot"}, scn(DEMO / "mission.toml"))
