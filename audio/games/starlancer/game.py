"""Starlancer's registry record (mission-script radio comms, the comms queue, .ut speech)."""

from audio.games import Game

GAME = Game(
    name="starlancer",
    title="Starlancer",
    package="audio.games.starlancer",
    demo="demo/mission.toml",
    outcomes=(
        (
            "refused",
            (
                "Gated",
                "Dropped",
                "Expired",
                "Missing",
                "MissingSpeech",
                "StackUnderflow",
                "StackOverflow",
                "DivideByZero",
                "InstructionCap",
                "PoolFull",
            ),
        ),
        (
            "quiet",
            (
                "Said",
                "WindowClosed",
                "FilmEnded",
                "ThreadStarted",
                "ThreadEnded",
                "Wait",
                "TimerCreated",
                "TimerFired",
                "Skipped",
            ),
        ),
        ("state", ("Static", "Gate", "Reset", "TriggerFired", "RandomBranch")),
    ),
)
