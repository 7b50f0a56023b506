"""The listener (camera) and the emitters, with static or keyframed positions.

Coordinates are metres: x to the right (east), y up, z forward (north). The listener's
yaw is in degrees, counter-clockwise seen from above, so at yaw 0 it faces +z and at
yaw 90 it faces -x. Azimuths are relative to the listener's facing, + = left; the raw
16-bit azimuth maps 360 degrees to 65536 (16384 = the left side).
"""

from __future__ import annotations

import logging
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from audio.core.bus import Event, EventBus
from audio.core.outcomes import CoreOutcome
from audio.dsp.curves import azimuth_to_raw

if TYPE_CHECKING:
    from audio.core.engine import Engine

log = logging.getLogger("barkbus.world")

__all__ = ["World", "Path3", "ListenerPose", "EmitterMove"]

Vec3 = tuple[float, float, float]


def _vec3(v: Vec3 | tuple[float, ...] | list[float]) -> Vec3:
    """A position as three floats (metres)."""
    return (float(v[0]), float(v[1]), float(v[2]))


@dataclass(frozen=True, kw_only=True)
class ListenerPose(Event, kind="world.listener"):
    """Move the listener (camera) to ``position`` facing ``yaw_deg``."""

    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw_deg: float = 0.0


@dataclass(frozen=True, kw_only=True)
class EmitterMove(Event, kind="world.emitter"):
    """Place emitter ``emitter`` at ``position`` (creating it if needed)."""

    emitter: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class Path3:
    """Keyframed positions: (seconds, position) pairs, linear in between, held at the ends."""

    keys: list[tuple[float, Vec3]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._times = [k[0] for k in self.keys]

    def at(self, t: float) -> Vec3:
        ks = self.keys
        if len(ks) == 1 or t <= ks[0][0]:
            return ks[0][1]
        if t >= ks[-1][0]:
            return ks[-1][1]
        if len(self._times) != len(ks):
            self._times = [k[0] for k in ks]
        i = bisect_right(self._times, t)
        (t0, p0), (t1, p1) = ks[i - 1], ks[i]
        f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
        return (p0[0] + (p1[0] - p0[0]) * f, p0[1] + (p1[1] - p0[1]) * f, p0[2] + (p1[2] - p0[2]) * f)


def _polar(p: Vec3, l: Vec3, sin_yaw: float, cos_yaw: float) -> tuple[float, float]:
    """``(metres, azimuth degrees, + = left)`` of ``p`` from a listener at ``l`` whose yaw has
    this sine and cosine."""
    dx, dz = p[0] - l[0], p[2] - l[2]
    fwd = dx * -sin_yaw + dz * cos_yaw
    left = dx * -cos_yaw + dz * -sin_yaw
    az = 0.0 if fwd == 0.0 and left == 0.0 else math.degrees(math.atan2(left, fwd))
    return math.dist(p, l), az


MAX_EMITTERS = 4096
"""Emitters a world holds at most; a ``world.emitter`` naming a new one beyond is refused
(a ``Dropped`` decision of system ``world``), so a client cannot grow it without bound."""


class World:
    """Where the listener and the emitters are, at the engine's current time.

    ``max_emitters`` (default :data:`MAX_EMITTERS`) bounds the emitters events may create.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.listener = Path3([(0.0, (0.0, 0.0, 0.0))])
        self.listener_yaw = 0.0
        self.emitters: dict[str, Path3] = {}
        self.max_emitters = MAX_EMITTERS
        self.dropped = 0
        """``world.emitter`` events refused because the world was full."""
        self._pose: tuple[int, Path3, float, Vec3, float, float] | None = None
        self._trig: tuple[float, float, float] | None = None
        """(yaw degrees, its sine, its cosine) :meth:`polar_at` last used."""
        engine.bus.subscribe(self, [ListenerPose, EmitterMove])

    def handle(self, event: Event, bus: EventBus) -> None:
        if isinstance(event, ListenerPose):
            self.set_listener(event.position, event.yaw_deg)
        elif isinstance(event, EmitterMove):
            if event.emitter not in self.emitters and len(self.emitters) >= self.max_emitters:
                self.dropped += 1
                if self.dropped == 1:
                    log.warning("world: %d emitters; refusing new ones (max_emitters)", self.max_emitters)
                bus.decide(
                    "world",
                    CoreOutcome.Dropped,
                    emitter=event.emitter[:128],
                    reason=f"{self.max_emitters} emitters",
                )
                return
            self.set_emitter(event.emitter, event.position)

    @property
    def t(self) -> float:
        return self._engine.now / self._engine.sample_rate

    def set_listener(
        self, position: Vec3 = (0.0, 0.0, 0.0), yaw_deg: float = 0.0, path: Path3 | None = None
    ) -> None:
        self.listener = path if path is not None else Path3([(0.0, _vec3(position))])
        self.listener_yaw = float(yaw_deg)

    def set_emitter(self, emitter: str, position: Vec3 = (0.0, 0.0, 0.0), path: Path3 | None = None) -> None:
        if path is None:
            self._hold(emitter, _vec3(position))
        else:
            self.emitters[emitter] = path

    def polar_to(self, position: Vec3) -> tuple[float, float]:
        """``(metres, azimuth degrees)`` of ``position`` from the listener now (as :meth:`polar`
        of an emitter there, without holding one: a game system placing its speakers each frame
        registers them with :meth:`set_emitter` once).

        Parameters
        ----------
        position:
            ``(x, y, z)`` metres.
        """
        return self._polar_of(_vec3(position))

    def distance_to(self, position: Vec3) -> float:
        """Metres from the listener now to ``position`` (the distance :meth:`polar_to` returns:
        a decisions-only system that needs no panning)."""
        return math.dist(_vec3(position), self._listener_pose()[0])

    def _hold(self, emitter: str, pos: Vec3) -> None:
        old = self.emitters.get(emitter)
        if old is None or len(old.keys) != 1 or old.keys[0][1] != pos:
            self.emitters[emitter] = Path3([(0.0, pos)])

    def position(self, emitter: str) -> Vec3:
        try:
            return self.emitters[emitter].at(self.t)
        except KeyError:
            raise KeyError(
                f"no emitter {emitter!r} (known: {', '.join(sorted(self.emitters)) or 'none'})"
            ) from None

    def listener_position(self) -> Vec3:
        """The listener's position now (metres; computed once per sample time)."""
        return self._listener_pose()[0]

    def distance(self, emitter: str) -> float:
        """Metres from the listener to ``emitter`` now."""
        return self.polar(emitter)[0]

    def azimuth_deg(self, emitter: str) -> float:
        """Angle of ``emitter`` from the listener's facing, -180..180, + = left."""
        return self.polar(emitter)[1]

    def polar(self, emitter: str) -> tuple[float, float]:
        """``(metres, azimuth degrees)`` of ``emitter`` from the listener now (see
        :meth:`distance` and :meth:`azimuth_deg`)."""
        return self._polar_of(self.position(emitter))

    def polar_at(self, position: Vec3, t: float) -> tuple[float, float]:
        """``(metres, azimuth degrees)`` of ``position`` from the listener at ``t`` seconds: its
        position then on its path, facing its yaw now. What :meth:`polar_to` gives at that time
        if the listener is not set again before (a system computing frames ahead).

        Parameters
        ----------
        position:
            ``(x, y, z)`` metres.
        t:
            Seconds on the engine clock.
        """
        yaw = self.listener_yaw
        trig = self._trig
        if trig is None or trig[0] is not yaw:  # the same float object: the same yaw, sign and all
            r = math.radians(yaw)
            trig = self._trig = (yaw, math.sin(r), math.cos(r))
        return _polar(_vec3(position), self.listener.at(t), trig[1], trig[2])

    def _polar_of(self, p: Vec3) -> tuple[float, float]:
        return _polar(p, *self._listener_pose())

    def _listener_pose(self) -> tuple[Vec3, float, float]:
        """The listener's position and the sine and cosine of its yaw, once per sample time."""
        now, lst, yaw = self._engine.now, self.listener, self.listener_yaw
        c = self._pose
        if c is None or c[0] != now or c[1] is not lst or c[2] != yaw:
            r = math.radians(yaw)
            c = self._pose = (now, lst, yaw, lst.at(self.t), math.sin(r), math.cos(r))
        return c[3], c[4], c[5]

    def azimuth_raw(self, emitter: str) -> int:
        """Raw azimuth 0..65535 (0 front, 16384 left side, 32768 behind)."""
        return azimuth_to_raw(self.azimuth_deg(emitter))
