"""The run as the page sees it: every decision and finished voice bar, as JSON-ready dicts.

A :class:`History` is filled off the render thread (the page server's loop drains the
publisher's deques into it, or ``barkbus profile`` fills it from a capture or a log). It keeps
the whole run up to ``limit`` entries of each kind (then the oldest go, counted in
``dropped``), so the page can scroll back through it; each client reads it from its own cursor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from audio.core.bus import Decision, to_jsonable
from audio.live.profiler.snapshot import Bar

__all__ = ["LIMIT", "History", "decision_json", "speaker_of"]

LIMIT = 200_000
"""Decisions (and bars) kept for the page per run."""
SPEAKER_KEYS = ("ped", "speaker", "emitter", "crew")
LABEL_KEYS = ("clip", "message", "file", "event", "line", "phase")


def speaker_of(detail: dict[str, Any]) -> str:
    """The speaker a decision names (``ped``, ``speaker``, ``emitter`` or ``crew``), or ""."""
    for k in SPEAKER_KEYS:
        if detail.get(k) is not None:
            return str(detail[k])
    return ""


def finite(v: Any) -> Any:
    """``v`` with every NaN or infinite float replaced by None (the browser's JSON has neither)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def decision_json(i: int, d: Decision) -> dict[str, Any]:
    """A decision for the page: its index, time, system, outcome, outcome class and detail."""
    from audio.offline.timeline import outcome_class

    label = next((str(d.detail[k]) for k in LABEL_KEYS if d.detail.get(k) is not None), "")
    return {
        "i": i,
        "t": round(d.t, 4) if math.isfinite(d.t) else None,
        "system": d.system,
        "game": d.system.split(".")[0],
        "outcome": d.outcome,
        "cls": outcome_class(d.outcome) or "quiet",
        "speaker": speaker_of(d.detail),
        "label": label,
        "detail": finite(to_jsonable(d.detail)),
    }


@dataclass
class History:
    """Decisions and bars of one run, in arrival order, indexed from ``base_*`` on."""

    limit: int = LIMIT
    decisions: list[dict[str, Any]] = field(default_factory=list)
    bars: list[dict[str, Any]] = field(default_factory=list)
    base_decisions: int = 0
    base_bars: int = 0
    dropped: int = 0

    @property
    def n_decisions(self) -> int:
        """Decisions ever added (the next one's index)."""
        return self.base_decisions + len(self.decisions)

    @property
    def n_bars(self) -> int:
        return self.base_bars + len(self.bars)

    def add_decision(self, d: Decision) -> None:
        self.decisions.append(decision_json(self.n_decisions, d))
        if len(self.decisions) > self.limit:
            cut = len(self.decisions) - self.limit
            del self.decisions[:cut]
            self.base_decisions += cut
            self.dropped += cut

    def add_bar(self, bar: Bar | dict[str, Any]) -> None:
        self.bars.append(bar.to_json() if isinstance(bar, Bar) else bar)
        if len(self.bars) > self.limit:
            cut = len(self.bars) - self.limit
            del self.bars[:cut]
            self.base_bars += cut
            self.dropped += cut

    def decisions_from(self, cursor: int, most: int) -> tuple[list[dict[str, Any]], int]:
        """Up to ``most`` decisions from index ``cursor`` on, and the next cursor."""
        start = max(cursor, self.base_decisions) - self.base_decisions
        out = self.decisions[start : start + most]
        return out, self.base_decisions + start + len(out)

    def bars_from(self, cursor: int, most: int) -> tuple[list[dict[str, Any]], int]:
        start = max(cursor, self.base_bars) - self.base_bars
        out = self.bars[start : start + most]
        return out, self.base_bars + start + len(out)

    def drain(self, publisher: Any) -> None:
        """Move what ``publisher`` queued (decisions, finished bars) into the history."""
        q = publisher.decisions
        while q:
            self.add_decision(q.popleft())
        for bar in publisher.take_bars():
            self.add_bar(bar)
