"""The test-tone system's registry record: a game with no game data, for tests and audition."""

from audio.games import Game

GAME = Game(
    name="tone",
    title="Test tones",
    package="audio.games.tone",
    outcomes="system:ToneOutcome",
    cli=None,
    port="scenario:port_section",
    needs_install=False,
)
