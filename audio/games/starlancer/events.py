"""Bus events of the Starlancer radio system (kinds ``starlancer.*``)."""

from __future__ import annotations

from dataclasses import dataclass

from audio.core.bus import Event

__all__ = ["Gate", "Reset", "Say", "Trigger"]


@dataclass(frozen=True, kw_only=True)
class Trigger(Event, kind="starlancer.trigger"):
    """Raise trigger ``condition`` (a ``TT_*`` name such as ``Destroyed``, or its number) on
    ``subject`` (an object ID, or a ship / flight group name). ``component`` qualifies the event
    (0xFF = the subject itself); ``locals`` are the thread's event values (default: the subject)."""

    condition: str | int = 0
    subject: str | int = 0
    component: int = 0xFF
    locals: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Say(Event, kind="starlancer.say"):
    """A radio line from outside the script (a port's executor, autonomous chatter).

    ``speaker``: ``ship`` (``ship`` = name or slot), ``pilot`` (``pilot`` = face number) or
    ``nobody``; ``mode``: now | queued | if_idle; ``film_flags``: 5 loop, 6 once + hold, 13 no line;
    ``expiry``: game ticks (100 Hz) after the say, -1 never; ``remark``: "" for a plain line, else
    generic | taunt | jump | landing | eject (gated by DisableGenericComms / DisableTaunts)."""

    speech: str = ""
    speaker: str = "nobody"
    ship: str | int = ""
    pilot: int = -1
    head: int = 0
    mode: str = "queued"
    film_flags: int = 5
    expiry: int = -1
    remark: str = ""


@dataclass(frozen=True, kw_only=True)
class Gate(Event, kind="starlancer.gate"):
    """Set a remark gate: ``gate`` = generic (DisableGenericComms) | taunts (DisableTaunts)."""

    gate: str = "generic"
    disabled: bool = True


@dataclass(frozen=True, kw_only=True)
class Reset(Event, kind="starlancer.reset"):
    """``radio_reset`` (queue, reports and gates cleared, the line stopped); ``restart`` also
    restarts the mission script (threads, timers, globals) and runs the start part."""

    restart: bool = False
