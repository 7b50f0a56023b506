"""Starlancer's registry record (mission-script radio comms, the comms queue, .ut speech)."""

from audio.games import Game

GAME = Game(
    name="starlancer",
    title="Starlancer",
    package="audio.games.starlancer",
    outcomes="system:StarlancerOutcome",
    cli_help="Starlancer: mission scripts (.DTE), radio, .ut speech",
    demo="demo/mission.toml",
    codecs=(("ut", "formats.ut:UT_CODEC"),),
)
