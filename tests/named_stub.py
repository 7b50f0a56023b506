"""A system under another game's name, for tests that drive that game's events over a light tone
port (a port accepts only the events of the games it runs)."""

from __future__ import annotations

from audio.core.outcomes import CoreOutcome
from audio.core.plugin import GameSystem


class NamedStub(GameSystem):
    """Does nothing; only its ``name`` matters (e.g. ``"skate.speech"``)."""

    frame_rate = 30
    outcomes = CoreOutcome
    graphs = ()

    def __init__(self, name: str) -> None:
        self.name = name

    def attach(self, engine) -> None:
        pass

    def tick(self, frame, engine) -> None:
        pass

    def check_event(self, event):
        return None
