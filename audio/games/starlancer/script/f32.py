"""The x87 arithmetic of the VM's float opcodes (spec 11.10): exact value, one rounding to f32, ``__ftol``.

Stack values are u32. ``__ftol`` truncates toward zero to a 64-bit integer and keeps the low 32
bits; infinities and NaNs give the integer indefinite (``0x8000_0000_0000_0000``), whose low 32 bits
are 0 (so ``7 div_f 0 = 0``).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

__all__ = ["F32_HUNDREDTH", "bits_f32", "f32_bits", "ftol", "round_f32", "signed32"]

U32 = 0xFFFFFFFF
F32_HUNDREDTH = Fraction(struct.unpack("<f", bytes.fromhex("0AD7233C"))[0])
"""``0.01f`` exactly (bits ``3C23D70A``)."""


def signed32(v: int) -> int:
    """A u32 read as a signed 32-bit integer."""
    v &= U32
    return v - (1 << 32) if v & 0x80000000 else v


def round_f32(x: Fraction) -> float:
    """``x`` rounded once to the nearest f32 (ties to even); inf past the f32 range."""
    if x == 0:
        return 0.0
    sign = -1.0 if x < 0 else 1.0
    x = abs(x)
    e = math.floor(math.log2(x.numerator) - math.log2(x.denominator)) - 23
    while x / Fraction(2) ** e >= 1 << 24:
        e += 1
    while x / Fraction(2) ** e < 1 << 23:
        e -= 1
    e = max(e, -149)  # subnormals keep a fixed quantum
    scaled = x / Fraction(2) ** e
    m = math.floor(scaled)
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m & 1):
        m += 1
    if m * 2.0**e > 3.4028234663852886e38:
        return sign * math.inf
    return sign * math.ldexp(m, e)


def ftol(v: float) -> int:
    """``__ftol``: toward zero to 64 bits (indefinite for inf/NaN or out of range), low 32 bits."""
    if not math.isfinite(v) or abs(v) >= 2.0**63:
        return 0
    return int(v) & U32


def f32_bits(v: float) -> int:
    """The u32 bit pattern of an f32 value."""
    return int(struct.unpack("<I", struct.pack("<f", v))[0])


def bits_f32(b: int) -> float:
    """The f32 value of a u32 bit pattern."""
    return float(struct.unpack("<f", struct.pack("<I", b & U32))[0])
