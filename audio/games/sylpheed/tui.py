"""The terminal UI's view of Project Sylpheed: crews, chatter events, mission phase."""

from __future__ import annotations

from typing import Any

from audio.core.plugin import GameAdapter
from audio.games.sylpheed.system import SylpheedChatterSystem

__all__ = ["Adapter"]


class Adapter(GameAdapter):
    """Project Sylpheed crews: speakers from the chatter system's roster when it has one."""

    game = "sylpheed"
    features = frozenset({"phase"})
    fire_action = "sylpheed/bark"
    choices = tuple(
        (r, r)
        for r in (
            "LOCKON_1",
            "FOUND_PLAYER",
            "DAMAGED",
            "HP_LESS_30",
            "KILL_UNIT",
            "KILLED",
            "ATTACK_SUCCEEDED",
            "AVOID_ATTACK",
            "ORDER_WINGMAN_ATTACK",
        )
    )

    def __init__(self, port: Any) -> None:
        super().__init__(port)
        for s in self.systems(SylpheedChatterSystem):
            self.speakers = [str(x) for x in s.speakers()]
            break

    def phase(self, phase: int) -> str:
        return self.post("sylpheed/phase", phase)
