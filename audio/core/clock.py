"""Sample clock, game frame clocks and seeded random streams.

The engine counts time in samples at ``sample_rate`` Hz (48,000 by default). Game systems
tick on their own clocks derived exactly from the sample clock, without drift: frame ``k``
of a ``rate`` Hz clock starts at sample ``ceil(k * sample_rate / rate)`` (integer maths),
so a 30 Hz console frame is exactly 1,600 samples at 48 kHz and a 60 Hz frame 800.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where a stream is made: `barkbus --help` needs no numpy
    import numpy as np

__all__ = ["SAMPLE_RATE", "BLOCK", "RENDER_BLOCK", "FrameClock", "RngStreams", "seconds_to_samples"]

SAMPLE_RATE = 48_000
"""Default engine sample rate (Hz)."""
BLOCK = 256
"""Default engine block (samples): 5.33 ms at 48 kHz."""
RENDER_BLOCK = 3200
"""Default engine block of an offline render (samples). Larger than the live block: the output
does not depend on it, and fewer, longer sub-blocks cost less Python per second. A multiple of
the console frame lengths (1600 samples at 30 Hz, 800 at 60 Hz), so its boundaries fall on
frame starts and add no sub-blocks of their own."""


def seconds_to_samples(t: float, sample_rate: int = SAMPLE_RATE) -> int:
    """The sample at which something timed ``t`` seconds happens (rounded half up)."""
    return math.floor(t * sample_rate + 0.5)


@dataclass(frozen=True)
class FrameClock:
    """A game clock of ``frame_rate`` console frames per second, locked to the sample clock.

    Parameters
    ----------
    frame_rate:
        Console frames per second, Hz (an int): 30 for Skate 3, 60 for Project Sylpheed.
    sample_rate:
        The engine's sample rate, Hz.
    """

    frame_rate: int
    sample_rate: int = SAMPLE_RATE

    def start(self, frame: int) -> int:
        """First sample of console frame ``frame`` (exact: ``ceil(frame * sample_rate / frame_rate)``)."""
        return -(-frame * self.sample_rate // self.frame_rate)

    def frame_at(self, sample: int) -> int:
        """The console frame running at ``sample`` (the last frame whose start is <= sample)."""
        return sample * self.frame_rate // self.sample_rate

    def next_start(self, sample: int) -> int:
        """The first console frame start at or after ``sample``."""
        k = -(-sample * self.frame_rate // self.sample_rate)
        return self.start(k)

    def seconds(self, frames: int | float) -> float:
        """Seconds that ``frames`` console frames last."""
        return frames / self.frame_rate


def _name_words(name: str) -> list[int]:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


class RngStreams:
    """Independent random streams per subsystem, all derived from one scenario seed.

    ``streams.generator("skate.ped.12")`` always returns the same sequence for the same
    seed and name, whatever other streams exist, so adding a ped does not change another
    subsystem's draws. ``seed32(name)`` gives a 32-bit seed for a game's own generator.
    """

    def __init__(self, seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        self.seed = int(seed)
        self._cache: dict[str, np.random.Generator] = {}

    def _sequence(self, name: str) -> np.random.SeedSequence:
        import numpy as np

        return np.random.SeedSequence([self.seed & 0xFFFFFFFF, self.seed >> 32, *_name_words(name)])

    def generator(self, name: str) -> np.random.Generator:
        """The numpy Generator of stream ``name`` (created on first use, then shared)."""
        if name not in self._cache:
            import numpy as np

            self._cache[name] = np.random.Generator(np.random.PCG64(self._sequence(name)))
        return self._cache[name]

    def seed32(self, name: str) -> int:
        """A 32-bit unsigned seed for stream ``name`` (for games' own generators)."""
        return int(self._sequence(name).generate_state(1, "uint32")[0])

    def words(self, name: str, n: int) -> list[int]:
        """``n`` 32-bit unsigned seed words for stream ``name``."""
        return [int(w) for w in self._sequence(name).generate_state(n, "uint32")]
