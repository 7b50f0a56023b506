"""The C runtime's ``rand()``: one implementation for every game that draws from it.

Microsoft's CRT (``MSVC``, the Xbox and Windows SDKs): ``state = state * 214013 + 2531011``
(mod 2**32), ``rand() = (state >> 16) & 0x7FFF``, seeded by ``srand(seed)`` (1 when never
seeded). Skate 3's speech manager, Project Sylpheed's chatter and Starlancer's mission script
draw from it; the C standard's sample generator (``ANSI``: 1103515245, 12345) has the same form
and output bits.
"""

from __future__ import annotations

__all__ = ["ANSI", "MSVC", "MsvcRand"]

MSVC = (214013, 2531011)
"""Microsoft CRT multiplier and increment."""
ANSI = (1103515245, 12345)
"""The C standard's sample ``rand()`` multiplier and increment."""
_M = 0xFFFFFFFF


class MsvcRand:
    """A CRT ``rand()`` (MSVC's unless ``mul``/``add`` say otherwise).

    Parameters
    ----------
    seed:
        The ``srand`` value (32-bit; 1 is the CRT's state before any ``srand``).
    mul, add:
        The generator's multiplier and increment (:data:`MSVC` or :data:`ANSI`).
    """

    def __init__(self, seed: int = 1, mul: int = MSVC[0], add: int = MSVC[1]) -> None:
        self.state = int(seed) & _M
        self.mul, self.add = mul, add
        self.calls = 0

    def rand(self) -> int:
        """One ``rand()``: 0..32767."""
        self.state = (self.state * self.mul + self.add) & _M
        self.calls += 1
        return (self.state >> 16) & 0x7FFF

    def __call__(self) -> int:
        return self.rand()
