"""Captures: every posted event as JSON lines, read back validated, and replayed exactly.

One module for every front end: ``barkbus render --capture``, ``barkbus live --capture`` and
the port API write the same format (a header line, then one event per line with its sample
``at`` and ``origin``); :func:`read_capture` reads and validates it; :func:`replay` re-posts the
external events at their samples into an engine built like the recorded one and renders it,
for any layout (stereo or 5.1). Internal events (posted by the systems themselves) are not
re-posted: they follow deterministically.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO

import msgspec
import numpy as np

from audio.core.bus import _KINDS, Event, EventBus, event_to_json
from audio.core.clock import BLOCK, SAMPLE_RATE, seconds_to_samples
from audio.core.errors import FormatError

__all__ = [
    "MAX_CAPTURE_BYTES",
    "Capture",
    "CaptureHeader",
    "configure_replay",
    "event_from_json",
    "event_to_json",
    "read_capture",
    "replay",
]


def _load_game_events() -> None:
    """Register the event kinds of every game in :mod:`audio.games` (imported on demand)."""
    from audio.games import all_games

    for g in all_games():
        g.load("events")


def event_from_json(d: dict[str, Any], where: str = "<capture>") -> tuple[Event, int, str]:
    """Inverse of :func:`event_to_json`: ``(event, at, origin)``; every field is checked
    against its type hint (:func:`audio.core.fields.build_event`), so a corrupt capture raises
    :class:`FormatError` instead of reaching the engine."""
    from audio.core.fields import EventFieldError, build_event

    if not isinstance(d, dict):
        raise FormatError(where, None, "a JSON object per event", type(d).__name__)
    kind = d.get("kind")
    if isinstance(kind, str) and kind not in _KINDS:
        _load_game_events()  # a live run may capture any game's events, whatever its own game
    if not isinstance(kind, str) or kind not in _KINDS:
        raise FormatError(where, None, "a known event kind", kind)
    fields = {k: v for k, v in d.items() if k not in ("kind", "at", "origin")}
    try:
        ev = build_event(kind, **fields)
    except EventFieldError as exc:
        raise FormatError(where, None, f"valid fields of event {kind}", str(exc)) from None
    at, origin = d.get("at", seconds_to_samples(ev.t)), d.get("origin", "external")
    if isinstance(at, bool) or not isinstance(at, int) or at < 0 or origin not in ("external", "internal"):
        raise FormatError(
            where, None, 'a sample "at" >= 0 and an origin of "external" or "internal"', (at, origin)
        )
    return ev, at, origin


class Capture:
    """Writes every posted event as one JSON line (a header line first)."""

    def __init__(self, out: TextIO, header: dict[str, Any]) -> None:
        self._out = out
        self._out.write(json.dumps({"capture": "barkbus", "version": 1, **header}) + "\n")

    def attach(self, bus: EventBus) -> None:
        bus.on_post(self.record)

    def record(self, rec: dict[str, Any]) -> None:
        self._out.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self._out.flush()


class CaptureHeader(msgspec.Struct, kw_only=True):
    """The first line of a capture; keys beyond these are kept for the front end that wrote them."""

    capture: Literal["barkbus"]
    version: Literal[1] = 1
    sample_rate: Annotated[int, msgspec.Meta(ge=8000, le=384_000)] = SAMPLE_RATE
    block: Annotated[int, msgspec.Meta(ge=1, le=65_536)] = 256
    samples: Annotated[int, msgspec.Meta(ge=0, le=384_000 * 7 * 24 * 3600)] | None = None
    start_sample: Annotated[int, msgspec.Meta(ge=0)] = 0
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] = 0
    scenario: str | None = None
    doc: dict[str, Any] | None = None
    game: str | None = None
    install: str | None = None


MAX_CAPTURE_BYTES = 1 << 30
"""Largest capture file read (1 GiB)."""


def _capture_error(source: str, where: str, problem: str) -> FormatError:
    return FormatError(source, 0, f"a valid capture header ({where}: {problem})")


def read_capture(path: str | Path) -> tuple[dict[str, Any], Iterator[tuple[Event, int, str]]]:
    """Read a capture: its validated header and an iterator of ``(event, at, origin)``."""
    from audio.core.schema import convert

    path = Path(path)
    try:
        if str(path) == "-":  # standard input
            raw = sys.stdin.buffer.read(MAX_CAPTURE_BYTES + 1)
            if len(raw) > MAX_CAPTURE_BYTES:
                raise FormatError(path, 0, f"a capture of at most {MAX_CAPTURE_BYTES} bytes")
            lines = raw.decode("utf-8").splitlines()
        else:
            if path.stat().st_size > MAX_CAPTURE_BYTES:
                raise FormatError(path, 0, f"a capture of at most {MAX_CAPTURE_BYTES} bytes")
            lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise FormatError(path, None, "a capture file (no such file)") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, exc.start, "UTF-8 JSON lines (is this a capture?)") from None
    except OSError as exc:
        raise FormatError(path, None, f"a readable capture file ({exc.strerror})") from None
    if not lines:
        raise FormatError(path, 0, "a barkbus capture header line")
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(path, 0, "a JSON header line", str(exc)[:80]) from None
    if not isinstance(header, dict) or header.get("capture") != "barkbus":
        raise FormatError(path, 0, 'a header with "capture": "barkbus"', str(header)[:80])
    convert(header, CaptureHeader, source=str(path), where="header", error=_capture_error)

    def events() -> Iterator[tuple[Event, int, str]]:
        offset = len(lines[0]) + 1
        for i, line in enumerate(lines[1:], start=2):
            if line.strip():
                try:
                    d = json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    raise FormatError(path, offset, f"a JSON event on line {i}", str(exc)) from None
                yield event_from_json(d, f"{path}:{i}")
            offset += len(line) + 1

    return header, events()


def configure_replay(engine: Any, header: dict[str, Any]) -> Any:
    """Make ``engine`` behave like the recorded one: isolate its systems if the live run did
    (``isolate_systems``) and open files only under the recorded ``allow`` roots."""
    from audio.core.paths import PathPolicy

    if hasattr(engine, "isolate_systems"):
        engine.isolate_systems = bool(header.get("isolate_systems", False))
    allow = header.get("allow")
    if isinstance(allow, list) and all(isinstance(a, str) for a in allow):
        policy = PathPolicy(allow, bundled=False)
        for system in getattr(engine, "systems", []):
            if hasattr(system, "paths"):
                system.paths = policy
    return engine


def replay(
    engine: Any, records: Iterable[dict[str, Any] | tuple[Event, int, str]], samples: int, block: int = BLOCK
) -> np.ndarray:
    """Re-post the external events of a capture at their samples and render ``samples``.

    ``records`` are capture dicts (as a live player keeps them) or ``(event, at, origin)``
    tuples (as :func:`read_capture` yields). ``engine`` must be built like the recorded one (same
    systems, install, seed and layout). Returns ``(samples, engine.channels)`` float32.
    """
    for rec in records:
        ev, at, origin = event_from_json(rec) if isinstance(rec, dict) else rec
        if origin == "external":
            engine.bus.post(ev, at=at)
    out = np.zeros((samples, int(getattr(engine, "channels", 2))), dtype=np.float32)
    done = 0
    while done < samples:
        n = min(block, samples - done)
        out[done : done + n] = engine.render(n)
        done += n
    return out
