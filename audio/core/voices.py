"""Voices: one playing instance of a voice graph fed by a PCM source.

The :class:`VoiceManager` owns the voice budget. Instance allocation is deterministic:
instances whose source has ended are reclaimed only when a voice starts (a sample every
render shares, whatever its block size), and a new voice takes the lowest free instance.
When the budget is full the oldest voice is stolen with the release fade (Unreal's
StopOldest / FMOD's "oldest"): the steal rule is a setting, not any game's documented rule.
A stolen voice's fade holds its instance only while the bank has room (the headroom): under
a burst that fills the bank, the oldest fading voice is cut at once and its instance reused,
so any number of starts in one block never runs out of instances (counted in ``cut``).
Between starts, the engine calls :meth:`VoiceManager.reclaim_quiet` on a fixed sample grid:
an ended voice whose filters have rung out (:meth:`GraphBank.idle`) leaves its bank then, so
a long render does not keep processing voices that ended minutes ago. Which instance a new
voice takes is unchanged by it (a start reclaims every ended instance anyway).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from audio.core.errors import RunFailure
from audio.dsp.bank import GraphBank
from audio.dsp.nodes import Send

if TYPE_CHECKING:
    from audio.dsp.mixer import Mixer

__all__ = ["Voice", "VoiceManager", "VoiceLimitError", "ParamWriter"]


class VoiceLimitError(RunFailure):
    """No instance could be found for a new voice (budget and headroom exhausted)."""


@dataclass(eq=False)
class Voice:
    """Handle to a playing (or finished) voice. Read its state at game ticks."""

    id: int
    graph: str
    instance: int
    slot: int
    band: int
    tag: str
    sample_rate: float
    """The source's sample rate, Hz."""
    length: int
    """Source length, samples (at :attr:`sample_rate`)."""
    started_at: int  # engine sample of the start event
    _bank: GraphBank = field(repr=False)
    stopped: bool = False  # a stop (release fade) was requested
    meta: dict[str, Any] = field(default_factory=dict)
    _ended: int = -1
    written: dict[str, float] = field(default_factory=dict, repr=False)
    """The last value written to each ``"NODE.param"`` (at the start or by a set)."""

    @property
    def ended_at(self) -> int | None:
        """Engine sample at which the voice went silent for good, or None."""
        if self._ended >= 0:
            return self._ended
        e = int(self._bank.ended_at[self.instance])
        return e if e >= 0 else None

    @property
    def done(self) -> bool:
        return self.ended_at is not None

    @property
    def playing(self) -> bool:
        return not self.done

    @property
    def peak_dbfs(self) -> float | None:
        """Peak of the voice's output in the last processed block, in dBFS (a meter for UIs);
        None while the mixer's meters are off (:attr:`audio.dsp.mixer.Mixer.meters`)."""
        if self.done:
            return -math.inf
        if not self._bank.metered:
            return None
        peak = float(np.abs(self._bank.output[self.instance]).max())
        return 20.0 * math.log10(peak) if peak > 1e-9 else -math.inf

    @property
    def position(self) -> int:
        """Source samples consumed so far."""
        return int(self._bank.ipos[self.instance]) if self._ended < 0 else self.length


class VoiceManager:
    """Starts, updates and stops voices on a :class:`~audio.dsp.mixer.Mixer`.

    Parameters
    ----------
    mixer: the engine's mixer.
    budget: maximum voices per voice graph that are not fading out.
    release_samples: the fixed stop/steal fade (16 samples: Skate 3's 16-sample release).
    start_silence: samples of silence before a new voice's first sample (Skate 3: the first
        256-sample block of a new voice is silent).
    """

    def __init__(
        self, mixer: Mixer, budget: int = 128, release_samples: int = 16, start_silence: int = 256
    ) -> None:
        self.mixer = mixer
        self.budget = budget
        self.release_samples = release_samples
        self.start_silence = start_silence
        self._live: dict[str, dict[int, Voice]] = {}
        self._next_id = 1
        self.now = 0
        self.stolen = 0
        self.cut = 0
        """Fading voices ended at once because a burst needed their instance."""
        self.history: list[Voice] = []
        self.keep_history = True
        self.start_hooks: list[Callable[[Voice], None]] = []
        """Called with every voice started, after its start (a UI's per-voice records)."""
        self.version = 0
        """Counts the changes that can move a voice's end (:func:`audio.dsp.skip.voice_end_seen`):
        a start, a stop, a freed instance, a write to a resampler's parameter (the pitch). The
        engine predicts the next visible end again only when it changed."""

    def _reclaim(self, graph: str, bank: GraphBank) -> None:
        live = self._live.setdefault(graph, {})
        for inst, voice in list(live.items()):
            e = bank.ended_at[inst]
            if e >= 0:
                voice._ended = int(e)
                bank.free(inst)
                del live[inst]
                self.version += 1

    def reclaim_quiet(self) -> None:
        """Free every ended voice whose chain is silent (every filter's history below
        :data:`audio.dsp.bank.QUIET_FLOOR`): one numpy pass per bank, Python work only per
        voice freed."""
        for graph, live in self._live.items():
            if not live:
                continue
            bank = self.mixer.voice_banks[graph]
            act = bank.act
            ended = act[bank.ended_at[act] >= 0]
            if ended.shape[0] == 0:
                continue
            for inst in ended[bank.idle(ended, settled=False)].tolist():
                voice = live.pop(inst)
                voice._ended = int(bank.ended_at[inst])
                bank.free(inst)
                self.version += 1

    def start(
        self,
        graph: str,
        pcm: np.ndarray,
        sample_rate: float,
        *,
        params: dict[str, float] | None = None,
        slot: int = 0,
        band: int = 0,
        tag: str = "",
        meta: dict[str, Any] | None = None,
    ) -> Voice:
        """Start ``pcm`` through voice graph ``graph``.

        Parameters
        ----------
        graph:
            A voice graph's name (loaded by :meth:`~audio.core.engine.Engine.prepare`).
        pcm:
            The source: mono float32 samples in -1..1.
        sample_rate:
            The source's sample rate, Hz (the graph's resampler converts it to the engine's).
        params:
            Initial ``"NODE.param"`` values, in each parameter's unit (they jump, they do not
            ramp).
        slot:
            The instance of every submix the graph sends to (an emitter's, a stream's).
        band:
            The ducking band on the destination bus.
        tag:
            A label for logs and UIs.
        meta:
            Free fields a UI shows (speaker, clip, take...).

        Returns
        -------
        Voice
            The handle; a voice over the graph's budget steals the oldest audible one.
        """
        pcm = np.asarray(pcm, dtype=np.float32)
        if pcm.ndim != 1:
            raise ValueError(f"a voice source is mono: expected a 1-D array, got shape {pcm.shape}")
        if sample_rate <= 0:
            raise ValueError(f"sample rate must be > 0 Hz, got {sample_rate}")
        bank = self.mixer.voice_bank(graph)
        self._reclaim(graph, bank)
        self.version += 1
        live = self._live[graph]
        audible = [v for v in live.values() if not v.stopped]
        if len(audible) >= self.budget:
            oldest = min(audible, key=lambda v: (v.started_at, v.id))
            self.stop(oldest)
            self.stolen += 1
        free = bank.free_slots()
        inst = int(free[0]) if free.shape[0] else self._cut_fading(graph, bank)
        bank.alloc(inst)
        bank.load_source(inst, pcm, sample_rate, self.start_silence)
        bank.band[inst] = band
        for node, to in bank.routes():
            if to.startswith("submix:"):
                self.mixer.submix_instance(to.partition(":")[2], slot)
                node.dest[inst] = slot
        self.mixer.wake_downstream(bank)
        if params:
            self._write(bank, inst, params)
        v = Voice(
            self._next_id,
            graph,
            inst,
            slot,
            band,
            tag,
            float(sample_rate),
            int(pcm.shape[0]),
            self.now,
            bank,
            meta=dict(meta or {}),
            written=dict(params or {}),
        )
        self._next_id += 1
        live[inst] = v
        if self.keep_history:
            self.history.append(v)
        for hook in self.start_hooks:
            hook(v)
        return v

    def _cut_fading(self, graph: str, bank: GraphBank) -> int:
        """End the oldest fading voice of ``graph`` now and return its freed instance."""
        fading = [v for v in self._live[graph].values() if v.stopped]
        if not fading:
            raise VoiceLimitError(f"no free instance of {graph!r} ({bank.capacity} in use)")
        oldest = min(fading, key=lambda v: (v.started_at, v.id))
        oldest._ended = self.now
        bank.free(oldest.instance)
        self.version += 1
        del self._live[graph][oldest.instance]
        self.cut += 1
        return oldest.instance

    def set(self, voice: Voice, **params: float) -> None:
        """Set ``"NODE.param"`` values; applied at the current sample (a block boundary).

        Keys may be given as ``voices.set(v, **{"PI20.gain": 0.3})``.

        Parameters
        ----------
        voice:
            A started voice.
        params:
            ``"NODE.param"`` values in each parameter's unit (Hz, dB, seconds; ``pitch`` in 1/4096).
        """
        self.set_params(voice, params)

    def set_params(self, voice: Voice, params: Mapping[str, float]) -> None:
        """:meth:`set` with the values in a mapping (a scheduled write,
        :meth:`Engine.schedule <audio.core.engine.Engine.schedule>`).

        Parameters
        ----------
        voice:
            A started voice.
        params:
            ``"NODE.param"`` values in each parameter's unit.
        """
        if voice.done:
            return
        if self._write(voice._bank, voice.instance, params):
            self.version += 1  # a pitch: the voice's end moves
        voice.written.update(params)

    def _write(self, bank: GraphBank, inst: int, params: Mapping[str, float]) -> bool:
        """Write ``params`` to instance ``inst`` of ``bank``; whether a resampler's parameter
        (a voice's end) was among them."""
        bank.set_params(inst, params)
        return not bank.resampler_keys.isdisjoint(params)

    def rewrite_keys(self, graph: str) -> frozenset[str]:
        """The ``"NODE.param"`` keys of voice graph ``graph`` whose rewrite with an unchanged value
        still changes the output: every send's level (a Sen0 ramp moves 64/65 of the way to its
        target per write, so a repeated target moves it again).

        Parameters
        ----------
        graph:
            A voice graph's name (loaded by :meth:`~audio.core.engine.Engine.prepare`).
        """
        bank = self.mixer.voice_bank(graph)
        return frozenset(
            f"{i}.{p}" for i, node in bank.by_id.items() if isinstance(node, Send) for p in node.params
        )

    def stop(self, voice: Voice, fade: bool = True) -> None:
        """Stop with the release fade (``fade=False``: end at once, may click).

        Parameters
        ----------
        voice:
            A started voice.
        fade:
            Fade out over ``release_samples`` samples (``False``: end at once, may click).
        """
        if voice.done or voice.stopped:
            return
        voice.stopped = True
        voice._bank.release(voice.instance, self.release_samples if fade else 1)
        self.version += 1

    def playing(self) -> list[Voice]:
        """Voices not yet ended (as of the last processed sample), oldest first."""
        out = [v for live in self._live.values() for v in live.values() if not v.done]
        return sorted(out, key=lambda v: v.id)


class ParamWriter:
    """Writes voice parameters once per control frame (a game tick), skipping every value equal
    to the last one written to that voice (:attr:`Voice.written`), except the keys of
    :meth:`VoiceManager.rewrite_keys` (sends), which are written every time.

    Skipping changes no sample when writes are at least one ramp (64 samples) apart: a rewritten
    biquad or resampler parameter recomputes the same coefficients, and a Gai0 or Pn21 ramp that
    has landed restarts with a zero step.

    Parameters
    ----------
    voices:
        The engine's voice manager.
    """

    def __init__(self, voices: VoiceManager) -> None:
        self.voices = voices
        self._always: dict[str, frozenset[str]] = {}

    def write(self, voice: Voice, params: dict[str, float]) -> None:
        """Set the values of ``params`` that differ from the last ones written to ``voice``.

        Parameters
        ----------
        voice:
            A started voice.
        params:
            ``"NODE.param"`` values in each parameter's unit (as :meth:`VoiceManager.set`).
        """
        changed = self.changes(voice.graph, voice.written, params)
        if changed:
            self.voices.set(voice, **changed)

    def always(self, graph: str) -> frozenset[str]:
        """The keys :meth:`write` writes every time on a voice of ``graph`` (its
        :meth:`VoiceManager.rewrite_keys`); every other key only when its value changed (a
        system computing the writes of frames ahead applies the same rule).

        Parameters
        ----------
        graph:
            A voice graph's name.
        """
        always = self._always.get(graph)
        if always is None:
            always = self._always[graph] = self.voices.rewrite_keys(graph)
        return always

    def changes(self, graph: str, last: dict[str, float], params: dict[str, float]) -> dict[str, float]:
        """The values of ``params`` that :meth:`write` sets on a voice of ``graph`` whose last
        written values are ``last``.

        Parameters
        ----------
        graph:
            A voice graph's name.
        last:
            ``"NODE.param"`` -> the value last written (:attr:`Voice.written`).
        params:
            ``"NODE.param"`` values to write.
        """
        always = self.always(graph)
        return {k: v for k, v in params.items() if k in always or last.get(k) != v}
