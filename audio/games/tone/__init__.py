"""The test-tone system: the smallest game, needing no game data (tests, audition, benchmarks)."""
