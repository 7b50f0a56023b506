"""A timeline picture of a render: who spoke what, when, on which stream, and what was refused.

Voice tags follow ``"<system>:<speaker>:<what>"`` (e.g. ``"skate:ped3:501_59_busm1_Warn_n#2"``);
decisions name their speaker with a ``ped``, ``speaker`` or ``emitter`` detail.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from audio.core.bus import Decision

__all__ = ["timeline_png"]

_SPEAKER_KEYS = ("ped", "speaker", "emitter")
_LABEL_KEYS = ("clip", "message", "file", "event")


def _row(d: Decision) -> str | None:
    for k in _SPEAKER_KEYS:
        if k in d.detail:
            return f"{d.system.split('.')[0]}:{d.detail[k]}"
    return None


def timeline_png(decisions: Iterable[Decision], path: str | Path, duration: float,
                 voices: list[tuple[str, int, int, int | None]] | None = None, sample_rate: int = 48_000) -> Path:
    """Draw voices as bars (one row per speaker, coloured by stream slot) and every other
    decision as a labelled tick on its speaker's row (refusals in red)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    decisions = list(decisions)
    rows: list[str] = []
    for d in decisions:
        r = _row(d)
        if r is not None and r not in rows:
            rows.append(r)
    vrows: list[tuple[str, int, float, float, str]] = []
    for tag, slot, start, end in voices or []:
        parts = tag.split(":", 2)
        row = f"{parts[0]}:{parts[1]}" if len(parts) > 1 else tag
        if row not in rows:
            rows.append(row)
        vrows.append((row, slot, start / sample_rate,
                      (end if end is not None else duration * sample_rate) / sample_rate, parts[-1]))
    height = max(2.5, 0.45 * len(rows) + 1.5)
    fig, ax = plt.subplots(figsize=(13, height))
    y = {r: i for i, r in enumerate(rows)}
    palette = ["#4C72B0", "#55A868", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C", "#DD8452", "#937860"]
    for row, slot, t0, t1, what in vrows:
        ax.broken_barh([(t0, max(t1 - t0, 0.01))], (y[row] - 0.3, 0.6), color=palette[slot % len(palette)], alpha=0.8)
        ax.text(t0 + 0.02, y[row], f"{what} [s{slot}]", fontsize=6, va="center", clip_on=True)
    ok = {"Started", "Queued", "Finished", "Interrupted", "Cooldown", "Ducked", "Picked", "Cut", "Stopped",
          "CrewLoaded", "Phase", "Enabled", "OneShotSpent", "Spawned", "Accepted",
          "Said", "Ended", "WindowClosed", "Static", "Gate", "Reset"}
    quiet = {"Started", "Queued", "Finished", "Cooldown", "Picked", "CrewLoaded", "Spawned", "Accepted",
             "Ended", "WindowClosed"}
    stagger: dict[str, int] = {}
    for d in decisions:
        r = _row(d)
        if r is None:
            continue
        bad = d.outcome not in ok
        ax.plot([d.t, d.t], [y[r] - 0.42, y[r] - 0.3], color="#c22" if bad else "#777", lw=0.8)
        if d.outcome in quiet:
            continue
        label = next((str(d.detail[k]) for k in _LABEL_KEYS if k in d.detail), "")
        k = stagger[r] = (stagger.get(r, -1) + 1) % 2
        ax.text(d.t, y[r] - 0.43 - 0.12 * k, f"{d.outcome} {label}".strip(), fontsize=5.5,
                color="#c22" if bad else "#246", va="top")
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_ylim(-0.8, len(rows) - 0.2)
    ax.set_xlim(0, duration)
    ax.set_xlabel("time (s)")
    counts = Counter(d.outcome for d in decisions)
    ax.set_title("decisions: " + ", ".join(f"{k} {v}" for k, v in counts.most_common(10)), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
