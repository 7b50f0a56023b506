"""Random generators of the Skate 3 speech code.

* :class:`AwcGenerator` -- the speech library's six-word add-with-carry generator (spec 3.1)
  with the retail seed table. Retail adds a boot-time base to the table, so retail itself is
  not reproducible; we seed from the plain table, the table plus an offset (the retail
  scheme with a fixed base), or six words of the scenario seed (:meth:`RngStreams.words`).
* :class:`~audio.core.crt.MsvcRand` -- the manager's ``rand()`` as the public port implements it: the MSVC
  LCG ``s = s*214013 + 2531011; return (s >> 16) & 0x7FFF``.
* :class:`AwcRand` -- the other reading of the retail notes: ``rand()`` served by the
  title-wide add-with-carry generator. How a 15-bit ``rand()`` is derived from one 32-bit
  draw is OUR choice (not traced): ``(draw >> 16) & 0x7FFF``. It shares the generator it is
  given (normally the library's), as the notes say the title generator is shared.

All arithmetic is unsigned 32-bit, wrapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from audio.core.clock import RngStreams
from audio.core.crt import MsvcRand

__all__ = ["SEED_TABLE", "AwcGenerator", "AwcRand", "ManagerRand", "manager_rand"]

SEED_TABLE: tuple[int, ...] = (0xF22D0E56, 0x883126E9, 0xC624DD2F, 0x0702C49C, 0x9E353F7D, 0x6FDF3B64)
"""The retail seed table of the add-with-carry generator (words s0..s5)."""

_M = 0xFFFFFFFF


class AwcGenerator:
    """The speech library's six-word add-with-carry generator (spec 3.1).

    One draw: ``s4 += s5`` (carry c); ``s3 = s3 + s4 + c`` (new carry); likewise s2, s1, s0
    (the carry out of s0 is dropped); then ``s5 += 1`` and, if it wrapped to 0, ``+1``
    ripples into s4, s3, ... s0, stopping at the first word that is non-zero after its +1.
    The draw returns s0 (after the ripple). Carries are the true carries of the 32-bit sums.
    (EA's sound-library code tests ``sum < old word`` instead; that differs only when a
    word plus its carry wraps to exactly the old value, probability 2^-32 per step.)
    """

    def __init__(self, words: Sequence[int] = SEED_TABLE) -> None:
        if len(words) != 6:
            raise ValueError(f"the generator needs 6 seed words, got {len(words)}")
        self.s = [int(w) & _M for w in words]

    @classmethod
    def from_table(cls, offset: int = 0) -> AwcGenerator:
        """The retail table with ``offset`` added to every word (retail adds a boot time base)."""
        return cls([(w + offset) & _M for w in SEED_TABLE])

    @classmethod
    def from_streams(cls, streams: RngStreams, name: str = "skate.library") -> AwcGenerator:
        """Six words of the scenario seed's stream ``name``."""
        return cls(streams.words(name, 6))

    @property
    def state(self) -> tuple[int, ...]:
        return tuple(self.s)

    def draw(self) -> int:
        """One 32-bit draw."""
        s = self.s
        t = s[4] + s[5]
        c = t >> 32
        s[4] = t & _M
        for i in (3, 2, 1, 0):
            t = s[i] + s[i + 1] + c
            c = t >> 32
            s[i] = t & _M
        for i in (5, 4, 3, 2, 1, 0):
            s[i] = (s[i] + 1) & _M
            if s[i] != 0:
                break
        return s[0]

    def scaled(self, n: int) -> int:
        """``((draw >> 16) * n >> 16) & 0xFFFF`` in 32-bit arithmetic: 0 <= result < n for n < 65536."""
        return ((((self.draw() >> 16) * n) & _M) >> 16) & 0xFFFF


class ManagerRand(Protocol):
    """What the speech manager needs: a C-style ``rand()`` returning 0..32767."""

    def rand(self) -> int: ...


class AwcRand:
    """``rand()`` from the add-with-carry generator: ``(draw >> 16) & 0x7FFF`` (our choice)."""

    def __init__(self, generator: AwcGenerator) -> None:
        self.generator = generator

    def rand(self) -> int:
        return (self.generator.draw() >> 16) & 0x7FFF


def manager_rand(kind: str, *, seed: int = 1, generator: AwcGenerator | None = None) -> ManagerRand:
    """Build the manager's ``rand()``: ``kind`` "msvc" (seeded with ``seed``) or "awc" (sharing
    ``generator``)."""
    if kind == "msvc":
        return MsvcRand(seed)
    if kind == "awc":
        return AwcRand(generator if generator is not None else AwcGenerator())
    raise ValueError(f"manager rand must be 'msvc' or 'awc', got {kind!r}")
