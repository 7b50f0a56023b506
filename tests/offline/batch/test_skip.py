"""The decisions-only resampler advance ends voices on the sample the real Rsp0 kernel ends them."""

from __future__ import annotations

import numpy as np
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.dsp.kernels import rsp0
from audio.dsp.skip import rsp0_skip

SAMPLE_RATE = 48_000.0


def _state(src_len: int, src_sample_rate: float, pitch: float, wait: int) -> dict[str, np.ndarray]:
    return {
        "src_len": np.array([src_len], np.int64),
        "dirty": np.array([True]),
        "pitch": np.array([pitch], np.float64),
        "src_sample_rate": np.array([src_sample_rate], np.float64),
        "step": np.zeros(1, np.int64),
        "ipos": np.zeros(1, np.int64),
        "frac": np.zeros(1, np.int64),
        "wait": np.array([wait], np.int64),
        "rel_left": np.zeros(1, np.int64),
        "rel_total": np.ones(1, np.int64),
        "ended_at": np.full(1, -1, np.int64),
    }


def _release(s: dict[str, np.ndarray], samples: int) -> None:
    """What GraphBank.release does."""
    if s["ended_at"][0] < 0 and s["rel_left"][0] == 0:
        s["rel_left"][0] = s["rel_total"][0] = max(samples, 1)


_KEYS = ("step", "ipos", "frac", "wait", "rel_left", "ended_at")
_blocks = st.lists(
    st.tuples(
        st.integers(1, 900),
        st.sampled_from([None, 2048.0, 4096.0, 5000.0, 0.0]),
        st.sampled_from([0, 0, 0, 1, 16, 300]),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=examples(150))
@given(
    src_len=st.integers(0, 3000),
    src_sample_rate=st.sampled_from([22_050.0, 24_000.0, 44_100.0, 48_000.0]),
    pitch=st.sampled_from([4096.0, 3000.0, 4096.0 * 1.13, 8192.0]),
    wait=st.integers(0, 300),
    blocks=_blocks,
)
def test_skip_advance_matches_the_rsp0_kernel_block_by_block(src_len, src_sample_rate, pitch, wait, blocks):
    pool = np.zeros(src_len + 1, np.float32)
    off = np.zeros(1, np.int64)
    act = np.zeros(1, np.int64)
    out = np.zeros((1, 1, 900), np.float32)
    real, dry = _state(src_len, src_sample_rate, pitch, wait), _state(src_len, src_sample_rate, pitch, wait)
    t0 = 0
    for n, new_pitch, release in blocks:
        for s in (real, dry):
            if new_pitch is not None:
                s["pitch"][0] = new_pitch
                s["dirty"][0] = True
            if release:
                _release(s, release)
        r = real
        rsp0(
            pool,
            off,
            r["src_len"],
            act,
            out,
            n,
            t0,
            r["dirty"],
            r["pitch"],
            r["src_sample_rate"],
            SAMPLE_RATE,
            r["step"],
            r["ipos"],
            r["frac"],
            r["wait"],
            r["rel_left"],
            r["rel_total"],
            r["ended_at"],
        )
        d = dry
        rsp0_skip(
            d["src_len"],
            act,
            n,
            t0,
            d["dirty"],
            d["pitch"],
            d["src_sample_rate"],
            SAMPLE_RATE,
            d["step"],
            d["ipos"],
            d["frac"],
            d["wait"],
            d["rel_left"],
            d["rel_total"],
            d["ended_at"],
        )
        t0 += n
        assert int(d["ended_at"][0]) == int(r["ended_at"][0])
        if r["ended_at"][0] < 0:
            assert {k: int(d[k][0]) for k in _KEYS} == {k: int(r[k][0]) for k in _KEYS}
