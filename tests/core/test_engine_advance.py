"""Engine.advance: a whole run without its audio, deciding exactly as rendering it."""

from __future__ import annotations

import numpy as np
import pytest

from audio.offline.scenario import build_engine, demo_scenario, load_scenario


def _engine(demo: str, dsp: bool):
    scn = load_scenario(str(demo_scenario(demo)), 3)
    return build_engine(scn, block=1024, dsp=dsp), round(scn.duration * 48_000)


def _log(eng) -> list[dict]:
    return [d.to_json() for d in eng.bus.decisions]


@pytest.mark.parametrize("demo", ["skate", "starlancer"])
def test_a_decisions_only_engine_advanced_in_one_call_decides_as_one_rendered_second_by_second(demo):
    one, chunked = _engine(demo, False), _engine(demo, False)
    (a, total), (b, _) = one, chunked
    a.advance(total)
    for i in range(0, total, 48_000):
        assert not b.render(min(48_000, total - i)).any()  # decisions-only renders silence
    assert a.now == b.now == total
    assert len(_log(a)) > 5 and _log(a) == _log(b)
    assert a.control_points < b.control_points  # no control point at each second's call


def test_a_full_engine_advanced_renders_on_exactly_as_one_that_rendered_the_same_samples():
    (a, _), (b, _) = _engine("skate", True), _engine("skate", True)
    a.advance(12 * 48_000 + 77)  # through a max_block scratch, mid-line
    b.render(12 * 48_000 + 77)
    assert _log(a) == _log(b)
    after_a, after_b = a.render(48_000), b.render(48_000)
    assert np.abs(after_a).max() > 0.01 and np.array_equal(after_a, after_b)
