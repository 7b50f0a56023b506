"""The terminal UI's view of Radiata Stories: talks to start, advance, choose.

Speakers are the talks the install offers (``FILE:PACKET`` for every present packet); key 1
starts the selected talk, key 2 presses continue, keys 3.. pick choice options 0... The system's
``snapshot()`` panels show the current message, its reveal and wait, and the playing voices.
"""

from __future__ import annotations

from typing import Any

from audio.core.errors import BarkbusError
from audio.core.plugin import GameAdapter
from audio.games.radiata.system import RadiataTalkSystem

__all__ = ["Adapter"]


class Adapter(GameAdapter):
    """Radiata talks: FILE:PACKET targets, talk / advance / choose."""

    game = "radiata"
    fire_action = "radiata/talk"
    choices = (("talk", "talk"), ("advance", "advance"), *((i, f"choose {i}") for i in range(4)))

    def __init__(self, port: Any) -> None:
        super().__init__(port)
        for s in self.systems(RadiataTalkSystem):
            rmf = s.rmf
            for name in rmf.names():
                try:
                    f = rmf.file(name)
                except BarkbusError:  # a bad file only hides its talks
                    f = None
                if f is not None:
                    self.speakers += [f"{name}:{i}" for i, p in enumerate(f.packets) if p is not None]
            break

    def fire(self, speaker: str, k: int) -> str:
        if not 0 <= k < len(self.choices):
            return f"no choice {k + 1} (have {len(self.choices)})"
        if k == 0:
            file, _, packet = speaker.rpartition(":")
            return self.post("radiata/talk", file, int(packet) if packet.isdigit() else 0)
        if k == 1:
            return self.post("radiata/advance")
        return self.post("radiata/choose", self.choices[k][0])
