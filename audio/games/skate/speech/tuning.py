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
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
import tomli_w
from msgspec import Meta

from audio.core.errors import FormatError
from audio.core.schema import Struct, convert

__all__ = ["EventTuning", "SpeechTuning", "load_tuning", "parse_tuning", "dump_tuning", "tuning_to_dict"]

FORMAT = "barkbus-skate-tuning"
VERSION = 1
MAX_NOT_FOLLOW = 10


@dataclass(frozen=True)
class EventTuning:
    """One event's tuning (seconds, percent, km/h). Field comments give the retail offsets."""

    gap: float = 0.0  # +8
    interrupt: bool = False  # +13
    interrupt_when_full: bool = False  # +14
    priority: int = 50  # +16
    probability: float = 100.0  # +20
    repeat: float = 0.0  # +24
    min_kmh: float = 0.0  # +32
    max_kmh: float = 0.0  # +36
    timer_a: float = 0.0  # +40 (t40)
    timer_b: float = 0.0  # +44 (t44)
    blocked_flags: tuple[int, ...] = ()  # +49..+51
    maincast_repeat_31: float = 0.0  # +52
    maincast_repeat_30: float = 0.0  # +56
    zombie_allowed: bool = False  # +60
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


NonNegative = Annotated[float, Meta(ge=0.0)]
EventId = Annotated[int, Meta(ge=0, le=0xFFFF)]


class TuningTable(Struct, kw_only=True):
    """``[default]`` or ``[event.<id>]``: every key optional (missing = inherited from ``default``)."""

    name: str | None = None
    gap: NonNegative | None = None
    interrupt: bool | None = None
    interrupt_when_full: bool | None = None
    priority: Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)] | None = None
    probability: Annotated[float, Meta(ge=0.0, le=100.0)] | None = None
    repeat: NonNegative | None = None
    min_kmh: NonNegative | None = None
    max_kmh: NonNegative | None = None
    timer_a: NonNegative | None = None
    timer_b: NonNegative | None = None
    blocked_flags: Annotated[tuple[Annotated[int, Meta(ge=1, le=255)], ...], Meta(max_length=3)] | None = None
    maincast_repeat_31: NonNegative | None = None
    maincast_repeat_30: NonNegative | None = None
    zombie_allowed: bool | None = None
    not_follow: Annotated[tuple[tuple[EventId, NonNegative], ...], Meta(max_length=MAX_NOT_FOLLOW)] | None = (
        None
    )
    challenge_exclude: (
        Annotated[tuple[Annotated[int, Meta(ge=0, le=2**31 - 1)], ...], Meta(max_length=64)] | None
    ) = None

    def over(self, base: EventTuning) -> EventTuning:
        """``base`` with this table's keys applied."""
        given = {
            k: getattr(self, k)
            for k in self.__struct_fields__
            if k != "name" and getattr(self, k) is not None
        }
        return dataclasses.replace(base, **given)


class TuningFile(Struct, kw_only=True):
    """A whole tuning file: the format header, ``[default]`` and ``[event.<id>]`` tables."""

    format: str
    version: int
    default: TuningTable = msgspec.field(default_factory=TuningTable)
    event: dict[str, dict[str, Any]] = {}


def _error(path: str, where: str, problem: str) -> FormatError:
    problem = problem.removeprefix("expected ")
    return FormatError(path, None, f"{problem} at {where}" if where else problem)


def parse_tuning(doc: Mapping[str, Any], path: str = "<tuning>") -> SpeechTuning:
    """Build a :class:`SpeechTuning` from a parsed TOML document (see the module docstring),
    validated by :mod:`audio.core.schema`."""
    if doc.get("format") != FORMAT:
        raise FormatError(path, None, f'format = "{FORMAT}"', doc.get("format"))
    if doc.get("version") != VERSION:
        raise FormatError(path, None, f"version = {VERSION}", doc.get("version"))
    f = convert(dict(doc), TuningFile, source=path, error=_error)
    default = f.default.over(EventTuning())
    tuning = SpeechTuning(default=default)
    for key, raw in f.event.items():
        if not key.isdigit():
            raise FormatError(path, None, f"a decimal event id at event.{key}", key)
        eid = int(key)
        if not 0 <= eid <= 0xFFFF:
            raise FormatError(path, None, f"an event id 0..65535 at event.{key}", eid)
        table = convert(raw, TuningTable, source=path, where=f"event.{key}", error=_error)
        tuning.events[eid] = table.over(default)
        if table.name:
            tuning.names[eid] = table.name
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
    except RecursionError:
        raise FormatError(p, None, "TOML nested at most a few levels deep", "nested too deeply") from None
    return parse_tuning(doc, str(p))


def _toml_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_toml_value(x) for x in v]
    return v


def _diff(t: EventTuning, base: EventTuning | None) -> dict[str, Any]:
    """The fields of ``t`` that differ from ``base`` (all fields when ``base`` is None)."""
    return {
        name: _toml_value(getattr(t, name))
        for name in _FIELDS
        if base is None or getattr(t, name) != getattr(base, name)
    }


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
