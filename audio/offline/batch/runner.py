"""Batch tasks: run (scenario, seed) pairs and turn each run into store rows.

:func:`run_task` is what a Dask worker executes: one :class:`Task` (a scenario and a chunk
of seeds) -> one :data:`~audio.offline.batch.store.SCHEMA` table. A seed whose run raises
becomes a ``run`` row with ``status = "failed"`` and the error's one line; the other seeds
go on. Decisions-only runs use the engine's ``dsp=False`` switch (the decisions are those of
a full render); full runs keep only their measurements: sample peak (dBFS), integrated
loudness per ITU-R BS.1770 (:mod:`audio.offline.loudness`, LUFS) and clipped samples (``|x| >= 1.0``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from audio.core import memo
from audio.core.bus import Decision, to_jsonable
from audio.core.engine import Engine
from audio.core.outcomes import CoreOutcome, Outcome
from audio.core.plugin import PlayKey, default_play_key
from audio.offline.batch.shares import DEFAULT_VARIETY, PLAY_CLASS
from audio.offline.batch.store import table_from_rows
from audio.offline.loudness import LoudnessMeter

if TYPE_CHECKING:
    from audio.offline.scenario import Scenario

__all__ = [
    "RunOutput",
    "Task",
    "decision_rows",
    "failed_table",
    "measures",
    "run_one",
    "run_task",
    "simulate",
]

CHUNK_SAMPLES = 48_000
"""Samples per ``Engine.render`` call, measured while they are in cache (the output does not
depend on it)."""
_NAMED = ("speaker", "event", "reason", "clip", "take")
_DETAIL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""A decision's ``detail`` column: compact JSON with sorted keys (one encoder for every row)."""


@dataclass(frozen=True)
class Task:
    """A scenario (store key and absolute path) and the seeds one task runs."""

    key: str
    path: str
    seeds: tuple[int, ...]
    decisions_only: bool = True


@dataclass
class RunOutput:
    """What one run leaves: its engine (systems and decisions) and, in full mode, its
    measurements (:func:`measures`) and, when kept, its audio."""

    engine: Engine
    decisions: list[Decision]
    duration: float
    audio: np.ndarray | None
    measures: dict[str, float | int] | None = None


def simulate(path: str, seed: int, decisions_only: bool = True, keep_audio: bool = True) -> RunOutput:
    """Run a scenario file at ``seed``; with ``decisions_only`` no audio is computed (the engine
    advances through the whole run in one call, :meth:`Engine.advance
    <audio.core.engine.Engine.advance>`). A full run is measured chunk by chunk as it renders
    (:func:`measures`); ``keep_audio`` also keeps the whole mix (``RunOutput.audio``,
    ``(samples, channels)`` float32)."""
    from audio.core.clock import RENDER_BLOCK
    from audio.offline.scenario import build_engine

    scn = _scenario(path, seed)
    # the pool sized by what plays: no 16 MB arena zeroed per run
    eng = build_engine(scn, block=RENDER_BLOCK, dsp=not decisions_only, pool_samples=0)
    eng.faults.warn = False  # the run's row counts its faults and names the first (run_one)
    total = round(scn.duration * eng.sample_rate)
    if decisions_only:  # the whole run in one call, with no audio
        eng.advance(total)
        return RunOutput(eng, list(eng.bus.decisions), scn.duration, None)
    meter = LoudnessMeter(eng.sample_rate, eng.channels, total)
    audio = np.empty((total, eng.channels), dtype=np.float32) if keep_audio else None
    scratch = np.empty((min(CHUNK_SAMPLES, total), eng.channels), dtype=np.float32)
    i = 0
    while i < total:
        m = min(CHUNK_SAMPLES, total - i)
        chunk = scratch[:m] if audio is None else audio[i : i + m]
        eng.render(m, chunk)
        meter.add(chunk)
        i += m
    return RunOutput(eng, list(eng.bus.decisions), scn.duration, audio, measures(meter))


def _scenario(path: str, seed: int) -> Scenario:
    """The scenario file at ``seed``: parsed and checked once per worker inside the memo (its
    events and tables do not depend on the seed), then given the seed."""
    from audio.offline.scenario import load_scenario

    if not memo.active() or not 0 <= seed < 2**63:  # a seed out of range: the loader says why
        return load_scenario(path, seed)
    scn = memo.memo(("offline.scenario", memo.file_key(path)), lambda: load_scenario(path))
    return dataclasses.replace(scn, seed=int(seed))


def measures(meter: LoudnessMeter) -> dict[str, float | int]:
    """Peak (dBFS), BS.1770 integrated loudness (LUFS; -inf when gated out, nan when shorter than
    one 400 ms block) and clipped samples of the audio a meter was fed in full.

    Parameters
    ----------
    meter:
        A :class:`~audio.offline.loudness.LoudnessMeter` fed every sample of the run.
    """
    peak = meter.peak
    return {
        "peak_dbfs": 20.0 * math.log10(peak) if peak > 0 else -math.inf,
        "loudness_lufs": meter.integrated(),
        "clipped": meter.clipped,
    }


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _take(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None


def decision_rows(
    key: str,
    seed: int,
    decisions: Iterable[Decision],
    names: dict[str, dict[str, str]],
    varieties: Mapping[type[Outcome], tuple[str, str] | None] | None = None,
    play_keys: Mapping[type[Outcome], Callable[[Mapping[str, Any]], PlayKey]] | None = None,
) -> list[dict[str, Any]]:
    """One store row per decision. ``event``, ``clip`` and ``take`` are what its system's
    :meth:`~audio.core.plugin.GameSystem.play_key` reads from the detail (found by the outcome's
    type in ``play_keys``, else :func:`~audio.core.plugin.default_play_key`); everything else
    stays in the JSON ``detail``. A line start (an outcome of class start) carries its system's
    ``variety`` (found by the outcome's type in ``varieties``, else
    :data:`~audio.offline.batch.shares.DEFAULT_VARIETY`)."""
    rows = []
    varieties = varieties or {}
    play_keys = play_keys or {}
    for i, d in enumerate(decisions):
        variety = None
        if d.outcome.kind is PLAY_CLASS:
            variety = "/".join(varieties.get(type(d.outcome)) or DEFAULT_VARIETY)
        det = to_jsonable(d.detail)  # the logged form less the named columns (at, t, system, outcome)
        for k in ("at", "t", "system", "outcome"):
            det.pop(k, None)
        event, clip, take = play_keys.get(type(d.outcome), default_play_key)(det)
        event = _text(event)
        rows.append(
            {
                "scenario": key,
                "seed": seed,
                "kind": "decision",
                "seq": i,
                "at": d.at,
                "t": d.t,
                "system": d.system,
                "outcome": d.outcome,
                "speaker": _text(det.get("speaker")),
                "event": event,
                "event_name": names.get(d.system, {}).get(event or ""),
                "reason": _text(det.get("reason")),
                "clip": _text(clip),
                "take": _take(take),
                "detail": _DETAIL.encode({k: v for k, v in det.items() if k not in _NAMED}),
                "variety": variety,
            }
        )
    return rows


Names = dict[str, dict[str, str]]


def _system_rows(key: str, seed: int, out: RunOutput) -> tuple[list[dict[str, Any]], Names]:
    """The run's expect and catalog rows, and each system's event names."""
    rows: list[dict[str, Any]] = []
    names: Names = {}
    for system in out.engine.systems:
        name = system.name
        names[name] = dict(system.event_names())
        mine = [d for d in out.decisions if d.system == name]
        base = {"scenario": key, "seed": seed, "system": name}
        for (event, clip), value in sorted(system.expected_shares(mine).items()):
            rows.append(
                {
                    **base,
                    "kind": "expect",
                    "event": event,
                    "event_name": names[name].get(event),
                    "clip": clip,
                    "value": float(value),
                }
            )
        for event, clip in sorted(system.catalogue(mine)):
            rows.append(
                {
                    **base,
                    "kind": "catalog",
                    "event": event,
                    "event_name": names[name].get(event),
                    "clip": clip,
                }
            )
    return rows, names


def run_one(key: str, path: str, seed: int, decisions_only: bool = True) -> list[dict[str, Any]]:
    """Every store row of one run; a run that raises gives one failed ``run`` row."""
    t0 = time.perf_counter()
    run = {"scenario": key, "seed": seed, "kind": "run", "mode": "decisions" if decisions_only else "full"}
    try:
        out = simulate(path, seed, decisions_only, keep_audio=False)
        extra, names = _system_rows(key, seed, out)
        varieties = {s.outcomes: s.variety() for s in out.engine.systems}
        play_keys = {s.outcomes: s.play_key for s in out.engine.systems}
        rows = decision_rows(key, seed, out.decisions, names, varieties, play_keys) + extra
        faults = [d for d in out.decisions if d.outcome is CoreOutcome.Fault]
        run.update(
            status="ok",
            duration_s=out.duration,
            decisions=len(out.decisions),
            voices=len(out.engine.voices.history),
            faults=len(faults),
        )
        if faults:  # a voice that could not play: the run went on; the first fault says why
            first = faults[0].detail
            run["error"] = (
                f"{len(faults)} voice faults; first: {first.get('file', '')} {first.get('reason', '')}"
            )
        if out.measures is not None:
            run.update(out.measures)
    except Exception as exc:
        rows = []
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" (at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        run.update(status="failed", error=f"{type(exc).__name__}: {exc}{where}".replace("\n", " "))
    run["wall_s"] = time.perf_counter() - t0
    return [run, *rows]


def run_task(task: Task) -> pa.Table:
    """Run every seed of ``task`` (the function a worker executes). A catalogue line appears
    once per task, under the first seed that listed it. What does not depend on the seed
    (installs and their indexes, tuning, decoded takes or their lengths) is kept in the
    worker's :mod:`~audio.core.memo` for its later tasks."""
    rows: list[dict[str, Any]] = []
    listed: set[tuple[Any, ...]] = set()
    for seed in task.seeds:
        with memo.enabled():
            got = run_one(task.key, task.path, seed, task.decisions_only)
        for r in got:
            if r["kind"] == "catalog":  # a line listed once per task is enough for the union
                key = (r["system"], r["event"], r["clip"])
                if key in listed:
                    continue
                listed.add(key)
            rows.append(r)
    return table_from_rows(rows)


def failed_table(task: Task, error: str) -> pa.Table:
    """Failed run rows for every seed of a task the cluster could not run."""
    mode = "decisions" if task.decisions_only else "full"
    return table_from_rows(
        {"scenario": task.key, "seed": s, "kind": "run", "mode": mode, "status": "failed", "error": error}
        for s in task.seeds
    )
