"""Offline rendering of scenarios and captures to WAV/FLAC, with logs, stems and a summary.

The same scenario and seed give a byte-identical file whatever ``block`` is. A capture
(JSON lines, see :mod:`audio.core.bus`) stores the scenario document and every posted event,
so ``render_replay`` reproduces a run — offline or live — exactly.

A render keeps what does not depend on the seed for the process's next render, as a batch
worker does (:mod:`audio.core.memo`, at most :data:`MEMO_BYTES` of arrays): installs and
their indexes, tuning files, graphs, decoded takes. Each is keyed by the file it came from
(path, size and modification time), so a file changed between two renders is read again; the
renders' bytes are the same either way.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, cast

import numpy as np

from audio.core import memo
from audio.core.bus import Decision
from audio.core.capture import Capture, portable_header, post_captured, read_capture
from audio.core.clock import RENDER_BLOCK
from audio.core.engine import Engine
from audio.core.errors import FormatError, OutputError
from audio.core.outputs import (
    AudioSink,
    AudioStats,
    _target,
    atomic_path,
    audio_format,
    check_outputs,
    is_stdio,
    open_output,
    remove_stale_partials,
    terminate_as_interrupt,
    warm_output_kernels,
    write_audio,
)
from audio.dsp.graph import available_graphs, load_graph
from audio.offline.scenario import Scenario, build_engine, load_scenario, replay_scenario
from audio.offline.spool import DecisionSpool

__all__ = [
    "Outputs",
    "RenderResult",
    "render_scenario",
    "render_replay",
    "write_audio",
    "write_log",
    "summary_json",
    "summary_text",
]


@dataclass
class RenderResult:
    """What a render produced, for the printed summary and for tests.

    ``audio`` (``(samples, channels)`` float32) and ``stems`` are kept only when the render
    was asked to keep them (``keep_audio``); a render to a file streams instead and keeps the
    peak and RMS it measured on the way.
    """

    sample_rate: int
    samples: int
    channels: int
    decisions: Sequence[Decision]
    """Every decision, in order (a :class:`~audio.offline.spool.DecisionSpool`: on disk, read
    back when iterated)."""
    seconds_taken: float
    """Wall seconds of the render itself: the block loop and the files' last chunk."""
    scenario: str
    seed: int
    voices_started: int
    peak: float
    rms: float
    audio: np.ndarray | None = None
    stems: dict[str, np.ndarray] = field(default_factory=dict)
    voices: list[tuple[str, int, int, int | None]] = field(default_factory=list)
    """Every voice as (tag, slot, started_at sample, ended_at sample or None)."""
    system_summaries: dict[str, str] = field(default_factory=dict)
    """Per game system, its own per-event summary (systems with a ``summary`` method)."""
    faults: int = 0
    """Voice-level faults logged (``Fault`` decisions)."""
    setup_seconds: float = 0.0
    """Wall seconds before the first block: loading the scenario and the install, building the
    engine and loading its graphs' compiled kernels (numba's cache on a warm machine)."""
    clipped: int = 0
    """Mix samples (one channel each) at or over full scale (magnitude >= 1.0)."""
    first_clip: int | None = None
    """Sample of the first clipped one, or None."""

    @property
    def silent(self) -> bool:
        """Every sample of the mix is zero."""
        return self.peak == 0.0

    @property
    def duration(self) -> float:
        """Seconds rendered."""
        return self.samples / self.sample_rate

    def outcome_counts(self) -> Counter[tuple[str, str]]:
        if isinstance(self.decisions, DecisionSpool):
            return Counter(self.decisions.counts)
        return Counter((d.system, d.outcome) for d in self.decisions)


@dataclass
class Outputs:
    """Where a render streams to: the mix (``audio``), one file per bus in ``stems_dir``, the
    capture, the decision log ``log`` (JSON lines, written as the decisions are taken);
    ``subtype`` is the libsndfile subtype (default PCM_16).

    ``stems`` names the buses to write; empty with a ``stems_dir`` means every bus the render
    loads (every bus that carries voices, and the master). Stems take the mix's format (its
    extension; WAV when the mix goes to standard output or is not written).
    """

    audio: Path | None = None
    stems_dir: Path | None = None
    stems: list[str] = field(default_factory=list)
    capture: Path | None = None
    subtype: str | None = None
    log: Path | None = None
    others: dict[str, tuple[Path | None, str]] = field(default_factory=dict)
    """The command's other outputs (``{"--log": (path, "text")}``), checked with these."""

    @property
    def stem_suffix(self) -> str:
        if self.audio is None or is_stdio(self.audio) or not self.audio.suffix:
            return ".wav"
        return self.audio.suffix

    def stem_path(self, name: str) -> Path:
        assert self.stems_dir is not None
        return self.stems_dir / f"{name}{self.stem_suffix}"

    def check(self, buses: list[str] | None = None) -> None:
        """Every output can be written, in a writable format, none over another, before any
        work; ``buses`` (default: every bus graph) are the stems the folder may get."""
        named: dict[str, tuple[Path | None, str]] = {
            "-o": (self.audio, "audio"),
            "--capture": (self.capture, "text"),
            "log": (self.log, "text"),
            **self.others,
            "--stems": (self.stems_dir, "folder"),
        }
        check_outputs(named, self.subtype)
        if self.stems_dir is None:
            return
        audio_format(self.stem_path("master"), self.subtype)
        if buses is None:
            buses = self.stems or [g for g in available_graphs() if load_graph(g).kind == "bus"]
        stems = {str(_target(self.stem_path(b))): b for b in buses}
        for b in buses:
            remove_stale_partials(self.stem_path(b))
        for label, (p, _kind) in named.items():
            if p is not None and label != "--stems" and not is_stdio(p) and str(_target(p)) in stems:
                raise OutputError(
                    f"{p}: {label} is where the {stems[str(_target(p))]} stem goes; give another name"
                )


MEMO_BYTES = 256 << 20
"""Bytes of arrays (decoded takes, clips) the renders of a process keep for the next one
(the least recently used go first beyond it)."""

CHUNK = 65_536
"""Samples gathered before the statistics and the files see them (fewer, larger writes; the
files' bytes do not depend on it)."""


class _Run:
    """The sinks and accumulators of one render; :meth:`close` commits or discards them all.

    The engine renders into a :data:`CHUNK`-sample buffer (:attr:`buf`, filled to :attr:`fill`);
    the peak/RMS statistics, the mix file and the stems are written a chunk at a time."""

    def __init__(self, eng: Engine, outputs: Outputs, keep_audio: bool) -> None:
        self.eng = eng
        self.keep: list[np.ndarray] | None = [] if keep_audio else None
        self.stats = AudioStats()
        self.sinks: list[AudioSink] = []
        self.mix: AudioSink | None = None
        self.stem_sinks: dict[str, AudioSink] = {}
        self.stem_keep: dict[str, list[np.ndarray]] = {n: [] for n in outputs.stems} if keep_audio else {}
        self.buf = np.empty((CHUNK, eng.channels), dtype=np.float32)
        self.fill = 0
        self.spans: list[tuple[int, str, int, int, int | None]] = []
        """Ended voices as (id, tag, slot, first audible sample, ended_at): what the timeline needs."""
        warm_output_kernels()
        try:
            if outputs.audio is not None:
                self.mix = AudioSink(outputs.audio, eng.sample_rate, eng.channels, outputs.subtype)
                self.sinks.append(self.mix)
            if outputs.stems_dir is not None:
                for name in outputs.stems:
                    sink = AudioSink(outputs.stem_path(name), eng.sample_rate, eng.channels, outputs.subtype)
                    self.stem_sinks[name] = sink
                    self.sinks.append(sink)
        except BaseException:
            self.close(False)
            raise

    def rendered(self, m: int) -> None:
        """``m`` more samples were rendered into :attr:`buf` at :attr:`fill`."""
        self.fill += m
        if self.fill == CHUNK:
            self.flush()

    def flush(self) -> None:
        """Hand the gathered samples to the statistics, the files and the kept audio."""
        chunk = self.buf[: self.fill]
        self.fill = 0
        self.stats.add(chunk)
        if self.mix is not None:
            self.mix.write(chunk)
        if self.keep is not None:
            self.keep.append(chunk.copy())
        for name, stem in self.eng.drain_taps().items():
            if name in self.stem_sinks:
                self.stem_sinks[name].write(stem)
            if name in self.stem_keep:
                self.stem_keep[name].append(stem)
        self.keep_spans(done_only=True)

    def keep_spans(self, done_only: bool) -> None:
        """Move the voice history's (ended) voices into :attr:`spans` (memory stays flat)."""
        voices = self.eng.voices
        silence = voices.start_silence
        kept = []
        for v in voices.history:
            if done_only and not v.done:
                kept.append(v)
            else:
                self.spans.append((v.id, v.tag, v.slot, v.started_at + silence, v.ended_at))
        voices.history = kept

    def close(self, ok: bool) -> None:
        """Commit every file, or discard them all (last first, so a stems folder this run
        created is empty and removed again)."""
        for sink in self.sinks if ok else reversed(self.sinks):
            if ok:
                sink.commit()
            else:
                sink.discard()


def _run(eng: Engine, total: int, run: _Run, progress: bool, label: str) -> None:
    bar = None
    if progress and total > 10 * eng.sample_rate:
        from tqdm import tqdm

        bar = tqdm(
            total=round(total / eng.sample_rate, 1),
            unit="s",
            desc=label,
            file=sys.stderr,
            mininterval=0.5,
            disable=None,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s audio "
            "[{elapsed}<{remaining}]",
        )
    i = 0
    while i < total:
        # one call per chunk: the engine splits it into blocks of at most ``eng.block`` on its
        # own sample grid (a call of one block each would split the audio where the chunks end)
        m = min(total - i, CHUNK - run.fill)
        eng.render(m, run.buf[run.fill : run.fill + m])  # straight into the chunk
        run.rendered(m)
        i += m
        if bar is not None:
            bar.update(round(i / eng.sample_rate, 1) - bar.n)
    if bar is not None:
        bar.n = bar.total
        bar.close()


def _render(
    eng: Engine,
    scn: Scenario,
    total: int,
    outputs: Outputs,
    keep_audio: bool,
    progress: bool,
    label: str,
    t0: float,
) -> RenderResult:
    """Render ``total`` samples; ``t0`` is when the set-up began (``perf_counter``)."""
    if outputs.stems_dir is not None and not outputs.stems:
        outputs.stems = list(eng.mixer.buses)
        outputs.check(outputs.stems)
    if outputs.stems:
        eng.tap_buses(outputs.stems)
    with terminate_as_interrupt(), contextlib.ExitStack() as stack:  # before any partial file exists
        log = None
        if outputs.log is not None:
            tmp = stack.enter_context(atomic_path(outputs.log))
            log = stack.enter_context(open(tmp, "w", encoding="utf-8"))
        decisions = DecisionSpool(log)
        for d in eng.bus.decisions:  # taken while the engine was built
            decisions.append(d)
        eng.bus.decisions.clear()
        eng.bus.keep_decisions = False
        eng.bus.on_decision(decisions.append)
        run = _Run(eng, outputs, keep_audio)
        t_render = time.perf_counter()
        ok = False
        try:
            _run(eng, total, run, progress, label)
            run.flush()
            ok = True
        finally:
            run.close(ok)
            decisions.log = None  # the log is complete (renamed into place) or removed
    run.keep_spans(done_only=False)
    voices = [span[1:] for span in sorted(run.spans)]  # in start order, as the history was
    audio = (
        np.concatenate(run.keep)
        if run.keep
        else (np.zeros((0, eng.channels), np.float32) if run.keep is not None else None)
    )
    stems = {
        n: np.concatenate(c) if c else np.zeros((0, eng.channels), np.float32)
        for n, c in run.stem_keep.items()
    }
    return RenderResult(
        eng.sample_rate,
        total,
        eng.channels,
        decisions,
        time.perf_counter() - t_render,
        scn.name,
        scn.seed,
        len(voices),
        run.stats.peak,
        run.stats.rms,
        audio,
        stems,
        voices,
        {s.name: text for s in eng.systems if (text := s.summary(decisions)) is not None},
        sum(n for (_, outcome), n in decisions.counts.items() if outcome == "Fault"),
        t_render - t0,
        run.stats.clipped,
        run.stats.first_clip,
    )


def render_scenario(
    scenario: str | Path | Scenario,
    *,
    seed: int | None = None,
    block: int | None = None,
    stems: list[str] | None = None,
    capture: str | Path | None = None,
    progress: bool = False,
    outputs: Outputs | None = None,
    keep_audio: bool | None = None,
) -> RenderResult:
    """Render a scenario (a path or a loaded :class:`Scenario`).

    Parameters
    ----------
    stems:
        Buses to record (e.g. ``["master", "environment"]``), kept in ``result.stems`` or
        streamed to ``outputs.stems_dir``.
    capture:
        Write the JSON-lines capture of every posted event here (atomically).
    outputs:
        Files to stream to (:class:`Outputs`); checked writable before rendering.
    keep_audio:
        Keep the mix in ``result.audio`` (default: when no audio file is written).
    """
    t0 = time.perf_counter()
    with memo.enabled(MEMO_BYTES):  # what the loads keep serves the process's next render
        return _render_scenario(scenario, seed, block, stems, capture, progress, outputs, keep_audio, t0)


def _render_scenario(
    scenario: str | Path | Scenario,
    seed: int | None,
    block: int | None,
    stems: list[str] | None,
    capture: str | Path | None,
    progress: bool,
    outputs: Outputs | None,
    keep_audio: bool | None,
    t0: float,
) -> RenderResult:
    scn = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, seed)
    outputs = outputs or Outputs()
    if stems:
        outputs.stems = list(stems)
    if capture is not None:
        outputs.capture = Path(capture)
    outputs.check()
    keep = outputs.audio is None if keep_audio is None else keep_audio
    # the sample pool sized by what plays (an offline render may copy it as it grows): no 16 MB
    # arena zeroed up front
    eng = build_engine(scn, block=block or RENDER_BLOCK, post_events=False, pool_samples=0)
    total = int(round(scn.duration * eng.sample_rate))
    if outputs.capture is None:
        for ev in scn.events:
            eng.bus.post(ev)
        return _render(eng, scn, total, outputs, keep, progress, scn.name, t0)
    with terminate_as_interrupt(), open_output(outputs.capture) as fh:
        cap = Capture(
            cast(TextIO, fh),
            portable_header(
                {
                    "scenario": str(scn.path),
                    "seed": scn.seed,
                    "sample_rate": eng.sample_rate,
                    "block": eng.config.block,
                    "layout": scn.layout,
                    "samples": total,
                    "doc": scn.doc,
                },
                outputs.capture,
            ),
        )
        cap.attach(eng.bus)
        for ev in scn.events:
            eng.bus.post(ev)
        res = _render(eng, scn, total, outputs, keep, progress, scn.name, t0)
        fh.flush()
    return res


def render_replay(
    capture: str | Path,
    *,
    block: int | None = None,
    stems: list[str] | None = None,
    progress: bool = False,
    outputs: Outputs | None = None,
    keep_audio: bool | None = None,
) -> RenderResult:
    """Re-render a capture: the engine its header describes (:func:`replay_scenario`: layout,
    sample rate, block, seed, installs), the captured external events at their samples.

    ``block`` (samples) overrides the recorded block; the output is the same either way."""
    t0 = time.perf_counter()
    header, events = read_capture(capture)
    if header.get("samples") is None:
        raise FormatError(capture, 0, "a capture header with the samples rendered (samples)")
    total = int(header["samples"])
    outputs = outputs or Outputs()
    if stems:
        outputs.stems = list(stems)
    outputs.check()
    keep = outputs.audio is None if keep_audio is None else keep_audio
    if block:
        header = {**header, "block": block}
    with memo.enabled(MEMO_BYTES):
        scn, eng = replay_scenario(header, capture)
        post_captured(eng, events)
        return _render(eng, scn, total, outputs, keep, progress, f"replay {scn.name}", t0)


def write_log(path: str | Path, decisions: Sequence[Decision]) -> None:
    """The decision log as JSON lines (written under a temporary name, then renamed)."""
    with open_output(path) as fh:
        for d in decisions:
            fh.write(json.dumps(d.to_json(), separators=(",", ":")) + "\n")


def summary_json(res: RenderResult, out: str | Path | None = None) -> dict[str, object]:
    """The summary as one JSON object (``--json``): what :func:`summary_text` says, as fields."""
    by_sys: dict[str, dict[str, int]] = {}
    for (system, outcome), n in sorted(res.outcome_counts().items()):
        by_sys.setdefault(system, {})[outcome] = n
    return {
        "scenario": res.scenario,
        "seed": res.seed,
        "output": None if out is None else str(out),
        "seconds": res.duration,
        "samples": res.samples,
        "channels": res.channels,
        "sample_rate": res.sample_rate,
        "peak": res.peak,
        "rms": res.rms,
        "clipped": res.clipped,
        "first_clip_seconds": None if res.first_clip is None else res.first_clip / res.sample_rate,
        "silent": res.silent,
        "voices_started": res.voices_started,
        "faults": res.faults,
        "setup_seconds": res.setup_seconds,
        "render_seconds": res.seconds_taken,
        "outcomes": by_sys,
    }


def summary_text(res: RenderResult, out: str | Path | None = None) -> str:
    """A short human summary: file, duration, levels, speed, decisions by system and outcome."""

    def db(x: float) -> str:
        return f"{20 * np.log10(x):.1f} dBFS" if x > 0 else "-inf dBFS"

    lines = [
        f"{res.scenario}: {res.duration:.2f} s, {res.channels} ch @ {res.sample_rate} Hz, seed {res.seed}"
        + (f" -> {out}" if out else ""),
        f"  peak {db(res.peak)}, rms {db(res.rms)}, {res.voices_started} voices started, "
        + (f"{res.faults} faults, " if res.faults else "")
        + f"set up in {res.setup_seconds:.2f} s, rendered in {res.seconds_taken:.2f} s "
        f"({res.duration / max(res.seconds_taken, 1e-9):.1f}x real time)",
    ]
    if res.clipped:
        assert res.first_clip is not None
        lines.append(
            f"  CLIPPED: {res.clipped} samples at or over full scale, the first at "
            f"{res.first_clip / res.sample_rate:.3f} s"
        )
    if res.silent and res.samples:
        lines.append("  SILENT: every sample of the output is zero")
    by_sys: dict[str, Counter[str]] = {}
    for (system, outcome), n in sorted(res.outcome_counts().items()):
        by_sys.setdefault(system, Counter())[outcome] = n
    for system, c in by_sys.items():
        lines.append(
            f"  {system}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))
        )
    for system, text in res.system_summaries.items():
        if text.strip():
            lines.append(f"  {system} by event:")
            lines.extend("    " + ln.strip() for ln in text.splitlines())
    return "\n".join(lines)
