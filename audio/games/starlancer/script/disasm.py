"""Control-flow disassembler of one routine, with a symbolic stack (spec 3.3 and 3.4).

Never a linear sweep: from the entry (block + 2) it follows control flow (branches continue at the
target and after the operand, ``jump``/``random_branch`` only at their targets, ``return`` stops),
so stale padding, unused random_branch slots and filler constants are reported as slack, not code.
Paths are processed in address order; states arriving at the same address merge (the guard becomes
the common prefix of the guards, i.e. the conditions every path shares); an address reached again
after it was decoded ends that path. All addresses (``ip``, ``target``) are bytes from the block's
start. Errors (a path leaving ``[2, length)``, overlapping instructions, an invalid opcode, a
command past the catalogue, a ``push_string`` without its NUL inside the block) end their path and
are collected, or raised as :class:`FormatError` with ``strict=True``.

Symbols follow the spec: ``byte(5)``, ``const(0)=2``, ``"x.ut"``, ``ship(5)=(A1)Naginata``,
``global(3)``, ``local(0)``, ``op`` forms such as ``equal(global(3), byte(0))``, ``underflow``.
A command pops exactly its catalogue count (missing values become ``underflow``).
"""

from __future__ import annotations

import heapq
import struct
from dataclasses import dataclass, field
from typing import Any, Protocol

from audio.core.errors import FormatError
from audio.games.starlancer.script.commands import COMMANDS, command
from audio.games.starlancer.script.opcodes import (
    BRANCH,
    CALL,
    COMMAND,
    COMMAND_B_ARGC,
    JUMP,
    OPCODES,
    RANDOM,
    RETURN,
    SPAWN,
    OpInfo,
)

__all__ = ["MAX_TEXT", "Call", "Disassembly", "Instruction", "Names", "Sym", "disassemble"]

MAX_TEXT = 160
"""Symbol texts longer than this are cut (``...``): computed values can nest without bound."""


class Names(Protocol):
    """What the disassembler resolves names through (a :class:`~..formats.dte.Dte` fits)."""

    def ship_name(self, n: int) -> str | None: ...
    def flight_group_name(self, n: int) -> str | None: ...
    def global_name(self, n: int) -> str | None: ...
    def part_name(self, n: int) -> str: ...


@dataclass(frozen=True)
class Sym:
    """A symbolic stack value: ``kind`` (byte, const, string, ship, op, ...), ``args``, display text."""

    kind: str
    args: tuple[Any, ...]
    text: str

    def __str__(self) -> str:
        return self.text


def _sym(kind: str, *args: Any, text: str | None = None) -> Sym:
    t = text if text is not None else f"{kind}({', '.join(str(a) for a in args)})"
    return Sym(kind, args, t if len(t) <= MAX_TEXT else t[: MAX_TEXT - 3] + "...")


UNDERFLOW = Sym("underflow", (), "underflow")


@dataclass
class Instruction:
    """One decoded instruction (``ip`` and ``target`` in bytes from the block start)."""

    ip: int
    opcode: int
    mnemonic: str
    size: int
    operands: tuple[Any, ...] = ()
    target: int | None = None
    arms: tuple[tuple[int, int, int], ...] = ()
    text: str | None = None
    call: Call | None = None
    guard: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "ip": self.ip,
            "opcode": self.opcode,
            "mnemonic": self.mnemonic,
            "operands": list(self.operands),
        }
        if self.target is not None:
            d["target"] = self.target
        if self.arms:
            d["arms"] = [{"target": t, "threshold": th, "unused": u} for t, th, u in self.arms]
        if self.text is not None:
            d["text"] = self.text
        if self.call is not None:
            d["call"] = self.call.name
            d["args"] = [str(a) for a in self.call.args]
        if self.guard:
            d["guard"] = list(self.guard)
        return d


@dataclass
class Call:
    """A command (or part) call found on a path: its arguments in parameter order."""

    ip: int
    kind: str  # "command" | "call_part" | "spawn_part" | "command_b" | ...
    index: int
    name: str
    args: tuple[Sym, ...]
    guard: tuple[str, ...]
    underflow: int = 0

    def arg_map(self) -> dict[str, str]:
        if self.kind == "command" and self.index < len(COMMANDS):
            c = COMMANDS[self.index]
            return {c.label(i): str(a) for i, a in enumerate(self.args)}
        return {f"p{i}": str(a) for i, a in enumerate(self.args)}

    def text(self) -> str:
        return f"{self.name}(" + ", ".join(f"{k}={v}" for k, v in self.arg_map().items()) + ")"


@dataclass
class Disassembly:
    """A routine's code: instructions by ip, the calls found, errors, and unreached slack ranges."""

    length: int
    size: int
    constants: tuple[int, ...]
    instructions: dict[int, Instruction] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    slack: list[tuple[int, int]] = field(default_factory=list)

    def ordered(self) -> list[Instruction]:
        return [self.instructions[k] for k in sorted(self.instructions)]


@dataclass(frozen=True)
class _State:
    stack: tuple[Any, ...] | None  # cons list: (sym, rest) or None
    depth: int
    guard: tuple[str, ...]
    result: Sym


def _pop(st: _State) -> tuple[Sym, _State]:
    if st.stack is None:
        return UNDERFLOW, st
    return st.stack[0], _State(st.stack[1], st.depth - 1, st.guard, st.result)


def _push(st: _State, s: Sym) -> _State:
    return _State((s, st.stack), st.depth + 1, st.guard, st.result)


def _common(guards: list[tuple[str, ...]]) -> tuple[str, ...]:
    out = guards[0]
    for g in guards[1:]:
        n = 0
        while n < min(len(out), len(g)) and out[n] == g[n]:
            n += 1
        out = out[:n]
    return out


class _Error(Exception):
    pass


class _Walker:
    def __init__(self, buf: bytes, names: Names | None, part_argc: Any, strict: bool, path: str) -> None:
        if len(buf) < 2:
            raise FormatError(path, 0, "a routine block (u16 length first)", f"{len(buf)} bytes")
        self.buf, self.names, self.part_argc, self.strict, self.path = buf, names, part_argc, strict, path
        self.length = struct.unpack_from("<H", buf, 0)[0]
        if not 2 <= self.length <= len(buf):
            raise FormatError(path, 0, f"block length 2..{len(buf)}", self.length)
        n = (len(buf) - self.length) // 4
        self.consts = struct.unpack_from(f"<{n}I", buf, self.length) if n else ()
        self.out = Disassembly(self.length, len(buf), tuple(self.consts))
        self.owner = bytearray(self.length)

    def fail(self, ip: int, msg: str) -> None:
        if self.strict:
            raise FormatError(self.path, ip, msg)
        self.out.errors.append((ip, msg))

    def byte(self, at: int) -> int:
        if at >= self.length:
            raise _Error(f"operand at {at} past the block end {self.length}")
        return self.buf[at]

    def be16(self, at: int) -> int:
        return self.byte(at) << 8 | self.byte(at + 1)

    def run(self) -> Disassembly:
        heap: list[int] = [2]
        pending: dict[int, list[_State]] = {2: [_State(None, 0, (), _sym("result", text="result"))]}
        while heap:
            ip = heapq.heappop(heap)
            states = pending.pop(ip, None)
            if not states or ip in self.out.instructions:
                continue
            st = _State(
                states[0].stack, states[0].depth, _common([s.guard for s in states]), states[0].result
            )
            try:
                succ = self.step(ip, st)
            except _Error as exc:
                self.fail(ip, str(exc))
                continue
            for nip, nst in succ:
                if nip in self.out.instructions:
                    continue
                if nip not in pending:
                    pending[nip] = []
                    heapq.heappush(heap, nip)
                pending[nip].append(nst)
        self._slack()
        return self.out

    def _slack(self) -> None:
        start = None
        for i in range(2, self.length):
            if not self.owner[i] and start is None:
                start = i
            elif self.owner[i] and start is not None:
                self.out.slack.append((start, i))
                start = None
        if start is not None:
            self.out.slack.append((start, self.length))

    def _size(self, ip: int, info: OpInfo) -> int:
        if info.size is not None:
            return 1 + info.size
        if info.flow == RANDOM:
            return 4 + 4 * self.byte(ip + 1)
        n = self.byte(ip + 1)
        if n < 2:
            raise _Error(f"push_string length {n} (counts itself, the text and the NUL)")
        return 1 + n

    def step(self, ip: int, st: _State) -> list[tuple[int, _State]]:
        if ip >= self.length:
            raise _Error(f"path leaves the block [2, {self.length})")
        op = self.buf[ip]
        info = OPCODES.get(op)
        if info is None:
            raise _Error(f"invalid opcode 0x{op:02X}")
        size = self._size(ip, info)
        if ip + size > self.length:
            raise _Error(f"{info.mnemonic} ({size} bytes) runs past the block end {self.length}")
        for b in range(ip, ip + size):
            if self.owner[b]:
                raise _Error(f"{info.mnemonic} at {ip} overlaps the instruction covering byte {b}")
        ins = Instruction(ip, op, info.mnemonic, size, guard=st.guard)
        succ = self.effect(ins, info, st)
        for b in range(ip, ip + size):
            self.owner[b] = 1
        self.out.instructions[ip] = ins
        return succ

    def effect(self, ins: Instruction, info: OpInfo, st: _State) -> list[tuple[int, _State]]:
        ip, nxt = ins.ip, ins.ip + ins.size
        if info.flow in (COMMAND, CALL, SPAWN):
            return [(nxt, self._call(ins, info, st))]
        if info.flow == BRANCH:
            d = self.be16(ip + 1)
            cond, st = _pop(st)
            ins.operands, ins.target = (d,), ip + 1 + d
            yes = _State(st.stack, st.depth, st.guard + (str(cond),), st.result)
            no = _State(st.stack, st.depth, st.guard + (f"!{cond}",), st.result)
            return [(nxt, yes), (ins.target, no)]
        if info.flow == JUMP:
            d = self.be16(ip + 1)
            ins.operands, ins.target = (d,), ip + 1 + d
            return [(ins.target, st)]
        if info.flow == RETURN:
            return []
        if info.flow == RANDOM:
            return self._random(ins, st)
        return [(nxt, self._data(ins, info, st))]

    def _random(self, ins: Instruction, st: _State) -> list[tuple[int, _State]]:
        ip = ins.ip
        count, dflt = self.byte(ip + 1), self.be16(ip + 2)
        arms = tuple(
            (self.be16(ip + 4 + 4 * k), self.byte(ip + 6 + 4 * k), self.byte(ip + 7 + 4 * k))
            for k in range(count)
        )
        ins.target = ip + dflt
        ins.arms = tuple((ins.target if t == 0xFFFF else ip + t, th, u) for t, th, u in arms)
        ins.operands = (count, dflt, *[list(a) for a in arms])
        out = [(ins.target, _State(st.stack, st.depth, st.guard + ("random default",), st.result))]
        for k, (t, th, _u) in enumerate(ins.arms):
            out.append(
                (t, _State(st.stack, st.depth, st.guard + (f"random arm {k} (roll < {th})",), st.result))
            )
        return out

    def _call(self, ins: Instruction, info: OpInfo, st: _State) -> _State:
        n = self.byte(ins.ip + 1)
        ins.operands = (n,)
        if info.code == 0x21:
            try:
                c = command(n)
            except LookupError as exc:
                raise _Error(str(exc)) from None
            argc, name, kind = c.argc, c.name, "command"
        elif info.code == 0x4F:
            argc, name, kind = COMMAND_B_ARGC, f"command_b {n}", "command_b"
        elif info.code in (0x4A, 0x4E):
            argc, name, kind = 0, f"{info.mnemonic} {n}", info.mnemonic  # dead layer: no part table
        else:
            argc = int(self.part_argc(n)) if self.part_argc is not None else 0
            name = self.names.part_name(n) if self.names is not None else f"part{n}"
            kind = info.mnemonic
        args: list[Sym] = []
        under = 0
        for _ in range(argc):
            a, st = _pop(st)
            under += a is UNDERFLOW
            args.append(a)
        call = Call(ins.ip, kind, n, name, tuple(reversed(args)), st.guard, under)
        ins.call = call
        self.out.calls.append(call)
        res = st.result
        if kind in ("command", "call_part"):
            res = _sym("result", name)
        elif kind == "command_b":
            res = _sym("result", text="result(1)")
        return _State(st.stack, st.depth, st.guard, res)

    def _named(self, kind: str, n: int, getter: str) -> Sym:
        name = getattr(self.names, getter)(n) if self.names is not None else None
        return _sym(kind, n, text=f"{kind}({n})" + (f"={name}" if name else ""))

    def _data(self, ins: Instruction, info: OpInfo, st: _State) -> _State:
        ip = ins.ip
        if info.operands == "string":
            n = self.byte(ip + 1)
            raw = self.buf[ip + 2 : ip + 1 + n]
            z = raw.find(b"\0")
            if z < 0:
                raise _Error("push_string without its NUL inside the instruction")
            ins.text = raw[:z].decode("latin-1")
            ins.operands = (n, ins.text)
            return _push(st, _sym("string", ins.text, text=f'"{ins.text}"'))
        if info.size == 1:
            n = self.byte(ip + 1)
            ins.operands = (n,)
        elif info.size == 2:
            ins.operands = (
                (self.be16(ip + 1),) if info.operands == "be16" else (self.byte(ip + 1), self.byte(ip + 2))
            )
            n = ins.operands[0]
        elif info.size == 3:
            ins.operands = (self.byte(ip + 1), self.byte(ip + 2), self.byte(ip + 3))
            n = 0
        else:
            n = 0
        if info.pops == 2:
            b, st = _pop(st)
            a, st = _pop(st)
            return _push(st, _sym(info.mnemonic, a, b)) if info.pushes else st
        return self._push_op(ins, info, st, n)

    def _push_op(self, ins: Instruction, info: OpInfo, st: _State, n: int) -> _State:
        op = info.code
        simple = {
            0x26: "array",
            0x2E: "byte",
            0x32: "byte",
            0x30: "local",
            0x31: "arg",
            0x44: "squad",
            0x49: "curve",
            0x52: "ship_wide",
            0x54: "section19",
            0x3F: "array",
            0x41: "arg",
        }
        if op in simple:
            return _push(st, _sym(simple[op], n))
        if op in (0x27, 0x40):
            return _push(st, self._named("global", n, "global_name"))
        if op == 0x2C:
            return _push(st, self._named("ship", n, "ship_name"))
        if op == 0x2D:
            return _push(st, self._named("flight_group", n, "flight_group_name"))
        if op in (0x28, 0x29):
            v = self.consts[n] if n < len(self.consts) else None
            return _push(st, _sym("const", n, v, text=f"const({n})=" + ("?" if v is None else str(v))))
        if op in (0x47, 0x55):
            return _push(st, _sym("component", *ins.operands))
        if op == 0x48:
            return _push(st, _sym("null", text="null"))
        if op == 0x4B:
            return _push(st, _sym("event_value", *ins.operands))
        if op == 0x4C:
            return _push(st, st.result)
        if op == 0x2F:
            top = st.stack[0] if st.stack is not None else UNDERFLOW
            return _push(st, _sym("percent", top, n))
        return st  # nop


def disassemble(
    buf: bytes | memoryview,
    names: Names | None = None,
    part_argc: Any = None,
    *,
    strict: bool = False,
    path: str = "<routine>",
) -> Disassembly:
    """Disassemble one routine given as its bytes (``u16 length`` at 0, code, constants after).

    ``names`` resolves ships, flight groups, globals and parts; ``part_argc(p)`` gives a part's
    argument count for ``call_part``/``spawn_part`` (0 if None).
    """
    return _Walker(bytes(buf), names, part_argc, strict, path).run()


def disassemble_routine(dte: Any, routine: Any, *, strict: bool = False) -> Disassembly:
    """Disassemble a :class:`~audio.games.starlancer.formats.dte.Routine` of mission ``dte``
    (names and part argument counts resolved through it)."""
    buf = dte.script[routine.block : routine.end]

    def argc(p: int) -> int:
        return dte.parts[p].argc if 0 <= p < len(dte.parts) else 0

    return disassemble(buf, dte, argc, strict=strict, path=f"{dte.path}:{routine.label}")
