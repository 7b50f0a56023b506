"""Message extraction [8]: a packet's tokens -> its prologue and messages, each a list of steps the
talk sequencer plays in stream order (text, speed, voice clips, signals, waits, choices, speaker,
name plate, mouth, Proper, traps), and the spec's per-message record.

Extraction gives per message: speaker (index -> character id, bustup mode), voice clips (``0F 28``:
channel raw and signed, sound id), speed, signals with the glyphs revealed before them, the wait,
the choices (``count & 0x7F`` options each ending ``00 00``: an option terminator, not the End) and
the decoded text. Reveal timing is the talk room's (:mod:`audio.games.radiata.talk.typewriter`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from audio.games.radiata.formats.rmf.layout import EN, Packet, Speaker
from audio.games.radiata.formats.rmf.text import glyph_char
from audio.games.radiata.formats.rmf.tokens import Command, Glyph, Token, walk_tokens


@dataclass(frozen=True)
class Text:
    """Text: a visible glyph (costs 0x100 of reveal budget), or a free space / newline."""

    offset: int
    char: str
    glyph: bool = True


@dataclass(frozen=True)
class Speed:
    """``07 1x``: typewriter rate in U8.8 glyphs per frame."""

    offset: int
    word: int

    @property
    def value(self) -> float:
        return self.word / 256.0


@dataclass(frozen=True)
class VoiceClip:
    """``0F 28``: a voice clip on ``channel_raw``; ``after_glyphs`` visible glyphs precede it."""

    offset: int
    channel_raw: int
    sound_id: int
    after_glyphs: int = 0

    @property
    def channel(self) -> int:
        """Signed: raw >= 0x10 reads as ``raw - 0x20`` (0x1F = -1)."""
        return self.channel_raw - 0x20 if self.channel_raw >= 0x10 else self.channel_raw

    @property
    def auto(self) -> bool:
        """0x1F: allocate a channel automatically."""
        return self.channel_raw == 0x1F

    @property
    def lip_sync(self) -> bool:
        """0x1F also binds the handle to the current bustup's lip-sync."""
        return self.channel_raw == 0x1F


@dataclass(frozen=True)
class Signal:
    """``06 1x``: a value for the event script, posted after ``after_glyphs`` visible glyphs."""

    offset: int
    value: int
    after_glyphs: int = 0


@dataclass(frozen=True)
class Wait:
    """``0F 20``: ``duration`` frames (0xFFFF infinite) and the flags as written."""

    offset: int
    duration: int
    flags: int

    @property
    def infinite(self) -> bool:
        return self.duration == 0xFFFF

    @property
    def stored_flags(self) -> int:
        """What the engine keeps: ``flags & 0xFD``."""
        return self.flags & 0xFD

    @property
    def cursor(self) -> bool:
        """Bit 0: the blinking continue cursor (a press-to-continue box)."""
        return bool(self.flags & 1)


@dataclass(frozen=True)
class Option:
    """One choice option: its text and visible glyphs."""

    offset: int
    text: str
    glyphs: int


@dataclass(frozen=True)
class Choice:
    """``0F 22`` / ``0F 24``: options follow, each ending ``00 00``."""

    offset: int
    entry: int
    time_limit_raw: int
    count_raw: int
    options: tuple[Option, ...] = ()

    @property
    def time_limit(self) -> int | None:
        """Frames, or None: 0 is rewritten to 0xFFFF = no limit."""
        return None if self.time_limit_raw in (0, 0xFFFF) else self.time_limit_raw

    @property
    def count(self) -> int:
        return self.count_raw & 0x7F


@dataclass(frozen=True)
class ChoiceWait:
    """After the last option: the box waits for a choice."""

    offset: int
    choice: Choice


@dataclass(frozen=True)
class SpeakerSet:
    """``0E 20``: the speaker (1-based index, resolved id or None) and bustup mode (bits 0-1)."""

    offset: int
    index: int
    mode: int
    character_id: int | None


@dataclass(frozen=True)
class ProhibitSkip:
    """``0F x3``: non-zero forbids skipping and finishes the current text at once."""

    offset: int
    value: int


@dataclass(frozen=True)
class Jump:
    """``0F x7``: u8 at +2 and up to six words from +4; leading ones are the packet prologue."""

    offset: int
    arg: int
    words: tuple[int, ...]


@dataclass(frozen=True)
class NameWindow:
    """``0E 4E``: the name plate [4.2]: speaker ``index`` (1-based), ``mode``, ``y_offset``, ``name_id``.

    ``mode & 3`` is the plate style (0 = no plate), ``mode & 4`` the layout bit, ``mode & 8`` picks
    template 6 over template 5; a non-zero ``name_id`` overrides the name the plate shows.
    """

    offset: int
    index: int
    mode: int
    y_offset: int
    name_id: int
    character_id: int | None = None

    @property
    def plate_style(self) -> int:
        return self.mode & 3

    @property
    def plate(self) -> bool:
        """Whether a plate shows at all (style 0 = none)."""
        return self.plate_style != 0

    @property
    def layout(self) -> bool:
        return bool(self.mode & 4)

    @property
    def template(self) -> int:
        return 6 if self.mode & 8 else 5

    def record(self) -> dict[str, object]:
        """JSON-ready fields (``radiata dump --json``'s ``name_window``)."""
        return {
            "offset": self.offset,
            "index": self.index,
            "character_id": self.character_id,
            "mode": self.mode,
            "plate_style": self.plate_style,
            "layout": self.layout,
            "template": self.template,
            "y_offset": self.y_offset,
            "name_id": self.name_id,
        }


@dataclass(frozen=True)
class Proper:
    """``0F 6x``: proper-noun substitution; its payload is ``2 * b1`` bytes (the size rule's exception).

    What the engine substitutes is not known: the text shows ``[proper:HEX]`` and costs no glyph,
    unless the talk's proper table names the payload (see the talk room).
    """

    offset: int
    b1: int
    payload: bytes

    @property
    def key(self) -> str:
        """The payload as lower-case hex (the proper table's key)."""
        return self.payload.hex()

    @property
    def words(self) -> tuple[int, ...]:
        return tuple(self.payload[i] | self.payload[i + 1] << 8 for i in range(0, len(self.payload) - 1, 2))

    @property
    def placeholder(self) -> str:
        return f"[proper:{self.key}]"


@dataclass(frozen=True)
class Mouth:
    """``0E x5`` Speak (``flags``) or ``0E x6`` SpeakingCycle (``open_time``/``close_time``): the
    mouth of speaker ``index`` animates without a voice clip [4.2, 5]."""

    offset: int
    entry: int
    index: int
    character_id: int | None
    flags: int = 0
    open_time: int = 0
    close_time: int = 0

    @property
    def name(self) -> str:
        return "SpeakingCycle" if self.entry == 0x16 else "Speak"


TRAP_ENTRIES = frozenset({0x18, 0x19, 0x1B, 0x1F, 0x21, *range(0x29, 0x30)})
"""CTalk table entries that are error traps ("not valid data" in the engine) [4.2]."""


@dataclass(frozen=True)
class Trap:
    """A record whose CTalk entry is an error trap: the engine treats it as invalid data."""

    command: Command

    @property
    def offset(self) -> int:
        return self.command.offset

    def describe(self) -> str:
        c = self.command
        return (
            f"error trap {c.b0:02X} {c.b1:02X} (CTalk entry 0x{c.entry:02X}) at 0x{c.offset:X}: "
            "not valid data in the engine"
        )


@dataclass(frozen=True)
class Other:
    """Any other record (renderer style, bustup, face, inert)."""

    command: Command


Step = (
    Text
    | Speed
    | VoiceClip
    | Signal
    | Wait
    | Choice
    | ChoiceWait
    | SpeakerSet
    | ProhibitSkip
    | Jump
    | NameWindow
    | Proper
    | Mouth
    | Trap
    | Other
)


def text_of(steps: Sequence[Step]) -> str:
    """The decoded text of ``steps`` outside the choice options (Proper shows its placeholder)."""
    out, in_options = [], False
    for s in steps:
        if isinstance(s, Choice):
            in_options = True
        elif isinstance(s, ChoiceWait):
            in_options = False
        elif in_options:
            continue
        elif isinstance(s, Text):
            out.append(s.char)
        elif isinstance(s, Proper):
            out.append(s.placeholder)
    return "".join(out)


@dataclass
class Message:
    """One message (a Sentence record, or a packet's bare text)."""

    packet: int
    index: int
    offset: int
    sentence: bool = True
    flags: int = 0
    glyph_count: int | None = None
    speaker_index: int = 0
    character_id: int | None = None
    bustup_mode: int | None = None
    steps: list[Step] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    def _of(self, kind: type) -> list:
        return [s for s in self.steps if isinstance(s, kind)]

    @property
    def voices(self) -> list[VoiceClip]:
        return self._of(VoiceClip)

    @property
    def signals(self) -> list[Signal]:
        return self._of(Signal)

    @property
    def wait(self) -> Wait | None:
        w = self._of(Wait)
        return w[-1] if w else None

    @property
    def choice(self) -> Choice | None:
        c = self._of(Choice)
        return c[-1] if c else None

    @property
    def speed(self) -> float | None:
        """The last ``07 1x`` of the message (U8.8 as a float), or None."""
        s = self._of(Speed)
        return s[-1].value if s else None

    @property
    def text(self) -> str:
        """The decoded text outside the choice options."""
        return text_of(self.steps)

    @property
    def name_window(self) -> NameWindow | None:
        """The message's name plate record (the last one), or None."""
        n = self._of(NameWindow)
        return n[-1] if n else None

    @property
    def propers(self) -> list[Proper]:
        return self._of(Proper)

    @property
    def traps(self) -> list[Trap]:
        return self._of(Trap)

    @property
    def visible_glyphs(self) -> int:
        """Glyphs drawn (choice options included; spaces and newlines are not glyphs)."""
        return sum(1 for s in self.steps if isinstance(s, Text) and s.glyph)

    def has_content(self) -> bool:
        return any(isinstance(s, (Text, VoiceClip, Signal, Wait, Choice)) for s in self.steps)


@dataclass
class PacketScript:
    """A packet's prologue and messages, whether an End closed it, and what did not add up."""

    packet: int
    budget: int
    speakers: tuple[Speaker, ...]
    prologue: list[Jump] = field(default_factory=list)
    preamble: list[Step] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    ended: bool = False
    issues: list[str] = field(default_factory=list)

    def mismatches(self) -> list[str]:
        """Declared vs counted glyphs per message, and the budget vs the declared sum [8.4]."""
        out = []
        declared = [m.glyph_count for m in self.messages if m.glyph_count is not None]
        for m in self.messages:
            if m.glyph_count is not None and m.glyph_count != m.visible_glyphs:
                out.append(
                    f"packet {self.packet} message {m.index}: declares {m.glyph_count} glyphs, "
                    f"draws {m.visible_glyphs}"
                )
        if declared and sum(declared) != self.budget:
            out.append(
                f"packet {self.packet}: glyph_budget {self.budget} != sum of declared counts {sum(declared)}"
            )
        return out


class _Builder:
    """Walks a packet's tokens into a :class:`PacketScript`."""

    def __init__(self, packet: Packet, region: str) -> None:
        self.p, self.region = packet, region
        self.script = PacketScript(packet.index, packet.glyph_budget, packet.speakers)
        self.cur: Message | None = None
        self.glyphs = 0
        self.in_prologue = True

    def resolve(self, index: int, where: int) -> int | None:
        if index == 0:
            return None
        if index > len(self.p.speakers):
            self._issue(f"speaker index {index} at 0x{where:X} is beyond the table of {len(self.p.speakers)}")
            return None
        return self.p.speakers[index - 1].character_id

    def _issue(self, text: str) -> None:
        (self.cur.issues if self.cur is not None else self.script.issues).append(text)

    def message(self, offset: int, sentence: bool, flags: int = 0, count: int | None = None) -> Message:
        self.close()
        m = Message(self.p.index, len(self.script.messages), offset, sentence, flags, count)
        self.cur, self.glyphs = m, 0
        return m

    def close(self) -> None:
        m, self.cur = self.cur, None
        if m is None:
            return
        if m.sentence or m.has_content():
            m.index = len(self.script.messages)
            self.script.messages.append(m)
        else:
            self.script.preamble.extend(m.steps)

    def add(self, step: Step) -> None:
        if self.cur is None:
            self.message(getattr(step, "offset", 0), sentence=False)
        assert self.cur is not None
        self.cur.steps.append(step)
        if isinstance(step, Text) and step.glyph:
            self.glyphs += 1


def read_script(packet: Packet, region: str = EN, path: str = "<buffer>") -> PacketScript:
    """Extract a packet's prologue and messages [8]. Never raises on stream content: problems are
    listed in ``issues`` (the walk stops at the End, the packet end or a cut record)."""
    b = _Builder(packet, region)
    tokens = walk_tokens(packet.stream, packet.stream_offset, b.script.issues)
    for tok in tokens:
        if isinstance(tok, Glyph):
            b.in_prologue = False
            b.add(Text(tok.offset, glyph_char(tok, region)))
            continue
        if tok.entry == 0x27 and b.in_prologue:
            b.script.prologue.append(_jump(tok))
            continue
        b.in_prologue = False
        if tok.entry == 0x00:
            b.script.ended = True
            break
        if tok.entry == 0x25:
            b.message(tok.offset, True, tok.u16(2), tok.u16(4))
        elif tok.entry in (0x22, 0x24):
            if not _choice(b, tok, tokens):
                break
        else:
            _command(b, tok)
    else:
        b.script.issues.append(f"packet {packet.index} has no End before its boundary 0x{packet.end:X}")
    b.close()
    return b.script


def _jump(c: Command) -> Jump:
    words = tuple(c.u16(at) for at in range(4, 16, 2) if c.has(at))
    return Jump(c.offset, c.u8(2), words)


def _command(b: _Builder, c: Command) -> None:
    e = c.entry
    if e == 0x01:
        b.add(Text(c.offset, " ", glyph=False))
    elif e == 0x0A:
        b.add(Text(c.offset, "\n", glyph=False))
    elif e == 0x07:
        b.add(Speed(c.offset, c.u16(2)))
    elif e == 0x06:
        b.add(Signal(c.offset, c.u16(2), b.glyphs))
    elif e == 0x28:
        b.add(VoiceClip(c.offset, c.u8(2), c.u16(4), b.glyphs))
    elif e == 0x20:
        b.add(Wait(c.offset, c.u16(2), c.u16(4)))
    elif e == 0x23:
        b.add(ProhibitSkip(c.offset, c.u8(2)))
    elif e == 0x27:
        b.add(_jump(c))
    elif e == 0x10:
        _speaker(b, c)
    elif e == 0x1E:
        idx = c.u16(2)
        b.add(NameWindow(c.offset, idx, c.u8(4), c.s16(6), c.u16(8), b.resolve(idx, c.offset)))
    elif e in (0x15, 0x16):
        idx = c.u16(2)
        who = b.resolve(idx, c.offset)
        if e == 0x15:
            b.add(Mouth(c.offset, e, idx, who, flags=c.u16(4)))
        else:
            b.add(Mouth(c.offset, e, idx, who, open_time=c.u8(4), close_time=c.u8(5)))
    elif e == 0x26:
        b.add(Proper(c.offset, c.b1, c.payload))
    elif e in TRAP_ENTRIES:
        trap = Trap(c)
        b.add(trap)
        b._issue(trap.describe())
    else:
        b.add(Other(c))


def _speaker(b: _Builder, c: Command) -> None:
    idx, mode = c.u16(2), c.u16(4) & 3
    step = SpeakerSet(c.offset, idx, mode, b.resolve(idx, c.offset))
    b.add(step)
    m = b.cur
    assert m is not None
    m.speaker_index, m.character_id, m.bustup_mode = idx, step.character_id, mode


def _choice(b: _Builder, c: Command, tokens: Iterator[Token]) -> bool:
    """Read the ``count & 0x7F`` options after a WaitSelect record; False if the stream ended."""
    head = Choice(c.offset, c.entry, c.u16(2), c.u16(4))
    options: list[Option] = []
    steps: list[Step] = []
    for k in range(head.count):
        start, chars, glyphs = None, [], 0
        for tok in tokens:
            start = tok.offset if start is None else start
            if isinstance(tok, Command) and tok.entry == 0x00:
                break
            if isinstance(tok, Glyph):
                chars.append(glyph_char(tok, b.region))
                glyphs += 1
                steps.append(Text(tok.offset, chars[-1]))
            elif tok.entry in (0x01, 0x0A):
                chars.append(" " if tok.entry == 0x01 else "\n")
                steps.append(Text(tok.offset, chars[-1], glyph=False))
            else:
                steps.append(Other(tok))
        else:
            b._issue(
                f"choice at 0x{c.offset:X}: option {k} of {head.count} not terminated before the packet end"
            )
            b.add(Choice(head.offset, head.entry, head.time_limit_raw, head.count_raw, tuple(options)))
            for s in steps:
                b.add(s)
            return False
        options.append(Option(start if start is not None else c.offset, "".join(chars), glyphs))
    full = Choice(head.offset, head.entry, head.time_limit_raw, head.count_raw, tuple(options))
    b.add(full)
    for s in steps:
        b.add(s)
    b.add(ChoiceWait(c.offset, full))
    return True


def message_record(m: Message, reveal_frames: int | None = None) -> dict[str, object]:
    """The spec's extraction record of a message [8.4] (JSON-ready). ``voice`` is the first clip;
    ``wait.flags`` is the value written (the engine stores ``flags & 0xFD``); ``reveal_frames`` is
    the typewriter's count (console frames, :func:`audio.games.radiata.talk.typewriter.reveal_frames`)."""
    v = m.voices[0] if m.voices else None
    w = m.wait
    c = m.choice
    return {
        "packet": m.packet,
        "index": m.index,
        "speaker_index": m.speaker_index,
        "character_id": m.character_id,
        "bustup_mode": m.bustup_mode,
        "voice": None
        if v is None
        else {"channel": v.channel, "auto": v.auto, "lip_sync": v.lip_sync, "sound_id": v.sound_id},
        "text": m.text,
        "visible_glyphs": m.visible_glyphs,
        "glyph_count": m.glyph_count,
        "speed": m.speed,
        "reveal_frames": reveal_frames,
        "signals": [{"value": s.value, "after_glyphs": s.after_glyphs} for s in m.signals],
        "wait": None
        if w is None
        else {"duration": w.duration, "infinite": w.infinite, "cursor": w.cursor, "flags": w.flags},
        "choices": [o.text for o in c.options] if c is not None else [],
        "name_window": None if m.name_window is None else m.name_window.record(),
        "propers": [
            {"offset": p.offset, "b1": p.b1, "payload": p.key, "words": list(p.words)} for p in m.propers
        ],
        "mouth": [
            {
                "record": s.name,
                "offset": s.offset,
                "index": s.index,
                "character_id": s.character_id,
                "flags": s.flags,
                "open_time": s.open_time,
                "close_time": s.close_time,
            }
            for s in m.steps
            if isinstance(s, Mouth)
        ],
        "traps": [{"offset": t.offset, "record": f"{t.command.b0:02X} {t.command.b1:02X}"} for t in m.traps],
    }
