"""Shared by every test module: the hypothesis profile and the ``fuzz`` mark.

The profile (``fuzz_budget``) is loaded here, before the test modules are imported. Every
hypothesis test gets the ``fuzz`` mark, so CI's thorough job selects the fuzzers with
``-m "slow or fuzz"`` and runs them with all their examples (``BARKBUS_FUZZ=thorough``), while the
default suite runs them with a share of their examples.
"""

from __future__ import annotations

import fuzz_budget  # noqa: F401  (loads the hypothesis profile)
import pytest
from hypothesis import is_hypothesis_test


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every hypothesis test ``fuzz`` (before ``-m`` selects by marks)."""
    for item in items:
        if isinstance(item, pytest.Function) and is_hypothesis_test(item.obj):
            item.add_marker(pytest.mark.fuzz)
