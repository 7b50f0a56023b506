"""The chatter system's uniform ``rand01`` (seed 000: ``sub_8220D970``).

The game builds a uniform from two ``rand()`` calls folded into 16 bits and converted to a
float. Neither the CRT generator nor the exact fold is public, so both are settings
(OUR CHOICE, not the game's known behaviour):

generators
    ``"msvc"`` (default): the Microsoft CRT LCG ``s = s * 214013 + 2531011``,
    ``rand() = (s >> 16) & 0x7FFF`` — the CRT the Xbox 360 SDK shipped is a Microsoft one.
    ``"ansi"``: the C standard's sample LCG ``s = s * 1103515245 + 12345``, same output.
folds (``a`` = first call, ``b`` = second)
    ``"hi8lo8"`` (default): ``((a & 0xFF) << 8 | (b & 0xFF)) / 65536.0``.
    ``"xor16"``: ``(((a << 8) ^ b) & 0xFFFF) / 65536.0``.

Both folds give one of 65 536 values in [0, 1) and are exactly representable as float32,
so ``rand01`` returns a Python float that IS the game's single-precision value.
"""

from __future__ import annotations

from audio.core.crt import ANSI, MSVC, MsvcRand

__all__ = ["GameRand", "GENERATORS", "FOLDS"]

GENERATORS = {"msvc": MSVC, "ansi": ANSI}
FOLDS = ("hi8lo8", "xor16")


class GameRand:
    """A deterministic ``rand()`` / ``rand01()`` pair.

    Parameters
    ----------
    seed:
        32-bit initial state (the engine derives it with ``RngStreams.seed32``).
    generator, fold:
        See the module docstring.
    """

    def __init__(self, seed: int, generator: str = "msvc", fold: str = "hi8lo8") -> None:
        if generator not in GENERATORS:
            raise ValueError(f"unknown rand generator {generator!r} (have {sorted(GENERATORS)})")
        if fold not in FOLDS:
            raise ValueError(f"unknown rand01 fold {fold!r} (have {list(FOLDS)})")
        self.generator, self.fold = generator, fold
        self.crt = MsvcRand(seed, *GENERATORS[generator])

    @property
    def calls(self) -> int:
        """``rand()`` calls so far."""
        return self.crt.calls

    def rand(self) -> int:
        """One CRT ``rand()``: 0..32767."""
        return self.crt.rand()

    def rand01(self) -> float:
        """Two ``rand()`` calls folded into 16 bits, as a float in [0, 1)."""
        a = self.rand()
        b = self.rand()
        if self.fold == "hi8lo8":
            v = ((a & 0xFF) << 8) | (b & 0xFF)
        else:
            v = ((a << 8) ^ b) & 0xFFFF
        return v / 65536.0
