"""The mission-script VM's values, threads, timers and ship states (shared by :mod:`.vm`,
:mod:`.vm_ops`, :mod:`.vm_commands` and :mod:`.triggers`, which import them from here so the
interpreter's modules form no import cycle)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_THREADS", "MAX_TIMERS", "U32", "Frame", "Ref", "ShipState", "Thread", "Timer", "show", "u32"]

MAX_THREADS = 32
"""Script threads the VM runs at once."""
MAX_TIMERS = 16
"""Timer entries (11.4)."""
U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Ref:
    """A record reference: ``kind`` (ship, flight_group, squad, curve, section19, component), index."""

    kind: str
    n: int
    c: int = 0xFF

    def address(self) -> int:
        base = {
            "ship": 0x10000000,
            "flight_group": 0x20000000,
            "squad": 0x30000000,
            "curve": 0x40000000,
            "section19": 0x50000000,
            "component": 0x10000000,
        }[self.kind]
        return base + self.n * 0x100 + (self.c if self.kind == "component" else 0)


def u32(v: Any) -> int:
    """A value as the VM's unsigned 32-bit number (refs by a stable pseudo-address, strings by CRC)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v & U32
    if isinstance(v, Ref):
        return v.address()
    if isinstance(v, str):
        return zlib.crc32(v.encode("latin-1", "replace")) | 0x80000000
    return 0


@dataclass
class Frame:
    """A call record: where to return and the caller's block, limit and arguments."""

    ret_ip: int
    block: int
    limit: int
    args: list[Any] | None


@dataclass
class Thread:
    """One script thread (``ip`` absolute in the script section); ``args`` None = no frame."""

    slot: int
    label: str
    block: int
    limit: int
    ip: int
    trigger: int | None = None
    locals: list[Any] = field(default_factory=lambda: [0] * 5)
    args: list[Any] | None = None
    stack: list[Any] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    wake: int = 0
    interrupted: bool = False
    done: bool = False
    select: tuple[str, int] | None = None
    result: Any = 0
    components: list[int] = field(default_factory=list)
    logged: int = 0
    spent: int = 0
    poll: int | None = None
    """The waiting command (``WaitForSpeech`` ...) this thread last yielded in because its condition
    held, until it runs again (None: it yielded otherwise or runs): re-run while the condition
    holds, it leaves the thread as it is (:meth:`Vm.next_change <.vm.Vm.next_change>`)."""

    frame_words: int = 0

    def depth(self) -> int:
        """Stack dwords in use: the values plus each call record (4 dwords and its arguments)."""
        return len(self.stack) + self.frame_words


@dataclass
class Timer:
    """A timer entry (11.4): part, period, firings left (0 = for ever), countdown, id, last firing."""

    part: int
    period: int
    firings: int
    countdown: int
    id: int
    last: int = 0


@dataclass
class ShipState:
    """A mission ship at run time: a stand-in until created (11.11)."""

    created: bool = False
    hostile: bool = False
    exploding: bool = False
    destroyed: bool = False
    pilot: int = 0xFF
    damage: int = 0
    intact: int = U32


def show(v: Any) -> Any:
    """A value as a decision detail shows it (a ref as ``kind(n)``)."""
    if isinstance(v, Ref):
        return f"{v.kind}({v.n})"
    return v
