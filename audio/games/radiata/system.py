"""The engine system that runs Radiata conversations and plays their voice clips.

:class:`RadiataTalkSystem` subscribes to ``radiata.talk`` / ``radiata.advance`` /
``radiata.choose``, runs :class:`~audio.games.radiata.talk.sequencer.TalkSequencer` on a frame
clock of ``TalkSettings.fps`` (default 60) and plays clips through the dry
``radiata_dialogue_voice`` graph. RMF files come from an install folder (names relative to it);
the voice table (``voices.toml`` there by default) maps ``(file, packet, sound_id)`` or
``(character_id, sound_id)`` to audio files, decoded once before playing
(:func:`decode_clip`: the codec layer's fallback chain, else soundfile). Outputs go on the bus:
``radiata.signal``, ``radiata.subtitle``, ``radiata.chosen``, ``radiata.talk_end``; decisions go
to ``radiata.talk`` (list in :mod:`audio.games.radiata.talk.sequencer`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from audio.core import memo
from audio.core.bus import Event, EventBus
from audio.core.errors import FormatError
from audio.core.faults import report_fault
from audio.core.loader import BadName, check_name, read_regular
from audio.core.outcomes import CUT, END, QUIET, REFUSED, START, STATE, Outcome
from audio.core.plugin import NEVER, GameSystem
from audio.core.schema import did_you_mean
from audio.core.voices import Voice
from audio.games.radiata.events import Advance, Choose, Talk
from audio.games.radiata.formats.rmf import PacketScript, RmfFile, VoiceClip, read_rmf
from audio.games.radiata.formats.voicetable import VoiceEntry, VoiceTable
from audio.games.radiata.talk.sequencer import Conversation, TalkSequencer
from audio.games.radiata.talk.settings import TalkSettings

__all__ = ["SYSTEM", "RadiataOutcome", "RadiataTalkSystem", "RmfSource", "decode_clip"]

SYSTEM = "radiata.talk"
MAX_RMF_BYTES = 64 << 20
"""Largest RMF file read (bytes; the game's largest is under 1 MB)."""


def decode_clip(path: Path) -> tuple[np.ndarray, int]:
    """A clip as mono float32 and its sample rate through the codec layer's fallback chain
    (:func:`audio.containers.fallback.decode_file`: soundfile, our codecs by signature, vgmstream);
    FormatError if nothing decodes it."""
    from audio.containers.fallback import decode_file

    try:
        pcm, sample_rate = decode_file(path)
    except FormatError:
        raise
    except Exception as exc:
        raise FormatError(path, None, "an audio file the codec layer decodes", str(exc)) from None
    pcm = np.asarray(pcm, np.float32)
    mono = pcm.mean(axis=1) if pcm.ndim == 2 else pcm.reshape(-1)
    return np.ascontiguousarray(mono, np.float32), int(sample_rate)


def _decoded(path: Path) -> tuple[np.ndarray, int] | FormatError:
    """:func:`decode_clip`, or the FormatError it raises."""
    try:
        return decode_clip(path)
    except FormatError as exc:
        return exc


class RmfSource:
    """RMF1 files by name (relative to ``root``, or given as bytes), each parsed once."""

    def __init__(
        self, root: Path | None = None, files: dict[str, bytes] | None = None, region: str = "auto"
    ) -> None:
        self.root, self.region = root, region
        self._raw = dict(files or {})
        self._parsed: dict[str, RmfFile] = {}
        self._scripts: dict[tuple[str, int], PacketScript] = {}

    def names(self) -> list[str]:
        """The ``.rmf`` files available (given ones, then the root's)."""
        found = (
            sorted(p.name for p in self.root.glob("*.rmf"))
            if self.root is not None and self.root.is_dir()
            else []
        )
        return list(dict.fromkeys([*self._raw, *found]))

    def _inside(self, path: Path) -> bool:
        assert self.root is not None
        try:
            real, root = path.resolve(), self.root.resolve()
        except (OSError, RuntimeError, ValueError):  # a symbolic-link loop, a bad name
            return False
        return real.is_relative_to(root)

    def file(self, name: str) -> RmfFile:
        """The parsed file ``name``: FormatError (or BadName) for a name that is not a regular
        RMF file inside the folder; a FIFO or a device is refused without being opened."""
        if name not in self._parsed:
            check_name(name, limit=1024)
            if name in self._raw:
                data = self._raw[name]
            elif self.root is not None:
                path = self.root / name
                if not self._inside(path):  # a name from OSC or a port stays in the install
                    raise FormatError(path, None, "a regular .rmf file inside the RMF folder", name[:120])
                try:
                    data = read_regular(path, limit=MAX_RMF_BYTES)
                except BadName as exc:
                    raise FormatError(
                        path, None, "a regular .rmf file inside the RMF folder", exc.reason
                    ) from None
                except OSError as exc:
                    raise FormatError(path, None, "a readable RMF1 file", exc.strerror or str(exc)) from None
            else:
                raise FormatError(name, None, "an RMF1 file known to the talk system")
            self._parsed[name] = read_rmf(data, name, self.region)
        return self._parsed[name]

    def script(self, name: str, packet: int) -> PacketScript:
        """Packet ``packet``'s script of file ``name``, read once (the talks only read it)."""
        key = (name, packet)
        got = self._scripts.get(key)
        if got is None:
            got = self._scripts[key] = self.file(name).script(packet)
        return got


class RadiataOutcome(Outcome):
    """Every decision the Radiata Stories talk system logs."""

    TalkQueued = "TalkQueued", QUIET
    TalkStarted = "TalkStarted", STATE
    TalkEnd = "TalkEnd", STATE
    TalkRefused = "TalkRefused", REFUSED
    TalkError = "TalkError", REFUSED
    Prologue = "Prologue", QUIET
    Message = "Message", QUIET
    Wait = "Wait", QUIET
    WaitDone = "WaitDone", QUIET
    Advanced = "Advanced", STATE
    AutoAdvanced = "AutoAdvanced", STATE
    AdvanceIgnored = "AdvanceIgnored", REFUSED
    RevealSkipped = "RevealSkipped", QUIET
    ProhibitSkip = "ProhibitSkip", STATE
    Jump = "Jump", QUIET
    Mouth = "Mouth", STATE
    Proper = "Proper", QUIET
    """A proper-noun record expanded through the voice table's ``[propers]``."""
    Trap = "Trap", REFUSED
    """An error-trap record in a packet script."""
    Dropped = "Dropped", REFUSED
    """A talk refused because the queue holds ``queue_size`` talks."""
    ChoiceOpen = "ChoiceOpen", STATE
    Chosen = "Chosen", STATE
    ChoiceRefused = "ChoiceRefused", REFUSED
    ChoiceTimeout = "ChoiceTimeout", REFUSED
    ChooseIgnored = "ChooseIgnored", REFUSED
    Signal = "Signal", STATE
    Started = "Started", START
    Finished = "Finished", END
    Replaced = "Replaced", CUT
    VoiceOff = "VoiceOff", QUIET
    """A clip of a message whose voice is off (the talk's voice flag)."""
    ChannelIgnored = "ChannelIgnored", QUIET
    """A clip on a channel the settings ignore."""
    NoClip = "NoClip", REFUSED


class RadiataTalkSystem(GameSystem):
    """The talk system (``frame_rate = settings.fps``).

    Parameters
    ----------
    rmf:
        Where RMF files come from.
    voices:
        The voice table (None: every clip is a NoClip, the timing is unchanged).
    settings:
        :class:`TalkSettings` (every unknown of the spec).
    graph:
        The voice graph clips play through.
    preload:
        Decode every clip of the table when built (no file I/O while rendering).
    """

    name = SYSTEM
    outcomes = RadiataOutcome

    def __init__(
        self,
        rmf: RmfSource,
        voices: VoiceTable | None = None,
        settings: TalkSettings | None = None,
        *,
        graph: str = "radiata_dialogue_voice",
        preload: bool = True,
    ) -> None:
        self.rmf, self.voices = rmf, voices
        self.settings = (settings or TalkSettings()).checked()
        self.frame_rate = self.settings.fps
        self.graph = graph
        self.engine: Any = None
        self._clips: dict[Path, tuple[np.ndarray, int] | FormatError] = {}
        self.seq = TalkSequencer(self.settings, self, self._decide, self.rmf.script)
        if preload and voices is not None:
            for e in voices.entries:
                self._clip(e)

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """``(field, problem)`` when ``event`` names an RMF file the install does not have (with
        the closest of its names); None otherwise."""
        if isinstance(event, Talk):
            names = self.rmf.names()
            if event.file not in names:
                return "file", f"no RMF file {event.file!r} in the install{did_you_mean(event.file, names)}"
        return None

    # -- the game contract ---------------------------------------------------------------------
    @property
    def graphs(self) -> tuple[str, ...]:
        """The voice graph its lines play through (loaded by :meth:`Engine.prepare`)."""
        return (self.graph,)

    def attach(self, engine: Any) -> None:
        self.engine = engine
        engine.bus.subscribe(self, [Talk, Advance, Choose])

    def tick(self, frame: int, engine: Any) -> None:
        self.seq.tick(frame)

    def next_tick(self, frame: int) -> int:
        """The frame the talk can next change (:meth:`TalkSequencer.next_change`)."""
        due = self.seq.next_change(frame)
        return NEVER if due is None else due

    def handle(self, event: Event, bus: EventBus) -> None:
        if isinstance(event, Talk):
            try:
                check_name(event.file, limit=1024)
            except BadName as exc:  # costs this request only (never the system)
                report_fault(bus, SYSTEM, "refused", str(exc), file=event.file[:200], packet=event.packet)
                return
            self.seq.talk(event)
        elif isinstance(event, Advance):
            self.seq.advance()
        elif isinstance(event, Choose):
            self.seq.choose(event.option)

    # -- queries ---------------------------------------------------------------------------------
    def talk_active(self) -> bool:
        """True from a ``radiata.talk`` until its ``radiata.talk_end``."""
        return self.seq.talk_active()

    def speaking(self, character: int | str) -> bool:
        """True while a lip-sync (0x1F) clip of ``character`` plays: a character id (raw, e.g.
        9901, or resolved), its decimal string, or its name in the voice table."""
        return any(self.seq.speaking(cid) for cid in self._ids(character))

    def is_speaking(self, speaker: Any) -> bool:
        """The port's speech query: :meth:`speaking` for a character id or name."""
        return self.speaking(speaker)

    def _ids(self, character: int | str) -> list[int]:
        if isinstance(character, int) and not isinstance(character, bool):
            return [character]
        s = str(character).strip()
        if s.isdigit():
            return [int(s)]
        names = self.voices.characters if self.voices is not None else {}
        return [cid for cid, n in names.items() if n.lower() == s.lower()]

    def snapshot(self) -> dict[str, list[str]]:
        """Panels for a live UI: the message (revealed text, state, wait) and the voices."""
        c = self.seq.conv
        if c is None:
            talk = [f"(no talk; {len(self.seq.queue)} queued)"]
        else:
            m = c.message
            total = m.visible_glyphs if m is not None else 0
            now = self.engine.frame_of(self)  # ticks are skipped while nothing changes
            text = self.seq.shown_at(now)
            shown = sum(1 for x in text if not x.isspace())
            wait = "" if c.until is None else f", {max(0, c.until - now)} frames left"
            talk = [
                (
                    f"{c.file} packet {c.packet} message {c.index + 1}/{len(c.script.messages)} "
                    f"{self.label(c.speaker_id)}: {c.state}{wait}"
                ),
                f"  {text!r} ({shown}/{total} glyphs)",
            ]
            if c.state == "choice" and m is not None and m.choice is not None:
                talk += [f"  [{i}] {o.text}" for i, o in enumerate(m.choice.options)]
        voices = [f"{k.label} {k.speaker}" + (" lip-sync" if k.lip_sync else "") for k in self.seq.clips]
        return {"talk": talk, "voices": voices or ["(none)"]}

    def summary(self, decisions: Any) -> str:
        """Per talk (``FILE:PACKET``): outcome counts of this system's decisions."""
        per: dict[str, Counter[str]] = {}
        talk = "-"
        for d in decisions:
            if d.system != SYSTEM:
                continue
            if "file" in d.detail and "packet" in d.detail:
                talk = f"{d.detail['file']}:{d.detail['packet']}"
            per.setdefault(talk, Counter())[d.outcome] += 1
        return "\n".join(
            f"  {k:<20s} " + ", ".join(f"{o} {n}" for o, n in c.most_common()) for k, c in per.items()
        )

    # -- Presenter -------------------------------------------------------------------------------
    def label(self, character_id: int | None) -> str:
        return (
            self.voices.name(character_id)
            if self.voices is not None
            else ("-" if character_id is None else f"chr{character_id}")
        )

    def plate_name(self, name_id: int) -> str:
        return self.voices.plate_name(name_id) if self.voices is not None else f"name{name_id}"

    def proper(self, payload_hex: str) -> str | None:
        return self.voices.proper(payload_hex) if self.voices is not None else None

    def _clip(self, e: VoiceEntry) -> tuple[np.ndarray, int] | FormatError:
        if e.audio not in self._clips:  # a batch worker keeps the decoded clips (read only)
            self._clips[e.audio] = memo.load("radiata.clip", e.audio, lambda: _decoded(e.audio))
        return self._clips[e.audio]

    def start_clip(self, talk: Conversation, clip: VoiceClip, speaker: tuple[int, ...]) -> Any | None:
        entry = (
            self.voices.lookup(talk.file, talk.packet, clip.sound_id, reversed(speaker))
            if self.voices is not None
            else None
        )
        if entry is None:
            self._decide(
                "NoClip", sound_id=clip.sound_id, file=talk.file, packet=talk.packet, characters=list(speaker)
            )
            return None
        got = self._clip(entry)
        if isinstance(got, FormatError):
            self._decide("NoClip", sound_id=clip.sound_id, file=talk.file, packet=talk.packet, error=str(got))
            return None
        pcm, sample_rate = got
        who = self.label(talk.speaker_id)
        return self.engine.voices.start(
            self.graph,
            pcm,
            sample_rate,
            params={"Gai0.gain": self.settings.voice_gain},
            tag=f"radiata:{who}:{entry.audio.stem}",
            meta={
                "speaker": who,
                "clip": entry.audio.name,
                "sound_id": clip.sound_id,
                "channel": clip.channel,
                "message": talk.index,
            },
        )

    def clip_playing(self, handle: Any) -> bool:
        return isinstance(handle, Voice) and handle.playing and not handle.stopped

    def stop_clip(self, handle: Any) -> None:
        self.engine.voices.stop(handle, fade=True)

    def post(self, event: Event) -> None:
        bus = self.engine.bus
        bus.post_now(_stamped(event, bus.now / bus.sample_rate))

    def _decide(self, outcome: str, **detail: Any) -> None:
        """Log ``outcome`` (a :class:`RadiataOutcome` name; the sequencer logs its codes by name)."""
        self.engine.bus.decide(SYSTEM, RadiataOutcome.named(outcome), **detail)


def _stamped(event: Event, t: float) -> Event:
    import dataclasses

    return dataclasses.replace(event, t=t)
