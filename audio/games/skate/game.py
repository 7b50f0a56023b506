"""Skate 3's registry record (living-world pedestrian speech)."""

from audio.games import Game

GAME = Game(
    name="skate",
    title="Skate 3",
    package="audio.games.skate",
    system="system:system_from_scenario",
    events="system:scenario_events",
    demo="demo/plaza.toml",
    outcomes=(
        (
            "refused",
            (
                "Repeat",
                "Gap",
                "Probability",
                "Challenge",
                "Flags",
                "NotFollow",
                "Speed",
                "Timers",
                "Zombie",
                "UnknownEvent",
                "Unsupported",
                "NoRecord",
                "Expired",
                "LevelCut",
            ),
        ),
        ("quiet", ("Spawned",)),
        ("state", ("PhoneRing",)),
    ),
)
