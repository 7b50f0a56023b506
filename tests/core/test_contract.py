"""Every registered game against the game contract (audio.core.plugin) and its declared outcomes."""

from __future__ import annotations

import ast
import dataclasses
from importlib import resources
from pathlib import Path

import pytest

from audio.core.bus import SubtitleEvent, event_kinds
from audio.core.outcomes import CoreOutcome, Outcome, OutcomeClass
from audio.core.plugin import Action, GameAdapter, GameSystem, ScenarioContext
from audio.dsp.graph import available_graphs
from audio.games import REGISTRY, all_games, load_all_events, outcome_table, outcome_types

GAMES = [g.name for g in all_games()]
LAYOUT = ("game.py", "events.py", "system.py", "scenario.py", "actions.py", "tui.py")
"""The files every game package has (audio.core.plugin's docstring)."""
FRONT_ENDS = ("audio.live", "audio.port", "audio.offline", "audio.cli")


def _record(name: str):
    return next(g for g in all_games() if g.name == name)


def _build(name: str) -> GameSystem:
    g = _record(name)
    folder = Path(str(resources.files(g.package)))
    demo = g.demo_path() or folder / "scenario.toml"
    return g.load("system")(g.port_section(None), ScenarioContext(demo, 0, {}))


def test_every_game_in_the_registry_has_one_record_and_one_line():
    assert len(GAMES) == len(set(GAMES)) == len(REGISTRY)
    assert GAMES[0] == "tone"  # the template of the README's "Adding a game"


@pytest.mark.parametrize("name", GAMES)
def test_a_game_package_follows_the_one_file_layout(name):
    folder = Path(str(resources.files(_record(name).package)))
    assert [f for f in LAYOUT if not (folder / f).is_file()] == []


@pytest.mark.parametrize("name", GAMES)
def test_a_game_imports_no_front_end_not_even_inside_a_function(name):
    """Checked on the source (import-linter checks the same in CI): a game never imports live,
    port, offline or cli, so importing its actions does not load python-osc or a device."""
    folder = Path(str(resources.files(_record(name).package)))
    bad = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            bad += [f"{path.name}: {m}" for m in mods if m.startswith(FRONT_ENDS)]
    assert bad == []


@pytest.mark.parametrize("name", GAMES)
def test_a_game_system_implements_the_contract(name):
    g = _record(name)
    system = _build(name)
    assert isinstance(system, GameSystem)  # so no abstract member is left unimplemented
    assert system.outcomes is g.load("outcomes") and issubclass(system.outcomes, Outcome)
    assert isinstance(system.name, str) and system.name.split(".")[0] == name
    assert isinstance(system.frame_rate, int) and 1 <= system.frame_rate <= 1000
    assert system.graphs and set(system.graphs) <= set(available_graphs())
    # the optional capabilities answer with the contract's types, whatever the game
    assert isinstance(system.snapshot(), dict)
    assert isinstance(system.is_speaking("nobody"), bool) and isinstance(system.line_active("x"), bool)
    assert isinstance(system.event_names(), dict)
    assert system.variety() is None or len(system.variety()) == 2


@pytest.mark.parametrize("name", GAMES)
def test_a_games_events_actions_and_tui_are_the_contracts_types(name):
    g = _record(name)
    builders = g.load("events")()
    assert builders and all(k.startswith(name + ".") and callable(b) for k, b in builders.items())
    kinds = event_kinds()
    assert set(builders) <= set(kinds) | {"sylpheed.disable"}  # an alias that builds sylpheed.enable
    actions = g.load("actions")
    assert actions and all(isinstance(a, Action) and a.name.startswith(name + "/") for a in actions)
    assert [a.name for a in actions if a.unavailable() is not None] == []
    assert issubclass(g.load("tui"), GameAdapter)


@pytest.mark.parametrize("name", GAMES)
def test_a_games_outcome_enum_declares_members_with_a_class_each(name):
    outcomes = _record(name).load("outcomes")
    assert len(outcomes) >= 2 and all(isinstance(m.kind, OutcomeClass) for m in outcomes)
    assert all(m.value == m.name for m in outcomes)  # the log's name is the member's name
    assert any(m.kind is OutcomeClass.START for m in outcomes)


def test_a_name_two_games_declare_has_one_class():
    seen: dict[str, tuple[str, OutcomeClass]] = {}
    clashes = []
    for t in outcome_types():
        for m in t:
            first = seen.setdefault(m.value, (t.__name__, m.kind))
            if first[1] is not m.kind:
                clashes.append(f"{m.value}: {first[0]} {first[1]} vs {t.__name__} {m.kind}")
    assert clashes == []
    assert outcome_table()["Fault"] is OutcomeClass.FAULT and CoreOutcome in outcome_types()


def test_the_bus_refuses_an_undeclared_outcome():
    from audio.core.bus import EventBus

    bus = EventBus()
    with pytest.raises(TypeError, match="not a declared Outcome"):
        bus.decide("tone", "Started")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a declared SkateOutcome"):
        _record("skate").load("outcomes").named("Mumbled")


def test_the_contract_types_are_plain_dataclasses_games_can_build():
    ctx = ScenarioContext(Path("/x/s.toml"), 3, {})
    assert ctx.resolve("a.bin") == Path("/x/a.bin") and dataclasses.is_dataclass(ctx)


def test_every_subtitle_kind_is_a_subtitle_event_with_its_own_caption():
    # The port forwards subtitles by type and asks the event for its caption: no attribute probing.
    load_all_events()
    kinds = {k: c for k, c in event_kinds().items() if k.endswith(".subtitle")}
    assert {"sylpheed.subtitle", "radiata.subtitle"} <= set(kinds)
    for cls in kinds.values():
        assert issubclass(cls, SubtitleEvent) and cls.caption is not SubtitleEvent.caption


def test_a_subtitle_caption_names_speaker_text_and_line():
    load_all_events()
    kinds = event_kinds()
    sylpheed = kinds["sylpheed.subtitle"](speaker="Ellen", pages=("Go!", "Now!"), message="M01")
    radiata = kinds["radiata.subtitle"](speaker="Jack", text="Hey.", message="T:1:2")
    assert sylpheed.caption() == ("Ellen", "Go! / Now!", "M01")
    assert radiata.caption() == ("Jack", "Hey.", "T:1:2")
