"""The speech manager (retail ``Sk8::Audio::TheSpeechSystem``): values -> events -> gate.

* :func:`living_events_for_value` -- spec 2.3 (coin flips ``rand() & 1``, the bum's ``rand() % 3``);
* :func:`living_request_words` / :func:`maincast_request_words` -- spec 2.4 / 2.6;
* :class:`SpeechManager` -- the nine-step gate of spec 2.5 in order, with per-speaker timers
  (speaker slot = voice id; a missing entry counts as time 0.0), then the bank's library.

Timers restart only when the line starts (:meth:`SpeechManager.line_started`). Clock:
console seconds (frames / 30).

Not traced in the game, our documented choices: ``timerA``/``timerB`` (tuning t40/t44) are
the seconds since the manager started or since :meth:`SpeechManager.reset_timer`; the
three game-flag bytes are ids in :attr:`SpeechManager.game_flags`; the main-cast repeat
times (+52 slot 31, +56 slot 30) replace ``repeat`` in gate step 1 for those slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from audio.core.crt import MsvcRand
from audio.games.skate.speech.library import LineChoice, SpeechLibrary
from audio.games.skate.speech.rand import ManagerRand
from audio.games.skate.speech.tuning import EventTuning, SpeechTuning

__all__ = [
    "ManagerResult",
    "SpeechManager",
    "living_events_for_value",
    "living_request_words",
    "maincast_events_for_value",
    "maincast_request_words",
    "NOT_FOLLOW_SKIP",
    "CHANNEL_MAINCAST",
    "CHANNEL_LIVING",
]

CHANNEL_MAINCAST = 0
CHANNEL_LIVING = 1
NOT_FOLLOW_SKIP = frozenset({0, 294, 8318, 33245, 24752})
"""Not-follow entries with these event ids are skipped (gate step 3)."""

_TYPE_SECURITY = 0x40
_TYPE_BUM = 0x4000

_SIMPLE: dict[int, int] = {
    2: 8214,
    4: 8208,
    5: 8208,
    6: 8207,
    11: 8196,
    16: 8196,
    60: 8196,
    12: 8201,
    15: 8198,
    17: 8199,
    18: 8195,
    19: 8197,
    65: 8197,
    23: 8202,
    24: 8202,
    25: 8204,
    33: 8269,
    34: 8271,
    35: 8272,
    36: 8273,
    37: 8274,
    38: 8275,
    39: 8270,
    40: 8276,
    48: 8211,
    50: 8216,
    51: 8206,
    53: 8210,
    54: 8210,
    56: 8212,
    63: 8213,
    64: 8215,
    66: 8298,
    67: 8299,
}
_COIN: dict[int, tuple[int, int]] = {  # value -> (odd, even)
    10: (8220, 8209),
    14: (8194, 8198),
    20: (8224, 8217),
    21: (8224, 8217),
    22: (8224, 8217),
}


def living_events_for_value(value: int, type_bit: int, rng: ManagerRand) -> list[int]:
    """The living-world event a speech value requests (spec 2.3); draws ``rand()`` only when needed."""
    if value in (1, 3):
        if type_bit & _TYPE_SECURITY:
            return [8277]
        if type_bit & _TYPE_BUM:
            return [{1: 8247, 2: 8248, 0: 8214}[rng.rand() % 3]]
        return []
    if value in _COIN:
        odd, even = _COIN[value]
        return [odd if rng.rand() & 1 == 1 else even]
    e = _SIMPLE.get(value)
    return [e] if e is not None else []


_LIVING_WORDS: dict[int, tuple[int, ...]] = {8194: (0, 1, 2, 9)}
_LIVING_WORDS.update({e: (0, 1, 9) for e in (8197, 8199, 8206, 8214)})
_LIVING_WORDS.update({e: (0, 1, 2) for e in (8202, 8204, 8207, 8210, 8220)})
_LIVING_WORDS.update({e: (0, 1, 3) for e in (8212, 8213)})
_LIVING_WORDS.update({e: (0, 1, 4) for e in range(8269, 8277)})
_LIVING_WORDS.update({8282: (0, 1, 6), 8288: (0, 1, 6), 8291: (0, 1, 7)})

_MAINCAST_WORDS: dict[int, tuple[int, ...]] = {
    0: (1, 0, 2),
    1: (1, 0, 2),
    247: (0, 9, 1),
    251: (0, 1, 10),
    254: (1, 5, 0, 4),
    268: (0, 1, 11),
    280: (0, 1, 13),
    287: (1, 0, 4, 5),
    288: (1, 0, 4, 5),
}
_MAINCAST_WORDS.update({e: (0, 1, 12) for e in (271, 274, 275)})


def _pick(block: Sequence[int], idx: tuple[int, ...]) -> list[int]:
    return [int(block[i]) if i < len(block) else 0 for i in idx]


def living_request_words(event: int, block: Sequence[int]) -> list[int]:
    """The request words of a living-world event from the ped's block w0..w9 (spec 2.4)."""
    return _pick(block, _LIVING_WORDS.get(event, (0, 1)))


def maincast_request_words(event: int, block: Sequence[int]) -> list[int]:
    """The request words of a main-cast event from the pro's block w0..w13 (spec 2.6)."""
    return _pick(block, _MAINCAST_WORDS.get(event, (0, 1)))


def maincast_events_for_value(value: int, rng: ManagerRand, in_challenge: bool) -> tuple[bool, list[int]]:
    """``(stop the speaker's line first, events)`` for a pro's speech value (spec 2.6)."""
    if value == 29:
        return False, [141, 136]
    if value == 28:
        return False, ([] if in_challenge else [11])
    if value in (30, 51):
        return True, [115 if rng.rand() & 1 else 6]
    if value in (53, 54):
        return False, [77]
    return False, []


@dataclass(frozen=True)
class ManagerResult:
    """The outcome of one request.

    ``outcome``: "Accepted" (the library picked a line: ``choice.picks``) or a refusal:
    Repeat, Gap, NotFollow, Probability, Speed, Challenge, Timers, Flags, Zombie (the gate),
    or the library's UnknownEvent / Probability / Unsupported / NoRecord (``stage =
    "library"``; an unknown event is reported after the gate and its draw).
    """

    speaker: int
    event: int
    outcome: str
    reason: str = ""
    stage: str = "gate"
    channel: int = CHANNEL_LIVING
    words: tuple[int, ...] = ()
    choice: LineChoice | None = None
    tuning: EventTuning | None = None
    timeout: int = 0

    @property
    def accepted(self) -> bool:
        return self.outcome == "Accepted"


@dataclass
class SpeechManager:
    """The gate and the per-speaker timers, in front of one library per channel.

    Parameters
    ----------
    tuning:
        Per-event tuning (``default`` inherited).
    living:
        The living-world library (channel 1).
    maincast:
        The main-cast library (channel 0), optional.
    rng:
        The manager's ``rand()`` (:class:`MsvcRand` by default).
    """

    tuning: SpeechTuning
    living: SpeechLibrary | None = None
    maincast: SpeechLibrary | None = None
    rng: ManagerRand = field(default_factory=MsvcRand)
    player_speed: float = 0.0  # m/s
    zombie: bool = False
    challenge: int | None = None  # running challenge type
    game_flags: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.last: dict[tuple[int, int], float] = {}
        self.last_any: dict[int, float] = {}
        self._timer_origin = [0.0, 0.0]

    # -- timers ------------------------------------------------------------------------
    def since(self, speaker: int, event: int | None, now: float) -> float:
        """Seconds since ``speaker`` last started ``event`` (any event if None); missing = time 0.0."""
        t = self.last_any.get(speaker, 0.0) if event is None else self.last.get((speaker, event), 0.0)
        return now - t

    def line_started(self, speaker: int, event: int, now: float) -> None:
        """Restart last(speaker, event) and last(speaker, any)."""
        self.last[(speaker, event)] = now
        self.last_any[speaker] = now

    def reset_timer(self, which: str, now: float) -> None:
        """Restart timerA ("a") or timerB ("b") at ``now`` (our model; see the module docstring)."""
        self._timer_origin["ab".index(which)] = now

    def timer(self, which: str, now: float) -> float:
        return now - self._timer_origin["ab".index(which)]

    # -- the gate ----------------------------------------------------------------------
    def gate(
        self, speaker: int, event: int, tuning: EventTuning, now: float, repeat: float | None = None
    ) -> tuple[str, str]:
        """Steps 1-9 of spec 2.5: ``("", "")`` when passed, else ``(outcome, reason)``."""
        rep = tuning.repeat if repeat is None else repeat
        s = self.since(speaker, event, now)
        if s < rep:
            return "Repeat", f"{s:.3f} s < repeat {rep} s"
        if tuning.gap > 0:
            s = self.since(speaker, None, now)
            if s < tuning.gap:
                return "Gap", f"{s:.3f} s < gap {tuning.gap} s"
        for e, secs in tuning.not_follow:
            if e in NOT_FOLLOW_SKIP:
                continue
            s = self.since(speaker, e, now)
            if s <= secs:
                return "NotFollow", f"event {e}: {s:.3f} s <= {secs} s"
        roll = np.float32(self.rng.rand() % 1000) * np.float32(0.1)
        if not (roll < np.float32(tuning.probability) or roll >= np.float32(99.9)):
            return "Probability", f"roll {float(roll):.1f} >= {tuning.probability}%"
        kmh = np.float32(self.player_speed) * np.float32(3.6)
        if (tuning.min_kmh > 0 and kmh < tuning.min_kmh) or (tuning.max_kmh > 0 and kmh > tuning.max_kmh):
            return "Speed", f"{float(kmh):.1f} km/h outside {tuning.min_kmh}..{tuning.max_kmh}"
        if self.challenge is not None and self.challenge in tuning.challenge_exclude:
            return "Challenge", f"challenge {self.challenge} excludes the event"
        ta, tb = self.timer("a", now), self.timer("b", now)
        if (tuning.timer_a > 0 and ta < tuning.timer_a) or (tuning.timer_b > 0 and tb < tuning.timer_b):
            return "Timers", f"timerA {ta:.2f} / timerB {tb:.2f} s below {tuning.timer_a} / {tuning.timer_b}"
        blocked = [f for f in tuning.blocked_flags if f in self.game_flags]
        if blocked:
            return "Flags", f"game flag {blocked[0]} set"
        if self.zombie and not tuning.zombie_allowed:
            return "Zombie", "zombie mode"
        return "", ""

    def request(
        self, speaker: int, event: int, words: Sequence[int], now: float, channel: int = CHANNEL_LIVING
    ) -> ManagerResult:
        """Gate one event request and, if it passes, ask the channel's library for a line.

        The gate (with its rand() draw) runs before the library looks the event up: an event
        missing from the ``.evt`` table is reported by the library after the gate (spec 2.5)."""
        lib = self.living if channel == CHANNEL_LIVING else self.maincast
        ev = lib.event(event) if lib is not None else None
        words_t = tuple(int(w) for w in words)
        tuning = self.tuning.for_event(event)
        repeat = None
        if channel == CHANNEL_MAINCAST and speaker in (30, 31):
            repeat = tuning.maincast_repeat_31 if speaker == 31 else tuning.maincast_repeat_30
        outcome, reason = self.gate(speaker, event, tuning, now, repeat)
        timeout = ev.timeout if ev is not None else 0

        def result(
            outcome: str, reason: str, stage: str = "gate", choice: LineChoice | None = None
        ) -> ManagerResult:
            return ManagerResult(
                speaker,
                event,
                outcome,
                reason,
                stage=stage,
                channel=channel,
                words=words_t,
                choice=choice,
                tuning=tuning,
                timeout=timeout,
            )

        if outcome:
            return result(outcome, reason)
        if lib is None:
            return result("UnknownEvent", f"no library on channel {channel}", "library")
        choice = lib.start(event, words_t)
        if not choice.ok:
            return result(choice.outcome, choice.reason, "library", choice)
        return result("Accepted", f"record {choice.record}", choice=choice)

    def request_value(
        self, speaker: int, value: int, block: Sequence[int], type_bit: int, now: float
    ) -> list[ManagerResult]:
        """A regular ped's speech value: its event (spec 2.3), words (2.4), gate and library."""
        return [
            self.request(speaker, e, living_request_words(e, block), now)
            for e in living_events_for_value(value, type_bit, self.rng)
        ]

    def request_maincast_value(
        self, speaker: int, value: int, block: Sequence[int], now: float
    ) -> tuple[bool, list[ManagerResult]]:
        """A pro's speech value (spec 2.6): ``(stop the speaker's line first, results)``."""
        stop, events = maincast_events_for_value(value, self.rng, self.challenge is not None)
        return stop, [
            self.request(speaker, e, maincast_request_words(e, block), now, CHANNEL_MAINCAST) for e in events
        ]
