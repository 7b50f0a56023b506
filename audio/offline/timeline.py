"""A timeline picture of a render: who spoke what, when, on which stream, and what was refused.

Voice tags follow ``"<system>:<speaker>:<what>"`` (e.g. ``"skate:3:501_59_busm1_Warn_n#2"``);
decisions name their speaker with a ``ped``, ``speaker`` or ``emitter`` detail. Decisions that
name no speaker (a phase change, chatter disabled) go on one row per system.

Layout: one row per speaker, systems in first-seen order, speakers in natural order (numbers
numerically, names alphabetically). Inside a row, voices are bars packed into lanes and the
labelled decisions are markers packed into lanes below them; packing uses each label's width,
so no two labels overlap. Markers are coloured and shaped by outcome class, with a legend.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from audio.core.bus import Decision

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "OUTCOMES",
    "OUTCOME_CLASSES",
    "classify_outcomes",
    "outcome_class",
    "timeline_figure",
    "timeline_png",
]

_SPEAKER_KEYS = ("ped", "speaker", "emitter")
_LABEL_KEYS = ("clip", "message", "file", "event", "line", "phase")

#: class -> (colour, marker, legend text).
OUTCOME_CLASSES: dict[str, tuple[str, str, str]] = {
    "refused": ("#c0392b", "x", "refused / failed"),
    "cut": ("#e67e22", "v", "cut short / ducked"),
    "state": ("#2471a3", "o", "state change"),
    "other": ("#7f7f7f", ".", "other"),
}
#: Outcome classes ("quiet" ones are drawn only as the voice bars they start and end) come from
#: the game registry; names no game lists fall back to :func:`outcome_class`'s word rules, then
#: to "other".
OUTCOMES: dict[str, set[str]] = {"quiet": set(), "cut": set(), "state": set(), "refused": set()}
"""Extra outcome names by class added with :func:`classify_outcomes` (each game's own come from its
registry record, :func:`audio.games.outcome_classes`)."""
_REFUSAL_WORDS = ("Refused", "Error", "Ignored", "Failed", "Missing", "Unknown", "Bad")


def classify_outcomes(**classes: Iterable[str]) -> None:
    """Add outcome names to classes: ``classify_outcomes(refused=["Busy"], state=["Alarm"])``."""
    for cls, names in classes.items():
        if cls not in OUTCOMES:
            raise ValueError(f"outcome class {cls!r} is not one of {sorted(OUTCOMES)}")
        for other in OUTCOMES.values():
            other.difference_update(names)
        OUTCOMES[cls].update(names)


def outcome_class(outcome: str) -> str | None:
    """``None`` for a quiet outcome, else ``"refused"``, ``"cut"``, ``"state"`` or ``"other"``.

    Listed names first (:data:`OUTCOMES`); then a name with a refusal word (``...Refused``,
    ``...Error``, ``...Ignored``, ``...Failed``, ``Missing...``, ``Unknown...``, ``Bad...``) or
    of the form ``No<X>``/``Not<X>`` is a refusal; anything else is "other".
    """
    from audio.games import outcome_classes

    for table in (OUTCOMES, outcome_classes()):  # explicit additions first, then the registry
        for cls in ("quiet", "cut", "state", "refused"):
            if outcome in table.get(cls, ()):
                return None if cls == "quiet" else cls
    if any(w in outcome for w in _REFUSAL_WORDS):
        return "refused"
    for prefix in ("No", "Not"):
        rest = outcome.removeprefix(prefix)
        if rest != outcome and rest[:1].isupper():
            return "refused"
    return "other"


_SLOT_COLOURS = ["#4C72B0", "#55A868", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C", "#DD8452", "#937860"]

# Geometry in inches (the y axis is in inches too, so lane heights are exact).
_FIG_W = 13.0
_RIGHT = 0.25
_BAR_H, _BAR_LANE = 0.20, 0.25
_MARK_LANE = 0.18
_ROW_PAD = 0.06
_BAR_FS, _MARK_FS, _ROW_FS = 6.5, 6.0, 8.0
_MARK_R = 0.05  # marker half-width (in)
_GAP = 0.04  # space kept between neighbouring labels (in)
MIN_WAIT = 0.1
"""Shortest wait in the queue drawn (s)."""


@dataclass
class _Item:
    t0: float  # s
    t1: float  # s (== t0 for a marker)
    label: str
    colour: str
    marker: str = ""  # "" = a voice bar
    slot: int | None = None  # a voice's stream slot
    wait_from: float | None = None  # s: when the line was queued, if it waited
    outcome: str = ""  # a marker's decision outcome
    text_x: float = 0.0  # s
    x0: float = 0.0  # occupied extent (s), label included
    x1: float = 0.0
    lane: int = 0


@dataclass
class _Row:
    system: str
    speaker: str  # "" = the system's own row
    label: str
    bars: list[_Item] = field(default_factory=list)
    marks: list[_Item] = field(default_factory=list)
    bar_lanes: int = 0
    mark_lanes: int = 0

    @property
    def height(self) -> float:
        return 2 * _ROW_PAD + max(self.bar_lanes * _BAR_LANE + self.mark_lanes * _MARK_LANE, _BAR_LANE)


def _speaker(d: Decision) -> tuple[str, str | None]:
    for k in _SPEAKER_KEYS:
        if k in d.detail:
            return k, str(d.detail[k])
    return "", None


def _split_tag(tag: str) -> tuple[str, str, str]:
    sep = ":" if ":" in tag else " "
    parts = tag.split(sep, 2)
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    return parts[0], parts[-1] if len(parts) > 1 else "", tag


def _natural(speaker: str) -> tuple[int, float, str]:
    try:
        return (1, float(speaker), "")
    except ValueError:
        return (2, 0.0, speaker.lower())


def _build_rows(decisions: list[Decision], voices: list[tuple[str, int, float, float]]) -> list[_Row]:
    """Rows keyed by (system, speaker), each holding its unplaced items."""
    rows: dict[tuple[str, str], _Row] = {}
    systems: list[str] = []

    def row(system: str, speaker: str, key: str = "") -> _Row:
        if system not in systems:
            systems.append(system)
        if (system, speaker) not in rows:
            label = (
                f"{system} (all)" if not speaker else f"{system} {key + ' ' if key == 'ped' else ''}{speaker}"
            )
            rows[(system, speaker)] = _Row(system, speaker, label)
        return rows[(system, speaker)]

    for d in decisions:
        system = d.system.split(".")[0]
        key, who = _speaker(d)
        cls = outcome_class(d.outcome)
        if who is None and cls in (None, "other"):  # a system's inner workings (script steps...)
            continue
        r = row(system, who or "", key)
        if cls is None:
            continue
        label = next((str(d.detail[k]) for k in _LABEL_KEYS if k in d.detail), "")
        if isinstance(d.detail.get("lines"), (list, tuple)) and d.detail["lines"]:  # who was ducked
            label = (label + " " if label else "") + ", ".join(map(str, d.detail["lines"]))
        colour, marker, _ = OUTCOME_CLASSES[cls]
        r.marks.append(_Item(d.t, d.t, f"{d.outcome} {label}".strip(), colour, marker, outcome=d.outcome))
    for tag, slot, t0, t1 in voices:
        system, who, what = _split_tag(tag)
        row(system, who).bars.append(_Item(t0, t1, what, _SLOT_COLOURS[slot % len(_SLOT_COLOURS)], slot=slot))
    _mark_waits(rows, decisions)
    order = sorted(
        rows.values(), key=lambda r: (systems.index(r.system), r.speaker != "", _natural(r.speaker))
    )
    return [r for r in order if r.bars or r.marks]


def _line_key(text: str) -> str:
    """A line's name without folders and extension, lower case (``ms_speech\\A.ut`` -> ``a``)."""
    return text.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()


def _mark_waits(rows: dict[tuple[str, str], _Row], decisions: list[Decision]) -> None:
    """Pair each ``Queued`` decision with the line that waited: the first bar of the same row
    and the same line (clip, message, file...) to start after it, unless a refusal or a cut of
    that line (``Expired``, ``Dropped``...) took it out of the queue first. A bar whose wait is
    at least :data:`MIN_WAIT` s gets ``wait_from``. A ``Queued`` naming no line pairs with the
    row's next bar."""
    timeline: dict[tuple[str, str], list[tuple[float, int, str, _Item | None]]] = {}
    for d in decisions:
        who = _speaker(d)[1]
        if who is None:
            continue
        key = (d.system.split(".")[0], who)
        label = next((str(d.detail[k]) for k in _LABEL_KEYS if k in d.detail), "")
        if d.outcome == "Queued":
            timeline.setdefault(key, []).append((d.t, 1, _line_key(label), None))
        elif label and outcome_class(d.outcome) in ("refused", "cut"):
            timeline.setdefault(key, []).append((d.t, 0, _line_key(label), None))
    for key, r in rows.items():
        events = timeline.get(key, []) + [(it.t0, 2, _line_key(it.label), it) for it in r.bars]
        waiting: list[tuple[float, str]] = []
        for t, kind, line, item in sorted(events, key=lambda e: (e[0], e[1])):
            if kind == 1:
                waiting.append((t, line))
                continue
            match = next((w for w in waiting if w[1] == line or (kind == 2 and not w[1])), None)
            if match is None:
                continue
            waiting.remove(match)
            if item is not None and t - match[0] >= MIN_WAIT:
                item.wait_from = match[0]


def _text_width_in(text: str, fontsize: float) -> float:
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, size=fontsize).get_extents().width / 72.0 * 1.08 + 0.02


def _place(items: list[_Item], s_per_in: float, fontsize: float, duration: float) -> int:
    """Set each item's label position and extent, pack into lanes; returns the lane count."""
    for it in items:
        w = _text_width_in(it.label, fontsize) * s_per_in
        if it.marker:
            start = it.t0 + _MARK_R * s_per_in
            lo = it.t0 - _MARK_R * s_per_in
        else:
            start = it.t0 + 0.02 * s_per_in
            lo = it.t0 if it.wait_from is None else it.wait_from
        if start + w > duration:  # no room on the right: label ends where the item starts
            start = max(lo - w - 0.02 * s_per_in, 0.0)
        it.text_x = start
        it.x0, it.x1 = min(lo, start), max(it.t1, start + w)
    ends: list[float] = []
    for it in sorted(items, key=lambda i: (i.x0, i.t0)):
        lane = next((k for k, e in enumerate(ends) if e + _GAP * s_per_in <= it.x0), len(ends))
        if lane == len(ends):
            ends.append(it.x1)
        ends[lane] = it.x1
        it.lane = lane
    return len(ends)


def _draw_row(ax, r: _Row, y: float) -> None:
    """Draw one row whose top edge is at ``y`` (inches from the top of the axes)."""
    top = y + _ROW_PAD
    for it in r.bars:
        yb = top + it.lane * _BAR_LANE + (_BAR_LANE - _BAR_H) / 2
        ax.broken_barh(
            [(it.t0, max(it.t1 - it.t0, 0.01))],
            (yb, _BAR_H),
            facecolors=it.colour,
            alpha=0.6,
            edgecolor=it.colour,
            linewidth=0.6,
        )
        ax.text(it.text_x, yb + _BAR_H / 2, it.label, fontsize=_BAR_FS, va="center", ha="left", gid="voice")
        if it.wait_from is not None:
            ax.plot(
                [it.wait_from, it.t0],
                [yb + _BAR_H / 2] * 2,
                color=it.colour,
                lw=1.0,
                ls=":",
                marker="|",
                markevery=[0],
                ms=5,
            )
    ym = top + r.bar_lanes * _BAR_LANE
    for it in r.marks:
        yc = ym + it.lane * _MARK_LANE + _MARK_LANE / 2
        ax.plot([it.t0], [yc], marker=it.marker, color=it.colour, ms=4, mew=1.2, ls="none")
        if not r.speaker:  # a system-wide decision: a guide over every row
            ax.axvline(it.t0, color=it.colour, lw=0.6, ls="--", alpha=0.5, zorder=0.5)
        ax.text(
            it.text_x,
            yc,
            it.label,
            fontsize=_MARK_FS,
            va="center",
            ha="left",
            color=it.colour,
            gid="decision",
        )


def _legend_handles(rows: list[_Row]) -> list:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    slots = sorted({it.slot for r in rows for it in r.bars if it.slot is not None})
    handles: list = [
        Patch(facecolor=_SLOT_COLOURS[s % len(_SLOT_COLOURS)], alpha=0.6, label=f"voice on slot {s}")
        for s in slots
    ]
    if any(it.wait_from is not None for r in rows for it in r.bars):
        handles.append(
            Line2D(
                [],
                [],
                color="#555",
                ls=":",
                marker="|",
                markevery=[0],
                label=f"waiting in the queue (>= {MIN_WAIT:g} s)",
            )
        )
    by_class: dict[str, set[str]] = {}
    for it in (it for r in rows for it in r.marks):
        by_class.setdefault(outcome_class(it.outcome) or "", set()).add(it.outcome)
    for cls, (colour, marker, text) in OUTCOME_CLASSES.items():
        if cls in by_class:
            names = sorted(by_class[cls])
            shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
            handles.append(
                Line2D([], [], marker=marker, color=colour, ls="none", mew=1.2, label=f"{text}: {shown}")
            )
    return handles


def _legend_columns(labels: list[str], width_in: float) -> int:
    """The most columns (at most 3) whose entries fit in ``width_in`` (matplotlib fills by column)."""
    widths = [_text_width_in(t, 7) + 0.55 for t in labels]
    for ncol in (3, 2):
        rows = -(-len(widths) // ncol)
        cols = [widths[c * rows : (c + 1) * rows] for c in range(ncol)]
        if len(widths) >= ncol and sum(max(c) for c in cols if c) <= width_in:
            return ncol
    return 1


def _title(decisions: list[Decision], width_in: float, heading: str = "") -> str:
    """``HEADING: decisions Started 14, ...`` with as many outcome counts as fit on one line
    (the heading, the scenario and seed, always shown)."""
    parts = [f"{k} {v}" for k, v in Counter(d.outcome for d in decisions).most_common()]
    text = f"{heading}: decisions " if heading else "decisions: "
    for k, p in enumerate(parts):
        more = f", ... {len(parts) - k} more" if k < len(parts) - 1 else ""
        cand = text + (", " if k else "") + p
        if _text_width_in(cand + more, 8.5) > width_in:
            return text + f", ... {len(parts) - k} more outcomes"
        text = cand
    return text


def timeline_figure(
    decisions: Iterable[Decision],
    duration: float,
    voices: list[tuple[str, int, int, int | None]] | None = None,
    sample_rate: int = 48_000,
    title: str = "",
) -> Figure:
    """Build the timeline (a matplotlib Figure with an Agg canvas).

    ``voices`` are ``(tag, stream slot, start sample, end sample or None)``; ``duration`` in s;
    ``title`` names the run (scenario and seed) at the head of the title line.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    decisions = list(decisions)
    duration = max(float(duration), 1e-3)
    vs = [
        (tag, slot, start / sample_rate, (end if end is not None else duration * sample_rate) / sample_rate)
        for tag, slot, start, end in voices or []
    ]
    rows = _build_rows(decisions, vs)
    left = max([_text_width_in(r.label, _ROW_FS) for r in rows] + [0.5]) + 0.25
    aw = _FIG_W - left - _RIGHT
    s_per_in = duration / aw
    for r in rows:
        r.bar_lanes = _place(r.bars, s_per_in, _BAR_FS, duration)
        r.mark_lanes = _place(r.marks, s_per_in, _MARK_FS, duration)
    handles = _legend_handles(rows)
    ncol = _legend_columns([h.get_label() for h in handles], _FIG_W - left - _RIGHT)
    top = 0.4 + 0.2 * -(-len(handles) // ncol)
    bottom = 0.5
    ah = sum(r.height for r in rows) or 0.4
    height = top + ah + bottom
    fig = Figure(figsize=(_FIG_W, height))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((left / _FIG_W, bottom / height, aw / _FIG_W, ah / height))
    y = 0.0
    ticks = []
    for i, r in enumerate(rows):
        if i % 2:
            ax.axhspan(y, y + r.height, color="#f2f2f2", zorder=0, lw=0)
        _draw_row(ax, r, y)
        ticks.append(y + r.height / 2)
        y += r.height
    ax.set_ylim(ah, 0)
    ax.set_yticks(ticks, [r.label for r in rows], fontsize=_ROW_FS)
    ax.set_xlim(0, duration)
    ax.set_xlabel("time (s)")
    ax.grid(True, axis="x", alpha=0.3)
    if handles:
        fig.legend(
            handles=handles,
            loc="lower left",
            ncol=ncol,
            fontsize=7,
            frameon=False,
            bbox_to_anchor=(left / _FIG_W, (bottom + ah + 0.02) / height),
        )
    fig.text(0.1 / _FIG_W, 1 - 0.08 / height, _title(decisions, _FIG_W - 0.2, title), fontsize=8.5, va="top")
    return fig


def timeline_png(
    decisions: Iterable[Decision],
    path: str | Path,
    duration: float,
    voices: list[tuple[str, int, int, int | None]] | None = None,
    sample_rate: int = 48_000,
    title: str = "",
    fmt: str = "png",
) -> Path:
    """Write :func:`timeline_figure` as a picture (``fmt``: png, svg, pdf); returns its path."""
    fig = timeline_figure(decisions, duration, voices, sample_rate, title)
    path = Path(path)
    fig.savefig(path, dpi=110, format=fmt)
    return path
