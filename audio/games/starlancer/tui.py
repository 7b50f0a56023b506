"""The terminal UI's view of Starlancer: the mission's ships as speakers, trigger conditions as keys.

The system's own panels (``snapshot``) list the pending threads, the window, the speech voice and
the queue.
"""

from __future__ import annotations

from typing import Any

from audio.core.plugin import GameAdapter
from audio.games.starlancer.system import StarlancerSystem

__all__ = ["Adapter"]


class Adapter(GameAdapter):
    """Fire a trigger condition on a ship of the mission."""

    game = "starlancer"
    fire_action = "starlancer/trigger"
    choices = tuple(
        (c, c)
        for c in (
            "Destroyed",
            "ShotAt",
            "Launched",
            "JumpedIn",
            "ProximityClose",
            "PlayerReadyToJump",
            "Targetted",
            "Docked",
            "GameTimerExpired",
        )
    )

    def __init__(self, port: Any) -> None:
        super().__init__(port)
        for s in self.systems(StarlancerSystem):
            mission = s.mission
            self.speakers = [mission.ship_name(i) or f"ship({i})" for i in range(len(mission.ships))]
            break

    def fire(self, speaker: str, k: int) -> str:
        if not 0 <= k < len(self.choices):
            return f"no choice {k + 1} (have {len(self.choices)})"
        return self.post(self.fire_action, self.choices[k][0], speaker)
