"""The reactive-chatter queue, exactly as seed 000 derives it, frame by frame at 60 Hz.

Game facts implemented here (function names from the seed):

* fire (``sub_8220FA98``): enable flag, speaker lookup, phase index ``phase - 1``, event
  lookup, then the roll ``rand01() * 100.0 > Probability`` -> no fire.
* pick (``sub_82210670``): duplicate suppression against every listed node of the same
  (speaker, rule) — pending, playing or cooling down; eligible lines = bits clear in the
  used mask; ``f = eligible_count * rand01()``, walk the eligible bits subtracting 1.0 until
  the counter runs out or ``f`` drops to 0.
* enqueue (``sub_822109B0``): a pool of 128 nodes (else the bark is dropped); Priority >= 10
  pushes to the front, otherwise insert before the first node with a strictly smaller
  Priority (the list stays descending, FIFO among equals).
* retire (``sub_82210C38``): cooldown ``(int)(IntervalFluctuation * rand01() + Interval)``
  frames (one float32 rounding, like ``fmadds``) kept in the node, state 0x20, the pool slot
  still held; each tick decrements it and frees the node at <= 0. One-shot update
  ``used |= (1 << index) & yes_mask``.
* ducking query (``sub_82210AF0``): the largest ducking level among listed nodes of higher
  Priority whose state is not 0x10.

OUR CHOICES (the seed does not establish them):

* States: 0x00 pending -> 0x10 playing -> 0x20 cooling. Presentation paths: Pattern < 3
  (Sound, Log) is the radio path, Pattern >= 3 (Window, Demo) the comm-window path; each path
  plays one line at a time and the two may overlap. Each tick, after the playing/cooling
  nodes are advanced, every pending node whose path is idle starts, in list order.
* A line lasts its audio length in frames (``ceil(samples * 60 / sample_rate)``, at least 1); with
  ``hold_effective_time`` (default) it also holds its path for at least EffectiveTime frames
  (node +16 holds EffectiveTime while the line plays, as the seed reports).
* Ducking level (+20): raised to 1 when a node starts playing while a line of lower
  Priority plays on the other path, or while it waits behind a lower-Priority line on its
  own path; the presenter then holds a duck at the node's Priority on the radio bus. It is
  released (and reset to 0) when that node retires — the seed's "[node+20] == 1" sweep.
  A playing line counts as ducked while the ducking query for it is > 0 or a playing line of
  higher Priority holds level 1. The seed's stop/resume calls (``sub_822168E8``,
  ``sub_82217980``) are modelled only as stopping the voice and releasing the duck.
* The pick walk stops at ``f <= 0.0`` (the seed says "drops to 0"); all float maths is
  float32 like the game's single-precision code.
* Speaker entries are keyed by the roster name without ``Character`` (``ELLEN``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from audio.games.sylpheed.chatter.rand import GameRand
from audio.games.sylpheed.chatter.rules import Rule, RuleMap

__all__ = [
    "STATE_PENDING",
    "STATE_PLAYING",
    "STATE_COOLING",
    "POOL_SIZE",
    "FRONT_PUSH_PRIORITY",
    "PATH_SOUND",
    "PATH_WINDOW",
    "Node",
    "Presenter",
    "ChatterQueue",
    "pick_index",
    "cooldown_frames",
    "frames_of",
]

STATE_PENDING, STATE_PLAYING, STATE_COOLING = 0x00, 0x10, 0x20
POOL_SIZE = 128
FRONT_PUSH_PRIORITY = 10
PATH_SOUND, PATH_WINDOW = "sound", "window"
FRAME_RATE = 60


def frames_of(samples: int, sample_rate: int) -> int:
    """Console frames (60 Hz) a take of ``samples`` at ``sample_rate`` Hz lasts:
    ``ceil(samples * 60 / sample_rate)``, >= 1."""
    return max(1, -(-samples * FRAME_RATE // max(1, sample_rate)))


def pick_index(used: int, count: int, r: float) -> int | None:
    """The uniform pick walk: the chosen message index, or None if nothing is eligible.

    ``f = eligible * r`` (float32); for each eligible bit in ascending order the bit is
    taken and 1.0 subtracted; the walk stops when ``f <= 0.0`` or the eligible run out.
    """
    eligible = [i for i in range(count) if not used >> i & 1]
    if not eligible:
        return None
    f = np.float32(len(eligible)) * np.float32(r)
    chosen = eligible[0]
    for i in eligible:
        chosen = i
        f = np.float32(f - np.float32(1.0))
        if f <= 0.0:
            break
    return chosen


def cooldown_frames(rule: Rule, r: float) -> int:
    """``(int)(IntervalFluctuation * r + Interval)`` with one float32 rounding (``fmadds``)."""
    return int(np.float32(float(np.float32(rule.fluctuation)) * r + float(np.float32(rule.interval))))


@dataclass(eq=False)
class Node:
    """A 68-byte queue node (game offsets in the comments) plus our bookkeeping."""

    slot: int  # pool index
    message: str  # +4 the chosen message id
    speaker: str  # +8 the speaker entry
    rule: Rule  # +12
    timer: int  # +16 EffectiveTime while pending/playing, then the cooldown
    priority: int  # +22
    pattern: int  # +23 (also the in-use flag)
    index: int  # +25 the chosen message index
    duck: int = 0  # +20 ducking level
    byte21: int = 0  # +21
    state: int = STATE_PENDING  # +24
    remaining: int = 0  # ours: frames of audio left while playing
    ducked: bool = False  # ours: currently attenuated by a higher-priority line
    handle: Any = None  # ours: the presenter's handle (a voice)
    queued_frame: int = 0  # ours

    @property
    def path(self) -> str:
        return PATH_SOUND if self.pattern < 3 else PATH_WINDOW


class Presenter(Protocol):
    """What the queue asks of its host (the engine system, or a test double)."""

    def start_line(self, node: Node) -> int:
        """Start the node's line; return its audio length in 60 Hz frames (>= 1)."""
        ...

    def stop_line(self, node: Node) -> None: ...

    def duck(self, node: Node, on: bool) -> None:
        """Hold (``on``) or release a duck at ``node.priority`` on the radio bus."""
        ...


Decide = Callable[..., Any]


@dataclass
class ChatterQueue:
    """The chatter manager's state and logic (``this`` in the seed).

    ``decide(outcome, **detail)`` receives every decision; ``presenter`` plays lines.
    """

    rand: GameRand
    presenter: Presenter
    decide: Decide
    pool_size: int = POOL_SIZE
    hold_effective_time: bool = True
    enabled: bool = True  # [this+8843]
    phase: int = 1  # [this+8816]
    speakers: dict[str, list[RuleMap | None]] = field(default_factory=dict)  # [this+8820]
    nodes: list[Node] = field(default_factory=list)  # list at [this+8736]
    frame: int = 0

    def __post_init__(self) -> None:
        self._pool: list[Node | None] = [None] * self.pool_size

    # -- setup ---------------------------------------------------------------------------
    def set_speaker(self, speaker: str, maps: list[RuleMap | None]) -> None:
        """Install a speaker entry: ``maps[phase - 1]`` is the rule map used in that phase.

        Entries are keyed by the roster name without its ``Character`` prefix
        (``CharacterELLEN`` -> ``ELLEN``)."""
        self.speakers[speaker.removeprefix("Character")] = list(maps)

    def lookup_speaker(self, speaker: str) -> str | None:
        """The entry key for ``speaker`` (``ELLEN`` or ``CharacterELLEN``)."""
        key = speaker.removeprefix("Character")
        return key if key in self.speakers else None

    @property
    def live(self) -> int:
        """Occupied pool slots ([this+8740])."""
        return sum(n is not None for n in self._pool)

    # -- fire ----------------------------------------------------------------------------
    def fire(self, speaker: str, event: str) -> str:
        """Raise ``event`` for ``speaker``; returns the outcome code it logged."""
        base = {"speaker": speaker, "event": event}
        if not self.enabled:
            return self._log("NotLoaded", reason="disabled", **base)
        key = self.lookup_speaker(speaker)
        if key is None:
            return self._log("NotLoaded", reason="speaker", **base)
        base["speaker"] = key
        maps = self.speakers[key]
        idx = (self.phase - 1) & 0xFF
        rules = maps[idx] if idx < len(maps) else None
        if rules is None:
            return self._log("NotLoaded", reason="phase", phase=self.phase, **base)
        rule = rules.get(event)
        if rule is None:
            return self._log("NotLoaded", reason="event", **base)
        roll = self.rand.rand01() * 100.0
        if roll > rule.probability:
            return self._log("RollFailed", roll=roll, probability=rule.probability, **base)
        return self._pick(key, rule, base)

    def _pick(self, speaker: str, rule: Rule, base: dict[str, Any]) -> str:
        for n in self.nodes:
            if n.speaker == speaker and n.rule is rule:
                stage = "cooling" if n.state == STATE_COOLING else "pending"
                return self._log("Duplicate", detail=stage, state=n.state, **base)
        count = len(rule.messages)
        if not any(not rule.used >> i & 1 for i in range(count)):
            return self._log("NoEligible", used=rule.used, count=count, **base)
        index = pick_index(rule.used, count, self.rand.rand01())
        assert index is not None
        return self._enqueue(speaker, rule, index, base)

    def _enqueue(self, speaker: str, rule: Rule, index: int, base: dict[str, Any]) -> str:
        message = rule.messages[index]
        slot = next((i for i, n in enumerate(self._pool) if n is None), None)
        if slot is None:
            return self._log("PoolFull", message=message, line=message, index=index, **base)
        node = Node(
            slot,
            message,
            speaker,
            rule,
            rule.effective_time,
            rule.priority,
            rule.pattern,
            index,
            queued_frame=self.frame,
        )
        self._pool[slot] = node
        if rule.priority >= FRONT_PUSH_PRIORITY:
            self.nodes.insert(0, node)
        else:
            at = next((i for i, n in enumerate(self.nodes) if n.priority < rule.priority), len(self.nodes))
            self.nodes.insert(at, node)
        return self._log(
            "Queued",
            message=message,
            line=message,
            index=index,
            priority=rule.priority,
            pattern=rule.pattern,
            slot=slot,
            **base,
        )

    # -- tick ----------------------------------------------------------------------------
    def ducking_query(self, node: Node) -> int:
        """Largest ducking level among listed nodes of higher Priority not in state 0x10."""
        return max(
            (n.duck for n in self.nodes if n.priority > node.priority and n.state != STATE_PLAYING), default=0
        )

    def playing(self) -> list[Node]:
        return [n for n in self.nodes if n.state == STATE_PLAYING]

    def next_change(self, frame: int, last: int) -> int | None:
        """The first frame, ``frame`` or later, whose :meth:`tick` changes anything when no
        bark comes first (the last tick was at frame ``last``); None when nothing is listed.

        A pending node starts, or raises its duck, at the next tick unless its path plays a
        line of its Priority or higher (then only that line's retirement can change it); a
        playing node retires when its audio and (``hold_effective_time``) its EffectiveTime
        have run out; a cooling node frees its slot when its cooldown has."""
        if not self.nodes:
            return None
        busy = {n.path: n for n in self.nodes if n.state == STATE_PLAYING}
        due = None
        for n in self.nodes:
            if n.state == STATE_PENDING:
                cur = busy.get(n.path)
                if cur is None or (cur.priority < n.priority and not n.duck):
                    return frame
                continue
            if n.state == STATE_COOLING:
                left = n.timer
            else:
                left = max(n.remaining, n.timer) if self.hold_effective_time else n.remaining
            at = last + max(left, 1)
            due = at if due is None or at < due else due
        return None if due is None else max(due, frame)

    def tick(self, frame: int, elapsed: int = 1) -> None:
        """Advance to 60 Hz frame ``frame``, ``elapsed`` frames after the last tick: cool
        down, finish, start, duck."""
        self.frame = frame
        for node in list(self.nodes):
            if node.state == STATE_COOLING:
                node.timer -= elapsed
                if node.timer <= 0:
                    self.nodes.remove(node)
                    node.pattern = 0
                    self._pool[node.slot] = None
            elif node.state == STATE_PLAYING:
                node.remaining -= elapsed
                node.timer -= elapsed
                if node.remaining <= 0 and (not self.hold_effective_time or node.timer <= 0):
                    self._retire(node)
        busy = {n.path: n for n in self.nodes if n.state == STATE_PLAYING}
        for node in list(self.nodes):
            if node.state != STATE_PENDING:
                continue
            cur = busy.get(node.path)
            if cur is None:
                self._start(node)
                busy[node.path] = node
            elif cur.priority < node.priority and not node.duck:
                self._raise_duck(node, [cur])
        self._update_ducked()

    def _raise_duck(self, node: Node, under: list[Node]) -> None:
        node.duck = 1
        self.presenter.duck(node, True)
        self._log(
            "Ducked",
            by=node.message,
            speaker=node.speaker,
            priority=node.priority,
            waiting=node.state == STATE_PENDING,
            lines=[f"{n.speaker}:{n.message}" for n in under],
        )

    def _start(self, node: Node) -> None:
        node.state = STATE_PLAYING
        node.remaining = max(1, int(self.presenter.start_line(node)))
        self._log(
            "Started",
            speaker=node.speaker,
            event=node.rule.event,
            message=node.message,
            line=node.message,
            index=node.index,
            priority=node.priority,
            pattern=node.pattern,
            frames=node.remaining,
            waited=self.frame - node.queued_frame,
        )
        lower = [n for n in self.playing() if n is not node and n.priority < node.priority]
        if lower and not node.duck:
            self._raise_duck(node, lower)

    def _update_ducked(self) -> None:
        playing = self.playing()
        for n in playing:
            n.ducked = self.ducking_query(n) > 0 or any(
                m.duck and m.priority > n.priority for m in playing if m is not n
            )

    def _retire(self, node: Node) -> None:
        self.presenter.stop_line(node)
        rule = node.rule
        before = rule.used
        rule.used = ((1 << node.index) & rule.yes_mask) | rule.used
        self._log(
            "Finished",
            speaker=node.speaker,
            event=rule.event,
            message=node.message,
            line=node.message,
            index=node.index,
        )
        if rule.used != before:
            self._log(
                "OneShotSpent",
                speaker=node.speaker,
                event=rule.event,
                message=node.message,
                index=node.index,
                used=rule.used,
            )
        node.timer = cooldown_frames(rule, self.rand.rand01())
        node.state = STATE_COOLING
        node.ducked = False
        self._log(
            "Cooldown",
            speaker=node.speaker,
            event=rule.event,
            frames=node.timer,
            seconds=round(node.timer / FRAME_RATE, 4),
        )
        if node.duck == 1:
            self.presenter.duck(node, False)
            node.duck = 0

    def _log(self, outcome: str, **detail: Any) -> str:
        self.decide(outcome, frame=self.frame, **detail)
        return outcome
