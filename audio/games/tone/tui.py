"""The terminal UI's view of the test-tone system."""

from __future__ import annotations

from typing import Any

from audio.core.plugin import GameAdapter

__all__ = ["Adapter"]


class Adapter(GameAdapter):
    """Test tones: speakers ann/bob/cat, choices = notes."""

    game = "tone"
    features = frozenset({"stop"})
    fire_action = "tone/on"
    choices = tuple(
        (f, f"{f:.0f} Hz") for f in (262.0, 294.0, 330.0, 349.0, 392.0, 440.0, 494.0, 523.0, 587.0)
    )

    def __init__(self, port: Any) -> None:
        super().__init__(port)
        self.speakers = ["ann", "bob", "cat"]
        self._n = 0

    def fire(self, speaker: str, k: int) -> str:
        if not 0 <= k < len(self.choices):
            return f"no choice {k + 1}"
        self._n += 1
        return self.post("tone/on", speaker, f"{speaker}-{self._n}", self.choices[k][0], 1.0, 0.5)

    def stop(self, speaker: str) -> str:
        return self.post("tone/stop", speaker)
