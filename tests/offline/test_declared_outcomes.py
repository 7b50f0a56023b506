"""Every demo logs only declared outcomes, and a batch of every demo reports (decisions only)."""

from __future__ import annotations

import pytest

from audio.core.outcomes import CoreOutcome, OutcomeClass
from audio.offline.batch.report import load_frames, write_report
from audio.offline.batch.runner import RunOutput, decision_rows, simulate
from audio.offline.batch.store import BatchStore, table_from_rows
from audio.offline.scenario import demo_names, demo_scenario

DEMOS = demo_names()


@pytest.fixture(scope="module")
def runs() -> dict[str, RunOutput]:
    """One decisions-only run of every bundled demo at seed 0."""
    return {name: simulate(str(demo_scenario(name)), 0) for name in DEMOS}


@pytest.mark.parametrize("name", DEMOS)
def test_every_decision_of_a_demo_is_a_member_of_a_declared_outcome_type(runs, name):
    out = runs[name]
    declared = {s.outcomes for s in out.engine.systems} | {CoreOutcome}
    assert out.decisions
    undeclared = sorted(
        {f"{d.system}: {d.outcome!r}" for d in out.decisions if type(d.outcome) not in declared}
    )
    assert undeclared == []


def test_batch_report_of_every_demo_counts_declared_refusals_only(runs, tmp_path):
    store = BatchStore(tmp_path)
    store.open({n: str(demo_scenario(n)) for n in DEMOS}, "decisions", resume=False)
    for name, out in runs.items():
        run = {"scenario": name, "seed": 0, "kind": "run", "status": "ok", "mode": "decisions"}
        varieties = {s.outcomes: s.variety() for s in out.engine.systems}
        rows = [run, *decision_rows(name, 0, out.decisions, {}, varieties)]
        store.write(name, [0], table_from_rows(rows))
    page = write_report(tmp_path)
    assert page.is_file() and "Plays against the weights" in page.read_text()
    refused = load_frames(tmp_path)["decision"]
    expected = {
        (n, d.outcome.value)
        for n, out in runs.items()
        for d in out.decisions
        if d.outcome.kind in (OutcomeClass.REFUSED, OutcomeClass.FAULT)
    }
    rules = (tmp_path / "report" / "refusals.csv").read_text()
    assert expected and all(outcome in rules for _, outcome in expected)
    assert "Ended" not in rules and "Said" not in rules  # Starlancer's line flow is no refusal
    assert set(refused["scenario"]) == set(DEMOS)


def test_batch_report_of_a_starlancer_only_batch(runs, tmp_path):
    """Its lines carry no clip, so the plays tables are empty: the report still writes."""
    store = BatchStore(tmp_path)
    store.open({"starlancer": str(demo_scenario("starlancer"))}, "decisions", resume=False)
    out = runs["starlancer"]
    run = {"scenario": "starlancer", "seed": 0, "kind": "run", "status": "ok", "mode": "decisions"}
    store.write("starlancer", [0], table_from_rows([run, *decision_rows("starlancer", 0, out.decisions, {})]))
    assert write_report(tmp_path).is_file()
    assert "Gated" in (tmp_path / "report" / "refusals.csv").read_text()
