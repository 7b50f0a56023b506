"""``stage\\UnitGroup_S<NN>.tbl``: the per-stage squadron roster (seed 003).

A squadron record holds ``Count`` member tuples of four positional fields
``(unit model, message set, n, identity)`` followed by five named fields (``Count``,
``SideID``, ``AIID``, ``FormationID``, ``DisableInterval``). One record, found by its
missing ``Count`` (not by position), is the ``Enumerate_Squadrons`` roster mapping record
keys to squadron ids. Two self-checks: ``len(fields) == Count * 4 + 5`` per squadron and
roster agreement.

Roster entries are read in either orientation: a field whose value is a number
(``0x659AFF47``) maps that key to the field's name; a field whose name is a number maps it
to the value; otherwise the field's tag is the key. Our writer stores
``name = squadron id, value = "0x<key>"`` (the disc's exact orientation is not public).
"""

from __future__ import annotations

from dataclasses import dataclass

from audio.core.errors import FormatError
from audio.games.sylpheed.formats.hashes import tag_hash
from audio.games.sylpheed.formats.table import Field, Record, Table, make_record, read_table, write_table

__all__ = ["Member", "Squadron", "UnitGroup", "read_unit_group", "write_unit_group", "parse_int"]

SQUADRON_FIELDS = ("Count", "SideID", "AIID", "FormationID", "DisableInterval")


def parse_int(text: str, where: str, what: str) -> int:
    """A table number (decimal or ``0x`` hex text) or a :class:`FormatError`."""
    try:
        return int(text.strip(), 0)
    except (ValueError, AttributeError):
        try:
            return int(text.strip(), 10)
        except (ValueError, AttributeError):
            raise FormatError(where, None, f"a number for {what}", text) from None


@dataclass(frozen=True)
class Member:
    """One member tuple: unit model, message set (crew), unit count ``n``, identity."""

    unit: str
    message_set: str
    n: int
    identity: str


@dataclass(frozen=True)
class Squadron:
    id: str
    key: int
    count: int
    side: str
    ai: str
    formation: str
    disable_interval: bool
    members: tuple[Member, ...]
    field_count: int

    @property
    def width_ok(self) -> bool:
        """Seed 003 self-check 1: ``len(fields) == Count * 4 + 5``."""
        return self.field_count == self.count * 4 + 5


@dataclass(frozen=True)
class UnitGroup:
    squadrons: tuple[Squadron, ...]
    roster_name: str
    roster: tuple[tuple[int, str], ...]  # (record key, squadron id) as the roster says

    def width_failures(self) -> list[str]:
        return [s.id for s in self.squadrons if not s.width_ok]

    def roster_failures(self) -> list[str]:
        """Seed 003 self-check 2: roster key -> id agrees with each record's own name."""
        by_key = {s.key: s.id for s in self.squadrons}
        bad = [f"0x{k:08X}->{sid}" for k, sid in self.roster if by_key.get(k) != sid]
        listed = {k for k, _ in self.roster}
        bad += [f"{s.id} not in roster" for s in self.squadrons if s.key not in listed]
        return bad

    def squadron(self, sid: str) -> Squadron | None:
        for s in self.squadrons:
            if s.id == sid:
                return s
        return None


def _roster_entry(f: Field) -> tuple[int, str]:
    name, value = f.name or "", f.value
    for num, text in ((value, name), (name, value)):
        try:
            return int(num, 0), text
        except ValueError:
            continue
    return f.tag, name or value


def _squadron(rec: Record, path: str) -> Squadron:
    where = f"{path}: record {rec.name!r}"
    named = rec.named
    missing = [k for k in SQUADRON_FIELDS if k not in named]
    if missing:
        raise FormatError(where, None, f"squadron fields {', '.join(missing)}")
    count = parse_int(named["Count"], where, "Count")
    pos = rec.positional
    if count < 0 or len(pos) < 4 * count:
        raise FormatError(where, None, f"{count} member tuples of 4 positional fields", len(pos))
    members = tuple(
        Member(pos[4 * i], pos[4 * i + 1], parse_int(pos[4 * i + 2], where, "member n"), pos[4 * i + 3])
        for i in range(count)
    )
    return Squadron(
        rec.name,
        rec.key,
        count,
        named["SideID"],
        named["AIID"],
        named["FormationID"],
        named["DisableInterval"] == "Yes",
        members,
        len(rec.fields),
    )


def read_unit_group(data: bytes, path: str = "UnitGroup.tbl") -> UnitGroup:
    """Parse a UnitGroup table; the roster is the one record without ``Count``."""
    table = read_table(data, path)
    rosters = [r for r in table.records if "Count" not in r.named]
    if len(rosters) != 1:
        raise FormatError(path, None, "exactly one roster record (a record without Count)", len(rosters))
    squads = tuple(_squadron(r, path) for r in table.records if r is not rosters[0])
    return UnitGroup(squads, rosters[0].name, tuple(_roster_entry(f) for f in rosters[0].fields))


def write_unit_group(
    squadrons: list[Squadron], roster_name: str = "Enumerate_Squadrons", roster_at: int | None = None
) -> bytes:
    """Write a UnitGroup table; the roster goes last unless ``roster_at`` is an index."""
    recs = []
    for s in squadrons:
        pos = [v for m in s.members for v in (m.unit, m.message_set, str(m.n), m.identity)]
        named = [
            ("Count", str(len(s.members))),
            ("SideID", s.side),
            ("AIID", s.ai),
            ("FormationID", s.formation),
            ("DisableInterval", "Yes" if s.disable_interval else "No"),
        ]
        recs.append(make_record(s.id, named, pos, key=s.key, positional_first=True))
    roster = Record(
        tag_hash(roster_name),
        roster_name,
        tuple(Field(tag_hash(s.id), s.id, f"0x{s.key:08X}") for s in squadrons),
    )
    recs.insert(len(recs) if roster_at is None else roster_at, roster)
    return write_table(Table(tuple(recs)))
