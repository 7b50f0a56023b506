"""A name a scenario gives that the install does not have (a voice, speaker, event, RMF file,
ship) is one line at load time with a did-you-mean from the install's own names (issue 19),
never a render of silence with exit 0; over the port the same check refuses the event."""

from __future__ import annotations

import copy

import pytest

from audio.core.errors import InputError, ScenarioError
from audio.offline.scenario import build_engine, demo_scenario, load_scenario, scenario_from_doc


def _with(game: str, kind: str, **change: object):
    """The game's demo scenario with the first ``kind`` event's fields changed."""
    scn = load_scenario(demo_scenario(game))
    doc = copy.deepcopy(scn.doc)
    index = next(i for i, e in enumerate(doc["event"]) if e["type"] == kind)
    doc["event"][index].update(change)
    return scenario_from_doc(doc, scn.path, scn.seed), index


@pytest.mark.parametrize(
    ("game", "kind", "change", "field", "suggestion"),
    [
        ("skate", "skate.spawn", {"voice": "busmX"}, "voice", "busm1"),
        ("sylpheed", "sylpheed.bark", {"speaker": "RAYMONT"}, "speaker", "RAYMOND"),
        ("sylpheed", "sylpheed.bark", {"event": "ORDOR_SQUADRON_ATACK"}, "event", "ORDOR_SQUADRON_ATTACK"),
        ("radiata", "radiata.talk", {"file": "twn.rmf"}, "file", "town.rmf"),
        ("starlancer", "starlancer.say", {"speaker": "ship:Nagnata"}, "speaker", "Naginata"),
    ],
)
def test_a_misspelt_install_name_is_one_line_with_the_closest_name(game, kind, change, field, suggestion):
    scn, index = _with(game, kind, **change)
    with pytest.raises(ScenarioError) as exc:
        build_engine(scn)
    text = str(exc.value)
    assert f"event[{index}].{field}" in text and f"did you mean '{suggestion}'" in text and "\n" not in text


def test_the_cli_says_it_in_one_line_with_exit_2(tmp_path, capsys):
    from audio.cli import main

    src = demo_scenario("radiata")
    scn = src.with_name("typo-test.toml")
    try:
        scn.write_text(src.read_text().replace('file = "town.rmf"', 'file = "twn.rmf"', 1))
        assert main(["render", str(scn), "-o", str(tmp_path / "x.wav")]) == 2
    finally:
        scn.unlink()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'town.rmf'" in err and not (tmp_path / "x.wav").exists()


def test_the_port_refuses_a_misspelt_voice_with_the_suggestion():
    from audio.games.skate.events import PedSpawn
    from audio.port import open_system

    port = open_system(game="skate", seed=1)
    with pytest.raises(InputError, match="did you mean 'busm1'"):
        port.post(PedSpawn(ped=1, voice="busmX"))
    assert port.post(PedSpawn(ped=1, voice="busm1"))


def test_a_misspelt_starlancer_speech_line_is_caught_at_load():
    scn, index = _with("starlancer", "starlancer.say", speech="vip_res_02.ut")
    with pytest.raises(ScenarioError, match=rf"event\[{index}\]\.speech: .*did you mean 'vip_res_002'"):
        build_engine(scn)
