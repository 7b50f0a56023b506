"""From message id to ``.slb`` bank: the cue join (``shared/specs/sylpheed-chatter.md`` section 4).

``MSG_<X>`` becomes the cue ``VOICE_<X>`` unless the id already carries ``VOICE_``
(``MSG_VOICE_D_443`` -> ``VOICE_D_443``). ``dat\\tables.pak+eng\\sounds.tbl`` record
``SOUNDS`` gives the cue's numeric id and ``FILES`` the bank path; both are read in either
key/value orientation. The bank is the ``dat\\sound.pak`` entry whose id is the name hash of
``<lang>\\Voice\\VOICE_<SPK>_<NNN>.slb`` (named speakers) or ``<lang>\\etc\\VOICE_<A|B|C|D>_<NNN>.slb``
(generic pilots). Unresolvable ids are counted and listed with the reason, never raised.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from audio.games.sylpheed.formats.hashes import name_hash
from audio.games.sylpheed.formats.table import Record, Table, make_record, write_table

__all__ = [
    "cue_name",
    "bank_path",
    "SoundsTable",
    "CueResult",
    "CueReport",
    "read_sounds",
    "write_sounds",
    "join_cues",
    "SOUNDS_PATH",
    "SOUND_PAK",
]

SOUNDS_PATH = {"eng": "dat\\tables.pak+eng\\sounds.tbl", "jpn": "dat\\tables.pak+jpn\\sounds.tbl"}
SOUND_PAK = "dat\\sound.pak"
_GENERIC = re.compile(r"^VOICE_([A-D])_(\d+)$")


def cue_name(message_id: str) -> str:
    """``MSG_BIRD_020`` -> ``VOICE_BIRD_020``; ``MSG_VOICE_D_443`` -> ``VOICE_D_443``."""
    rest = message_id[4:] if message_id.startswith("MSG_") else message_id
    return rest if rest.startswith("VOICE_") else "VOICE_" + rest


def bank_path(cue: str, lang: str = "eng") -> str:
    """The inner ``sound.pak`` path of a cue's bank (generic pilots A-D live in ``etc``)."""
    folder = "etc" if _GENERIC.match(cue) else "Voice"
    return f"{lang}\\{folder}\\{cue}.slb"


def _as_int(text: str) -> int | None:
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def _pairs(rec: Record | None) -> list[tuple[str, int]]:
    """(text, number) pairs of a record in either orientation; positional fields by index."""
    out: list[tuple[str, int]] = []
    if rec is None:
        return out
    index = 0
    for f in rec.fields:
        if f.name is None:
            out.append((f.value, index))
            index += 1
            continue
        v, n = _as_int(f.value), _as_int(f.name)
        if v is not None and n is None:
            out.append((f.name, v))
        elif n is not None:
            out.append((f.value, n))
    return out


@dataclass(frozen=True)
class SoundsTable:
    """``sounds.tbl`` read down to what the join needs."""

    cue_ids: dict[str, int]
    files: dict[int, str]
    version: str = ""


def read_sounds(table: Table) -> SoundsTable:
    """Index the ``SOUNDS`` and ``FILES`` records (either orientation)."""
    sounds = table.record("SOUNDS")
    version = sounds.get("SND_LIST_VERSION", "") if sounds else ""
    cues = {name: n for name, n in _pairs(sounds) if name != "SND_LIST_VERSION"}
    files = {n: path for path, n in _pairs(table.record("FILES"))}
    return SoundsTable(cues, files, version or "")


def write_sounds(
    cues: Iterable[tuple[str, int, str]], version: str = "0x060809", bank_se: str = "Static.slb"
) -> bytes:
    """Write a ``sounds.tbl``: ``cues`` are ``(cue name, numeric id, bank path)``.

    Our orientation: ``SOUNDS`` name = cue, value = id; ``FILES`` name = id, value = path.
    """
    cues = list(cues)
    recs = (
        make_record("PARAM", [("BANK_SE", bank_se)]),
        make_record("STAGES", []),
        make_record("FILES", [(str(n), path) for _, n, path in cues]),
        make_record("SOUNDS", [("SND_LIST_VERSION", version)] + [(c, str(n)) for c, n, _ in cues]),
    )
    return write_table(Table(recs))


@dataclass(frozen=True)
class CueResult:
    message_id: str
    cue: str
    sound_id: int | None
    path: str | None
    bank_id: int | None
    problem: str = ""  # "" when resolved

    @property
    def ok(self) -> bool:
        return not self.problem


@dataclass
class CueReport:
    results: dict[str, CueResult] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def resolved(self) -> int:
        return sum(r.ok for r in self.results.values())

    def unresolved(self) -> list[CueResult]:
        return [r for r in self.results.values() if not r.ok]

    def reasons(self) -> Counter[str]:
        return Counter(r.problem.split(":")[0] for r in self.unresolved())

    def summary(self) -> str:
        pct = 100.0 * self.resolved / self.total if self.total else 0.0
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.reasons().items()))
        return f"{self.resolved} of {self.total} message ids resolve ({pct:.1f} %)" + (
            f"; unresolved: {parts}" if parts else ""
        )


def join_cues(
    message_ids: Iterable[str], sounds: SoundsTable, bank_ids: set[int] | frozenset[int], lang: str = "eng"
) -> CueReport:
    """Resolve each distinct message id to its bank entry id in ``sound.pak``.

    ``bank_ids`` are the entry ids present in ``dat\\sound.pak``. The FILES path is used when
    the cue's id has one and it is in the pak; otherwise the path derived from the cue name.
    """
    rep = CueReport()
    for mid in message_ids:
        if mid in rep.results:
            continue
        cue = cue_name(mid)
        sid = sounds.cue_ids.get(cue)
        if sid is None:
            rep.results[mid] = CueResult(mid, cue, None, None, None, "no SOUNDS cue")
            continue
        cands = [p for p in (sounds.files.get(sid), bank_path(cue, lang)) if p]
        hit = next((p for p in cands if name_hash(p) in bank_ids), None)
        if hit is None:
            rep.results[mid] = CueResult(
                mid, cue, sid, cands[0], None, f"no sound.pak entry: {' / '.join(cands)}"
            )
        else:
            rep.results[mid] = CueResult(mid, cue, sid, hit, name_hash(hit))
    return rep
