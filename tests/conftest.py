"""Shared by every test module: the hypothesis profile, the ``fuzz`` mark and the device group.

The profile (``fuzz_budget``) is loaded here, before the test modules are imported. Every
hypothesis test gets the ``fuzz`` mark, so CI's thorough job selects the fuzzers with
``-m "slow or fuzz"`` and runs them with all their examples (``BARKBUS_FUZZ=thorough``), while the
default suite runs them with a share of their examples. Under pytest-xdist (``tools/test.sh``
runs ``-n auto --dist loadgroup``) the tests that open the audio device are one ``xdist_group``, so
they run on one worker in turn and never share the device with each other.
"""

from __future__ import annotations

import fuzz_budget  # noqa: F401  (loads the hypothesis profile)
import pytest
from hypothesis import is_hypothesis_test


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every hypothesis test ``fuzz`` (before ``-m`` selects by marks) and put the tests that
    use the ``audio_device`` fixture in one xdist group."""
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if is_hypothesis_test(item.obj):
            item.add_marker(pytest.mark.fuzz)
        if "audio_device" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group("audio-device"))
