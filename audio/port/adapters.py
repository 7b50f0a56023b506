"""Friendly actions (OSC addresses, TUI keys) mapped onto bus event kinds.

An :class:`Action` names an event kind ("skate.value") and its parameters in the order
an OSC message or a key press gives them. Each parameter lists the event field names it
may land in (``aliases``), so the mapping follows the game module's own field names; an
action whose event kind is not registered, or whose required parameters find no field,
is reported unavailable with the reason (the TUI and OSC server then show/reject it).
Each game lists its own in its package (``actions.py``), registered through :mod:`audio.games`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from audio.core.bus import Event, event_kinds
from audio.port.events import PortError, make_event

__all__ = [
    "ACTIONS",
    "GENERIC_ACTIONS",
    "POS",
    "VEC3",
    "Action",
    "Param",
    "available_actions",
    "load_game_actions",
    "parse_arg",
    "register_action",
]

VEC3 = "vec3"
"""Parameter type of a position: three numbers (x, y, z metres), one field or x/y/z fields."""
_REQUIRED = object()


def parse_arg(text: str) -> Any:
    """A typed action argument from text (a command line, the TUI's ``:`` prompt): an int,
    else a float, else the string itself."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Param:
    """One action parameter: ``name``, ``type`` (int, float, str, bool or VEC3), the event
    field names it may map to, and a default (required if absent)."""

    name: str
    type: Any
    aliases: tuple[str, ...]
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def width(self) -> int:
        return 3 if self.type == VEC3 else 1


@dataclass(frozen=True)
class Action:
    """A friendly action: ``name`` (OSC address without the leading slash), event ``kind``."""

    name: str
    kind: str
    params: tuple[Param, ...]
    help: str

    def _fields(self) -> set[str] | None:
        cls = event_kinds().get(self.kind)
        return None if cls is None else {f.name for f in dataclasses.fields(cls)}

    def unavailable(self) -> str | None:
        """None if the action can be used, else why not."""
        fields = self._fields()
        if fields is None:
            return f"event kind {self.kind!r} is not registered (game module not loaded)"
        for p in self.params:
            if p.required and self._target(p, fields) is None:
                return f"event {self.kind!r} has no field for {p.name!r} (tried {', '.join(p.aliases)})"
        return None

    @staticmethod
    def _target(p: Param, fields: set[str]) -> str | tuple[str, str, str] | None:
        for a in p.aliases:
            if a in fields:
                return a
        if p.type == VEC3 and {"x", "y", "z"} <= fields:
            return ("x", "y", "z")
        return None

    def usage(self) -> str:
        parts = []
        for p in self.params:
            label = f"{p.name}:{p.type if isinstance(p.type, str) else p.type.__name__}"
            parts.append(label if p.required else f"[{label}]")
        return f"/{self.name} " + " ".join(parts)

    def build(self, args: list[Any] | tuple[Any, ...], t: float | None = None) -> Event:
        """The event from positional ``args`` (a VEC3 takes three); PortError if bad."""
        reason = self.unavailable()
        if reason is not None:
            raise PortError(f"/{self.name}: {reason}")
        need = sum(p.width() for p in self.params if p.required)
        most = sum(p.width() for p in self.params)
        if not need <= len(args) <= most:
            count = str(need) if need == most else f"{need}..{most}"
            raise PortError(
                f"/{self.name}: expected {count} arguments, got {len(args)}; usage: {self.usage()}"
            )
        values: dict[str, Any] = {}
        i = 0
        for p in self.params:
            if i < len(args):
                w = p.width()
                if i + w > len(args):
                    raise PortError(f"/{self.name}: {p.name} needs {w} numbers; usage: {self.usage()}")
                values[p.name] = list(args[i : i + w]) if w == 3 else args[i]
                i += w
            elif not p.required:
                values[p.name] = p.default
        return self.build_named(values, t)

    def build_named(self, values: dict[str, Any], t: float | None = None) -> Event:
        """The event from parameter names -> values (missing optional ones use defaults)."""
        fields = self._fields()
        if fields is None:
            raise PortError(f"/{self.name}: {self.unavailable()}")
        unknown = set(values) - {p.name for p in self.params}
        if unknown:
            raise PortError(f"/{self.name}: unknown parameter(s) {', '.join(sorted(unknown))}")
        kw: dict[str, Any] = {}
        for p in self.params:
            v = values.get(p.name, p.default)
            if v is _REQUIRED:
                raise PortError(f"/{self.name}: missing {p.name}; usage: {self.usage()}")
            target = self._target(p, fields)
            if target is None:
                continue
            if isinstance(target, tuple):
                if not isinstance(v, (list, tuple)) or len(v) != 3:
                    raise PortError(f"/{self.name}: {p.name} must be three numbers, got {v!r:.60}")
                kw.update(zip(target, v))
            else:
                kw[target] = v
        if t is not None:
            kw["t"] = t
        return make_event(self.kind, **kw)


POS = ("position", "pos")
"""Event field names a position parameter may land in."""

GENERIC_ACTIONS: tuple[Action, ...] = (
    Action(
        "listener",
        "world.listener",
        (Param("position", VEC3, POS), Param("yaw_deg", float, ("yaw_deg",), 0.0)),
        "move the listener (metres, yaw degrees)",
    ),
    Action(
        "emitter",
        "world.emitter",
        (Param("emitter", str, ("emitter", "id")), Param("position", VEC3, POS)),
        "place an emitter (metres)",
    ),
)
"""Actions every game has (the world's listener and emitters)."""

ACTIONS: dict[str, Action] = {a.name: a for a in GENERIC_ACTIONS}
"""Registered actions by name: the generic ones, then each game's (see :func:`load_game_actions`)."""


def register_action(action: Action) -> None:
    """Add (or replace) a friendly action."""
    ACTIONS[action.name] = action


def load_game_actions() -> dict[str, Action]:
    """Register the actions of every game in :mod:`audio.games` (once) and return them all."""
    from audio.games import all_games

    for g in all_games():
        if g.actions is not None and not any(n.startswith(g.name + "/") for n in ACTIONS):
            for a in g.load("actions"):
                register_action(a)
    return ACTIONS


def available_actions() -> dict[str, Action]:
    """The registered actions usable now (their event kinds and fields exist)."""
    return {n: a for n, a in load_game_actions().items() if a.unavailable() is None}
