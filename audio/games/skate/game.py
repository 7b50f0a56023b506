"""Skate 3's registry record (living-world pedestrian speech)."""

from audio.games import Game

GAME = Game(
    name="skate",
    title="Skate 3",
    package="audio.games.skate",
    outcomes="system:SkateOutcome",
    cli_help="Skate 3 speech banks: index, ls, info, decode, export, curves",
    demo="demo/plaza.toml",
)
