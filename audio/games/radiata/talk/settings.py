"""The talk sequencer's settings: every unknown of the spec as a documented choice."""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from audio.core.errors import BarkbusError, InputError
from audio.core.schema import convert

__all__ = ["CHANNEL_MODES", "ON_BUSY", "WAIT_STARTS", "TalkSettings"]

WaitStarts = Literal["at_record", "at_message_start"]
ChannelMode = Literal["auto", "auto_lipsync", "ignore"]
OnBusy = Literal["queue", "replace", "refuse"]
WAIT_STARTS: tuple[str, ...] = typing.get_args(WaitStarts)
CHANNEL_MODES: tuple[str, ...] = typing.get_args(ChannelMode)
ON_BUSY: tuple[str, ...] = typing.get_args(OnBusy)
CharacterId = Annotated[int, Meta(ge=0, le=0xFFFF)]


def _settings_error(source: str, where: str, problem: str) -> BarkbusError:
    return InputError(f"{source}: {where}: {problem}" if where else f"{source}: {problem}")


class TalkSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Settings of :class:`~audio.games.radiata.talk.sequencer.TalkSequencer` (frames are game frames).

    Parameters
    ----------
    fps:
        Frames per second WaitTime and TextSpeed count [unknown: 60 Hz field rate or a 30 fps loop];
        default 60.
    default_speed:
        Glyphs per frame when a message sets no TextSpeed after the Sentence reset [unknown]; 3.0,
        the first speed English dialogue sets.
    wait_starts:
        When the WaitTime countdown starts [unknown]: ``"at_record"`` (when the reveal reaches the
        record, i.e. after the glyphs before it; default) or ``"at_message_start"`` (the reveal time
        counts against the wait).
    cursor_waits_for_press:
        A press-to-continue box (flag bit 0) with a finite duration waits for ``radiata.advance``
        (True, default) or also closes after its duration (False) [unknown].
    auto_advance_frames:
        With auto-advance, frames an infinite box stays up after its clip (ours; default 45).
    auto_advance_waits_for_voice:
        With auto-advance, a box never closes while its own clips play (ours; default True).
    advance_skips_reveal:
        ``radiata.advance`` during the reveal shows the rest of the text at once, unless
        ProhibitSkip is set (ours; default True). Otherwise it is ignored.
    other_channels:
        What a clip on channel 0x10..0x1E (-16..-2) or >= 0x30 does [unknown]: ``"auto"``
        (allocate, no lip-sync; default), ``"auto_lipsync"`` (like 0x1F) or ``"ignore"``.
    lip_sync_without_bustup:
        A 0x1F clip of a speaker shown without a bustup (mode 1) still makes ``speaking()`` true
        (default True: the character talks, only the portrait is missing) [unknown].
    end_stops_voices:
        The End cuts clips still playing (ours; default False: they play out).
    on_busy:
        A ``radiata.talk`` while a conversation runs: ``"queue"`` (default), ``"replace"`` or
        ``"refuse"`` (ours).
    queue_size:
        Talks waiting behind the running one at most (ours; default 16, as Skate's speech
        queue); a talk beyond is ``Dropped`` (and ends with ``radiata.talk_end`` reason
        ``Dropped``).
    choice_timeout_option:
        Option taken when a WaitSelect time limit runs out [unknown]; default 0.
    auto_choose:
        With auto-advance, the option taken ``auto_advance_frames`` after a choice box opens; None
        (default) waits for ``radiata.choose`` even then.
    party:
        Character ids in party slots 1..5 (speaker ids 9901..9905 resolve to them).
    active_character:
        The character id 9900 resolves to (None: stays 9900).
    voice_gain:
        Linear gain of dialogue clips (the dialogue voice graph's ``Gai0.gain``).
    mouth_frames:
        How long a Speak / SpeakingCycle record (mouth animation without a clip) makes its character
        ``speaking()``, in game frames [unknown]: None (default) while the message's text reveals
        (until the walk reaches a wait, a choice or the message's end), or that many frames from the
        record.
    """

    fps: Annotated[int, Meta(ge=1, le=1000)] = 60
    default_speed: Annotated[float, Meta(ge=0.0, le=255.0)] = 3.0
    wait_starts: WaitStarts = "at_record"
    cursor_waits_for_press: bool = True
    auto_advance_frames: Annotated[int, Meta(ge=0, le=1_000_000)] = 45
    auto_advance_waits_for_voice: bool = True
    advance_skips_reveal: bool = True
    other_channels: ChannelMode = "auto"
    lip_sync_without_bustup: bool = True
    end_stops_voices: bool = False
    on_busy: OnBusy = "queue"
    queue_size: Annotated[int, Meta(ge=1, le=100_000)] = 16
    choice_timeout_option: Annotated[int, Meta(ge=0, le=127)] = 0
    auto_choose: Annotated[int, Meta(ge=0, le=127)] | None = None
    party: Annotated[tuple[CharacterId, ...], Meta(max_length=5)] = ()
    active_character: CharacterId | None = None
    voice_gain: Annotated[float, Meta(ge=0.0, le=64.0)] = 1.0
    mouth_frames: Annotated[int, Meta(ge=0, le=1_000_000)] | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The setting names (the keys of the ``[radiata]`` section they are read from)."""
        return cls.__struct_fields__

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "talk settings", where: str = "") -> TalkSettings:
        """Check and build from scenario keys: one :class:`InputError` naming the key, what was
        expected and a did-you-mean (nan/inf refused)."""
        return convert(d, cls, source=source, where=where, error=_settings_error)

    def checked(self) -> TalkSettings:
        """These settings, validated like :meth:`from_dict` (for ones built in Python)."""
        return self.from_dict(msgspec.to_builtins(self))

    def resolve(self, character_id: int | None) -> int | None:
        """9900 -> the active character, 9901..9905 -> party slots (unchanged when unset)."""
        if character_id == 9900 and self.active_character is not None:
            return self.active_character
        if character_id is not None and 9901 <= character_id <= 9905:
            slot = character_id - 9901
            if slot < len(self.party):
                return self.party[slot]
        return character_id
