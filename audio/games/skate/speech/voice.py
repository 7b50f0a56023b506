"""The speech voice block -> DSP parameters, every console frame (spec 5).

For each speaking ped the block holds: main level (0..32767), second level and echo level
(from :mod:`audio.games.skate.speech.mixcurves` by distance and speaker kind), the voice float (0.8-1.4,
missing 1.0), pitch (4096 = 1.0), the raw azimuth and its three PEAK values, the stream
HP/LP cutoffs, the echo filters and the distance delay.

The stream voice graph ``skate_stream_voice`` gets (:meth:`VoiceBlock.voice_params`):
``Rsp0.pitch`` (raw, 4096 = 1.0), ``PI20.centre_hz`` / ``PI20.gain`` / ``PI20.q``,
``Sen0_echo.level`` = echo level x float (pre-gain send into the slot's echo submix),
``Gai0.gain`` = level / 32767 x float, ``HI20.cutoff_hz``, ``LI20.cutoff_hz``,
``Sen0_env.level`` = second level x float (post-filter send to the environment bus),
``Pn21.angle_deg`` (degrees, + = left: raw 16384 -> +90, 49152 -> -90).
The echo submix ``skate_echo_submix`` (one per stream slot) gets ``HI20.cutoff_hz``,
``LI20.cutoff_hz`` (outputs 22 / 23) and ``Del0.seconds``.

Distance delay (spec 5.6): ``min(distance x delay_factor / 344, 0.15)`` seconds, recomputed
by a per-speaker countdown: every console frame it decrements; at <= 0 it reloads with 4
frames and recomputes (:class:`DelayCountdown` keeps it in closed form); the delay is posted
only when it changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from audio.games.skate.speech.mixcurves import CurveSet, MixCurves, curve_set, level_outputs, peak

__all__ = [
    "VoiceBlock",
    "DelayCountdown",
    "distance_delay",
    "VoiceMixer",
    "azimuth_degrees",
    "SPEED_OF_SOUND",
    "MAX_DELAY",
    "is_far_clip",
]

SPEED_OF_SOUND = 344.0
MAX_DELAY = 0.15


def azimuth_degrees(raw: int) -> float:
    """Raw azimuth (0..65535 = 360 degrees, 16384 = left) -> degrees in (-180, 180], + = left."""
    deg = (int(raw) & 0xFFFF) * 360.0 / 65536.0
    return deg - 360.0 if deg > 180.0 else deg


def is_far_clip(name: str) -> bool:
    """A far clip's name ends in ``_f``."""
    stem = name[:-4] if name.lower().endswith(".dat") else name
    return stem.lower().endswith("_f")


def distance_delay(factor: float, distance: float) -> float:
    """The distance delay (s) of a speaker ``distance`` metres away (spec 5.6): float32 step by
    step as in the game, ``f32(f32(factor * distance) / 344)``, capped at f32(0.15) (NaN: the cap)."""
    d = np.float32(np.float32(factor) * np.float32(distance)) / np.float32(SPEED_OF_SOUND)
    return float(d if d <= np.float32(MAX_DELAY) else np.float32(MAX_DELAY))


@dataclass
class DelayCountdown:
    """One speaker's delay refresh countdown (spec 5.6), in closed form.

    In the game the countdown decrements every console frame and, at <= 0, reloads with
    ``reload`` frames and recomputes the delay from the speaker's distance. From its first frame
    ``start`` it so recomputes on frames ``start``, ``start + P``, ``start + 2P``... (``P =
    max(reload, 1)``), and the delay on frame ``f`` is the one computed on :meth:`refresh_frame`
    ``(f)``. Kept this way, a speaker nobody hears costs nothing per frame: the distance is asked
    for only when a delay is read.

    Parameters
    ----------
    factor:
        The delay factor (spec 5.6; 1.0).
    reload:
        Console frames between refreshes (4).
    start:
        The countdown's first console frame.
    """

    factor: float = 1.0
    reload: int = 4
    start: int = 0
    refreshed: int = -1
    """The refresh frame :attr:`delay` was computed on (-1: none yet)."""
    delay: float = 0.0
    """Seconds."""

    def refresh_frame(self, frame: int) -> int:
        """The last refresh frame at or before ``frame`` (console frames, ``>= start``)."""
        period = max(self.reload, 1)
        return self.start + (frame - self.start) // period * period

    def at(self, frame: int, distance: Callable[[int], float]) -> float:
        """The delay (s) on console frame ``frame`` (``>= start``).

        Parameters
        ----------
        frame:
            A console frame at or after the last one read.
        distance:
            The speaker's distance (m) on a given refresh frame; called only when that frame's
            delay is not computed yet.
        """
        r = self.refresh_frame(frame)
        if r != self.refreshed:
            self.delay = distance_delay(self.factor, distance(r))
            self.refreshed = r
        return self.delay


class VoiceBlock(NamedTuple):
    """One speaker's voice block for one console frame (immutable; a named tuple, made every
    frame a speaker is heard)."""

    level: float  # 0..32767
    second_level: float  # linear
    echo_level: float  # linear
    voice_float: float
    pitch: int  # 4096 = 1.0
    azimuth: int  # raw 0..65535
    peak: tuple[float, float, float]
    hp_hz: float
    lp_hz: float
    echo_hp_hz: float
    echo_lp_hz: float
    delay: float  # seconds
    far: bool
    outputs: tuple[int, int]

    def voice_params(self) -> dict[str, float]:
        f = self.voice_float
        return {
            "Rsp0.pitch": float(self.pitch),
            "PI20.centre_hz": self.peak[0],
            "PI20.gain": self.peak[1],
            "PI20.q": self.peak[2],
            "Sen0_echo.level": self.echo_level * f,
            "Gai0.gain": self.level / 32767.0 * f,
            "HI20.cutoff_hz": self.hp_hz,
            "LI20.cutoff_hz": self.lp_hz,
            "Sen0_env.level": self.second_level * f,
            "Pn21.angle_deg": azimuth_degrees(self.azimuth),
        }

    def submix_params(self) -> dict[str, float]:
        return {
            "HI20.cutoff_hz": self.echo_hp_hz,
            "LI20.cutoff_hz": self.echo_lp_hz,
            "Del0.seconds": self.delay,
        }


Shape = tuple[bool, tuple[int, int], CurveSet]
"""What a speaker's voice block reads (:meth:`VoiceMixer.shape`): whether its clip is far, its
level outputs (main, second) and the curves of its main, second and echo levels and of the
stream's and the echo's HP and LP cutoffs, in that order."""


class VoiceMixer:
    """Computes voice blocks from the curves; holds the per-speaker delay countdowns."""

    def __init__(
        self, curves: MixCurves | None = None, delay_factor: float = 1.0, delay_frames: int = 4
    ) -> None:
        self.curves = curves or MixCurves()
        self.delay_factor = delay_factor
        self.delay_frames = delay_frames
        self.countdowns: dict[int, DelayCountdown] = {}
        self._shapes: dict[tuple[str, int, str], Shape] = {}
        """(kind, event, clip name) -> :meth:`shape`."""

    def countdown(self, speaker: int, start: int) -> DelayCountdown:
        """``speaker``'s delay countdown (made on first use, first frame ``start``: a speaker
        keeps its countdown for the whole run).

        Parameters
        ----------
        speaker:
            The speaker's id (a ped).
        start:
            The console frame the countdown starts on, if it is new.
        """
        cd = self.countdowns.get(speaker)
        if cd is None:
            cd = self.countdowns[speaker] = DelayCountdown(self.delay_factor, self.delay_frames, start)
        return cd

    @staticmethod
    def main_output(kind: str, event: int, clip_name: str) -> int:
        """The mix output :meth:`block` reads the main level from (spec 5.7)."""
        return level_outputs(kind, event, is_far_clip(clip_name))[0]

    def level(self, main: int, distance: float) -> float:
        """The main level (0..32767) of :meth:`block` from output ``main`` alone (all a
        decisions-only run reads)."""
        return max(0.0, min(32767.0, self.curves(main, distance)))

    def shape(self, kind: str, event: int, clip_name: str) -> Shape:
        """What :meth:`block` reads for a ``kind`` speaker playing ``clip_name`` of ``event``:
        ``(far, level outputs, the curves)`` (kept: the curves are set when the mixer is made).

        Parameters
        ----------
        kind:
            The speaker's kind (``"regular"``, ``"security"``, ``"bum"`` or ``"pro"``).
        event:
            The speech event id.
        clip_name:
            The playing clip's name (``_f``: a far clip).
        """
        key = (kind, event, clip_name)
        shape = self._shapes.get(key)
        if shape is None:
            far = is_far_clip(clip_name)
            outputs = level_outputs(kind, event, far)
            shape = self._shapes[key] = (
                far,
                outputs,
                curve_set(tuple(self.curves.outputs[o] for o in (*outputs, 21, 13, 14, 22, 23))),
            )
        return shape

    def block(
        self,
        *,
        kind: str,
        event: int,
        clip_name: str,
        distance: float,
        azimuth: int,
        delay: float,
        voice_float: float | None = 1.0,
        pitch: int = 4096,
    ) -> VoiceBlock:
        """The voice block of a speaker playing ``clip_name`` of ``event`` at ``distance`` metres
        (:meth:`shape`, :meth:`block_of`)."""
        return self.block_of(self.shape(kind, event, clip_name), distance, azimuth, delay, voice_float, pitch)

    @staticmethod
    def block_of(
        shape: Shape, distance: float, azimuth: int, delay: float, voice_float: float | None, pitch: int
    ) -> VoiceBlock:
        """The voice block of a speaker of :meth:`shape` ``shape`` (positional: made on every
        frame a speaker is heard).

        Parameters
        ----------
        shape:
            :meth:`shape`'s answer for the speaker and its clip.
        distance:
            Metres from the listener.
        azimuth:
            Raw azimuth (0..65535, 16384 = left).
        delay:
            The distance delay, seconds.
        voice_float:
            The ped's voice float (None: 1.0).
        pitch:
            4096 = 1.0.
        """
        far, outputs, curves = shape
        main, second, echo, hp, lp, echo_hp, echo_lp = curves(distance)
        return VoiceBlock(  # positional (the fields in order)
            max(0.0, min(32767.0, main)),  # level
            second,  # second_level
            echo,  # echo_level
            1.0 if voice_float is None else voice_float,
            pitch,
            int(azimuth) & 0xFFFF,
            peak(azimuth),
            hp,  # hp_hz
            lp,  # lp_hz
            echo_hp,  # echo_hp_hz
            echo_lp,  # echo_lp_hz
            delay,
            far,
            outputs,
        )
