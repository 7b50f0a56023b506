"""The typewriter [5]: how the renderer reveals a message's steps frame by frame.

Each frame after the first adds the speed word (U8.8 glyphs per frame) to an accumulator; a visible
glyph costs 0x100, spaces and newlines nothing, so ``k`` glyphs at speed word ``v`` take about
``ceil(k * 256 / v)`` console frames.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from audio.games.radiata.formats.rmf.script import ChoiceWait, Other, ProhibitSkip, Speed, Step, Text, Wait
from audio.games.radiata.formats.rmf.tokens import Command


class Typewriter:
    """Reveals a message's steps frame by frame, the way the renderer spends its budget.

    Each frame after the first adds the speed word (U8.8) to an accumulator; a visible glyph costs
    0x100, spaces and newlines nothing; every other step runs when the walk reaches it. Speed 0, or
    a non-zero ProhibitSkip, shows the rest at once. The walk stops at a :class:`Wait` or
    :class:`ChoiceWait` (``blocked``) until :meth:`resume`. With the speed ``k`` glyphs take
    ``ceil(k * 256 / v)`` frames.
    """

    def __init__(self, steps: Sequence[Step], default_speed: float | None = 3.0) -> None:
        self.steps = list(steps)
        self.pos = 0
        self.acc = 0
        self.word = None if default_speed is None else round(default_speed * 256)
        self.instant = False
        self.blocked: Wait | ChoiceWait | None = None
        self.saved: tuple[int, int | None] | None = None

    @property
    def done(self) -> bool:
        return self.pos >= len(self.steps)

    def run(self, first: bool) -> list[Step]:
        """Advance one frame (``first``: the message's first frame, no budget added); returns the
        steps executed, in order."""
        if self.blocked is not None:
            return []
        if not first and self.word is not None:
            self.acc += self.word
        out: list[Step] = []
        while self.pos < len(self.steps):
            s = self.steps[self.pos]
            if isinstance(s, Text) and s.glyph and not self.instant:
                if self.word is None:
                    raise ValueError("a glyph before any speed and no default speed")
                if self.word != 0:
                    if self.acc < 0x100:
                        break
                    self.acc -= 0x100
            self.pos += 1
            out.append(s)
            if isinstance(s, Speed):
                self.word = s.word
            elif isinstance(s, ProhibitSkip) and s.value:
                self.instant = True
            elif isinstance(s, Other) and s.command.b0 == 0x09:
                self._style(s.command)
            elif isinstance(s, (Wait, ChoiceWait)):
                self.blocked = s
                break
        return out

    def text_ahead(self) -> Iterator[list[Text]]:
        """What each following frame's :meth:`run` (``first=False``) would reveal, without
        running it, for as long as a frame reveals text alone and leaves the walk neither
        blocked nor done (such a frame changes nothing but the text shown)."""
        acc, pos, steps = self.acc, self.pos, self.steps
        if self.blocked is not None or self.word is None:
            return
        while True:
            acc += self.word
            out: list[Text] = []
            while pos < len(steps):
                s = steps[pos]
                if not isinstance(s, Text):
                    return  # a step that acts runs in this frame
                if s.glyph and not self.instant and self.word != 0:
                    if acc < 0x100:
                        break
                    acc -= 0x100
                pos += 1
                out.append(s)
            else:
                return  # the frame ends the message
            yield out

    def _style(self, c: Command) -> None:
        """StyleSave (sub 0) keeps the speed when its mask has 0x80; StyleRestore (sub 1) puts it back."""
        if c.sub == 0:
            self.saved = (c.u16(2), self.word)
        elif c.sub == 1 and self.saved is not None:
            mask, word = self.saved
            if mask & 0x80 and word is not None:
                self.word = word
            self.saved = None

    def resume(self) -> None:
        """Continue after a wait or a choice (the accumulator starts again from 0)."""
        self.blocked, self.acc = None, 0

    def finish(self) -> list[Step]:
        """Show everything up to the next wait at once (a skip); returns the steps executed."""
        keep, self.instant = self.instant, True
        out = self.run(first=True)
        self.instant = keep
        return out


def reveal_frames(steps: Sequence[Step], default_speed: float | None = None) -> int | None:
    """Frames to reveal ``steps`` (waits and choices take none); None without any speed."""
    glyphs = [s for s in steps if isinstance(s, Text) and s.glyph]
    if not glyphs:
        return 0
    has_speed = any(isinstance(s, Speed) for s in steps)
    if not has_speed and default_speed is None:
        return None
    first_speed = next((i for i, s in enumerate(steps) if isinstance(s, Speed)), len(steps))
    first_glyph = next(i for i, s in enumerate(steps) if isinstance(s, Text) and s.glyph)
    if default_speed is None and first_glyph < first_speed:
        return None
    tw = Typewriter(steps, default_speed)
    frames, limit = 0, 256 * len(steps) + 2
    tw.run(first=True)
    while not tw.done and frames < limit:
        if tw.blocked is not None:
            tw.resume()
            tw.run(first=True)
            continue
        frames += 1
        tw.run(first=False)
    return frames if tw.done else None


def ceil_frames(glyphs: int, speed_word: int) -> int:
    """``ceil(glyphs * 256 / speed_word)``: the spec's reveal estimate [5] (0 at speed 0)."""
    return 0 if speed_word == 0 or glyphs == 0 else math.ceil(glyphs * 256 / speed_word)
