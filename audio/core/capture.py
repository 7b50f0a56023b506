"""Captures: every posted event as JSON lines, read back validated, and replayed exactly.

One module for every front end: ``barkbus render --capture``, ``barkbus live --capture`` and
the port API write the same format (a header line, then one event per line with its sample
``at`` and ``origin``); :func:`read_capture` reads and validates it.

The one replay path: :class:`CaptureHeader` holds everything an engine is rebuilt from
(layout, sample rate, block, seed, scenario document, game and install, isolation, allowed
roots); :func:`portable_header` stores its paths relative to the capture file when they lie in
the capture's folder (so a folder moved as a whole still replays) and
:meth:`CaptureHeader.resolved` reads them back. ``audio.offline.scenario.engine_for_capture``
builds the engine from that header (it needs the game registry, which sits above the core) and
:func:`post_captured` re-posts the external events at their samples; ``barkbus render
--replay`` and ``audio.port.engine_for_capture`` both go through these two. Internal events
(posted by the systems themselves) are not re-posted: they follow deterministically.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TextIO

import msgspec

from audio.core.bus import _KINDS, Event, EventBus, event_to_json
from audio.core.clock import BLOCK, SAMPLE_RATE, seconds_to_samples
from audio.core.errors import FormatError

if TYPE_CHECKING:  # numpy is imported by replay(): the game registry imports this module light
    import numpy as np

__all__ = [
    "KIND_LOADERS",
    "MAX_CAPTURE_BYTES",
    "Capture",
    "CaptureHeader",
    "event_from_json",
    "event_to_json",
    "portable_header",
    "post_captured",
    "read_capture",
    "read_header",
    "replay",
]


KIND_LOADERS: list[Callable[[], None]] = []
"""Functions that register more event kinds, called when a capture names an unknown kind (a
live run may capture any game's events, whatever its own game). The game registry adds one
that imports every game's events (:mod:`audio.games`); the core never imports a game."""


def _load_more_kinds() -> None:
    for load in KIND_LOADERS:
        load()


def event_from_json(d: dict[str, Any], where: str = "<capture>") -> tuple[Event, int, str]:
    """Inverse of :func:`event_to_json`: ``(event, at, origin)``; every field is checked
    against its type hint (:func:`audio.core.fields.build_event`), so a corrupt capture raises
    :class:`FormatError` instead of reaching the engine."""
    from audio.core.fields import EventFieldError, build_event

    if not isinstance(d, dict):
        raise FormatError(where, None, "a JSON object per event", type(d).__name__)
    kind = d.get("kind")
    if isinstance(kind, str) and kind not in _KINDS:
        _load_more_kinds()
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
    """The first line of a capture; keys beyond these are kept for the front end that wrote them.

    ``scenario`` (the file the document was read from, or a stand-in name beside it),
    ``install`` and ``allow`` may be relative: to the capture file's folder.
    """

    capture: Literal["barkbus"]
    version: Literal[1] = 1
    sample_rate: Annotated[int, msgspec.Meta(ge=8000, le=384_000)] = SAMPLE_RATE
    """Output sample rate (Hz)."""
    block: Annotated[int, msgspec.Meta(ge=1, le=65_536)] = BLOCK
    """Block the recorded engine rendered (samples); only the chunking depends on it."""
    layout: Literal["stereo", "5.1"] | None = None
    """Output layout; ``None``: the scenario document's (stereo when it says nothing)."""
    samples: Annotated[int, msgspec.Meta(ge=0, le=384_000 * 7 * 24 * 3600)] | None = None
    start_sample: Annotated[int, msgspec.Meta(ge=0)] = 0
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] = 0
    scenario: str | None = None
    doc: dict[str, Any] | None = None
    game: str | None = None
    install: str | None = None
    isolate_systems: bool = False
    """The recorded engine disabled a failing system instead of stopping (live, ports)."""
    allow: list[str] | None = None
    """Folders the recorded ``play`` system could open files in (``None``: the scenario's)."""
    source: str | None = None

    def resolved(self, capture: str | Path | None) -> CaptureHeader:
        """This header with ``scenario``, ``install`` and ``allow`` made absolute, read relative
        to the folder of the ``capture`` file (or the working folder when ``None``)."""
        base = Path(capture).resolve().parent if capture is not None else Path.cwd()

        def absolute(p: str | None) -> str | None:
            return p if p is None or p == "demo" else str(base / p)

        return msgspec.structs.replace(
            self,
            scenario=absolute(self.scenario),
            install=absolute(self.install),
            allow=None if self.allow is None else [str(base / a) for a in self.allow],
        )


def _inside(path: str, folder: Path | None) -> str:
    """``path`` relative to ``folder`` when it lies inside it, else absolute."""
    p = Path(path).resolve()
    return os.path.relpath(p, folder) if folder is not None and p.is_relative_to(folder) else str(p)


def portable_header(header: dict[str, Any], capture: str | Path) -> dict[str, Any]:
    """``header`` as written to the capture file ``capture``, made to survive a move.

    Its ``scenario``, ``install`` and ``allow`` paths become relative to the capture's folder
    when they lie inside it, absolute otherwise (found wherever the capture goes); a stand-in
    scenario name (``"<port tone>.toml"``, no file) is placed in the capture's folder; an
    absolute ``install`` of a section of the document that lies in the same folder as the
    scenario becomes relative to the scenario. A folder moved or copied as a whole replays.
    """
    out = dict(header)
    # standard output: no folder to be relative to, so every path is written absolute
    folder = None if str(capture) == "-" else Path(capture).resolve().parent
    scenario = out.get("scenario")
    if isinstance(scenario, str):
        if Path(scenario).name.startswith("<") and folder is not None:
            scenario = str(folder / Path(scenario).name)
        out["scenario"] = _inside(scenario, folder)
        base = Path(scenario).resolve().parent
        doc = out.get("doc")
        if isinstance(doc, dict) and folder is not None and base.is_relative_to(folder):
            out["doc"] = {k: _section_relative(v, base, folder) for k, v in doc.items()}
    if isinstance(out.get("install"), str) and out["install"] != "demo":
        out["install"] = _inside(out["install"], folder)
    if isinstance(out.get("allow"), list):
        out["allow"] = [_inside(str(a), folder) for a in out["allow"]]
    return out


def _section_relative(section: Any, base: Path, folder: Path) -> Any:
    """A document section whose absolute ``install`` inside ``folder`` is made relative to ``base``."""
    install = section.get("install") if isinstance(section, dict) else None
    if not isinstance(install, str) or not Path(install).is_absolute():
        return section
    if not Path(install).resolve().is_relative_to(folder):
        return section
    return {**section, "install": os.path.relpath(Path(install).resolve(), base)}


MAX_CAPTURE_BYTES = 1 << 30
"""Largest capture file read (1 GiB)."""


def _capture_error(source: str, where: str, problem: str) -> FormatError:
    return FormatError(source, 0, f"a valid capture header ({where}: {problem})")


def read_header(header: Any, source: str = "<capture>") -> CaptureHeader:
    """Validate a capture header (a parsed JSON object): :class:`FormatError` naming the field."""
    from audio.core.schema import convert

    if not isinstance(header, dict) or header.get("capture") != "barkbus":
        raise FormatError(source, 0, 'a header with "capture": "barkbus"', str(header)[:80])
    return convert(header, CaptureHeader, source=source, where="header", error=_capture_error)


def read_capture(path: str | Path) -> tuple[dict[str, Any], Iterator[tuple[Event, int, str]]]:
    """Read a capture: its validated header (as written, paths still relative; see
    :meth:`CaptureHeader.resolved`) and an iterator of ``(event, at, origin)``."""
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
    read_header(header, str(path))

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


def post_captured(engine: Any, records: Iterable[dict[str, Any] | tuple[Event, int, str]]) -> int:
    """Post the external events of a capture into ``engine`` at their samples.

    ``records`` are capture dicts (as a live player keeps them) or ``(event, at, origin)``
    tuples (as :func:`read_capture` yields); internal events are skipped (the systems post them
    again). Returns how many events were posted.
    """
    n = 0
    for rec in records:
        ev, at, origin = event_from_json(rec) if isinstance(rec, dict) else rec
        if origin == "external":
            engine.bus.post(ev, at=at)
            n += 1
    return n


def replay(
    engine: Any, records: Iterable[dict[str, Any] | tuple[Event, int, str]], samples: int, block: int = BLOCK
) -> np.ndarray:
    """Re-post the external events of a capture at their samples and render ``samples``.

    ``records`` are capture dicts (as a live player keeps them) or ``(event, at, origin)``
    tuples (as :func:`read_capture` yields). ``engine`` must be built like the recorded one (same
    systems, install, seed and layout). Returns ``(samples, engine.channels)`` float32.
    """
    import numpy as np

    post_captured(engine, records)
    out = np.zeros((samples, engine.channels), dtype=np.float32)
    done = 0
    while done < samples:
        n = min(block, samples - done)
        out[done : done + n] = engine.render(n)
        done += n
    return out
