"""Offline rendering of scenarios and captures to WAV/FLAC, with logs, stems and a summary.

The same scenario and seed give a byte-identical file whatever ``block`` is. A capture
(JSON lines, see :mod:`audio.core.bus`) stores the scenario document and every posted event,
so ``render_replay`` reproduces a run — offline or live — exactly.
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from audio.core.bus import Capture, Decision, read_capture
from audio.core.engine import Engine
from audio.core.errors import FormatError
from audio.offline.scenario import Scenario, build_engine, load_scenario, scenario_from_doc

__all__ = ["RenderResult", "render_scenario", "render_replay", "write_audio", "write_log", "summary_text"]


@dataclass
class RenderResult:
    """What a render produced, for the printed summary and for tests."""

    audio: np.ndarray                  # (samples, channels) float32
    sample_rate: int
    decisions: list[Decision]
    seconds_taken: float
    scenario: str
    seed: int
    voices_started: int
    stems: dict[str, np.ndarray] = field(default_factory=dict)
    voices: list[tuple[str, int, int, int | None]] = field(default_factory=list)
    system_summaries: dict[str, str] = field(default_factory=dict)
    """Per game system, its own per-event summary (systems with a ``summary`` method)."""
    """Every voice as (tag, slot, started_at sample, ended_at sample or None)."""

    @property
    def duration(self) -> float:
        return self.audio.shape[0] / self.sample_rate

    def outcome_counts(self) -> Counter[tuple[str, str]]:
        return Counter((d.system, d.outcome) for d in self.decisions)


def write_audio(path: str | Path, audio: np.ndarray, sample_rate: int, subtype: str | None = None) -> None:
    """Write WAV or FLAC (by extension) through soundfile; PCM_16 unless ``subtype`` says."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = "FLAC" if path.suffix.lower() == ".flac" else "WAV"
    sf.write(str(path), audio, sample_rate, format=fmt, subtype=subtype or "PCM_16")


def _run(eng: Engine, total: int, block: int, progress: bool, label: str) -> np.ndarray:
    out = np.empty((total, eng.channels), dtype=np.float32)
    bar = None
    if progress and total > 10 * eng.sample_rate:
        from tqdm import tqdm
        bar = tqdm(total=round(total / eng.sample_rate, 1), unit="s", desc=label, file=sys.stderr,
                   mininterval=0.5, disable=None,
                   bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s audio [{elapsed}<{remaining}]")
    i = 0
    while i < total:
        m = min(block, total - i)
        eng.render(m, out[i:i + m])
        i += m
        if bar is not None:
            bar.update(round(i / eng.sample_rate, 1) - bar.n)
    if bar is not None:
        bar.n = bar.total
        bar.close()
    return out


def _finish(eng: Engine, scn: Scenario, audio: np.ndarray, t0: float) -> RenderResult:
    voices = [(v.tag, v.slot, v.started_at + eng.voices.start_silence, v.ended_at) for v in eng.voices.history]
    return RenderResult(audio, eng.sample_rate, list(eng.bus.decisions), time.perf_counter() - t0,
                        scn.name, scn.seed, len(voices), eng.taps(), voices,
                        {s.name: s.summary(eng.bus.decisions) for s in eng.systems if hasattr(s, "summary")})


def render_scenario(scenario: str | Path | Scenario, *, seed: int | None = None, block: int | None = None,
                    stems: list[str] | None = None, capture: str | Path | None = None,
                    progress: bool = False) -> RenderResult:
    """Render a scenario (a path or a loaded :class:`Scenario`) to memory.

    ``stems`` names buses to record (e.g. ``["master", "environment"]``); ``capture`` writes
    the JSON-lines capture of every posted event.
    """
    t0 = time.perf_counter()
    scn = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, seed)
    eng = build_engine(scn, block=block, post_events=False)
    if stems:
        eng.tap_buses(stems)
    fh = None
    if capture is not None:
        fh = open(capture, "w", encoding="utf-8")
        cap = Capture(fh, {"scenario": str(scn.path), "seed": scn.seed, "sample_rate": eng.sample_rate,
                           "layout": scn.layout, "samples": int(round(scn.duration * eng.sample_rate)),
                           "doc": scn.doc})
        cap.attach(eng.bus)
    try:
        for ev in scn.events:
            eng.bus.post(ev)
        total = int(round(scn.duration * eng.sample_rate))
        audio = _run(eng, total, eng.block, progress, scn.name)
    finally:
        if fh is not None:
            fh.close()
    return _finish(eng, scn, audio, t0)


def render_replay(capture: str | Path, *, block: int | None = None, stems: list[str] | None = None,
                  progress: bool = False) -> RenderResult:
    """Re-render a capture: the scenario's systems, the captured external events at their samples."""
    t0 = time.perf_counter()
    header, events = read_capture(capture)
    try:
        doc = header["doc"]
        scn = scenario_from_doc(doc, Path(header.get("scenario", str(capture))), int(header["seed"]))
        total = int(header["samples"])
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(capture, 0, "a capture header with doc, seed and samples", str(exc)) from None
    eng = build_engine(scn, block=block, post_events=False)
    if stems:
        eng.tap_buses(stems)
    for ev, at, origin in events:
        if origin == "external":
            eng.bus.post(ev, at=at)
    audio = _run(eng, total, eng.block, progress, f"replay {scn.name}")
    return _finish(eng, scn, audio, t0)


def write_log(path: str | Path, decisions: list[Decision]) -> None:
    """The decision log as JSON lines."""
    with open(path, "w", encoding="utf-8") as fh:
        for d in decisions:
            fh.write(json.dumps(d.to_json(), separators=(",", ":")) + "\n")


def summary_text(res: RenderResult, out: str | Path | None = None) -> str:
    """A short human summary: file, duration, levels, speed, decisions by system and outcome."""
    a = res.audio
    peak = float(np.max(np.abs(a))) if a.size else 0.0
    rms = float(np.sqrt(np.mean(np.square(a, dtype=np.float64)))) if a.size else 0.0
    db = lambda x: f"{20 * np.log10(x):.1f} dBFS" if x > 0 else "-inf dBFS"  # noqa: E731
    lines = [f"{res.scenario}: {res.duration:.2f} s, {a.shape[1]} ch @ {res.sample_rate} Hz, seed {res.seed}"
             + (f" -> {out}" if out else ""),
             f"  peak {db(peak)}, rms {db(rms)}, {res.voices_started} voices started, "
             f"rendered in {res.seconds_taken:.2f} s ({res.duration / max(res.seconds_taken, 1e-9):.1f}x real time)"]
    by_sys: dict[str, Counter[str]] = {}
    for (system, outcome), n in sorted(res.outcome_counts().items()):
        by_sys.setdefault(system, Counter())[outcome] = n
    for system, c in by_sys.items():
        lines.append(f"  {system}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])))
    for system, text in res.system_summaries.items():
        if text.strip():
            lines.append(f"  {system} by event:")
            lines.extend("    " + ln.strip() for ln in text.splitlines())
    return "\n".join(lines)
