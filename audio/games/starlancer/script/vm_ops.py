"""The VM's instruction handlers (one step of one thread); see :mod:`audio.games.starlancer.script.vm`."""

from __future__ import annotations

import struct
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from audio.games.starlancer.script.commands import COMMANDS
from audio.games.starlancer.script.f32 import F32_HUNDREDTH, bits_f32, f32_bits, ftol, round_f32, signed32
from audio.games.starlancer.script.opcodes import COMMAND_B_ARGC, OPCODES
from audio.games.starlancer.script.values import U32, Frame, Ref, Thread, u32
from audio.games.starlancer.script.vm_commands import run_command

if TYPE_CHECKING:
    from audio.games.starlancer.script.vm import Vm

__all__ = ["peek_push", "step"]

_CMP = {
    0x02: lambda a, b: a == b,
    0x03: lambda a, b: a != b,
    0x04: lambda a, b: a > b,
    0x05: lambda a, b: a >= b,
    0x06: lambda a, b: a < b,
    0x07: lambda a, b: a <= b,
    0x33: lambda a, b: a > b,
    0x34: lambda a, b: a >= b,
    0x35: lambda a, b: a < b,
    0x36: lambda a, b: a <= b,
    0x1F: lambda a, b: bool(a and b),
    0x20: lambda a, b: bool(a or b),
}
_ARITH = {
    0x1B: "+",
    0x1C: "-",
    0x1D: "*",
    0x1E: "/",
    0x3B: "+",
    0x3C: "-",
    0x3D: "*",
    0x3E: "/",
    0x17: "+",
    0x18: "-",
    0x19: "*",
    0x1A: "/",
    0x37: "+",
    0x38: "-",
    0x39: "*",
    0x3A: "/",
    0x16: "=",
}
_REFS = {0x2C: "ship", 0x52: "ship", 0x2D: "flight_group", 0x44: "squad", 0x49: "curve", 0x54: "section19"}


def _pop(vm: Vm, t: Thread) -> Any:
    if not t.stack:
        vm.stop("stack underflow")
    return t.stack.pop()


def _push(vm: Vm, t: Thread, v: Any) -> None:
    if t.depth() >= vm.s.stack_dwords:
        vm.stop(f"stack overflow ({vm.s.stack_dwords} dwords)")
    t.stack.append(v)


def _calc(vm: Vm, t: Thread, op: str, a: int, b: int) -> int:
    if op == "=":
        return b
    if op == "/":
        if b == 0:
            vm.stop("integer division by zero")
        return a // b
    return {"+": a + b, "-": a - b, "*": a * b}[op] & U32


def _calc_f(op: int, a: int, b: int) -> int:
    """``add_f .. div_f`` (a lower, b top): the exact value rounded once to f32, then ``__ftol``."""
    if op == 0x3B:
        x = Fraction(b + signed32(a))
    elif op == 0x3C:
        x = Fraction(a - signed32(b))
    elif op == 0x3D:
        x = Fraction(b * signed32(a))
    elif signed32(b) == 0:
        return 0  # inf or NaN: __ftol gives the integer indefinite, low 32 bits 0
    else:
        x = Fraction(a, signed32(b))
    return ftol(round_f32(x))


def _assign_f(op: int, target: int, value: int) -> int:
    """``add_assign_f .. div_assign_f``: the target holds an f32 bit pattern (11.10)."""
    tv = bits_f32(target)
    if tv != tv or tv in (float("inf"), float("-inf")) or (op == 0x3A and value == 0):
        sym = {0x37: "+", 0x38: "-", 0x39: "*", 0x3A: "/"}[op]
        if sym == "/" and value == 0:
            r = float("nan") if tv == 0 or tv != tv else (float("inf") if tv > 0 else float("-inf"))
        else:
            r = {"+": tv + value, "-": tv - value, "*": tv * value, "/": tv / value}[sym]
        return f32_bits(r) if r == r else 0xFFC00000
    a = Fraction(tv)
    x = {0x37: a + value, 0x38: a - value, 0x39: a * value}.get(op)
    return f32_bits(round_f32(a / value if x is None else x))


def _size(vm: Vm, script: bytes, ip: int, info: Any) -> int:
    if info.size is not None:
        return 1 + info.size
    if ip + 1 >= len(script):
        vm.stop("operand past the script end")
    return 4 + 4 * script[ip + 1] if info.code == 0x51 else 1 + script[ip + 1]


def step(vm: Vm, t: Thread) -> bool:
    """Execute one instruction of ``t``; False when the thread yields or ends."""
    script, ip = vm.dte.script, t.ip
    if not t.block + 2 <= ip < t.limit:
        vm.stop(f"ran out of its block at {ip - t.block}")
    op = script[ip]
    info = OPCODES.get(op)
    if info is None:
        vm.stop(f"opcode 0x{op:02X} at {ip - t.block} has no handler")
        return False
    size = _size(vm, script, ip, info)
    if ip + max(size, 2 if op in (0x2A, 0x2B) else size) > t.limit:
        vm.stop(f"{info.mnemonic} at {ip - t.block} runs past its block")
    t.ip = ip + size
    o1 = script[ip + 1] if size > 1 else 0
    w16 = script[ip + 1] << 8 | script[ip + 2] if size > 2 else 0
    if op in _CMP:
        b, a = _pop(vm, t), _pop(vm, t)
        _push(vm, t, int(_CMP[op](u32(a), u32(b))))
    elif op in (0x1B, 0x1C, 0x1D, 0x1E):
        b, a = _pop(vm, t), _pop(vm, t)
        _push(vm, t, _calc(vm, t, _ARITH[op], u32(a), u32(b)))
    elif op in (0x3B, 0x3C, 0x3D, 0x3E):
        b, a = _pop(vm, t), _pop(vm, t)
        _push(vm, t, _calc_f(op, u32(a), u32(b)))
    elif 0x16 <= op <= 0x1A:
        b, a = _pop(vm, t), _pop(vm, t)
        _store(vm, t, b if op == 0x16 else _calc(vm, t, _ARITH[op], u32(a), u32(b)))
    elif 0x37 <= op <= 0x3A:
        b, a = _pop(vm, t), _pop(vm, t)
        _store(vm, t, _assign_f(op, u32(a), u32(b)))
    elif op == 0x53:
        pass  # nop: no stack effect
    elif op in (0x14, 0x15, 0x45, 0x46):
        b, a = _pop(vm, t), _pop(vm, t)
        member = _member(vm, a, b)
        _push(vm, t, int(member if op in (0x14, 0x45) else not member))
    elif op in (0x23, 0x24):
        if u32(_pop(vm, t)) == 0:
            t.ip = ip + 1 + w16
    elif op == 0x42:
        t.ip = ip + 1 + w16
    elif op in (0x25, 0x43):
        return _return(vm, t, _pop(vm, t))
    elif op == 0x51:
        _random(vm, t, script, ip)
    elif op in (0x21, 0x4F, 0x22, 0x4D, 0x4A, 0x4E):
        return _call(vm, t, op, o1, ip)
    else:
        _push(vm, t, _value(vm, t, op, script, ip, size, o1, w16))
    return True


_PEEKABLE = frozenset({0x2E, 0x32, 0x2C, 0x2D, 0x44, 0x49, 0x54, 0x28, 0x27, 0x40, 0x26, 0x3F, 0x30})
"""Two-byte pushes that read the VM's state and change nothing but the thread's ``select_`` target
(set again to what it already holds when the push re-runs)."""


def peek_push(vm: Vm, t: Thread) -> tuple[bool, Any]:
    """``(True, value)`` when the instruction at ``t.ip`` is a two-byte push of :data:`_PEEKABLE`:
    the value it would push now; ``(False, None)`` otherwise. Ends the thread's run as
    :func:`step` would (``vm.stop``) for a local past the fifth."""
    script, ip = vm.dte.script, t.ip
    if not t.block + 2 <= ip < t.limit - 1 or script[ip] not in _PEEKABLE:
        return False, None
    return True, _value(vm, t, script[ip], script, ip, 2, script[ip + 1], 0)


def _value(vm: Vm, t: Thread, op: int, script: bytes, ip: int, size: int, o1: int, w16: int) -> Any:
    if op in (0x2E, 0x32):
        return o1
    if op in _REFS:
        return Ref(_REFS[op], w16 if op == 0x52 else o1)
    if op in (0x2A, 0x2B):
        end = script.find(b"\0", ip + 2)
        return script[ip + 2 : len(script) if end < 0 else end].decode("latin-1")
    if op in (0x27, 0x40):
        if op == 0x40:
            t.select = ("global", o1)
        return vm.globals[o1] if o1 < len(vm.globals) else 0
    if op in (0x26, 0x3F):
        if op == 0x3F:
            t.select = ("array", o1)
        return vm.array[o1] if o1 < 64 else 0
    if op in (0x31, 0x41):
        if t.args is None or o1 >= len(t.args):
            vm.stop(f"argument {o1} with no frame holding it")
            return 0
        if op == 0x41:
            t.select = ("arg", o1)
        return t.args[o1]
    if op in (0x28, 0x29):
        n = w16 if op == 0x29 else o1
        at = t.block + struct.unpack_from("<H", script, t.block)[0] + 4 * n
        if at + 4 > len(script):
            vm.stop(f"constant {n} outside the image")
        return struct.unpack_from("<I", script, at)[0]
    if op == 0x30:
        if o1 >= 5:
            vm.stop(f"local {o1} past the fifth")
        return t.locals[o1]
    if op == 0x2F:
        if not t.stack:
            vm.stop("stack underflow (push_percent)")
        x = round_f32(Fraction(round_f32(Fraction(u32(t.stack[-1]) * o1))) * F32_HUNDREDTH)
        return ftol(x)
    if op in (0x47, 0x55):
        t.components.append(script[ip + 2])
        return Ref("component", o1, script[ip + 2])
    if op == 0x48:
        return U32
    if op == 0x4C:
        return t.result
    if op == 0x4B:
        c, v, o = script[ip + 1], script[ip + 2], script[ip + 3]
        got = vm.triggers.event_value(c, v, o)
        if got is None:
            vm.stop(f"push_event_value {c} {v} {o}: no kept record there")
        return got
    vm.stop(f"opcode 0x{op:02X} has no value")
    return 0


def _store(vm: Vm, t: Thread, v: int) -> None:
    if t.select is None:
        vm.stop("a store with no select_ target")
        return
    kind, n = t.select
    if kind == "global" and n < len(vm.globals):
        vm.globals[n] = v
        vm.decide("GlobalSet", routine=t.label, index=n, name=vm.dte.global_name(n), value=v)
    elif kind == "array" and n < 64:
        vm.array[n] = v
    elif kind == "arg" and t.args is not None and n < len(t.args):
        t.args[n] = v


def _member(vm: Vm, a: Any, b: Any) -> bool:
    if not (isinstance(a, Ref) and isinstance(b, Ref) and a.kind in ("ship", "component")):
        return False
    ships = vm.dte.ships
    if b.kind == "flight_group":
        return 0 <= a.n < len(ships) and ships[a.n].flight_group == b.n
    if b.kind == "squad" and 0 <= a.n < len(ships):
        return any(k == a.n for k, _c in vm.triggers.members(b.n))  # nested squads followed, cycles once
    return False


def _random(vm: Vm, t: Thread, script: bytes, ip: int) -> None:
    count = script[ip + 1]
    dflt = script[ip + 2] << 8 | script[ip + 3]
    roll = vm.rand() % 100
    target = dflt
    for k in range(count):
        at = ip + 4 + 4 * k
        tgt, thr = script[at] << 8 | script[at + 1], script[at + 2]
        if thr > roll:
            target = dflt if tgt == 0xFFFF else tgt
            break
    t.ip = ip + target
    vm.decide("RandomBranch", routine=t.label, roll=roll, target=target)


def _return(vm: Vm, t: Thread, value: Any) -> bool:
    if not t.frames:
        vm.end(t, "returned")
        return False
    f = t.frames.pop()
    t.frame_words -= 4 + len(f.args or ())
    t.ip, t.block, t.limit, t.args = f.ret_ip, f.block, f.limit, f.args
    t.result = value
    return True


def _args(vm: Vm, t: Thread, n: int) -> list[Any]:
    return list(reversed([_pop(vm, t) for _ in range(n)]))


def _call(vm: Vm, t: Thread, op: int, n: int, ip: int) -> bool:
    if op == 0x4F:
        _args(vm, t, COMMAND_B_ARGC)
        t.result = 1
        t.components.clear()
        return True
    if op in (0x4A, 0x4E):
        vm.decide("Skipped", routine=t.label, command=OPCODES[op].mnemonic, reason="the dead AI layer")
        return True
    if op == 0x21:
        if n >= len(COMMANDS):
            vm.stop(f"command 0x{n:02X} past the catalogue")
        return run_command(vm, t, n, _args(vm, t, COMMANDS[n].argc), ip)
    parts = vm.dte.parts
    if n >= len(parts):
        vm.stop(f"part {n} outside the parts table")
    args = _args(vm, t, parts[n].argc)
    if op == 0x4D:
        vm.decide("Spawn", routine=t.label, part=vm.dte.part_name(n))
        if parts[n].start != 0xFFFF:
            vm.start_part(n, args, "(spawn_part)")  # deferred: the next pass (or later in this one)
        return True
    if parts[n].start == 0xFFFF:
        vm.stop(f"call_part {n}: the part has no block")
    block = parts[n].start * 2
    if block + 2 > len(vm.dte.script):
        vm.stop(f"part {n} block outside the script")
    t.frames.append(Frame(t.ip, t.block, t.limit, t.args))
    t.frame_words += 4 + len(t.args or ())
    if t.depth() > vm.s.stack_dwords:
        vm.stop(f"stack overflow in call_part ({vm.s.stack_dwords} dwords)")
    length = struct.unpack_from("<H", vm.dte.script, block)[0]
    t.block, t.limit, t.ip, t.args = block, min(block + length, len(vm.dte.script)), block + 2, args
    return True
