"""Bus events of the Radiata talk sequencer (kinds ``radiata.*``).

Inputs (what the event script or a player does): :class:`Talk`, :class:`Advance`, :class:`Choose`.
Outputs (posted by the sequencer): :class:`SignalPosted`, :class:`Subtitle`, :class:`Chosen`,
:class:`TalkEnd`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from audio.core.bus import Event, SubtitleEvent

__all__ = ["Advance", "Choose", "Chosen", "SignalPosted", "Subtitle", "Talk", "TalkEnd"]


@dataclass(frozen=True, kw_only=True)
class Talk(Event, kind="radiata.talk"):
    """Start a conversation (``CTalk::RmfStart``): packet ``packet`` of RMF file ``file``.

    ``voice`` and ``auto_advance`` are the two bools the event script's TALK_START passes (bits 6
    and 7 of its argument): voice clips on/off, boxes advance by themselves.
    """

    file: Annotated[str, Meta(min_length=1)]
    packet: Annotated[int, Meta(ge=0, le=0xFFFFFFFE)] = 0
    voice: bool = True
    auto_advance: bool = False


@dataclass(frozen=True, kw_only=True)
class Advance(Event, kind="radiata.advance"):
    """The player pressed the continue button."""


@dataclass(frozen=True, kw_only=True)
class Choose(Event, kind="radiata.choose"):
    """The player picked choice option ``option`` (0-based) of the open choice box."""

    option: Annotated[int, Meta(ge=0, le=127)] = 0


@dataclass(frozen=True, kw_only=True)
class SignalPosted(Event, kind="radiata.signal"):
    """Output: a ``06 1x`` Signal was reached in the reveal (the value the event script polls)."""

    value: int = 0
    file: str = ""
    packet: int = 0
    message: int = 0


@dataclass(frozen=True, kw_only=True)
class Subtitle(SubtitleEvent, kind="radiata.subtitle"):
    """Output: a message opened; ``text`` is its decoded text (options in ``choices``).

    ``message`` is ``"FILE:PACKET:INDEX"``; ``seconds`` the reveal time at the frame rate.
    """

    speaker: str = ""
    character_id: int = -1
    text: str = ""
    choices: tuple[str, ...] = ()
    file: str = ""
    packet: int = 0
    index: int = 0
    message: str = ""
    reveal_frames: int = 0
    seconds: float = 0.0

    def caption(self) -> tuple[str, str, str]:
        """``(speaker, text, message)``."""
        return self.speaker, self.text, self.message


@dataclass(frozen=True, kw_only=True)
class Chosen(Event, kind="radiata.chosen"):
    """Output: the choice box closed with ``option`` (``timeout``: its time limit ran out)."""

    option: int = 0
    text: str = ""
    file: str = ""
    packet: int = 0
    timeout: bool = False


@dataclass(frozen=True, kw_only=True)
class TalkEnd(Event, kind="radiata.talk_end"):
    """Output: the conversation closed (what EVD TRIGGER type 0x04 waits for).

    ``reason``: ``End`` (the packet's End), ``NoEnd`` (its boundary), ``Replaced``, ``Error``.
    """

    file: str = ""
    packet: int = 0
    reason: str = "End"
