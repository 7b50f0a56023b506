"""Radiata Stories' registry record (RMF1 dialogue packets as voice cues)."""

from audio.games import Game

GAME = Game(
    name="radiata",
    title="Radiata Stories",
    package="audio.games.radiata",
    outcomes="system:RadiataOutcome",
    cli_help="Radiata Stories RMF1 dialogue: dump messages as voice cues",
    demo="demo/talk.toml",
)
