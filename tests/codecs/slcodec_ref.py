"""Test-only helpers for the Digital Anvil LPC codec, written from the spec (starlancer-radio.md 7-8)
without using the module under test:

- ``BitWriter``: LSB-first bit packing, to build streams field by field;
- ``reference_decode``: a plain-Python float32 decoder (every operation done on Python floats and
  rounded to float32 with ``struct``; exact for +, -, x of float32 values), a flat list of bits as
  its reader and prefix matching for the variable code;
- ``VAR_CODES``: the variable-code symbol tables as printed in the spec.
"""

from __future__ import annotations

import math
import struct

LEVEL_HEX = (
    "00000000 b62c7fbf 12867dbf 7fdf7bbf eb387abf 479278bf b3eb76bf 0f4575bf 7c9e73bf e5456ebf 75ab67bf "
    "171161bf a7765abf 38dc53bf d9414dbf 69a746bf fa0c40bf 9b7239bf 2cd832bf bcae2bbf ee791ebf 0f4511bf "
    "411004bf e5b6edbe 274dd3be 8ae3b8be ee799ebe 521084be 274d53be ee791ebe 6a4dd3bd e44c53bd 00000000 "
    "e44c533d 6a4dd33d ee791e3e 274d533e 5210843e ee799e3e 8ae3b83e 274dd33e e5b6ed3e 4110043f 0f45113f "
    "ee791e3f bcae2b3f 2cd8323f 9b72393f fa0c403f 69a7463f d9414d3f 38dc533f a7765a3f 1711613f 75ab673f "
    "e5456e3f 7c9e733f 0f45753f b3eb763f 4792783f eb387a3f 7fdf7b3f 12867d3f b62c7f3f"
)


def f32(x: float) -> float:
    """Round a Python float to the nearest float32 (overflow -> +-inf)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def from_bits(hexbits: str) -> float:
    """A float32 given by its bit pattern (big-endian hex, e.g. ``3D888889``)."""
    return struct.unpack(">f", bytes.fromhex(hexbits))[0]


L = [struct.unpack("<f", bytes.fromhex(h))[0] for h in LEVEL_HEX.split()]
W1, W3, W5 = from_bits("3F18EE49"), from_bits("BDEAAEFB"), from_bits("3C93B945")
ONE_FIFTEENTH = from_bits("3D888889")

# (code in read order, symbol, next context); symbol an int, "esc" or "run".
VAR_CODES = (
    [
        ("00", 0, 0),
        ("01", -1, 0),
        ("10", 1, 0),
        ("1100", -2, 1),
        ("1101", 2, 1),
        ("11100", -3, 1),
        ("11101", 3, 1),
        ("111100", -4, 1),
        ("111101", 4, 1),
        ("1111100", -5, 1),
        ("1111101", 5, 1),
        ("11111100", -6, 1),
        ("11111101", 6, 1),
        ("11111110", "esc", 1),
        ("11111111", "run", 0),
    ],
    [
        ("00", 0, 0),
        ("010", -1, 0),
        ("011", 1, 0),
        ("100", -2, 1),
        ("101", 2, 1),
        ("1100", -3, 1),
        ("1101", 3, 1),
        ("11100", -4, 1),
        ("11101", 4, 1),
        ("111100", -5, 1),
        ("111101", 5, 1),
        ("1111100", -6, 1),
        ("1111101", 6, 1),
        ("1111110", "esc", 1),
        ("1111111", "run", 0),
    ],
)


class BitWriter:
    """Collects bits LSB-first; ``bytes()`` packs them (the last byte zero-padded)."""

    def __init__(self) -> None:
        self.bits: list[int] = []

    def put(self, value: int, n: int) -> None:
        self.bits += [(value >> i) & 1 for i in range(n)]

    def code(self, code: str) -> None:
        self.bits += [int(c) for c in code]

    def __bytes__(self) -> bytes:
        out = bytearray((len(self.bits) + 7) // 8)
        for i, b in enumerate(self.bits):
            out[i // 8] |= b << (i % 8)
        return bytes(out)


class _Bits:
    def __init__(self, data: bytes) -> None:
        self.bits = [(byte >> i) & 1 for byte in data for i in range(8)]
        self.pos = 0

    def bit(self) -> int:
        b = self.bits[self.pos] if self.pos < len(self.bits) else 0
        self.pos += 1
        return b

    def get(self, n: int) -> int:
        return sum(self.bit() << i for i in range(n))


def _var_symbol(rd: _Bits, ctx: int):
    code = ""
    table = {c: (s, n) for c, s, n in VAR_CODES[ctx]}
    while code not in table:
        code += str(rd.bit())
    return table[code]


def _pulses(rd: _Bits, coded: bool, step: int) -> list[float]:
    """Pulse values at the subframe's step positions (54 or 108 of them)."""
    count = 108 // step
    vals: list[float] = []
    ctx = 0
    while len(vals) < count:
        if not coded:
            vals.append(0.0 if rd.bit() == 0 else (2.0 if rd.bit() else -2.0))
            continue
        sym, ctx = _var_symbol(rd, ctx)
        if sym == "run":
            vals += [0.0] * min(rd.get(6) + 7, count - len(vals))
        elif sym == "esc":
            mag = 7
            if rd.bit():
                mag = 8
                while rd.bit():
                    mag += 1
            vals.append(float(mag if rd.bit() else -mag))
        else:
            vals.append(float(sym))
    return vals


def _weights(r: list[float]) -> list[float]:
    lat = [1.0] + r[:11]
    resp, w = [0.0] * 12, [0.0] * 12
    for n in range(12):
        s = -f32(lat[11] * r[11])
        for m in range(10, -1, -1):
            s = f32(s - f32(r[m] * lat[m]))
            lat[m + 1] = f32(f32(s * r[m]) + lat[m])
        lat[0] = s
        resp[n] = s
        for i in range(n):
            s = f32(s - f32(resp[n - 1 - i] * w[i]))
        w[n] = s
    return w


def gains(g: int, r: int) -> list[float]:
    out = [f32(float(g + 1) * 8.0)]
    rho = f32(f32(float(r) * from_bits("3A83126F")) + from_bits("3F851EB8"))
    for _ in range(63):
        out.append(f32(rho * out[-1]))
    return out


def _subframe_excitation(rd, hdr, coded, s, hist, pre):
    """Append subframe s's 108 excitation values to ``hist`` (which starts at H[0])."""
    stepped, G = hdr
    lag, pg, gi = rd.get(8), rd.get(4), rd.get(6)
    gain = G[gi]
    x = [0.0] * 108
    if stepped:
        offset, alone = rd.get(1), rd.get(1)
        for k, v in enumerate(_pulses(rd, coded, 2)):
            x[offset + 2 * k] = v
        if not alone:

            def at(i):
                return x[i] if 0 <= i < 108 else 0.0

            for j in range(1 - offset, 108, 2):
                a = f32(f32(at(j - 5) + at(j + 5)) * W5)
                b = f32(f32(at(j - 3) + at(j + 3)) * W3)
                c = f32(f32(at(j - 1) + at(j + 1)) * W1)
                x[j] = f32(f32(a + b) + c)
            gain = f32(gain * 0.5)
    else:
        x = _pulses(rd, coded, 1)
    pitch = f32(float(pg) * ONE_FIFTEENTH)
    for i in range(108):
        q = 216 + 108 * s - lag + i
        src = hist[q] if q >= 0 else pre[88 + q]
        hist.append(f32(f32(gain * x[i]) + f32(pitch * src)))


def reference_decode(stream: bytes, frames: int) -> list[float]:
    """Decode ``frames`` frames of a plain codec stream; float32 values as Python floats."""
    rd = _Bits(stream)
    stepped, n, g, r = rd.get(1), rd.get(4), rd.get(4), rd.get(6)
    G = gains(g, r)
    R, M, hist = [0.0] * 12, [0.0] * 12, [0.0] * 324
    out: list[float] = []
    for _ in range(frames):
        idx = [rd.get(6) for _ in range(4)] + [16 + rd.get(5) for _ in range(8)]
        coded = idx[0] < 32 - n
        pre = G + R + M  # what lies before the history in the game's state
        h = hist[:]
        for s in range(4):
            _subframe_excitation(rd, (stepped, G), coded, s, h, pre)
        excitation = h[324:]
        hist = h[432:]
        step = [f32(f32(L[i] - R[k]) * 0.25) for k, i in enumerate(idx)]
        for b in range(36):
            if b < 4:
                R = [f32(R[k] + step[k]) for k in range(12)]
                W = _weights(R)
            for t in range(12):
                y = excitation[12 * b + t]
                for j in range(12):
                    y = f32(y + f32(W[j] * M[j]))
                M = [y] + M[:11]
                out.append(y)
    return out
