"""Speech playback scheduling: streams per channel, the 16-request queue, cuts (spec 4).

A channel (0 main cast, 1 living world, 3 announcer) has ``streams_per_channel`` streams;
stream ``k`` of channel ``c`` is slot ``c * streams_per_channel + k`` (the echo submix
instance). The port plays 2 streams per channel (the default); the retail library notes
say 16 request slots and 8 streams -- set ``streams_per_channel = 8`` for that reading.
Which is right is not settled.

:meth:`SpeechPlayer.request`: the first free stream (k0 first) -> Started; else, if the
request's tuning allows ``interrupt`` or ``interrupt_when_full`` and the lowest-priority
playing line (ties -> lowest k) has a lower priority, that line is Interrupted and the
request takes its stream; else Dropped when 16 requests are queued, else Queued. The
16-request queue is shared by all channels (our reading of the retail "16 request slots").
Priorities are the tuning's (+16), not the ``.evt``'s.

:meth:`SpeechPlayer.frame` (every console frame): queued requests age by one frame and
those older than their event's timeout (console frames) are Expired; free streams take the
queued request of highest priority, newest first among equals. A line plays its record's
clips back to back (:meth:`clip_done` starts the next; Finished after the last). A line is
Cut when its speaker's level stays <= 200 (of 32767) for more than 60 console frames.
:meth:`stop_ped` stops a ped's playing line (its speech value changed): Stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LineRequest", "Line", "PlayerEvent", "SpeechPlayer", "QUEUE_SIZE", "CUT_LEVEL", "CUT_FRAMES"]

QUEUE_SIZE = 16
CUT_LEVEL = 200
CUT_FRAMES = 60


@dataclass
class LineRequest:
    """A line waiting for or holding a stream. ``timeout`` in console frames; ``picks`` (clip, take)."""

    ped: int
    speaker: int
    event: int
    channel: int
    priority: int
    picks: tuple[tuple[int, int], ...]
    timeout: int
    interrupt: bool = False
    interrupt_when_full: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    seq: int = -1
    age: int = 0


@dataclass
class Line:
    """A playing line: its request, stream ``k``, slot, current clip index, low-level frame count."""

    request: LineRequest
    k: int
    slot: int
    clip_index: int = 0
    low_frames: int = 0

    @property
    def clip(self) -> tuple[int, int]:
        return self.request.picks[self.clip_index]


@dataclass(frozen=True)
class PlayerEvent:
    """One scheduling outcome: Queued, Interrupted, Dropped, Expired, Started, Cut, Finished, Stopped.

    ``Started`` is posted for every clip of a line (``clip_index`` 0 = the line starts).
    """

    outcome: str
    request: LineRequest
    slot: int | None = None
    clip_index: int | None = None
    reason: str = ""

    @property
    def clip(self) -> tuple[int, int] | None:
        if self.clip_index is None or self.clip_index >= len(self.request.picks):
            return None
        return self.request.picks[self.clip_index]


class SpeechPlayer:
    """Streams, queue and line lifetimes (no audio: the speech system plays the clips)."""

    def __init__(
        self,
        streams_per_channel: int = 2,
        queue_size: int = QUEUE_SIZE,
        cut_level: int = CUT_LEVEL,
        cut_frames: int = CUT_FRAMES,
    ) -> None:
        if streams_per_channel < 1:
            raise ValueError(f"streams_per_channel must be >= 1, got {streams_per_channel}")
        self.streams_per_channel = streams_per_channel
        self.queue_size = queue_size
        self.cut_level = cut_level
        self.cut_frames = cut_frames
        self.streams: dict[int, list[Line | None]] = {}
        self.queue: list[LineRequest] = []
        self._seq = 0

    def _channel(self, channel: int) -> list[Line | None]:
        return self.streams.setdefault(channel, [None] * self.streams_per_channel)

    def slot(self, channel: int, k: int) -> int:
        return channel * self.streams_per_channel + k

    def lines(self) -> Iterator[Line]:
        """Every playing line, by channel then stream."""
        for ch in sorted(self.streams):
            for line in self.streams[ch]:
                if line is not None:
                    yield line

    def _start(self, req: LineRequest, k: int) -> PlayerEvent:
        line = Line(req, k, self.slot(req.channel, k))
        self._channel(req.channel)[k] = line
        return PlayerEvent("Started", req, line.slot, 0)

    def _free(self, line: Line) -> None:
        self.streams[line.request.channel][line.k] = None

    def request(self, req: LineRequest) -> list[PlayerEvent]:
        """Place a new line (see the module docstring)."""
        req.seq, self._seq = self._seq, self._seq + 1
        req.age = 0
        if not req.picks:
            return [PlayerEvent("Dropped", req, reason="no clips")]
        streams = self._channel(req.channel)
        for k, line in enumerate(streams):
            if line is None:
                return [self._start(req, k)]
        low = min(range(len(streams)), key=lambda k: (streams[k].request.priority, k))  # type: ignore[union-attr]
        victim = streams[low]
        assert victim is not None
        if (req.interrupt or req.interrupt_when_full) and victim.request.priority < req.priority:
            self._free(victim)
            return [
                PlayerEvent(
                    "Interrupted",
                    victim.request,
                    victim.slot,
                    victim.clip_index,
                    reason=f"by event {req.event} priority {req.priority}",
                ),
                self._start(req, low),
            ]
        if len(self.queue) >= self.queue_size:
            return [PlayerEvent("Dropped", req, reason=f"queue holds {self.queue_size}")]
        self.queue.append(req)
        return [PlayerEvent("Queued", req)]

    def frame(self) -> list[PlayerEvent]:
        """One console frame: age and expire queued requests, then fill free streams."""
        out: list[PlayerEvent] = []
        keep: list[LineRequest] = []
        for req in self.queue:
            req.age += 1
            if req.age > req.timeout:
                out.append(PlayerEvent("Expired", req, reason=f"queued {req.age} frames > {req.timeout}"))
            else:
                keep.append(req)
        self.queue = keep
        for ch in sorted({r.channel for r in self.queue}):
            streams = self._channel(ch)
            for k in range(len(streams)):
                waiting = [r for r in self.queue if r.channel == ch]
                if streams[k] is None and waiting:
                    best = max(waiting, key=lambda r: (r.priority, r.seq))
                    self.queue.remove(best)
                    out.append(self._start(best, k))
        return out

    def clip_done(self, line: Line) -> PlayerEvent:
        """The line's current clip ended: Started (next clip) or Finished."""
        if line.clip_index + 1 < len(line.request.picks):
            line.clip_index += 1
            return PlayerEvent("Started", line.request, line.slot, line.clip_index)
        self._free(line)
        return PlayerEvent("Finished", line.request, line.slot, line.clip_index)

    def level(self, line: Line, level: float) -> PlayerEvent | None:
        """Feed the speaker's level this frame; Cut after more than ``cut_frames`` frames <= ``cut_level``."""
        line.low_frames = line.low_frames + 1 if level <= self.cut_level else 0
        if line.low_frames > self.cut_frames:
            self._free(line)
            return PlayerEvent(
                "Cut",
                line.request,
                line.slot,
                line.clip_index,
                reason=f"level <= {self.cut_level} for {line.low_frames} frames",
            )
        return None

    def release(self, line: Line) -> None:
        """Free ``line``'s stream without an outcome (its clip could not be played: a fault)."""
        self._free(line)

    def stop_ped(self, ped: int, reason: str = "new speech value") -> list[PlayerEvent]:
        """Stop every line ``ped`` is playing (Stopped)."""
        out = []
        for line in list(self.lines()):
            if line.request.ped == ped:
                self._free(line)
                out.append(PlayerEvent("Stopped", line.request, line.slot, line.clip_index, reason=reason))
        return out
