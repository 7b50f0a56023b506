"""``IDXD`` (CP932) and ``IXUD`` (UTF-16BE) tables: model, reader, writer, hash check.

Layout (big-endian, ``shared/specs/sylpheed-chatter.md`` section 2, seed 003)::

    +0   "IDXD" | "IXUD"
    +4   u32 S;  S x {u32 key, i32 name ptr, i32 first field, i32 end field}
         u32 K;  K x {u32 tag, i32 name ptr, i32 value ptr}
         u32 pool length (units: 1 byte IDXD, 2 bytes IXUD);  the string pool

Pointers count units from the pool base; -1 is "no string". A field with no name is
positional (a record's payload); named fields store their own name, so the table is
self-describing and :meth:`Table.hash_report` can check :func:`~audio.games.sylpheed.formats.hashes.tag_hash`
against it. All values are text.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from audio.core.binary import Reader
from audio.core.errors import FormatError
from audio.games.sylpheed.formats.hashes import tag_hash

__all__ = [
    "Field",
    "Record",
    "Table",
    "HashMismatch",
    "HashReport",
    "read_table",
    "write_table",
    "make_record",
]

NO_STRING = 0xFFFFFFFF


@dataclass(frozen=True)
class Field:
    """One field: ``name`` None means positional; ``tag`` is the stored key."""

    tag: int
    name: str | None
    value: str


@dataclass(frozen=True)
class Record:
    """A record (section): ``key`` as stored, its ``name`` and its fields in file order."""

    key: int
    name: str
    fields: tuple[Field, ...]

    @property
    def named(self) -> dict[str, str]:
        """Named fields, name -> value (the first occurrence of a name wins)."""
        out: dict[str, str] = {}
        for f in self.fields:
            if f.name is not None and f.name not in out:
                out[f.name] = f.value
        return out

    @property
    def positional(self) -> tuple[str, ...]:
        """The unnamed fields' values in order (the record's payload)."""
        return tuple(f.value for f in self.fields if f.name is None)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.named.get(name, default)


@dataclass(frozen=True)
class HashMismatch:
    """A stored key that is not ``tag_hash`` of the name stored beside it."""

    record: str
    field: str | None  # None: the record key itself
    stored: int
    computed: int


@dataclass(frozen=True)
class HashReport:
    """Outcome of checking stored keys against the names they sit next to."""

    named_fields: int
    field_mismatches: tuple[HashMismatch, ...]
    records: int
    record_mismatches: tuple[HashMismatch, ...]

    @property
    def fields_ok(self) -> bool:
        return not self.field_mismatches


@dataclass(frozen=True)
class Table:
    """A whole table; ``wide`` is True for IXUD (UTF-16BE)."""

    records: tuple[Record, ...]
    wide: bool = False
    path: str = field(default="<table>", compare=False)

    def record(self, name: str) -> Record | None:
        """The first record called ``name``."""
        for r in self.records:
            if r.name == name:
                return r
        return None

    def by_key(self, key: int) -> Record | None:
        for r in self.records:
            if r.key == key:
                return r
        return None

    def hash_report(self) -> HashReport:
        """Check ``tag_hash`` on every named field and on every record key.

        Field tags are expected to match (seed 003: 6960 / 6960 on the disc). Record keys
        legitimately differ for some tables (UnitGroup squadron keys are not the hash of
        the squadron id), so they are reported separately.
        """
        fm: list[HashMismatch] = []
        rm: list[HashMismatch] = []
        n = 0
        for r in self.records:
            want = tag_hash(r.name, self.wide)
            if r.key != want:
                rm.append(HashMismatch(r.name, None, r.key, want))
            for f in r.fields:
                if f.name is None:
                    continue
                n += 1
                want = tag_hash(f.name, self.wide)
                if f.tag != want:
                    fm.append(HashMismatch(r.name, f.name, f.tag, want))
        return HashReport(n, tuple(fm), len(self.records), tuple(rm))


def make_record(
    name: str,
    named: list[tuple[str, str]] | None = None,
    positional: list[str] | None = None,
    *,
    key: int | None = None,
    positional_first: bool = False,
    wide: bool = False,
) -> Record:
    """Build a record with hashed keys: named fields then positional ones (or the reverse)."""
    nf = [Field(tag_hash(k, wide), k, str(v)) for k, v in (named or [])]
    pf = [Field(0, None, str(v)) for v in (positional or [])]
    fields = pf + nf if positional_first else nf + pf
    return Record(tag_hash(name, wide) if key is None else key, name, tuple(fields))


class _Pool:
    def __init__(self, r: Reader, base: int, units: int, wide: bool) -> None:
        self.r, self.base, self.wide = r, base, wide
        self.unit = 2 if wide else 1
        self.size = units * self.unit
        self.data = bytes(r.data[base : base + self.size])
        self.cache: dict[int, str] = {}

    def string(self, ptr: int, where: int, what: str) -> str | None:
        if ptr == NO_STRING:
            return None
        if ptr in self.cache:
            return self.cache[ptr]
        start = ptr * self.unit
        if start >= self.size:
            raise FormatError(
                self.r.path,
                where,
                f"{what} pointer inside the string pool ({self.size // self.unit} units)",
                ptr,
            )
        if self.wide:
            end = start
            while True:
                end = self.data.find(b"\0\0", end)
                if end < 0 or (end - start) % 2 == 0:
                    break
                end += 1
        else:
            end = self.data.find(b"\0", start)
        if end < 0:
            raise FormatError(self.r.path, self.base + start, f"a NUL-terminated {what}")
        raw = self.data[start:end]
        try:
            s = raw.decode("utf-16-be" if self.wide else "cp932")
        except UnicodeDecodeError as exc:
            raise FormatError(
                self.r.path, self.base + start, f"{what} in {'UTF-16BE' if self.wide else 'CP932'}", str(exc)
            ) from None
        self.cache[ptr] = s
        return s


def read_table(data: bytes, path: str = "<table>") -> Table:
    """Parse an IDXD or IXUD table (raises :class:`FormatError` on bad input)."""
    r = Reader(data, path)
    magic = r.bytes(0, 4, "table magic")
    if magic not in (b"IDXD", b"IXUD"):
        raise FormatError(path, 0, "table magic 'IDXD' or 'IXUD'", magic)
    wide = magic == b"IXUD"
    s = r.count(8, r.u32(4, "record count"), 16, "records")
    k_off = 8 + 16 * s
    k = r.count(k_off + 4, r.u32(k_off, "field count"), 12, "fields")
    p_off = k_off + 4 + 12 * k
    units = r.u32(p_off, "string pool length")
    base = p_off + 4
    unit = 2 if wide else 1
    r.count(base, units, unit, "string pool units")
    pool = _Pool(r, base, units, wide)
    fields: list[Field] = []
    for i in range(k):
        off = k_off + 4 + 12 * i
        name = pool.string(r.u32(off + 4), off + 4, "field name")
        value = pool.string(r.u32(off + 8), off + 8, "field value")
        fields.append(Field(r.u32(off), name, value or ""))
    records: list[Record] = []
    for i in range(s):
        off = 8 + 16 * i
        lo, hi = r.i32(off + 8, "first field"), r.i32(off + 12, "end field")
        if not 0 <= lo <= hi <= k:
            raise FormatError(path, off + 8, f"a field range inside 0..{k}", (lo, hi))
        name = pool.string(r.u32(off + 4), off + 4, "record name") or ""
        records.append(Record(r.u32(off), name, tuple(fields[lo:hi])))
    return Table(tuple(records), wide, path)


def write_table(table: Table) -> bytes:
    """Serialise ``table`` (records' fields are stored contiguously, strings deduplicated)."""
    wide = table.wide
    pool = bytearray()
    where: dict[str, int] = {}
    unit = 2 if wide else 1

    def ptr(s: str | None) -> int:
        if s is None:
            return NO_STRING
        if s not in where:
            where[s] = len(pool) // unit
            pool.extend(s.encode("utf-16-be") + b"\0\0" if wide else s.encode("cp932") + b"\0")
        return where[s]

    recs = bytearray()
    flds = bytearray()
    nfields = 0
    rec_ptrs = [ptr(r.name) for r in table.records]
    for r, rp in zip(table.records, rec_ptrs):
        recs += struct.pack(">IIii", r.key & 0xFFFFFFFF, rp, nfields, nfields + len(r.fields))
        for f in r.fields:
            flds += struct.pack(">III", f.tag & 0xFFFFFFFF, ptr(f.name), ptr(f.value))
        nfields += len(r.fields)
    head = (b"IXUD" if wide else b"IDXD") + struct.pack(">I", len(table.records))
    return bytes(
        head + recs + struct.pack(">I", nfields) + flds + struct.pack(">I", len(pool) // unit) + pool
    )
