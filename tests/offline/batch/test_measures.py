"""A full batch run is measured chunk by chunk as it renders: its row's peak, loudness and
clipped count are those of the whole mix measured at once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audio.offline.batch.runner import run_one, simulate
from audio.offline.loudness import integrated_loudness
from audio.offline.scenario import demo_scenario


@pytest.mark.parametrize("demo", ["sylpheed", "radiata"])
def test_a_full_run_row_measures_the_whole_mix(demo):
    path = str(demo_scenario(demo))
    kept = simulate(path, 2, decisions_only=False)
    assert kept.audio is not None
    row = run_one(demo, path, 2, decisions_only=False)[0]
    assert row["status"] == "ok"
    mag = np.abs(kept.audio)
    assert row["peak_dbfs"] == 20.0 * math.log10(float(mag.max()))
    assert row["loudness_lufs"] == integrated_loudness(kept.audio, 48_000)
    assert row["clipped"] == int(np.count_nonzero(mag >= 1.0))
    assert kept.measures == {k: row[k] for k in ("peak_dbfs", "loudness_lufs", "clipped")}


def test_a_run_that_does_not_keep_its_audio_still_measures_it():
    out = simulate(str(demo_scenario("radiata")), 1, decisions_only=False, keep_audio=False)
    assert out.audio is None and out.measures is not None
    assert out.measures["loudness_lufs"] < 0.0
