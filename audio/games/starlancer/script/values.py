"""The mission-script VM's values and threads (shared by :mod:`.vm`, :mod:`.vm_ops` and
:mod:`.vm_commands`)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_THREADS", "U32", "Frame", "Ref", "Thread", "show", "u32"]

MAX_THREADS = 32
"""Script threads the VM runs at once."""
U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Ref:
    """A pointer-like value: ``kind`` (ship, flight_group, squad, curve, section19, component), index."""

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
    """A call frame: where to return and the caller's block, limit and arguments."""

    ret_ip: int
    block: int
    limit: int
    args: list[Any]


@dataclass
class Thread:
    """One script thread (``ip`` absolute in the script section)."""

    slot: int
    label: str
    block: int
    limit: int
    ip: int
    trigger: int | None = None
    locals: tuple[Any, ...] = (0, 0, 0, 0, 0)
    args: list[Any] = field(default_factory=list)
    stack: list[Any] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    wake: int | None = None
    parked: bool = False
    done: bool = False
    result: Any = 0
    select: tuple[str, int] | None = None
    underflows: int = 0

    def depth(self) -> int:
        return len(self.stack) + sum(4 + len(f.args) for f in self.frames)


def show(v: Any) -> Any:
    """A value as the decision log shows it (a ref by kind and index)."""
    if isinstance(v, Ref):
        return f"{v.kind}({v.n})"
    return v
