"""A small assembler for routine code (for tests, the demo builder and modders).

Offsets count from the block start, so the first instruction is at 2 (after the u16 length), as
in a disassembly. Labels resolve in a second pass: ``branch_if_zero``/``jump`` store
``target - (displacement address)``, ``random_branch`` arm and default targets count from the
opcode. Wrap the code with :func:`audio.games.starlancer.formats.dte.write_routine`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audio.games.starlancer.script.commands import COMMAND_INDEX
from audio.games.starlancer.script.opcodes import OPCODES

__all__ = ["PUSHES", "Asm"]

_BY_NAME = {}
for _c, _o in sorted(OPCODES.items(), reverse=True):
    _BY_NAME[_o.mnemonic] = _c  # the lower code wins for shared handlers (0x23, 0x25->0x43 below)
_BY_NAME["return"] = 0x43
_BY_NAME["push_byte"] = 0x32
_BY_NAME["push_string"] = 0x2A
_BY_NAME["push_component"] = 0x47

PUSHES = {
    "byte": 0x32,
    "ship": 0x2C,
    "global": 0x27,
    "const": 0x28,
    "local": 0x30,
    "arg": 0x31,
    "flight_group": 0x2D,
    "squad": 0x44,
    "array": 0x26,
    "ship_wide": 0x52,
}
"""Argument forms of :meth:`Asm.call`: ``("byte", 5)``, ``("ship", 2)``, ``"text.ut"``, ``None`` (null)."""


@dataclass
class _Item:
    size: int
    kind: str
    data: Any


class Asm:
    """Build code with labels; :meth:`code` returns the bytes (without the length word)."""

    def __init__(self) -> None:
        self.items: list[_Item] = []
        self.labels: dict[str, int] = {}
        self._at = 2

    def _add(self, size: int, kind: str, data: Any) -> Asm:
        self.items.append(_Item(size, kind, data))
        self._at += size
        return self

    def raw(self, data: bytes) -> Asm:
        """Bytes as they are (stale bytes, hand-made instructions)."""
        return self._add(len(data), "raw", bytes(data))

    def label(self, name: str) -> Asm:
        if name in self.labels:
            raise ValueError(f"label {name!r} defined twice")
        self.labels[name] = self._at
        return self

    def op(self, name: str | int, *operands: int) -> Asm:
        """Any fixed-size opcode by mnemonic or code with its operand fields (BE for two-byte ones)."""
        code = _BY_NAME[name] if isinstance(name, str) else name
        info = OPCODES[code]
        if info.size is None:
            raise ValueError(f"{info.mnemonic} has variable operands: use its own method")
        if info.operands == "be16":
            body = bytes([code]) + int(operands[0]).to_bytes(2, "big")
        else:
            body = bytes([code, *operands])
        if len(body) != 1 + info.size:
            raise ValueError(f"{info.mnemonic} takes {info.size} operand bytes, got {operands}")
        return self.raw(body)

    def push_string(self, text: str, opcode: int = 0x2A) -> Asm:
        b = text.encode("latin-1") + b"\0"
        if len(b) + 1 > 255:
            raise ValueError("push_string holds at most 253 characters")
        return self.raw(bytes([opcode, len(b) + 1]) + b)

    def branch_if_zero(self, label: str, opcode: int = 0x23) -> Asm:
        return self._add(3, "branch", (opcode, label))

    def jump(self, label: str) -> Asm:
        return self._add(3, "branch", (0x42, label))

    def random_branch(
        self,
        default: str,
        arms: list[tuple[str, int]],
        *,
        reserve: int | None = None,
        stale: bytes = b"\0",
        unused: int = 0,
    ) -> Asm:
        """``count`` = len(arms) live arms of (label, threshold); ``reserve`` arm slots in all
        (shipped code: 10), the unused ones filled with ``stale`` bytes (cycled)."""
        slots = len(arms) if reserve is None else reserve
        if slots < len(arms):
            raise ValueError("reserve must be >= the number of arms")
        spare = 4 * (slots - len(arms))
        self._add(4 + 4 * len(arms), "random", (default, list(arms), unused))
        return self.raw((stale * (spare + 1))[:spare]) if spare else self

    def push(self, value: Any) -> Asm:
        """An argument: ``("byte", n)`` ..., a str (push_string), ``None`` (push_null)."""
        if value is None:
            return self.op("push_null")
        if isinstance(value, str):
            return self.push_string(value)
        kind, *ops = value
        if kind == "component":
            return self.op(0x47, *ops)
        return self.op(PUSHES[kind], *ops)

    def call(self, name: str | int, *args: Any) -> Asm:
        """Push ``args`` in parameter order, then ``21 n``."""
        for a in args:
            self.push(a)
        return self.op(0x21, COMMAND_INDEX[name] if isinstance(name, str) else name)

    def ret(self, value: int = 1) -> Asm:
        """``push_byte value; return`` (the shipped epilogue)."""
        return self.op("push_byte", value).op("return")

    def code(self) -> bytes:
        out = bytearray()
        at = 2
        for it in self.items:
            if it.kind == "raw":
                out += it.data
            elif it.kind == "branch":
                opcode, lab = it.data
                d = self._target(lab) - (at + 1)
                if not 0 <= d <= 0xFFFF:
                    raise ValueError(f"branch to {lab!r} is not forward (displacement {d})")
                out += bytes([opcode]) + d.to_bytes(2, "big")
            else:
                default, arms, unused = it.data
                out += bytes([0x51, len(arms)]) + self._rel(default, at).to_bytes(2, "big")
                for lab, thr in arms:
                    out += self._rel(lab, at).to_bytes(2, "big") + bytes([thr, unused])
            at += it.size
        return bytes(out)

    def _target(self, lab: str) -> int:
        if lab not in self.labels:
            raise ValueError(f"undefined label {lab!r}")
        return self.labels[lab]

    def _rel(self, lab: str, at: int) -> int:
        d = self._target(lab) - at
        if not 0 <= d < 0xFFFF:
            raise ValueError(f"random_branch target {lab!r} is not forward of the opcode")
        return d
