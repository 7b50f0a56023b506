"""The 71 opcodes of Starlancer's mission-script VM: operand layout, stack effect, control flow.

Facts from the spec (section 3.2): opcodes ``0x02..0x07`` and ``0x14..0x55`` except ``0x50``;
``0x00, 0x01, 0x08..0x13, 0x50`` have a null handler (a decode error). Operand bytes follow the
opcode; two-byte operands (displacements, wide indices) are **big-endian**. ``pops``/``pushes`` are
the net effect a symbolic stack applies; ``None`` pops mean "the callee's argument count"
(commands, parts) and are resolved by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BRANCH",
    "CALL",
    "COMMAND",
    "INVALID_OPCODES",
    "JUMP",
    "OPCODES",
    "RANDOM",
    "RETURN",
    "SEQ",
    "SIZE_CLASSES",
    "SPAWN",
    "OpInfo",
    "opinfo",
]

# operand kinds
NONE, U8, BE16, U8X2, U8X3, STRING, RANDOM_OPS = "none", "u8", "be16", "u8x2", "u8x3", "string", "random"
# control flow kinds
SEQ, BRANCH, JUMP, RETURN, RANDOM, COMMAND, CALL, SPAWN = (
    "seq",
    "branch",
    "jump",
    "return",
    "random",
    "command",
    "call",
    "spawn",
)


@dataclass(frozen=True)
class OpInfo:
    """One opcode. ``operands`` is the operand kind; ``size`` the fixed operand byte count (None:
    variable); ``pops``/``pushes`` the stack effect (``pops=None``: argc of a command or part)."""

    code: int
    mnemonic: str
    operands: str
    size: int | None
    pops: int | None
    pushes: int
    flow: str = SEQ


_SIZES = {NONE: 0, U8: 1, BE16: 2, U8X2: 2, U8X3: 3, STRING: None, RANDOM_OPS: None}


def _ops() -> dict[int, OpInfo]:
    rows: list[tuple[int, str, str, int | None, int, str]] = []
    for c, n in zip(
        range(0x02, 0x08), ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")
    ):
        rows.append((c, n, NONE, 2, 1, SEQ))
    rows += [(0x14, "in_flight_group", NONE, 2, 1, SEQ), (0x15, "not_in_flight_group", NONE, 2, 1, SEQ)]
    for c, n in zip(range(0x16, 0x1B), ("assign", "add_assign", "sub_assign", "mul_assign", "div_assign")):
        rows.append((c, n, NONE, 2, 0, SEQ))
    for c, n in zip(range(0x1B, 0x1F), ("add", "sub", "mul", "div")):
        rows.append((c, n, NONE, 2, 1, SEQ))
    rows += [
        (0x1F, "logical_and", NONE, 2, 1, SEQ),
        (0x20, "logical_or", NONE, 2, 1, SEQ),
        (0x21, "command", U8, None, 0, COMMAND),
        (0x22, "call_part", U8, None, 0, CALL),
        (0x23, "branch_if_zero", BE16, 1, 0, BRANCH),
        (0x24, "branch_if_zero", BE16, 1, 0, BRANCH),
        (0x25, "return", NONE, 1, 0, RETURN),
        (0x26, "push_array", U8, 0, 1, SEQ),
        (0x27, "push_global", U8, 0, 1, SEQ),
        (0x28, "push_constant", U8, 0, 1, SEQ),
        (0x29, "push_constant_wide", BE16, 0, 1, SEQ),
        (0x2A, "push_string", STRING, 0, 1, SEQ),
        (0x2B, "push_string", STRING, 0, 1, SEQ),
        (0x2C, "push_ship", U8, 0, 1, SEQ),
        (0x2D, "push_flight_group", U8, 0, 1, SEQ),
        (0x2E, "push_byte", U8, 0, 1, SEQ),
        (0x2F, "push_percent", U8, 0, 1, SEQ),
        (0x30, "push_local", U8, 0, 1, SEQ),
        (0x31, "push_argument", U8, 0, 1, SEQ),
        (0x32, "push_byte", U8, 0, 1, SEQ),
    ]
    for c, n in zip(range(0x33, 0x37), ("greater_f", "greater_equal_f", "less_f", "less_equal_f")):
        rows.append((c, n, NONE, 2, 1, SEQ))
    for c, n in zip(range(0x37, 0x3B), ("add_assign_f", "sub_assign_f", "mul_assign_f", "div_assign_f")):
        rows.append((c, n, NONE, 2, 0, SEQ))
    for c, n in zip(range(0x3B, 0x3F), ("add_f", "sub_f", "mul_f", "div_f")):
        rows.append((c, n, NONE, 2, 1, SEQ))
    rows += [
        (0x3F, "select_array", U8, 0, 1, SEQ),
        (0x40, "select_global", U8, 0, 1, SEQ),
        (0x41, "select_argument", U8, 0, 1, SEQ),
        (0x42, "jump", BE16, 0, 0, JUMP),
        (0x43, "return", NONE, 1, 0, RETURN),
        (0x44, "push_squad", U8, 0, 1, SEQ),
        (0x45, "in_squad", NONE, 2, 1, SEQ),
        (0x46, "not_in_squad", NONE, 2, 1, SEQ),
        (0x47, "push_component", U8X2, 0, 1, SEQ),
        (0x48, "push_null", NONE, 0, 1, SEQ),
        (0x49, "push_curve", U8, 0, 1, SEQ),
        (0x4A, "call_part_b", U8, None, 0, CALL),
        (0x4B, "push_event_value", U8X3, 0, 1, SEQ),
        (0x4C, "push_result", NONE, 0, 1, SEQ),
        (0x4D, "spawn_part", U8, None, 0, SPAWN),
        (0x4E, "spawn_part_b", U8, None, 0, SPAWN),
        (0x4F, "command_b", U8, None, 0, COMMAND),
        (0x51, "random_branch", RANDOM_OPS, 0, 0, RANDOM),
        (0x52, "push_ship_wide", BE16, 0, 1, SEQ),
        (0x53, "nop", NONE, 0, 0, SEQ),
        (0x54, "push_section_19", U8, 0, 1, SEQ),
        (0x55, "push_component", U8X2, 0, 1, SEQ),
    ]
    out: dict[int, OpInfo] = {}
    for code, name, kind, pops, pushes, flow in rows:
        if flow == COMMAND or flow in (CALL, SPAWN):
            pops = None
        out[code] = OpInfo(code, name, kind, _SIZES[kind], pops, pushes, flow)
    return out


OPCODES: dict[int, OpInfo] = _ops()
"""Opcode byte -> :class:`OpInfo` (71 entries)."""
INVALID_OPCODES: frozenset[int] = frozenset(set(range(256)) - set(OPCODES))
"""Bytes that are not opcodes (null handlers ``0x00, 0x01, 0x08..0x13, 0x50`` and ``0x56..0xFF``)."""
SIZE_CLASSES: dict[str, tuple[int, ...]] = {
    "none": tuple(c for c, o in OPCODES.items() if o.size == 0),
    "one": tuple(c for c, o in OPCODES.items() if o.size == 1),
    "two": tuple(c for c, o in OPCODES.items() if o.size == 2),
    "three": tuple(c for c, o in OPCODES.items() if o.size == 3),
    "variable": tuple(c for c, o in OPCODES.items() if o.size is None),
}
"""Opcodes by operand size (the spec's size classes: 38 / 22 / 7 / 1 / 3)."""

RANDOM_SLOT_BYTES = 4
"""One random_branch arm: BE u16 target (from the opcode), u8 threshold, u8 never read."""
COMMAND_B_ARGC = 2
"""``command_b`` (0x4F): its catalogue's one entry (Test_AI_Function) has 2 parameters."""


def opinfo(code: int) -> OpInfo | None:
    """The opcode's info, or None for a byte that is not an opcode."""
    return OPCODES.get(code)
