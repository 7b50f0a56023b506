"""Project Sylpheed's registry record (reactive combat chatter)."""

from audio.games import Game

GAME = Game(
    name="sylpheed",
    title="Project Sylpheed",
    package="audio.games.sylpheed",
    demo="demo/dogfight.toml",
    outcomes=(
        ("refused", ("Duplicate", "RollFailed", "PoolFull", "NotLoaded", "NoRule", "Missing")),
        ("quiet", ("Cooldown", "Picked", "CrewLoaded")),
        ("state", ("Phase", "Enabled", "Disabled", "OneShotSpent")),
    ),
)
