"""The terminal UI's view of Skate 3: peds, speech values, player speed, zombie mode."""

from __future__ import annotations

from typing import Any

from audio.core.plugin import GameAdapter
from audio.games.skate.system import SkateSpeechSystem

__all__ = ["Adapter"]


class Adapter(GameAdapter):
    """Skate 3 peds: ``n`` spawns ped 1, 2, ...; choices = common speech values (spec 2.2)."""

    game = "skate"
    features = frozenset({"spawn", "speed", "zombie"})
    fire_action = "skate/value"
    choices = (
        (2, "2 Idle"),
        (4, "4 AvoidJump"),
        (6, "6 CollisionKnockdown"),
        (10, "10 NearbyReaction"),
        (14, "14 JoinChase"),
        (20, "20 Flee"),
        (23, "23 LongCheer"),
        (51, "51 grunt"),
        (53, "53 warn"),
    )

    FALLBACK_VOICES = (41, 42, 43, 46, 47, 49)
    """Voice ids for spawned peds when the install's voices are not known."""

    def _system(self) -> SkateSpeechSystem | None:
        return next(iter(self.systems(SkateSpeechSystem)), None)

    @property
    def voices(self) -> tuple[int, ...]:
        """The install's voice ids (spawned peds take them in turn)."""
        system = self._system()
        names = system.voice_names if system is not None else None
        return tuple(sorted(set(names.values()))) if names else self.FALLBACK_VOICES

    @property
    def speakers(self) -> list[str]:
        """Every ped the speech system knows, scenario-spawned ones included."""
        system = self._system()
        peds = system.peds if system is not None else None
        known = [str(p) for p in sorted(peds)] if peds else []
        return known + [p for p in self._spawned if p not in known]

    @speakers.setter
    def speakers(self, value: list[str]) -> None:
        self._spawned = list(value)

    def _speaker_arg(self, speaker: str) -> tuple[Any, ...]:
        return (int(speaker),)

    def spawn(self) -> str:
        ped = max([int(p) for p in self.speakers] + [0]) + 1
        voices = self.voices
        voice = voices[(ped - 1) % len(voices)]
        msg = self.post("skate/spawn", ped, voice, 0.0, 0.0, 5.0)
        if msg.startswith("/skate/spawn"):
            self._spawned.append(str(ped))
        return msg

    def move(self, speaker: str, position: tuple[float, float, float]) -> str:
        if self.action("skate/move") is not None:
            return self.post("skate/move", int(speaker), *position)
        return super().move(speaker, position)

    def speed(self, mps: float) -> str:
        return self.post("skate/speed", mps)

    def zombie(self, on: bool) -> str:
        return self.post("skate/zombie", int(on))
