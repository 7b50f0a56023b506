"""Radiata Stories' registry record (RMF1 dialogue packets as voice cues)."""

from audio.games import Game

GAME = Game(
    name="radiata",
    title="Radiata Stories",
    package="audio.games.radiata",
    outcomes="system:RadiataOutcome",
    demo="demo/talk.toml",
)
