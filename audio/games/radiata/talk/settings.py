"""The talk sequencer's settings: every unknown of the spec as a documented choice."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["CHANNEL_MODES", "ON_BUSY", "WAIT_STARTS", "TalkSettings"]

WAIT_STARTS = ("at_record", "at_message_start")
CHANNEL_MODES = ("auto", "auto_lipsync", "ignore")
ON_BUSY = ("queue", "replace", "refuse")


@dataclass(frozen=True)
class TalkSettings:
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

    fps: int = 60
    default_speed: float = 3.0
    wait_starts: str = "at_record"
    cursor_waits_for_press: bool = True
    auto_advance_frames: int = 45
    auto_advance_waits_for_voice: bool = True
    advance_skips_reveal: bool = True
    other_channels: str = "auto"
    lip_sync_without_bustup: bool = True
    end_stops_voices: bool = False
    on_busy: str = "queue"
    queue_size: int = 16
    choice_timeout_option: int = 0
    auto_choose: int | None = None
    party: tuple[int, ...] = ()
    active_character: int | None = None
    voice_gain: float = 1.0
    mouth_frames: int | None = None

    def __post_init__(self) -> None:
        checks = [
            (1 <= self.fps <= 1000, "fps 1..1000"),
            (0.0 <= self.default_speed <= 255.0, "default_speed 0..255"),
            (self.wait_starts in WAIT_STARTS, f"wait_starts one of {WAIT_STARTS}"),
            (self.other_channels in CHANNEL_MODES, f"other_channels one of {CHANNEL_MODES}"),
            (self.on_busy in ON_BUSY, f"on_busy one of {ON_BUSY}"),
            (1 <= self.queue_size <= 100_000, "queue_size 1..100000"),
            (0 <= self.auto_advance_frames <= 1_000_000, "auto_advance_frames 0..1000000"),
            (0 <= self.choice_timeout_option < 128, "choice_timeout_option 0..127"),
            (self.auto_choose is None or 0 <= self.auto_choose < 128, "auto_choose 0..127 or none"),
            (len(self.party) <= 5, "at most 5 party slots"),
            (0.0 <= self.voice_gain <= 64.0, "voice_gain 0..64"),
            (
                self.mouth_frames is None or 0 <= self.mouth_frames <= 1_000_000,
                "mouth_frames 0..1000000 or none",
            ),
        ]
        bad = [what for ok, what in checks if not ok]
        if bad:
            raise ValueError("talk settings: expected " + ", ".join(bad))

    @classmethod
    def names(cls) -> set[str]:
        return {f.name for f in fields(cls)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TalkSettings:
        """Build from scenario keys (lists become tuples); ValueError names a bad key or value."""
        unknown = set(d) - cls.names()
        if unknown:
            raise ValueError(f"unknown talk settings {sorted(unknown)} (have {sorted(cls.names())})")
        kw: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}
        types = {f.name: f.type for f in fields(cls)}
        for k, v in kw.items():
            want = types[k]
            if "bool" in str(want) and not isinstance(v, bool):
                raise ValueError(f"{k} must be true/false, got {v!r}")
            if str(want) == "int" and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{k} must be an integer, got {v!r}")
            if str(want) == "float" and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValueError(f"{k} must be a number, got {v!r}")
            if str(want) == "str" and not isinstance(v, str):
                raise ValueError(f"{k} must be a string, got {v!r}")
            if (
                str(want) == "int | None"
                and v is not None
                and (isinstance(v, bool) or not isinstance(v, int))
            ):
                raise ValueError(f"{k} must be an integer, got {v!r}")
            if k == "party" and not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                raise ValueError(f"party must be a list of character ids, got {v!r}")
        return cls(**kw)

    def resolve(self, character_id: int | None) -> int | None:
        """9900 -> the active character, 9901..9905 -> party slots (unchanged when unset)."""
        if character_id == 9900 and self.active_character is not None:
            return self.active_character
        if character_id is not None and 9901 <= character_id <= 9905:
            slot = character_id - 9901
            if slot < len(self.party):
                return self.party[slot]
        return character_id
