import pytest

from .fakes import FakeEngine


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()
