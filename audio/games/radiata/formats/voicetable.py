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
from typing import Any

from audio.core.errors import FormatError

__all__ = ["VoiceEntry", "VoiceTable", "load_voicetable", "read_voicetable", "write_voicetable"]

_KEYS = {"file", "packet", "sound_id", "character_id", "audio"}


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


def _int(where: str, d: dict[str, Any], key: str, hi: int) -> int | None:
    if key not in d:
        return None
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
        raise FormatError(where, None, f"{key} an integer 0..{hi}", v)
    return v


def _entry(where: str, base: Path, d: Any, check_files: bool) -> VoiceEntry:
    if not isinstance(d, dict):
        raise FormatError(where, None, "a [[voice]] table", d)
    unknown = set(d) - _KEYS
    if unknown:
        raise FormatError(where, None, f"only the keys {sorted(_KEYS)}", sorted(unknown))
    sound = _int(where, d, "sound_id", 0xFFFF)
    packet, cid = _int(where, d, "packet", 0xFFFFFFFE), _int(where, d, "character_id", 0xFFFF)
    file = d.get("file")
    if sound is None:
        raise FormatError(where, None, "a sound_id")
    if file is not None and (not isinstance(file, str) or not file):
        raise FormatError(where, None, "file a non-empty string", file)
    line_key, chr_key = file is not None or packet is not None, cid is not None
    if line_key == chr_key or (line_key and (file is None or packet is None)):
        raise FormatError(where, None, "either file + packet + sound_id or character_id + sound_id")
    audio = d.get("audio")
    if not isinstance(audio, str) or not audio:
        raise FormatError(where, None, "audio = a path relative to the table", audio)
    path = Path(audio) if Path(audio).is_absolute() else base / audio
    if check_files and not path.is_file():
        raise FormatError(where, None, "an existing audio file", str(path))
    return VoiceEntry(sound, path, file, packet, cid)


def read_voicetable(text: str, path: str | Path = "<voicetable>", check_files: bool = True) -> VoiceTable:
    """Parse and validate a voice table (paths resolved against the table's folder)."""
    p = Path(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(p, None, "valid TOML", str(exc)) from None
    unknown = set(doc) - {"voice", "characters", "names", "propers"}
    if unknown:
        raise FormatError(
            p, None, "only [characters], [names], [propers] and [[voice]] tables", sorted(unknown)
        )
    chars = _id_table(p, doc, "characters", "character id")
    names = _id_table(p, doc, "names", "name id")
    propers_raw = doc.get("propers", {})
    if not isinstance(propers_raw, dict):
        raise FormatError(p, None, "[propers] a table of payload hex = text", propers_raw)
    propers: dict[str, str] = {}
    for k, v in propers_raw.items():
        if not (_is_hex_payload(k) and isinstance(v, str)):
            raise FormatError(p, None, "[propers] entries of payload hex (whole bytes) = text", (k, v))
        propers[k.lower()] = v
    rows = doc.get("voice", [])
    if not isinstance(rows, list):
        raise FormatError(p, None, "[[voice]] an array of tables", rows)
    entries, seen = [], set()
    for i, d in enumerate(rows):
        e = _entry(f"{p}: voice #{i + 1}", p.parent, d, check_files)
        if e.key in seen:
            raise FormatError(f"{p}: voice #{i + 1}", None, "one row per key", e.key)
        seen.add(e.key)
        entries.append(e)
    return VoiceTable(p, entries, chars, names, propers)


def _id_table(p: Path, doc: dict[str, Any], section: str, what: str) -> dict[int, str]:
    raw = doc.get(section, {})
    if not isinstance(raw, dict):
        raise FormatError(p, None, f"[{section}] a table of id = name", raw)
    out: dict[int, str] = {}
    for k, v in raw.items():
        if not (k.isdigit() and int(k) <= 0xFFFF and isinstance(v, str)):
            raise FormatError(p, None, f"[{section}] entries of {what} (0..65535) = name", (k, v))
        out[int(k)] = v
    return out


def _is_hex_payload(key: str) -> bool:
    try:
        return len(key) % 2 == 0 and len(bytes.fromhex(key)) == len(key) // 2
    except ValueError:
        return False


def load_voicetable(path: str | Path, check_files: bool = True) -> VoiceTable:
    """Read a voice table file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(p, None, "a readable UTF-8 voice table", str(exc)) from None
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
