"""Project Sylpheed's registry record (reactive combat chatter)."""

from audio.games import Game

GAME = Game(
    name="sylpheed",
    title="Project Sylpheed",
    package="audio.games.sylpheed",
    outcomes="system:SylpheedOutcome",
    cli_help="Project Sylpheed data: paks, .slb banks, tables, cue join",
    demo="demo/dogfight.toml",
)
