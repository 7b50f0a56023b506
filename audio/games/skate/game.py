"""Skate 3's registry record (living-world pedestrian speech)."""

from audio.games import Game

GAME = Game(
    name="skate",
    title="Skate 3",
    package="audio.games.skate",
    outcomes="system:SkateOutcome",
    demo="demo/plaza.toml",
)
