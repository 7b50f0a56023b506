"""The talk sequencer: one conversation at a time, message by message, in game frames.

A ``radiata.talk`` opens packet P of file F: its prologue (leading Jumps) is logged, then each
message runs (spec 5, 8):

* frame 0 of a message runs the records before its first glyph (speaker, speed, the voice clip:
  a clip starts when the walk reaches its record); every later frame adds the speed to the
  typewriter budget and reveals the glyphs it pays for
  (:class:`~audio.games.radiata.talk.typewriter.Typewriter`);
  Signals post ``radiata.signal`` when the walk passes them, i.e. on the frame the glyph before
  them shows;
* a WaitTime blocks the walk: a timed box counts ``duration`` frames (from the record, or from
  the message start: ``wait_starts``); an infinite box, or a press-to-continue box, waits for
  ``radiata.advance`` (or closes by itself with auto-advance); a choice box waits for
  ``radiata.choose`` after its options reveal;
* when the walk ends the next message opens on the same frame; the packet's End (or its
  boundary) closes the talk and posts ``radiata.talk_end``.

Channels (spec 4.2, 5): 0x1F allocates a voice and binds it to the current speaker's lip-sync
(:meth:`TalkSequencer.speaking` is true while it plays); 0..15 name a slot, and a clip there
replaces (stops) the one playing in that slot; other channels follow ``other_channels``. A new
message never cuts the previous message's auto-channel clip (our choice: only a channel slot
says to), and the End leaves clips playing unless ``end_stops_voices``.

Decisions (system ``radiata.talk``): TalkQueued, TalkRefused, Dropped (queue full), TalkStarted,
TalkError, Prologue, Message, Proper, Started / Finished (clips; detail ``speaker`` only for
lip-sync clips, ``voice_of`` for the others), VoiceOff, ChannelIgnored, Replaced, NoClip, Signal,
Mouth, Trap, ProhibitSkip, Wait, Advanced, AutoAdvanced, WaitDone, RevealSkipped, AdvanceIgnored,
ChoiceOpen, Chosen, ChoiceTimeout, ChoiceRefused, ChooseIgnored, TalkEnd.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from audio.core.errors import BarkbusError
from audio.games.radiata.events import Chosen, SignalPosted, Subtitle, Talk, TalkEnd
from audio.games.radiata.formats.rmf import (
    ChoiceWait,
    Jump,
    Message,
    Mouth,
    PacketScript,
    ProhibitSkip,
    Proper,
    Signal,
    SpeakerSet,
    Step,
    Text,
    Trap,
    VoiceClip,
    Wait,
    text_of,
)
from audio.games.radiata.talk.settings import TalkSettings
from audio.games.radiata.talk.typewriter import Typewriter, reveal_frames

log = logging.getLogger("barkbus.radiata")

__all__ = ["Conversation", "Presenter", "TalkSequencer"]


class Presenter(Protocol):
    """What the sequencer needs from its host (the engine system, or a test fake)."""

    def start_clip(self, talk: Conversation, clip: VoiceClip, speaker: tuple[int, ...]) -> Any | None:
        """Start the audio of ``clip`` (None if there is none: the host logs NoClip)."""

    def clip_playing(self, handle: Any) -> bool: ...

    def stop_clip(self, handle: Any) -> None: ...

    def post(self, event: Any) -> None:
        """Post an output event now."""

    def label(self, character_id: int | None) -> str:
        """Display name of a character id."""

    def plate_name(self, name_id: int) -> str:
        """The name a NameWindow's override name id shows (the voice table's ``[names]``)."""

    def proper(self, payload_hex: str) -> str | None:
        """What a Proper payload expands to (the voice table's ``[propers]``), or None."""


@dataclass
class Conversation:
    """The running talk: its script, the open message and the walk's state."""

    file: str
    packet: int
    voice: bool
    auto_advance: bool
    script: PacketScript
    index: int = -1
    message: Message | None = None
    tw: Typewriter | None = None
    frame0: int = 0
    state: str = "reveal"
    """reveal | wait (timed) | press (advance) | choice."""
    until: int | None = None
    block_start: int = 0
    speaker: tuple[int, ...] = ()
    speaker_id: int | None = None
    bustup: int | None = None
    no_skip: bool = False
    shown: list[str] = field(default_factory=list)
    clips: list[Any] = field(default_factory=list)


@dataclass
class _Clip:
    handle: Any
    label: str
    speaker: str
    ids: tuple[int, ...]
    lip_sync: bool


class TalkSequencer:
    """Runs conversations on a frame clock (``tick(frame)``) for a :class:`Presenter`.

    ``load(file, packet)`` returns the packet's script (a BarkbusError refuses the talk);
    ``decide(outcome, **detail)`` logs a decision.
    """

    def __init__(
        self,
        settings: TalkSettings,
        presenter: Presenter,
        decide: Callable[..., Any],
        load: Callable[[str, int], PacketScript],
    ) -> None:
        self.settings, self.presenter, self.decide, self.load = settings, presenter, decide, load
        self.queue: deque[Talk] = deque()
        self.dropped = 0
        """Talks refused because the queue held ``settings.queue_size``."""
        self.conv: Conversation | None = None
        self.frame = 0
        self.channels: dict[int, Any] = {}
        self.clips: list[_Clip] = []
        self._advance = 0
        self._choose: int | None = None
        self.mouths: list[tuple[tuple[int, ...], int | None]] = []
        """Mouths animating without a clip: (character ids, last frame or None = while revealing)."""

    # -- inputs ------------------------------------------------------------------------------
    def talk(self, ev: Talk) -> None:
        """A ``radiata.talk``: begins at the next frame (``on_busy`` when one is running)."""
        if self.conv is not None or self.queue:
            mode = self.settings.on_busy
            if mode == "refuse":
                self.decide("TalkRefused", file=ev.file, packet=ev.packet, reason="busy")
                self.presenter.post(TalkEnd(file=ev.file, packet=ev.packet, reason="Refused"))
                return
            if mode == "replace":
                if self.conv is not None:
                    self._close("Replaced")
                self.queue.clear()
            elif len(self.queue) >= self.settings.queue_size:
                self.dropped += 1
                if self.dropped == 1:
                    log.warning("radiata talk queue holds %d talks; dropping more", self.settings.queue_size)
                self.decide(
                    "Dropped", file=ev.file, packet=ev.packet, reason=f"queue holds {len(self.queue)}"
                )
                self.presenter.post(TalkEnd(file=ev.file, packet=ev.packet, reason="Dropped"))
                return
            self.decide("TalkQueued", file=ev.file, packet=ev.packet, waiting=len(self.queue) + 1)
        self.queue.append(ev)

    def advance(self) -> None:
        """A ``radiata.advance`` press (handled at the next frame)."""
        self._advance += 1

    def choose(self, option: int) -> None:
        """A ``radiata.choose`` (handled at the next frame)."""
        self._choose = int(option)

    # -- queries -----------------------------------------------------------------------------
    def talk_active(self) -> bool:
        return self.conv is not None or bool(self.queue)

    def speaking(self, character_id: int) -> bool:
        """True while a lip-sync clip of ``character_id`` (raw or resolved id) plays, or while a
        Speak / SpeakingCycle record animates its mouth (``mouth_frames``)."""
        if any(ids and character_id in ids for ids, _ in self.mouths):
            return True
        return any(
            c.lip_sync and character_id in c.ids and self.presenter.clip_playing(c.handle) for c in self.clips
        )

    # -- the frame ---------------------------------------------------------------------------
    def next_change(self, frame: int) -> int | None:
        """The first frame, ``frame`` or later, whose :meth:`tick` changes anything when no input
        comes and no clip ends first; None when only those can.

        Every frame while a talk waits to open, an input waits for its frame, a clip has ended
        (its ``Finished``) or the typewriter reveals; else the frame a timed wait, a choice's
        time limit, an auto-advance or auto-choice, or a mouth's ``mouth_frames`` runs out."""
        if self.queue or self._advance or self._choose is not None:
            return frame
        if any(not self.presenter.clip_playing(k.handle) for k in self.clips):
            return frame
        due = [until for _, until in self.mouths if until is not None]
        c = self.conv
        if c is not None:
            auto = c.block_start + self.settings.auto_advance_frames
            if c.state == "reveal":  # frames that only show more text are skipped (_catch_up)
                assert c.tw is not None
                quiet = sum(1 for _ in c.tw.text_ahead())
                return max(frame, self.frame + 1 + quiet)
            if c.state == "wait" and c.until is not None:
                due.append(c.until)
            elif c.state == "press":
                if c.auto_advance:
                    if not self._own_clip_playing(c):  # else its clip's end asks again
                        due.append(c.until if c.until is not None else auto)
                elif c.until is not None and not self.settings.cursor_waits_for_press:
                    due.append(c.until)
            elif c.state == "choice":
                if c.until is not None:
                    due.append(c.until)
                if c.auto_advance and self.settings.auto_choose is not None:
                    due.append(auto)
        return max(min(due), frame) if due else None

    def tick(self, frame: int) -> None:
        self._catch_up(frame)
        self.frame = frame
        self._reap()
        self.mouths = [(ids, until) for ids, until in self.mouths if until is None or until > frame]
        adv, self._advance = self._advance, 0
        choice, self._choose = self._choose, None
        opening = self.conv is None and bool(self.queue)
        if opening:
            self._begin(self.queue.popleft())
        c = self.conv
        if c is None or opening:
            if adv:
                self.decide("AdvanceIgnored", state="talk opening" if opening else "no talk")
            if choice is not None:
                self.decide("ChooseIgnored", option=choice, state="talk opening" if opening else "no talk")
            return
        if c.state == "reveal":
            self._reveal_frame(c, adv)
        elif c.state == "wait":
            self._timed(c, adv)
        elif c.state == "press":
            self._press(c, adv)
        elif c.state == "choice":
            self._choice(c, choice)
            choice = None
        if choice is not None:
            self.decide("ChooseIgnored", option=choice, state=c.state)

    def _catch_up(self, frame: int) -> None:
        """Run the frames after the last tick and before ``frame`` that were skipped
        (:meth:`next_change`): while a message reveals, each only showed more text."""
        c = self.conv
        if c is None or c.state != "reveal" or c.tw is None:
            return
        for _ in range(frame - self.frame - 1):
            steps = c.tw.run(first=False)
            assert all(isinstance(s, Text) for s in steps) and not c.tw.done, "a skipped frame acted"
            c.shown.extend(s.char for s in steps if isinstance(s, Text))

    def shown_at(self, frame: int) -> str:
        """The open message's text shown at ``frame`` (the ticks skipped since the last
        included), without running anything."""
        c = self.conv
        if c is None:
            return ""
        shown = list(c.shown)
        if c.state == "reveal" and c.tw is not None:
            for _, steps in zip(range(frame - self.frame), c.tw.text_ahead()):
                shown.extend(s.char for s in steps)
        return "".join(shown)

    def _reveal_frame(self, c: Conversation, adv: int) -> None:
        assert c.tw is not None
        if adv and self.settings.advance_skips_reveal and not c.no_skip:
            self.decide("RevealSkipped", speaker=self._who(c), message=c.index)
            self._execute(c, c.tw.finish())
            self._walk(None)
            return
        if adv:
            self.decide("AdvanceIgnored", state="reveal", prohibited=c.no_skip)
        self._walk(False)

    def _timed(self, c: Conversation, adv: int) -> None:
        if adv:
            self.decide("AdvanceIgnored", state="timed wait")
        if c.until is not None and self.frame >= c.until:
            self.decide("WaitDone", speaker=self._who(c), message=c.index)
            self._resume(c)

    def _press(self, c: Conversation, adv: int) -> None:
        if adv:
            self.decide("Advanced", speaker=self._who(c), message=c.index, waited=self.frame - c.block_start)
            self._resume(c)
            return
        if not c.auto_advance:
            if c.until is not None and not self.settings.cursor_waits_for_press and self.frame >= c.until:
                self.decide("WaitDone", speaker=self._who(c), message=c.index)
                self._resume(c)
            return
        due = c.until if c.until is not None else c.block_start + self.settings.auto_advance_frames
        if self.frame >= due and not self._own_clip_playing(c):
            self.decide(
                "AutoAdvanced", speaker=self._who(c), message=c.index, waited=self.frame - c.block_start
            )
            self._resume(c)

    def _choice(self, c: Conversation, choice: int | None) -> None:
        assert c.tw is not None and isinstance(c.tw.blocked, ChoiceWait)
        box = c.tw.blocked.choice
        n = len(box.options)
        timeout = False
        if choice is None and c.until is not None and self.frame >= c.until:
            choice, timeout = self.settings.choice_timeout_option, True
            self.decide("ChoiceTimeout", option=choice, limit=box.time_limit)
        if (
            choice is None
            and c.auto_advance
            and self.settings.auto_choose is not None
            and self.frame >= c.block_start + self.settings.auto_advance_frames
        ):
            choice = self.settings.auto_choose
        if choice is None:
            return
        if not 0 <= choice < n:
            self.decide("ChoiceRefused", option=choice, options=n)
            if not timeout:
                return
            choice = 0
        text = box.options[choice].text if n else ""
        self.decide("Chosen", speaker=self._who(c), option=choice, option_text=text, timeout=timeout)
        self.presenter.post(Chosen(file=c.file, packet=c.packet, option=choice, text=text, timeout=timeout))
        self._resume(c)

    # -- talks and messages ------------------------------------------------------------------
    def _begin(self, ev: Talk) -> None:
        try:
            script = self.load(ev.file, ev.packet)
        except BarkbusError as exc:
            self.decide("TalkError", file=ev.file, packet=ev.packet, error=str(exc))
            self.presenter.post(TalkEnd(file=ev.file, packet=ev.packet, reason="Error"))
            return
        self.conv = Conversation(ev.file, ev.packet, ev.voice, ev.auto_advance, script)
        self.decide(
            "TalkStarted",
            file=ev.file,
            packet=ev.packet,
            messages=len(script.messages),
            voice=ev.voice,
            auto_advance=ev.auto_advance,
            issues=script.issues + script.mismatches(),
        )
        for j in script.prologue:
            self.decide("Prologue", arg=j.arg, words=list(j.words))
        if self._next_message():
            self._walk(True)

    def _next_message(self) -> bool:
        """Open the next message; False (and the talk closed) at the end of the packet."""
        c = self.conv
        assert c is not None
        c.index += 1
        if c.index >= len(c.script.messages):
            self._close("End" if c.script.ended else "NoEnd")
            return False
        m = c.script.messages[c.index]
        steps = self._expand_propers(m)
        c.message, c.tw, c.frame0, c.state = (
            m,
            Typewriter(steps, self.settings.default_speed),
            self.frame,
            "reveal",
        )
        self._quiet_mouths()
        c.until, c.no_skip, c.shown, c.clips = None, False, [], []
        c.speaker_id = self.settings.resolve(m.character_id)
        c.speaker = tuple(dict.fromkeys(x for x in (m.character_id, c.speaker_id) if x is not None))
        c.bustup = m.bustup_mode
        frames = reveal_frames(steps, self.settings.default_speed) or 0
        who = self.presenter.label(c.speaker_id)
        nw = m.name_window
        plate = {"name": self.presenter.plate_name(nw.name_id)} if nw is not None and nw.name_id else {}
        text = text_of(steps)
        choices = tuple(o.text for o in m.choice.options) if m.choice else ()
        self.decide(
            "Message",
            speaker=who,
            message=f"{c.file}:{c.packet}:{m.index}",
            index=m.index,
            message_text=text,
            choices=list(choices),
            reveal_frames=frames,
            **plate,
        )
        self.presenter.post(
            Subtitle(
                speaker=plate.get("name", who),
                character_id=-1 if c.speaker_id is None else c.speaker_id,
                text=text,
                choices=choices,
                file=c.file,
                packet=c.packet,
                index=m.index,
                message=f"{c.file}:{c.packet}:{m.index}",
                reveal_frames=frames,
                seconds=frames / self.settings.fps,
            )
        )
        return True

    def _walk(self, first: bool | None) -> None:
        """Run the typewriter for this frame; follow blocks, resolved waits and next messages.
        ``first``: True on a message's (or a resumed walk's) first frame; None = already ran."""
        while self.conv is not None:
            c = self.conv
            assert c.tw is not None
            if first is not None:
                self._execute(c, c.tw.run(first))
            if c.tw.blocked is not None:
                if c.state == "reveal":
                    self._block(c)
                if c.state != "reveal":
                    return
                first = True
                continue
            if not c.tw.done:
                return
            if not self._next_message():
                return
            first = True

    def _expand_propers(self, m: Message) -> list[Step]:
        """``m``'s steps with every Proper the presenter's table names replaced by its text: one
        visible glyph per character that is not a space or newline, so the expansion costs reveal
        budget like any text; an unknown payload stays (no glyph, the text shows its placeholder)."""
        out: list[Step] = []
        for s in m.steps:
            text = self.presenter.proper(s.key) if isinstance(s, Proper) else None
            if text is None:
                out.append(s)
                continue
            assert isinstance(s, Proper)
            self.decide("Proper", payload=s.key, text=text)
            out.extend(Text(s.offset, ch, glyph=ch not in " \n") for ch in text)
        return out

    def _quiet_mouths(self) -> None:
        """The reveal stopped: mouths animating "while revealing" close."""
        self.mouths = [(ids, until) for ids, until in self.mouths if until is not None]

    def _block(self, c: Conversation) -> None:
        """The walk reached a Wait or a choice box."""
        assert c.tw is not None
        self._quiet_mouths()
        b = c.tw.blocked
        c.block_start = self.frame
        if isinstance(b, ChoiceWait):
            lim = b.choice.time_limit
            c.state, c.until = "choice", None if lim is None else self.frame + lim
            self.decide(
                "ChoiceOpen", speaker=self._who(c), options=[o.text for o in b.choice.options], limit=lim
            )
            return
        assert isinstance(b, Wait)
        start = c.frame0 if self.settings.wait_starts == "at_message_start" else self.frame
        press = b.infinite or (b.cursor and self.settings.cursor_waits_for_press)
        c.until = None if b.infinite else start + b.duration
        self.decide(
            "Wait",
            speaker=self.presenter.label(c.speaker_id),
            message=c.index,
            duration=b.duration,
            infinite=b.infinite,
            cursor=b.cursor,
            press=press,
            until=c.until,
            frames=None if c.until is None else c.until - self.frame,
        )
        if press:
            c.state = "press"
        elif c.until is not None and c.until <= self.frame:
            c.tw.resume()
        else:
            c.state = "wait"

    def _resume(self, c: Conversation) -> None:
        assert c.tw is not None
        c.tw.resume()
        c.state, c.until = "reveal", None
        self._walk(True)

    def _close(self, reason: str) -> None:
        c, self.conv = self.conv, None
        if c is None:
            return
        self._quiet_mouths()
        if self.settings.end_stops_voices:
            for h in c.clips:
                self.presenter.stop_clip(h)
        self.decide("TalkEnd", file=c.file, packet=c.packet, reason=reason)
        self.presenter.post(TalkEnd(file=c.file, packet=c.packet, reason=reason))

    # -- steps -------------------------------------------------------------------------------
    def _execute(self, c: Conversation, steps: list[Step]) -> None:
        for s in steps:
            if isinstance(s, Text):
                c.shown.append(s.char)
            elif isinstance(s, VoiceClip):
                self._clip(c, s)
            elif isinstance(s, Signal):
                self.decide("Signal", speaker=self._who(c), value=s.value, after_glyphs=s.after_glyphs)
                self.presenter.post(
                    SignalPosted(value=s.value, file=c.file, packet=c.packet, message=c.index)
                )
            elif isinstance(s, SpeakerSet):
                c.speaker_id = self.settings.resolve(s.character_id)
                c.speaker = tuple(dict.fromkeys(x for x in (s.character_id, c.speaker_id) if x is not None))
                c.bustup = s.mode
            elif isinstance(s, ProhibitSkip):
                c.no_skip = bool(s.value)
                self.decide("ProhibitSkip", value=s.value)
            elif isinstance(s, Jump):
                self.decide("Jump", arg=s.arg, words=list(s.words))
            elif isinstance(s, Mouth):
                self._mouth(c, s)
            elif isinstance(s, Trap):
                self.decide(
                    "Trap",
                    message=f"{c.file}:{c.packet}:{c.index}",
                    offset=s.offset,
                    record=f"{s.command.b0:02X} {s.command.b1:02X}",
                    reason="error-trap record: not valid data in the engine",
                )

    def _mouth(self, c: Conversation, s: Mouth) -> None:
        """Speak / SpeakingCycle: the character speaks without a clip (``mouth_frames``)."""
        who = self.settings.resolve(s.character_id)
        ids = tuple(dict.fromkeys(x for x in (s.character_id, who) if x is not None))
        n = self.settings.mouth_frames
        self.mouths.append((ids, None if n is None else self.frame + n))
        self.decide("Mouth", speaker=self.presenter.label(who), record=s.name, index=s.index, frames=n)

    def _clip(self, c: Conversation, clip: VoiceClip) -> None:
        ch = clip.channel
        detail = {"sound_id": clip.sound_id, "channel": ch}
        if not c.voice:
            self.decide("VoiceOff", **detail)
            return
        mode = (
            "auto_lipsync"
            if clip.channel_raw == 0x1F
            else "explicit"
            if 0 <= ch <= 15
            else self.settings.other_channels
        )
        if mode == "ignore":
            self.decide("ChannelIgnored", **detail)
            return
        if mode == "explicit":
            old = self.channels.pop(ch, None)
            if old is not None and self.presenter.clip_playing(old):
                self.presenter.stop_clip(old)
                self.decide("Replaced", **detail)
        h = self.presenter.start_clip(c, clip, c.speaker)
        if h is None:
            return
        c.clips.append(h)
        if mode == "explicit":
            self.channels[ch] = h
        lip = mode == "auto_lipsync" and (c.bustup != 1 or self.settings.lip_sync_without_bustup)
        who = self.presenter.label(c.speaker_id)
        label = f"{c.file}:{c.packet}:{c.index}:{clip.sound_id}"
        self.clips.append(_Clip(h, label, who, c.speaker, lip))
        self.decide(
            "Started",
            **{"speaker" if lip else "voice_of": who},
            line=label,
            lip_sync=lip,
            mode=mode,
            **detail,
        )

    def _who(self, c: Conversation) -> str:
        return self.presenter.label(c.speaker_id)

    def _own_clip_playing(self, c: Conversation) -> bool:
        return self.settings.auto_advance_waits_for_voice and any(
            self.presenter.clip_playing(h) for h in c.clips
        )

    def _reap(self) -> None:
        keep = []
        for k in self.clips:
            if self.presenter.clip_playing(k.handle):
                keep.append(k)
            else:
                self.decide("Finished", **{"speaker" if k.lip_sync else "voice_of": k.speaker}, line=k.label)
        self.clips = keep
