"""Decisions streamed, not kept: a render spools them to disk and writes the log as it goes."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from audio.core.bus import Decision
from audio.offline.render import Outputs, render_scenario
from audio.offline.scenario import demo_scenario
from audio.offline.spool import READ_CHUNK, DecisionSpool


def _decisions(n: int) -> list[Decision]:
    return [
        Decision(i, i / 48_000, f"s{i % 3}", ("Started", "Fault")[i % 2], {"i": i, "t": (1, 2)})
        for i in range(n)
    ]


def test_a_spool_reads_back_every_decision_unchanged_and_counts_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import audio.offline.spool

    assert READ_CHUNK >= 1 << 16  # the real chunk; the test reads in 16 KiB chunks to need fewer decisions
    chunk = 1 << 14
    monkeypatch.setattr(audio.offline.spool, "READ_CHUNK", chunk)
    log = io.StringIO()
    spool = DecisionSpool(log)
    want = _decisions(2_000)  # several read chunks
    for d in want:
        spool.append(d)
    assert spool._offsets[-1] > 2 * chunk
    assert list(spool) == want and spool == want and len(spool) == 2_000
    assert spool[0] == want[0] and spool[-1] == want[-1] and spool[100:103] == want[100:103]
    assert spool.counts[("s1", "Fault")] == sum(1 for d in want if (d.system, d.outcome) == ("s1", "Fault"))
    lines = log.getvalue().splitlines()
    assert len(lines) == 2_000 and json.loads(lines[7]) == want[7].to_json()


def test_a_render_keeps_no_decision_in_memory_and_streams_the_log(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    res = render_scenario(demo_scenario("starlancer"), outputs=Outputs(log=log), keep_audio=False)
    assert isinstance(res.decisions, DecisionSpool) and len(res.decisions) > 20
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines == [d.to_json() for d in res.decisions]
    assert res.outcome_counts() == Counter((d["system"], d["outcome"]) for d in lines)
    assert res.voices == sorted(res.voices, key=lambda v: v[2])  # in start order


def test_a_spool_dropped_without_close_closes_its_file_without_a_resource_warning():
    import gc
    import warnings

    spool = DecisionSpool()
    spool.append(Decision(0, 0.0, "s", "Started", {}))
    f = spool._file
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        del spool
        gc.collect()
    assert f.closed
