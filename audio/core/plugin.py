"""The game contract: what a game package provides, importable without any front end.

A game is a package ``audio/games/NAME/`` with one registry line in :mod:`audio.games`. It
imports only the base layer (:mod:`audio.core.errors`, ``schema``, ``binary``, ``paths``,
``clock``), the core (bus, voices, world, this module), :mod:`audio.dsp` and :mod:`audio.codecs`
(the layer contract in ``pyproject.toml`` enforces it). From this module it uses:

:class:`GameSystem`
    The abstract base of a game system. Required: ``name``, ``frame_rate``, ``outcomes``,
    :attr:`~GameSystem.graphs`, :meth:`~GameSystem.attach`, :meth:`~GameSystem.tick`. Every
    optional capability is a method with a default that says "nothing to tell", so the engine and
    the front ends call it unconditionally (no probing by attribute name).
:class:`~audio.core.outcomes.Outcome`
    The base of the game's declared decision outcomes (one enum type per system).
:class:`Action`, :class:`Param`
    The game's friendly actions (OSC addresses, TUI keys) mapped onto its event kinds.
:class:`GameAdapter`
    The base of the game's terminal-UI adapter.
:class:`ScenarioContext`
    What the game's scenario section and event builders receive.

Every game follows one file layout (``tone`` is the smallest, and the template)::

    game.py       GAME = Game(...): the registry record
    events.py     the game's bus events (Event subclasses)
    system.py     the GameSystem subclass and its Outcome enum (behaviour; no file parsing)
    scenario.py   the scenario section: system_from_scenario() builds the system,
                  scenario_events() the [[event]] builders
    formats/      readers and writers of the game's files (apart from behaviour)
    actions.py    ACTIONS: a tuple of Action
    tui.py        Adapter(GameAdapter)
    cli.py        register(subparsers): the game's command group (optional)
    demo/         the demo install and scenario (optional)

:class:`GameCodec`
    A sample format of the game's own (Starlancer's ``.ut``) that ``barkbus encode`` writes;
    the game's record names it (``Game.codecs``), so the encode command never names a game.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from audio.core.bus import Decision, Event, event_kinds
from audio.core.errors import ScenarioError
from audio.core.fields import PortError, make_event
from audio.core.outcomes import Outcome
from audio.core.paths import PathPolicy

if TYPE_CHECKING:
    from audio.core.engine import Engine

__all__ = [
    "NEVER",
    "POS",
    "VEC3",
    "Action",
    "GameAdapter",
    "GameCodec",
    "GameSystem",
    "Param",
    "PlayKey",
    "Port",
    "parse_arg",
    "ScenarioContext",
    "ShareKey",
    "default_play_key",
]

NEVER = 1 << 62
"""What :meth:`GameSystem.next_tick` returns when only an event or a voice's end can make the
system's tick change anything."""

ShareKey = tuple[str, str]
"""``(event, clip)`` of the batch report's shares and catalogues (``str(id)`` for numeric ids)."""


PlayKey = tuple[Any, Any, Any]
"""``(event, clip, take)`` of a decision for the batch report (any may be ``None``)."""


def default_play_key(detail: Mapping[str, Any]) -> PlayKey:
    """``(event, clip, take)`` from the detail keys ``event``, ``clip`` (else ``line``, else
    ``message``) and ``take`` (else ``index``).

    Parameters
    ----------
    detail:
        A decision's detail fields.
    """
    clip = detail.get("clip", detail.get("line", detail.get("message")))
    return detail.get("event"), clip, detail.get("take", detail.get("index"))


class GameSystem(abc.ABC):
    """A game's speech system: ticks on its own frame clock and reacts to bus events.

    Subclasses set the class attributes ``name`` (decision-log system name, e.g.
    ``"skate.speech"``), ``frame_rate`` (console frames per second, Hz) and ``outcomes`` (the
    :class:`~audio.core.outcomes.Outcome` type every decision of the system is a member of).
    """

    name: str
    frame_rate: int
    outcomes: ClassVar[type[Outcome]]

    # -- required ----------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def graphs(self) -> tuple[str, ...]:
        """Voice graph names the system plays through (loaded by :meth:`Engine.prepare`)."""

    @abc.abstractmethod
    def attach(self, engine: Engine) -> None:
        """Join ``engine``: subscribe to the bus; called once by :meth:`Engine.add_system`.

        Parameters
        ----------
        engine:
            The engine the system plays in (its bus, voices, world and sample rate in Hz).
        """

    @abc.abstractmethod
    def tick(self, frame: int, engine: Engine) -> None:
        """Run one console frame.

        Parameters
        ----------
        frame:
            Console frame number (frames of ``frame_rate`` Hz since sample 0).
        engine:
            The engine, at the first sample of the frame.
        """

    # -- optional capabilities (defaults: nothing to tell) ------------------------------
    def next_tick(self, frame: int) -> int:
        """The first console frame, ``frame`` or later, at which :meth:`tick` can change
        anything (a decision, a voice, the system's state as its events and queries see it),
        if no event arrives and no voice ends before then; :data:`NEVER` when only those can.

        The engine (:attr:`~audio.core.engine.EngineConfig.skip_ticks`) ticks the system only
        at the frames this names, and asks again after every tick, every event, at a
        voice's end and after the last row it was handed by :meth:`Engine.schedule
        <audio.core.engine.Engine.schedule>`, so the system must tick the frame it returns with
        whatever it skipped in between (timers count down by the frames elapsed) and must make
        the result the same as ticking every frame. Its event handlers learn the frame ticking
        every frame would have reached from :meth:`Engine.frame_of
        <audio.core.engine.Engine.frame_of>`. A system whose ticks until then would only write
        parameters may compute those writes here and hand them to :meth:`Engine.schedule
        <audio.core.engine.Engine.schedule>`.

        Parameters
        ----------
        frame:
            The next console frame the system has not ticked (frames of ``frame_rate`` Hz).

        Returns
        -------
        int
            A console frame ``>= frame``. The default, ``frame``, ticks every frame.
        """
        return frame

    def summary(self, decisions: Sequence[Decision]) -> str | None:
        """A one-paragraph summary of a render for its report (``None``: nothing to say).

        Parameters
        ----------
        decisions:
            Every decision of the render, all systems.
        """
        return None

    def is_speaking(self, speaker: Any) -> bool:
        """Whether ``speaker`` has a line playing now (``False``: the port then follows the
        decision stream's ``Started``/``Finished`` pairs)."""
        return False

    def line_active(self, line_id: Any) -> bool:
        """Whether line ``line_id`` is playing now (``False``: see :meth:`is_speaking`)."""
        return False

    def snapshot(self) -> dict[str, list[str]]:
        """Panels for the terminal UI: title -> rows (queues, timers); ``{}``: none."""
        return {}

    def expected_shares(self, decisions: Sequence[Decision]) -> Mapping[ShareKey, float]:
        """Expected plays per ``(event, clip)`` in a run, from the system's own weights.

        Parameters
        ----------
        decisions:
            The run's decisions (all systems; filter on ``d.system == self.name``).

        Returns
        -------
        Mapping
            ``(event, clip) -> expected plays``; empty when the system cannot say.
        """
        return {}

    def catalogue(self, decisions: Sequence[Decision]) -> set[ShareKey]:
        """Every ``(event, clip)`` the run's speakers could play (empty: cannot say)."""
        return set()

    def event_names(self) -> Mapping[str, str]:
        """Display names of event ids (``{}``: none)."""
        return {}

    def play_key(self, detail: Mapping[str, Any]) -> PlayKey:
        """``(event, clip, take)`` a decision's detail names, for the batch report's plays and
        takes tables (``None`` where it names none).

        Parameters
        ----------
        detail:
            The decision's detail (its JSON fields but ``at``, ``t``, ``system``, ``outcome``).

        The default is :func:`default_play_key`; a game whose decisions name their clip
        otherwise (Starlancer: the speech ``file``) overrides it.
        """
        return default_play_key(detail)

    def variety(self) -> tuple[str, str] | None:
        """Detail keys ``(what groups plays, what should vary inside a group)`` for the batch
        report's repeat rates, or ``None`` when the system has no takes to vary."""
        return None

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """``(field, problem)`` when ``event`` names something this system's install does not
        have (a voice, speaker, event, file, ship), with a did-you-mean; ``None`` otherwise
        (the default: nothing to check). Scenarios and ports ask before posting."""
        return None

    def allow_paths(self, policy: PathPolicy) -> None:
        """Open files named by events only under ``policy``'s roots (ports and live runs).
        The default: the system opens no files named by events."""
        return None

    def start_prefetch(self) -> None:
        """Start decoding takes ahead of need (a live run); the audio is the same either way.
        The default: nothing to prefetch."""
        return None


@dataclass
class ScenarioContext:
    """What a game's section and event builders get: where the scenario lives and its seed.

    Parameters
    ----------
    path:
        The scenario file (messages; relative file names resolve against its folder).
    seed:
        The render's seed.
    doc:
        The whole parsed scenario document.
    where:
        Path of the entry being read (``"event[3]"``), for error messages.
    emitters:
        Declared emitter ids.
    """

    path: Path
    seed: int
    doc: dict[str, Any]
    where: str = ""
    emitters: set[str] = field(default_factory=set)

    @property
    def base(self) -> Path:
        """The scenario's folder."""
        return self.path.parent

    def resolve(self, rel: str) -> Path:
        """``rel`` against the scenario's folder (an absolute path stays as it is)."""
        p = Path(rel)
        return p if p.is_absolute() else (self.base / p)

    def error(self, where: str | None, problem: str) -> ScenarioError:
        """A :class:`ScenarioError` naming this scenario file."""
        return ScenarioError(str(self.path), where, problem)


@dataclass(frozen=True)
class GameCodec:
    """A game's own sample format, written by ``barkbus encode`` and checked by its decoder.

    Parameters
    ----------
    name:
        The ``--codec`` name (``"ut"``); the game's record lists it under ``Game.codecs``.
    extensions:
        File extensions it is written as, with the dot (``(".ut",)``); the first is the one
        written to stdout.
    channels:
        The channel count the format holds (1 = mono), or ``None`` for any.
    encode:
        ``encode(pcm, sample_rate) -> bytes``: the file from float32 ``pcm`` in [-1, 1), shape
        (samples, channels), at ``sample_rate`` Hz (the codec resamples if it has a fixed rate).
    decode:
        ``decode(data) -> (pcm, sample_rate)``: float32 samples (samples, channels) and their
        sample rate in Hz, as the game would play the file.
    """

    name: str
    extensions: tuple[str, ...]
    channels: int | None
    encode: Callable[[Any, int], bytes]
    decode: Callable[[bytes], tuple[Any, int]]


# -- actions ---------------------------------------------------------------------------
VEC3 = "vec3"
"""Parameter type of a position: three numbers (x, y, z metres), one field or x/y/z fields."""
POS = ("position", "pos")
"""Event field names a position parameter may land in."""
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
    """One action parameter.

    Parameters
    ----------
    name:
        The parameter's name (OSC argument, TUI prompt).
    type:
        ``int``, ``float``, ``str``, ``bool`` or :data:`VEC3`.
    aliases:
        Event field names it may land in, first match wins.
    default:
        Its value when absent (required if not given).
    """

    name: str
    type: Any
    aliases: tuple[str, ...]
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def width(self) -> int:
        """Positional arguments it takes (3 for a :data:`VEC3`)."""
        return 3 if self.type == VEC3 else 1


@dataclass(frozen=True)
class Action:
    """A friendly action: ``name`` (OSC address without the leading slash), event ``kind``,
    its ``params`` in the order an OSC message or a key press gives them, and a ``help`` line.

    An action whose event kind is not registered, or whose required parameters find no field,
    is unavailable with the reason (:meth:`unavailable`); the TUI and OSC server show/reject it.
    """

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
        """``/name a:int [b:float]``: the OSC address and its arguments."""
        parts = []
        for p in self.params:
            label = f"{p.name}:{p.type if isinstance(p.type, str) else p.type.__name__}"
            parts.append(label if p.required else f"[{label}]")
        return f"/{self.name} " + " ".join(parts)

    def build(self, args: Sequence[Any], t: float | None = None) -> Event:
        """The event from positional ``args`` (a VEC3 takes three).

        Parameters
        ----------
        args:
            Untrusted values in parameter order.
        t:
            Event time (seconds on the engine clock); ``None`` leaves the event's default.

        Raises
        ------
        PortError
            Wrong count, a bad value or an unavailable action; the message says which.
        """
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

    def build_named(self, values: Mapping[str, Any], t: float | None = None) -> Event:
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


# -- terminal UI -----------------------------------------------------------------------
class Port(Protocol):
    """What a TUI adapter drives (an :class:`audio.port.VoicePort`)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def actions(self) -> Mapping[str, Action]: ...

    def post(self, event: Event, *, when: str | None = None) -> Any: ...


class GameAdapter:
    """Speakers and numbered actions of one game in the terminal UI; ``fire(k)`` posts choice
    ``k``. A game's ``tui.py`` subclasses it as ``Adapter``."""

    game = "none"
    fire_action = ""
    choices: tuple[tuple[Any, str], ...] = ()
    features: frozenset[str] = frozenset()
    """The optional keys this game answers: "spawn" (n), "stop" (s), "speed" (+/-), "zombie" (z),
    "phase" (p). The legend shows only these."""

    def __init__(self, port: Port) -> None:
        self.port = port
        self.speakers: list[str] = []

    def systems(self, kind: type[GameSystem]) -> list[Any]:
        """The port engine's systems of class ``kind`` (a game's adapter reads its own system)."""
        return [s for s in self.port.engine.systems if isinstance(s, kind)]

    def action(self, name: str) -> Action | None:
        """The usable action ``name``, or ``None``."""
        a = self.port.actions.get(name)
        return a if a is not None and a.unavailable() is None else None

    def status(self) -> list[str]:
        """One line per game action: usable, or why not."""
        actions = self.port.actions
        names = sorted(n for n in actions if n.startswith(self.game + "/"))
        out = []
        for n in names:
            why = actions[n].unavailable()
            out.append(f"/{n}: " + ("ok" if why is None else f"unavailable ({why})"))
        return out

    def post(self, name: str, *args: Any) -> str:
        """Post action ``name`` with ``args`` now; returns the line the TUI shows."""
        a = self.port.actions.get(name)
        if a is None:
            return f"no action /{name}"
        try:
            self.port.post(a.build(list(args)), when="now")
        except PortError as exc:
            return str(exc)
        return f"/{name} " + " ".join(str(x) for x in args)

    def fire(self, speaker: str, k: int) -> str:
        if not 0 <= k < len(self.choices):
            return f"no choice {k + 1} (have {len(self.choices)})"
        return self.post(self.fire_action, *self._speaker_arg(speaker), self.choices[k][0])

    def _speaker_arg(self, speaker: str) -> tuple[Any, ...]:
        return (speaker,)

    def move(self, speaker: str, position: tuple[float, float, float]) -> str:
        return self.post("emitter", speaker, *position)

    def spawn(self) -> str:
        return "this game has no spawn"

    def stop(self, speaker: str) -> str:
        return "this game has no stop"

    def speed(self, mps: float) -> str:
        return "this game has no player speed"

    def zombie(self, on: bool) -> str:
        return "this game has no zombie mode"

    def phase(self, phase: int) -> str:
        return "this game has no phases"
