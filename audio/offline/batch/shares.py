"""What the game systems expect to play: expected shares, catalogues and event names.

After a run, the batch asks each game system three optional questions (a method on the
system wins; otherwise a provider here that reads the system's own tables):

``expected_shares(decisions) -> {(event, clip): expected plays}``
    For every line that started in the run, the probability that the line includes each
    clip, summed: the count the weights predict. Skate 3: a request's matching records
    (its words against the records' field values) share ``weight / sum(weights)``; this
    is exact for successive weighted draws when every record probability is 100 and mode
    0 (the demo data), nominal otherwise. Project Sylpheed: a rule's messages share
    ``1 / count`` (nominal: the one-shot masks of the moment are not logged).
``catalogue(decisions) -> {(event, clip)}``
    Every line the run's speakers could play (Skate: the clips of the spawned voices;
    Sylpheed: the messages of the loaded speakers' rules, as loaded at the end of the run).
``event_names() -> {event: name}``
    Display names of event ids (Skate: the ``.evt`` tables' names).

Events and clips are strings (``str(id)`` for numeric ids).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from audio.core.bus import Decision

__all__ = ["FLOW_OUTCOMES", "PLAY_OUTCOME", "VARIETY", "catalogue", "event_names", "expected_shares"]

Key = tuple[str, str]

PLAY_OUTCOME = "Started"
"""The outcome that marks a clip (or line) starting to play."""
FLOW_OUTCOMES = frozenset(
    {
        "Spawned",
        "Accepted",
        "Queued",
        "Started",
        "Finished",
        "Interrupted",
        "Cut",
        "Stopped",
        "PhoneRing",
        "CrewLoaded",
        "Phase",
        "Enabled",
        "Disabled",
        "Ducked",
        "OneShotSpent",
        "Cooldown",
    }
)
"""Outcomes that are not refusals: every other outcome counts as a refusal by its gate rule."""
VARIETY: dict[str, tuple[str, str]] = {
    "skate.speech": ("clip", "take"),
    "sylpheed.chatter": ("event", "clip"),
}
"""Per system, (what groups plays, what should vary inside a group) for take repeat rates:
Skate varies the take of a clip, Sylpheed the message of a speaker's event."""


# -- Skate 3 -------------------------------------------------------------------------------
def _skate_libs(system: Any) -> list[tuple[int, Any, Any]]:
    return [
        (ch, lib, system.sources.get(ch)) for ch, lib in sorted(system.libraries.items()) if lib is not None
    ]


def _skate_event_names(system: Any) -> dict[str, str]:
    return {str(e.id): e.name for _, lib, _ in _skate_libs(system) for e in lib.table.events}


def _skate_record_shares(lib: Any, ev: Any, words: Sequence[int]) -> list[tuple[int, float]]:
    """(record index, probability) of the record a request with ``words`` gets."""
    ok = [
        i
        for i, rec in enumerate(ev.records)
        if rec.mode != 3 and (rec.mode != 1 or lib.flagged_channel) and lib._matches(ev, rec.values, words)
    ]
    total = sum(ev.records[i].weight for i in ok)
    if total > 0:
        return [(i, ev.records[i].weight / total) for i in ok if ev.records[i].weight > 0]
    return [(ok[0], 1.0)] if ok else []


def _skate_expected(system: Any, decisions: Iterable[Decision]) -> dict[Key, float]:
    libs = _skate_libs(system)
    accepted: dict[tuple[Any, Any], Sequence[int]] = {}
    out: dict[Key, float] = defaultdict(float)
    for d in decisions:
        if d.system != system.name:
            continue
        det = d.detail
        if d.outcome == "Accepted":
            accepted[(det.get("ped"), det.get("event"))] = tuple(det.get("words") or ())
        elif d.outcome == PLAY_OUTCOME and det.get("clip_index", 0) == 0:
            words = accepted.get((det.get("ped"), det.get("event")))
            found = next(
                (
                    (lib, src, lib.event(int(det["event"])))
                    for _, lib, src in libs
                    if lib.event(int(det["event"])) is not None
                ),
                None,
            )
            if words is None or found is None or found[1] is None:
                continue
            lib, src, ev = found
            for i, p in _skate_record_shares(lib, ev, words):
                for c in ev.records[i].clips:
                    out[(str(ev.id), src.clip_name(c.clip_id))] += p
    return dict(out)


def _skate_catalogue(system: Any, decisions: Iterable[Decision]) -> set[Key]:
    speakers = {
        d.detail.get("speaker") for d in decisions if d.system == system.name and d.outcome == "Spawned"
    }
    out: set[Key] = set()
    for _, lib, src in _skate_libs(system):
        if src is None or not hasattr(src, "bank"):
            continue
        clips = src.bank.clips_by_hdr_id()
        for ev in lib.table.events:
            for rec in ev.records:
                for c in rec.clips:
                    clip = clips.get(c.clip_id)
                    if clip is not None and clip.voice_id in speakers:
                        out.add((str(ev.id), clip.name))
    return out


# -- Project Sylpheed ----------------------------------------------------------------------
def _sylpheed_rule(system: Any, speaker: str, event: str, phase: int) -> Any:
    maps = system.queue.speakers.get(speaker) if system.queue is not None else None
    rules = maps[(phase - 1) & 0xFF] if maps and (phase - 1) & 0xFF < len(maps) else None
    return rules.get(event) if rules else None


def _sylpheed_expected(system: Any, decisions: Iterable[Decision]) -> dict[Key, float]:
    phase = int(getattr(system, "_phase", 1))
    out: dict[Key, float] = defaultdict(float)
    for d in decisions:
        if d.system != system.name:
            continue
        if d.outcome == "Phase":
            phase = int(d.detail.get("phase", phase))
        elif d.outcome == PLAY_OUTCOME:
            rule = _sylpheed_rule(system, str(d.detail.get("speaker")), str(d.detail.get("event")), phase)
            if rule is None or not rule.messages:
                continue
            for m in rule.messages:
                out[(str(d.detail.get("event")), str(m))] += 1.0 / len(rule.messages)
    return dict(out)


def _sylpheed_catalogue(system: Any, decisions: Iterable[Decision]) -> set[Key]:
    out: set[Key] = set()
    if system.queue is None:
        return out
    for maps in system.queue.speakers.values():
        for rules in maps:
            for event, rule in (rules or {}).items():
                out.update((str(event), str(m)) for m in rule.messages)
    return out


_PROVIDERS: dict[str, dict[str, Callable[..., Any]]] = {
    "skate.speech": {
        "expected_shares": _skate_expected,
        "catalogue": _skate_catalogue,
        "event_names": _skate_event_names,
    },
    "sylpheed.chatter": {
        "expected_shares": _sylpheed_expected,
        "catalogue": _sylpheed_catalogue,
        "event_names": lambda s: {},
    },
}


def _ask(system: Any, what: str, *args: Any) -> Any:
    method = getattr(system, what, None)
    if callable(method):
        return method(*args)
    provider = _PROVIDERS.get(getattr(system, "name", ""), {}).get(what)
    return provider(system, *args) if provider is not None else None


def expected_shares(system: Any, decisions: Sequence[Decision]) -> Mapping[Key, float]:
    """Expected plays per (event, clip) of ``system`` in a run (empty if it cannot say)."""
    return _ask(system, "expected_shares", decisions) or {}


def catalogue(system: Any, decisions: Sequence[Decision]) -> set[Key]:
    """Every (event, clip) the run's speakers could play (empty if the system cannot say)."""
    return set(_ask(system, "catalogue", decisions) or ())


def event_names(system: Any) -> Mapping[str, str]:
    """Event id -> display name (empty if the system has none)."""
    return _ask(system, "event_names") or {}
