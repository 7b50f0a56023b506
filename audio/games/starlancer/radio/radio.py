"""The radio (spec section 6): modes, the queue, the window pre-roll, film flags, gates, the voice.

All times are game ticks (100 Hz). A line said in mode **now** opens the comms window, stops the
line playing and starts the film; if a film was already playing the speech starts at once, else
it waits the pre-roll (default 92 ticks; the spec's "a third of a second" conflicts: a setting)
with the film held. Mode **queued** appends to the 5-line queue (a sixth is dropped); **if-idle**
appends only when nothing plays or waits. Each radio frame, while lines wait, the window is shut and
no speech plays, the next line is taken: dropped if its expiry tick has passed, else said now.

Film flags: bit 0 loop, bit 1 hold (after the face film ends the dead-channel static loops until the
line ends), bit 2 own palette, bit 3 no line. "Film playing" is true from the say (pre-roll
included) until the line ends; "speech playing" only while the speech voice plays: that is why
``WaitForMovie`` and ``WaitForSpeech`` differ right after a Comms command.

Gates (``DisableGenericComms``, ``DisableTaunts``) refuse remarks only; script comms ignore them.
One exclusive speech voice at volume ``round(speech x master / 127)`` (Miles 0..127).

Our settings for unknowns: ``once_film_ticks`` (the face film's length when played once: films are
not decoded), ``expired_when`` (``>``: a line expires when now > its expiry tick), and a line of
nobody without a film plays its speech at once with no window.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

__all__ = [
    "FLAG_HOLD",
    "FLAG_LOOP",
    "FLAG_NO_LINE",
    "FLAG_PALETTE",
    "MODES",
    "NOBODY",
    "REMARK_GATES",
    "SPEECH_RATE",
    "TICK_HZ",
    "Line",
    "Presenter",
    "Radio",
    "RadioSettings",
]

FLAG_LOOP, FLAG_HOLD, FLAG_PALETTE, FLAG_NO_LINE = 1, 2, 4, 8
MODES = {"now": 0, "queued": 1, "if_idle": 2}
NOBODY = -1
SPEECH_RATE = 22_050
TICK_HZ = 100
STATIC_FILM = "pilots\\static.fm8"
REMARK_GATES = {"generic": "generic", "taunt": "taunts", "jump": None, "landing": None, "eject": None}
"""Remark kind -> the gate that mutes it (jump reminders, the landing reminder and ejection lines
pass DisableGenericComms, spec 6.6)."""


@dataclass
class Line:
    """A radio line: speech file (game name), speaker, film, flags, expiry tick (-1 never)."""

    speech: str
    speaker: str = "nobody"
    speaker_kind: str = "nobody"  # ship | pilot | nobody
    speaker_object: int = NOBODY  # ship slot, 0xFFFF + pilot face, or -1
    film: str = ""
    flags: int = FLAG_LOOP | FLAG_PALETTE
    expiry: int = -1
    head: int = 0
    source: str = "script"
    said_at: int = 0


@dataclass(frozen=True)
class RadioSettings:
    """Documented settings (defaults: the game's values where known)."""

    preroll_ticks: int = 92
    queue_size: int = 5
    once_film_ticks: int = 150
    speech_volume: int = 127
    master_volume: int = 127
    expired_when: str = ">"
    reports: int = 5
    static_bed: bool = False
    """OURS, not the game's (off by default): a noise bed while the dead channel's film holds. The
    game's ``static.fm8`` is a face film with no sound (spec 11.13)."""

    def volume(self) -> int:
        """Miles volume 0..127 of the speech voice."""
        return round(self.speech_volume * self.master_volume / 127)


class Presenter(Protocol):
    """What the radio plays through (the system's engine voices, or a test double)."""

    def load(self, speech: str) -> np.ndarray | None: ...
    def start_speech(self, line: Line, pcm: np.ndarray, volume: int) -> Any: ...
    def stop_speech(self, handle: Any) -> None: ...
    def start_static(self, line: Line, ticks: int) -> Any: ...
    def stop_static(self, handle: Any) -> None: ...


@dataclass
class _Window:
    line: Line
    start_at: int  # tick the speech starts (end of the pre-roll)
    face_end: int | None = None
    film_on: bool = True
    static: Any = None
    pcm: np.ndarray | None = None  # the speech waiting for the pre-roll to end
    silent: bool = False  # the speech is missing: the window closes when the pre-roll ends


class Radio:
    """The radio state machine; ``decide(outcome, **detail)`` logs every decision."""

    def __init__(
        self, presenter: Presenter, decide: Callable[..., Any], settings: RadioSettings | None = None
    ) -> None:
        self.p, self.decide = presenter, decide
        self.s = settings or RadioSettings()
        self.queue: deque[Line] = deque()
        self.reports: list[tuple[int, Line]] = []
        self.window: _Window | None = None
        self.speech: Line | None = None
        self.speech_handle: Any = None
        self.speech_end = 0
        self.generic_disabled = False
        self.taunts_disabled = False
        self.now = 0

    # -- queries -----------------------------------------------------------------------------
    def film_playing(self) -> bool:
        """The comms window shows a film (held through the pre-roll, face or static)."""
        return self.window is not None and self.window.film_on

    def speech_playing(self) -> bool:
        return self.speech is not None

    def busy(self) -> bool:
        """``radio_busy``: speech playing or lines waiting."""
        return self.speech_playing() or bool(self.queue)

    # -- saying ------------------------------------------------------------------------------
    def say(self, line: Line, mode: str | int = "now") -> str:
        """Say a line in ``mode`` (now / queued / if_idle); returns the outcome logged."""
        m = MODES[mode] if isinstance(mode, str) else int(mode)
        line = replace(line, said_at=self.now)
        if m == 0:
            return self._say_now(line)
        if m == 2 and self.busy():
            self._log("Dropped", line, reason="not idle (if-idle mode)")
            return "Dropped"
        if len(self.queue) >= self.s.queue_size:
            self._log("Dropped", line, reason=f"queue full ({self.s.queue_size} lines)")
            return "Dropped"
        self.queue.append(line)
        self._log("Queued", line, depth=len(self.queue), mode="queued" if m == 1 else "if_idle")
        return "Queued"

    def remark(self, line: Line, kind: str, mode: str | int = "queued") -> str:
        """An autonomous remark of ``kind`` (generic, taunt, jump, landing, eject): gated, then said."""
        gate = REMARK_GATES.get(kind, "generic")
        if (gate == "generic" and self.generic_disabled) or (gate == "taunts" and self.taunts_disabled):
            self._log(
                "Gated",
                line,
                reason=f"{'DisableGenericComms' if gate == 'generic' else 'DisableTaunts'}"
                f" is set ({kind} remark)",
            )
            return "Gated"
        return self.say(replace(line, source=f"remark:{kind}"), mode)

    def set_gate(self, gate: str, disabled: bool) -> None:
        if gate == "generic":
            self.generic_disabled = bool(disabled)
        elif gate in ("taunts", "taunt"):
            self.taunts_disabled = bool(disabled)
        else:
            raise ValueError(f"unknown gate {gate!r} (generic | taunts)")
        self.decide("Gate", gate=gate, disabled=bool(disabled), speaker="radio")

    def play_speech(self, speech: str) -> bool:
        """``PlaySpeech`` (11.12): stop whatever speech plays, play this at once on its own buffer (no
        window, film or speaker); a line waiting for the window keeps its own and still starts when
        its pre-roll ends. A missing file plays nothing (the speech playing is stopped all the same)."""
        line = Line(speech, source="PlaySpeech", film="", said_at=self.now)
        pcm = self._load(line)
        if self.speech is not None:
            w = self.window
            self.p.stop_speech(self.speech_handle)
            self._log("Interrupted", self.speech, reason="stopped by PlaySpeech")
            if w is not None and w.line is self.speech:
                self._log("WindowClosed", w.line, reason="its line was stopped by PlaySpeech")
                self.window = None
            self.speech, self.speech_handle = None, None
        if pcm is None:
            return False
        self._start(line, pcm)
        return True

    def reset(self) -> None:
        """``radio_reset`` at mission start: empty the queue, clear the gates, stop the line."""
        self.queue.clear()
        self.reports.clear()
        self.generic_disabled = self.taunts_disabled = False
        self._end_line("radio reset")
        self.decide("Reset", speaker="radio")

    def _say_now(self, line: Line) -> str:
        pcm = None if line.flags & FLAG_NO_LINE else self._load(line)
        had_film = self.film_playing()
        self._end_line("preempted by a new line", keep_window=True)
        if line.speaker_kind == "nobody" and not line.film:
            self.window = None
            self._log("Said", line, mode="now", window="none (nobody, no film)")
            if pcm is not None:  # a no-line say from nobody without a film shows and plays nothing
                self._start(line, pcm)
            return "Said"
        start_at = self.now if had_film and not line.flags & FLAG_NO_LINE else self.now + self.s.preroll_ticks
        self.window = _Window(line, start_at, pcm=pcm, silent=pcm is None)
        self._log("Said", line, mode="now", flags=line.flags, film=line.film, preroll=start_at - self.now)
        if start_at == self.now and pcm is not None:
            self.window.pcm = None
            self._start(line, pcm)
        return "Said"

    def _load(self, line: Line) -> np.ndarray | None:
        pcm = self.p.load(line.speech)
        if pcm is None:
            self._log(
                "MissingSpeech", line, reason="no such msspeech.hog member: the window opens, nothing plays"
            )
        return pcm

    # -- playing ----------------------------------------------------------------------------
    def _start(self, line: Line, pcm: np.ndarray) -> None:
        self.speech = line
        self.speech_handle = self.p.start_speech(line, pcm, self.s.volume())
        self.speech_end = self.now + max(1, math.ceil(len(pcm) * TICK_HZ / SPEECH_RATE))
        w = self.window
        if (
            w is not None
            and w.line is line
            and line.flags & FLAG_HOLD
            and not line.flags & FLAG_LOOP
            or w is not None
            and w.line is line
            and not line.flags & (FLAG_LOOP | FLAG_HOLD)
        ):
            w.face_end = self.now + self.s.once_film_ticks
        self._log("Started", line, ticks=self.speech_end - self.now, volume=self.s.volume())

    def _end_line(self, reason: str, keep_window: bool = False) -> None:
        if self.speech is not None:
            self.p.stop_speech(self.speech_handle)
            self._log("Interrupted", self.speech, reason=reason)
            self.speech, self.speech_handle = None, None
        w = self.window
        if w is not None:
            if w.static is not None and w.static is not True:
                self.p.stop_static(w.static)
            if not keep_window:
                self._log("WindowClosed", w.line, reason=reason)
            self.window = None

    def next_change(self, now: int) -> int | None:
        """The first game tick, ``now`` or later, whose :meth:`tick` changes anything if nothing
        is said first: the window's line starting (or closing with no line) after its pre-roll,
        its face film ending, the speech ending; None when none is due."""
        due = []
        w = self.window
        if w is not None:
            if w.pcm is not None or w.line.flags & FLAG_NO_LINE or w.silent:
                due.append(w.start_at)
            if w.face_end is not None and w.film_on and w.static is None:
                due.append(w.face_end)
        if self.speech is not None:
            due.append(self.speech_end)
        return max(min(due), now) if due else None

    def next_frame_change(self, now: int) -> int | None:
        """The first game tick, ``now`` or later, from which :meth:`frame` and
        :meth:`step_reports` change anything if nothing is said and the window and speech stay
        as they are: at once while a line waits with the window shut and no speech, else when
        the first report falls due; None when neither can."""
        if self.queue and self.window is None and self.speech is None:
            return now
        return max(min(due for due, _ in self.reports) + 1, now) if self.reports else None

    def tick(self, now: int) -> None:
        """Advance to game tick ``now`` (100 Hz): pre-roll, film phases, the line's end."""
        self.now = now
        w = self.window
        if w is not None and w.pcm is not None and now >= w.start_at:
            pcm, w.pcm = w.pcm, None
            if self.speech is not None:  # a PlaySpeech line: the window's line ends it
                self.p.stop_speech(self.speech_handle)
                self._log("Interrupted", self.speech, reason="the window's line starts")
                self.speech, self.speech_handle = None, None
            self._start(w.line, pcm)
        if w is not None and w.face_end is not None and now >= w.face_end and w.film_on and w.static is None:
            if w.line.flags & FLAG_HOLD:
                left = max(1, self.speech_end - now)
                w.static = self.p.start_static(w.line, left) if self.s.static_bed else True
                self._log(
                    "Static",
                    w.line,
                    film=STATIC_FILM,
                    reason="face film ended: the dead channel's film loops until the line ends"
                    + (" (with our opt-in noise bed)" if self.s.static_bed else " (a film: no sound)"),
                    ticks=left,
                )
            else:
                w.film_on = False
                self._log("FilmEnded", w.line, reason="film played once: the window closes")
        if self.speech is not None and now >= self.speech_end:
            line = self.speech
            self.speech, self.speech_handle = None, None
            self._log("Ended", line)
            if self.window is not None:
                if self.window.static is not None and self.window.static is not True:
                    self.p.stop_static(self.window.static)
                self._log("WindowClosed", self.window.line, reason="the line ended")
                self.window = None
        if (
            w is not None
            and w is self.window
            and now >= w.start_at
            and (w.line.flags & FLAG_NO_LINE or w.silent)
        ):
            why = (
                "no line (flag bit 3)"
                if w.line.flags & FLAG_NO_LINE
                else "its speech is missing: nothing to play"
            )
            self._log("WindowClosed", w.line, reason=why)
            self.window = None

    def frame(self, now: int) -> None:
        """``radio_frame`` (11.13): at most one waiting line a frame, while the window is shut and no
        speech plays: dropped past its expiry, else said; a nobody line plays nothing."""
        self.now = now
        if self.queue and self.window is None and self.speech is None:
            line = self.queue.popleft()
            if line.expiry >= 0 and (now > line.expiry if self.s.expired_when == ">" else now >= line.expiry):
                self._log("Expired", line, expiry=line.expiry, waited=now - line.said_at)
            elif line.speaker_kind == "nobody":
                self._log(
                    "Said", line, mode="queued", reason="a queued line of nobody: the window stays empty"
                )
            else:
                self._say_now(line)

    def report(self, line: Line, due: int) -> str:
        """A delayed report (11.14): said after game tick ``due`` (strictly); none free: dropped."""
        if len(self.reports) >= self.s.reports:
            self._log("Dropped", line, reason=f"report slots full ({self.s.reports})")
            return "Dropped"
        self.reports.append((due, line))
        self._log("Reported", line, due=due)
        return "Reported"

    def step_reports(self, now: int, silent: Callable[[Line], str]) -> None:
        """Each frame after ``radio_frame``: reports past due leave their slot and are queued (mode 1)
        unless ``silent(line)`` gives a reason (nobody's, object 0x3E9, an exploding ship)."""
        due = [r for r in self.reports if now > r[0]]
        self.reports = [r for r in self.reports if now <= r[0]]
        for _, line in due:
            why = "nobody's report" if line.speaker_kind == "nobody" else silent(line)
            if why:
                self._log("Dropped", line, reason=why)
            else:
                self.say(line, "queued")

    def _log(self, outcome: str, line: Line, **detail: Any) -> None:
        self.decide(outcome, speaker=line.speaker, file=line.speech, source=line.source, **detail)

    def snapshot(self) -> dict[str, list[str]]:
        """Panels for a live UI: the window, the speech voice and the queue."""
        w = self.window
        win = (
            ["shut"]
            if w is None
            else [
                f"{w.line.speaker}: {w.line.speech} flags {w.line.flags}"
                + (" pre-roll" if self.speech is None and self.now < w.start_at else "")
                + (" static" if w.static is not None else "")
                + ("" if w.film_on else " (film ended)")
            ]
        )
        sp = ["idle"] if self.speech is None else [f"{self.speech.speech} until tick {self.speech_end}"]
        q = [
            f"{ln.speaker}: {ln.speech}" + (f" expires {ln.expiry}" if ln.expiry >= 0 else "")
            for ln in self.queue
        ] or ["(empty)"]
        gates = [
            f"generic {'off' if self.generic_disabled else 'on'}, "
            f"taunts {'off' if self.taunts_disabled else 'on'}"
        ]
        return {"window": win, "speech": sp, "queue": q, "gates": gates}


@dataclass
class NullPresenter:
    """A presenter without audio: every line is ``seconds`` long (for tests and dry runs)."""

    seconds: dict[str, float] = field(default_factory=dict)
    default: float = 2.0
    missing: set[str] = field(default_factory=set)
    log: list[tuple[str, str]] = field(default_factory=list)

    def load(self, speech: str) -> np.ndarray | None:
        if speech in self.missing:
            return None
        return np.zeros(int(self.seconds.get(speech, self.default) * SPEECH_RATE), np.float32)

    def start_speech(self, line: Line, pcm: np.ndarray, volume: int) -> Any:
        self.log.append(("speech", line.speech))
        return line.speech

    def stop_speech(self, handle: Any) -> None:
        self.log.append(("stop", str(handle)))

    def start_static(self, line: Line, ticks: int) -> Any:
        self.log.append(("static", line.speech))
        return "static"

    def stop_static(self, handle: Any) -> None:
        self.log.append(("static_stop", str(handle)))
