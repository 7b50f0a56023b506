"""A Project Sylpheed install on disk (the game's layout) as a table and line source.

``root/dat/GP_MAIN_GAME_<L>.pak`` (chatter tables, UnitGroup), ``root/dat/tables.pak``
(``eng\\sounds.tbl``), ``root/dat/sound.pak`` (one ``.slb`` per line). :class:`SylpheedInstall`
implements both :class:`TableSource` and :class:`LineSource`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, TypeVar, cast

import numpy as np

from audio.core.errors import FormatError, InputError
from audio.core.schema import did_you_mean
from audio.games.sylpheed.formats.cues import (
    SOUND_PAK,
    SOUNDS_PATH,
    CueReport,
    SoundsTable,
    bank_path,
    join_cues,
    read_sounds,
)
from audio.games.sylpheed.formats.hashes import name_hash
from audio.games.sylpheed.formats.pak import PakArchive, split_install_path
from audio.games.sylpheed.formats.presets import (
    MessageTable,
    RuleTable,
    UnitMessageSet,
    message_table_path,
    read_message_table,
    read_rule_table,
    read_unit_message_set,
    rule_table_path,
)
from audio.games.sylpheed.formats.slb import decode_slb
from audio.games.sylpheed.formats.table import read_table
from audio.games.sylpheed.formats.unitgroup import UnitGroup, read_unit_group

__all__ = ["LANG_PACKS", "LineSource", "SylpheedInstall", "TableSource", "stage_tag"]

_T = TypeVar("_T")

LANG_PACKS = {"eng": "E", "jpn": "J"}
"""Voice language -> GP_MAIN_GAME pack letter (E, J, D, F, S, I exist; voices are eng/jpn)."""


def _suggest(name: str, known: list[str]) -> str:
    """:func:`did_you_mean` with install paths' backslashes shown once (not as a repr)."""
    return did_you_mean(name, known).replace("\\\\", "\\")


def stage_tag(stage: str | int) -> str:
    """``2``, ``"02"``, ``"S02"`` -> ``"S02"``."""
    s = str(stage).strip().upper().removeprefix("S")
    if not s.isdigit():
        raise ValueError(f"a stage number like S02, got {stage!r}")
    return f"S{int(s):02d}"


class TableSource(Protocol):
    """Where the chatter system gets its tables."""

    def rule_table(self, name: str) -> RuleTable: ...

    def message_table(self, name: str) -> MessageTable | None: ...

    def unit_message_set(self, stage: str) -> UnitMessageSet: ...

    def unit_group(self, stage: str) -> UnitGroup: ...


class LineSource(Protocol):
    """Audio of a line: message id -> (mono float32 pcm in -1..1, ``sample_rate`` Hz), or None if missing."""

    def line(self, message_id: str) -> tuple[np.ndarray, int] | None: ...

    @property
    def line_errors(self) -> dict[str, str]:
        """Message id -> why its line could not be read (for the fault log)."""
        ...


class SylpheedInstall:
    """Read chatter tables and lines from an install ``root``.

    Parameters
    ----------
    root:
        Folder holding ``dat/``.
    lang:
        Voice language folder, ``"eng"`` or ``"jpn"``.
    pack:
        GP_MAIN_GAME pack letter (default from ``lang``).
    """

    def __init__(
        self, root: str | Path, lang: str = "eng", pack: str | None = None, cache_mb: float = 64.0
    ) -> None:
        self.root = Path(root)
        self.lang = lang
        self.pack = pack or LANG_PACKS.get(lang, "E")
        self._paks: dict[str, PakArchive] = {}
        self._rules: dict[str, RuleTable] = {}
        self._stage_tables: dict[str, object] = {}
        """Read-only stage tables already read (a batch worker's runs share the install)."""
        self._msgs: dict[str, MessageTable | None] = {}
        from audio.containers.cache import TakeCache

        self.lines = TakeCache(cache_mb)
        """Decoded lines, bounded in megabytes (LRU); lines that cannot play are in :attr:`line_errors`."""
        self._sounds: SoundsTable | None = None
        self.line_errors: dict[str, str] = {}

    # -- paks ------------------------------------------------------------------------------
    def pak(self, pak_path: str) -> PakArchive:
        """An archive by install path (``dat\\sound.pak``), opened once."""
        key = pak_path.lower()
        if key not in self._paks:
            self._paks[key] = PakArchive.open(self.root.joinpath(*pak_path.replace("\\", "/").split("/")))
        return self._paks[key]

    def paks(self) -> list[str]:
        """Install paths of the archives in ``root/dat`` (``dat\\sound.pak``...), sorted."""
        dat = self.root / "dat"
        if not dat.is_dir():
            raise InputError(f"{self.root}: not a Project Sylpheed install (no dat/ folder)")
        return sorted(f"dat\\{p.name}" for p in dat.iterdir() if p.suffix.lower() == ".pak" and p.is_file())

    def member_names(self) -> dict[str, dict[int, str]]:
        """Inner names the install's own tables give, by archive (lower-case install path) and entry id.

        Candidates: ``eng``/``jpn`` ``sounds.tbl``; every bank its FILES and SOUNDS records
        name; the stages' UnitMessageSet and UnitGroup tables and the rule and message tables
        the UnitMessageSets declare. A table that cannot be read names nothing.
        """
        cands: dict[str, set[str]] = {}

        def add(install_path: str) -> None:
            pak, inner = split_install_path(install_path)
            cands.setdefault(pak.lower(), set()).add(inner)

        for path in SOUNDS_PATH.values():
            add(path)
        for lang in SOUNDS_PATH:
            try:
                snd = SylpheedInstall(self.root, lang).sounds()
            except FormatError:
                continue
            for inner in snd.files.values():
                add(f"{SOUND_PAK}+{inner}")
            for cue in snd.cue_ids:
                add(f"{SOUND_PAK}+{bank_path(cue, lang)}")
        for n in range(1, 30):
            add(f"{self.game_pak}+message\\UnitMessageSet_S{n:02d}.tbl")
            add(f"{self.game_pak}+stage\\UnitGroup_S{n:02d}.tbl")
        try:
            for t in self.reachable_rule_tables():
                add(f"{self.game_pak}+{rule_table_path(t)}")
                add(f"{self.game_pak}+{message_table_path(t)}")
        except FormatError:
            pass
        return self._match(cands)

    def _match(self, cands: dict[str, set[str]]) -> dict[str, dict[int, str]]:
        out: dict[str, dict[int, str]] = {}
        for pak in self.paks():
            try:
                ids = {e.id for e in self.pak(pak).entries}
            except FormatError:
                continue
            names = {name_hash(inner): inner for inner in sorted(cands.get(pak.lower(), ()))}
            out[pak.lower()] = {i: n for i, n in names.items() if i in ids}
        return out

    def find_member(self, name: str) -> tuple[str, str]:
        """``(pak, inner)`` of an install member given as ``inner`` or ``pak+inner``
        (``/`` or ``\\``; case-insensitive); :class:`InputError` with a suggestion if absent."""
        name = name.replace("/", "\\")
        paks = self.paks()
        if "+" in name:
            pak, inner = split_install_path(name)
            match = [p for p in paks if p.lower() == pak.lower()]
            if not match:
                raise InputError(
                    f"{self.root}: no archive '{pak}' (have {', '.join(paks)})" + _suggest(pak, paks)
                )
            search = match
        else:
            inner, search = name, paks
        for pak in search:
            if inner in self.pak(pak):
                return pak, inner
        known = [n for names in self.member_names().values() for n in names.values()]
        raise InputError(f"{self.root}: no member '{inner}' in {', '.join(search)}" + _suggest(inner, known))

    @property
    def game_pak(self) -> str:
        return f"dat\\GP_MAIN_GAME_{self.pack}.pak"

    def read(self, install_path: str) -> bytes:
        """Bytes of ``pak+inner``."""
        pak, _, inner = install_path.partition("+")
        return self.pak(pak).read(inner)

    # -- tables ----------------------------------------------------------------------------
    def rule_table(self, name: str) -> RuleTable:
        if name not in self._rules:
            inner = rule_table_path(name)
            self._rules[name] = read_rule_table(
                self.pak(self.game_pak).read(inner), f"{self.game_pak}+{inner}"
            )
        return self._rules[name]

    def message_table(self, name: str) -> MessageTable | None:
        if name not in self._msgs:
            inner = message_table_path(name)
            arc = self.pak(self.game_pak)
            self._msgs[name] = (
                read_message_table(arc.read(inner), f"{self.game_pak}+{inner}") if inner in arc else None
            )
        return self._msgs[name]

    def unit_message_set(self, stage: str) -> UnitMessageSet:
        return self._stage_table(f"message\\UnitMessageSet_{stage_tag(stage)}.tbl", read_unit_message_set)

    def unit_group(self, stage: str) -> UnitGroup:
        return self._stage_table(f"stage\\UnitGroup_{stage_tag(stage)}.tbl", read_unit_group)

    def _stage_table(self, inner: str, read: Callable[[bytes, str], _T]) -> _T:
        """The game pak's table ``inner``, read once (a batch worker's runs share it)."""
        if inner not in self._stage_tables:
            self._stage_tables[inner] = read(self.pak(self.game_pak).read(inner), f"{self.game_pak}+{inner}")
        return cast(_T, self._stage_tables[inner])

    def stages(self) -> list[str]:
        """Stages S01..S29 that have a UnitMessageSet table in the game pak."""
        arc = self.pak(self.game_pak)
        return [f"S{n:02d}" for n in range(1, 30) if f"message\\UnitMessageSet_S{n:02d}.tbl" in arc]

    def reachable_rule_tables(self) -> list[str]:
        """Rule table names the UnitMessageSets declare (route 2 of seed 000), in first-seen order."""
        names: dict[str, None] = {}
        for st in self.stages():
            for crew in self.unit_message_set(st).crews:
                for t in crew.tables:
                    names.setdefault(t, None)
        return list(names)

    # -- cues and lines --------------------------------------------------------------------
    def sounds(self) -> SoundsTable:
        if self._sounds is None:
            path = SOUNDS_PATH.get(self.lang, SOUNDS_PATH["eng"])
            self._sounds = read_sounds(read_table(self.read(path), path))
        return self._sounds

    def cues(self, message_ids: Iterable[str]) -> CueReport:
        """The cue join for ``message_ids`` against this install's sound.pak."""
        bank_ids = frozenset(e.id for e in self.pak(SOUND_PAK).entries)
        return join_cues(message_ids, self.sounds(), bank_ids, self.lang)

    def line(self, message_id: str) -> tuple[np.ndarray, int] | None:
        """Decode a line's bank; None (with the reason in :attr:`line_errors`) if it cannot."""
        if message_id in self.line_errors:
            return None
        try:
            return self.lines.get_or_decode(message_id, lambda: self._decode_line(message_id))
        except FormatError as exc:
            self.line_errors[message_id] = str(exc)
            return None

    def _decode_line(self, message_id: str) -> tuple[np.ndarray, int]:
        res = self.cues([message_id]).results[message_id]
        if not res.ok:
            raise FormatError(SOUND_PAK, None, f"a recording for {message_id}", res.problem)
        pcm, sample_rate = decode_slb(self.pak(SOUND_PAK).read(res.path or ""), f"{SOUND_PAK}+{res.path}")
        return np.ascontiguousarray(pcm.mean(axis=1), dtype=np.float32), sample_rate
