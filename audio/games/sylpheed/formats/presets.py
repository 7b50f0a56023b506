"""Chatter data in ``GP_MAIN_GAME_<L>.pak``: rule tables, message tables, crews (seed 000).

* ``message\\PresetMessage_<who>.tbl`` — event records with seven named fields
  (``EffectiveTime``, ``Interval``, ``Priority``, ``Probability``, ``MessageCount``,
  ``IntervalFluctuation``, ``Pattern``) then ``MessageCount`` positional pairs
  ``(message id, Yes|No)``, plus the ``Sperkers`` (sic) roster (speaker names as field
  names, empty values). Any record name is accepted as an event; the roster is the record
  without the seven fields.
* ``message\\PresetMessage_<who>_msg.tbl`` — a ``Generic`` count record plus ``Message_NNN``
  records with ``ID`` / ``PageCount`` and 9 positional fields per page.
* ``message\\UnitMessageSet_S<NN>.tbl`` — per crew: ``CrewCount``, ``PresetMessage_Phase1/2/3``.

These readers keep the disc's values (seconds, strings); :mod:`audio.games.sylpheed.chatter.rules` is the
game's loader that turns them into runtime rule objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from audio.core.errors import FormatError
from audio.games.sylpheed.formats.table import Table, make_record, read_table, write_table
from audio.games.sylpheed.formats.unitgroup import parse_int

__all__ = [
    "RULE_FIELDS",
    "PAGE_FIELDS",
    "EventRecord",
    "RuleTable",
    "MessagePage",
    "Message",
    "MessageTable",
    "Crew",
    "UnitMessageSet",
    "read_rule_table",
    "write_rule_table",
    "read_message_table",
    "write_message_table",
    "read_unit_message_set",
    "write_unit_message_set",
    "rule_table_path",
    "message_table_path",
]

RULE_FIELDS = (
    "EffectiveTime",
    "Interval",
    "Priority",
    "Probability",
    "MessageCount",
    "IntervalFluctuation",
    "Pattern",
)
PAGE_FIELDS = 9


def rule_table_path(name: str) -> str:
    """Inner pak path of a rule table named in a UnitMessageSet (``.tbl`` added if missing)."""
    base = name if name.lower().endswith(".tbl") else name + ".tbl"
    return base if "\\" in base else "message\\" + base


def message_table_path(name: str) -> str:
    """Inner pak path of the ``_msg`` companion of rule table ``name``."""
    path = rule_table_path(name)
    return path[:-4] + "_msg.tbl"


@dataclass(frozen=True)
class EventRecord:
    """One event record as on the disc (times in SECONDS, Pattern as text)."""

    event: str
    effective_time: int
    interval: int
    priority: int
    probability: int
    message_count: int
    interval_fluctuation: int
    pattern: str
    lines: tuple[tuple[str, bool], ...]  # (message id, Yes?)
    positional_count: int = -1  # -1: 2 * len(lines) (a written record)

    @property
    def pairs_ok(self) -> bool:
        """``MessageCount * 2 == positional field count`` (9 216 / 9 216 on the disc)."""
        n = 2 * len(self.lines) if self.positional_count < 0 else self.positional_count
        return self.message_count * 2 == n


@dataclass(frozen=True)
class RuleTable:
    name: str
    events: tuple[EventRecord, ...]
    speakers: tuple[str, ...]
    roster_name: str = "Sperkers"

    def event(self, name: str) -> EventRecord | None:
        for e in self.events:
            if e.event == name:
                return e
        return None

    def pair_failures(self) -> list[str]:
        return [e.event for e in self.events if not e.pairs_ok]


def read_rule_table(data: bytes, path: str = "PresetMessage.tbl") -> RuleTable:
    """Parse a rule table; raises :class:`FormatError` on a bad number or a short pair list."""
    table = read_table(data, path)
    events: list[EventRecord] = []
    speakers: tuple[str, ...] = ()
    roster_name = "Sperkers"
    for rec in table.records:
        named = rec.named
        if not any(k in named for k in RULE_FIELDS):
            roster_name = rec.name
            speakers = tuple(f.name or f.value for f in rec.fields)
            continue
        where = f"{path}: record {rec.name!r}"
        missing = [k for k in RULE_FIELDS if k not in named]
        if missing:
            raise FormatError(where, None, f"rule fields {', '.join(missing)}")
        nums = {k: parse_int(named[k], where, k) for k in RULE_FIELDS if k != "Pattern"}
        pos = rec.positional
        lines = tuple((pos[i], pos[i + 1] == "Yes") for i in range(0, len(pos) - 1, 2))
        events.append(
            EventRecord(
                rec.name,
                nums["EffectiveTime"],
                nums["Interval"],
                nums["Priority"],
                nums["Probability"],
                nums["MessageCount"],
                nums["IntervalFluctuation"],
                named["Pattern"],
                lines,
                len(pos),
            )
        )
    name = path.replace("/", "\\").rsplit("\\", 1)[-1].removesuffix(".tbl").split("+")[-1]
    return RuleTable(name, tuple(events), speakers, roster_name)


def write_rule_table(rt: RuleTable) -> bytes:
    """Write a rule table: event records in order, then the speaker roster."""
    recs = []
    for e in rt.events:
        named = [
            ("EffectiveTime", e.effective_time),
            ("Interval", e.interval),
            ("Priority", e.priority),
            ("Probability", e.probability),
            ("MessageCount", e.message_count),
            ("IntervalFluctuation", e.interval_fluctuation),
            ("Pattern", e.pattern),
        ]
        pos = [v for mid, yes in e.lines for v in (mid, "Yes" if yes else "No")]
        recs.append(make_record(e.event, [(k, str(v)) for k, v in named], pos))
    recs.append(make_record(rt.roster_name, [(s, "") for s in rt.speakers]))
    return write_table(Table(tuple(recs)))


@dataclass(frozen=True)
class MessagePage:
    """One page: the 9 positional fields as stored."""

    fields: tuple[str, ...]

    @property
    def text(self) -> str:
        """The page's display text: its longest field (our reading; the meaning of each of
        the 9 page fields is not public, and text is the only long one)."""
        return max(self.fields, key=len, default="")


@dataclass(frozen=True)
class Message:
    record: str
    id: str
    pages: tuple[MessagePage, ...]
    positional_count: int = -1

    @property
    def pages_ok(self) -> bool:
        n = PAGE_FIELDS * len(self.pages) if self.positional_count < 0 else self.positional_count
        return n == PAGE_FIELDS * len(self.pages)


@dataclass(frozen=True)
class MessageTable:
    name: str
    generic: tuple[tuple[str, str], ...]
    messages: tuple[Message, ...]

    def by_id(self, message_id: str) -> Message | None:
        for m in self.messages:
            if m.id == message_id:
                return m
        return None


def read_message_table(data: bytes, path: str = "PresetMessage_msg.tbl") -> MessageTable:
    """Parse a ``_msg`` table (``Generic`` + ``Message_NNN`` records)."""
    table = read_table(data, path)
    generic: tuple[tuple[str, str], ...] = ()
    msgs: list[Message] = []
    for rec in table.records:
        named = rec.named
        if "ID" not in named:
            if rec.name == "Generic":
                generic = tuple((f.name or "", f.value) for f in rec.fields)
            continue
        where = f"{path}: record {rec.name!r}"
        pages = parse_int(named.get("PageCount", "0"), where, "PageCount")
        pos = rec.positional
        if pages < 0 or len(pos) < PAGE_FIELDS * pages:
            raise FormatError(where, None, f"{pages} pages of {PAGE_FIELDS} positional fields", len(pos))
        msgs.append(
            Message(
                rec.name,
                named["ID"],
                tuple(MessagePage(tuple(pos[PAGE_FIELDS * i : PAGE_FIELDS * (i + 1)])) for i in range(pages)),
                len(pos),
            )
        )
    name = path.replace("/", "\\").rsplit("\\", 1)[-1].removesuffix(".tbl").split("+")[-1]
    return MessageTable(name, generic, tuple(msgs))


def write_message_table(mt: MessageTable) -> bytes:
    """Write a ``_msg`` table; ``Generic`` gets ``Count`` unless ``generic`` is given."""
    generic = list(mt.generic) or [("Count", str(len(mt.messages)))]
    recs = [make_record("Generic", generic)]
    for m in mt.messages:
        pos: list[str] = []
        for p in m.pages:
            if len(p.fields) != PAGE_FIELDS:
                raise ValueError(f"{m.record}: a page has {len(p.fields)} fields, not {PAGE_FIELDS}")
            pos.extend(p.fields)
        recs.append(make_record(m.record, [("ID", str(m.id)), ("PageCount", str(len(m.pages)))], pos))
    return write_table(Table(tuple(recs)))


@dataclass(frozen=True)
class Crew:
    """A UnitMessageSet record: crew (message set) name, CrewCount, phase table names."""

    name: str
    crew_count: int
    phases: tuple[str, str, str]

    @property
    def tables(self) -> list[str]:
        """Non-empty phase table names in phase order."""
        return [p for p in self.phases if p]


@dataclass(frozen=True)
class UnitMessageSet:
    crews: tuple[Crew, ...]

    def crew(self, name: str) -> Crew | None:
        for c in self.crews:
            if c.name == name:
                return c
        return None


def read_unit_message_set(data: bytes, path: str = "UnitMessageSet.tbl") -> UnitMessageSet:
    table = read_table(data, path)
    crews = []
    for rec in table.records:
        named = rec.named
        if "CrewCount" not in named:
            continue
        where = f"{path}: record {rec.name!r}"
        p1, p2, p3 = (named.get(f"PresetMessage_Phase{i}", "") for i in (1, 2, 3))
        crews.append(Crew(rec.name, parse_int(named["CrewCount"], where, "CrewCount"), (p1, p2, p3)))
    return UnitMessageSet(tuple(crews))


def write_unit_message_set(ums: UnitMessageSet) -> bytes:
    recs = [
        make_record(
            c.name,
            [("CrewCount", str(c.crew_count))]
            + [(f"PresetMessage_Phase{i + 1}", p) for i, p in enumerate(c.phases)],
        )
        for c in ums.crews
    ]
    return write_table(Table(tuple(recs)))
