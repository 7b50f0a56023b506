"""Push a signal through one node of a voice bank (a helper the DSP tests share)."""

from __future__ import annotations

import numpy as np

from audio.dsp.bank import GraphBank


def feed(bank: GraphBank, x: np.ndarray, node: str, block: int = 256, v: int = 0) -> np.ndarray:
    """Push ``x`` (48 kHz mono) through a voice bank with no start silence; return node's output."""
    bank.load_source(v, x, 48_000, 0)
    outs = []
    t = 0
    while t < x.shape[0]:
        n = min(block, x.shape[0] - t)
        bank.process(n, t)
        outs.append(bank.by_id[node].out[v, :, :n].copy())
        t += n
    return np.concatenate(outs, axis=1)
