"""Bus events of the Starlancer radio system (kinds ``starlancer.*``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from msgspec import Meta

from audio.core.bus import Event

Mode = Literal["now", "queued", "if_idle"]
"""When a line plays: at once, after the queue, or only when the radio is idle."""
Remark = Literal["", "generic", "taunt", "jump", "landing", "eject"]
"""An autonomous remark's kind ("" for a plain line)."""
Speaker = Annotated[str, Meta(pattern=r"^(ship|pilot|nobody)(:.*)?$", max_length=256)]
"""``ship[:NAME]``, ``pilot[:N]`` or ``nobody``."""
Ticks = Annotated[int, Meta(ge=-1, le=100_000_000)]
"""Game ticks (100 Hz); -1 never."""

__all__ = ["HAPPENINGS", "Gate", "Happen", "Reset", "Say", "Trigger"]


@dataclass(frozen=True, kw_only=True)
class Trigger(Event, kind="starlancer.trigger"):
    """Raise trigger ``condition`` (a ``TT_*`` name such as ``Destroyed``, or its number) on
    ``subject`` (an object ID, or a ship / flight group name). ``component`` qualifies the event
    (0xFF = the subject itself); ``locals`` are the thread's event values (default: the subject)."""

    condition: str | int = 0
    subject: str | int = 0
    component: Annotated[int, Meta(ge=0, le=0xFF)] = 0xFF
    locals: Annotated[tuple[int | str, ...], Meta(max_length=64)] = ()
    groups: bool = True


@dataclass(frozen=True, kw_only=True)
class Say(Event, kind="starlancer.say"):
    """A radio line from outside the script (a port's executor, autonomous chatter).

    ``speaker``: ``ship`` (``ship`` = name or slot), ``pilot`` (``pilot`` = face number) or
    ``nobody``; ``mode``: now | queued | if_idle; ``film_flags``: 5 loop, 6 once + hold, 13 no line;
    ``expiry``: game ticks (100 Hz) after the say, -1 never; ``remark``: "" for a plain line, else
    generic | taunt | jump | landing | eject (gated by DisableGenericComms / DisableTaunts)."""

    speech: Annotated[str, Meta(min_length=1, max_length=256)]
    speaker: Speaker = "nobody"
    ship: str | int = ""
    pilot: Annotated[int, Meta(ge=-1, le=0xFFFF)] = -1
    head: Annotated[int, Meta(ge=0, le=0xFFFF)] = 0
    mode: Mode = "queued"
    film_flags: Annotated[int, Meta(ge=0, le=0xFFFF)] = 5
    expiry: Ticks = -1
    remark: Remark = ""


@dataclass(frozen=True, kw_only=True)
class Gate(Event, kind="starlancer.gate"):
    """Set a remark gate: ``gate`` = generic (DisableGenericComms) | taunts (DisableTaunts)."""

    gate: Literal["generic", "taunts"] = "generic"
    disabled: bool = True


@dataclass(frozen=True, kw_only=True)
class Reset(Event, kind="starlancer.reset"):
    """``radio_reset`` (queue, reports and gates cleared, the line stopped); ``restart`` also
    restarts the mission script (threads, timers, globals) and runs the start part."""

    restart: bool = False


Happening = Literal[
    "create",
    "explode",
    "kill",
    "hit",
    "missile",
    "missile_clear",
    "eject",
    "eject_call",
    "launch",
    "lost",
    "wingman",
    "variable",
    "key",
    "jumping",
    "jumped",
    "land",
    "backup",
]
"""What a :class:`Happen` event may report."""
HAPPENINGS: tuple[str, ...] = get_args(Happening)


@dataclass(frozen=True, kw_only=True)
class Happen(Event, kind="starlancer.happen"):
    """Something in the game world the script and the radio's remarks react to (spec 11.6, 11.15).

    ``what``: ``create`` (the ship exists: it may speak), ``explode`` (it starts exploding: silent;
    posts Destroyed; with ``kind`` pod: the pod of ``ship``'s ejected pilot explodes, which only
    cancels the rescue remark), ``kill`` (the player's kill of ``ship``; ``kind`` fighter | torpedo
    | pod | other; posts Destroyed with the player as Killer), ``hit`` (``other`` hits ``ship``; posts
    ShotAt with ``value`` as the damage; a hostile attacker on the player's ship may taunt),
    ``missile`` / ``missile_clear`` (a missile homes on the player's ship or stops), ``eject``
    (a wingman's pilot ejects: ``ejt_001`` and the rescue timer), ``eject_call`` (Moose calls the
    pilot to eject: ``ejt_001..008``, queued; the moment is the port's), ``launch`` (the player's
    launch from ``kind`` reliant | yamato), ``lost`` (a wing ship is lost), ``wingman`` (the player
    orders ``ship``: ``kind`` attack | backoff | help | status | scold | praise, or taunt (``ship``
    a hostile fighter); ``value`` the armour level for status; ``busy``), ``variable``
    (``kind`` jump_ready | warp_ready | landing_cleared = ``value``), ``key`` (action ``value``
    held while ``busy``), ``jumping`` / ``jumped`` (``ship`` has a jump order / jumped in), ``land``
    (PERMISSION TO LAND to carrier ``kind`` reliant | yamato; ``value`` the mission's success: 0
    success or better, 1 partial, 2 other), ``backup`` (REQUEST BACKUP to carrier ``kind``;
    ``busy`` = backup available; posts PlayerWantsBackup on the player's ship when granted)."""

    what: Happening = "create"
    ship: str | int = ""
    other: str | int = ""
    kind: Annotated[str, Meta(max_length=64)] = ""
    value: Annotated[int, Meta(ge=-(2**31), le=2**32 - 1)] = 0
    busy: bool = False
