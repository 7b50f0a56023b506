"""Shared by the demo builders: speak a line with espeak-ng, trim its silence, resample it.

The builders run once and their output is committed; espeak-ng is needed only to rebuild.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

__all__ = ["speak"]


def speak(text: str, espeak_args: list[str], workdir: Path, rate: int) -> np.ndarray:
    """``text`` through ``espeak-ng ESPEAK_ARGS``: mono float64 at ``rate`` Hz, with the silence
    before and after the speech cut to 30 ms (threshold 0.01 of full scale)."""
    import soundfile as sf
    from scipy.signal import resample_poly

    wav = workdir / "speech.wav"
    subprocess.run(["espeak-ng", *espeak_args, "-w", str(wav), text], check=True, capture_output=True)
    x, src = sf.read(wav, dtype="float64")
    x = x if x.ndim == 1 else x.mean(axis=1)
    loud = np.flatnonzero(np.abs(x) > 0.01)
    if loud.size:
        pad = int(0.03 * src)
        x = x[max(0, loud[0] - pad) : loud[-1] + pad]
    g = int(np.gcd(rate, src))
    return resample_poly(x, rate // g, src // g)
