"""Shared fixtures of the live tests: an output device (JACK in CI) or a skip with the reason."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def audio_device() -> None:
    """Skip (outside CI) or fail (CI=true) when no PortAudio output can be opened."""
    from audio.live.device import audio_device_problem

    problem = audio_device_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"CI needs an audio device (start `jackd --no-realtime -d dummy -r 48000 -p 256`): {problem}"
        )
    pytest.skip(f"no audio device: {problem}")
