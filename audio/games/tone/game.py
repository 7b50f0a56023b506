"""The test-tone system's registry record: a game with no game data, for tests and audition."""

from audio.games import Game

GAME = Game(
    name="tone",
    title="Test tones",
    package="audio.games.tone",
    system="system:system_from_scenario",
    events="system:scenario_events",
    cli=None,
    port="system:port_section",
    needs_install=False,
    outcomes=(("refused", ("Rejected",)),),
)
