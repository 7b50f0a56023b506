"""How hard the hypothesis fuzzers try: a share of each one's examples in the default suite, all of
them in CI's thorough job.

The profile comes from ``$BARKBUS_FUZZ`` (``suite`` when unset, ``thorough`` in CI's slow job, see
``.ci/run``) and is loaded by ``tests/conftest.py`` before any test module is imported, so
:func:`examples` in a ``@settings`` decorator sees it. Neither profile has a deadline: how long one
example takes depends on the machine's load, and tests check behaviour, not time.
"""

from __future__ import annotations

import os

from hypothesis import settings

SHARES = {"suite": 0.2, "thorough": 1.0}
"""The share of each fuzzer's full example count drawn under each profile."""

PROFILE = os.environ.get("BARKBUS_FUZZ", "suite") or "suite"
if PROFILE not in SHARES:
    raise SystemExit(f"BARKBUS_FUZZ={PROFILE!r}: expected one of {', '.join(sorted(SHARES))}")

for _name, _share in SHARES.items():
    # tests without their own count draw the hypothesis default (100) times the share
    settings.register_profile(_name, max_examples=max(10, round(100 * _share)), deadline=None)
settings.load_profile(PROFILE)

FLOOR = 10
"""No fuzzer draws fewer examples than this (nor more than its full count)."""


def examples(full: int) -> int:
    """Examples to draw for a fuzzer whose thorough count is ``full``: ``full`` times the profile's
    share, at least :data:`FLOOR` (or ``full`` itself when that is smaller)."""
    return min(full, max(FLOOR, round(full * SHARES[PROFILE])))
