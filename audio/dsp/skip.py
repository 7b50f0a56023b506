"""Decisions-only voices: advance the resampler's position without computing audio.

:func:`rsp0_skip` runs the same state machine as :func:`audio.dsp.kernels.rsp0` (start
silence, 16.16 position, release fade, ``ended_at``) in closed form per call, so a voice
ends on exactly the sample a full render ends it: its take's length resampled at its
pitch (plus the first-block silence, or sooner by a release fade). Nothing is read from
the sample pool and no node after ``Rsp0`` runs. :func:`advance_sources` applies it to
every voice bank of a mixer (the engine's ``dsp=False`` switch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numba as nb
import numpy as np

from audio.dsp.kernels import resample_step

if TYPE_CHECKING:
    from audio.dsp.mixer import Mixer

__all__ = ["advance_sources", "rsp0_skip", "voice_end_seen"]

_FLAGS: Any = {"cache": True, "nogil": True, "fastmath": False, "boundscheck": False}


@nb.njit(**_FLAGS)
def rsp0_skip(
    src_len,
    act,
    n,
    t0,
    dirty,
    pitch,
    src_sample_rate,
    sample_rate,
    step,
    ipos,
    frac,
    wait,
    rel_left,
    rel_total,
    ended_at,
):
    """Advance ``n`` samples of every active voice from sample ``t0`` (no audio).

    Same arguments and state as ``rsp0`` minus the pool and the output buffer.
    """
    one = np.int64(65536)
    for v in act:
        if dirty[v]:
            step[v] = resample_step(src_sample_rate[v], sample_rate, pitch[v])
            dirty[v] = False
        if ended_at[v] >= 0:
            continue
        i = min(wait[v], n)
        wait[v] -= i
        r = n - i  # samples left in this call after the silence
        if r <= 0:
            continue
        pos = ipos[v] * one + frac[v]
        end = src_len[v] * one
        if pos >= end:
            j_end = 0  # the very next sample finds the source exhausted
        elif step[v] > 0:
            j_end = (end - pos + step[v] - 1) // step[v]
        else:
            j_end = r + 1  # pitch 0: never reaches the end
        rl = rel_left[v]
        if rl > 0 and rl <= r and rl <= j_end:
            adv = rl  # the fade's last sample ends the voice
            ended_at[v] = t0 + i + rl
            rel_left[v] = 0
        elif j_end < r:
            adv = j_end  # sample i + j_end reads past the source
            ended_at[v] = t0 + i + j_end
            if rl > 0:
                rel_left[v] = rl - j_end
        else:
            adv = r
            if rl > 0:
                rel_left[v] = rl - r
        acc = frac[v] + adv * step[v]
        ipos[v] += acc >> 16
        frac[v] = acc & 0xFFFF


_ENTRIES: dict[Any, Any] = {}
"""Machine-code entries of the kernels here, by kernel (see :func:`_call`)."""


def _call(kernel: Any, *args: Any) -> Any:
    """``kernel(*args)`` through its compiled entry once it is compiled: the dispatcher's type
    resolution of a dozen arrays costs most of a call. The arguments always have the same types
    (the resampler node allocates every state array with a fixed dtype; ``act`` is a contiguous
    int64 array; ``n`` and ``t0`` are ints, the sample rate a float), so one entry serves all."""
    entry = _ENTRIES.get(kernel)
    if entry is not None:
        return entry(*args)
    out = kernel(*args)
    cres = kernel.overloads.get(tuple(kernel.typeof_pyval(a) for a in args))
    if cres is not None:
        _ENTRIES[kernel] = cres.entry_point
    return out


def advance_sources(mixer: Mixer, n: int, t0: int) -> None:
    """Advance every voice bank of ``mixer`` by ``n`` samples from ``t0`` without DSP."""
    for bank in mixer.voice_banks.values():
        rsp = bank._rsp
        if rsp is None or bank.act.shape[0] == 0:
            continue
        _call(
            rsp0_skip,
            bank.src_len,
            bank.act,
            int(n),
            int(t0),
            rsp.dirty,
            rsp.params["pitch"],
            bank.src_sample_rate,
            float(bank.sample_rate),
            bank.rstep,
            bank.ipos,
            bank.frac,
            bank.wait,
            bank.rel_left,
            bank.rel_total,
            bank.ended_at,
        )


@nb.njit(**_FLAGS)
def _end_seen(
    src_len, act, t0, dirty, pitch, src_sample_rate, sample_rate, step, ipos, frac, wait, rel_left, ended_at
):
    """The first sample at which the state machine of :func:`rsp0_skip` shows one of the active
    voices ended (``ended_at`` set by a call ending there), if nothing changes their parameters
    from ``t0`` on; ``2**62`` when none ends. Reads the state only."""
    one = np.int64(65536)
    best = np.int64(1) << 62
    for v in act:
        if ended_at[v] >= 0:
            continue
        st = step[v]
        if dirty[v]:
            st = resample_step(src_sample_rate[v], sample_rate, pitch[v])
        pos = ipos[v] * one + frac[v]
        end = src_len[v] * one
        rl = rel_left[v]
        if pos >= end:
            j_end = np.int64(0)
        elif st > 0:
            j_end = (end - pos + st - 1) // st
        else:
            j_end = np.int64(-1)  # pitch 0: never reaches the end
        if rl > 0 and (j_end < 0 or rl <= j_end):
            seen = t0 + wait[v] + rl  # a call ending on the fade's last sample sets ended_at
        elif j_end >= 0:
            seen = t0 + wait[v] + j_end + 1  # a call must run past the exhausted sample
        else:
            continue
        if seen < best:
            best = seen
    return best


def voice_end_seen(bank: Any, t0: int) -> int:
    """The first engine sample after which a voice of ``bank`` shows ended (its ``ended_at`` is
    set) when the engine is at sample ``t0`` and nothing changes the voices' parameters first;
    ``2**62`` when none ends. The same sample in decisions-only and full renders (the two share
    the resampler's state machine). The engine splits the audio there, so that a game system
    that skips ticks sees the end at the frame it would have ticking every frame.

    Parameters
    ----------
    bank:
        A :class:`~audio.dsp.bank.GraphBank` (its active voices).
    t0:
        Engine sample the bank's state is at.
    """
    rsp = bank._rsp
    if rsp is None:
        return 1 << 62
    return int(
        _call(
            _end_seen,
            bank.src_len,
            bank.act,
            int(t0),
            rsp.dirty,
            rsp.params["pitch"],
            bank.src_sample_rate,
            float(bank.sample_rate),
            bank.rstep,
            bank.ipos,
            bank.frac,
            bank.wait,
            bank.rel_left,
            bank.ended_at,
        )
    )
