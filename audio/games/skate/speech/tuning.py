"""Per-event speech tuning (retail ``tSpeechTuning``) and its TOML file format.

The game reads a 64-byte tuning record per event from its database; those values live in
the user's game and are not shipped. barkbus reads them from a TOML file of this layout
(the export format is ours; ``dump_tuning`` writes it, ``load_tuning`` reads it)::

    format = "barkbus-skate-tuning"
    version = 1

    [default]                 # every event without its own table inherits these
    gap = 0.0                 # +8  f32 s: any event, same speaker
    interrupt = false         # +13 u8
    interrupt_when_full = false  # +14 u8
    priority = 50             # +16 i32 (the player's priority; not the .evt priority)
    probability = 100.0       # +20 f32 percent
    repeat = 0.0              # +24 f32 s: same event, same speaker
    min_kmh = 0.0             # +32 f32 player speed window (0 = no bound)
    max_kmh = 0.0             # +36
    timer_a = 0.0             # +40 f32 s: needs timerA >= timer_a (0 = off)
    timer_b = 0.0             # +44 f32 s: needs timerB >= timer_b
    blocked_flags = []        # +49..+51: up to 3 game-flag ids (1..255) that block the event
    maincast_repeat_31 = 0.0  # +52 f32 s: main-cast repeat for speaker slot 31
    maincast_repeat_30 = 0.0  # +56 f32 s: main-cast repeat for speaker slot 30
    zombie_allowed = false    # +60 u8
    not_follow = []           # up to 10 [event, seconds] pairs
    challenge_exclude = []    # challenge types during which the event is refused

    [event.8210]              # one table per event id; only the keys that differ
    name = "501_warn"         # optional, informative
    repeat = 6.0

An event table inherits every key it does not set from ``[default]`` (which itself
defaults to the values above: everything 0 except priority 50 and probability 100).
The meaning of the three game-flag bytes is not traced; barkbus treats each as the id of
a game flag the host sets (:attr:`SpeechManager.game_flags`).
"""
from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import tomli_w

from audio.core.errors import FormatError

__all__ = ["EventTuning", "SpeechTuning", "load_tuning", "parse_tuning", "dump_tuning", "tuning_to_dict"]

FORMAT = "barkbus-skate-tuning"
VERSION = 1
MAX_NOT_FOLLOW = 10


@dataclass(frozen=True)
class EventTuning:
    """One event's tuning (seconds, percent, km/h). Field comments give the retail offsets."""

    gap: float = 0.0                        # +8
    interrupt: bool = False                 # +13
    interrupt_when_full: bool = False       # +14
    priority: int = 50                      # +16
    probability: float = 100.0              # +20
    repeat: float = 0.0                     # +24
    min_kmh: float = 0.0                    # +32
    max_kmh: float = 0.0                    # +36
    timer_a: float = 0.0                    # +40 (t40)
    timer_b: float = 0.0                    # +44 (t44)
    blocked_flags: tuple[int, ...] = ()     # +49..+51
    maincast_repeat_31: float = 0.0         # +52
    maincast_repeat_30: float = 0.0         # +56
    zombie_allowed: bool = False            # +60
    not_follow: tuple[tuple[int, float], ...] = ()
    challenge_exclude: tuple[int, ...] = ()


_FIELDS = {f.name: f for f in dataclasses.fields(EventTuning)}


@dataclass
class SpeechTuning:
    """The tuning of every event: ``default`` plus per-event records (already inherited)."""

    default: EventTuning = field(default_factory=EventTuning)
    events: dict[int, EventTuning] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)

    def for_event(self, event_id: int) -> EventTuning:
        """The event's own tuning, else ``default``."""
        return self.events.get(event_id, self.default)


def _err(path: str, where: str, expected: str, found: object = None) -> FormatError:
    return FormatError(path, None, f"{where}: {expected}", found)


def _number(path: str, where: str, v: Any, *, minimum: float | None = 0.0) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _err(path, where, "a finite number", v)
    if minimum is not None and v < minimum:
        raise _err(path, where, f"a number >= {minimum}", v)
    return float(v)


def _int(path: str, where: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _err(path, where, f"an integer in {lo}..{hi}", v)
    return v


def _bool(path: str, where: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise _err(path, where, "true or false", v)
    return v


def _list(path: str, where: str, v: Any, limit: int) -> list[Any]:
    if not isinstance(v, list):
        raise _err(path, where, "a list", v)
    if len(v) > limit:
        raise _err(path, where, f"at most {limit} entries", len(v))
    return v


def _convert(path: str, where: str, key: str, v: Any) -> Any:
    w = f"{where}.{key}"
    if key in ("interrupt", "interrupt_when_full", "zombie_allowed"):
        return _bool(path, w, v)
    if key == "priority":
        return _int(path, w, v, -(2 ** 31), 2 ** 31 - 1)
    if key == "probability":
        p = _number(path, w, v)
        if p > 100.0:
            raise _err(path, w, "a percentage 0..100", v)
        return p
    if key == "blocked_flags":
        return tuple(_int(path, f"{w}[{i}]", x, 1, 255) for i, x in enumerate(_list(path, w, v, 3)))
    if key == "challenge_exclude":
        return tuple(_int(path, f"{w}[{i}]", x, 0, 2 ** 31 - 1) for i, x in enumerate(_list(path, w, v, 64)))
    if key == "not_follow":
        pairs = []
        for i, pair in enumerate(_list(path, w, v, MAX_NOT_FOLLOW)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise _err(path, f"{w}[{i}]", "an [event, seconds] pair", pair)
            pairs.append((_int(path, f"{w}[{i}][0]", pair[0], 0, 0xFFFF), _number(path, f"{w}[{i}][1]", pair[1])))
        return tuple(pairs)
    return _number(path, w, v)


def _table(path: str, where: str, d: Any, base: EventTuning) -> tuple[EventTuning, str]:
    if not isinstance(d, dict):
        raise _err(path, where, "a table", d)
    values: dict[str, Any] = {}
    name = ""
    for key, v in d.items():
        if key == "name":
            if not isinstance(v, str):
                raise _err(path, f"{where}.name", "a string", v)
            name = v
        elif key in _FIELDS:
            values[key] = _convert(path, where, key, v)
        else:
            raise _err(path, where, f"a known key ({', '.join(['name', *_FIELDS])})", key)
    return dataclasses.replace(base, **values), name


def parse_tuning(doc: Mapping[str, Any], path: str = "<tuning>") -> SpeechTuning:
    """Build a :class:`SpeechTuning` from a parsed TOML document (see the module docstring)."""
    if doc.get("format") != FORMAT:
        raise _err(path, "format", f'"{FORMAT}"', doc.get("format"))
    if doc.get("version") != VERSION:
        raise _err(path, "version", str(VERSION), doc.get("version"))
    for key in doc:
        if key not in ("format", "version", "default", "event"):
            raise _err(path, "top level", "format, version, [default] or [event.<id>]", key)
    default, _ = _table(path, "default", doc.get("default", {}), EventTuning())
    tuning = SpeechTuning(default=default)
    events = doc.get("event", {})
    if not isinstance(events, dict):
        raise _err(path, "event", "tables [event.<id>]", events)
    for key, d in events.items():
        try:
            eid = int(key)
        except ValueError:
            raise _err(path, f"event.{key}", "a decimal event id", key) from None
        if not 0 <= eid <= 0xFFFF:
            raise _err(path, f"event.{key}", "an event id 0..65535", eid)
        tuning.events[eid], name = _table(path, f"event.{key}", d, default)
        if name:
            tuning.names[eid] = name
    return tuning


def load_tuning(path: str | Path) -> SpeechTuning:
    """Read a tuning TOML file; :class:`FormatError` names the file and the bad key."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(p, exc.start, "UTF-8 text", exc.reason) from None
    except OSError as exc:
        raise FormatError(p, None, "a readable tuning file", str(exc)) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(p, None, "valid TOML", str(exc)) from None
    return parse_tuning(doc, str(p))


def _toml_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_toml_value(x) for x in v]
    return v


def _diff(t: EventTuning, base: EventTuning | None) -> dict[str, Any]:
    """The fields of ``t`` that differ from ``base`` (all fields when ``base`` is None)."""
    return {name: _toml_value(getattr(t, name)) for name in _FIELDS
            if base is None or getattr(t, name) != getattr(base, name)}


def tuning_to_dict(tuning: SpeechTuning) -> dict[str, Any]:
    """The TOML document of ``tuning``: a full ``[default]``, event tables with what differs."""
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "default": _diff(tuning.default, None)}
    events: dict[str, Any] = {}
    for eid in sorted(tuning.events):
        d = _diff(tuning.events[eid], tuning.default)
        if eid in tuning.names:
            d = {"name": tuning.names[eid], **d}
        events[str(eid)] = d
    if events:
        doc["event"] = events
    return doc


def dump_tuning(tuning: SpeechTuning, path: str | Path | None = None) -> str:
    """Write ``tuning`` as TOML (to ``path`` if given); returns the text. ``load_tuning`` reads it back."""
    text = tomli_w.dumps(tuning_to_dict(tuning))
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
