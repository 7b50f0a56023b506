"""The live profiler: a local web page showing a run's decisions, voices and levels as they happen.

``barkbus live ... --profiler [HOST:]PORT`` serves it beside a live run, ``barkbus profile
CAPTURE|LOG`` over a finished one, and :meth:`audio.port.api.VoicePort.profiler` from a host.
Modules: :mod:`.snapshot` (what the render thread publishes), :mod:`.records` (the playing
voices as numpy records), :mod:`.ring` (the shared memory ring they reach the server process
by), :mod:`.history` (the run as the page sees it), :mod:`.sources` (live or finished run),
:mod:`.server` (tornado, HTTP and WebSocket), :mod:`.review` (a capture or a decision log
made into a finished run), :mod:`.cli` (the command-line options), ``static/`` (the page:
HTML, script, style), :mod:`.feed` and :mod:`.worker` (a live run's page served by another
process, fed by the render thread).

The package itself imports nothing heavy (``barkbus live --help`` builds its parser from
:mod:`.cli` without NumPy); its names are imported on first use.
"""

from __future__ import annotations

from audio.core.exports import lazy_exports

_EXPORTS = {
    "ProfilerError": "audio.live.profiler.server",
    "ProfilerServer": "audio.live.profiler.server",
    "parse_bind": "audio.live.profiler.server",
    "ProfilerProcess": "audio.live.profiler.feed",
    "SnapshotPublisher": "audio.live.profiler.snapshot",
    "attach_publisher": "audio.live.profiler.attach",
    "detach_publisher": "audio.live.profiler.attach",
    "start_profiler": "audio.live.profiler.attach",
}
"""Exported name -> the module it is imported from on first use."""

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
