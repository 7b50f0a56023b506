"""A Skate 3 install's speech banks: finding them, indexing them, and writing installs.

A bank ``<prefix>`` (``livingworld``, ``maincast``, ``announcer``) is
``data/audio/english/<prefix>speech.big`` holding the ``.dat`` clips, ``<prefix>_Events.evt`` and the
nested ``<prefix>hdr.big`` / ``<prefix>sth.big`` (one ``<clip>.hdr`` / ``<clip>.sth`` per clip, matched
by file stem). Indexing reads only the archive directories, the headers, the take rows and the event
table: no audio is touched until :meth:`SpeechBank.take_bytes` / :meth:`SpeechBank.decode_take`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from pathlib import Path

import numpy as np

from audio.core.errors import FormatError, InputError
from audio.core.schema import did_you_mean
from audio.games.skate.formats import BANK_PREFIXES
from audio.games.skate.formats.big import BigArchive, BigEntry, write_big
from audio.games.skate.formats.evt import EvtTable, parse_evt, write_evt
from audio.games.skate.formats.hdr import ClipHeader, parse_hdr, write_hdr
from audio.games.skate.formats.names import parse_clip_name
from audio.games.skate.formats.sth import Take, parse_sth, write_sth

__all__ = [
    "BANK_PREFIXES",
    "SPEECH_DIR",
    "Clip",
    "MissingEntry",
    "SpeechBank",
    "SkateInstall",
    "write_install",
    "bank_paths",
]

#: Where the banks live under the install root.
SPEECH_DIR = Path("data") / "audio" / "english"
#: Clip-name event excluded when deriving a voice's bits (497 Silence).
_SILENCE_EVENT = 497


def bank_paths(prefix: str) -> dict[str, str]:
    """The file names of bank ``prefix``: ``speech``, ``hdr``, ``sth``, ``evt``."""
    return {
        "speech": f"{prefix}speech.big",
        "hdr": f"{prefix}hdr.big",
        "sth": f"{prefix}sth.big",
        "evt": f"{prefix}_Events.evt",
    }


class MissingEntry(InputError, KeyError):
    """A clip, take or bank the install does not have (a ``KeyError`` too, for lookups).

    ``str()`` is the message itself (not KeyError's quoted repr)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Clip:
    """One indexed clip (``.dat``) of a bank."""

    name: str  # file stem, e.g. "501_59_busm1_Warn_n"
    event: int  # event number from the name (501)
    voice_id: int
    voice_name: str | None
    line: str
    hdr_id: int | None  # .hdr id (None when the clip has no .hdr)
    header: ClipHeader | None
    takes: tuple[Take, ...]  # () when the clip has no .sth
    entry: BigEntry  # the .dat entry in <prefix>speech.big

    @property
    def dat_size(self) -> int:
        """Bytes."""
        return self.entry.unpacked_size


class SpeechBank:
    """One speech bank of an install; the index is built on first use (:meth:`build_index`)."""

    def __init__(self, archive: BigArchive, prefix: str) -> None:
        self.archive = archive
        self.prefix = prefix
        self.files = bank_paths(prefix)
        self._problems: list[str] = []
        by_name: dict[str, BigEntry] = {}
        for e in archive.entries:
            by_name.setdefault(e.name.lower(), e)
        self._by_name = by_name  # lower-cased file name -> entry (first one wins)
        self._dat_cache: tuple[int, memoryview] | None = None

    @property
    def path(self) -> str:
        return self.archive.path

    def _find(self, key: str) -> BigEntry:
        name = self.files[key]
        if name.lower() not in self._by_name:
            raise FormatError(
                self.archive.path, None, f"an entry {name!r} in the bank archive", "no such entry"
            )
        return self._by_name[name.lower()]

    @cached_property
    def hdr_archive(self) -> BigArchive:
        """The nested ``<prefix>hdr.big`` (opened on first use, no temp file)."""
        return self.archive.open_nested(self._find("hdr"))

    @cached_property
    def sth_archive(self) -> BigArchive:
        """The nested ``<prefix>sth.big``."""
        return self.archive.open_nested(self._find("sth"))

    @cached_property
    def events(self) -> EvtTable:
        """The bank's ``<prefix>_Events.evt``."""
        e = self._find("evt")
        return parse_evt(self.archive.view(e), f"{self.archive.path}+{e.path}")

    # -- the index ----------------------------------------------------------------------------
    @cached_property
    def clips(self) -> list[Clip]:
        """Every ``.dat`` clip whose name parses, sorted by name."""
        return self.build_index()

    def build_index(self) -> list[Clip]:
        """Read the headers and take rows of every clip (no audio) and return the clips."""
        problems: list[str] = []
        self._problems = problems
        hdr_arc, sth_arc = self.hdr_archive, self.sth_archive
        hdrs = {e.stem: e for e in hdr_arc.entries if e.name.endswith(".hdr")}
        sths = {e.stem: e for e in sth_arc.entries if e.name.endswith(".sth")}
        clips = []
        for e in sorted(self.archive.entries, key=lambda x: x.name):
            parts = parse_clip_name(e.name)
            if parts is None:
                continue
            stem = e.stem
            header = None
            if stem in hdrs:
                he = hdrs[stem]
                header = parse_hdr(hdr_arc.view(he), f"{hdr_arc.path}+{he.path}")
            else:
                problems.append(f"{stem}: no .hdr")
            takes: tuple[Take, ...] = ()
            if stem in sths:
                se = sths[stem]
                takes = tuple(parse_sth(sth_arc.view(se), e.unpacked_size, f"{sth_arc.path}+{se.path}"))
            else:
                problems.append(f"{stem}: no .sth")
            if header is not None and takes and header.take_count != len(takes):
                problems.append(f"{stem}: .hdr says {header.take_count} takes, .sth has {len(takes)}")
            clips.append(
                Clip(
                    stem,
                    parts.event,
                    parts.voice_id,
                    parts.voice_name,
                    parts.line,
                    header.id if header else None,
                    header,
                    takes,
                    e,
                )
            )
        seen: dict[int, str] = {}
        for c in clips:
            if c.hdr_id is not None:
                if c.hdr_id in seen:
                    problems.append(f"{c.name}: .hdr id {c.hdr_id} also used by {seen[c.hdr_id]}")
                else:
                    seen[c.hdr_id] = c.name
        return clips

    @property
    def problems(self) -> list[str]:
        """Inconsistencies found while indexing (missing .hdr/.sth, take counts, shared ids)."""
        _ = self.clips
        return list(self._problems)

    @cached_property
    def _by_hdr(self) -> dict[int, Clip]:
        out: dict[int, Clip] = {}
        for c in self.clips:
            if c.hdr_id is not None:
                out.setdefault(c.hdr_id, c)
        return out

    def clips_by_hdr_id(self) -> dict[int, Clip]:
        """``.hdr`` id -> clip (the first clip by name when two share an id)."""
        return dict(self._by_hdr)

    @cached_property
    def headers(self) -> list[ClipHeader]:
        """The clip headers sorted by id (the library's header order)."""
        return sorted((c.header for c in self._by_hdr.values() if c.header is not None), key=lambda h: h.id)

    @cached_property
    def _by_name_clip(self) -> dict[str, Clip]:
        return {c.name: c for c in self.clips}

    def clip(self, name: str) -> Clip:
        """A clip by stem or ``.dat`` name."""
        stem = name[:-4] if name.endswith(".dat") else name
        try:
            return self._by_name_clip[stem]
        except KeyError:
            raise MissingEntry(
                f"no clip {stem!r} in {self.path}{did_you_mean(stem, self._by_name_clip)}"
            ) from None

    @property
    def take_count(self) -> int:
        return sum(len(c.takes) for c in self.clips)

    # -- audio ----------------------------------------------------------------------------------
    def _dat(self, clip: Clip) -> memoryview:
        if self._dat_cache is None or self._dat_cache[0] != clip.entry.index:
            self._dat_cache = (clip.entry.index, self.archive.view(clip.entry))
        return self._dat_cache[1]

    def take_bytes(self, clip: Clip | str, take_index: int) -> tuple[bytes, bytes]:
        """``(snr_header, sns_body)`` of one take (the ``.sth`` header and the ``.dat`` slice)."""
        c = self.clip(clip) if isinstance(clip, str) else clip
        if not 0 <= take_index < len(c.takes):
            raise MissingEntry(f"{c.name} has {len(c.takes)} takes, no take {take_index}")
        t = c.takes[take_index]
        return t.snr, bytes(self._dat(c)[t.offset : t.offset + t.size])

    def take_codecs(self) -> set[int]:
        """The SNR codec ids of the bank's takes (read from the ``.sth`` headers; no audio touched)."""
        return {t.codec for c in self.clips for t in c.takes}

    def decode_take(self, clip: Clip | str, take: int | Take) -> tuple[np.ndarray, int]:
        """Decode one take to ``(float32 mono samples in -1..1, sample_rate in Hz)``.

        Uses ``audio.containers.snr.decode_take`` (imported on first use; float32 for every
        codec); several channels are averaged.
        """
        from audio.containers.snr import decode_take as _decode

        c = self.clip(clip) if isinstance(clip, str) else clip
        k = take.index if isinstance(take, Take) else take
        head, body = self.take_bytes(c, k)
        samples, sample_rate = _decode(head, body, f"{self.path}+{c.entry.path}#take{k}")
        pcm = np.asarray(samples, np.float32)
        if pcm.ndim == 2:
            pcm = pcm[:, 0].copy() if pcm.shape[1] == 1 else pcm.mean(axis=1, dtype=np.float32)
        return pcm, int(sample_rate)

    # -- derived data ------------------------------------------------------------------------------
    @cached_property
    def _voice_bits(self) -> dict[int, tuple[int, int]]:
        by_hdr = self._by_hdr
        counts: dict[int, Counter[tuple[int, int]]] = {}
        for ev in self.events.events:
            try:
                kt, kv = ev.fields.index(1), ev.fields.index(2)
            except ValueError:
                continue
            for rec in ev.records:
                if max(kt, kv) >= len(rec.values):
                    continue
                pair = (rec.values[kt], rec.values[kv])
                if 0 in pair:
                    continue
                voices = {
                    by_hdr[c.clip_id].voice_id
                    for c in rec.clips
                    if c.clip_id in by_hdr and by_hdr[c.clip_id].event != _SILENCE_EVENT
                }
                for v in voices:
                    counts.setdefault(v, Counter())[pair] += 1
        # most records; ties -> the smallest pair, so the result does not depend on table order
        return {v: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for v, c in counts.items()}

    def voice_bits(self, voice_id: int) -> tuple[int, int] | None:
        """``(type bit, variant bit)`` of a voice: the pair most records naming its clips carry.

        Records of clips of event 497 (Silence) and pairs with a 0 ("any") value are not counted
        (a 0 names no voice); ties go to the numerically smallest pair. None if no record names
        the voice.
        """
        return self._voice_bits.get(voice_id)

    def voice_ids(self) -> list[int]:
        return sorted({c.voice_id for c in self.clips})


class SkateInstall:
    """The speech banks of a Skate 3 install (or a demo install in the same layout)."""

    def __init__(self, root: Path, banks: dict[str, SpeechBank]) -> None:
        self.root = root
        self.banks = banks

    @classmethod
    def open(cls, root: str | PathLike[str], prefixes: Sequence[str] = BANK_PREFIXES) -> SkateInstall:
        """Find ``data/audio/english/<prefix>speech.big`` under ``root`` and open the banks present.

        Raises FileNotFoundError if none is present (the living world is looked for first).
        """
        root = Path(root)
        folder = _find_ci(root, SPEECH_DIR.parts) or root / SPEECH_DIR
        banks = {}
        for prefix in prefixes:
            p = _find_ci(folder, (bank_paths(prefix)["speech"],))
            if p is not None and p.is_file():
                banks[prefix] = SpeechBank(BigArchive.open(p), prefix)
        if not banks:
            raise FileNotFoundError(
                f"no speech bank ({', '.join(bank_paths(p)['speech'] for p in prefixes)}) in {folder}"
            )
        return cls(root, banks)

    def bank(self, prefix: str = "livingworld") -> SpeechBank:
        try:
            return self.banks[prefix]
        except KeyError:
            raise MissingEntry(f"no {prefix!r} bank in {self.root} (have {sorted(self.banks)})") from None

    def close(self) -> None:
        for b in self.banks.values():
            for name in ("hdr_archive", "sth_archive"):
                if name in b.__dict__:
                    b.__dict__[name].close()
            b._dat_cache = None
            b.archive.close()

    def __enter__(self) -> SkateInstall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _find_ci(base: Path, parts: Sequence[str]) -> Path | None:
    """``base / parts`` matching each part exactly or, failing that, case-insensitively."""
    here = base
    for part in parts:
        exact = here / part
        if exact.exists():
            here = exact
            continue
        if not here.is_dir():
            return None
        match = next((c for c in sorted(here.iterdir()) if c.name.lower() == part.lower()), None)
        if match is None:
            return None
        here = match
    return here


ClipSpec = tuple[str, ClipHeader, Sequence[tuple[bytes, bytes]]]


def write_install(
    root: str | PathLike[str],
    bank_prefix: str,
    clips: Sequence[ClipSpec],
    evt: EvtTable,
    *,
    compression: str = "none",
    dat_compression: str = "none",
) -> Path:
    """Write bank ``bank_prefix`` of an install under ``root`` in the game's layout.

    Parameters
    ----------
    clips:
        ``(name, header, takes)``; ``name`` is the clip stem or ``.dat`` name, ``takes`` a list of
        ``(8-byte SNR header, SNS body)``. The ``.dat`` is the bodies back to back; the ``.sth`` rows
        hold each body's offset and header.
    evt:
        The bank's event table.
    compression:
        :data:`audio.games.skate.formats.big.COMPRESSIONS` name for the ``.hdr`` / ``.sth`` /
        ``.evt`` entries and the
        nested archives.
    dat_compression:
        The same for the ``.dat`` clips.

    Returns the path of ``<prefix>speech.big``.
    """
    names = bank_paths(bank_prefix)
    hdr_files, sth_files, dat_files = [], [], []
    for name, header, takes in clips:
        stem = name[:-4] if name.endswith(".dat") else name
        if parse_clip_name(stem + ".dat") is None:
            raise ValueError(f"{stem!r} is not a clip name <event>_<voice>[_<name>]_<line>")
        rows, body = [], bytearray()
        for snr, sns in takes:
            rows.append((len(body), bytes(snr)))
            body += sns
        dat_files.append((stem + ".dat", bytes(body), dat_compression))
        hdr_files.append((stem + ".hdr", write_hdr(header)))
        sth_files.append((stem + ".sth", write_sth(rows)))
    outer = dat_files + [
        (names["evt"], write_evt(evt), compression),
        (names["hdr"], write_big(hdr_files, compression=compression), compression),
        (names["sth"], write_big(sth_files, compression=compression), compression),
    ]
    folder = Path(root) / SPEECH_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / names["speech"]
    path.write_bytes(write_big(outer))
    return path
