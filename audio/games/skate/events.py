"""Bus events of the Skate 3 speech system (kinds ``skate.*``). Times ``t`` in seconds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from msgspec import Meta

from audio.core.bus import Event

__all__ = [
    "PedSpawn",
    "SpeechValue",
    "PedMove",
    "PlayerSpeed",
    "ZombieMode",
    "ChallengeChange",
    "PhotoFlag",
    "MODEL_KINDS",
]

MODEL_KINDS = ("regular", "security", "bum", "pro")
"""Ped model kinds: ``pro`` takes the main-cast path; ``security`` / ``bum`` are regular peds
whose type bits select the guard radio / bum lines (derived from the voice when ``regular``)."""


@dataclass(frozen=True, kw_only=True)
class PedSpawn(Event, kind="skate.spawn"):
    """A ped appears.

    ``voice`` is a voice id (41-96) or a voice name from the clip names (``busm1``);
    ``position`` in metres, or ``path`` = ``((t, x, y, z), ...)`` waypoints in absolute
    seconds (linear between them, held at the ends); ``far_threshold`` metres (None: 20, pros
    30); ``voice_float`` 0.8-1.4 (None: 1.0); ``pitch`` 4096 = 1.0; ``type_bit`` /
    ``variant_bit`` None = derived from the install's records (else the voice table, variant 1);
    ``partner_type`` (w3) and ``conversation`` n (w4); pros: ``cast_bit`` / ``cast_word`` and
    the other skater's ``other_cast_bit`` / ``other_cast_word``.
    """

    ped: int
    voice: int | str
    model: Literal["regular", "security", "bum", "pro"] = "regular"
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    path: tuple[tuple[float, float, float, float], ...] = ()
    far_threshold: float | None = None
    voice_float: float | None = None
    pitch: int = 4096
    type_bit: int | None = None
    variant_bit: int | None = None
    partner_type: int = 0
    conversation: int = 0
    cast_bit: int = 0
    cast_word: int = 0
    other_cast_bit: int = 0
    other_cast_word: int = 0


@dataclass(frozen=True, kw_only=True)
class SpeechValue(Event, kind="skate.value"):
    """A ped's state graph sends ``SendSpeechEvent speechvalue=value`` (spec 2.2)."""

    ped: int
    value: Annotated[int, Meta(ge=0, le=255)]


@dataclass(frozen=True, kw_only=True)
class PedMove(Event, kind="skate.move"):
    """A ped moves to ``position`` (metres); cancels its path."""

    ped: int
    position: tuple[float, float, float]


@dataclass(frozen=True, kw_only=True)
class PlayerSpeed(Event, kind="skate.speed"):
    """The player's speed in m/s (the gate compares km/h = m/s x 3.6)."""

    speed: Annotated[float, Meta(ge=0.0, le=1000.0)]


@dataclass(frozen=True, kw_only=True)
class ZombieMode(Event, kind="skate.zombie"):
    """Zombie mode on or off (w9 = 2 and the gate's zombie step)."""

    on: bool


@dataclass(frozen=True, kw_only=True)
class ChallengeChange(Event, kind="skate.challenge"):
    """The running challenge type (None = no challenge)."""

    challenge: int | None = None


@dataclass(frozen=True, kw_only=True)
class PhotoFlag(Event, kind="skate.photo"):
    """The system's photographer flag (value 29 repeats every 1.0 s while it is set)."""

    on: bool
