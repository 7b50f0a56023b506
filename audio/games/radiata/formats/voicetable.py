"""The voice table: which audio file a ``0F 28`` sound id plays (TOML, ours).

No public source maps the sound id to an archive or file [spec 7], so the id stays opaque and a
user-supplied table names the audio. Keys are tried in this order: ``(file, packet, sound_id)``
(one line of one packet), then ``(character_id, sound_id)`` (a character's bank). Paths are
relative to the table file. Any file the codec layer decodes works (PS-ADPCM ``.vag``, WAV, ...)::

    [characters]                 # optional: display names for character ids
    12 = "Jack"
    9901 = "party slot 1"

    [names]                      # optional: name plates a NameWindow's override name id shows
    40 = "Old man"

    [propers]                    # optional: what a Proper record's payload (hex) expands to
    "0a00000000000000000000000000" = "Radiata"

    [[voice]]
    file = "talk.rmf"            # the RMF file as radiata.talk names it
    packet = 0
    sound_id = 291
    audio = "voice/jack_hi.vag"

    [[voice]]
    character_id = 12
    sound_id = 7
    audio = "voice/jack_go.wav"
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from msgspec import Meta

from audio.core.errors import ScenarioError
from audio.core.schema import Struct, convert

__all__ = [
    "VoiceEntry",
    "VoiceRow",
    "VoiceTable",
    "VoiceTableFile",
    "load_voicetable",
    "read_voicetable",
    "write_voicetable",
]

CharacterId = Annotated[int, Meta(ge=0, le=0xFFFF)]
Text = Annotated[str, Meta(min_length=1, max_length=1024)]


class VoiceRow(Struct):
    """One ``[[voice]]`` row as written: a line key (file + packet) or a character key, and the
    audio path (relative to the table)."""

    sound_id: Annotated[int, Meta(ge=0, le=0xFFFF)]
    audio: Text
    file: Text | None = None
    packet: Annotated[int, Meta(ge=0, le=0xFFFFFFFE)] | None = None
    character_id: CharacterId | None = None


IdKey = Annotated[str, Meta(pattern=r"^[0-9]{1,5}$")]
"""A decimal id 0..65535 as a TOML key (the range is checked after conversion)."""
Label = Annotated[str, Meta(max_length=256)]


class VoiceTableFile(Struct):
    """A voice table file: ``[characters]`` and ``[names]`` (decimal id = display name),
    ``[propers]`` (payload hex, whole bytes = text) and ``[[voice]]`` rows."""

    characters: dict[IdKey, Label] = {}
    names: dict[IdKey, Label] = {}
    propers: dict[Annotated[str, Meta(pattern=r"^([0-9A-Fa-f]{2})+$", max_length=512)], Label] = {}
    voice: list[VoiceRow] = []


@dataclass(frozen=True)
class VoiceEntry:
    """One row: the key (file+packet or character) and the audio path (absolute once loaded)."""

    sound_id: int
    audio: Path
    file: str | None = None
    packet: int | None = None
    character_id: int | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        if self.file is not None:
            return ("line", _norm(self.file), self.packet, self.sound_id)
        return ("character", self.character_id, self.sound_id)


def _norm(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).as_posix().lower()


@dataclass
class VoiceTable:
    """The loaded table; :meth:`lookup` finds a clip's audio file."""

    path: Path | None = None
    entries: list[VoiceEntry] = field(default_factory=list)
    characters: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    propers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_key = {e.key: e for e in self.entries}
        self._by_base: dict[tuple[Any, ...], VoiceEntry] = {}
        for e in self.entries:
            if e.file is not None:
                self._by_base.setdefault(("line", PurePosixPath(_norm(e.file)).name, e.packet, e.sound_id), e)

    def lookup(
        self, file: str, packet: int, sound_id: int, characters: Iterable[int | None] = ()
    ) -> VoiceEntry | None:
        """The entry for a clip: by (file, packet, sound_id) (exact name, then the base name), then
        by (character_id, sound_id) for each id of ``characters`` in order; None if none."""
        name = _norm(file)
        e = self._by_key.get(("line", name, packet, sound_id))
        if e is None:
            e = self._by_base.get(("line", PurePosixPath(name).name, packet, sound_id))
        for cid in characters:
            if e is not None:
                break
            if cid is not None:
                e = self._by_key.get(("character", cid, sound_id))
        return e

    def name(self, character_id: int | None) -> str:
        """Display name of a character id (``chr<ID>`` when the table has none; ``-`` for None)."""
        if character_id is None:
            return "-"
        return self.characters.get(character_id, f"chr{character_id}")

    def plate_name(self, name_id: int) -> str:
        """The name plate of an override name id (``name<ID>`` when the table has none)."""
        return self.names.get(name_id, f"name{name_id}")

    def proper(self, payload_hex: str) -> str | None:
        """What a Proper payload expands to, or None (the game's own table is not known)."""
        return self.propers.get(payload_hex.lower())


def _entry(source: str, where: str, base: Path, row: VoiceRow, check_files: bool) -> VoiceEntry:
    line_key, chr_key = row.file is not None or row.packet is not None, row.character_id is not None
    if line_key == chr_key or (line_key and (row.file is None or row.packet is None)):
        raise ScenarioError(
            source, where, "expected either file + packet + sound_id or character_id + sound_id"
        )
    path = Path(row.audio) if Path(row.audio).is_absolute() else base / row.audio
    if check_files and not path.is_file():
        raise ScenarioError(source, f"{where}.audio", f"expected an existing audio file, found {str(path)!r}")
    return VoiceEntry(row.sound_id, path, row.file, row.packet, row.character_id)


def read_voicetable(text: str, path: str | Path = "<voicetable>", check_files: bool = True) -> VoiceTable:
    """Parse and validate a voice table (:class:`VoiceTableFile`; paths resolved against the
    table's folder). Errors are one :class:`ScenarioError` naming the path to the field."""
    p = Path(path)
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ScenarioError(str(p), None, f"expected valid TOML: {exc}") from None
    table = convert(doc, VoiceTableFile, source=str(p))
    chars = _id_table(str(p), table.characters, "characters")
    names = _id_table(str(p), table.names, "names")
    propers = {k.lower(): v for k, v in table.propers.items()}
    entries, seen = [], set()
    for i, row in enumerate(table.voice):
        e = _entry(str(p), f"voice[{i}]", p.parent, row, check_files)
        if e.key in seen:
            raise ScenarioError(str(p), f"voice[{i}]", f"one row per key: {e.key} is already in the table")
        seen.add(e.key)
        entries.append(e)
    return VoiceTable(p, entries, chars, names, propers)


def _id_table(source: str, raw: dict[str, str], section: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for k, v in raw.items():
        if int(k) > 0xFFFF:
            raise ScenarioError(source, f"{section}.{k}", "expected an id 0..65535")
        out[int(k)] = v
    return out


def load_voicetable(path: str | Path, check_files: bool = True) -> VoiceTable:
    """Read a voice table file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(str(p), None, f"expected a readable UTF-8 voice table ({exc})") from None
    return read_voicetable(text, p, check_files)


def write_voicetable(
    entries: Sequence[VoiceEntry],
    characters: dict[int, str] | None = None,
    base: Path | None = None,
    names: dict[int, str] | None = None,
    propers: dict[str, str] | None = None,
) -> str:
    """TOML text for ``entries`` (audio paths written relative to ``base`` when under it)."""
    import tomli_w

    rows = []
    for e in entries:
        audio = e.audio
        if base is not None:
            try:
                audio = e.audio.relative_to(base)
            except ValueError:
                pass
        row: dict[str, Any] = {}
        if e.file is not None:
            row.update(file=e.file, packet=e.packet)
        else:
            row["character_id"] = e.character_id
        row.update(sound_id=e.sound_id, audio=PurePosixPath(audio).as_posix())
        rows.append(row)
    doc: dict[str, Any] = {}
    if characters:
        doc["characters"] = {str(k): v for k, v in sorted(characters.items())}
    if names:
        doc["names"] = {str(k): v for k, v in sorted(names.items())}
    if propers:
        doc["propers"] = dict(sorted(propers.items()))
    doc["voice"] = rows
    return tomli_w.dumps(doc)
