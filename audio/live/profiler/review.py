"""A finished run for the profiler page: a capture replayed, or a render's decision log read.

A capture (``barkbus live --capture``, JSON lines with a ``"capture": "barkbus"`` header) is
re-rendered offline exactly as ``barkbus render --replay`` does, with a
:class:`~audio.live.profiler.snapshot.SnapshotPublisher` on every block: the page then has the
same views as live (voices, levels, panels at 10 snapshots per second of run time). A decision
log (``barkbus render --log``: one decision per line) has decisions only: the voice bars are
drawn from each speaker's line-start and line-end decisions, and there are no levels or panels.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from audio.core.bus import Decision
from audio.core.errors import FormatError
from audio.live.profiler.history import History, speaker_of
from audio.live.profiler.snapshot import Snapshot, SnapshotPublisher
from audio.live.profiler.sources import ReviewSource

__all__ = ["from_capture", "from_log", "is_capture", "review_source"]


def is_capture(path: Path) -> bool:
    """True if ``path`` starts with a barkbus capture header."""
    with path.open("rb") as fh:
        head = fh.readline(1 << 20)
    try:
        first = json.loads(head or b"{}")
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("capture") == "barkbus"


def from_capture(path: Path, progress: Any = None) -> ReviewSource:
    """Replay the capture at ``path`` with a publisher on every block."""
    from audio.core.capture import read_capture
    from audio.offline.scenario import engine_for_capture

    header, events = read_capture(path)
    if header.get("samples") is None:
        raise FormatError(path, 0, "a capture header with samples")
    engine = engine_for_capture(header)
    for ev, at, origin in events:
        if origin == "external":
            engine.bus.post(ev, at=at)
    total = int(header["samples"])
    block = int(header.get("block", engine.block))
    pub = SnapshotPublisher(engine)
    snaps: list[Snapshot] = []
    pub.on_snapshot = snaps.append
    history = History()
    engine.prepare()
    start = int(engine.now)
    while int(engine.now) - start < total:
        at = int(engine.now)
        blk = engine.render(min(block, total - (at - start)))
        pub.on_block(at, blk)
        history.drain(pub)
    pub.publish()
    pub.finish()
    history.drain(pub)
    game = str(header.get("game") or "scenario")
    return ReviewSource(history, snaps, total / engine.sample_rate, game, f"capture {path.name}")


def _decision(d: dict[str, Any], path: Path, lineno: int) -> Decision:
    try:
        at, t, system, outcome = int(d["at"]), float(d["t"]), str(d["system"]), str(d["outcome"])
        if not (math.isfinite(t) and t >= 0 and at >= 0):
            raise ValueError("negative or not finite")
    except (KeyError, TypeError, ValueError, OverflowError):
        raise FormatError(path, lineno, "a decision with at, t (s, >= 0), system and outcome") from None
    detail = {k: v for k, v in d.items() if k not in ("at", "t", "system", "outcome")}
    return Decision(at, t, system, outcome, detail)  # type: ignore[arg-type]  # a name read back


def from_log(path: Path) -> ReviewSource:
    """Read a decision log; bars from line-start to line-end decisions per speaker."""
    from audio.core.outcomes import LINE_END, LINE_START

    history = History()
    open_lines: dict[tuple[str, str], Decision] = {}
    end = 0.0
    n = 0

    def bar(d0: Decision, t1: float) -> dict[str, Any]:
        clip = next((str(d0.detail[k]) for k in ("clip", "message", "line", "event") if k in d0.detail), "")
        return {
            "id": -1 - n,
            "system": d0.system.split(".")[0],
            "speaker": speaker_of(d0.detail),
            "clip": clip,
            "take": str(d0.detail.get("take", "")),
            "slot": int(d0.detail.get("stream", 0) or 0) if str(d0.detail.get("stream", "")).isdigit() else 0,
            "graph": "",
            "t0": round(d0.t, 4),
            "t1": round(t1, 4),
        }

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, exc.start, "UTF-8 text (a decision log is JSON lines)") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise FormatError(path, lineno, f"a JSON decision ({exc})") from None
        if not isinstance(obj, dict):
            raise FormatError(path, lineno, "a JSON object per line")
        d = _decision(obj, path, lineno)
        history.add_decision(d)
        end = max(end, d.t)
        who = speaker_of(d.detail)
        if not who:
            continue
        key = (d.system.split(".")[0], who)
        if d.outcome in LINE_START:
            if key in open_lines:
                history.add_bar(bar(open_lines[key], d.t))
                n += 1
            open_lines[key] = d
        elif d.outcome in LINE_END and key in open_lines:
            history.add_bar(bar(open_lines.pop(key), d.t))
            n += 1
    for d0 in open_lines.values():
        history.add_bar(bar(d0, end))
        n += 1
    note = f"decision log {path.name}: no voices, levels or panels (profile a capture for those)"
    return ReviewSource(history, [], end, "log", note)


def review_source(path: Path) -> ReviewSource:
    """A capture or a decision log (told apart by the capture header)."""
    return from_capture(path) if is_capture(path) else from_log(path)
